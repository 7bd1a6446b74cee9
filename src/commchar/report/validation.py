"""The report's section on `commchar validate`: for each stored validation, the
table of measured and predicted time per iteration of every program (median
over its repeats, with the spread of each error) and a figure of the LogGPS and
LogGP errors per program and size.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from matplotlib.figure import Figure

from commchar.report.adapters import validations
from commchar.report.figures import COLORS, FigureSpec, plain
from commchar.tables import Table

TARGET_PCT = 10.0


def load(db: str) -> list[dict[str, Any]]:
    """Every stored validation, oldest first (none when the database has none)."""
    return validations(db)


def _err(pct: float | None) -> str:
    return "" if pct is None else f"{pct:+.1f}%"


def _spread(pair: list[float] | None) -> str:
    return "" if not pair else f"{pair[0]:+.1f} to {pair[1]:+.1f}%"


def _title(row: dict[str, Any]) -> str:
    opts = row["result"]["options"]
    return (f"validation {row['id']} ({row['created_at']}): {row['libraries']}, p = {opts['np']}, "
            f"{opts['iterations']} iterations, {opts['repeat']} run(s)")


def validation_table(row: dict[str, Any]) -> Table:
    doc = row["result"]
    rows = [[e["library"], e["program"], str(e["bytes"]), f"{e['measured_us']:.3f}",
             "" if e.get("probe_us") is None else f"{e['probe_us']:.3f}", _err(e.get("probe_drift_pct")),
             f"{e['loggps_us']:.3f}",
             _err(e["loggps_error_pct"]), _spread(e["loggps_error_range"]), f"{e['loggp_us']:.3f}",
             _err(e["loggp_error_pct"]), _spread(e["loggp_error_range"]),
             f"{e.get('repeats_in_state', e['repeats'])}/{e['repeats']}"] for e in doc["summary"]]
    within = sum(1 for e in doc["summary"]
                 if e["loggps_error_pct"] is not None and abs(e["loggps_error_pct"]) <= TARGET_PCT)
    s = {run["library"]: run["loggp"].get("S") for run in doc["runs"] if run["repeat"] == 1}
    notes = [
        "Time per iteration (us) of each program's timed loop: measured in an untraced run (the slowest "
        "rank's loop over the iterations), predicted by replaying the trace "
        "of a second, traced run with a model measured and "
        "fitted in the same run; with several runs, the median and the spread (smallest to largest error).",
        "probe: the mean of the kernel's probe of the same operation (ping-pong: a round trip, "
        "allreduce, alltoall) in the model's run: what the model was fitted to, beside the loop; "
        "drift: how far it moved when measured again after the programs, the host's own move while "
        "they ran (an error within it cannot be told from that move).",
        "cores: the runs whose loop ran with ranks 0 and 1's cores in the state of the host most of its "
        "model's points were measured in (a cache line's round trip between them; docs/method.md); the "
        "medians are of those runs when there are any.",
        f"{within} of {len(doc['summary'])} rows within {TARGET_PCT:g}% under LogGPS. LogGPS: the fitted "
        "rendezvous threshold S (" + ", ".join(f"{lib} {int(v)} B" if v is not None else f"{lib} none"
                                               for lib, v in s.items()) + "); LogGP: every message eager.",
    ]
    return Table(f"validation-{row['id']}", f"Measured and predicted per iteration: {_title(row)}",
                 ["library", "program", "bytes", "measured", "probe", "drift", "LogGPS", "error", "spread", "LogGP",
                  "error", "spread", "cores"], rows, notes)


def errors_figure(row: dict[str, Any]) -> FigureSpec:
    """The LogGPS and LogGP errors of every (library, program, size), with the target band."""
    summary = row["result"]["summary"]
    labels = [f"{e['library']} {e['program']} {e['bytes']}" for e in summary]
    fig = Figure(figsize=(min(12.0, 4.0 + 0.3 * len(labels)), 4.2))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(labels))
    for offset, (key, label), color in zip((-0.2, 0.2), (("loggps", "LogGPS"), ("loggp", "LogGP")), COLORS):
        values = [e[f"{key}_error_pct"] or 0.0 for e in summary]
        ax.bar(x + offset, values, width=0.4, color=color, label=label)
    ax.axhspan(-TARGET_PCT, TARGET_PCT, color="0.9", zorder=0, label=f"within {TARGET_PCT:g}%")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(x, [plain(s) for s in labels], rotation=90, fontsize=7)
    ax.set_ylabel("prediction error (%)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.08, right=0.85, bottom=0.42, top=0.95)
    return FigureSpec(f"validation-{row['id']}-errors", f"Prediction errors, {_title(row)}",
                      "Error of the LogGPS and LogGP predictions of each program's time per iteration "
                      "(median over the runs); the grey band is the 10% target.", fig)


def section_html(db: str, fig: Callable[[FigureSpec], str], tab: Callable[[Table], str]) -> str | None:
    """The section's body, or None when no validation is stored."""
    rows = load(db)
    if not rows:
        return None
    return "".join(tab(validation_table(r)) + fig(errors_figure(r)) for r in rows)
