import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from crsbench_lib.results.io import write_results  # noqa: E402
from crsbench_lib.results.synthetic import synthetic_results  # noqa: E402
from crsbench_lib.scoring import freeze_standard, score_results  # noqa: E402


@pytest.fixture(scope="session")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=6, seeds=(0, 1, 2), corruptions=("noise", "blur", "jpeg"),
                             severities=(1, 3, 5), arms=("frozen", "lora"))


@pytest.fixture(scope="session")
def standard(table):
    return freeze_standard(table, "test-v1", created="2026-01-01T00:00:00Z")


@pytest.fixture(scope="session")
def scores(table, standard) -> pd.DataFrame:
    return score_results(table, standard)


@pytest.fixture(scope="session")
def results_file(table, tmp_path_factory):
    return write_results(table, tmp_path_factory.mktemp("results") / "results.parquet")
