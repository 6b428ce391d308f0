"""User-facing errors: each carries a one-line message; the CLI prints it and exits non-zero."""


class SpatialGapError(Exception):
    """A failure the user can act on (bad input, unwritable output, ...)."""

    exit_code = 2


class InputError(SpatialGapError):
    """The input file or directory is missing, unreadable or not what was expected."""


class OutputError(SpatialGapError):
    """The output location cannot be written."""
