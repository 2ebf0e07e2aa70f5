"""ECO smart-meter data (docs/data.md#eco-smart-meter-data): the real files resampled to hourly days, and the schema the
generator shares.

Real layout per household ``NN``: ``NN_sm_csv/YYYY-MM-DD.csv`` (1 Hz rows, 16 columns without a header, the
first is total power in W, −1 = missing) and ``NN_occupancy_csv/NN_{summer,winter}.csv`` (a header row of
times, then one row per day: ``dd-Mon-yyyy`` and 86,400 0/1 values).

Resampling rules:
- power per hour = mean of the hour's valid (≥ 0) seconds; an hour with fewer than half valid seconds is
  missing. A day with at most ``max_missing_hours`` missing hours keeps them, linearly interpolated
  from its neighbours within the day (counted in ``missing_hours``); a day with more is dropped
  (``days_dropped_missing``). Nothing is zero-filled.
- daylight-saving days (Swiss local time, switch at 02:00): 23 hours of rows (spring) mean local hour 2
  does not exist: it is a missing hour, interpolated as above; 25 hours of rows (autumn) mean hour 2
  occurs twice: the two hour-2 blocks are averaged. Any other row count drops the day (``days_bad_length``).
- occupancy per hour = round(mean) of its 3,600 labels, ties (exactly half) counted as occupied.
- only days with both a power file and an occupancy row are kept (``days_without_occupancy`` counts the rest).

Sequences are windows of ``length`` consecutive hours every ``stride`` hours (:func:`window_days`) inside runs of
consecutive days of one household, so a window never spans a gap or two splits.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from core.atomic import save_atomically

from .mnist import DataUnavailableError

HOURS = 24
SECONDS = 3600
DST_HOUR = 2  # local hour that is skipped (spring) or repeated (autumn) in Central European Time
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SI_FEATURES = 7 + 12  # weekday one-hot, month one-hot
EPOCH = dt.date(1970, 1, 1)


@dataclass(frozen=True)
class EcoDays:
    """Hourly daily sequences of one or more households: the schema shared by the loader and the generator.

    ``consumption`` [D, 24] float32 mean power in W; ``occupancy`` [D, 24] int64 in {0, 1};
    ``weekday`` [D] (0 = Monday); ``month`` [D] (1–12); ``household`` [D]; ``day`` [D] days since 1970-01-01.
    ``counts``: what the data source did (days kept, missing hours interpolated, days dropped and why).
    """

    consumption: torch.Tensor
    occupancy: torch.Tensor
    weekday: torch.Tensor
    month: torch.Tensor
    household: torch.Tensor
    day: torch.Tensor
    counts: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.day)

    def subset(self, index: torch.Tensor) -> EcoDays:
        """The days at ``index`` (counts kept)."""
        return EcoDays(self.consumption[index], self.occupancy[index], self.weekday[index], self.month[index],
                       self.household[index], self.day[index], self.counts)

    def side_information(self) -> torch.Tensor:
        """SI per day: weekday one-hot (7) then month one-hot (12), float [D, 19]."""
        one_hot = torch.nn.functional.one_hot
        return torch.cat([one_hot(self.weekday, 7), one_hot(self.month - 1, 12)], 1).float()


def from_arrays(consumption: np.ndarray, occupancy: np.ndarray, dates: list[dt.date], household: np.ndarray,
                counts: dict[str, int]) -> EcoDays:
    """Build the schema from numpy arrays and calendar dates (weekday, month and day index derived from the dates)."""
    return EcoDays(
        torch.as_tensor(consumption, dtype=torch.float32),
        torch.as_tensor(occupancy, dtype=torch.int64),
        torch.tensor([d.weekday() for d in dates], dtype=torch.int64),
        torch.tensor([d.month for d in dates], dtype=torch.int64),
        torch.as_tensor(household, dtype=torch.int64),
        torch.tensor([(d - EPOCH).days for d in dates], dtype=torch.int64),
        dict(counts),
    )


def hourly_power(seconds: np.ndarray) -> np.ndarray | None:
    """24 hourly means (NaN = missing hour) from one day of 1 Hz power values, DST days mapped; None if the length is wrong."""
    if len(seconds) % SECONDS or len(seconds) // SECONDS not in (HOURS - 1, HOURS, HOURS + 1):
        return None
    blocks = np.where(seconds >= 0, seconds, np.nan).reshape(-1, SECONDS)
    valid = (~np.isnan(blocks)).sum(1)
    means = np.where(valid >= SECONDS / 2, np.nansum(blocks, 1) / np.maximum(valid, 1), np.nan)
    if len(means) == HOURS - 1:
        means = np.insert(means, DST_HOUR, np.nan)
    elif len(means) == HOURS + 1:
        pair = means[DST_HOUR:DST_HOUR + 2]
        repeated = np.nan if np.isnan(pair).all() else np.nanmean(pair)
        means = np.concatenate([means[:DST_HOUR], [repeated], means[DST_HOUR + 2:]])
    return means


def fill_missing(hours: np.ndarray) -> np.ndarray:
    """Linear interpolation of NaN hours from the valid hours of the same day (constant beyond the ends)."""
    ok = ~np.isnan(hours)
    t = np.arange(HOURS)
    return np.interp(t, t[ok], hours[ok])


def hourly_occupancy(labels: np.ndarray) -> np.ndarray:
    """[days, 86400] 0/1 labels -> [days, 24] round(mean) per hour, ties counted as occupied."""
    means = labels.reshape(len(labels), HOURS, SECONDS).mean(2)
    return np.floor(means + 0.5).astype(np.int64)


def parse_date(text: str) -> dt.date:
    """``dd-Mon-yyyy`` (English month abbreviation, independent of the locale)."""
    day, month, year = text.strip().strip('"').split("-")
    return dt.date(int(year), MONTHS.index(month[:3].title()) + 1, int(day))


def read_occupancy(folder: Path) -> dict[dt.date, np.ndarray]:
    """Every day of a household's summer and winter occupancy files: date -> 24 hourly labels."""
    days: dict[dt.date, np.ndarray] = {}
    for path in sorted(folder.glob("*.csv")):
        table = pd.read_csv(path, header=0, index_col=0)
        hourly = hourly_occupancy(table.to_numpy(dtype=np.float64))
        days.update({parse_date(str(d)): h for d, h in zip(table.index, hourly, strict=True)})
    return days


