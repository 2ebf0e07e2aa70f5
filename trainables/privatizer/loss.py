"""The privatizer's objective, shared by its AMNIST game (mechanism.py) and its Gaussian-mixture check
(trainables/gmm)."""
from __future__ import annotations

from torch import Tensor


def privatizer_loss(log_p_u_x: Tensor, log_p_u_q: Tensor, log_p_s_q: Tensor, log_prior_s: Tensor,
                    alpha: float) -> Tensor:
    """(1−α)·[mean log P_φ(u|x)/P_ψ(u|q)]² + α·[mean log P_η(s|q)/P(s)]²: the seed's privatizer objective."""
    utility = (log_p_u_x - log_p_u_q).mean()
    secret = (log_p_s_q - log_prior_s).mean()
    return (1 - alpha) * utility ** 2 + alpha * secret ** 2
