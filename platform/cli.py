"""What every putlab command does around its work: one-line user errors, exit codes, Ray shut down."""
from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import NoReturn

import ray

from core.files.source import InputFileError
from core.messages import printable
from core.plugins import PluginError
from platform.errors import UsageError

EXIT_USAGE = 2


def guarded(work: Callable[[], int]) -> int:
    """Run ``work``; a UsageError, an InputFileError (a file it reads is not what it should be) or a PluginError (an
    installed package's plug-in, found when ``work`` first needs its kind) becomes ``error: <one line>`` on stderr and
    exit code 2."""
    try:
        return work()
    except (UsageError, InputFileError, PluginError) as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)  # a list of bad values keeps one line each
        return EXIT_USAGE
    finally:
        if ray.is_initialized():
            ray.shutdown()


def exit_with(main: Callable[[], int]) -> NoReturn:
    """Run a command's ``main`` and exit with its code (or the SystemExit it raises), skipping Python's final garbage
    collections: over everything a command holds (a sweep's data, Ray, Tune, MLflow: some 600,000 objects) they took
    seconds on a busy machine, after all was recorded and shut down."""
    try:
        code = main()
    finally:
        gc.freeze()
    sys.exit(code)
