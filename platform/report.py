"""``python -m platform.report SWEEP`` rebuilds a sweep's HTML report (SWEEP: a parent run id, a sweep name, or an
experiment name for its newest sweep). The sweep itself writes it when it ends.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.quiet import silence
from platform.cli import guarded
from platform.errors import UsageError
from platform.figures.html_report import report_dir
from platform.plan.spec import preset_of
from platform.publish import render_stored_sweep
from platform.results import drivers
from platform.results.store import Store
from platform.results.summary import read_summary
from platform.results.sweep_record import store_report
from platform.run import preflight


def rebuild(store: Store, parent_id: str, tracking_uri: str, out: Path | None = None) -> Path:
    """Write the sweep's report again from its stored runs (``out``, else beside the store); returns its path. A write
    that fails is a UsageError naming the path, and leaves no partial file (nor anything stored: it comes first)."""
    parent = store.run(parent_id)
    preset = preset_of(parent.data.params)
    path = out or report_dir(tracking_uri) / f"{parent.info.run_name}.html"
    html = render_stored_sweep(store, parent_id, preset, read_summary(store, parent_id, preset))
    try:
        return store_report(store, parent_id, html, path)
    except OSError as exc:
        if path.is_file() and exc.filename in (None, str(path)):
            path.unlink()  # what the failed write left of it
        raise UsageError(f"could not write the report {exc.filename or path}: {exc.strerror or exc}") from None


def run(argv: list[str] | None = None) -> int:
    """Rebuild a sweep's report; returns the exit code."""
    p = argparse.ArgumentParser(prog="python -m platform.report", description=__doc__.splitlines()[0])
    p.add_argument("sweep", help="a sweep's parent run id, a sweep name, or an experiment name (its newest sweep)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite:///<cwd>/mlflow.db)")
    p.add_argument("--out", type=Path, help="where to write the HTML (default: reports/<sweep>.html beside the store)")
    args = p.parse_args(argv)
    silence()
    preflight.check_not_empty(args, "tracking_uri")
    if args.out is not None:
        preflight.check_out_file(args.out)
    tracking_uri = args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}"
    store = Store.open(tracking_uri, create=False)
    _, parent_id = drivers.sweep_of(store, args.sweep)
    print(f"report: {rebuild(store, parent_id, tracking_uri, args.out)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
