"""A study run in parts (one sweep per seed) is joined into one study: every part of the newest's plan once, a seed never
twice, a part of another plan left out with its reason, and the joined study survives its snapshot."""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from platform.papers import snapshot
from platform.papers.markdown import studies_table
from platform.papers.measures import ParentMetric
from platform.papers.parts import join
from platform.papers.privatizer import STUDIES as PRIVATIZER_STUDIES
from platform.papers.study_runs import StudyRuns, seed_count

CONFIG = {"epochs": "2", "lr": "0.001"}


def part(name: str, seed: int, started: str, minutes: float = 10.0, lr: str = "0.001") -> StudyRuns:
    """A one-seed sweep as ``--set seed=K`` logs it: the seed in its config, not in its trials table."""
    trials = pd.DataFrame({"trial_id": [f"{name}-a", f"{name}-b"], "k": [0.1, 0.4],
                           "rho": [0.1 * (seed + 1), 0.2 * (seed + 1)]})
    baseline = pd.DataFrame({"run_id": [f"{name}-n"], "name": ["noise sigma=1"], "status": ["FINISHED"],
                             "sigma": [1.0], "u": [0.5 + seed], "baseline": ["noise"]})
    return StudyRuns(name, "quick", {"m": float(seed)}, trials, ("k",), "FINISHED", 2, "gmm",
                     {**CONFIG, "lr": lr, "seed": str(seed)}, started, minutes, "1 node, 2 CPUs, no GPU", baseline)


A, B, C = part("gmm-a", 0, "2026-11-28 10:00"), part("gmm-b", 1, "2026-11-29 10:00", 20.0), part("gmm-c", 2,
                                                                                               "2026-11-30 10:00")


def test_parts_of_one_plan_join_with_their_seeds_and_summed_minutes():
    joined, left_out = join([C, B, A])  # newest first, as the store lists them
    assert left_out == []
    assert seed_count(joined.trials) == 3 and len(joined.trials) == 6
    assert sorted(joined.trials["seed"]) == [0, 0, 1, 1, 2, 2]
    assert joined.trials.loc[joined.trials["seed"] == 1, "rho"].tolist() == [0.2, 0.4]  # B's rows carry B's seed
    assert sorted(joined.baseline["u"]) == [0.5, 1.5, 2.5]
    assert joined.sweep == "gmm-a + gmm-b + gmm-c" and joined.started == "2026-11-28 10:00"
    assert joined.minutes == 40.0 and joined.planned == 6 and joined.label_keys == ("k", "seed")
    assert [p.seeds for p in joined.parts] == [(0,), (1,), (2,)]
    assert joined.parent_metrics == {"m": 1.0}  # a sweep-level number: the mean of the parts' (0, 1, 2), not the newest's


def test_a_sweep_level_number_of_a_joined_study_reads_over_the_parts_that_logged_it(tmp_path):
    stopped = replace(C, parent_metrics={}, status="KILLED")  # stopped before it published its front
    joined, _ = join([stopped, B, A])
    measured = ParentMetric("m")(joined)
    assert measured.value == 0.5 and measured.groups == ((0.0, 1.0),) and measured.seeds == 2
    half = 12.706 * 0.5  # Student t (1 degree of freedom, 97.5 %) times the standard error of (0, 1)
    assert math.isclose(measured.low, 0.5 - half, rel_tol=1e-4) and math.isclose(measured.high, 0.5 + half, rel_tol=1e-4)
    assert measured.band == "95 % t interval over 2 sweeps"
    every = ParentMetric("m")(join([C, B, A])[0])
    assert every.value == 1.0 and math.isclose(every.high - every.value, 4.3027 / math.sqrt(3), rel_tol=1e-4)
    snapshot.save(joined, tmp_path / "gmm")  # the parts' numbers survive the snapshot
    kept = snapshot.load(tmp_path / "gmm")
    assert kept is not None and ParentMetric("m")(kept) == measured
    alone = ParentMetric("m")(A)  # one sweep: its own number and logged interval
    assert alone.value == 0.0 and math.isnan(alone.low)
    assert math.isnan(ParentMetric("m")(join([stopped])[0]).value)


