"""ECO smart-meter days (24 hourly values): S = hourly occupancy (24 binary labels), U = the consumption itself, SI =
weekday and month.

With a data folder the real ECO files are read (core.data.eco), without one the seeded synthetic stand-in
(core.data.eco_synthetic). x and u are the hourly mean power in W (a mechanism normalises x with the train
split's statistics); si is the weekday one-hot then the month one-hot. Train and test are whole
(household, week) blocks; n_train / n_test draw days inside them, and the population is the train days
outside the n_train draw.
"""

from core.data.eco import HOURS, SI_FEATURES, EcoDays, load_eco, split_days
from core.data.eco_synthetic import ECO_DAYS, synthetic_eco
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits, draw


def as_split(days: EcoDays) -> Split:
    """Days in the registry's terms."""
    return Split(days.consumption, days.occupancy, days.consumption, days.side_information())


def load(request: LoadRequest) -> Splits:
    """The real files under the root when one is given, else the synthetic days; split by blocks, then drawn."""
    opts = request.options
    if request.root is not None:
        days = load_eco(request.root, int(opts["max_missing_hours"]))
    else:
        days = synthetic_eco(int(opts["households"]), int(opts["days"]), int(opts["data_seed"]))
    train_idx, test_idx = split_days(days, float(opts["test_fraction"]), int(opts["data_seed"]))
    keep_train, rest = draw(len(train_idx), request.n_train, request.seed, 0)
    keep_test, _ = draw(len(test_idx), request.n_test, request.seed, 1)
    train, test = as_split(days.subset(train_idx[keep_train])), as_split(days.subset(test_idx[keep_test]))
    population = as_split(days.subset(train_idx[rest])) if request.population else None
    counts = {**days.counts, "train_available": len(train_idx), "test_available": len(test_idx),
              "train": len(train), "test": len(test)}
    if population is not None:
        counts["population"] = len(population)
    return Splits(train, test, population, counts)


DATASET = Dataset(
    "eco", "ECO smart-meter days: real files under the data folder, else the synthetic stand-in", (HOURS,),
    private=Attribute("occupancy", 2, (HOURS,)), utility=Attribute("consumption", None, (HOURS,)), loader=load,
    side_information=SI_FEATURES,
    options={"households": 5, "days": ECO_DAYS, "data_seed": 0, "test_fraction": 0.25, "max_missing_hours": 2},
)
