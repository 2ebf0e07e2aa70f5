"""The low-FPR figure of merit by its definition, the tests' reference for the membership metrics."""
from __future__ import annotations

import numpy as np


def tpr_at_fpr(fpr: np.ndarray, tpr: np.ndarray, target: float) -> float:
    """Largest TPR among ROC points with FPR <= target: the low-FPR figure of merit (Carlini et al.)."""
    ok = np.asarray(fpr) <= target
    return float(np.asarray(tpr)[ok].max()) if ok.any() else 0.0
