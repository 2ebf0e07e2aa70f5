"""Image data sets in torchvision's on-disk layouts, read by torchvision's own dataset classes or by a built-in reader.

torchvision (a dependency, pinned with the torch it was built for) is the reader: ``backend="torchvision"`` and the
default ``"auto"``; downloads go through it too. ``backend="builtin"`` reads the same files without it: MNIST-style
idx files, CIFAR's pickled batches (with an unpickler that only builds numpy arrays, where torchvision's
``pickle.load`` trusts the file: it is the safer choice for files that are not the published, MD5-checked ones) and
CelebA's JPEGs and text tables. The tests read each set both ways and compare (docs/data.md#image-data-sets-and-torchvision).
"""
from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import torch

from core.data.mnist import DataUnavailableError, NumpyOnlyUnpickler, default_data_root
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits, draw
from core.messages import first_line

BACKENDS = ("auto", "torchvision", "builtin")
VISION_OPTIONS = {"backend": "auto", "checksums": True}


@dataclass(frozen=True)
class ImageTable:
    """One split as read from disk: labels (int64 [N] classes or [N, A] 0/1 attributes), their names, images by index."""

    labels: torch.Tensor
    names: tuple[str, ...]
    images: Callable[[torch.Tensor], torch.Tensor]  # index [n] -> uint8 [n, C, H, W]

    def __len__(self) -> int:
        """Number of images."""
        return len(self.labels)


# A reader: (data root, train split?, download?, checksums?) -> the split's table.
Reader = Callable[[Path, bool, bool, bool], ImageTable]


def torchvision_datasets() -> ModuleType:
    """``torchvision.datasets``, or a one-line DataUnavailableError saying why it does not import."""
    try:
        import torchvision.datasets as datasets
    except Exception as exc:  # noqa: BLE001 - ImportError, or RuntimeError "operator torchvision::nms does not exist" (a mismatched pair)
        reason = first_line(exc)
        raise DataUnavailableError(
            f"torchvision does not import ({reason}); install the torchvision that pyproject.toml pins beside "
            f"torch {torch.__version__} (scripts/install.sh), or read local files with backend='builtin'") from None
    return datasets


def unverified(cls: type) -> type:
    """``cls`` with its files' MD5 sums set to None: torchvision's ``check_integrity`` then checks only that they exist."""
    attrs: dict[str, Any] = {}
    for key in ("train_list", "test_list"):
        if hasattr(cls, key):
            attrs[key] = [(name, None) for name, _ in getattr(cls, key)]
    meta = getattr(cls, "meta", None)
    if isinstance(meta, dict):
        attrs["meta"] = {**meta, "md5": None}
    if hasattr(cls, "file_list"):
        attrs["file_list"] = [(file_id, None, name) for file_id, _, name in cls.file_list]
    return type(cls.__name__, (cls,), attrs)


def torchvision_class(name: str, checksums: bool) -> type:
    """The torchvision dataset class ``name`` (MD5 checks off when ``checksums`` is False)."""
    cls = getattr(torchvision_datasets(), name)
    return cls if checksums else unverified(cls)


def torchvision_classification(class_name: str) -> Reader:
    """A reader through a torchvision class with ``train=`` and in-memory ``data`` / ``targets`` (MNIST family, CIFAR)."""

    def read(root: Path, train: bool, download: bool, checksums: bool) -> ImageTable:
        try:
            ds = torchvision_class(class_name, checksums)(str(root), train=train, download=download)
        except RuntimeError as exc:  # "Dataset not found or corrupted. You can use download=True ..."
            raise DataUnavailableError(f"torchvision {class_name} under {root}: {first_line(exc)}") from None
        data = torch.as_tensor(np.asarray(ds.data))
        data = data.unsqueeze(1) if data.dim() == 3 else data.permute(0, 3, 1, 2)  # [N,H,W] or [N,H,W,C] -> [N,C,H,W]
        return _table(data.contiguous(), torch.as_tensor(np.asarray(ds.targets), dtype=torch.int64), tuple(ds.classes))

    return read


def _table(data: torch.Tensor, labels: torch.Tensor, names: tuple[str, ...]) -> ImageTable:
    """A table over images already in memory."""
    return ImageTable(labels, names, lambda index: data[index])


def parse_idx(path: Path) -> np.ndarray:
    """One uncompressed unsigned-byte idx file (MNIST's format) as a uint8 array of the dims in its header."""
    if not path.is_file():
        raise DataUnavailableError(f"missing idx file {path}")
    data = path.read_bytes()
    if len(data) < 4 or data[:3] != b"\x00\x00\x08":
        raise ValueError(f"{path}: not an unsigned-byte idx file (bad magic number)")
    ndim = data[3]
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">i4", count=ndim, offset=4))
    if len(data) != 4 + 4 * ndim + int(np.prod(dims)):
        raise ValueError(f"{path}: header dims {dims} do not match the file size {len(data)}")
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def builtin_idx(folder: str, class_names: Sequence[str]) -> Reader:
    """A reader of torchvision's MNIST-family layout: ``<root>/<folder>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``."""

    def read(root: Path, train: bool, download: bool, checksums: bool) -> ImageTable:
        raw, prefix = root / folder / "raw", "train" if train else "t10k"
        images = torch.from_numpy(parse_idx(raw / f"{prefix}-images-idx3-ubyte").copy()).unsqueeze(1)
        labels = torch.from_numpy(parse_idx(raw / f"{prefix}-labels-idx1-ubyte").astype(np.int64))
        if len(images) != len(labels):
            raise ValueError(f"{raw}: {len(images)} {prefix} images but {len(labels)} labels")
        return _table(images, labels, tuple(class_names))

    return read


