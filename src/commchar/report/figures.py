"""The report's figures, drawn with matplotlib's object API (no pyplot, no GUI).

Every figure is a FigureSpec: a stable slug (file name), a title and a
matplotlib Figure. Text that comes from the data (library names) goes through
`plain`, so a '$' cannot start mathtext; TeX is never used.
"""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

from commchar.report.adapters import SLOPE, aggregate_factor, describe, is_pinned
from commchar.report import modelinfo
from commchar.report.dataset import Entity, Series
from commchar.vocabulary import COLLECTIVES, SEND_MODES, format_size, is_collective
from commchar.report.units import Rates

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")


def style(i: int) -> tuple[str, str]:
    """The color and marker of the i-th curve of a figure: distinct pairs for the first 100
    (a comparison has a curve per run, and a store may hold any number of runs)."""
    return COLORS[i % len(COLORS)], MARKERS[(i + i // len(COLORS)) % len(MARKERS)]


def plain(text: object) -> str:
    """Data text for matplotlib: '$' escaped so no mathtext is ever parsed from it."""
    return str(text).replace("$", r"\$")


@dataclass
class FigureSpec:
    slug: str
    title: str
    caption: str
    figure: Figure


def _size_axis(ax, n_max: float, *, zero: bool = True) -> None:
    """Log size axis; with zero, a short linear stretch below 1 byte shows n = 0 too."""
    if zero:
        ax.set_xscale("symlog", linthresh=1.0, linscale=0.3)
        ax.set_xlim(left=0, right=max(n_max, 2) * 1.6)
        top = max(n_max, 2) * 1.6
        ax.xaxis.set_major_locator(FixedLocator([0.0] + [16.0 ** k for k in range(1, 12) if 16.0 ** k <= top]))
    else:
        ax.set_xscale("log", base=2)
        ax.set_xlim(left=0.7, right=max(n_max, 2) * 1.6)
        ax.xaxis.set_major_locator(LogLocator(base=2 ** 4))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_size(v).replace(" ", "")))
    ax.set_xlabel("message size n")


def _log_y(ax) -> None:
    """Log time axis; minor ticks unlabelled (labelling them is slow and cluttered)."""
    ax.set_yscale("log")
    # No minor ticks: they cost most of the drawing time and the grid reads well without.
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))


def _ratio_y(ax, ratios: list[np.ndarray]) -> None:
    """Log ratio axis labelled at 1-2-5 steps (0.5, 1, 2, 5...), with at least two
    labelled ticks: ratios within one decade (0.8 to 1.3) left a log axis with a
    single label, or none, so the scale could not be read."""
    values = np.concatenate([np.asarray(r, dtype=float) for r in ratios] + [np.array([1.0])])
    values = values[np.isfinite(values) & (values > 0)]
    lo, hi = float(values.min()), float(values.max())
    steps = [m * 10.0 ** k for k in range(-9, 10) for m in (1, 2, 5)]
    ticks = [t for t in steps if lo <= t <= hi]
    if len(ticks) > 8:  # many decades: powers of ten are enough
        ticks = [t for t in ticks if math.log10(t).is_integer()]
    if len(ticks) < 2:
        below, above = [t for t in steps if t < lo], [t for t in steps if t > hi]
        ticks = ([below[-1]] if below and not ticks else []) + ticks + ([above[0]] if above else [])
    ax.set_yscale("log")
    ax.set_ylim(min(lo, ticks[0]) / 1.08, max(hi, ticks[-1]) * 1.08)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))


