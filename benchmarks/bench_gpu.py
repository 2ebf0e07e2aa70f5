"""Every mechanism and farm attacker on one GPU without Ray or MLflow: epoch time, peak memory, concurrent trials.

The bare trial (as ``bench_trial.py``'s bare loop) runs a mechanism's game loop for one grid point of a preset
profile on the device, writes its last checkpoint and reads it back as the attack farm does, runs the preset's farm
attackers on the released splits (on the device the data lives on) and releases a batch through the served map.
Then N separate processes (N = 1, 4, 8, 16) run whole trials at once on the one GPU, as N trials with
``--gpus-per-trial 1/N`` would: trials/hour = N · 3600 / wall. Needs torch and the data wheels only. Not a test.

    python benchmarks/bench_gpu.py [--profile quick] [--mechanisms amnist,eco] [--concurrency 1,4,8,16]
                                   [--epochs E] [--json results.json]
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from attacks.farm.checkpoint import attack_inputs  # noqa: E402
from trainables.shared import tune_loop  # noqa: E402


@dataclass(frozen=True)
class Mechanism:
    """A preset and the grid point to measure (values absent from the grid are skipped)."""

    preset: str  # module under search_spaces
    point: dict[str, Any]
    game_only: bool = False  # one report and nothing to serve: time the game alone


MECHANISMS: dict[str, Mechanism] = {
    "amnist": Mechanism("amnist", {"alpha": 2.0, "lam": 1.0}),
    "amnist-privatizer": Mechanism("amnist_privatizer", {"alpha": 0.9, "algorithm": 1}),
    "cloak-mnist": Mechanism("cloak_mnist", {"lam": 10.0, "T": 1.0, "M": 1.5}),
    "eco": Mechanism("eco", {"alpha": 1.0, "lam": 3.0}),
    "eco-si": Mechanism("eco_si", {"alpha": 1.0, "lam": 3.0, "releaser_si": 1}),
    "adult-membership": Mechanism("adult_membership", {"n": 1000, "lam": 1e-2, "p_x": 10, "sigma": 0.1}, game_only=True),
}


@dataclass
class TrialResult:
    """One bare trial's timings (s), peak device memory (MiB) and the farm's per-attacker seconds."""

    mechanism: str
    device: str
    epochs: int = 0
    setup_s: float = 0.0
    epoch_train_s: list[float] = field(default_factory=list)
    epoch_eval_s: list[float] = field(default_factory=list)
    game_s: float = 0.0
    farm_s: float = 0.0
    attack_s: dict[str, float] = field(default_factory=dict)
    attack_metrics: dict[str, float] = field(default_factory=dict)
    peak_game_mib: float = 0.0
    peak_farm_mib: float = 0.0
    wall_s: float = 0.0
    default_kernels_diff: float = 0.0  # served release, same seed twice, without deterministic kernels


def preset_config(name: str, profile: str, epochs: int | None) -> dict[str, Any]:
    """The preset's base and profile config with one grid point (the mechanism's, else each axis' first value)."""
    mech = MECHANISMS[name]
    preset = importlib.import_module(f"search_spaces.{mech.preset}").PRESET
    chosen = preset.profiles[profile]
    point = {k: (mech.point[k] if mech.point.get(k) in values else values[0]) for k, values in chosen.axes.items()}
    config = {**preset.base, **chosen.config, **point}
    if epochs is not None and "epochs" in config:
        config["epochs"] = epochs
        config["checkpoint_every"] = epochs
        for key in ("pretrain_epochs", "attack_epochs"):
            if key in config:
                config[key] = min(config[key], epochs)
        if "suppression_epochs" in config:
            config["suppression_epochs"] = min(config["suppression_epochs"], max(epochs - 1, 0))
    return preset.validate(config)


def _mib(device: torch.device) -> float:
    return torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else float("nan")


def _reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def _check_on(device: torch.device, what: str, *tensors: torch.Tensor | None) -> None:
    """Fail loudly if the farm's inputs did not stay on the trial's device."""
    for t in tensors:
        if t is not None and t.device.type != device.type:
            raise AssertionError(f"{what}: tensor on {t.device}, expected {device}")


def served_sample(shape: tuple[int, ...], data: Any) -> torch.Tensor:
    """Eight raw training inputs in the served map's input shape (Cloak: padded to 32×32; ECO: SI appended if read)."""
    x = data.raw_train_x[:8]
    if x.shape[-1] == 28 and shape[-1] == 32:
        x = torch.nn.functional.pad(x, (2, 2, 2, 2))
    if x.shape[-1] < shape[-1]:
        x = torch.cat([x, data.train_si[:8].unsqueeze(1).expand(-1, x.shape[1], -1)], dim=2)
    if tuple(x.shape[1:]) != tuple(shape):
        raise AssertionError(f"cannot shape a served sample {tuple(x.shape[1:])} as {shape}")
    return x


