"""Silence, at their source, dependency messages that mean nothing to a putlab user.

Each is a named logger or setting of the library that emits it, never a blanket filter on output:
Ray's token-auth notice, Tune's slow-callback warnings, Tune's configuration box and TensorBoard hint
(its new output engine, replaced by ``platform.run.progress``), MLflow's database set-up notices, download bars, the run
addresses it prints for a tracking server and its registry's waiting notice,
tensorboardX's NaN/Inf warning for α = ∞ configs, Serve's "Connecting to existing Serve app", and Tune's own
notices of a stopped run (putlab's interrupt handling says what happened and prints its own resume command).
"""
from __future__ import annotations

import logging
import os

QUIET_LOGGERS = (
    "ray._private.authentication.authentication_token_setup",  # "Token authentication is enabled ..."
    "ray.tune.utils.util",  # warn_if_slow: "The `on_step_end` operation took 1.8 s ..."
    "tensorboardX.x2num",  # "NaN or Inf found in input tensor" for every α = ∞ trial's config
    "mlflow.store.db.utils",  # "Creating initial MLflow database tables..."
    "alembic.runtime.migration",
    "ray.tune.search.variant_generator",  # "Pre-set value ... is not equal": each grid point overrides the first's
    "mlflow.store.model_registry.abstract_store",  # "Waiting up to 300 seconds for model version to finish creation"
)

DROPPED_MESSAGES = (  # (logger, message prefix)
    ("ray.tune.tune", "Stop signal received"),  # "... Press CTRL+C (or send SIGINT/SIGKILL/SIGTERM) to skip."
    ("ray.tune.tune", "Experiment has been interrupted"),  # "Resume experiment with: Tuner.restore(...)"
    ("ray.tune.analysis.experiment_analysis", "Failed to fetch metrics"),  # a stopped trial that reported nothing yet
)


class _DropMessage(logging.Filter):
    """Drops records whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)

    def __eq__(self, other: object) -> bool:  # a logger keeps one of each, however often ``silence`` runs
        return isinstance(other, _DropMessage) and other.prefix == self.prefix

    def __hash__(self) -> int:
        return hash(self.prefix)


def silence(verbose: bool = False) -> None:
    """Quiet the dependencies for a putlab command; with ``verbose`` leave them as they are."""
    # Tune's legacy reporting path drives platform.run.progress.SweepProgress instead of the new engine's box and hint.
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    if verbose:
        return
    os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"  # "🏃 View run ... at: http://..." per ended run
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    for name, prefix in DROPPED_MESSAGES:
        logging.getLogger(name).addFilter(_DropMessage(prefix))


def silence_serve() -> None:
    """Drop Serve's notice that ``serve.run`` reuses the instance ``serve.start`` created (with our HTTP options)."""
    logging.getLogger("ray.serve").addFilter(_DropMessage("Connecting to existing Serve app"))
