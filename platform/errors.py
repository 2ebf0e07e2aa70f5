"""The one exception type the CLI turns into a one-line message and a non-zero exit."""


class UsageError(Exception):
    """A user-facing problem (bad preset, value, store or data) found before any trial is scheduled."""
