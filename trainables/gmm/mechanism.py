"""The privatizer's synthetic information-bound check (docs/mechanisms.md#the-gaussian-mixture-check-gmm) as a Mechanism.

U, S ~ Bernoulli(0.5) with codependence k, X | U, S ~ N([U, S], σ² I) and the linear stochastic filter
Q = θX + z, z ~ N(0, I) (no bias: a translation of Q changes no information quantity). ``algorithm`` picks the
seed's variant:
  1: the filter and the estimators P_η(s|q), P_ψ(u|q), P_φ(u|x) are trained alternately (all learned);
  2: the provider's utility classifier P_φ(u|x) is pre-trained on raw (x, u), frozen, and also used on released
     data, P(u|q) := P_φ(u|q) (no ψ); the filter and P_η(s|q) are trained alternately;
  3: P_φ(u|x) and the secret classifier P_η(s|x) are both pre-trained on raw data, frozen, and used on q as well
     (P(u|q) := P_φ(u|q), P(s|q) := P_η(s|q)); only θ is trained.
Frozen estimators have requires_grad False and sit in no optimizer (the filter's gradient flows through them to q).

The reported information quantities use the exact mixture densities, not the learned estimators:
Q | U=u, S=s ~ N(θ[u, s], I + σ²θθᵀ), so with Monte-Carlo samples (u, s, x, q)
  I(S;Q)   = E[log p(q|s) − log p(q)],
  I(U;X|Q) = H(U|Q) − H(U|X, Q) = H(U|Q) − H(U|X)   (U → X → Q is a Markov chain: z is independent),
  H(U|Q)   = −E[log p(u|q)],  H(U|X) = −E[log p(u|x)],  both with exact posteriors,
  K        = I(U;S) − I(U;S|X),  I(U;S|X) = E_x[KL(p(u, s|x) ‖ p(u|x) p(s|x))]  (≈ 0: σ = 0.05 ≪ 1).
Worker-side code: never imports ``platform.*``.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from core.metric_names import ESTIMATOR_ATTACK, UTILITY_ACCURACY
from core.metrics import balanced_accuracy
from trainables.gmm.config import PrivatizerGmmConfig, joint_us
from trainables.privatizer.loss import privatizer_loss
from trainables.shared.mechanism import Mechanism
from trainables.shared.tune_loop import epochs

PAIRS = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])  # component index c = 2u + s -> (u, s)


def mutual_information_us(k: float) -> float:
    """Analytic I(U;S) in nats of the codependent Bernoulli(0.5) pair: the information the bound K starts from."""
    joint = joint_us(k)
    pu = [sum(row) for row in joint]
    ps = [joint[0][s] + joint[1][s] for s in range(2)]
    return sum(p * math.log(p / (pu[u] * ps[s])) for u, row in enumerate(joint) for s, p in enumerate(row) if p > 0)


def sample_gmm(k: float, sigma: float, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
    """n draws of (X, U, S): (U, S) from the joint, X ~ N([U, S], σ² I) (float64 X, int64 labels)."""
    probs = torch.tensor(joint_us(k), dtype=torch.float64).flatten()
    c = torch.multinomial(probs, n, replacement=True, generator=generator)
    us = PAIRS[c]
    x = us.double() + sigma * torch.randn(n, 2, generator=generator, dtype=torch.float64)
    return x, us[:, 0], us[:, 1]


def _log_gauss(points: Tensor, means: Tensor, cov: Tensor) -> Tensor:
    """log N(points[i]; means[c], cov) for every point i and component c: shape (n, components)."""
    chol = torch.linalg.cholesky(cov)
    diff = (points[:, None, :] - means[None, :, :]).reshape(-1, 2)
    white = torch.linalg.solve_triangular(chol, diff.T, upper=False).T.reshape(len(points), len(means), 2)
    return -0.5 * (white ** 2).sum(-1) - torch.log(torch.diagonal(chol)).sum() - math.log(2 * math.pi)


def _log_joint_posterior(log_comp: Tensor, log_prior: Tensor) -> Tensor:
    """log p(u, s | observation) as (n, 2, 2) from component log-likelihoods (n, 4) and log P(u, s) (4,)."""
    logits = log_comp + log_prior
    return (logits - torch.logsumexp(logits, dim=1, keepdim=True)).reshape(-1, 2, 2)


def information_terms(theta: Tensor, k: float, sigma: float, n: int, generator: torch.Generator) -> dict[str, float]:
    """Monte-Carlo I(S;Q), I(U;X|Q), H(U|Q), H(U|X), I(U;S|X) with exact mixture densities for the filter θ."""
    theta = theta.detach().double()
    x, u, s = sample_gmm(k, sigma, n, generator)
    q = x @ theta.T + torch.randn(n, 2, generator=generator, dtype=torch.float64)
    log_prior = torch.tensor(joint_us(k), dtype=torch.float64).flatten().log()  # -inf cells drop out below
    rows = torch.arange(n)
    post_q = _log_joint_posterior(_log_gauss(q, PAIRS.double() @ theta.T, torch.eye(2, dtype=torch.float64)
                                             + sigma ** 2 * theta @ theta.T), log_prior)
    post_x = _log_joint_posterior(_log_gauss(x, PAIRS.double(), sigma ** 2 * torch.eye(2, dtype=torch.float64)),
                                  log_prior)
    log_u_q, log_s_q = torch.logsumexp(post_q, dim=2), torch.logsumexp(post_q, dim=1)
    log_u_x, log_s_x = torch.logsumexp(post_x, dim=2), torch.logsumexp(post_x, dim=1)
    # I(S;Q) = E[log p(q|s)/p(q)] = E[log p(s|q)/P(s)]; the marginal P(s) is exactly 1/2 for every valid k.
    i_sq = float((log_s_q[rows, s] - math.log(0.5)).mean())
    h_u_q = float(-log_u_q[rows, u].mean())
    h_u_x = float(-log_u_x[rows, u].mean())
    pointwise = post_x - log_u_x[:, :, None] - log_s_x[:, None, :]
    i_us_x = float(torch.where(post_x.isfinite(), post_x.exp() * pointwise, 0.0).sum((1, 2)).mean())
    return {"i_sq": i_sq, "i_uxq": h_u_q - h_u_x, "h_u_q": h_u_q, "h_u_x": h_u_x, "i_us_x": i_us_x}


def _estimator(hidden: int) -> nn.Module:
    """A one-hidden-layer classifier R² -> 2 logits."""
    return nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 2)).double()


def _picked(logits: Tensor, labels: Tensor) -> Tensor:
    """log-softmax probability of each sample's label."""
    return logits.log_softmax(-1).gather(1, labels[:, None]).squeeze(1)


