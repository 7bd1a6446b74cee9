"""The applications' sections of the report: Jacobi's method as the pSeries
study showed it (elapsed time, speedup, processor efficiency and communication
overhead against p and N, each phase's time, the replayed prediction beside
them) and Gaussian elimination as the LogGPS study did (measured against
LogGPS- and LogGP-predicted time per size and configuration, the predicted
breakdown per rank as stacked bars).

Reads the store's app_runs and app_predictions; computes nothing but ratios.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Callable

from matplotlib.figure import Figure

from commchar.report.figures import FigureSpec
from commchar.tables import Table
from commchar.report.adapters import app_runs

PARTS = ("computation", "communication", "wait")
PART_COLORS = {"computation": "#4c72b0", "communication": "#dd8452", "wait": "#c44e52"}


@dataclass
class AppData:
    runs: list[dict]
    # app_run id -> model ('loggps', 'loggp') -> the newest prediction
    predictions: dict[int, dict[str, dict]] = field(default_factory=dict)

    def of(self, app: str) -> list[dict]:
        return [r for r in self.runs if r["app"] == app]

    def predicted(self, run: dict, model: str = "loggps") -> dict | None:
        return self.predictions.get(run["id"], {}).get(model)


def load(db: str | Path, run_ids: list[int] | None) -> AppData:
    runs, stored = app_runs(db, run_ids)
    predictions: dict[int, dict[str, dict]] = defaultdict(dict)
    for pred in stored:
        predictions[pred["app_run_id"]][pred["model"]] = pred  # ordered by id: newest wins
    return AppData(runs, dict(predictions))


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f}%"


# -- Jacobi ----------------------------------------------------------------

@dataclass(frozen=True)
class JacobiRow:
    library: str
    exchange: str
    n: int
    p: int
    oversubscribed: bool
    phases: dict[str, float]
    elapsed: float
    speedup: float | None
    efficiency: float | None
    overhead: float
    predicted: float | None  # LogGPS-predicted time of the timed region
    measured: float | None  # the same region of the replayed trace, measured
    predicted_speedup: float | None
    predicted_overhead: float | None


def jacobi_rows(data: AppData) -> list[JacobiRow]:
    runs = data.of("jacobi")
    # p = 1 does no exchange: any exchange's single-process run is the baseline
    base: dict[tuple[str, int], dict] = {}
    for r in runs:
        if r["p"] == 1:
            base.setdefault((r["library"], r["n"]), r)
    rows = []
    for r in sorted(runs, key=lambda r: (r["library"], r["config"], r["n"], r["p"])):
        one = base.get((r["library"], r["n"]))
        t1 = one["elapsed_s"] if one else None
        speedup = t1 / r["elapsed_s"] if t1 else None
        pred = data.predicted(r)
        pred_one = data.predicted(one) if one else None
        predicted = pred["predicted_s"] if pred else None
        measured = pred["measured_s"] if pred else None
        pred_t1 = pred_one["predicted_s"] if pred_one else t1
        rows.append(JacobiRow(
            r["library"], r["config"], r["n"], r["p"], r["oversubscribed"], r["phases_s"],
            r["elapsed_s"], speedup, speedup / r["p"] if speedup else None,
            r["phases_s"].get("communication", 0.0) / r["elapsed_s"], predicted, measured,
            pred_t1 / predicted if predicted and pred_t1 else None,
            pred.get("predicted_overhead") if pred else None))
    return rows


def jacobi_table(rows: list[JacobiRow]) -> Table:
    body = []
    for r in rows:
        body.append([
            r.library, r.exchange, str(r.n), f"{r.p}{'*' if r.oversubscribed else ''}",
            *(_seconds(r.phases.get(k)) for k in ("distribution", "computation", "communication")),
            _seconds(r.elapsed),
            "–" if r.speedup is None else f"{r.speedup:.2f}",
            "–" if r.efficiency is None else f"{r.efficiency:.2f}",
            f"{100 * r.overhead:.0f}%",
            _seconds(r.predicted),
            _percent((r.predicted - r.measured) / r.measured if r.predicted and r.measured else None),
            "–" if r.predicted_speedup is None else f"{r.predicted_speedup:.2f}",
        ])
    return Table("apps-jacobi", "Jacobi's method: each phase's time (slowest rank), speedup, "
                 "processor efficiency, communication overhead, and the LogGPS replay's prediction",
                 ["library", "exchange", "N", "p", "distribution", "computation", "communication",
                  "elapsed", "speedup", "efficiency", "overhead", "predicted", "error",
                  "predicted speedup"], body,
                 notes=["Times are medians of the repetitions; speedup = T(1)/T(p), efficiency = "
                        "speedup/p, overhead = communication time / elapsed time. * = more ranks "
                        "than cores (oversubscribed): those times measure time-sharing, not the "
                        "network. Predicted: the traced run's trace replayed under LogGPS "
                        "(commchar app predict); its error is against the median of the untraced "
                        "runs' time of the phases; blank where none is stored."])


def jacobi_figure(rows: list[JacobiRow], library: str, exchange: str) -> FigureSpec | None:
    chosen = [r for r in rows if r.library == library and r.exchange == exchange]
    if len({r.p for r in chosen}) < 2:
        return None
    fig = Figure(figsize=(10, 8.4))
    axes = fig.subplots(3, 2)
    sizes = sorted({r.n for r in chosen})
    all_p = sorted({r.p for r in chosen})
    colors = {n: f"C{i % 10}" for i, n in enumerate(sizes)}
    panels = [("elapsed", "elapsed time (s)", lambda r: r.elapsed, lambda r: r.predicted),
              ("speedup", "speedup T(1)/T(p)", lambda r: r.speedup, lambda r: r.predicted_speedup),
              ("efficiency", "processor efficiency", lambda r: r.efficiency,
               lambda r: r.predicted_speedup / r.p if r.predicted_speedup else None),
              ("overhead", "communication overhead", lambda r: r.overhead,
               lambda r: r.predicted_overhead)]
    for ax, (name, label, measured, predicted) in zip(axes.flat[:4], panels):
        for n in sizes:
            line = sorted((r for r in chosen if r.n == n), key=lambda r: r.p)
            _plot(ax, [r.p for r in line], [measured(r) for r in line], [r.oversubscribed for r in line],
                  colors[n], f"N={n}")
            pred = [(r.p, predicted(r)) for r in line if predicted(r) is not None]
            if pred:
                ax.plot(*zip(*pred), "--", color=colors[n], linewidth=1)
        ax.set_xlabel("processes p")
        ax.set_ylabel(label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_p, [str(p) for p in all_p])
        if name == "elapsed":
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=2)
    ps = sorted({r.p for r in chosen if r.p > 1})
    for ax, (label, value) in zip(axes[2], (("speedup T(1)/T(p)", lambda r: r.speedup),
                                            ("communication overhead", lambda r: r.overhead))):
        for i, p in enumerate(ps):
            line = sorted((r for r in chosen if r.p == p), key=lambda r: r.n)
            _plot(ax, [r.n for r in line], [value(r) for r in line], [r.oversubscribed for r in line],
                  f"C{i % 10}", f"p={p}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_xlabel("unknowns N")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return FigureSpec(f"apps-jacobi-{library}-{exchange}",
                      f"Jacobi's method, {library}, {exchange} exchange",
                      "Measured (solid, filled markers; hollow = oversubscribed) and predicted by "
                      "replaying each run's trace under LogGPS (dashed), against p (top four) and "
                      "against N (bottom).", fig)


def _plot(ax, x: list, y: list, hollow: list[bool], color: str, label: str) -> None:
    pairs = [(a, b, h) for a, b, h in zip(x, y, hollow) if b is not None]
    if not pairs:
        return
    ax.plot([a for a, _, _ in pairs], [b for _, b, _ in pairs], "-", color=color, label=label)
    for a, b, h in pairs:
        ax.plot([a], [b], "o", color=color, markerfacecolor="none" if h else color, markersize=4)


# -- Gaussian elimination -----------------------------------------------------

def gauss_table(data: AppData, library: str) -> Table | None:
    runs = sorted((r for r in data.of("gauss") if r["library"] == library),
                  key=lambda r: (r["p"], r["n"], r["config"]))
    if not runs:
        return None
    body = []
    for r in runs:
        gps, gp = data.predicted(r, "loggps"), data.predicted(r, "loggp")
        measured = (gps or gp or {}).get("measured_s", r["elapsed_s"])
        load = [x["load_avg_1m"] for x in r["results"] if "load_avg_1m" in x]
        cells = [str(r["n"]), _config_label(r), f"{r['p']}{'*' if r['oversubscribed'] else ''}",
                 f"{sorted(load)[len(load) // 2]:.1f}" if load else "–", _seconds(measured)]
        for pred in (gps, gp):
            cells += [_seconds(pred["predicted_s"]) if pred else "–",
                      _percent((pred["predicted_s"] - measured) / measured) if pred else "–"]
        messages = (gps or gp or {}).get("messages") or {}
        crossing = messages.get("at_least_S")
        if crossing is not None:
            cells += [str(messages["largest_bytes"]), f"{crossing} of {messages['count']}",
                      _why(crossing, gps, gp)]
        else:
            cells += ["–", "–", ""]
        body.append(cells)
    return Table(f"apps-gauss-{library}", f"Gaussian elimination, {library}: measured and predicted time",
                 ["n", "configuration", "p", "load", "measured", "LogGPS", "error", "LogGP", "error",
                  "largest message (B)", "messages ≥ S", "why the models agree or part"], body,
                 notes=["Measured: the phases marked with MPI_Pcontrol (elimination and back "
                        "substitution) in the trace of the run of median elapsed time, slowest "
                        "rank; predicted: the same phases of its replay. "
                        "LogGPS: the model file's parameters with its S (longer messages wait for "
                        "their receiver); LogGP: the same with every message eager. Messages ≥ S "
                        "counts the trace's point-to-point messages longer than the model's S. "
                        "original: default threshold; raised: the threshold raised (UCX_RNDV_THRESH "
                        "or the vader eager limit); fragmented: rows sent in pieces below S."])


def _why(crossing: int, gps: dict | None, gp: dict | None) -> str:
    """Why LogGPS and LogGP agree or part, from the trace's messages against S."""
    if crossing == 0:
        return "no message reaches S: both models send everything eagerly"
    if gps is None or gp is None or not gp["predicted_s"]:
        return "messages reach S: LogGPS makes them wait for their receiver"
    more = (gps["predicted_s"] - gp["predicted_s"]) / gp["predicted_s"]
    if abs(more) < 0.0005:
        return "messages reach S, but no receiver is late: the rendezvous costs nothing here"
    return f"messages reach S: their rendezvous wait, which LogGP leaves out, adds {100 * more:.1f}%"


