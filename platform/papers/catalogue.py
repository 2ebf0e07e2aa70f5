"""Every paper of the reproduction, its studies and its claims, gathered from the papers' modules in report order."""
from __future__ import annotations

from platform.papers import alpha_mi, cloak, membership, privatizer
from platform.papers.claim import Claim, Paper, Study

_MODULES = (alpha_mi, privatizer, cloak, membership)

PAPERS: tuple[Paper, ...] = tuple(m.PAPER for m in _MODULES)
STUDIES: tuple[Study, ...] = tuple(s for m in _MODULES for s in m.STUDIES)
CLAIMS: tuple[Claim, ...] = tuple(c for m in _MODULES for c in m.CLAIMS)