def read_power(path: Path) -> np.ndarray:
    """The first column (total power, W) of a 1 Hz smart-meter day file."""
    return pd.read_csv(path, header=None, usecols=[0], dtype=np.float64).to_numpy()[:, 0]


def household_folders(root: Path) -> list[tuple[int, Path, Path]]:
    """(household number, smart-meter folder, occupancy folder) for every ``NN_sm_csv`` under ``root``."""
    if not root.is_dir():
        raise DataUnavailableError(f"ECO data_root {root} is not a directory")
    found = []
    for sm in sorted(root.glob("*_sm_csv")):
        match = re.fullmatch(r"(\d+)_sm_csv", sm.name)
        if match and sm.is_dir():
            found.append((int(match.group(1)), sm, root / f"{match.group(1)}_occupancy_csv"))
    if not found:
        raise DataUnavailableError(f"no ECO household folders (NN_sm_csv) under {root}")
    return found


def parse_eco(root: Path, max_missing_hours: int = 2) -> EcoDays:
    """Read every household under ``root`` into hourly days (see the module docstring for the rules)."""
    counts = {"days": 0, "missing_hours": 0, "days_dropped_missing": 0, "days_bad_length": 0, "days_without_occupancy": 0,
              "households": 0, "synthetic": 0}
    cons, occ, dates, house = [], [], [], []
    for number, sm, occ_dir in household_folders(root):
        counts["households"] += 1
        labels = read_occupancy(occ_dir) if occ_dir.is_dir() else {}
        for path in sorted(sm.glob("*.csv")):
            date = dt.date.fromisoformat(path.stem)
            if date not in labels:
                counts["days_without_occupancy"] += 1
                continue
            hours = hourly_power(read_power(path))
            if hours is None:
                counts["days_bad_length"] += 1
                continue
            missing = int(np.isnan(hours).sum())
            if missing > max_missing_hours:
                counts["days_dropped_missing"] += 1
                continue
            counts["missing_hours"] += missing
            cons.append(fill_missing(hours) if missing else hours)
            occ.append(labels[date])
            dates.append(date)
            house.append(number)
    if not dates:
        raise DataUnavailableError(f"no ECO day under {root} has both power and occupancy data ({counts})")
    counts["days"] = len(dates)
    return from_arrays(np.stack(cons), np.stack(occ), dates, np.array(house), counts)


