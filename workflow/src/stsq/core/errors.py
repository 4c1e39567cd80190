"""The pipeline's errors: each message names the file, the config key or the cell it is about.

The command line reports any ``PipelineError`` as one line (no traceback) and exits
with its ``exit_code``; anything else is a bug and keeps its traceback.
"""


class PipelineError(Exception):
    exit_code = 3


class ConfigError(PipelineError, ValueError):
    """An invalid config; the message names the key and the value."""

    exit_code = 2


class CorruptFileError(PipelineError, RuntimeError):
    """A file the pipeline wrote cannot be read back or fails its checks; the message names it."""

    exit_code = 2


class DivergenceError(PipelineError, RuntimeError):
    """The training loss became NaN or infinite."""


class LengthError(PipelineError, ValueError):
    """A model was asked for a sequence length it cannot take (the FCN off its N)."""
