"""AMNIST (1×28×28): MNIST digits with a thin/thick stroke label; S = thickness (0 thin, 1 thick), U = digit."""
from core.data.amnist_labels import AmnistSplit, load_amnist, load_amnist_population
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits


def as_split(split: AmnistSplit) -> Split:
    """An AMNIST split in the registry's terms."""
    return Split(split.x, split.thick, split.digit)


def load(request: LoadRequest) -> Splits:
    """AMNIST's train/test subsets; the population is the AMNIST training images outside the n_train draw."""
    train, test, counts = load_amnist(request.root, n_train=request.n_train, n_test=request.n_test,
                                      seed=request.seed, download=request.download)
    population = None
    if request.population:
        population = as_split(load_amnist_population(request.root, n_train=request.n_train, seed=request.seed,
                                                     download=request.download))
        counts = {**counts, "population": len(population)}
    return Splits(as_split(train), as_split(test), population, counts)


DATASET = Dataset("amnist", "Annotated MNIST: thin/thick digits (normal ones dropped)", (1, 28, 28),
                  private=Attribute("thickness", 2), utility=Attribute("digit", 10), loader=load)