def _pretrain(modules: dict[str, nn.Module], x: Tensor, labels: dict[str, Tensor], cfg: PrivatizerGmmConfig) -> None:
    """Fit each module to its labels on raw x (cross-entropy, Adam, steps × estimator_steps updates); freeze them."""
    opt = torch.optim.Adam([p for m in modules.values() for p in m.parameters()], lr=cfg.estimator_lr)
    for _ in range(cfg.steps * cfg.estimator_steps):
        ce = -sum(_picked(m(x), labels[name]).mean() for name, m in modules.items())
        assert isinstance(ce, Tensor)  # modules is never empty
        opt.zero_grad()
        ce.backward()
        opt.step()
    for m in modules.values():
        m.requires_grad_(False)


class GmmPrivatizer(Mechanism[PrivatizerGmmConfig]):
    """The linear filter θ and the estimators {"eta", "psi", "phi"}, trained with the privatizer loss by ``algorithm``.

    Algorithm 1 alternates estimator cross-entropy steps and privatizer-loss steps. Algorithms 2 and 3 first
    pre-train and freeze φ (and, for 3, η) on raw data; then "psi" is φ itself (the utility estimator on q) and
    "eta" is trained on q (Algorithm 2) or is the frozen raw-data secret classifier applied to q (Algorithm 3).
    Not an epoch game: an "epoch" is a block of ``report_every`` filter steps (all ``steps`` when 0), each reported
    once, so the blocks trace the information-plane trajectory; a point takes seconds and is never checkpointed.
    """

    name = "gmm"
    config_class = PrivatizerGmmConfig
    trainable_name = "train_gmm_privatizer"
    checkpoints = False

    @property
    def epochs(self) -> int:
        every = self.cfg.report_every
        return -(-self.cfg.steps // every) if every else 1

    def build(self) -> None:
        """The samples (X, U, S), θ = I, fresh estimators and the optimisers of what this algorithm learns."""
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.x, self.u, self.s = sample_gmm(cfg.k, cfg.sigma, cfg.n_samples, self.gen)
        self.theta = nn.Parameter(torch.eye(2, dtype=torch.float64))
        self.est = {"eta": _estimator(cfg.hidden), "psi": _estimator(cfg.hidden), "phi": _estimator(cfg.hidden)}
        self.step = 0
        self.log_p_u_x_frozen: Tensor | None = None

    def pretrain(self) -> None:
        """Algorithms 2 and 3: fit and freeze φ (and η for 3) on raw data; ψ becomes φ."""
        cfg, est = self.cfg, self.est
        if cfg.algorithm != 1:
            frozen = {"phi": est["phi"], **({"eta": est["eta"]} if cfg.algorithm == 3 else {})}
            _pretrain(frozen, self.x, {"phi": self.u, "eta": self.s}, cfg)
            est["psi"] = est["phi"]  # P(u|q) := P_φ(u|q): the provider keeps its raw-data model
            self.log_p_u_x_frozen = _picked(est["phi"](self.x), self.u).detach()
        learned = {1: ["eta", "psi", "phi"], 2: ["eta"], 3: []}[cfg.algorithm]
        trainable = [p for n in learned for p in est[n].parameters()]
        self.est_opt = torch.optim.Adam(trainable, lr=cfg.estimator_lr) if trainable else None
        self.filt_opt = torch.optim.Adam([self.theta], lr=cfg.lr)

    def train_epoch(self) -> dict[str, float]:
        """The filter steps up to the next report (or the last step)."""
        cfg, est, x, u, s, gen, theta = self.cfg, self.est, self.x, self.u, self.s, self.gen, self.theta
        log_prior_s = torch.full((cfg.n_samples,), math.log(0.5), dtype=torch.float64)
        last = min(self.step + cfg.report_every, cfg.steps) if cfg.report_every else cfg.steps
        for step in range(self.step + 1, last + 1):
            self.step = step
            for _ in range(cfg.estimator_steps if self.est_opt is not None else 0):
                q = (x @ theta.T + torch.randn(cfg.n_samples, 2, generator=gen, dtype=torch.float64)).detach()
                if cfg.algorithm == 1:
                    ce = -(_picked(est["eta"](q), s) + _picked(est["psi"](q), u) + _picked(est["phi"](x), u)).mean()
                else:
                    ce = -_picked(est["eta"](q), s).mean()
                assert self.est_opt is not None  # the loop runs only with estimators to learn
                self.est_opt.zero_grad()
                ce.backward()
                self.est_opt.step()
            q = x @ theta.T + torch.randn(cfg.n_samples, 2, generator=gen, dtype=torch.float64)
            log_p_u_x = _picked(est["phi"](x), u).detach() if self.log_p_u_x_frozen is None else self.log_p_u_x_frozen
            loss = privatizer_loss(log_p_u_x, _picked(est["psi"](q), u), _picked(est["eta"](q), s), log_prior_s, cfg.alpha)
            self.filt_opt.zero_grad()
            loss.backward()
            self.filt_opt.step()
        return {}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """The exact-density metrics of the filter after this block (see :func:`evaluate`)."""
        return evaluate(self.cfg, self.theta, self.est, self.step)

    def state(self) -> dict:
        return {"theta": self.theta.detach()}

    def load_state(self, state: dict) -> None:
        self.theta.data.copy_(state["theta"])

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Training, Monte-Carlo and evaluation sample counts of this config (validates it before scheduling), and
        ``synthetic`` 0: the data is the paper's own mixture (its § 7.2), not a stand-in of other data."""
        cfg = cls.typed(config)
        return {"samples": cfg.n_samples, "mc_samples": cfg.mc_samples, "eval_samples": cfg.eval_samples,
                "synthetic": 0}


def train_filter(cfg: PrivatizerGmmConfig) -> tuple[Tensor, dict[str, nn.Module]]:
    """Train θ by ``cfg.algorithm`` without reporting; returns θ and the estimators {"eta", "psi", "phi"}."""
    mechanism = GmmPrivatizer(cfg, torch.device("cpu"))
    mechanism.setup()
    mechanism.pretrain()
    while mechanism.step < cfg.steps:
        mechanism.train_epoch()
    return mechanism.theta.detach(), mechanism.est


@torch.no_grad()
def evaluate(cfg: PrivatizerGmmConfig, theta: Tensor, est: dict[str, nn.Module], step: int) -> dict[str, float]:
    """Exact-density leakage, the bound K and the estimators' balanced accuracies on fresh samples (metric -> value)."""
    gen = torch.Generator().manual_seed(cfg.seed + 1_000_003 * step + 7)
    info = information_terms(theta, cfg.k, cfg.sigma, cfg.mc_samples, gen)
    x, u, s = sample_gmm(cfg.k, cfg.sigma, cfg.eval_samples, gen)
    q = x @ theta.T + torch.randn(cfg.eval_samples, 2, generator=gen, dtype=torch.float64)
    i_us = mutual_information_us(cfg.k)
    bound = i_us - info["i_us_x"]
    total = info["i_sq"] + info["i_uxq"]
    return {
        "leakage/i_sq": info["i_sq"], "leakage/i_uxq": info["i_uxq"], "leakage/sum": total,
        "leakage/bound_k": bound, "leakage/i_us": i_us, "leakage/i_us_given_x": info["i_us_x"],
        "leakage/gap": total - bound, "leakage/h_u_q": info["h_u_q"], "leakage/h_u_x": info["h_u_x"],
        UTILITY_ACCURACY: balanced_accuracy(est["psi"](q).argmax(-1), u, 2),
        ESTIMATOR_ATTACK: balanced_accuracy(est["eta"](q).argmax(-1), s, 2),
        "train/theta_norm": float(theta.norm()),
        "train/algorithm": float(cfg.algorithm),
        "train/step": float(step),
    }


def run_point(cfg: PrivatizerGmmConfig) -> dict[str, float]:
    """Train one filter as a trial does and return its final report's metrics."""
    return list(epochs(GmmPrivatizer(cfg, torch.device("cpu"))))[-1].metrics
