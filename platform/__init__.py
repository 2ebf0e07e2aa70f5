"""putlab's driver layer (CLI, Tune orchestration, MLflow tracking, Pareto fronts).

This package is named ``platform`` by the project's layout, which shadows Python's standard
``platform`` module when running from the repository root. To keep ``uuid``, ``torch``, ``ray``
and ``mlflow`` working, the standard module is loaded under another name and its public names
are re-exported here (hence: run putlab from the repository root). Worker code (trainables/, attacks/)
never imports this package.
"""
import importlib.util as _ilu
import os as _os
import sys as _sys
import sysconfig as _sysconfig

_stdlib_path = _os.path.join(_sysconfig.get_paths()["stdlib"], "platform.py")
_spec = _ilu.spec_from_file_location("_stdlib_platform", _stdlib_path)
if _spec is None or _spec.loader is None:
    raise ImportError(f"the standard platform module is missing at {_stdlib_path}")
_stdlib = _ilu.module_from_spec(_spec)
_sys.modules["_stdlib_platform"] = _stdlib
_spec.loader.exec_module(_stdlib)

for _name in dir(_stdlib):
    if not _name.startswith("__"):
        globals()[_name] = getattr(_stdlib, _name)

# Pickled uname results must resolve to a class importable under this package's name.
_stdlib.uname_result.__module__ = __name__

del _ilu, _os, _sysconfig, _sys, _spec, _stdlib_path, _name
