"""The most exposed training records of a network under a membership attacker (docs/membership.md).

A member's exposure is the false-positive rate at which the attacker first flags it: the share of the network's
non-members that score at least as high (0: above every non-member, flagged at 0 % FPR). The most exposed records
are the k members of lowest exposure, ties broken by the higher score, then by the lower index. Every non-member and
every member counts here, not the balanced draw the metrics use.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np
import torch

from attacks.base import MembershipScores
from core.image_grid import image_grid, is_image_batch, png_bytes

TOP_K = 16
GALLERY_COLUMNS = 8
CSV_COLUMNS = ("attacker", "network", "rank", "index", "score", "fpr", "label")
CSV_FILE = "exposed_records.csv"  # logged per checkpoint as attacks/epoch<NNN>_exposed_records.csv
GALLERY_PREFIX = "exposed_"  # galleries: attacks/epoch<NNN>_exposed_<attacker>_<network>.png


@dataclass(frozen=True)
class ExposedRecords:
    """One attacker's k most exposed members of one network, most exposed first.

    ``index``: each record's row in the network's training records (the target's ``member_x``); ``fpr``: its exposure;
    ``label``: its class in the network's task (``member_y``); ``n_nonmembers``: how many non-members ``fpr`` counts.
    """

    attacker: str
    network: str
    index: tuple[int, ...]
    score: tuple[float, ...]
    fpr: tuple[float, ...]
    label: tuple[int, ...]
    n_nonmembers: int

    @property
    def key(self) -> str:
        """``<attacker>/<network>``, as its metrics are named."""
        return f"{self.attacker}/{self.network}"


def exposure(scores: MembershipScores) -> np.ndarray:
    """Per member: the share of non-members whose score is at least the member's (ties count against the member)."""
    nonmembers = np.sort(np.asarray(scores.nonmembers, dtype=np.float64))
    at_least = len(nonmembers) - np.searchsorted(nonmembers, np.asarray(scores.members, dtype=np.float64), side="left")
    return at_least / len(nonmembers)


def most_exposed(attacker: str, network: str, scores: MembershipScores, labels: torch.Tensor,
                 k: int = TOP_K) -> ExposedRecords:
    """The ``k`` members of lowest exposure (then highest score, then lowest index)."""
    members = np.asarray(scores.members, dtype=np.float64)
    fpr = exposure(scores)
    top = np.lexsort((np.arange(len(members)), -members, fpr))[:k]
    picked = labels.detach().cpu().reshape(len(members), -1)[torch.as_tensor(top)]
    return ExposedRecords(attacker, network, tuple(int(i) for i in top), tuple(float(members[i]) for i in top),
                          tuple(float(fpr[i]) for i in top), tuple(int(v[0]) for v in picked), len(scores.nonmembers))


def exposed_csv(records: list[ExposedRecords]) -> str:
    """One CSV of every attacker and network's most exposed records; scores with all 17 significant digits."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in records:
        for rank, (i, s, f, y) in enumerate(zip(r.index, r.score, r.fpr, r.label, strict=True), start=1):
            writer.writerow((r.attacker, r.network, rank, i, f"{s:.17g}", f"{f:.17g}", y))
    return out.getvalue()


def _displayable(images: torch.Tensor) -> torch.Tensor:
    """Images as the grid draws them, in [0, 1]: unchanged when already there, else each rescaled by its own range."""
    images = images.detach().cpu().float()
    if images.numel() == 0 or (images.min() >= 0 and images.max() <= 1):
        return images
    low = images.amin(dim=(1, 2, 3), keepdim=True)
    high = images.amax(dim=(1, 2, 3), keepdim=True)
    return (images - low) / (high - low).clamp_min(1e-12)


def fpr_text(fpr: float) -> str:
    """An exposure as a caption: 'FPR 0' or e.g. 'FPR 0.25%'."""
    return "FPR 0" if fpr == 0 else f"FPR {100 * fpr:.2g}%"


def gallery_png(records: ExposedRecords, member_x: torch.Tensor) -> bytes | None:
    """The records' images in rows of eight, captioned with index, label and exposure; None for non-image data."""
    if not is_image_batch(member_x) or not records.index:
        return None
    images = _displayable(member_x[torch.as_tensor(records.index, device=member_x.device)])
    captions = [f"#{i} y={y}\n{fpr_text(f)}" for i, y, f in zip(records.index, records.label, records.fpr, strict=True)]
    rows = [images[s:s + GALLERY_COLUMNS] for s in range(0, len(images), GALLERY_COLUMNS)]
    title = (f"{records.key}: the {len(records.index)} most exposed training records "
             f"(FPR: share of {records.n_nonmembers} non-members scoring as high)")
    caption_rows = [captions[s:s + GALLERY_COLUMNS] for s in range(0, len(captions), GALLERY_COLUMNS)]
    return png_bytes(image_grid(rows, title, captions=caption_rows))
