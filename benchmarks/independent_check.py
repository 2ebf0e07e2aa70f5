"""An attacker the farm does not use, against a finished AMNIST sweep: does it beat the reported privacy axis?

For λ > 0 trials of an ``amnist`` (or ``amnist-privatizer``) sweep, or the trials of a ``noise`` sweep, rebuild the
released splits from each trial's last checkpoint exactly as the farm does, train an attacker the farm does not use
on the released training split and score it once on the released test split. The reported ``attack/max/accuracy``
claims no competent attacker does better; this prints the gap.

The attacker (:data:`DEFAULT`, picked by measurement in docs/journal.md#a-strength-check-picked-by-measurement):
a plain CNN of three conv layers of width 32 (``--net cnn``; the farm's CNN has two, and a dense layer of 64) on
per-pixel standardised inputs, without augmentation (the attribute is stroke thickness), early-stopped on a validation
split of 20 % of its training records (patience 8, at most 40 epochs, best weights restored). ``--net resnet`` is the
earlier check's small ResNet (three residual stages w-2w-4w with batch normalisation and dropout); ``--shifts`` trains
with random shifts of up to 2 pixels (they move a stroke, they do not thicken it).

``--records-factor`` (default 2.5) gives the independent attacker releases of that many times the records the farm's
strongest attacker trained on (``attack/max/train_records``): the game's training split, then training records the
game never saw, released by the same checkpoint. ``--records 5000,12500,all`` asks for those counts instead (``all``:
every training record of the data set), one row each.

Beside it, the *previous* farm's number on the same release, for a before/after: a SmallCNN trained for a fixed
3 epochs on all released training images (``deep``), the same on raw images (``deep_raw``), and the thickness rule
with the best of its three "normal" mappings read off the test split (as the farm did before).

One fit of one attacker varies with its seed by about two points on 1,000 test images, so ``--seeds N`` fits the
independent attacker N times per trial (seeds 0..N-1) and reports the mean, the spread and each seed.

    PYTHONPATH=. .venv/bin/python benchmarks/independent_check.py --tracking-uri sqlite:///mlflow.db putlab-amnist
    PYTHONPATH=. .venv/bin/python benchmarks/independent_check.py --seeds 2 --records 5000,12500,all --no-raw putlab-amnist
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from core.metrics import balanced_accuracy, balanced_accuracy_interval
from core.nets import SmallCNN, Standardized
from core.training import (
    EarlyStoppedFit,
    EarlyStopping,
    FitLog,
    evaluate,
    fit_classifier,
    predict_logits,
    shift_images,
    validation_split,
)
from platform.results import tracking
from platform.results.store import Store
from platform.run.catch_up import checkpoints_of, trial_config
from search_spaces import presets


class Residual(nn.Module):
    """conv-BN-ReLU-conv-BN plus a (strided 1×1) shortcut, then ReLU."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                  nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.skip(x))


