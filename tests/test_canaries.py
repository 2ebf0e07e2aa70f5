"""Canaries (docs/membership.md#canaries): the planted records, the farm's metrics on them, and a smoke sweep."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import SharedSweep, store
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, Canaries, CheckpointInputs, MembershipTarget
from attacks.farm.membership_farm import run_membership
from core.config_errors import ConfigError
from core.data import Split
from trainables.releaser.config import ReleaserConfig
from trainables.releaser.mechanism import Releaser
from trainables.shared.canaries import plant

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # two threads on two busy cores made these tests 50 times slower



def smoke(canaries: int = 0) -> ReleaserConfig:
    """The smoke profile's data and a narrow releaser."""
    return ReleaserConfig(n_train=512, n_test=256, width=8, pretrain_epochs=0, canaries=canaries)


def rows_list(x: torch.Tensor) -> list[bytes]:
    """Each record's bytes, in order: identifies a record across splits."""
    return [r.numpy().tobytes() for r in x.reshape(len(x), -1)]


def rows(x: torch.Tensor) -> set[bytes]:
    """The records' bytes as a set."""
    return set(rows_list(x))


def outside_records(n: int = 300, classes: int = 10) -> Split:
    """Distinct synthetic records with their true labels (S = two classes, U = ``classes``): 64 noisy features, U's
    class mean 2 on its own axis (in 64 dimensions a small MLP memorises any labelling of a few hundred)."""
    gen = torch.Generator().manual_seed(1)
    u = torch.randint(classes, (n,), generator=gen)
    return Split(torch.randn(n, 64, generator=gen) + 2 * F.one_hot(u, 64), u % 2, u)


def test_plant_draws_n_members_and_n_nonmembers_mislabelled_and_deterministic() -> None:
    outside = outside_records()
    planted = plant(outside, 50, seed=3, classes=(2, 10))
    members, nonmembers, rest = rows(planted.members.x), rows(planted.nonmembers.x), rows(planted.rest.x)
    assert len(members) == len(nonmembers) == 50 and len(rest) == 200
    assert not members & nonmembers and not (members | nonmembers) & rest
    assert members | nonmembers | rest == rows(outside.x)
    true = {r: (int(s), int(u)) for r, s, u in zip(rows_list(outside.x), outside.s, outside.u, strict=True)}
    for part in (planted.members, planted.nonmembers):
        for r, s, u in zip(rows_list(part.x), part.s, part.u, strict=True):
            assert int(s) != true[r][0] and int(u) != true[r][1] and 0 <= int(u) < 10
    again, other = plant(outside, 50, seed=3, classes=(2, 10)), plant(outside, 50, seed=4, classes=(2, 10))
    assert torch.equal(again.members.x, planted.members.x) and torch.equal(again.nonmembers.u, planted.nonmembers.u)
    assert not torch.equal(other.members.x, planted.members.x)
    none = plant(outside, 0, seed=3, classes=(2, 10))
    assert none.rest is outside and len(none.members) == len(none.nonmembers) == 0
    with pytest.raises(ValueError, match="fewer than the 302 that 151 canaries need"):
        plant(outside, 151, seed=3, classes=(2, 10))


def test_canaries_is_a_bounded_key_of_the_image_games_that_needs_records_outside_n_train() -> None:
    assert ReleaserConfig().canaries == 0
    with pytest.raises(ConfigError, match=r"canaries: must be in \[0, 100000\]"):
        ReleaserConfig(canaries=-1)
    from trainables.cloak.config import CloakConfig

    with pytest.raises(ConfigError, match="canaries: unknown"):
        CloakConfig.from_dict({"canaries": 10})
    with pytest.raises(ValueError, match="amnist holds 0 training records outside n_train"):  # n_train unset: all of them
        Releaser.data_counts({"canaries": 10})


def test_releaser_trains_on_its_member_canaries_and_audits_them_apart(tmp_path: Path) -> None:
    plain = Releaser(smoke(), torch.device("cpu"))
    plain.setup()
    game = Releaser(smoke(50), torch.device("cpu"))
    game.setup()
    # the ordinary split is unchanged, the 50 member canaries follow it, and 100 records left the population
    assert len(game.train) == 562 and torch.equal(game.train.x[:512], plain.train.x)
    assert torch.equal(game.train.u[512:], game.planted.members.u)
    assert len(game.population) == len(plain.population) - 100
    canaries = rows(game.planted.members.x) | rows(game.planted.nonmembers.x)
    assert len(canaries) == 100
    assert not canaries & (rows(plain.train.x) | rows(plain.test.x) | rows(game.population.x))

    game.checkpoint_dir = str(tmp_path)
    for target, task in zip(game.farm_inputs().targets, ("u", "s"), strict=True):
        assert isinstance(target.canaries, Canaries)
        assert len(target.member_y) == 512 and torch.equal(target.member_y, getattr(plain.train, task))
        assert torch.equal(target.canaries.member_y, getattr(game.planted.members, task))
        assert torch.equal(target.canaries.nonmember_y, getattr(game.planted.nonmembers, task))
        assert len(target.canaries.member_x) == len(target.canaries.nonmember_x) == 50