def _plain_number(value: float, _pos: object = None) -> str:
    """1, 10, 100, 1k, 10k: no mathtext, so tick labels are cheap to lay out."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def _grid_n(n: np.ndarray) -> np.ndarray:
    lo, hi = float(n.min()), float(n.max())
    dense = np.geomspace(max(lo, 1.0), max(hi, 2.0), 60)
    return np.unique(np.concatenate(([lo] if lo == 0 else [], dense, [hi])))


def _model_line(entity: Entity, key: str, p: int, n: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    if entity.model is None:
        return None
    grid = _grid_n(n)
    values = [entity.model.time(key, x, p) for x in grid]
    keep = np.array([v is not None for v in values])
    if not keep.any():
        return None
    return grid[keep], np.array([v for v in values if v is not None])


def _plot_points(ax, s: Series, y: np.ndarray, color: str, marker: str, label: str,
                 whiskers: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Medians with optional whiskers; oversubscribed hollow, wrong results as red crosses."""
    ax.plot(s.n, y, "-", color=color, lw=0.8, alpha=0.6)
    normal = s.valid & ~s.oversubscribed
    if whiskers is not None:
        lo, hi = whiskers
        ax.errorbar(s.n, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                    fmt="none", ecolor=color, elinewidth=0.7, capsize=1.5, alpha=0.8)
    if normal.any():
        ax.plot(s.n[normal], y[normal], marker, color=color, ms=3.5, ls="none", label=label)
    over = s.valid & s.oversubscribed
    if over.any():
        ax.plot(s.n[over], y[over], marker, mfc="none", mec=color, ms=4, ls="none",
                label=f"{label} (oversubscribed)" if label and not normal.any() else None)
    bad = ~s.valid
    if bad.any():
        ax.plot(s.n[bad], y[bad], "x", color="#d00000", ms=6, mew=1.5, ls="none")


def _mark_thresholds(ax, entity: Entity, key: str) -> list[str]:
    """Verticals at the regime changes and at S; a threshold refined to within a few
    percent (a slope) or to the byte (S) is drawn solid and labelled with its interval."""
    notes = []
    pinned = {at: (after, at) for after, at in modelinfo.brackets(entity.model, key)
              if is_pinned(SLOPE, after, at)}
    for i, n in enumerate(modelinfo.thresholds(entity.model, key)):
        bracket = pinned.get(n)
        ax.axvline(n, color="#555555", ls="-" if bracket else ":", lw=1)
        label = f"regime {i + 2} from {format_size(n)}"
        if bracket:
            label += f", refined: in {describe(bracket[0] + 1, bracket[1] + 1)}"
        ax.annotate(label, (n, 1), xycoords=("data", "axes fraction"),
                    xytext=(2, -10 - 10 * i), textcoords="offset points", fontsize=7, color="#333333")
        notes.append(format_size(n) + (" (refined)" if bracket else ""))
    loggp = entity.model.rendezvous() if entity.model else None
    if loggp and loggp["S"] > 0:
        S = loggp["S"]
        interval = loggp.get("S_interval")
        exact = isinstance(interval, list) and len(interval) == 2 and interval[1] - interval[0] <= 1
        ax.axvline(S, color="#aa5500", ls="-" if exact else "--", lw=0.8)
        label = f"S = {S} B, refined to the byte" if exact else f"S = {format_size(S)}"
        if isinstance(interval, list) and len(interval) == 2 and not exact:
            label += f" in {describe(*interval)}"
        ax.annotate(label, (S, 0), xycoords=("data", "axes fraction"),
                    xytext=(-2, 4), textcoords="offset points", fontsize=7, color="#aa5500", ha="right")
    return notes