class SmallResNet(nn.Sequential):
    """A stem and three residual stages (w-2w-4w, default 32-64-128), global pooling and dropout."""

    def __init__(self, num_classes: int, w: int = 32, channels: int = 1) -> None:
        super().__init__(nn.Conv2d(channels, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                         Residual(w, w, 1), Residual(w, 2 * w, 2), Residual(2 * w, 4 * w, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(4 * w, num_classes))


class PlainCNN(nn.Sequential):
    """Three 3×3 conv layers of ``w`` channels (the first two each followed by 2× max pooling), a dense layer of 128."""

    def __init__(self, num_classes: int, w: int = 32, in_shape: tuple[int, int, int] = (1, 28, 28)) -> None:
        channels, height, width = in_shape
        super().__init__(nn.Conv2d(channels, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(w, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(w, w, 3, padding=1), nn.ReLU(),
                         nn.Flatten(), nn.Linear(w * (height // 4) * (width // 4), 128), nn.ReLU(),
                         nn.Linear(128, num_classes))


@dataclass(frozen=True)
class Recipe:
    """The independent attacker: its network, width, augmentation and early stopping (epochs before stopping may end
    it, then ``patience`` epochs without a validation gain, at most ``max_epochs``)."""

    net: Literal["cnn", "resnet"] = "cnn"
    width: int = 32
    shifts: bool = False
    min_epochs: int = 0
    patience: int = 8
    max_epochs: int = 40
    lr: float = 1e-3
    batch_size: int = 64
    val_fraction: float = 0.2

    @property
    def label(self) -> str:
        """Short name, e.g. ``cnn32`` or ``resnet16+shifts``."""
        return f"{self.net}{self.width}" + ("+shifts" if self.shifts else "")


DEFAULT = Recipe()  # the strongest by measurement (docs/journal.md#a-strength-check-picked-by-measurement)


@dataclass(frozen=True)
class Reading:
    """One fit's test balanced accuracy with its 95 % interval, and the epochs it trained."""

    accuracy: float
    interval: tuple[float, float]
    epochs: int


def build_attacker(recipe: Recipe, num_classes: int, in_shape: tuple[int, int, int]) -> nn.Module:
    """A fresh network of the recipe for images of ``in_shape`` (C, H, W)."""
    if recipe.net == "resnet":
        return SmallResNet(num_classes, recipe.width, in_shape[0])
    return PlainCNN(num_classes, recipe.width, in_shape)


def fit_attacker(x: torch.Tensor, s: torch.Tensor, num_classes: int, recipe: Recipe, seed: int) -> tuple[nn.Module, FitLog]:
    """The recipe's network trained on (x, s) [N, C, H, W], early-stopped on a seeded validation split of it, its
    best-validation weights restored (with how training ended); inputs standardised per pixel with the training
    part's statistics."""
    tr, va = validation_split(len(x), recipe.val_fraction, seed)
    torch.manual_seed(seed)
    mean, std = Standardized.statistics(x[tr])
    model = Standardized(build_attacker(recipe, num_classes, tuple(x.shape[1:])), mean, std)
    fit = EarlyStoppedFit(model, (x[tr], s[tr]), (x[va], s[va]), num_classes,
                          stopping=EarlyStopping(max_epochs=recipe.max_epochs, patience=max(recipe.patience, recipe.min_epochs)),
                          batch_size=recipe.batch_size, lr=recipe.lr, generator=torch.Generator().manual_seed(seed),
                          augment=shift_images if recipe.shifts else None)
    fit.run(recipe.min_epochs)  # the patience above cannot stop it before min_epochs
    fit.stopping = EarlyStopping(max_epochs=recipe.max_epochs, patience=recipe.patience)
    fit.run()
    return fit.model, fit.finish()


def independent_accuracy(train_x: torch.Tensor, train_s: torch.Tensor, test_x: torch.Tensor, test_s: torch.Tensor,
                         seed: int, recipe: Recipe = DEFAULT, num_classes: int = 2) -> Reading:
    """Fit the recipe's attacker on the training data, score it once on the test data."""
    model, log = fit_attacker(train_x, train_s, num_classes, recipe, seed)
    pred = predict_logits(model, test_x).argmax(1)
    interval = balanced_accuracy_interval(pred, test_s, num_classes)
    return Reading(balanced_accuracy(pred, test_s, num_classes), interval, log.epochs)


def previous_farm(data, run_metrics: dict[str, float], seed: int) -> float:
    """The previous farm's attack/max/accuracy on this release: 3-epoch SmallCNNs and the test-maximised thickness rule."""
    scores = []
    for train_x in (data.train_x, data.raw_train_x):
        torch.manual_seed(seed)
        model = fit_classifier(SmallCNN(2), train_x.cpu(), data.train_s.cpu(), epochs=3, batch_size=128, lr=1e-3,
                               generator=torch.Generator().manual_seed(seed))
        scores.append(evaluate(model, data.test_x.cpu(), data.test_s.cpu(), 2))
    ways = [run_metrics.get(f"attack/thickness/accuracy_{w}") for w in ("random", "thin", "thick")]
    return max(scores + [w for w in ways if w is not None])


def training_records(preset, config: dict) -> int:
    """Every training record of the trial's data set: the game's training split and the population outside it."""
    counts = preset.mechanism.data_counts(config)
    return counts["train"] + counts["population"]


def record_budgets(args: argparse.Namespace, farm_records: int, preset, config: dict) -> list[int]:
    """The record counts to release for the independent attacker: ``--records`` (``all``: every training record), else
    ``--records-factor`` times the farm's."""
    if args.records is None:
        return [round(args.records_factor * farm_records)]
    return [training_records(preset, config) if r == "all" else int(r) for r in args.records]


def records_list(text: str) -> list[str]:
    """``--records``: comma-separated counts >= 1 or ``all``."""
    items = [t.strip() for t in text.split(",")]
    if not items or any(t != "all" and not (t.isdigit() and int(t) >= 1) for t in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated record counts >= 1 or 'all', got {text!r}")
    return items


def parse_args() -> argparse.Namespace:
    """The command line (a usage error exits 2)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("sweep", nargs="?", default="putlab-amnist",
                   help="sweep run id, sweep name, or experiment name (its newest sweep); default putlab-amnist")
    p.add_argument("--points", type=int, default=3, help="how many λ > 0 trials (front members first)")
    p.add_argument("--trial", help="only trials whose run name contains this text")
    p.add_argument("--seeds", type=int, default=1, help="independent fits per trial (seeds 0..N-1); the mean is compared")
    p.add_argument("--no-raw", action="store_true", help="skip the raw-image ceiling")
    p.add_argument("--no-previous", action="store_true", help="skip the previous farm's number (two 3-epoch fits)")
    p.add_argument("--net", choices=("cnn", "resnet"), default=DEFAULT.net,
                   help="the plain 3-layer CNN (default) or the small ResNet")
    p.add_argument("--width", type=int, default=DEFAULT.width,
                   help=f"the CNN's conv width, the ResNet's stem width (stages w-2w-4w); default {DEFAULT.width}")
    p.add_argument("--shifts", action="store_true", help="train with random shifts of up to 2 pixels")
    p.add_argument("--min-epochs", type=int, default=DEFAULT.min_epochs,
                   help=f"epochs before early stopping may end it (default {DEFAULT.min_epochs})")
    p.add_argument("--max-epochs", type=int, default=DEFAULT.max_epochs,
                   help=f"the epoch cap (default {DEFAULT.max_epochs})")
    p.add_argument("--records-factor", type=float, default=2.5,
                   help="the independent attacker trains on this many times the farm attacker's records (default 2.5)")
    p.add_argument("--records", type=records_list,
                   help="comma-separated record counts to release instead (e.g. 5000,12500,all), one row each")
    p.add_argument("--bits", type=int, help="round the released splits to this many bits per pixel first (e.g. 8)")
    p.add_argument("--read", choices=("secret", "utility"), default="secret",
                   help="what the attacker reads: the secret S (default) or the release's utility attribute U, as a "
                        "data user would")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = p.parse_args()
    if min(args.seeds, args.width, args.threads, args.max_epochs) < 1 or args.min_epochs < 0 or args.records_factor <= 0:
        p.error("--seeds, --width, --threads and --max-epochs must be >= 1, --min-epochs >= 0, --records-factor > 0")
    if args.bits is not None and not 1 <= args.bits <= 16:
        p.error(f"--bits must be between 1 and 16 (got {args.bits})")
    return args


def rounded(x: torch.Tensor, bits: int | None) -> torch.Tensor:
    """``x`` in [0, 1] rounded to ``bits`` bits per value (unchanged for None): what an image file would keep."""
    if bits is None:
        return x
    levels = 2**bits - 1
    return torch.round(x.clamp(0, 1) * levels) / levels


def seeded_reading(fits: list[Reading], name: str) -> Reading:
    """One fit's reading, or for several seeds the mean with mean ± std as its band (each seed printed)."""
    if len(fits) == 1:
        return fits[0]
    accs = torch.tensor([f.accuracy for f in fits])
    acc, std = float(accs.mean()), float(accs.std())
    print(f"{name}: independent per seed " + ", ".join(f"{a:.3f}" for a in accs.tolist()), flush=True)
    return Reading(acc, (acc - std, acc + std), round(sum(f.epochs for f in fits) / len(fits)))


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    recipe = Recipe(args.net, args.width, args.shifts, args.min_epochs, max_epochs=args.max_epochs)
    client = Store(args.tracking_uri)
    exp_id, parent_id = client.find_sweep(args.sweep)
    preset = presets()[client.run(parent_id).data.params["preset"]]
    runs = [r for r in client.child_runs(exp_id, parent_id) if float(r.data.params.get("lam", 1)) > 0]
    runs = [r for r in runs if args.trial is None or args.trial in r.info.run_name]
    unready = [r.info.run_name for r in runs if not checkpoints_of(r)]
    if unready:
        print(f"left out, no stored checkpoint (still running, or its storage is gone): {', '.join(unready)}")
    runs = [r for r in runs if r.info.run_name not in unready]
    runs.sort(key=lambda r: r.data.tags.get(tracking.TAG_FRONT) != "true")
    print(f"independent attacker: {recipe}")
    print(f"{'trial':<26} {'previous farm':>13} {'reported max [95%]':>26} {'independent [95%]':>26} {'epochs':>6} {'gap':>6}")
    for run in runs[: args.points]:
        _, directory = checkpoints_of(run)[-1]
        config = trial_config(directory)
        farm_records = int(run.data.metrics.get("attack/max/train_records", config.get("n_train") or 0))
        m = run.data.metrics
        secret = args.read == "secret"
        metric = "attack/max/accuracy" if secret else "utility/fresh_accuracy"  # what the row checks
        reported = m.get(metric, float("nan"))
        low, high = m.get(f"{metric}/ci_low", float("nan")), m.get(f"{metric}/ci_high", float("nan"))
        before = (previous_farm(preset.checkpoint_inputs(config, str(directory)).data, m, 0)
                  if secret and not args.no_previous else float("nan"))
        for records in record_budgets(args, farm_records, preset, config):
            d = preset.checkpoint_inputs(config | {"attack_records": records}, str(directory)).data
            t0 = time.perf_counter()
            train_x, test_x = (rounded(x.cpu(), args.bits) for x in (d.train_x, d.test_x))
            labels = (d.train_s, d.test_s) if secret else (d.train_u, d.test_u)
            if labels[0] is None or labels[1] is None:
                raise SystemExit(f"{run.info.run_name}: the release has no utility attribute to read (--read utility)")
            train_y, test_y = labels[0].cpu(), labels[1].cpu()
            classes = int(max(train_y.max(), test_y.max())) + 1
            fits = [independent_accuracy(train_x, train_y, test_x, test_y, seed, recipe, classes)
                    for seed in range(args.seeds)]
            r = seeded_reading(fits, run.info.run_name)
            lo, hi = r.interval
            print(f"{run.info.run_name:<26} {before:>13.3f} {f'{reported:.3f} [{low:.3f}, {high:.3f}]':>26} "
                  f"{f'{r.accuracy:.3f} [{lo:.3f}, {hi:.3f}]':>26} {r.epochs:>6d} {r.accuracy - reported:>+6.3f}  "
                  f"({len(d.train_x)} vs {farm_records} records, {time.perf_counter() - t0:.0f} s)", flush=True)
    if args.no_raw:
        return
    # The same independent attacker on raw images: a generous ceiling for the farm's raw-data calibration.
    from trainables.releaser.config import ReleaserConfig
    from trainables.shared.image_data import load_data

    config = trial_config(directory)
    train, test = load_data(ReleaserConfig.from_dict({k: v for k, v in config.items() if k in ReleaserConfig.model_fields}),
                            torch.device("cpu"))
    r = independent_accuracy(train.x, train.s, test.x, test.s, 0, recipe)
    farm = client.run(parent_id).data.metrics.get("baseline/attack/deep/accuracy", float("nan"))
    print(f"{'raw images (ceiling)':<26} {'':>13} {f'{farm:.3f} (farm deep)':>26} "
          f"{f'{r.accuracy:.3f} [{r.interval[0]:.3f}, {r.interval[1]:.3f}]':>26} {r.epochs:>6d} {r.accuracy - farm:>+6.3f}",
          flush=True)


if __name__ == "__main__":
    main()
