import pandas as pd
import pytest

from crsbench_lib.report.sentences.dominance import describe_dominance_forms, pareto_step

SIGMA = [0.0085, 0.019, 0.011, 0.020]


def _table(**changes):
    table = pd.DataFrame({
        "role": ["candidate", "reference", "candidate", "candidate"],
        "crs_pareto": [0.60, 0.59, 0.47, 0.42],
        "bias_pareto": [-0.033, 0.2, 0.001, -0.008],
        "se_pareto": [0.034, 0.05, 0.025, 0.014],
        "crs_noise_aware": [0.563, 0.60, 0.472, 0.407],
        "bias_noise_aware": [-0.003, 0.1, -0.001, -0.002],
        "se_noise_aware": [0.027, 0.04, 0.016, 0.010],
    }, index=["lead", "ref", "second", "third"])
    for column, values in changes.items():
        table[column] = values
    return table


def test_both_biases_with_steps_and_standard_errors():
    text = describe_dominance_forms(_table(), "pareto", SIGMA, step=0.3 / 18, top=5)
    # The reference's larger bias is not read: it is no candidate.
    assert "is -0.033 (lead, 2.0 steps of 0.017, one panel member each)" in text
    assert "it is -0.003 (lead, 0.1 of its draws' standard errors)" in text
    assert "D 0.0085, C 0.0190, L 0.0110, R 0.0200" in text
    assert "rank the 3 candidates with Kendall's τ_b 1.00" in text
    assert "moves from 0.600 to 0.563" in text
    assert "This page scores with the Pareto count, its standard's form." in text
    assert "belongs to any benchmark of this design; the sizes belong to this build's profiles" in text


def test_top_reads_only_the_best_candidates_of_the_pages_form():
    # With top=1 under the noise-aware form, the leader by that form's CRS is read.
    text = describe_dominance_forms(_table(), "noise_aware", SIGMA, step=0.01, top=1)
    assert text.startswith("Among the 1 best candidates")
    assert "(lead," in text and "second" not in text.split("Kendall")[0]
    assert "This page scores with noise-aware dominance" in text


def test_no_move_sentence_when_the_leader_keeps_its_score():
    table = _table(crs_noise_aware=[0.60, 0.60, 0.472, 0.407])
    assert "moves from" not in describe_dominance_forms(table, "pareto", SIGMA, step=0.02)


@pytest.mark.parametrize(("table", "form", "message"), [
    (_table().drop(columns="se_pareto"), "pareto", "lacks column 'se_pareto'"),
    (_table(), "soft", "form must be one of"),
    (_table(role=["reference"] * 4), "pareto", "no candidate"),
])
def test_bad_input_is_named(table, form, message):
    with pytest.raises(ValueError, match=message):
        describe_dominance_forms(table, form, SIGMA, step=0.02)


def test_pareto_step():
    assert pareto_step(0.3, 19) == pytest.approx(0.3 / 18)
    assert pareto_step(0.3, 19, leave_self_out=False) == pytest.approx(0.3 / 19)
    assert pareto_step(0.3, 1) == pytest.approx(0.3)


def test_a_change_of_leader_between_the_forms_is_named() -> None:
    import pandas as pd

    from crsbench_lib.report.sentences.dominance import describe_dominance_forms

    table = pd.DataFrame({"role": ["candidate"] * 3, "crs_pareto": [0.71, 0.69, 0.5], "bias_pareto": [0.0, 0.0, 0.0],
                          "se_pareto": [0.03] * 3, "crs_noise_aware": [0.69, 0.70, 0.5],
                          "bias_noise_aware": [0.0, 0.0, 0.0], "se_noise_aware": [0.03] * 3}, index=["a", "b", "c"])
    text = describe_dominance_forms(table, "noise_aware", SIGMA, step=0.3 / 18)
    assert "put different candidates first: a under the Pareto count, b under noise-aware dominance" in text
    same = table.assign(crs_noise_aware=[0.72, 0.70, 0.5])
    assert "different candidates first" not in describe_dominance_forms(same, "noise_aware", SIGMA, step=0.3 / 18)


def _forms(pareto, noise_aware):
    return pd.DataFrame({"role": "candidate", "crs_pareto": pareto, "crs_noise_aware": noise_aware},
                        index=[f"e{i}" for i in range(len(pareto))])


def test_dominance_lesson_when_the_forms_put_different_candidates_first():
    from crsbench_lib.report.sentences.dominance import dominance_lessons

    [lesson] = dominance_lessons(_forms([0.71, 0.69, 0.5, 0.4], [0.694, 0.696, 0.5, 0.4]), "noise_aware", simulated=True)
    assert lesson.scope == "world"
    assert "the Pareto count puts e0 first, noise-aware dominance e1" in lesson.text
    assert "the page scores with noise-aware dominance" in lesson.text and "simulated world" in lesson.text


def test_dominance_lesson_when_the_forms_agree_and_on_own_data():
    from crsbench_lib.report.sentences.dominance import dominance_lessons

    [lesson] = dominance_lessons(_forms([0.71, 0.69, 0.5], [0.70, 0.69, 0.5]), "pareto", simulated=False)
    assert "both dominance forms put e0 first and order the 3 candidates with τ_b 1.00" in lesson.text
    assert "this run's own data" in lesson.text and "simulated" not in lesson.text and "phantom" not in lesson.text
    with pytest.raises(ValueError, match="form"):
        dominance_lessons(_forms([0.7, 0.6, 0.5], [0.7, 0.6, 0.5]), "soft")