def test_a_number_every_part_logged_alike_reads_as_one_sweep_s_with_the_parts_own_interval():
    counted = [replace(p, parent_metrics={"n": 28476.0, "n/ci_low": lo, "n/ci_high": hi})
               for p, lo, hi in ((A, 1.0, 3.0), (B, 2.0, 6.0))]
    measured = ParentMetric("n")(join(counted[::-1])[0])
    assert (measured.value, measured.low, measured.high) == (28476.0, 1.5, 4.5)
    assert measured.band == "95 % interval" and measured.seeds == 0  # a count is no draw: no three-seed rule


def test_parts_started_in_the_same_minute_keep_the_order_they_ran_in():
    older, newer = part("gmm-a", 0, "2026-11-28 10:00"), part("gmm-b", 1, "2026-11-28 10:00")
    assert join([newer, older])[0].sweep == "gmm-a + gmm-b"


def test_a_single_sweep_comes_back_as_it_is():
    alone, left_out = join([A])
    assert left_out == [] and alone.parts == () and alone.sweep == "gmm-a"
    assert alone.trials["seed"].tolist() == [0, 0]


def test_a_part_of_another_plan_is_left_out_naming_the_difference():
    other = part("gmm-x", 1, "2026-11-29 11:00", lr="0.01")
    joined, left_out = join([A, other])
    assert joined.parts == () and seed_count(joined.trials) == 1
    assert left_out == ["gmm-x: config lr = '0.01', not '0.001'"]
    stand_in = replace(part("gmm-y", 1, "2026-11-29 12:00"), parent_metrics={"data/synthetic": 1.0})
    real = replace(A, parent_metrics={"data/synthetic": 0.0})
    assert join([real, stand_in])[1] == ["gmm-y: data 'synthetic stand-in', not 'real'"]


def test_a_trial_is_never_counted_twice():
    three = replace(part("gmm-old", 0, "2026-11-20 10:00"), config=CONFIG, label_keys=("k", "seed"), planned=6,
                    trials=pd.concat([part("o", s, "").trials.assign(seed=s) for s in (0, 1, 2)], ignore_index=True),
                    baseline=pd.DataFrame())
    joined, notes = join([B, three])  # an older 3-seed sweep holds seed 1 too: only its seeds 0 and 2 join
    assert sorted(joined.trials["seed"]) == [0, 0, 1, 1, 2, 2]
    assert joined.trials.loc[joined.trials["seed"] == 1, "sweep"].unique().tolist() == ["gmm-b"]
    assert notes == ["gmm-old: 2 of its trials are a newer part's, left out"]
    assert [(p.sweep, p.seeds, p.trials) for p in joined.parts] == [("gmm-old", (0, 2), 4), ("gmm-b", (1,), 2)]
    assert join([B, replace(three, trials=three.trials[three.trials["seed"] == 1])])[1] == [
        "gmm-old: every trial is a newer part's"]


def test_a_stopped_part_lands_with_its_trials_and_the_next_part_adds_the_rest():
    stopped = replace(part("gmm-a", 0, "2026-11-28 10:00"), status="KILLED")
    stopped = replace(stopped, trials=stopped.trials.iloc[:1], baseline=pd.DataFrame())
    rest = part("gmm-r", 0, "2026-11-29 10:00")  # the same seed, its missing point only (--set k=0.4)
    rest = replace(rest, trials=rest.trials.iloc[1:], planned=1)
    joined, notes = join([rest, stopped])
    assert notes == [] and len(joined.trials) == 2 and joined.status == "FINISHED" and joined.planned == 2
    assert joined.trials["sweep"].tolist() == ["gmm-a", "gmm-r"] and joined.trials["k"].tolist() == [0.1, 0.4]
    assert join([part("gmm-z", 0, "2026-11-30 10:00"), stopped])[1] == ["gmm-a: every trial is a newer part's"]
    alone, _ = join([stopped])
    assert alone.status == "KILLED" and len(alone.trials) == 1


