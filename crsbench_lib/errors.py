"""Exception types of CRS-Bench.

Every error a user can cause (bad input file, bad parameter, bad config) is a
subclass of :class:`CRSBenchError`. The command-line interface prints such an
error as one line and exits with status 2; anything else is a bug and keeps its
traceback.
"""


class CRSBenchError(Exception):
    """Base class of every user-facing error of the package."""


class SchemaError(CRSBenchError, ValueError):
    """A results table breaks the schema (names the column and rows at fault)."""


class ReferenceStandardError(CRSBenchError, ValueError):
    """A reference standard file is invalid (names the field at fault)."""


class ConfigError(CRSBenchError, ValueError):
    """A profile or config file is invalid (names the key at fault)."""


class DataError(CRSBenchError, ValueError):
    """A dataset, manifest or image file is missing or malformed."""


class EncoderError(CRSBenchError, ValueError):
    """An encoder is unknown, or its weights fail their hash check."""


class EvaluationError(CRSBenchError, ValueError):
    """Metric or probe input is invalid (lengths, probabilities, classes, NaN)."""


class ProbeSettingError(EvaluationError):
    """A probe setting is invalid (:class:`~crsbench_lib.evaluation.cell.ProbeConfig`).

    ``field`` names the setting (a ``ProbeConfig`` field), ``index`` the list
    position at fault (or None) and ``problem`` what was expected, so that the
    profile parser can report it under the profile's own key.
    """

    def __init__(self, field: str, problem: str, index: int | None = None) -> None:
        self.field, self.problem, self.index = field, problem, index
        where = field if index is None else f"{field}[{index}]"
        super().__init__(f"ProbeConfig.{where} {problem}")


class RegistryError(CRSBenchError):
    """The score registry is unreadable, foreign, or the request is invalid."""


class NotebookError(CRSBenchError, ValueError):
    """An unknown notebook or parameter was requested."""


class OutputError(CRSBenchError, OSError):
    """An output file cannot be written where it was asked for."""


class CacheError(CRSBenchError):
    """A cached file is unreadable or fails its checksum (it is recomputed, never reused)."""


class PublishError(CRSBenchError):
    """The built book cannot be published or printed (no built site, no git, no browser)."""
