"""A new sqlite MLflow store from this MLflow version's empty schema, built once per machine and copied.

MLflow builds a new sqlite store by running every one of its schema migrations (about 3 s on two cores); every sweep
into a new store paid that. The empty schema is built once per MLflow version in the temporary folder's
``putlab-mlflow-schema/`` and copied; MLflow opens the copy as the store it would have built (the same tables, indexes
and schema revision) and adds its Default experiment with the artifact root of the process that opens it, as always.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import mlflow
import sqlalchemy
from mlflow.store.db.utils import _initialize_tables


def template_path() -> Path:
    """The empty schema of the installed MLflow version (one file per version)."""
    return Path(tempfile.gettempdir()) / "putlab-mlflow-schema" / f"mlflow-{mlflow.__version__}.db"


def create_store(db: Path) -> None:
    """Put an empty MLflow store at ``db`` unless a file is there already (another process's store is never replaced).
    Where the temporary folder or ``db``'s own cannot take the files (read-only, no hard links), MLflow builds the
    store itself, as without this."""
    if db.exists():
        return
    partial = db.with_name(f".{db.name}.{os.getpid()}.partial")
    try:
        template = template_path()
        if not template.exists():
            build_template(template)
        shutil.copyfile(template, partial)
        os.link(partial, db)  # fails where a store appeared meanwhile: that one is kept
    except (OSError, sqlalchemy.exc.SQLAlchemyError):
        pass
    finally:
        partial.unlink(missing_ok=True)


def build_template(template: Path) -> None:
    """MLflow's own migrations on an empty file, then moved into place whole (two processes may both build it)."""
    template.parent.mkdir(parents=True, exist_ok=True)
    partial = template.with_name(f".{template.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    engine = sqlalchemy.create_engine(f"sqlite:///{partial}")
    try:
        _initialize_tables(engine)
        engine.dispose()
        os.replace(partial, template)
    finally:
        engine.dispose()
        partial.unlink(missing_ok=True)  # a failed build leaves nothing behind
