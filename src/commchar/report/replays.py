"""The report's section on traced programs: every stored prediction of a trace
(`commchar replay --db X --trace ID`) as a table like the LogGPS study's
(measured, LogGPS predicted and its error, LogGP predicted and its error, per
rank) and a stacked bar per rank of the LogGPS predicted breakdown.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from matplotlib.figure import Figure

from commchar.report.adapters import trace_predictions
from commchar.report.figures import COLORS, FigureSpec, plain
from commchar.simulate.replay import charge_notes
from commchar.tables import Table

PARTS = (("compute", "computation"), ("communication", "communication"), ("sync_wait", "synchronization wait"))


def load(db: str) -> list[dict[str, Any]]:
    """Every stored trace prediction, oldest first (none when the database has no traces)."""
    return trace_predictions(db)


def _err(pct: float | None) -> str:
    return "" if pct is None else f"{pct:+.1f}%"


def _title(row: dict[str, Any]) -> str:
    doc = row["result"]
    program = " ".join(doc["trace"].get("program") or [])
    return (f"trace {row['trace_id']}{' (' + program + ')' if program else ''}, p={doc['trace']['p']}: "
            f"model {doc['model']['library']}, collectives {doc['collectives']}, "
            f"compute x{doc['compute_scale']:g}, {doc['topology']}")


def prediction_table(row: dict[str, Any]) -> Table:
    doc = row["result"]
    gps, gp = doc["predictions"]["loggps"], doc["predictions"]["loggp"]
    rows = [[str(a["rank"]), f"{a['measured']:.1f}", f"{a['predicted']:.1f}", _err(a["error_pct"]),
             f"{b['predicted']:.1f}", _err(b["error_pct"])] for a, b in zip(gps["ranks"], gp["ranks"])]
    rows.append(["all (makespan)", f"{doc['measured']['makespan']:.1f}", f"{gps['makespan']:.1f}",
                 _err(gps["error_pct"]), f"{gp['makespan']:.1f}", _err(gp["error_pct"])])
    s = doc["model"].get("S")
    notes = [f"LogGPS: the fitted rendezvous threshold S = {int(s)} B; LogGP: every message eager. Times in us; "
             "measured is each rank's MPI_Init-to-MPI_Finalize time from the trace." if s is not None else
             "The model has no S: LogGPS and LogGP coincide. Times in us."]
    notes += charge_notes(doc)
    notes += doc.get("warnings", [])
    return Table(f"replay-{row['id']}", f"Measured and predicted: {_title(row)}",
                 ["rank", "measured", "LogGPS", "error", "LogGP", "error"], rows, notes)


def breakdown_figure(row: dict[str, Any]) -> FigureSpec:
    """Stacked bars per rank: the LogGPS predicted computation, communication and
    synchronization wait, with the measured time marked."""
    doc = row["result"]
    ranks = doc["predictions"]["loggps"]["ranks"]
    fig = Figure(figsize=(min(11.0, 5.0 + 0.4 * len(ranks)), 3.6))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(ranks))
    bottom = np.zeros(len(ranks))
    for (key, label), color in zip(PARTS, COLORS):
        values = np.array([r[key] for r in ranks])
        ax.bar(x, values, bottom=bottom, color=color, label=label, width=0.6)
        bottom += values
    ax.scatter(x, [r["measured"] for r in ranks], marker="_", s=600, color="black", zorder=3, label="measured")
    ax.set_xticks(x, [str(r["rank"]) for r in ranks])
    ax.set_xlabel("rank")
    ax.set_ylabel("time (us)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    ax.set_title(plain(f"trace {row['trace_id']}: LogGPS predicted breakdown"), fontsize=10)
    fig.subplots_adjust(left=0.16, right=0.68, bottom=0.16, top=0.88)
    return FigureSpec(f"replay-{row['id']}-breakdown", f"Predicted breakdown, {_title(row)}",
                      "Each rank's predicted time split into computation, communication (overheads and "
                      "data in flight) and synchronization wait (a late partner), under LogGPS; the black "
                      "mark is the measured time (docs/simulator.md, Breakdown).", fig)


def section_html(db: str, fig: Callable[[FigureSpec], str], tab: Callable[[Table], str]) -> str | None:
    """The section's body, or None when no trace has a prediction."""
    rows = load(db)
    if not rows:
        return None
    return "".join(tab(prediction_table(r)) + fig(breakdown_figure(r)) for r in rows)
