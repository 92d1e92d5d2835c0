"""The freeze, score and agree commands: output, files, and one-line errors with exit status 2."""

import pandas as pd
import pytest
import yaml

from crsbench_lib.cli import main
from crsbench_lib.results.io import to_csv, write_results
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.standard import load_standard


@pytest.fixture(scope="module")
def results_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "results.parquet"
    write_results(synthetic_results(n_encoders=5, corruptions=("noise",), random_state=1), path)
    return path


@pytest.fixture(scope="module")
def standard_path(results_path):
    path = results_path.parent / "std.yaml"
    assert main(["freeze", str(results_path), "--version", "cli-v1", "--out", str(path)]) == 0
    return path


def _one_line_error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("crsbench: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_freeze_writes_a_loadable_standard(standard_path, capsys):
    std = load_standard(standard_path)
    assert std.version == "cli-v1" and len(std.panel_names) == 5


def test_freeze_panel_and_base(results_path, standard_path, tmp_path, capsys):
    out = tmp_path / "p.yaml"
    code = main(["freeze", str(results_path), "--version", "p1", "--panel", "enc01", "enc03",
                 "--base", str(standard_path), "--out", str(out)])
    assert code == 0
    assert "2 panel members" in capsys.readouterr().out
    assert load_standard(out).panel_names == ("enc01", "enc03")


def test_score_prints_ranked_table_and_writes_csv(results_path, standard_path, tmp_path, capsys):
    out = tmp_path / "scores.csv"
    assert main(["score", str(results_path), "--standard", str(standard_path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cli-v1" in text and "dominance" in text and "s_D" in text
    table = pd.read_csv(out)
    assert table["rank"].tolist() == [1, 2, 3, 4, 5]
    assert set(table["standard_version"]) == {"cli-v1"}


def test_score_lists_absent_terms_and_warns_outside_the_panel(results_path, standard_path, tmp_path, capsys):
    assert main(["score", str(results_path), "--standard", str(standard_path)]) == 0
    captured = capsys.readouterr()
    assert "absent terms: none" in captured.out and "dominance 0" not in captured.err
    table = synthetic_results(n_encoders=4, corruptions=("noise",), shift_dataset=None, random_state=2)
    worse = tmp_path / "worse.parquet"
    write_results(table.assign(ece=(table["ece"] + 0.3).clip(0.0, 1.0), ece_debiased=table["ece_debiased"] + 0.3), worse)
    assert main(["score", str(worse), "--standard", str(standard_path)]) == 0
    captured = capsys.readouterr()
    assert "absent terms: R: no shift term (no dataset has a second site)" in captured.out
    warnings = captured.err.splitlines()
    assert all(line.startswith("crsbench: warning: ") for line in warnings)
    assert any("every encoder has dominance near 0" in line and "on axis C" in line for line in warnings)
    assert any("axis C: 4 of 4 encoders lie beyond the worst anchor" in line for line in warnings)
    assert "crsbench freeze RESULTS" in warnings[-1]


def test_agree_prints_figures(results_path, standard_path, capsys):
    assert main(["agree", str(results_path), "--standard", str(standard_path)]) == 0
    text = capsys.readouterr().out
    for label in ("Kendall tau-b", "Spearman rho", "reversed pairs", "of 10", "mean |rank displacement|"):
        assert label in text


def test_default_standard_missing(results_path, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CRSBENCH_HOME", str(tmp_path))
    err = _one_line_error(capsys, ["score", str(results_path)])
    assert "no default reference standard" in err and "--standard" in err


def test_template_cannot_score(results_path, capsys):
    from crsbench_lib.standard import template_standard_path

    err = _one_line_error(capsys, ["score", str(results_path), "--standard", str(template_standard_path())])
    assert "empty panel" in err


@pytest.mark.parametrize("command", ["score", "agree"])
def test_bad_tables(command, standard_path, tmp_path, capsys):
    table = synthetic_results(n_encoders=3, corruptions=("noise",), seeds=(0,))
    missing = tmp_path / "missing_col.csv"
    to_csv(table, missing)
    frame = pd.read_csv(missing).drop(columns=["ece"])
    frame.to_csv(missing, index=False)
    assert "missing required column 'ece'" in _one_line_error(
        capsys, [command, str(missing), "--standard", str(standard_path)]
    )
    bad_auroc = tmp_path / "bad_auroc.csv"
    frame = table.copy()
    frame.loc[4, "auroc"] = 1.5
    frame.to_csv(bad_auroc, index=False)
    assert "'auroc' must lie in [0, 1]" in _one_line_error(capsys, [command, str(bad_auroc), "--standard", str(standard_path)])
    no_clean = tmp_path / "no_clean.csv"
    table[~((table["encoder"] == "enc01") & (table["condition"] == "clean"))].to_csv(no_clean, index=False)
    assert "encoder 'enc01'" in _one_line_error(capsys, [command, str(no_clean), "--standard", str(standard_path)])
    assert "no such results file" in _one_line_error(
        capsys, [command, str(tmp_path / "nope.parquet"), "--standard", str(standard_path)]
    )


def test_bad_standards(results_path, standard_path, tmp_path, capsys):
    data = yaml.safe_load(standard_path.read_text())
    data.pop("content_hash")
    data["weights"]["floor"] = 0.9
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    assert "field 'weights'" in _one_line_error(capsys, ["score", str(results_path), "--standard", str(bad)])
    data["weights"]["floor"] = 0.3
    data["anchors"]["D"]["best"] = 0.5
    bad.write_text(yaml.safe_dump(data))
    assert "field 'anchors.D'" in _one_line_error(capsys, ["agree", str(results_path), "--standard", str(bad)])
    bad.write_text("a: [\n")
    assert "not a readable YAML" in _one_line_error(capsys, ["score", str(results_path), "--standard", str(bad)])
    assert "no such reference standard" in _one_line_error(
        capsys, ["score", str(results_path), "--standard", str(tmp_path / "none.yaml")]
    )
    assert "no such reference standard" in _one_line_error(
        capsys,
        ["freeze", str(results_path), "--version", "x", "--base", str(tmp_path / "none.yaml"), "--out", str(tmp_path / "o.yaml")],
    )


def test_freeze_errors(results_path, tmp_path, capsys):
    out = tmp_path / "x.yaml"
    assert "panel member 'ghost'" in _one_line_error(
        capsys, ["freeze", str(results_path), "--version", "v", "--panel", "ghost", "--out", str(out)]
    )
    assert "no rows for arm 'lora'" in _one_line_error(
        capsys, ["freeze", str(results_path), "--version", "v", "--arm", "lora", "--out", str(out)]
    )
    assert not out.exists()


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["score"])
    assert info.value.code == 2
