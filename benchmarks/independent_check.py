"""An attacker the farm does not use, against a finished AMNIST sweep: does it beat the reported privacy axis?

For λ > 0 trials of an ``amnist`` (or ``amnist-privatizer``) sweep, rebuild the released splits from each
trial's last checkpoint exactly as the farm does, train a different architecture (a deeper CNN with batch
normalisation and dropout, 3 conv blocks) on the released training split with early stopping on a validation
split of it (patience 8, at least 30 epochs, best weights restored), and score it once on the released test
split. The reported ``attack/max/accuracy`` claims no competent attacker does better; this prints the gap.

    PYTHONPATH=. .venv/bin/python benchmarks/independent_check.py --tracking-uri sqlite:///mlflow.db putlab-amnist
"""
from __future__ import annotations

import argparse
import time

import torch
from mlflow.tracking import MlflowClient
from torch import nn

from platform import tracking
from platform.attack import checkpoints_of, trial_config
from search_spaces import presets
from trainables.metrics import balanced_accuracy, balanced_accuracy_interval
from trainables.training import EarlyStopping, EarlyStoppedFit, predict_logits, shift_images, validation_split


class DeeperCNN(nn.Sequential):
    """Three conv blocks (32-64-128) with batch norm, global pooling and dropout: unlike the farm's SmallCNN."""

    def __init__(self, num_classes: int) -> None:
        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]

        super().__init__(*block(1, 32), *block(32, 64), *block(64, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Dropout(0.3), nn.Linear(128, num_classes))


def independent_accuracy(train_x: torch.Tensor, train_s: torch.Tensor, test_x: torch.Tensor, test_s: torch.Tensor,
                         seed: int) -> tuple[float, tuple[float, float], int]:
    """Test balanced accuracy (with interval) of the deeper CNN early-stopped on a validation split of the training data."""
    tr, va = validation_split(len(train_x), 0.2, seed)
    torch.manual_seed(seed)
    fit = EarlyStoppedFit(DeeperCNN(2), (train_x[tr], train_s[tr]), (train_x[va], train_s[va]), 2,
                          stopping=EarlyStopping(max_epochs=60, patience=8), batch_size=64, lr=1e-3,
                          generator=torch.Generator().manual_seed(seed), augment=shift_images)
    fit.run(30)  # at least 30 epochs, whatever the patience says
    fit.stopping = EarlyStopping(max_epochs=60, patience=8)
    fit.run()
    log = fit.finish()
    pred = predict_logits(fit.model, test_x).argmax(1)
    return balanced_accuracy(pred, test_s, 2), balanced_accuracy_interval(pred, test_s, 2), log.epochs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("sweep", nargs="?", default="putlab-amnist",
                   help="sweep run id, sweep name, or experiment name (its newest sweep); default putlab-amnist")
    p.add_argument("--points", type=int, default=3, help="how many λ > 0 trials (front members first)")
    args = p.parse_args()
    torch.set_num_threads(2)
    client = MlflowClient(args.tracking_uri)
    exp_id, parent_id = tracking.find_sweep_parent(client, args.sweep)
    preset = presets()[client.get_run(parent_id).data.params["preset"]]
    runs = [r for r in tracking.child_runs(client, exp_id, parent_id) if float(r.data.params.get("lam", 1)) > 0]
    runs.sort(key=lambda r: r.data.tags.get(tracking.TAG_FRONT) != "true")
    print(f"{'trial':<34} {'reported max':>13} {'independent':>12} {'95% interval':>16} {'epochs':>6} {'gap':>6}")
    for run in runs[: args.points]:
        step, directory = checkpoints_of(run)[-1]
        inputs = preset.checkpoint_inputs(trial_config(directory), str(directory))
        d = inputs.data
        t0 = time.perf_counter()
        acc, (lo, hi), epochs = independent_accuracy(d.train_x.cpu(), d.train_s.cpu(), d.test_x.cpu(), d.test_s.cpu(), 0)
        reported = run.data.metrics.get("attack/max/accuracy", float("nan"))
        print(f"{run.info.run_name:<34} {reported:>13.3f} {acc:>12.3f} {f'[{lo:.3f}, {hi:.3f}]':>16} {epochs:>6d} "
              f"{acc - reported:>+6.3f}  ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
