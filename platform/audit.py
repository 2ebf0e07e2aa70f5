"""``python -m platform.audit URL``: audit a served operating point black-box against the privacy its registry records.

It sends records an outside attacker would hold (``--records`` training records the game never saw, and the test
split) through the service's public release API, retrains the preset's privacy attackers (``--attackers``) on the
releases it gets back with the farm's own training code (never reading a weight), and compares the strongest with the
``attack/max/accuracy`` the registry version records: it fails when the audit's 95 % interval lies wholly above the
recorded one's (``platform.results.served_audit``). The version is tagged ``audit=passed`` or ``audit=failed`` with the date
and both numbers; a failed audit exits 1. With ``PUTLAB_SERVE_API_KEY`` set it sends ``Authorization: Bearer <key>``.

The URL must be http or https with a host (``serve.client.service_url``; credentials in it are refused); each request
connects within ``CONNECT_TIMEOUT_S`` and waits at most ``READ_TIMEOUT_S`` for each part of the answer. An audit on
fewer than ``MIN_RECORDS`` records (to fit on, or to score on) is refused before anything is sent or tagged.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from attacks.attackers.registry import REGISTRY
from attacks.base import AttackInput, CheckpointInputs
from attacks.farm.checkpoint import attack_inputs
from core.messages import first_line
from core.metric_names import attack_metric
from core.numbers import readable
from core.quiet import silence
from platform.cli import guarded
from platform.errors import UsageError
from platform.results import served_audit
from platform.results.store import ModelVersion, NotFound, Store
from platform.run import preflight
from platform.run.farm import MAX_METRIC
from search_spaces import Preset
from serve.auth import API_KEY_ENV
from serve.client import CONNECT_TIMEOUT_S, READ_TIMEOUT_S, ReleaseClient, ServiceError, service_url
from serve.points import Registry, point_preset, read_point
from serve.validation import MAX_BATCH_LIMIT, Limits
from trainables.shared.mechanism import pick_device

EXIT_FAILED = 1
PROGRESS_STEPS = 10  # progress lines while records are released


def registered(store: Store, model: str, named: str = "--model") -> list[ModelVersion]:
    """The registry versions ``model`` (``name`` or ``name/version``) names; a UsageError naming the registered models
    where it names none (``named``: who named it, the option or the service)."""
    name, _, version = model.partition("/")
    try:
        found = [store.model_version(name, version)] if version else store.model_versions(f"name = '{name}'")
    except NotFound:
        found = []
    if not found:
        names = sorted({v.name for v in store.model_versions()})
        raise UsageError(f"{named} {model!r} names no registered model version in {store.tracking_uri} "
                         f"(registered: {', '.join(names) or 'none'})")
    return found


def served_point(served: list[str], versions: list[ModelVersion] | None, url: str) -> str:
    """The one point to audit: the served one of ``versions`` (of all served points where no model was named)."""
    wanted = served if versions is None else [p for p in served if p in {f"{v.name}/{v.version}" for v in versions}]
    if len(wanted) != 1:
        what = "no" if not wanted else "more than one"
        raise UsageError(f"the service at {url} serves {what} point to audit{'' if versions is None else ' of --model'} "
                         f"(it serves: {', '.join(served) or 'none'}); name one with --model NAME/VERSION")
    return wanted[0]


def progress_printer(total: int) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that prints about :data:`PROGRESS_STEPS` lines over ``total`` records."""
    step = max(1, total // PROGRESS_STEPS)
    printed = [0]

    def progress(done: int, _: int) -> None:
        if done - printed[0] >= step or done == total:
            printed[0] = done
            print(f"released {done}/{total} records", flush=True)

    return progress


def on_device(data: AttackInput, device: torch.device) -> AttackInput:
    """``data`` with every tensor on ``device``."""
    moved = {f.name: getattr(data, f.name).to(device) for f in dataclasses.fields(data)
             if isinstance(getattr(data, f.name), torch.Tensor)}
    return dataclasses.replace(data, **moved)


def cost_line(store: Store, run_id: str, attackers: list[str], sent: int, batch: int) -> str:
    """What the audit will cost: requests, and the seconds the farm took for these attackers on this point's checkpoint."""
    metrics = store.run(run_id).data.metrics if run_id else {}
    timed = {a: metrics[f"time/farm/{a}_s"] for a in attackers if f"time/farm/{a}_s" in metrics}
    farm = (f"the farm took {readable(sum(timed.values()))} s for {', '.join(timed)} on this point's checkpoint"
            if timed else "no farm timing of these attackers recorded")
    untimed = [a for a in attackers if a not in timed]
    return (f"cost: {sent} records in about {-(-sent // batch)} requests of at most {batch}; attackers {', '.join(attackers)}: "
            f"{farm}" + (f" ({', '.join(untimed)}: not timed)" if timed and untimed else ""))


def privacy_attackers(names: list[str]) -> list[str]:
    """``names`` checked: known attackers that read releases only (a membership attacker needs the trained networks)."""
    if not all(names):
        raise UsageError(f"--attackers {','.join(names)!r} has an empty name (give comma-separated attacker names)")
    try:
        REGISTRY.check_names(names)
    except ValueError as exc:
        raise UsageError(f"--attackers: {exc}") from None
    white_box = [n for n in names if REGISTRY[n].per_target]
    if white_box:
        raise UsageError(f"--attackers: {', '.join(white_box)} test trained networks for membership, which a black-box "
                         "audit never reads")
    return names


def audit_records(preset: Preset, config: dict[str, Any], records: int | None, asked: bool = True) -> AttackInput:
    """The unreleased records of the audit: ``records`` to fit on (default: as many as the point's attackers trained
    on) and the test split; a UsageError where the preset names none or the data set holds too few. Unless ``asked``
    (``--records``), a count past the records the game never saw is lowered to all of them, and said so: a point
    registered at the full budget counts the game's own training records, which an outside auditor does not hold."""
    if preset.audit_input is None:
        raise UsageError(f"preset {preset.name!r} ({preset.mechanism_name}) names no records to audit its release with")
    counts = preset.data_counts(config)
    records = records or counts.get("attacker_records")
    outside = counts.get("attacker_records_outside")
    if not asked and records is not None and outside and records > outside:
        print(f"the point's attackers trained on {records:,} records, {records - outside:,} of them the game's own: the "
              f"audit fits on all {outside:,} records the game never saw", flush=True)
        records = outside
    if records is None:
        raise UsageError("the point records nowhere how many records its attackers trained on: pass --records N")
    served_audit.check_records(records, served_audit.MIN_RECORDS)  # before any data is read (the test split is checked once read)
    try:
        return preset.audit_input(config, records)
    except ValueError as exc:
        raise UsageError(f"--records: {first_line(exc)}") from None


def find_point(store: Store, service: ReleaseClient, model: str | None, url: str) -> ModelVersion:
    """The registry version to audit: the one of ``model`` the service serves (its one point where none is named)."""
    versions = registered(store, model) if model else None
    try:
        service.health()
        point_id = served_point([p["id"] for p in service.points()], versions, url)
    except ServiceError as exc:
        raise UsageError(str(exc)) from None
    (version,) = registered(store, point_id, "the served point")  # the service's point may be missing from this registry
    return version


def released(service: ReleaseClient, point_id: str, held: AttackInput, seed: int) -> AttackInput:
    """``held`` with its training and test inputs replaced by the service's releases of them, on this machine's device."""
    n, sent = len(held.train_x), len(held.train_x) + len(held.test_x)
    try:
        out = service.release(point_id, torch.cat([held.train_x, held.test_x]), seed, progress_printer(sent))
    except ServiceError as exc:
        raise UsageError(str(exc)) from None
    return on_device(dataclasses.replace(held, train_x=out[:n], test_x=out[n:]), pick_device())


def train_attackers(inputs: CheckpointInputs, attackers: list[str]) -> dict[str, float]:
    """Each attacker fitted on the released training records and scored on the released test split (the farm's code),
    one line each; their metrics."""
    metrics: dict[str, float] = {}
    for attacker in attackers:
        print(f"training attacker {attacker} on {len(inputs.data.train_x)} releases, scoring it on "
              f"{len(inputs.data.test_x)}", flush=True)
        report = attack_inputs(inputs, [attacker], figures=False)
        metrics |= report.metrics
        result = report.metrics.get(attack_metric(attacker))
        print(f"  {attacker}: " + (f"accuracy {readable(result)} in {readable(report.seconds[attacker])} s"
                                   if result is not None else f"skipped ({report.skipped.get(attacker, 'no accuracy')})"),
              flush=True)
    return metrics


def tag(store: Store, version: ModelVersion, passed: bool, record: served_audit.Estimate, found: served_audit.Estimate,
        url: str, scored: int) -> None:
    """The audit's verdict, date and numbers as tags of the registry version."""
    tags = {"audit": "passed" if passed else "failed", "audit/date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "audit/attack_accuracy": found.text(), "audit/recorded": record.text(),
            "audit/records": f"{found.records} fitted, {scored} scored", "audit/url": url}
    for key, value in tags.items():
        store.set_version_tag(version, key, value)


def run(argv: list[str] | None = None) -> int:
    """Audit one served point; returns the exit code (0 passed, 1 failed)."""
    p = argparse.ArgumentParser(prog="python -m platform.audit", description=__doc__.splitlines()[0])
    p.add_argument("url", help="the release service's base URL, http or https, e.g. http://127.0.0.1:8000 (each "
                               f"request connects within {CONNECT_TIMEOUT_S:g} s and waits at most {READ_TIMEOUT_S:g} s "
                               "for each part of the answer)")
    p.add_argument("--model", help="the registered point: NAME/VERSION, or NAME (the version the service serves); "
                                   "default: the one point the service serves")
    p.add_argument("--records", type=int, help=f"records to fit the attackers on, at least {served_audit.MIN_RECORDS} "
                                                "(default: as many as the recorded strongest attacker trained on, "
                                                "which platform.select sets to every record outside the test split, at "
                                                "most every record the game never saw)")
    p.add_argument("--attackers", help="comma-separated attackers (default: the preset's privacy attackers)")
    p.add_argument("--batch", type=int, default=Limits.max_batch, help="most samples per request (halved on a 413)")
    p.add_argument("--seed", type=int, default=0, help="the first request's seed (the next add their first sample's index)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI of the registry (default: sqlite:///<cwd>/mlflow.db)")
    args = p.parse_args(argv)
    silence()
    preflight.check_not_empty(args, "tracking_uri", "model", "attackers")
    try:
        url = service_url(args.url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.records is not None and args.records < served_audit.MIN_RECORDS:
        raise UsageError(f"--records must be at least {served_audit.MIN_RECORDS} (got {args.records}): the attackers choose "
                         "their configuration on a 20 % validation split of them")
    if not 1 <= args.batch <= MAX_BATCH_LIMIT:
        raise UsageError(f"--batch must be in [1, {MAX_BATCH_LIMIT}] (got {args.batch})")
    chosen = privacy_attackers([a.strip() for a in args.attackers.split(",")]) if args.attackers else None

    store = Store.open(args.tracking_uri or f"sqlite:///{Path.cwd() / 'mlflow.db'}", create=False)
    service = ReleaseClient(url, os.environ.get(API_KEY_ENV, "").strip() or None, batch=args.batch)
    version = find_point(store, service, args.model, url)
    name, version_id = version.name, str(version.version)
    point_id, point = f"{name}/{version_id}", read_point(Registry(store.tracking_uri), name, version_id)
    try:
        preset = point_preset(point)
    except ValueError as exc:
        raise UsageError(f"{point_id}: {first_line(exc)}") from None
    record = served_audit.recorded(version.tags or {}, MAX_METRIC)
    attackers = chosen or list(preset.farm.privacy)
    held = audit_records(preset, point.config, args.records or record.records, asked=args.records is not None)
    records, sent = len(held.train_x), len(held.train_x) + len(held.test_x)
    served_audit.check_records(records, len(held.test_x))
    print(f"auditing {point_id} ({preset.name}, {preset.mechanism_name}) at {url}: recorded {MAX_METRIC} "
          f"{record.text()}", flush=True)
    print(cost_line(store, version.run_id or "", attackers, sent, args.batch), flush=True)
    data = released(service, point_id, held, args.seed)
    metrics = train_attackers(CheckpointInputs(data, config=preset.mechanism.typed(point.config)), attackers)
    found = served_audit.strongest(metrics, attackers, records)
    passed = served_audit.passes(record, found)
    tag(store, version, passed, record, found, url, len(held.test_x))
    verdict, relation = ("passed", "<=") if passed else ("FAILED", ">")
    print(f"audit {verdict}: {point_id}'s strongest attacker {found.text()} against the recorded {MAX_METRIC} "
          f"{record.text()} (audit interval's low {readable(found.low)} {relation} recorded high {readable(record.high)}); "
          f"tagged audit={verdict.lower()} on {name} version {version_id}", flush=True)
    return 0 if passed else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one line on stderr and exit code 2; a failed audit exits 1."""
    return guarded(lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
