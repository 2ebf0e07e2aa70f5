"""CIFAR-10 (3×32×32): S = animal (bird, cat, deer, dog, frog, horse) or vehicle, U = the 10 classes.

As for Fashion-MNIST, S is a grouping of U's classes.
"""
from core.data.registry import Attribute
from core.data.vision import builtin_cifar, group_of, torchvision_classification, vision_dataset

ANIMALS = (2, 3, 4, 5, 6, 7)

DATASET = vision_dataset(
    "cifar10", "CIFAR-10, torchvision layout <root>/cifar-10-batches-py/", (3, 32, 32),
    private=Attribute("animal", 2), utility=Attribute("class", 10),
    derive=lambda labels, names: (group_of(labels, ANIMALS), labels),
    torchvision_reader=torchvision_classification("CIFAR10"),
    builtin_reader=builtin_cifar("cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)], ["test_batch"]),
)
