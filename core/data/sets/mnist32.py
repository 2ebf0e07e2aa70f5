"""AMNIST padded to 1×32×32 with a 2-pixel zero border, the input of Cloak's LeNet-5 target; S = thickness, U = digit."""
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits
from core.data.sets.amnist import load as load_amnist_splits

PAD = 2


def pad(split: Split) -> Split:
    """The split with its 28×28 images padded to 32×32 (zeros, torchvision's pad transform)."""
    from torchvision.transforms.v2 import functional as tf  # imported on the first load, not with the registry

    return Split(tf.pad(split.x, [PAD]), split.s, split.u)


def load(request: LoadRequest) -> Splits:
    """AMNIST's splits (same draws, same counts), padded."""
    splits = load_amnist_splits(request)
    return Splits(pad(splits.train), pad(splits.test), None if splits.population is None else pad(splits.population),
                  splits.counts)


DATASET = Dataset("mnist32", "AMNIST padded to 32×32 (Cloak's input)", (1, 32, 32),
                  private=Attribute("thickness", 2), utility=Attribute("digit", 10), loader=load)
