"""The ECO game's rounds: the releaser's pretraining, one epoch of k adversary steps and one releaser step (Algorithm 1),
and the scoring of a release."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch
from torch.nn import functional as F

from core.metric_names import NE_ENERGY, NORMALISED_ALPHA_MI
from core.metrics import accuracy_metrics
from core.training import batches, fit_classifier, predict_logits
from trainables.eco_releaser.attack_runs import deep_attack
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.scores import hourly_alpha_mi, ne_energy, ne_variance
from trainables.eco_releaser.windows import EcoSplit, adversary_input, releaser_input
from trainables.shared.release_map import release

if TYPE_CHECKING:  # the mechanism calls these rounds with itself
    from trainables.eco_releaser.mechanism import EcoReleaser


def pretrain(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, gen: torch.Generator) -> None:
    """Warm start at the full-utility end: the releaser as an identity map (Y ≈ X), the adversary on raw windows.

    The identity is fitted fast (``pretrain_lr``, its own optimiser); the game's slower, clipped
    releaser steps (``releaser_lr``) then start from it.
    """
    r_in = releaser_input(cfg, train)
    opt = torch.optim.Adam(m.releaser.parameters(), lr=cfg.pretrain_lr)
    for _ in range(cfg.pretrain_epochs):
        for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
            loss = F.mse_loss(m.releaser(r_in[idx], gen), train.x[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    if cfg.pretrain_epochs:
        fit_classifier(m.adversary, adversary_input(cfg, train.x, train.si), train.occupancy, epochs=cfg.pretrain_epochs,
                       batch_size=cfg.batch_size, lr=cfg.lr, generator=gen)


def train_epoch(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, prior: torch.Tensor, norm: tuple[float, float],
                gen: torch.Generator) -> dict[str, float]:
    """One pass of Algorithm 1 over the training windows; returns mean training losses."""
    n, device = len(train), train.x.device
    r_in = releaser_input(cfg, train)
    sums = {"loss_releaser": 0.0, "loss_adversary": 0.0, "ne_energy": 0.0, "privacy_term": 0.0}
    steps = 0
    for idx in batches(n, cfg.batch_size, gen, device):
        for _ in range(cfg.adv_steps):
            adv_idx = torch.randint(n, (cfg.batch_size,), generator=gen, device=gen.device).to(device)
            with torch.no_grad():
                y_adv = m.releaser(r_in[adv_idx], gen)
            loss_a = F.cross_entropy(m.adversary(adversary_input(cfg, y_adv, train.si[adv_idx])), train.occupancy[adv_idx])
            m.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            m.opt_a.step()

        y = m.releaser(r_in[idx], gen)
        distortion = ne_energy(y, train.x[idx], norm)
        privacy = hourly_alpha_mi(m.adversary(adversary_input(cfg, y, train.si[idx])), train.hour[idx], prior, cfg.alpha)
        loss_r = distortion + cfg.lam * privacy
        m.opt_r.zero_grad(set_to_none=True)
        loss_r.backward()
        torch.nn.utils.clip_grad_norm_(m.releaser.parameters(), cfg.clip_norm)
        m.opt_r.step()

        steps += 1
        for key, value in (("loss_releaser", loss_r), ("loss_adversary", loss_a), ("ne_energy", distortion),
                           ("privacy_term", privacy)):
            sums[key] += value.item()
    return {f"train/{k}": v / steps for k, v in sums.items()}


def evaluate_release(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, test: EcoSplit, prior: torch.Tensor,
                     norm: tuple[float, float], gen: torch.Generator,
                     attack: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    """NE under both normalisers, the in-game adversary, the α-MI estimate and (``attack``) a fresh deep attacker on
    the released splits."""
    released_test = release(m.releaser, releaser_input(cfg, test), gen)
    adv_test = adversary_input(cfg, released_test, test.si)
    logits = predict_logits(m.adversary, adv_test)
    with torch.no_grad():
        leakage = hourly_alpha_mi(logits, test.hour, prior, cfg.alpha).item()
    in_game = accuracy_metrics(logits.argmax(1), test.occupancy, 2)
    metrics = {
        NE_ENERGY: ne_energy(released_test, test.x, norm).item(),
        "utility/ne_variance": ne_variance(released_test, test.x, norm).item(),
        "train/adversary_accuracy": in_game["accuracy"],
        NORMALISED_ALPHA_MI: leakage,
    }
    if attack:
        t0 = time.perf_counter()
        released_train = release(m.releaser, releaser_input(cfg, train), gen)
        metrics.update(deep_attack(cfg, adversary_input(cfg, released_train, train.si), train, adv_test, test))
        metrics["time/attack_s"] = time.perf_counter() - t0
    return metrics, released_test