def memorised(x: torch.Tensor, y: torch.Tensor, classes: int) -> nn.Module:
    """A small MLP trained full-batch until it fits every label, the wrong ones included."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(x.shape[1], 256), nn.ReLU(), nn.Linear(256, classes))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(400):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    assert (net(x).argmax(1) == y).float().mean() > 0.99
    return net.eval()


def audit(n_canaries: int) -> dict[str, float]:
    """Yeom through the farm against an overfitted network with ``n_canaries`` canaries planted (and as many held out)."""
    records = outside_records(n=1000 + 2 * n_canaries)
    planted = plant(records, n_canaries, seed=0, classes=(2, 10))
    train, test = planted.rest.subset(torch.arange(500)), planted.rest.subset(torch.arange(500, 1000))
    net = memorised(torch.cat([train.x, planted.members.x]), torch.cat([train.u, planted.members.u]), 10)
    canaries = Canaries(planted.members.x, planted.members.u, planted.nonmembers.x, planted.nonmembers.u)
    target = MembershipTarget("net", net, train.x, train.u, test.x, test.u, canaries=canaries if n_canaries else None)
    data = AttackInput(train.x, train.s, test.x, test.s, num_classes=2)
    return run_membership("yeom", CheckpointInputs(data, (target,)), figures=False).metrics


def test_yeom_finds_the_canaries_of_an_overfitted_network() -> None:
    """The control: mislabelled members are fitted to their wrong label, held-out ones are not, so at the lowest
    measurable FPR (1 % of 100 non-member canaries) Yeom flags far more than 1 % of the member canaries."""
    metrics = audit(100)
    assert metrics["attack/yeom/net/canary/tpr_at_1pct_fpr_measurable"] == 1.0
    assert metrics["attack/yeom/net/canary/tpr_at_1pct_fpr"] > 0.5, metrics
    assert metrics["attack/yeom/net/canary/auc"] > 0.9
    assert metrics["attack/yeom/net/canary/n_per_class"] == 100
    assert metrics["attack/yeom/canary/tpr_at_1pct_fpr"] == metrics["attack/yeom/net/canary/tpr_at_1pct_fpr"]
    # the ordinary records' metrics are those of the network without canaries' audit
    assert metrics["attack/yeom/net/n_per_class"] == 500


def test_too_few_canaries_are_not_measurable_at_1pct_and_none_log_nothing() -> None:
    few = audit(50)
    assert "attack/yeom/net/canary/tpr_at_1pct_fpr" not in few and "attack/yeom/canary/tpr_at_1pct_fpr" not in few
    assert few["attack/yeom/net/canary/tpr_at_1pct_fpr_measurable"] == 0.0
    assert few["attack/yeom/canary/tpr_at_1pct_fpr_measurable"] == 0.0
    assert few["attack/yeom/net/canary/tpr_at_0pct_fpr"] > 0.0  # always measured, the noisiest
    assert not any("canary" in key for key in audit(0))


@pytest.mark.slow  # end to end through Ray and MLflow: the session's farm sweep (50 canaries)
def test_smoke_sweep_logs_the_canary_metrics(farm_sweep: SharedSweep) -> None:
    client = store(farm_sweep.folder)
    exp = client.get_experiment_by_name("putlab-amnist")
    assert exp is not None
    trials = client.search_runs([exp.experiment_id], filter_string="tags.`putlab.role` = 'trial'")
    assert len(trials) == 1
    for trial in trials:
        metrics = trial.data.metrics
        for network in ("utility", "adversary"):
            assert 0 <= metrics[f"attack/yeom/{network}/canary/auc"] <= 1
            assert metrics[f"attack/yeom/{network}/canary/tpr_at_1pct_fpr_measurable"] == 0.0  # 50 < 100
        assert metrics["attack/yeom/canary/auc"] >= metrics["attack/yeom/utility/canary/auc"]
        assert "attack/yeom/utility/auc" in metrics and trial.data.params["canaries"] == "50"