def test_the_same_part_read_from_the_store_and_the_snapshot_counts_once(tmp_path):
    earlier, _ = join([B, A])  # last session: two parts, saved beside the report
    snapshot.save(earlier, tmp_path / "gmm")
    kept = snapshot.load(tmp_path / "gmm")  # the text columns (each row's part and baseline) read back as text
    assert kept is not None and kept.parts == earlier.parts and kept.baseline.equals(earlier.baseline)
    assert kept.trials.equals(earlier.trials)
    again, left_out = join([B, kept])  # the same session regenerates: B is in the store and in the snapshot
    assert left_out == [] and len(again.trials) == 4 and again.sweep == "gmm-a + gmm-b"
    later, _ = join([C, kept])  # the next session's part on a machine whose store holds only it
    assert later.sweep == "gmm-a + gmm-b + gmm-c" and seed_count(later.trials) == 3 and later.minutes == 40.0
    assert later.trials.loc[later.trials["seed"] == 0, "rho"].tolist() == [0.1, 0.2]


def test_the_studies_table_names_each_part_and_its_seeds():
    joined, _ = join([B, A])
    study = next(s for s in PRIVATIZER_STUDIES if s.key == "gmm")
    line = next(x for x in studies_table({study.key: joined}, [study]) if x.startswith(f"| {study.key} |"))
    assert "| gmm-a (seed 0) + gmm-b (seed 1) | 2026-11-28 10:00 |" in line and "| 30 |" in line
    unfinished = replace(B, status="KILLED", minutes=math.nan, trials=B.trials.iloc[:1])
    short, _ = join([unfinished, A])
    assert short.status == "KILLED" and math.isnan(short.minutes) and len(short.trials) == 3 and short.planned == 4
    line = next(x for x in studies_table({study.key: short}, [study]) if x.startswith(f"| {study.key} |"))
    assert "| gmm-a (seed 0) + gmm-b (seed 1, 1 of 2 trials) (killed: 3 of 4 trials, 2 comparison-grid trials) |" in line


def test_a_joined_studys_interval_of_a_sweep_level_number_is_the_t_interval_over_its_parts_not_a_mean_of_theirs():
    with_intervals = [replace(p, parent_metrics={"m": p.parent_metrics["m"], "m/ci_low": p.parent_metrics["m"] - 0.1,
                                                 "m/ci_high": p.parent_metrics["m"] + 0.1}) for p in (C, B, A)]
    joined, _ = join(with_intervals)
    half = 4.302653 / math.sqrt(3)  # t(0.975, 2 df) × the standard error of (0, 1, 2), whose std is 1
    assert joined.parent_metrics["m"] == 1.0
    assert math.isclose(joined.parent_metrics["m/ci_low"], 1.0 - half, rel_tol=1e-5)  # not the mean of 0.9s: 0.9
    assert math.isclose(joined.parent_metrics["m/ci_high"], 1.0 + half, rel_tol=1e-5)
    alone, _ = join([with_intervals[0]])  # one part: its own interval
    assert (alone.parent_metrics["m/ci_low"], alone.parent_metrics["m/ci_high"]) == (1.9, 2.1)


def test_parts_that_read_the_same_number_keep_their_own_interval_not_one_of_no_width():
    at_ceiling = [replace(p, parent_metrics={"m": 1.0, "m/ci_low": 0.996, "m/ci_high": 1.0}) for p in (C, B, A)]
    joined, _ = join(at_ceiling)
    assert (joined.parent_metrics["m/ci_low"], joined.parent_metrics["m/ci_high"]) == (0.996, 1.0)


