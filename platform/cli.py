"""What every putlab command does around its work: one-line user errors, exit codes, Ray shut down."""
from __future__ import annotations

import sys
from collections.abc import Callable

import ray

from core.files.source import InputFileError
from platform.errors import UsageError

EXIT_USAGE = 2


def guarded(work: Callable[[], int]) -> int:
    """Run ``work``; a UsageError, or an InputFileError (a file it reads is not what it should be), becomes
    ``error: <one line>`` on stderr and exit code 2."""
    try:
        return work()
    except (UsageError, InputFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if ray.is_initialized():
            ray.shutdown()
