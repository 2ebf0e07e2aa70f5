"""The one rule for the strongest attacker (core.attack_scores), and every place that reports one uses it."""
from __future__ import annotations

import ast
from pathlib import Path

from core.attack_scores import AttackerScore, accuracies, strongest, winner

REPO = Path(__file__).resolve().parents[1]
LOGGED = {
    "attack/deep/accuracy": 0.81, "attack/deep/accuracy/ci_low": 0.78, "attack/deep/accuracy/ci_high": 0.84,
    "attack/deep/train_records": 4000.0, "attack/deep/top_decile_accuracy": 0.97, "attack/deep/confident_share": 0.4,
    "attack/thickness/accuracy": 0.81, "attack/deep_raw/accuracy": 0.55, "attack/yeom/advantage": 0.1,
}


def test_the_strongest_is_the_highest_accuracy_a_tie_to_the_first_named():
    assert winner({"thickness": 0.81, "deep": 0.81, "deep_raw": 0.9}) == "deep_raw"
    assert winner({"thickness": 0.81, "deep": 0.81}) == "thickness"
    best = strongest(LOGGED.get, ["deep", "thickness", "deep_raw"])
    assert best == AttackerScore("deep", 0.81, 0.78, 0.84, 4000, {"top_decile_accuracy": 0.97, "confident_share": 0.4})
    assert strongest(LOGGED.get, ["thickness", "deep"]) == AttackerScore("thickness", 0.81)  # nothing else logged
    assert strongest(LOGGED.get, ["yeom", "lira"]) is None  # no accuracy on the secret among them
    assert accuracies(LOGGED.get, ["lira", "deep_raw", "deep"]) == {"deep_raw": 0.55, "deep": 0.81}


def test_the_strongest_score_publishes_as_attack_max_where_logged():
    best = strongest(LOGGED.get, ["deep"])
    assert best is not None and best.as_strongest() == {
        "attack/max/accuracy": 0.81, "attack/max/accuracy/ci_low": 0.78, "attack/max/accuracy/ci_high": 0.84,
        "attack/max/train_records": 4000.0, "attack/max/top_decile_accuracy": 0.97, "attack/max/confident_share": 0.4}
    assert AttackerScore("thickness", 0.7).as_strongest() == {"attack/max/accuracy": 0.7}


def test_no_module_picks_a_strongest_attacker_by_its_own_rule():
    """``max(scores, key=...)`` over attackers' accuracies lives in core.attack_scores alone."""
    own = []
    for folder in ("platform", "attacks", "trainables", "serve", "core"):
        for path in (REPO / folder).rglob("*.py"):
            if path.name == "attack_scores.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "max" and node.args
                        and isinstance(node.args[0], ast.Name) and node.args[0].id == "scores"):
                    own.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not own, own
