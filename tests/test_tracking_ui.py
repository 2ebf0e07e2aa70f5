"""MLflow UI conveniences: experiments marked for the runs table, the parent's description, the runs-view address."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from stores import RawStore

from platform.results import tracking


def test_experiments_are_marked_for_the_runs_table_and_a_user_choice_is_kept(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    created = client.ensure_experiment("putlab-new")
    assert client.get_experiment(created).tags[tracking.TAG_EXPERIMENT_KIND] == "custom_model_development"
    old = client.create_experiment("putlab-old")  # made before putlab tagged experiments
    assert client.ensure_experiment("putlab-old") == old
    assert client.get_experiment(old).tags[tracking.TAG_EXPERIMENT_KIND] == "custom_model_development"
    client.set_experiment_tag(old, tracking.TAG_EXPERIMENT_KIND, "genai_development")  # changed in the UI
    client.ensure_experiment("putlab-old")
    assert client.get_experiment(old).tags[tracking.TAG_EXPERIMENT_KIND] == "genai_development"


def test_parent_run_description_says_where_the_front_is(tmp_path: Path) -> None:
    client = RawStore.open(f"sqlite:///{tmp_path / 'mlflow.db'}")
    parent, _ = client.start_parent(client.ensure_experiment("putlab-x"), "x-quick-1", {"preset": "x"})
    note = client.get_run(parent).data.tags[tracking.TAG_NOTE]
    assert "front/front.png" in note and "tags.`putlab.pareto_front` = 'true'" in note and "report/report.html" in note


def test_ui_url_opens_the_runs_table_filtered_to_the_front() -> None:
    url = urlsplit(tracking.ui_url("sqlite:////data/mlflow.db", "7"))
    assert (url.scheme, url.netloc) == ("http", "127.0.0.1:5000")
    path, _, query = url.fragment.partition("?")
    assert path == "/experiments/7/runs"
    assert parse_qs(query) == {"workflowType": ["machine_learning"], "searchFilter": ["tags.`putlab.pareto_front` = 'true'"]}
    assert tracking.ui_url("https://mlflow.example:5000/", "7", front_only=False).startswith(
        "https://mlflow.example:5000/#/experiments/7/runs?workflowType=machine_learning")
