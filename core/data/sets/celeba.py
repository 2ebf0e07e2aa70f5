"""CelebA aligned faces, centre-cropped to a square and resized to 3×64×64: S = Male, U = Smiling (binary attributes).

torchvision's layout: ``<root>/celeba/img_align_celeba/*.jpg`` with ``list_attr_celeba.txt``,
``list_eval_partition.txt`` (0 train, 1 valid, 2 test), ``identity_CelebA.txt``, ``list_bbox_celeba.txt`` and
``list_landmarks_align_celeba.txt`` beside it. The train split is partition 0 and the test split partition 2;
images are decoded only for the samples a load draws.
"""
from pathlib import Path

import torch
from PIL import Image

from core.data.mnist import DataUnavailableError
from core.data.registry import Attribute
from core.data.vision import ImageTable, torchvision_class, vision_dataset
from core.messages import first_line

SIZE = 64
PRIVATE, UTILITY = "Male", "Smiling"
PARTITIONS = {True: 0, False: 2}  # train split -> partition 0, test split -> partition 2


def face(image: Image.Image) -> torch.Tensor:
    """The centred square crop of a face image, resized to SIZE×SIZE (torchvision's transforms): uint8 [3, SIZE, SIZE].

    The crop's offsets round down, as putlab's images always had them; torchvision's ``center_crop`` rounds half to
    even, which on an odd margin would pick a square one pixel off.
    """
    from torchvision.transforms.v2 import functional as tf  # imported on the first decode, not with the registry

    image = image.convert("RGB")
    side = min(image.size)
    square = tf.crop(image, (image.height - side) // 2, (image.width - side) // 2, side, side)
    return tf.pil_to_tensor(tf.resize(square, [SIZE, SIZE], interpolation=tf.InterpolationMode.BILINEAR))


def read_torchvision(root: Path, train: bool, download: bool, checksums: bool) -> ImageTable:
    """One split through ``torchvision.datasets.CelebA`` (attributes already mapped to 0/1 there)."""
    try:
        ds = torchvision_class("CelebA", checksums)(str(root), split="train" if train else "test", target_type="attr",
                                                    transform=face, download=download)
    except RuntimeError as exc:  # "Dataset not found or corrupted. ..."
        raise DataUnavailableError(f"torchvision CelebA under {root}: {first_line(exc)}") from None
    return ImageTable(ds.attr.long(), tuple(ds.attr_names), lambda index: _stack([ds[int(i)][0] for i in index]))


def read_builtin(root: Path, train: bool, download: bool, checksums: bool) -> ImageTable:
    """One split from the same files without torchvision: the two tables it needs and the JPEGs of the drawn samples."""
    folder = root / "celeba"
    partition = dict(_rows(folder / "list_eval_partition.txt", skip=0))
    attr_rows = _rows(folder / "list_attr_celeba.txt", skip=2)
    names = tuple((folder / "list_attr_celeba.txt").read_text().splitlines()[1].split())
    unassigned = [name for name, _ in attr_rows if name not in partition]
    if unassigned:
        raise ValueError(f"{folder / 'list_eval_partition.txt'} has no partition for {unassigned[0]}")
    files = [name for name, _ in attr_rows if int(partition[name][0]) == PARTITIONS[train]]
    chosen = set(files)
    attr = torch.tensor([[int(v) for v in values] for name, values in attr_rows if name in chosen], dtype=torch.int64)
    images = folder / "img_align_celeba"
    if not images.is_dir():
        raise DataUnavailableError(f"missing CelebA image folder {images}")

    def decode(index: torch.Tensor) -> torch.Tensor:
        out = []
        for i in index.tolist():
            with Image.open(images / files[i]) as image:
                out.append(face(image))
        return _stack(out)

    return ImageTable(torch.div(attr.reshape(len(files), len(names)) + 1, 2, rounding_mode="floor"), names, decode)


def _rows(path: Path, skip: int) -> list[tuple[str, list[str]]]:
    """(file name, values) per line of a CelebA table after ``skip`` header lines (fields split on runs of spaces)."""
    if not path.is_file():
        raise DataUnavailableError(f"missing CelebA file {path}")
    return [(fields[0], fields[1:]) for fields in (line.split() for line in path.read_text().splitlines()[skip:]) if fields]


def _stack(images: list[torch.Tensor]) -> torch.Tensor:
    """[n, 3, SIZE, SIZE] uint8 (an empty batch too)."""
    return torch.stack(images) if images else torch.zeros((0, 3, SIZE, SIZE), dtype=torch.uint8)


def _attributes(labels: torch.Tensor, names: tuple[str, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """(Male, Smiling) columns of the 0/1 attribute table, found by name."""
    for wanted in (PRIVATE, UTILITY):
        if wanted not in names:
            raise ValueError(f"CelebA attribute table lacks {wanted!r}")
    return labels[:, names.index(PRIVATE)], labels[:, names.index(UTILITY)]


DATASET = vision_dataset(
    "celeba", "CelebA aligned faces, torchvision layout <root>/celeba/", (3, SIZE, SIZE),
    private=Attribute(PRIVATE.lower(), 2), utility=Attribute(UTILITY.lower(), 2), derive=_attributes,
    torchvision_reader=read_torchvision, builtin_reader=read_builtin,
)
