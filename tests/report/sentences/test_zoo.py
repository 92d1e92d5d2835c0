"""The zoo chapter's lessons, baseline sentence and exercise solution follow the zoo's numbers."""

import pandas as pd

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD
from crsbench_lib.report.sentences.zoo import describe_below_baseline, zoo_exercise_lora_augmentation, zoo_lessons

FAMILIES = {"pixels": "classical", "pca": "classical", "kmeans": "classical", "mae": "mim", "cnn_random": "random",
            "simclr": "broad_ssl", "intask": "intask"}
CLEAN = {"pixels": 0.678, "pca": 0.671, "kmeans": 0.739, "mae": 0.648, "cnn_random": 0.696, "simclr": 0.78,
         "intask": 0.85}
CHECKS = pd.DataFrame([("margin over pixels", "derm", 0.14, "best broad encoder - pixels >= 0.10", True),
                       ("best broad AUROC", "derm", 0.847, ">= 0.85", False),
                       ("LoRA runs", "all", 90, ">= 90", True)], columns=["check", "dataset", "value", "rule", "holds"])


def _effect(clean_gain=(-0.017, -0.005), loss_change=(-0.015, -0.013), plain_loss=(0.045, 0.039)):
    return pd.DataFrame({"augmented": ["s_aug", "m_aug"], "plain": ["s", "m"], "in_results": [True, True],
                         "clean_gain": list(clean_gain), "loss_change": list(loss_change),
                         "corruption_loss_plain": list(plain_loss)})


def test_below_baseline_names_each_encoder_with_its_numbers():
    text = describe_below_baseline(CLEAN, FAMILIES, noise=0.002)
    assert text.startswith("2 of 4 neural encoders fall below the best classical baseline, kmeans (clean AUROC 0.739)")
    assert "cnn_random (0.696, a random-initialisation control, below 1 of the 3 classical baselines)" in text
    assert "mae (0.648, pretrained, below 3 of the 3, pixels at 0.678 among them)" in text
    assert "mae is pretrained and still trails kmeans by 0.091, large beside the seed-to-seed spread of 0.002" in text
    assert "worse than a linear probe on raw pixels" in text
    above = describe_below_baseline({**CLEAN, "mae": 0.75, "cnn_random": 0.74}, FAMILIES)
    assert above.startswith("Every neural encoder beats the best classical baseline, kmeans")
    assert "the lowest, cnn_random (0.740), by 0.001" in above
    # Below kmeans but above pixels: not "worse than raw pixels".
    between = describe_below_baseline({**CLEAN, "mae": 0.70}, FAMILIES)
    assert "worse than a probe on kmeans" in between and "raw pixels" not in between
    assert "lacks a classical baseline" in describe_below_baseline({"mae": 0.6}, FAMILIES)


def test_zoo_lessons_simulated_and_own_data():
    lessons = zoo_lessons(_effect(), CHECKS, CLEAN, FAMILIES, noise=0.002, simulated=True)
    # How many world checks hold is this world's measurement, not the design's.
    assert [lesson.scope for lesson in lessons] == [DESIGN, WORLD, WORLD, WORLD]
    assert "2 pairs differ only in acquisition augmentation" in lessons[0].text
    targets = lessons[1].text
    assert "targets the simulated cohort's generators were tuned to meet" in targets
    assert "2 of 3 hold" in targets and "the check missed here: best broad AUROC on derm, 0.847 against >= 0.85" in targets
    assert "In 2 of 2 pairs acquisition augmentation lowers" in lessons[2].text
    assert "buys robustness at some cost in clean AUROC" in lessons[2].text
    assert "The checks above do not catch this" in lessons[3].text
    own = zoo_lessons(_effect(), CHECKS, CLEAN, FAMILIES, simulated=False)
    assert [lesson.scope for lesson in own] == [DESIGN, WORLD, WORLD, WORLD]
    assert own[1].text.startswith("On this run's own data the best broad pretrained encoder lies between 0.140 and "
                                  "0.140 clean AUROC above the pixel and PCA probes across its 1 dataset")
    assert "world" not in own[1].text and "target" not in own[1].text
    none = zoo_lessons(_effect(), CHECKS[CHECKS["check"] != "margin over pixels"], CLEAN, FAMILIES, simulated=False)
    assert none[1].text.startswith("On this run's own data no margin")
    for lesson in own:
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()


