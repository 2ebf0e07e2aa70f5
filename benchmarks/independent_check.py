"""An attacker the farm does not use, against a finished AMNIST sweep: does it beat the reported privacy axis?

For λ > 0 trials of an ``amnist`` (or ``amnist-privatizer``) sweep, rebuild the released splits from each
trial's last checkpoint exactly as the farm does, train an architecture the farm does not use (a small ResNet:
three residual stages with batch normalisation, dropout, random shifts, standardised inputs) on the released
training split with early stopping on a validation split of it (at least 30 epochs, then patience 8, best weights
restored), score it once on the released test split. The reported ``attack/max/accuracy`` claims no competent
attacker does better; this prints the gap. ``--records-factor`` (default 2.5) gives the independent attacker releases
of that many times the records the farm's strongest attacker trained on (``attack/max/train_records``): the game's
training split, then training records the game never saw, released by the same checkpoint.

Beside it, the *previous* farm's number on the same release, for a before/after: a SmallCNN trained for a fixed
3 epochs on all released training images (``deep``), the same on raw images (``deep_raw``), and the thickness rule
with the best of its three "normal" mappings read off the test split (as the farm did before).

One fit of one attacker varies with its seed by about two points on 1,000 test images, so ``--seeds N`` fits the
independent attacker N times per trial (seeds 0..N-1) and reports the mean, the spread and each seed.

    PYTHONPATH=. .venv/bin/python benchmarks/independent_check.py --tracking-uri sqlite:///mlflow.db putlab-amnist
    PYTHONPATH=. .venv/bin/python benchmarks/independent_check.py --seeds 3 --trial 'alpha=1 lam=1' --no-raw putlab-amnist
"""
from __future__ import annotations

import argparse
import time

import torch
from mlflow.tracking import MlflowClient
from torch import nn