def _latin1_bytes(text: str, encoding: str = "latin1") -> bytes:
    """``_codecs.encode`` restricted to latin1: how a protocol-2 pickle written by Python 3 stores bytes."""
    if encoding != "latin1":
        raise pickle.UnpicklingError(f"refusing _codecs.encode with encoding {encoding!r}")
    return text.encode("latin1")


class CifarUnpickler(NumpyOnlyUnpickler):
    """Numpy arrays only, plus the latin1 bytes of protocol-2 pickles written by Python 3 (the published ones are Python 2)."""

    _ALLOWED: ClassVar[dict[tuple[str, str], Any]] = {**NumpyOnlyUnpickler._ALLOWED, ("_codecs", "encode"): _latin1_bytes}


def builtin_cifar(folder: str, train_files: Sequence[str], test_files: Sequence[str], meta: str = "batches.meta",
                  label_key: str = "labels", names_key: str = "label_names") -> Reader:
    """A reader of CIFAR's python layout: pickled batches (``data`` uint8 [N, 3072], labels) and the meta file of class names."""

    def load(path: Path) -> dict:
        if not path.is_file():
            raise DataUnavailableError(f"missing CIFAR file {path}")
        with open(path, "rb") as f:
            entry = CifarUnpickler(f, encoding="latin1").load()
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: expected a pickled dict, found {type(entry).__name__}")
        return entry

    def read(root: Path, train: bool, download: bool, checksums: bool) -> ImageTable:
        batches = [load(root / folder / name) for name in (train_files if train else test_files)]
        data = np.vstack([np.asarray(b["data"], dtype=np.uint8) for b in batches]).reshape(-1, 3, 32, 32)
        labels = torch.tensor([int(v) for b in batches for v in b[label_key]], dtype=torch.int64)
        if len(labels) != len(data):
            raise ValueError(f"{root / folder}: {len(data)} images but {len(labels)} labels")
        return _table(torch.from_numpy(data.copy()), labels, tuple(load(root / folder / meta)[names_key]))

    return read


def pick_reader(backend: str, download: bool, torchvision_reader: Reader, builtin_reader: Reader | None) -> Reader:
    """The reader for ``backend``: the built-in one when asked (and there is one), else torchvision's."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "builtin" and download:
        raise ValueError("download=True needs backend 'torchvision' or 'auto' (downloads go through torchvision)")
    if builtin_reader is None and backend == "builtin":
        raise ValueError("this data set has no built-in reader: it needs backend 'torchvision' or 'auto'")
    return builtin_reader if backend == "builtin" and builtin_reader is not None else torchvision_reader


Derive = Callable[[torch.Tensor, tuple[str, ...]], tuple[torch.Tensor, torch.Tensor]]


def vision_dataset(name: str, description: str, input_shape: tuple[int, int, int], private: Attribute,
                   utility: Attribute, derive: Derive, torchvision_reader: Reader,
                   builtin_reader: Reader | None = None) -> Dataset:
    """An image entry: ``derive`` maps a split's labels and label names to (s, u); x is float [N, C, H, W] in [0, 1].

    The population is the training images left out of the ``n_train`` draw (empty without a limit).
    """

    def load(request: LoadRequest) -> Splits:
        reader = pick_reader(request.options["backend"], request.download, torchvision_reader, builtin_reader)
        root = request.root or default_data_root()
        checksums = bool(request.options["checksums"])
        counts: dict[str, int] = {}
        parts: dict[str, Split] = {}
        for stream, (part, limit) in enumerate((("train", request.n_train), ("test", request.n_test))):
            table = reader(root, part == "train", request.download, checksums)
            s, u = derive(table.labels, table.names)
            keep, rest = draw(len(table), limit, request.seed, stream)
            counts[f"{part}_available"] = len(table)
            parts[part] = _split(table, s, u, keep, input_shape, name)
            if part == "train" and request.population:
                parts["population"] = _split(table, s, u, rest, input_shape, name)
        for part, split in parts.items():
            counts[part] = len(split)
            if private.classes is not None:
                for k in range(private.classes):
                    counts[f"{part}_s{k}"] = int((split.s == k).sum())
        return Splits(parts["train"], parts["test"], parts.get("population"), counts)

    return Dataset(name, description, input_shape, private, utility, load, None, dict(VISION_OPTIONS))


def _split(table: ImageTable, s: torch.Tensor, u: torch.Tensor, index: torch.Tensor,
           input_shape: tuple[int, int, int], name: str) -> Split:
    """The samples at ``index``: images decoded and scaled to [0, 1], with their s and u."""
    x = table.images(index).to(torch.float32).div_(255) if len(index) else torch.zeros((0, *input_shape))
    if tuple(x.shape[1:]) != tuple(input_shape):
        raise ValueError(f"{name}: images are {tuple(x.shape[1:])}, the entry declares {tuple(input_shape)}")
    return Split(x, s[index].clone(), u[index].clone())


def group_of(labels: torch.Tensor, members: Sequence[int]) -> torch.Tensor:
    """1 where the class label is one of ``members``, else 0 (int64): a binary attribute from a class grouping."""
    return torch.isin(labels, torch.tensor(list(members), dtype=labels.dtype)).long()