def test_zoo_augmentation_lesson_follows_the_signs():
    def text(**kwargs):
        return zoo_lessons(_effect(**kwargs), CHECKS, CLEAN, FAMILIES)[2].text

    assert "buys both robustness and clean AUROC" in text(clean_gain=(0.01, 0.02))
    assert "does not buy robustness" in text(loss_change=(0.01, 0.02))
    assert "disagree" in text(loss_change=(-0.01, 0.02))
    clean_baselines = zoo_lessons(_effect(), CHECKS, {**CLEAN, "mae": 0.75}, FAMILIES)[3].text
    assert "do not catch" not in clean_baselines


def test_lora_exercise_same_or_different():
    frozen = _effect()
    same = zoo_exercise_lora_augmentation(frozen, _effect(clean_gain=(-0.022, -0.005), plain_loss=(0.044, 0.040)))
    assert "changes the mean corruption AUROC loss by -0.015 (frozen arm: -0.015)" in same
    assert "In 2 of 2 pairs the robustness it buys is about the same in both arms" in same
    assert "moves from 0.045 to 0.044 (s) and from 0.039 to 0.040 (m)" in same
    assert "set in pretraining" in same
    smaller = zoo_exercise_lora_augmentation(frozen, _effect(loss_change=(-0.005, -0.004), plain_loss=(0.03, 0.03)))
    assert "smaller under adaptation in 2 of 2 pairs" in smaller and "recovers part of the robustness" in smaller
    # Printed figures that do not move are not called a recovery ("from 0.039 to 0.039").
    still = zoo_exercise_lora_augmentation(frozen, _effect(loss_change=(-0.005, -0.004), plain_loss=(0.0451, 0.0389)))
    assert "recovers" not in still and "leaves the plain encoders' corruption loss where it was" in still
    absent = _effect().assign(in_results=False)
    assert "no augmentation pair has both arms" in zoo_exercise_lora_augmentation(frozen, absent)


def test_zoo_takeaway_pairs_present_and_noise():
    from crsbench_lib.report.sentences.zoo import zoo_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    text = zoo_takeaway(_effect(), CLEAN, FAMILIES, noise=0.002)
    assert check_takeaway(text) == text
    assert text.startswith("Acquisition augmentation lowers the mean corruption AUROC loss in 2 of 2 pairs (changes "
                           "between -0.015 and -0.013, the largest is large beside the seed-to-seed spread "
                           "of 0.002) and changes the clean AUROC by between -0.017 and -0.005.")
    # A pretrained encoder below the best baseline is named; the control is not counted as pretrained.
    assert text.endswith("2 of 4 neural encoders fall below the best classical baseline, kmeans (clean AUROC 0.739), "
                         "1 of them pretrained (mae).")
    quiet = zoo_takeaway(_effect(loss_change=(0.001, 0.0002)), CLEAN, FAMILIES, noise=0.05)
    assert "in none of the 2 pairs" in quiet and "negligible beside the seed-to-seed spread of 0.050" in quiet


def test_zoo_takeaway_pairs_absent_and_everyone_above_the_baselines():
    from crsbench_lib.report.sentences.zoo import zoo_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    absent = zoo_takeaway(_effect().assign(in_results=False), {**CLEAN, "mae": 0.75, "cnn_random": 0.74}, FAMILIES)
    assert check_takeaway(absent) == absent
    assert absent.startswith("This run holds no complete aug/noaug pair (the zoo has 2)")
    assert absent.endswith("Every one of the 4 neural encoders beats the best classical baseline, kmeans "
                           "(clean AUROC 0.739).")
    control = zoo_takeaway(_effect(), {**CLEAN, "mae": 0.75}, FAMILIES)
    assert control.endswith("1 of 4 neural encoders falls below the best classical baseline, kmeans (clean AUROC "
                            "0.739), and it is not pretrained.")
    no_pairs = zoo_takeaway(_effect().iloc[:0], CLEAN, FAMILIES)
    assert no_pairs.startswith("None of the zoo's 7 encoders form a pair")