def test_a_one_trial_part_completing_a_three_seed_sweep_finishes_the_study_without_multiplying_its_plan():
    three_seeds = pd.concat([part("old", s, "2026-11-28 10:00").trials.assign(seed=s) for s in (0, 1, 2)],
                            ignore_index=True).iloc[:-1]  # killed one trial short: seed 2 at k = 0.4
    old = replace(A, sweep="old", trials=three_seeds, planned=6, status="KILLED", config=CONFIG)
    missing = replace(part("new", 2, "2026-11-29 10:00"), planned=1)
    missing = replace(missing, trials=missing.trials.iloc[1:])  # --set seed=2 --set k=0.4: that trial alone
    joined, _ = join([missing, old])
    assert len(joined.trials) == 6 and joined.planned == 6 and joined.status == "FINISHED"


def test_a_seed_two_parts_ran_is_measured_once_and_a_part_of_some_points_gives_no_front_number():
    whole = [replace(p, parent_metrics={"m": float(s), "front/h": float(s)}) for s, p in enumerate((A, B))]
    stopped = replace(C, trials=C.trials.iloc[:1], status="KILLED", parent_metrics={"m": 2.0})  # killed before its front
    rest = replace(part("gmm-r", 2, "2026-12-01 10:00"), planned=1, parent_metrics={"m": 2.0, "front/h": 9.0})
    rest = replace(rest, trials=rest.trials.iloc[1:], baseline=pd.DataFrame())  # seed 2's missing point alone, no
    # comparison grid: its front is of that point
    joined, notes = join([rest, stopped, *whole[::-1]])
    assert notes == [] and len(joined.trials) == 6 and [p.seeds for p in joined.parts] == [(0,), (1,), (2,), (2,)]
    m = ParentMetric("m")(joined)
    assert m.band == "95 % t interval over 3 sweeps" and m.groups == ((0.0, 1.0, 2.0),) and m.seeds == 3
    front = ParentMetric("front/h")(joined)
    assert front.value == 0.5 and front.groups == ((0.0, 1.0),)  # the one-point front of seed 2 is no seed's front
    assert joined.parent_metrics["m"] == 1.0 and joined.parent_metrics["front/h"] == 0.5


def test_the_studies_table_says_at_which_seeds_each_comparison_grid_ran_whole_when_not_at_every_seed():
    study = next(s for s in PRIVATIZER_STUDIES if s.key == "gmm")
    no_grid = replace(C, baseline=pd.DataFrame())  # seed 2's part ran no comparison grid
    line = next(x for x in studies_table({study.key: join([no_grid, B, A])[0]}, [study]) if x.startswith("| gmm |"))
    assert "gmm-c (seed 2) (noise at seeds 0, 1 only) |" in line
    grids = pd.concat([C.baseline, C.baseline.assign(run_id="p", name="mix=0", baseline="digit-prototype")])
    prototype_missing = [replace(p, baseline=grids) for p in (A, B)] + [C]  # seed 2's part stopped before it
    line = next(x for x in studies_table({study.key: join(prototype_missing[::-1])[0]}, [study])
                if x.startswith("| gmm |"))
    assert "gmm-c (seed 2) (digit-prototype at seeds 0, 1 only) |" in line
    part_way = replace(C, baseline=pd.concat([C.baseline, C.baseline.assign(run_id="m", name="noise sigma=2")]))
    grids_of_two = [replace(p, baseline=part_way.baseline) for p in (A, B)] + [C]  # seed 2 ran 1 of its 2 σ
    line = next(x for x in studies_table({study.key: join(grids_of_two[::-1])[0]}, [study]) if x.startswith("| gmm |"))
    assert "(noise at seeds 0, 1 only) |" in line
    whole = next(x for x in studies_table({study.key: join([C, B, A])[0]}, [study]) if x.startswith("| gmm |"))
    assert " only)" not in whole
    line = next(x for x in studies_table({study.key: join([C, B, A])[0]}, [study]) if x.startswith("| gmm |"))
    assert "comparison grids" not in line
