import os
import stat

import pytest

from crsbench_lib.atomic import atomic_path, atomic_write_text
from crsbench_lib.errors import CRSBenchError


def test_written_file_has_the_umask_mode(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_failure_inside_leaves_previous_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_unwritable_destination_is_a_user_error(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    with pytest.raises(CRSBenchError, match="afile/x.csv: cannot write here"):
        atomic_write_text(blocker / "x.csv", "x")


def test_cli_reports_unwritable_output_in_one_line(tmp_path, capsys):
    from crsbench_lib.cli import main
    from crsbench_lib.results import write_results
    from crsbench_lib.results.synthetic import synthetic_results

    results = write_results(synthetic_results(n_encoders=3, seeds=(0,)), tmp_path / "r.parquet")
    (tmp_path / "afile").write_text("")
    code = main(["freeze", str(results), "--version", "v", "--out", str(tmp_path / "afile" / "s.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot write here" in err and len(err.strip().splitlines()) == 1
