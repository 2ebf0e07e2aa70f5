"""Information-plane figures of the privatizer's bound experiment, drawn from the MLflow store
(docs/mechanisms.md#the-gaussian-mixture-check-gmm).

Each trial's trajectory (I(U;X|Q), I(S;Q)) over its reported steps, its final point, and the bound line
I(S;Q) + I(U;X|Q) = K: one panel per codependence k. Logged on the sweep's parent run (all trials) and on
each trial's own run (its trajectory alone). Plotting only: the numbers are the trials' logged metrics.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from mlflow.tracking import MlflowClient

X_METRIC, Y_METRIC, BOUND_METRIC = "leakage/i_uxq", "leakage/i_sq", "leakage/bound_k"
FIGURE = "information_plane.png"


def trajectory(client: MlflowClient, run_id: str) -> pd.DataFrame:
    """(step, I(U;X|Q), I(S;Q)) of one run, in step order, from its metric histories."""
    series = [pd.Series({m.step: m.value for m in client.get_metric_history(run_id, name)}, name=name)
              for name in (X_METRIC, Y_METRIC)]
    return pd.concat(series, axis=1).dropna().sort_index()


def plot_information_plane(table: pd.DataFrame, paths: dict[str, pd.DataFrame], path: str | Path) -> Path | None:
    """PNG with one panel per k: trajectories (``paths`` by run id), final points coloured by α, and x + y = K.

    None when the table has no finished trial with the information metrics.
    """
    needed = ["k", "alpha", X_METRIC, Y_METRIC, BOUND_METRIC]
    usable = table[table.get("status", "FINISHED") == "FINISHED"]
    if usable.empty or any(c not in usable for c in needed):
        return None
    usable = usable.dropna(subset=needed)
    ks = sorted(usable["k"].unique(), reverse=True)
    fig = Figure(figsize=(4.2 * len(ks), 4.0))
    FigureCanvasAgg(fig)
    cmap = colormaps["viridis"]
    for ax, k in zip(fig.subplots(1, len(ks), squeeze=False)[0], ks, strict=True):
        rows = usable[usable["k"] == k]
        bound = float(rows[BOUND_METRIC].mean())
        for _, row in rows.iterrows():
            colour = cmap(float(row["alpha"]))
            steps = paths.get(row["run_id"])
            if steps is not None and len(steps) > 1:
                ax.plot(steps[X_METRIC], steps[Y_METRIC], color=colour, alpha=0.5, linewidth=1)
            ax.scatter(row[X_METRIC], row[Y_METRIC], color=colour, edgecolor="black", zorder=3,
                       label=f"α={row['alpha']:g}" + (f" alg {int(row['algorithm'])}" if "algorithm" in row else ""))
        top = max(bound, float(rows[[X_METRIC, Y_METRIC]].to_numpy().max()), 0.05) * 1.1
        ax.plot([0, bound], [bound, 0], "r--", label=f"bound K={bound:.3f}")
        ax.set_xlim(-0.02 * top, top)
        ax.set_ylim(-0.02 * top, top)
        ax.set_xlabel("I(U;X|Q) [nats]  (utility lost)")
        ax.set_ylabel("I(S;Q) [nats]  (secret leaked)")
        ax.set_title(f"k = {k:g}")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)


def log_information_plane(client: MlflowClient, parent_id: str, table: pd.DataFrame) -> None:
    """The all-trials figure on the parent run and each finished trial's own trajectory on its run."""
    if any(c not in table for c in ("run_id", X_METRIC, Y_METRIC)):
        return
    paths = {run_id: trajectory(client, run_id) for run_id in table["run_id"]}
    with tempfile.TemporaryDirectory() as tmp:
        if plot_information_plane(table, paths, Path(tmp) / FIGURE):
            client.log_artifact(parent_id, str(Path(tmp) / FIGURE), artifact_path="front")
        for index, run_id in table["run_id"].items():
            own = Path(tmp) / run_id
            own.mkdir()
            if plot_information_plane(table.loc[[index]], paths, own / FIGURE):
                client.log_artifact(run_id, str(own / FIGURE))