@torch.no_grad()
def _default_kernels_diff(served: Any, x: torch.Tensor) -> float:
    """Max |difference| of two same-seed releases with the default (possibly non-deterministic) kernels."""
    a, b = (served.apply(served.module, x, torch.Generator(device=x.device).manual_seed(3)) for _ in range(2))
    return float((a - b).abs().max())


def bare_trial(name: str, profile: str, device: torch.device, epochs: int | None = None) -> TrialResult:
    """One trial without Ray: the game loop, its last checkpoint through the farm's loader and attackers, a served release."""
    t_start = time.perf_counter()
    mech = MECHANISMS[name]
    config = preset_config(name, profile, epochs)
    preset = importlib.import_module(f"search_spaces.{mech.preset}").PRESET
    mechanism = preset.mechanism.create(config, device)
    result = TrialResult(name, str(device))
    _reset_peak(device)
    if mech.game_only:  # Adult membership: numpy linear models, one report
        metrics = list(tune_loop.epochs(mechanism))[-1].metrics
        result.game_s = result.wall_s = time.perf_counter() - t_start
        result.attack_metrics = {k: v for k, v in metrics.items() if k.startswith("attack/")}
        result.peak_game_mib = _mib(device)
        return result

    t0 = time.perf_counter()
    for outcome in tune_loop.epochs(mechanism):
        result.epochs = outcome.epoch
        result.setup_s += outcome.metrics["time/setup_s"]
        result.epoch_train_s.append(outcome.metrics["time/train_s"])
        result.epoch_eval_s.append(outcome.metrics["time/eval_s"])
        if "attack/deep/accuracy" in outcome.metrics:
            result.attack_metrics["attack/deep/accuracy (in game)"] = outcome.metrics["attack/deep/accuracy"]
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    result.game_s = time.perf_counter() - t0
    result.peak_game_mib = _mib(device)

    _reset_peak(device)
    t0 = time.perf_counter()
    directory = Path(tempfile.mkdtemp(prefix=f"bench-gpu-{name}-"))
    try:
        tune_loop.write_checkpoint(mechanism, directory)  # the last epoch's state and figures, from the device's tensors
        inputs = preset.checkpoint_inputs(config, str(directory))
        data = inputs.data
        _check_on(device, f"{name} farm inputs", data.train_x, data.train_s, data.test_x, data.test_s, data.train_u,
                  data.raw_train_x, data.train_si, data.test_si, *(t.member_x for t in inputs.targets))
        report = attack_inputs(inputs, preset.farm.attackers, figures=True)
        result.attack_s = report.seconds
        result.attack_metrics.update({k: v for k, v in report.metrics.items() if k.endswith(("/accuracy", "yeom/advantage"))})
        served = preset.load_release(config, str(directory)).to(device)
        sample = served_sample(served.input_shape, data)
        first, again = served.release(sample, seed=3), served.release(sample, seed=3)
        _check_on(device, f"{name} served release", first)
        if not torch.equal(first, again) or not torch.isfinite(first).all():
            raise AssertionError(f"{name}: served release is not deterministic per seed on {device}: "
                                 f"max |diff| {float((first - again).abs().max()):.3g}")
        result.default_kernels_diff = _default_kernels_diff(served, sample)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    result.farm_s = time.perf_counter() - t0
    result.peak_farm_mib = _mib(device)
    result.wall_s = time.perf_counter() - t_start
    bad = {k: v for k, v in result.attack_metrics.items() if not math.isfinite(v)}
    if bad:
        raise AssertionError(f"{name}: non-finite attack metrics {bad}")
    return result