def _fingerprint(root: Path, max_missing_hours: int) -> str:
    """Hash of every CSV's path, size and mtime under ``root``: a changed file invalidates the cache."""
    h = hashlib.sha256(f"{root.resolve()}|{max_missing_hours}".encode())
    for path in sorted(root.glob("*/*.csv")):
        st = path.stat()
        h.update(f"{path.relative_to(root)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def load_eco(root: str | Path, max_missing_hours: int = 2, cache_dir: str | Path | None = None) -> EcoDays:
    """The real ECO files under ``root`` as hourly days, parsed once and cached (tensors) under ``cache_dir``."""
    root = Path(root).expanduser()
    household_folders(root)  # fail fast, naming the path
    default = os.environ.get("PUTLAB_DATA", str(Path.home() / ".cache" / "putlab" / "data"))
    cache = Path(cache_dir or default) / "eco"
    path = cache / f"eco_{_fingerprint(root, max_missing_hours)}.pt"
    if path.exists():
        blob = torch.load(path, weights_only=True)
        return EcoDays(**{k: blob[k] for k in ("consumption", "occupancy", "weekday", "month", "household", "day")},
                       counts={k: int(v) for k, v in blob["counts"].items()})
    days = parse_eco(root, max_missing_hours)
    save_atomically(path, {**{k: getattr(days, k) for k in ("consumption", "occupancy", "weekday", "month", "household",
                                                            "day")}, "counts": days.counts})
    return days


def split_days(days: EcoDays, test_fraction: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Train/test day indices by whole (household, week) blocks, so test weeks are unseen and contiguous."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1) (got {test_fraction})")
    block = days.household * 100_000 + torch.div(days.day, 7, rounding_mode="floor")
    blocks, inverse = torch.unique(block, return_inverse=True)
    gen = torch.Generator().manual_seed(seed)
    n_test = max(1, round(test_fraction * len(blocks)))
    is_test = torch.zeros(len(blocks), dtype=torch.bool)
    is_test[torch.randperm(len(blocks), generator=gen)[:n_test]] = True
    test = is_test[inverse]
    return torch.nonzero(~test).flatten(), torch.nonzero(test).flatten()


@dataclass(frozen=True)
class EcoWindows:
    """Windows of consecutive hours of one household (the sequences a releaser reads).

    ``consumption`` [W, L] float32 W; ``occupancy`` [W, L] int64; ``hour`` [W, L] the hour of day of each step;
    ``weekday`` [W] and ``month`` [W] of the window's first hour; ``household`` [W]; ``start`` [W] hours since
    1970-01-01 of the first step.
    """

    consumption: torch.Tensor
    occupancy: torch.Tensor
    hour: torch.Tensor
    weekday: torch.Tensor
    month: torch.Tensor
    household: torch.Tensor
    start: torch.Tensor

    def __len__(self) -> int:
        return len(self.start)

    def side_information(self) -> torch.Tensor:
        """SI per window (of its first hour's day): weekday one-hot (7) then month one-hot (12), float [W, 19]."""
        one_hot = torch.nn.functional.one_hot
        return torch.cat([one_hot(self.weekday, 7), one_hot(self.month - 1, 12)], 1).float()


def window_count(hours: int, length: int, stride: int) -> int:
    """Windows of ``length`` hours every ``stride`` hours in a run of ``hours`` consecutive hours."""
    return (hours - length) // stride + 1 if hours >= length else 0


def day_runs(days: EcoDays) -> list[torch.Tensor]:
    """Indices of maximal runs of consecutive days of one household, each in date order."""
    order = torch.argsort(days.household * 10_000_000 + days.day)
    house, day = days.household[order], days.day[order]
    breaks = torch.nonzero((house[1:] != house[:-1]) | (day[1:] != day[:-1] + 1)).flatten() + 1
    return list(torch.tensor_split(order, breaks.tolist()))


def window_days(days: EcoDays, length: int, stride: int) -> EcoWindows:
    """Every window of ``length`` hours starting every ``stride`` hours from midnight of each run of consecutive days.

    ``length`` = ``stride`` = 24 gives one window per day (midnight to midnight); smaller strides overlap.
    """
    if length < 1 or stride < 1:
        raise ValueError(f"window length and stride must be >= 1 hour (got {length}, {stride})")
    parts: list[tuple[torch.Tensor, ...]] = []
    for run in day_runs(days):
        n = window_count(HOURS * len(run), length, stride)
        if not n:
            continue
        offset = torch.arange(n) * stride
        steps = offset[:, None] + torch.arange(length)[None, :]
        first_day = offset // HOURS
        parts.append((days.consumption[run].flatten()[steps], days.occupancy[run].flatten()[steps], steps % HOURS,
                      days.weekday[run][first_day], days.month[run][first_day], days.household[run][first_day],
                      days.day[run][0] * HOURS + offset))
    if not parts:
        longest = max((len(r) for r in day_runs(days)), default=0)
        raise ValueError(f"no window of {length} hours fits: the longest run of consecutive days is {longest} day(s)")
    return EcoWindows(*(torch.cat(column) for column in zip(*parts, strict=True)))