def p2p_latency(entity: Entity) -> FigureSpec | None:
    keys = [f"pingpong:{v}" for v in SEND_MODES if entity.series(f"pingpong:{v}", 2) is not None]
    if not keys:
        return None
    fig = Figure(figsize=(7.5, 4.6))
    ax = fig.add_subplot()
    n_max = 0.0
    for i, key in enumerate(keys):
        s = entity.series(key, 2)
        assert s is not None
        variant = key.partition(":")[2]
        color, marker = style(i)
        _plot_points(ax, s, s.t, color, marker, f"{variant} (median)", (s.p25, s.p75))
        line = _model_line(entity, key, 2, s.n)
        if line is not None:
            ax.plot(*line, "--", color=color, lw=1.2, label=f"{variant} model")
        n_max = max(n_max, float(s.n.max()))
    marks = _mark_thresholds(ax, entity, "pingpong:send")
    _size_axis(ax, n_max)
    _log_y(ax)
    ax.set_ylabel("latency, half round trip (us)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    title = f"{entity.label}: point-to-point latency vs size, by send mode (p = 2)"
    ax.set_title(plain(title), fontsize=10)
    _margins(fig, top=0.35)
    caption = ("Ping-pong half round trip. Markers: medians; whiskers: 25th to 75th percentile; "
               "dashed: fitted model; dotted verticals: protocol thresholds of the standard send"
               + (f" ({', '.join(marks)})" if marks else "") + ".")
    return FigureSpec(f"p2p-latency-{entity.label}", title, caption, fig)


def p2p_bandwidth(entity: Entity, rates: Rates) -> FigureSpec | None:
    curves = []
    for key, name, factor in (("pingpong:send", "ping-pong", 1.0), ("bw", "streaming (window)", 1.0),
                              ("bibw", "bidirectional (both ways)", 2.0)):
        s = entity.series(key, 2)
        if s is not None:
            curves.append((key, name, factor, s))
    if not curves:
        return None
    fig = Figure(figsize=(7.5, 4.4))
    ax = fig.add_subplot()
    n_max = 0.0
    for i, (key, name, factor, s) in enumerate(curves):
        keep = s.n > 0
        if not keep.any():
            continue
        sub = _subset(s, keep)
        y = factor * np.array([rates.bw_from_us(n, t) for n, t in zip(sub.n, sub.t)])
        color, marker = style(i)
        _plot_points(ax, sub, y, color, marker, name)
        n_max = max(n_max, float(s.n.max()))
        line = _model_line(entity, key, 2, sub.n)
        if line is not None:
            ln, lt = line
            ok = ln > 0
            ax.plot(ln[ok], factor * rates.bw_from_us(ln[ok], lt[ok]), "--", color=color,
                    lw=1.1, label=f"{name} model")
    bw_as_per_s, n_half = modelinfo.p2p_headline(entity.model, "pingpong:send")
    notes = []
    if bw_as_per_s:
        bw_as = bw_as_per_s / rates.mega
        ax.axhline(bw_as, color="#333333", ls="-.", lw=0.9)
        ax.annotate(f"Bw_as = {bw_as:.4g} {rates.bw_unit}", (0.45, bw_as), xycoords=("axes fraction", "data"),
                    xytext=(0, -10), textcoords="offset points", fontsize=7)
        notes.append(f"Bw_as = {bw_as:.4g} {rates.bw_unit}")
        if n_half and n_half > 0:
            ax.axvline(n_half, color="#333333", ls=":", lw=0.9)
            ax.annotate(f"n_half = {format_size(n_half)}", (n_half, 0.02), xycoords=("data", "axes fraction"),
                        xytext=(3, 0), textcoords="offset points", fontsize=7)
            notes.append(f"n_half = {format_size(n_half)}")
    _size_axis(ax, n_max, zero=False)
    _log_y(ax)
    ax.set_ylabel(f"bandwidth ({rates.bw_unit})")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    title = f"{entity.label}: point-to-point bandwidth vs size (p = 2)"
    ax.set_title(plain(title), fontsize=10)
    _margins(fig, top=0.35)
    caption = ("Bandwidth n/t from the ping-pong and from a window of back-to-back sends "
               "(bidirectional: bytes both ways); Bw_as and n_half of the standard send's "
               "asymptotic regime" + (f": {', '.join(notes)}" if notes else " (no model)") + ".")
    return FigureSpec(f"p2p-bandwidth-{entity.label}", title, caption, fig)


def _subset(s: Series, keep: np.ndarray) -> Series:
    return Series(s.key, s.p, *(getattr(s, f)[keep] for f in (
        "n", "t", "ci_lo", "ci_hi", "p25", "p75", "p95", "valid", "oversubscribed", "precision_met")))


def collective_keys(entity: Entity) -> list[str]:
    """Collectives with their default variant (sum for reductions); nop stays in the tables."""
    return [k for k in entity.keys() if is_collective(k) and not k.endswith(":nop")]


def _margins(fig: Figure, *, top: float = 0.45, bottom: float = 0.55, left: float = 0.75,
             right: float = 0.2, hspace: float = 0.55, wspace: float = 0.3) -> None:
    """Fixed margins in inches: as tidy as tight_layout here, without an extra layout pass."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        hspace=hspace, wspace=wspace)


def _grid(count: int, width: float = 11.0, cols: int = 4) -> tuple[Figure, list]:
    cols = min(cols, count)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(width, 2.6 * rows + 0.6))
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(count)]
    return fig, axes


def collective_vs_size(entity: Entity) -> FigureSpec | None:
    keys = [k for k in collective_keys(entity) if not k.startswith("barrier")]
    if not keys:
        return None
    fig, axes = _grid(len(keys))
    all_ps = sorted({p for k in keys for p in entity.ps(k)})
    for ax, key in zip(axes, keys):
        n_max = 1.0
        for p in entity.ps(key):
            s = entity.series(key, p)
            assert s is not None
            c = COLORS[all_ps.index(p) % len(COLORS)]
            _plot_points(ax, s, s.t, c, "o", f"p = {p}")
            line = _model_line(entity, key, p, s.n)
            if line is not None:
                ax.plot(*line, "--", color=c, lw=1)
            n_max = max(n_max, float(s.n.max()))
        _size_axis(ax, n_max)
        _panel(ax, key, "n")
    axes[0].legend(fontsize=7)
    title = f"{entity.label}: collective latency vs size at each p"
    _suptitle(fig, axes, title)
    return FigureSpec(f"coll-size-{entity.label}", title,
                      "Medians (markers) and model (dashed), one colour per process count; "
                      "reductions use the sum of doubles.", fig)


def _panel(ax: Any, key: str, xlabel: str) -> None:
    """One operation's panel of a collective grid: log time axis, small labels, light grid."""
    _log_y(ax)
    ax.set_xlabel(xlabel, fontsize=7)
    ax.set_title(key, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)


def _suptitle(fig: Figure, axes: list, title: str) -> None:
    axes[0].set_ylabel("time (us)")
    fig.suptitle(plain(title), fontsize=11)
    _margins(fig, top=0.6)


def short_and_long(entity: Entity, key: str) -> tuple[dict[int, int], dict[int, int]]:
    """Per p, the measured size nearest 8 B (short) and the largest size measured at every p."""
    short: dict[int, int] = {}
    long: dict[int, int] = {}
    ps = entity.ps(key)
    sizes = {p: entity.series(key, p).n for p in ps}  # type: ignore[union-attr]
    if not ps:
        return short, long
    common_max = min(float(n.max()) for n in sizes.values())
    for p, n in sizes.items():
        positive = n[n > 0]
        pool = positive if positive.size else n
        short[p] = int(pool[np.argmin(np.abs(np.log2(np.maximum(pool, 1)) - 3))])
        below = n[n <= common_max * 1.0001]
        long[p] = int(below.max()) if below.size else int(n.max())
    return short, long


def collective_vs_p(entity: Entity) -> FigureSpec | None:
    keys = [k for k in collective_keys(entity) if len(entity.ps(k)) >= 2]
    if not keys:
        return None
    fig, axes = _grid(len(keys))
    for ax, key in zip(axes, keys):
        short, long = short_and_long(entity, key)
        picks = [("short", short, COLORS[0], "o")]
        if not key.startswith("barrier"):
            picks.append(("long", long, COLORS[1], "s"))
        for name, chosen, color, marker in picks:
            ps = sorted(chosen)
            t = np.array([entity.series(key, p).at(chosen[p]) for p in ps], dtype=np.float64)  # type: ignore[union-attr]
            sizes = sorted(set(chosen.values()))
            label = f"n = {format_size(sizes[0])}" if len(sizes) == 1 else \
                f"n ≈ {format_size(sizes[0])}–{format_size(sizes[-1])}"
            ax.plot(ps, t, marker + "-", color=color, ms=4, lw=0.9, label=label)
            if entity.model is not None:
                grid = np.arange(min(ps), max(ps) + 1)
                nearest = [chosen[min(ps, key=lambda q: abs(q - g))] for g in grid]
                mt = [entity.model.time(key, n, int(g)) for n, g in zip(nearest, grid)]
                if all(v is not None for v in mt):
                    ax.plot(grid, mt, "--", color=color, lw=1)
        _panel(ax, key, "p (processes)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=6)
    title = f"{entity.label}: collective latency vs p, short and long message"
    _suptitle(fig, axes, title)
    return FigureSpec(f"coll-p-{entity.label}", title,
                      "Short: the size measured nearest 8 B; long: the largest size measured at every p "
                      "(sizes are rounded per operation and p). Dashed: model.", fig)


def aggregated_bandwidth(entity: Entity, rates: Rates) -> FigureSpec | None:
    keys = [k for k in collective_keys(entity) if not k.startswith("barrier")]
    if not keys:
        return None
    fig = Figure(figsize=(11, 4.4))
    ax_n, ax_p = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    p_top = max(p for k in keys for p in entity.ps(k))
    n_max = 1.0
    for i, key in enumerate(keys):
        op = key.partition(":")[0]
        color, marker = style(i)
        s = entity.series(key, p_top)
        if s is not None and (s.n > 0).any():
            sub = _subset(s, s.n > 0)
            factor = aggregate_factor(op, p_top) or 0
            y = factor * np.array([rates.bw_from_us(n, t) for n, t in zip(sub.n, sub.t)])
            _plot_points(ax_n, sub, y, color, marker, "")
            n_max = max(n_max, float(sub.n.max()))
        _, long = short_and_long(entity, key)
        ps = sorted(long)
        if ps:
            at_long: list[float] = []
            for p in ps:
                t = entity.series(key, p).at(long[p])  # type: ignore[union-attr]
                at_long.append((aggregate_factor(op, p) or 0) * rates.bw_from_us(long[p], t)  # type: ignore[arg-type]
                               if t and long[p] > 0 else np.nan)
            ax_p.plot(ps, at_long, marker + "-", color=color, ms=4, lw=0.9, label=key)
    _size_axis(ax_n, n_max, zero=False)
    for ax in (ax_n, ax_p):
        _log_y(ax)
        ax.set_ylabel(f"aggregated bandwidth ({rates.bw_unit})")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    ax_n.set_title(f"vs size at p = {p_top}", fontsize=9)
    ax_p.set_title("vs p at the long message", fontsize=9)
    ax_p.set_xlabel("p (processes)")
    ax_p.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # an AutoLocator
    ax_p.legend(fontsize=6, ncol=2)
    title = f"{entity.label}: aggregated bandwidth of the collectives"
    fig.suptitle(plain(title), fontsize=11)
    _margins(fig, top=0.6)
    return FigureSpec(f"aggbw-{entity.label}", title,
                      "Aggregated bandwidth = F(p) x n / t with the fit's factors (commchar.models.metrics, "
                      "docs/models.md): p(p-1) for alltoall, 2(p-1) for allreduce, p-1 for the others.", fig)


def entity_figures(entity: Entity, rates: Rates) -> list[FigureSpec]:
    makers = (lambda: p2p_latency(entity), lambda: p2p_bandwidth(entity, rates),
              lambda: collective_vs_size(entity), lambda: collective_vs_p(entity),
              lambda: aggregated_bandwidth(entity, rates))
    return [spec for spec in (make() for make in makers) if spec is not None]


def common_ps(entities: list[Entity], key: str) -> list[int]:
    sets = [set(e.ps(key)) for e in entities]
    return sorted(set.intersection(*sets)) if sets else []


def comparison_p(entities: list[Entity], key: str) -> int:
    """The largest p every entity measured, preferring one none of them ran oversubscribed."""
    ps = common_ps(entities, key)
    dedicated = [p for p in ps if not any(e.series(key, p).oversubscribed.any()  # type: ignore[union-attr]
                                          for e in entities)]
    return (dedicated or ps)[-1]


def comparison_p2p(entities: list[Entity]) -> FigureSpec | None:
    key = "pingpong:send"
    present = [e for e in entities if e.series(key, 2) is not None]
    if len(present) < 2:
        return None
    fig = Figure(figsize=(7.5, 5.4))
    ax, ax_r = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    ref = present[0].series(key, 2)
    assert ref is not None
    n_max = 1.0
    ratios: list[np.ndarray] = []
    for i, e in enumerate(present):
        s = e.series(key, 2)
        assert s is not None
        color, marker = style(i)
        _plot_points(ax, s, s.t, color, marker, plain(e.label), (s.p25, s.p75))
        n_max = max(n_max, float(s.n.max()))
        if i:
            common, ia, ib = np.intersect1d(s.n, ref.n, return_indices=True)
            ratios.append(s.t[ia] / ref.t[ib])
            ax_r.plot(common, ratios[-1], marker + "-", color=color, ms=3.5,
                      label=f"{plain(e.label)} / {plain(present[0].label)}")
    ax_r.axhline(1.0, color="#333333", lw=0.8)
    for a in (ax, ax_r):
        _size_axis(a, n_max)
        a.grid(True, alpha=0.3)
    _log_y(ax)
    ax.set_ylabel("latency (us)")
    _ratio_y(ax_r, ratios)
    ax_r.set_ylabel("time ratio (>1: slower)")
    ax.legend(fontsize=7)
    ax_r.legend(fontsize=7)
    title = "Comparison: ping-pong latency (standard send, p = 2) and time ratio"
    ax.set_title(plain(title), fontsize=10)
    _margins(fig, hspace=0.3)
    return FigureSpec("compare-p2p", title, "Same axes for every library or run; the lower panel "
                      f"divides each by {present[0].label}.", fig)


def comparison_collectives(entities: list[Entity]) -> FigureSpec | None:
    keys = sorted({k for e in entities for k in collective_keys(e)},
                  key=lambda k: COLLECTIVES.index(k.partition(":")[0]))
    keys = [k for k in keys if sum(1 for e in entities if e.ps(k)) >= 2 and common_ps(
        [e for e in entities if e.ps(k)], k)]
    if not keys:
        return None
    fig, axes = _grid(len(keys))
    ref_label = None
    for ax, key in zip(axes, keys):
        having = [e for e in entities if e.ps(key)]
        p = comparison_p(having, key)
        ref = having[0].series(key, p)
        ref_label = ref_label or having[0].label
        assert ref is not None
        n_max = 1.0
        ratios = []
        for i, e in enumerate(having[1:], start=1):
            s = e.series(key, p)
            assert s is not None
            common, ia, ib = np.intersect1d(s.n, ref.n, return_indices=True)
            if common.size:
                ratios.append(s.t[ia] / ref.t[ib])
                color, marker = style(i)
                ax.plot(common, ratios[-1], marker + "-", color=color, ms=3.5,
                        label=f"{plain(e.label)} / {plain(having[0].label)}")
                n_max = max(n_max, float(common.max()))
        ax.axhline(1.0, color="#333333", lw=0.8)
        _size_axis(ax, n_max)
        ax.set_xlabel("n", fontsize=7)
        _ratio_y(ax, ratios)
        ax.set_title(f"{key}, p = {p}", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("time ratio (>1: slower)")
    axes[0].legend(fontsize=6)
    title = "Comparison: collective time ratio vs size at the largest common p without oversubscription"
    fig.suptitle(plain(title), fontsize=11)
    _margins(fig, top=0.6)
    return FigureSpec("compare-collectives", title,
                      "Ratio of median times at the sizes both measured; below 1 the numerator is faster.",
                      fig)
