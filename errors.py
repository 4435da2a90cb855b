"""One exception type for every user-facing failure.

Library code raises :class:`GoldboardError` with a one-line message that names
the file, row/cell and field; the CLI prints it as ``Error: <message>`` and exits
non-zero, never with a traceback.
"""


class GoldboardError(Exception):
    """A user-facing error; ``str(err)`` is one line naming what and where."""

    exit_code = 1


class LabelStudioError(GoldboardError):
    """Label Studio was unreachable, refused us, or answered something unexpected."""

    exit_code = 2


class GoldboardWarning(UserWarning):
    """Something the user should know that does not stop the command (the CLI prints
    it as ``Warning: <message>``)."""
