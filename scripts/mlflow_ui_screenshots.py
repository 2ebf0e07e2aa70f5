"""Screenshots of the real MLflow UI comparing PUT fronts, taken in headless Chromium (for docs/usage.md).

Starts ``mlflow ui`` on the given store, opens (1) the newest ``platform.compare`` run with its overlaid fronts and
(2) the trials of the named experiments side by side, front members only, with their axes and grid values as columns,
and saves PNGs. Needs Chromium (Debian: ``apt-get install chromium``) and ``pip install playwright``; not a test.

    .venv/bin/python scripts/mlflow_ui_screenshots.py --tracking-uri sqlite:///$PWD/mlflow.db \
        --experiments putlab-amnist,putlab-amnist-privatizer --out docs
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from platform.results.store import Store

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
HIDDEN = ["Dataset", "Source", "Models"]  # default attribute columns with nothing to show here
COLUMNS = ["mechanism", "alpha", "lam", "algorithm", "utility/accuracy", "attack/max/accuracy", "putlab.strongest_attacker"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ui(tracking_uri: str, port: int) -> subprocess.Popen:
    """``mlflow ui`` with one worker; returns once /health answers."""
    ui = subprocess.Popen([str(Path(sys.executable).parent / "mlflow"), "ui", "--backend-store-uri", tracking_uri,
                           "--workers", "1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(60):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return ui
        except OSError:
            time.sleep(1)
    ui.kill()
    raise SystemExit("mlflow ui did not start")


def settle(page: Page) -> None:
    """Wait for the single-page app to render, and close the assistant side panel if it is open."""
    page.wait_for_timeout(6000)  # the UI polls, so the network never goes idle
    close = page.locator("button[aria-label='Close']")
    if close.count():
        close.first.click()
        page.wait_for_timeout(500)


def show_columns(page: Page, names: list[str]) -> None:
    """Toggle each named column in the runs table's column picker (ticks the unticked, unticks the ticked)."""
    page.locator("button:has-text('Columns')").first.click()
    search = page.get_by_placeholder("Search columns")
    for name in names:
        search.fill(name)
        page.wait_for_timeout(400)
        page.get_by_text(name, exact=True).last.click()
    search.fill("")
    page.keyboard.press("Escape")
    page.wait_for_timeout(1500)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", required=True)
    p.add_argument("--experiments", required=True, help="comma-separated experiment names to show side by side")
    p.add_argument("--out", default="docs", help="folder for the PNGs")
    args = p.parse_args()
    client = Store(args.tracking_uri)
    ids = [client.experiment_named(name).experiment_id for name in args.experiments.split(",")]
    comparisons = client.experiment_named("putlab-comparisons")
    newest = client.runs([comparisons.experiment_id], order_by=["attributes.start_time DESC"], max_results=1)[0]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    ui = start_ui(args.tracking_uri, port)
    base = f"http://127.0.0.1:{port}/#"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{base}/experiments/{comparisons.experiment_id}/runs/{newest.info.run_id}/artifacts/comparison/fronts.png")
            settle(page)
            page.screenshot(path=str(out / "mlflow_ui_fronts.png"))
            query = urllib.parse.urlencode({
                "searchFilter": "tags.`putlab.pareto_front` = 'true'",
                "orderByKey": "metrics.`utility/accuracy`", "orderByAsc": "false",
            })
            page.goto(f"{base}/compare-experiments/s?experiments={json.dumps(ids)}&{query}")
            settle(page)
            show_columns(page, HIDDEN + COLUMNS)
            page.screenshot(path=str(out / "mlflow_ui_front_trials.png"))
            browser.close()
    finally:
        ui.terminate()
    print(f"wrote {out / 'mlflow_ui_fronts.png'} and {out / 'mlflow_ui_front_trials.png'}")


if __name__ == "__main__":
    main()
