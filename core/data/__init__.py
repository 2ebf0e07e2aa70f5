"""Data sets for putlab's trainables: the registry of data sets (``get_dataset``), MNIST and Annotated MNIST (AMNIST)."""
from .amnist_labels import (
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
    "LINE",
    "MEAN",
    "NORMAL",
    "RANGE",
    "THICK",
    "THIN",
    "AmnistSplit",
    "Attribute",
    "DataUnavailableError",
    "Dataset",
    "MnistArrays",
    "NumpyOnlyUnpickler",
    "Split",
    "Splits",
    "dataset_names",
    "default_data_root",
    "get_dataset",
    "load_amnist",
    "load_amnist_population",
    "load_mnist",
    "load_mnist_test_population",
    "thickness_labels",
    "write_idx_files",
]
