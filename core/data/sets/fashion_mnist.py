"""Fashion-MNIST (1×28×28): S = upper-body garment (T-shirt/top, pullover, coat, shirt) or not, U = the 10 classes.

S is a grouping of U's classes, so a release cannot keep every class and hide S: the trade-off is how much of
the within-group class information survives once the group is hidden.
"""
from core.data.registry import Attribute
from core.data.vision import builtin_idx, group_of, torchvision_classification, vision_dataset

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")
UPPER_BODY = (0, 2, 4, 6)

DATASET = vision_dataset(
    "fashion_mnist", "Fashion-MNIST, torchvision layout <root>/FashionMNIST/raw/", (1, 28, 28),
    private=Attribute("upper_body", 2), utility=Attribute("class", 10),
    derive=lambda labels, names: (group_of(labels, UPPER_BODY), labels),
    torchvision_reader=torchvision_classification("FashionMNIST"),
    builtin_reader=builtin_idx("FashionMNIST", CLASSES),
)
