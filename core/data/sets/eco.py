"""ECO smart-meter windows (by default one per day: 24 hourly values): S = hourly occupancy (a binary label per hour),
U = the consumption itself, SI = weekday and month.

With a data folder the real ECO files are read (core.data.eco_files), without one the seeded synthetic stand-in
(core.data.eco_synthetic). x and u are the hourly mean power in W (a mechanism normalises x with the train
split's statistics); si is the weekday one-hot then the month one-hot of a window's first hour. Train and test
are whole (household, week) blocks, windowed inside each side (``window_hours`` every ``window_stride_hours``;
24 and 24 = the days themselves, the ECO preset's 24 every 2 = the paper's sequences); n_train / n_test draw
windows inside them, and the population is the train windows outside the n_train draw. The days and all windows
of each side are the load's source (:func:`eco_records`): the ECO mechanism reads its calendar and the training days'
statistics there.
"""
from dataclasses import dataclass

import torch

from core.data.eco_files import HOURS, SI_FEATURES, EcoDays, EcoWindows, load_eco, split_days, window_days
from core.data.eco_synthetic import ECO_DAYS, synthetic_eco
from core.data.registry import Attribute, Dataset, LoadRequest, Split, Splits, draw


@dataclass(frozen=True)
class EcoRecords:
    """What the splits are cut from (:attr:`Splits.source` of an ``eco`` load): the days, the indices of the train and
    test days (whole (household, week) blocks), and every window of each side before the n_train / n_test draws."""

    days: EcoDays
    train_days: torch.Tensor
    test_days: torch.Tensor
    train: EcoWindows
    test: EcoWindows


def eco_records(splits: Splits) -> EcoRecords:
    """The ECO records of a load of the ``eco`` entry (a TypeError for a load of another entry)."""
    if not isinstance(splits.source, EcoRecords):
        raise TypeError(f"not a load of the eco data set (its source is {type(splits.source).__name__})")
    return splits.source


def as_split(windows: EcoWindows) -> Split:
    """Windows in the registry's terms."""
    return Split(windows.consumption, windows.occupancy, windows.consumption, windows.side_information())


def load(request: LoadRequest) -> Splits:
    """The real files under the root when one is given, else the synthetic days; split by blocks, windowed, then drawn."""
    opts = request.options
    if request.root is not None:
        days = load_eco(request.root, int(opts["max_missing_hours"]))
    else:
        days = synthetic_eco(int(opts["households"]), int(opts["days"]), int(opts["data_seed"]))
    train_idx, test_idx = split_days(days, float(opts["test_fraction"]), int(opts["data_seed"]))
    length, stride = int(opts["window_hours"]), int(opts["window_stride_hours"])
    records = EcoRecords(days, train_idx, test_idx, window_days(days.subset(train_idx), length, stride),
                         window_days(days.subset(test_idx), length, stride))
    train_all, test_all = as_split(records.train), as_split(records.test)
    keep_train, rest = draw(len(train_all), request.n_train, request.seed, 0)
    keep_test, _ = draw(len(test_all), request.n_test, request.seed, 1)
    train, test = train_all.subset(keep_train), test_all.subset(keep_test)
    population = train_all.subset(rest) if request.population else None
    counts = {**days.counts, "train_available": len(train_all), "test_available": len(test_all),
              "train": len(train), "test": len(test)}
    if population is not None:
        counts["population"] = len(population)
    return Splits(train, test, population, counts, source=records)


DATASET = Dataset(
    "eco", "ECO smart-meter windows (default: days): real files under the data folder, else the synthetic stand-in",
    (HOURS,),
    private=Attribute("occupancy", 2, (HOURS,)), utility=Attribute("consumption", None, (HOURS,)), loader=load,
    side_information=SI_FEATURES,
    options={"households": 5, "days": ECO_DAYS, "data_seed": 0, "test_fraction": 0.25, "max_missing_hours": 2,
             "window_hours": HOURS, "window_stride_hours": HOURS},
    stand_in=True,
)
