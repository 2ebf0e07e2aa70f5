"""Render a sweep's HTML report in headless Chromium and save a screenshot (default: docs/report_amnist.png).

    .venv/bin/python scripts/report_screenshot.py SWEEP [--tracking-uri URI] [--out docs/report_amnist.png]

SWEEP is a sweep's parent run id, its name, or an experiment name (its newest sweep). Needs Debian's chromium at
/usr/bin/chromium (scripts/install.sh adds it where apt-get is available).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # putlab's modules from this checkout; first, so `platform` is putlab's package

import numpy as np  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from core.quiet import silence  # noqa: E402
from platform.cli import guarded  # noqa: E402
from platform.report import rebuild  # noqa: E402
from platform.results.store import Store  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--hide-scrollbars")


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 2600, timeout: float = 120) -> Path:
    """Open ``html`` in a fresh headless Chromium profile and write the first ``width``×``height`` pixels to ``png``."""
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                        f"--screenshot={png.resolve()}", html.resolve().as_uri()],
                       check=True, capture_output=True, timeout=timeout)
    return png


def blank(png: Path) -> bool:
    """True when the picture is (nearly) one colour: nothing rendered."""
    pixels = imread(str(png))[..., :3].reshape(-1, 3)
    return float(pixels.std(axis=0).max()) < 0.02 or len(np.unique((pixels * 255).astype(np.uint8), axis=0)) < 16


def run(argv: list[str] | None = None) -> int:
    """Rebuild the sweep's report, screenshot it, refuse a blank picture."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep", help="a sweep's parent run id, a sweep name, or an experiment name (its newest sweep)")
    p.add_argument("--tracking-uri", default=f"sqlite:///{Path.cwd() / 'mlflow.db'}")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "report_amnist.png")
    args = p.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"error: {CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    silence()
    client = Store.open(args.tracking_uri)
    _, parent_id = client.find_sweep(args.sweep)
    html = rebuild(client, parent_id, args.tracking_uri)
    screenshot(html, args.out)
    if blank(args.out):
        print(f"error: the screenshot {args.out} is blank", file=sys.stderr)
        return 1
    print(f"report {html} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(run))
