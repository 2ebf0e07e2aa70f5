"""Data sets for putlab's trainables: the registry of data sets (``get_dataset``), MNIST and Annotated MNIST (AMNIST)."""
from .amnist import (
    LINE,
    MEAN,
    NORMAL,
    RANGE,
    THICK,
    THIN,
    AmnistSplit,
    load_amnist,
    load_amnist_population,
    load_mnist_test_population,
    thickness_labels,
)
from .mnist import (
    DataUnavailableError,
    MnistArrays,
    NumpyOnlyUnpickler,
    default_data_root,
    load_mnist,
    write_idx_files,
)
from .registry import Attribute, Dataset, Split, Splits, dataset_names, get_dataset

__all__ = [
    "Attribute",
    "Dataset",
    "Split",
    "Splits",
    "dataset_names",
    "get_dataset",
    "LINE",
    "MEAN",
    "RANGE",
    "THIN",
    "NORMAL",
    "THICK",
    "AmnistSplit",
    "load_amnist",
    "load_amnist_population",
    "load_mnist_test_population",
    "thickness_labels",
    "DataUnavailableError",
    "MnistArrays",
    "NumpyOnlyUnpickler",
    "default_data_root",
    "load_mnist",
    "write_idx_files",
]