from core.metrics import balanced_accuracy, balanced_accuracy_interval
from core.nets import SmallCNN, Standardized
from core.training import EarlyStoppedFit, EarlyStopping, evaluate, fit_classifier, predict_logits, shift_images, validation_split
from platform.results import tracking
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
    """A stem and three residual stages (w-2w-4w, default 32-64-128), global pooling and dropout: an architecture the
    farm does not use."""

    def __init__(self, num_classes: int, w: int = 32) -> None:
        super().__init__(nn.Conv2d(1, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                         Residual(w, w, 1), Residual(w, 2 * w, 2), Residual(2 * w, 4 * w, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(4 * w, num_classes))


def independent_accuracy(train_x: torch.Tensor, train_s: torch.Tensor, test_x: torch.Tensor, test_s: torch.Tensor,
                         seed: int, width: int = 32, min_epochs: int = 30) -> tuple[float, tuple[float, float], int]:
    """Test balanced accuracy (with interval) of the small ResNet early-stopped on a validation split of the training data."""
    tr, va = validation_split(len(train_x), 0.2, seed)
    torch.manual_seed(seed)
    mean, std = Standardized.statistics(train_x[tr])
    fit = EarlyStoppedFit(Standardized(SmallResNet(2, width), mean, std), (train_x[tr], train_s[tr]),
                          (train_x[va], train_s[va]), 2,
                          stopping=EarlyStopping(max_epochs=60, patience=30), batch_size=64, lr=1e-3,
                          generator=torch.Generator().manual_seed(seed), augment=shift_images)
    fit.run(min_epochs)  # at least min_epochs (the patience of 30 cannot stop it before, for min_epochs <= 30)
    fit.stopping = EarlyStopping(max_epochs=60, patience=8)
    fit.run()
    log = fit.finish()
    pred = predict_logits(fit.model, test_x).argmax(1)
    return balanced_accuracy(pred, test_s, 2), balanced_accuracy_interval(pred, test_s, 2), log.epochs


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("sweep", nargs="?", default="putlab-amnist",
                   help="sweep run id, sweep name, or experiment name (its newest sweep); default putlab-amnist")
    p.add_argument("--points", type=int, default=3, help="how many λ > 0 trials (front members first)")
    p.add_argument("--trial", help="only trials whose run name contains this text")
    p.add_argument("--seeds", type=int, default=1, help="independent fits per trial (seeds 0..N-1); the mean is compared")
    p.add_argument("--no-raw", action="store_true", help="skip the raw-image ceiling")
    p.add_argument("--width", type=int, default=32, help="the ResNet's stem width (stages w-2w-4w; default 32)")
    p.add_argument("--min-epochs", type=int, default=30, help="epochs before early stopping may end it (default 30)")
    p.add_argument("--records-factor", type=float, default=2.5,
                   help="the independent attacker trains on this many times the farm attacker's records (default 2.5)")
    args = p.parse_args()
    if args.seeds < 1:
        p.error("--seeds must be >= 1")
    torch.set_num_threads(2)
    client = MlflowClient(args.tracking_uri)
    exp_id, parent_id = tracking.find_sweep_parent(client, args.sweep)
    preset = presets()[client.get_run(parent_id).data.params["preset"]]
    runs = [r for r in tracking.child_runs(client, exp_id, parent_id) if float(r.data.params.get("lam", 1)) > 0]
    runs = [r for r in runs if args.trial is None or args.trial in r.info.run_name]
    runs.sort(key=lambda r: r.data.tags.get(tracking.TAG_FRONT) != "true")
    print(f"independent attacker: {args.records_factor:g} × the records the farm's strongest attacker trained on")
    print(f"{'trial':<26} {'previous farm':>13} {'reported max [95%]':>26} {'independent [95%]':>26} {'epochs':>6} {'gap':>6}")
    for run in runs[: args.points]:
        _, directory = checkpoints_of(run)[-1]
        config = trial_config(directory)
        farm_records = int(run.data.metrics.get("attack/max/train_records", config.get("n_train") or 0))
        records = round(args.records_factor * farm_records)
        d = preset.checkpoint_inputs(config | {"attack_records": records}, str(directory)).data
        farm_view = preset.checkpoint_inputs(config, str(directory)).data
        t0 = time.perf_counter()
        fits = [independent_accuracy(d.train_x.cpu(), d.train_s.cpu(), d.test_x.cpu(), d.test_s.cpu(), seed, args.width,
                                     min(args.min_epochs, 30)) for seed in range(args.seeds)]
        acc, (lo, hi), epochs = fits[0]
        if args.seeds > 1:
            accs = torch.tensor([f[0] for f in fits])
            acc, epochs = float(accs.mean()), round(sum(f[2] for f in fits) / args.seeds)
            lo, hi = acc - float(accs.std()), acc + float(accs.std())  # for several seeds: mean ± std over seeds
            print(f"{run.info.run_name}: independent per seed " + ", ".join(f"{a:.3f}" for a in accs.tolist()), flush=True)
        m = run.data.metrics
        reported = m.get("attack/max/accuracy", float("nan"))
        low, high = m.get("attack/max/accuracy/ci_low", float("nan")), m.get("attack/max/accuracy/ci_high", float("nan"))
        band = f"[{low:.3f}, {high:.3f}]"
        before = previous_farm(farm_view, m, 0)
        print(f"{run.info.run_name:<26} {before:>13.3f} {f'{reported:.3f} {band}':>26} {f'{acc:.3f} [{lo:.3f}, {hi:.3f}]':>26} "
              f"{epochs:>6d} {acc - reported:>+6.3f}  ({len(d.train_x)} vs {farm_records} records, "
              f"{time.perf_counter() - t0:.0f} s)", flush=True)
    if args.no_raw:
        return
    # The same independent attacker on raw images: a generous ceiling for the farm's raw-data calibration.
    from trainables.releaser.config import ReleaserConfig
    from trainables.shared.image_game import load_data

    config = trial_config(directory)
    train, test = load_data(ReleaserConfig.from_dict({k: v for k, v in config.items() if k in ReleaserConfig.model_fields}),
                            torch.device("cpu"))
    acc, (lo, hi), epochs = independent_accuracy(train.x, train.s, test.x, test.s, 0, args.width, min(args.min_epochs, 30))
    farm = client.get_run(parent_id).data.metrics.get("baseline/attack/deep/accuracy", float("nan"))
    print(f"{'raw images (ceiling)':<26} {'':>13} {f'{farm:.3f} (farm deep)':>26} {f'{acc:.3f} [{lo:.3f}, {hi:.3f}]':>26} "
          f"{epochs:>6d} {acc - farm:>+6.3f}", flush=True)


if __name__ == "__main__":
    main()
