"""The anchored releaser (docs/mechanisms.md#anchored-releaser): Y = clip(P(X) + b·tanh(R(X, P(X), Z)), 0, 1), where
P is the digit prototype (the mean image of the digit a raw-trained classifier reads) and R the releaser's conv
encoder-decoder reading the image beside its prototype. R's last layer starts at zero, so the game starts at the
prototype's release; the α-MI game (the releaser's, Algorithm 1) then buys detail back where the distortion pays for
it. Its privacy term is the mean over the current in-game adversary and ``replay`` earlier ones, each kept as it stood
when it was restarted, so the releaser cannot win by fooling the newest adversary alone.

At λ = 0 the residual gives detail back. Every pixel stays within b of the prototype's, so with b below the
prototype's stroke values a large λ can return the release to the prototype but not to a black image (at b = 1 it can).
"""
from __future__ import annotations

import torch
from torch import nn

from core.nets import ConvReleaser
from trainables.anchored.config import AnchoredConfig
from trainables.prototype.mechanism import DigitPrototype, fit_prototype, restored_prototype
from trainables.releaser.mechanism import Releaser
from trainables.shared.alpha_mi import normalised_alpha_mi

REPLAYED = "replayed_adversaries"  # the replayed adversaries' states in a checkpoint's state
ANCHOR_WIDTH = "anchor_width"  # the prototype's classifier's width (what rebuilds it from a checkpoint)


class AnchoredNet(nn.Module):
    """Y = clip(anchor(X) + bound·tanh(residual(X, anchor(X), Z)), 0, 1); the anchor is fixed (fitted in the warm
    start, or restored from a checkpoint) and stays in evaluation mode."""

    def __init__(self, residual: ConvReleaser, bound: float) -> None:
        super().__init__()
        self.residual, self.bound = residual, bound
        self.anchor: DigitPrototype | None = None

    def anchor_on(self, anchor: DigitPrototype) -> None:
        """Fix ``anchor`` (frozen, evaluation mode) as the release's starting point."""
        self.anchor = anchor.requires_grad_(False).eval()

    def train(self, mode: bool = True) -> AnchoredNet:
        super().train(mode)
        if self.anchor is not None:
            self.anchor.eval()
        return self

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if self.anchor is None:
            raise RuntimeError("the anchored releaser's prototype is fitted in pretrain() or restored from a checkpoint first")
        with torch.no_grad():
            anchor = self.anchor(x, generator)
        change = self.bound * torch.tanh(self.residual(torch.cat([x, anchor], 1), generator))
        return (anchor + change).clamp(0, 1)


class AnchoredReleaser(Releaser):
    """The releaser's game (players, optimisers, farm targets) with the anchored releasing network and replayed
    adversaries."""

    name = "anchored-releaser"
    config_class = AnchoredConfig
    trainable_name = "train_anchored_releaser"
    game_knobs = Releaser.game_knobs | {"residual_bound", "replay"}
    game_state = Releaser.game_state | {REPLAYED}
    cfg: AnchoredConfig

    @property
    def net(self) -> AnchoredNet:
        assert isinstance(self.releaser, AnchoredNet)  # built by releasing_net
        return self.releaser

    def build(self) -> None:
        """The releaser's players and optimisers around the anchored network; no adversary replayed yet."""
        self.replayed: list[nn.Module] = []
        super().build()

    def releasing_net(self) -> AnchoredNet:
        """The residual (the releaser's encoder-decoder reading the image and its prototype), its last layer at zero."""
        cfg = self.cfg
        residual = ConvReleaser(cfg.width, cfg.noise_channels, self.shape, cfg.latent, extra_inputs=self.shape[0],
                                squash=False)
        last = residual.decoder[-1]
        assert isinstance(last, nn.Conv2d) and last.bias is not None  # the decoder's output layer
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        return AnchoredNet(residual, cfg.residual_bound)

    def compute_pretrain(self) -> None:
        """The digit prototype of the attacker records (its classifier read from the store when a sweep fitted it; the
        global random state left as it was, whether read or fitted), then the players on raw images."""
        cfg, records = self.cfg, self.attack_train
        with torch.random.fork_rng(devices=[]):
            self.net.anchor_on(fit_prototype(cfg, records, self.u_classes).to(self.device))
        self.pretrain_players()

    def privacy_term(self, y: torch.Tensor) -> torch.Tensor:
        """The mean of Î_α(S;Y)/H_α(S) over the current adversary and the replayed ones."""
        readers = [self.adversary, *self.replayed]
        return torch.stack([normalised_alpha_mi(a(y).softmax(1), self.prior, self.cfg.alpha) for a in readers]).mean()

    def restart_adversary(self) -> None:
        """The adversary being replaced joins the replayed ones (the newest ``replay`` kept), unless it has only seen raw
        images (the first restart); then a fresh one trains on the current release."""
        if self.cfg.replay and self.epoch > 0:
            self.replayed = [*self.replayed, self.adversary.requires_grad_(False)][-self.cfg.replay:]
        super().restart_adversary()

    def state(self) -> dict:
        anchor = self.net.anchor
        assert anchor is not None  # fitted in pretraining, or restored
        return (super().state() | {ANCHOR_WIDTH: torch.tensor(anchor.width)}
                | {REPLAYED: [adversary.state_dict() for adversary in self.replayed]})

    def load_state(self, state: dict) -> None:
        state = dict(state)
        replayed, width = state.pop(REPLAYED, []), int(state.pop(ANCHOR_WIDTH))
        anchor = {k.removeprefix("anchor."): v for k, v in state["releaser"].items() if k.startswith("anchor.")}
        self.net.anchor_on(restored_prototype(anchor, width, self.shape, self.u_classes).to(self.device))
        super().load_state(state)
        with torch.random.fork_rng(devices=[]):
            self.replayed = [self.fresh_adversary() for _ in replayed]
        for adversary, stored in zip(self.replayed, replayed, strict=True):
            adversary.load_state_dict(stored)
            adversary.requires_grad_(False)

    def figure_title(self, epoch: int) -> str:
        return f"anchored, {super().figure_title(epoch)}"
