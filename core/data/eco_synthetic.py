"""A seeded stand-in for ECO (docs/data.md#eco-smart-meter-data) with the loader's schema: hourly power and occupancy of
5 households.

Each household has its own base load, fridge and lifestyle: commuters (away about 8–18 on workdays),
a home worker and a retired couple (home most of the day with short outings), a family (away in the
school hours). Everyone is home at night; weekends and public holidays are home days with outings;
each household takes one or two week-long holidays away. Power = standby base + fridge cycles (their
hourly duty cycle, higher in summer) + activity while someone is home and awake, with morning and
evening peaks, winter lighting in the dark hours, and multiplicative noise. The dates are ECO's
(June 2012 – January 2013). :func:`describe` computes the statistics this produces.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import torch

from .eco_files import HOURS, EcoDays, from_arrays

START = dt.date(2012, 6, 1)
ECO_DAYS = 245  # 2012-06-01 .. 2013-01-31
LIFESTYLES = ("commuter", "home_worker", "retired", "family", "commuter")
HOLIDAYS = {dt.date(2012, 8, 1), dt.date(2012, 12, 25), dt.date(2012, 12, 26), dt.date(2013, 1, 1), dt.date(2013, 1, 2)}
WINTER_MONTHS = (11, 12, 1, 2)


def _away_hours(kind: str, workday: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[days, 24] True where the household is out, from per-day leave/return times and outings."""
    n = len(workday)
    t = np.arange(HOURS)[None, :]
    away = np.zeros((n, HOURS), dtype=bool)
    if kind in ("commuter", "family"):
        leave = rng.integers(7, 9, n) if kind == "commuter" else rng.integers(8, 10, n)
        back = rng.integers(17, 20, n) if kind == "commuter" else rng.integers(15, 18, n)
        away |= workday[:, None] & (t >= leave[:, None]) & (t < back[:, None])
    outing_rate = {"commuter": 0.6, "family": 0.7, "home_worker": 0.5, "retired": 0.8}[kind]
    for _ in range(2):  # up to two outings a day, more likely on free days
        go = rng.random(n) < np.where(workday & (kind in ("commuter", "family")), 0.15, outing_rate)
        start = rng.integers(9, 19, n)
        length = rng.integers(1, 5, n)
        away |= go[:, None] & (t >= start[:, None]) & (t < (start + length)[:, None])
    return away


def _holiday_mask(n: int, rng: np.random.Generator) -> np.ndarray:
    """One or two trips of 5–10 days away."""
    mask = np.zeros(n, dtype=bool)
    for _ in range(rng.integers(1, 3)):
        start, length = rng.integers(0, max(n - 10, 1)), rng.integers(5, 11)
        mask[start:start + length] = True
    return mask


def _power(kind: str, occupied: np.ndarray, months: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """[days, 24] hourly mean power in W for one household given its occupancy."""
    n = len(occupied)
    t = np.arange(HOURS)[None, :]
    base = rng.uniform(60, 150)
    summer = np.isin(months, (6, 7, 8))[:, None]
    winter = np.isin(months, WINTER_MONTHS)[:, None]
    fridge = rng.uniform(30, 60) * (1 + 0.3 * summer) * rng.uniform(0.8, 1.2, (n, HOURS))
    awake = (t >= 6) & (t <= 22)
    activity = rng.uniform(120, 260) * {"family": 1.5, "retired": 0.8}.get(kind, 1.0)
    power = base + fridge + occupied * awake * activity * rng.lognormal(0, 0.4, (n, HOURS))
    morning = (t >= 6) & (t <= 8)
    evening = (t >= 18) & (t <= 21)
    power += occupied * morning * rng.uniform(200, 700, (n, HOURS)) * (rng.random((n, HOURS)) < 0.6)
    power += occupied * evening * rng.uniform(300, 1000, (n, HOURS)) * (rng.random((n, HOURS)) < 0.7)
    dark = ((t >= 16) & (t <= 23)) | ((t >= 6) & (t <= 7))
    power += occupied * winter * dark * awake * rng.uniform(100, 250)
    return (power * rng.lognormal(0, 0.1, (n, HOURS))).astype(np.float32)


def synthetic_eco(n_households: int = 5, n_days: int = ECO_DAYS, seed: int = 0) -> EcoDays:
    """``n_households`` × ``n_days`` synthetic days from 2012-06-01, deterministic by ``seed``."""
    if not 1 <= n_households <= len(LIFESTYLES):
        raise ValueError(f"n_households must be in 1..{len(LIFESTYLES)} (got {n_households})")
    if n_days < 1:
        raise ValueError(f"n_days must be >= 1 (got {n_days})")
    rng = np.random.default_rng(seed)
    dates = [START + dt.timedelta(days=i) for i in range(n_days)]
    months = np.array([d.month for d in dates])
    workday = np.array([d.weekday() < 5 and d not in HOLIDAYS for d in dates])
    cons, occ = [], []
    for kind in LIFESTYLES[:n_households]:
        occupied = ~_away_hours(kind, workday, rng)
        occupied[_holiday_mask(n_days, rng)] = False
        occ.append(occupied.astype(np.int64))
        cons.append(_power(kind, occupied, months, rng))
    counts = {"days": n_households * n_days, "missing_hours": 0, "days_dropped_missing": 0, "days_bad_length": 0,
                  "days_without_occupancy": 0, "households": n_households, "synthetic": 1}
    return from_arrays(np.concatenate(cons), np.concatenate(occ), dates * n_households,
                       np.repeat(np.arange(1, n_households + 1), n_days), counts)


def describe(days: EcoDays) -> dict[str, torch.Tensor]:
    """The statistics a data set produces: occupancy rate by weekday × hour [7, 24], mean power by season × hour [2, 24]."""
    occ = days.occupancy.float()
    by_weekday = torch.stack([occ[days.weekday == w].mean(0) for w in range(7)])
    winter = torch.isin(days.month, torch.tensor(WINTER_MONTHS))
    by_season = torch.stack([days.consumption[~winter].mean(0), days.consumption[winter].mean(0)])
    return {"occupancy_by_weekday_hour": by_weekday, "power_by_season_hour": by_season,
            "occupancy_rate": occ.mean(), "mean_power": days.consumption.mean()}