def gpu_used_mib() -> float:
    """GPU memory in use by all processes (nvidia-smi), NaN where nvidia-smi is missing."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5, check=True).stdout
        return float(out.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return float("nan")


class GpuMemorySampler:
    """Peak GPU memory in use by all processes (nvidia-smi, every 0.5 s) while a concurrency run lasts."""

    def __init__(self) -> None:
        self.peak_mib = float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            used = gpu_used_mib()
            if math.isnan(used):
                return
            self.peak_mib = used if math.isnan(self.peak_mib) else max(self.peak_mib, used)

    def __enter__(self) -> GpuMemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def concurrent_trials(name: str, profile: str, n: int, epochs: int | None, workdir: Path) -> dict[str, float]:
    """N processes each running one bare trial at once: wall, trials/hour, per-trial peak memory, mean epoch time."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--profile", profile]
    if epochs is not None:
        cmd += ["--epochs", str(epochs)]
    outs = [workdir / f"{name}-{n}-{i}.json" for i in range(n)]
    if torch.cuda.is_available():
        torch.cuda.empty_cache()  # this process's cached blocks are not the workers'
    baseline = gpu_used_mib()
    t0 = time.perf_counter()
    with GpuMemorySampler() as sampler:
        procs = [subprocess.Popen([*cmd, "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for out in outs]
        errors = [p.communicate()[1] for p in procs]
    wall = time.perf_counter() - t0
    failed = [e for p, e in zip(procs, errors, strict=True) if p.returncode != 0]
    if failed:
        raise RuntimeError(f"{name} x{n}: {len(failed)} worker(s) failed:\n{failed[0][-3000:]}")
    trials = [json.loads(out.read_text()) for out in outs]
    epoch_s = [sum(t["epoch_train_s"]) / max(len(t["epoch_train_s"]), 1) for t in trials]
    return {"n": n, "wall_s": wall, "trials_per_hour": n * 3600 / wall,
            "trial_s_mean": sum(t["wall_s"] for t in trials) / n, "epoch_train_s_mean": sum(epoch_s) / n,
            "peak_trial_mib": max(max(t["peak_game_mib"], t["peak_farm_mib"]) for t in trials),
            "gpu_used_peak_mib": sampler.peak_mib, "gpu_per_process_mib": (sampler.peak_mib - baseline) / n}


def _median(values: list[float]) -> float:
    s = sorted(values)
    return s[len(s) // 2] if s else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", help="preset profile to measure (smoke, quick, paper)")
    parser.add_argument("--mechanisms", default=",".join(MECHANISMS), help=f"comma-separated, of {', '.join(MECHANISMS)}")
    parser.add_argument("--concurrency", default="1,4,8,16", help="N values for concurrent processes ('' to skip)")
    parser.add_argument("--concurrent-mechanisms", help="mechanisms for the concurrency runs (default: all but adult)")
    parser.add_argument("--epochs", type=int, help="cap the game's epochs (a per-epoch measurement at paper scale)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one trial in this process (a concurrency run's worker)
    args = parser.parse_args()
    device = torch.device(args.device)

    if args.worker:
        result = bare_trial(args.worker, args.profile, device, args.epochs)
        args.json.write_text(json.dumps(result.__dict__))
        return

    names = [n for n in args.mechanisms.split(",") if n]
    unknown = [n for n in names if n not in MECHANISMS]
    if unknown:
        raise SystemExit(f"unknown mechanism(s) {', '.join(unknown)}; known: {', '.join(MECHANISMS)}")
    print(f"torch {torch.__version__}, device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""), flush=True)
    singles: dict[str, dict] = {}
    failures = []
    for name in names:
        try:
            r = bare_trial(name, args.profile, device, args.epochs)
        except Exception:  # noqa: BLE001 - report every mechanism's failure, then exit non-zero
            failures.append(name)
            traceback.print_exc()
            continue
        singles[name] = r.__dict__
        print(f"{name:18s} epochs {r.epochs:3d}  setup {r.setup_s:6.2f} s  epoch train {_median(r.epoch_train_s):6.3f} s "
              f"(median)  game {r.game_s:6.1f} s  farm {r.farm_s:5.1f} s  peak {max(r.peak_game_mib, r.peak_farm_mib):7.1f} MiB"
              f"  attacks {json.dumps({k: round(v, 2) for k, v in r.attack_s.items()})}"
              f"  same-seed diff with default kernels {r.default_kernels_diff:.2g}", flush=True)
        print(f"{'':18s} metrics {json.dumps({k: round(v, 3) for k, v in r.attack_metrics.items()})}", flush=True)

    levels = [int(n) for n in args.concurrency.split(",") if n]
    concurrent = (args.concurrent_mechanisms.split(",") if args.concurrent_mechanisms
                  else [n for n in names if not MECHANISMS[n].game_only])
    runs: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in concurrent if levels else []:
            runs[name] = []
            for n in levels:
                try:
                    row = concurrent_trials(name, args.profile, n, args.epochs, Path(tmp))
                except RuntimeError as exc:
                    failures.append(f"{name} x{n}")
                    print(exc, flush=True)
                    break
                runs[name].append(row)
                print(f"{name:18s} N={n:2d}  wall {row['wall_s']:6.1f} s  {row['trials_per_hour']:7.0f} trials/h  "
                      f"trial {row['trial_s_mean']:5.1f} s  epoch {row['epoch_train_s_mean']:6.3f} s  "
                      f"peak/trial {row['peak_trial_mib']:7.1f} MiB  GPU used {row['gpu_used_peak_mib']:7.0f} MiB "
                      f"({row['gpu_per_process_mib']:6.0f} MiB/process)", flush=True)

    if args.json:
        args.json.write_text(json.dumps({"torch": torch.__version__, "device": str(device), "profile": args.profile,
                                         "epochs_cap": args.epochs, "single": singles, "concurrent": runs}, indent=1))
    if failures:
        raise SystemExit(f"failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