def _config_label(case: dict) -> str:
    """The configuration, with the fragment size of the fragmented code (sweeps may differ)."""
    fragment = case["results"][0].get("fragment_bytes") if case["results"] else None
    return f"{case['config']} ({fragment} B)" if case["config"] == "fragmented" and fragment \
        else case["config"]


def gauss_breakdown(data: AppData, library: str) -> FigureSpec | None:
    runs = [r for r in data.of("gauss") if r["library"] == library and data.predicted(r)]
    if not runs:
        return None
    sizes = sorted({r["n"] for r in runs})
    fig = Figure(figsize=(max(6.0, 3.2 * len(sizes)), 4.2))
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, n in zip(axes, sizes):  # one panel per size: each with its own time scale
        labels = []
        for x, r in enumerate(sorted((r for r in runs if r["n"] == n), key=_config_label)):
            ranks = (data.predicted(r) or {})["ranks"]
            width = 0.8 / len(ranks)
            for i, rank in enumerate(ranks):
                bottom = 0.0
                for part in PARTS:
                    value = rank.get(f"{part}_s", 0.0) * 1e3
                    ax.bar(x + i * width, value, width * 0.95, bottom=bottom,
                           color=PART_COLORS[part], label=part if ax is axes[0] and x == 0 and i == 0 else None)
                    bottom += value
            labels.append((x + 0.4 - width / 2, _config_label(r).replace(" (", "\n(")))
        ax.set_xticks([a for a, _ in labels], [b for _, b in labels], fontsize=7)
        ax.set_title(f"n = {n}", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("predicted time per rank (ms)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return FigureSpec(f"apps-gauss-breakdown-{library}",
                      f"Gaussian elimination, {library}: predicted time per rank under LogGPS",
                      "One panel per matrix size, one bar per rank (rank 0 first) for each "
                      "configuration: computation (the trace's gaps between MPI calls), "
                      "communication (overheads and transfer) and synchronization wait (blocked on "
                      "a late partner, rendezvous included).", fig)


# -- the sections ---------------------------------------------------------------

def sections(db: str | Path, run_ids: list[int] | None, fig: Callable[[FigureSpec], str],
             tab: Callable[[Table], str]) -> list[tuple[str, str, str, bool]]:
    """(anchor, title, html, raw) of each application section; none when nothing was run."""
    data = load(db, run_ids)
    out = []
    rows = jacobi_rows(data)
    if rows:
        body = ("<p>Jacobi's method (apps/jacobi.c) as in the pSeries study: distribution "
                "(MPI_Scatter, MPI_Bcast), computation, communication (exchange of the new values "
                "and MPI_Allreduce of the convergence test), each timed apart.</p>")
        for library in sorted({r.library for r in rows}):
            for exchange in sorted({r.exchange for r in rows if r.library == library}):
                spec = jacobi_figure(rows, library, exchange)
                if spec is not None:
                    body += fig(spec)
        body += tab(jacobi_table(rows))
        out.append(("apps-jacobi", "Application: Jacobi's method", body, False))
    libraries = sorted({r["library"] for r in data.of("gauss")})
    if libraries:
        body = ("<p>Gaussian elimination (apps/gauss.c) as in the LogGPS study: row-cyclic rows, "
                "each pivot row sent by its owner to every other rank by MPI_Send.</p>")
        for library in libraries:
            table = gauss_table(data, library)
            if table is not None:
                body += tab(table)
            spec = gauss_breakdown(data, library)
            if spec is not None:
                body += fig(spec)
        if not any(data.predicted(r) for r in data.of("gauss")):
            body += ("<p>" + escape("No prediction stored: run `commchar app predict --model "
                                    "m.json` to add LogGPS and LogGP predictions.") + "</p>")
        out.append(("apps-gauss", "Application: Gaussian elimination", body, False))
    return out

