"""`commchar report`: one self-contained HTML page from measured runs and their models.

build_report reads a database (and optionally a model file), fits a model on
the fly where none is given, and returns the page, its figures and findings;
the command writes the files and prints the summary.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable
from html import escape
from pathlib import Path

import matplotlib

from commchar import __version__
from commchar.errors import InputError
from commchar.report import adapters, html, modelinfo, replays, validation
from commchar.report import apps as apps_report
from commchar.report import am as active_messages
from commchar.report import pvm as pvm_report
from commchar.report.compare import comparison_table
from commchar.report.dataset import Entity, build_entities
from commchar.report.figures import (FigureSpec, comparison_collectives, comparison_p2p,
                                     entity_figures)
from commchar.report.findings import Finding, all_findings, is_unsupported
from commchar.report.locality import locality_table
from commchar.report.sizes import size_choice_items
from commchar.report.tables import entity_tables, failures_table, provenance_tables
from commchar.report.units import Rates
from commchar.tables import Table, table_html
from commchar.vocabulary import LOGGP_OPS, MPI_P2P_OPS, format_size

ADVICE_SIZES = [8, 1024, 1 << 20]


@dataclass
class ReportOptions:
    db: str
    run_ids: list[int] | None = None
    model_path: str | None = None
    units: str = "si"
    oversubscribed: str = "exclude"  # fit policy for time-shared points (commchar.models.fit_document)
    reference: str | None = None      # library or entity label the comparison is made against


@dataclass
class Report:
    html: str
    entities: list[Entity]
    figures: list[FigureSpec]
    tables: list[Table]
    findings: list[Finding]
    notes: list[str]
    seconds: dict[str, float] = field(default_factory=dict)


def slugify(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def _attach_models(entities: list[Entity], options: ReportOptions, notes: list[str]) -> None:
    """Give each entity a model: the file's entry for its library, else one fitted now."""
    file_views: dict[str, adapters.ModelView] = {}
    if options.model_path:
        file_model = adapters.read_model_file(options.model_path)
        file_views, note = adapters.model_views(file_model, f"model file {options.model_path}")
        if note:
            notes.append(note)
    for e in entities:
        if e.library in file_views:
            e.model = file_views[e.library]
            e.model_note = f"from the model file {options.model_path}"
            continue
        if not e.points:
            continue
        runs = [{"db": options.db, "run_id": e.run["id"]}]
        fitted, why = adapters.fit_model(e.points, e.failures, options.units, runs, options.oversubscribed)
        if fitted is None:
            e.model_note = why
            if why and why not in notes:
                notes.append(why)
            continue
        views, note = adapters.model_views(fitted, f"fitted on the fly from {options.db} run {e.run['id']}",
                                           strict=False)
        if note and note not in notes:
            notes.append(note)
        e.model = views.get(e.library)
        e.model_note = "fitted on the fly by commchar.models" if e.model else (
            "no usable model: " + (note or "the fit produced none for this library"))
    for e in entities:
        if e.model is None or e.library == active_messages.AM_LIBRARY:
            continue  # the advisor knows MPI operations only
        ps = sorted({pt["p"] for pt in e.points if pt["op"] not in MPI_P2P_OPS + LOGGP_OPS})
        e.advice, why = adapters.advice_for(e.model, ADVICE_SIZES, ps or [2])
        if why and why not in notes:
            notes.append(why)


def reference_first(entities: list[Entity], reference: str | None) -> list[Entity]:
    """Entities with the comparison's reference first: the one named (entity label or library),
    else the first in run, then name order. An unknown name is an error."""
    if reference is None:
        return list(entities)
    chosen = [e for e in entities if e.label == reference] or [e for e in entities if e.library == reference]
    if not chosen:
        known = ", ".join(sorted({e.label for e in entities}))
        raise InputError(f"--reference {reference}: no such library in the report (have: {known})")
    return [chosen[0]] + [e for e in entities if e is not chosen[0]]


def window_items(pts: list[dict]) -> list[str]:
    """One line on --sync window: the windows' range and the late repetitions redone."""
    windows = [w for pt in pts if isinstance(w := (pt.get("extra") or {}).get("sync_window"), dict)]
    if not windows:
        return []
    lengths = [float(w["window_us"]) for w in windows if isinstance(w.get("window_us"), (int, float))]
    late = sum(int(w.get("late") or 0) for w in windows)
    redone = sum(int(w.get("redone") or 0) for w in windows)
    bound = sum(1 for w in windows if w.get("bound_hit"))
    span = f" of {min(lengths):.3g} to {max(lengths):.3g} us" if lengths else ""
    return [f"Window synchronization ({len(windows)} points): repetitions start at common times on "
            f"offset-corrected clocks, in windows{span}; the time of a repetition is from that common "
            f"start to the slowest rank's end. {late} repetitions started late on some rank and were "
            f"discarded, {redone} of them redone" + (f"; {bound} points hit the bound on redoing" if bound else "")
            + "."]


def cache_items(pts: list[dict]) -> list[str]:
    """What cache-cold points were, when the report holds any (labelled `cache-cold`)."""
    regions = sorted({int(pt["cache_region_bytes"]) for pt in pts
                      if pt.get("cache") == "cold" and pt.get("cache_region_bytes")})
    if not regions:
        return []
    span = format_size(regions[0]) + ("" if len(regions) == 1 else f" to {format_size(regions[-1])}")
    return ["Libraries labelled cache-cold were measured with --cache cold: each repetition used the"
            " next slot of send and receive buffers in a region of at least twice the last-level"
            f" cache ({span} per rank), so none found its data in cache; their repetitions are not"
            " batched, and they are fitted apart from warm points."]


def method_html(data: adapters.Measurements, entities: list[Entity]) -> str:
    pts = data.points
    reps = [pt["reps"] for pt in pts]
    syncs = sorted({str(pt.get("sync")) for pt in pts if pt.get("sync")})
    targets = sorted({pt["precision_target"] for pt in pts if pt.get("precision_target")})
    keys = sorted({f"{pt['op']}{':' + pt['variant'] if pt['variant'] else ''}" for pt in pts})
    sizes = sorted({pt["n_bytes"] for pt in pts})
    items = [
        f"Operations measured: {', '.join(keys)}.",
        f"Sizes {format_size(sizes[0])} to {format_size(sizes[-1])} ({len(sizes)} distinct); "
        f"process counts {', '.join(map(str, sorted({pt['p'] for pt in pts})))}.",
        f"Each point is the median of its repetitions ({min(reps)} to {max(reps)} per point), every "
        "raw sample kept; the 95% confidence interval of the median is distribution-free (order "
        "statistics); outliers are counted (Tukey fences) and kept.",
        "Point-to-point latency is half a ping-pong round trip between ranks 0 and 1; a collective "
        "repetition is timed on every rank and the slowest rank's time is kept"
        + (f"; start synchronization: {', '.join(syncs)}" if syncs else "") + ".",
        *cache_items(pts),
        *size_choice_items(data.db, data.runs),
        ("Precision target: 95% CI of the median within ±"
         + ", ".join(f"{100 * t:.3g}%" for t in targets) + " of it (or the time/repetition limit).")
        if targets else "No precision target recorded.",
        *window_items(pts),
        *imported_items(pts),
        "Models: " + "; ".join(f"{e.label}: {e.model_note or 'none'}" for e in entities) + ".",
        f"Report generated by commchar {__version__} from {data.db}.",
    ]
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"


def imported_items(points: list[dict]) -> list[str]:
    """The method's words for points read from a peer tool's output: its means are not medians."""
    from commchar.report.adapters import imported_source

    by_library: dict[str, list[dict]] = {}
    for pt in points:
        if isinstance((pt.get("extra") or {}).get("source"), dict):
            by_library.setdefault(pt["library"], []).append(pt)
    return [f"{library}: {imported_source(pts)}; no samples, so no percentiles of commchar's own"
            " and no confidence interval (the statement of medians above does not apply to it)."
            for library, pts in sorted(by_library.items())]


def build_report(options: ReportOptions) -> Report:
    """Read, fit where needed, draw, tabulate, find, and assemble the page."""
    # Settings fixed whatever the user's matplotlibrc says: Text objects read
    # usetex when they are created, so this covers drawing as well as saving.
    with matplotlib.rc_context(html.FIGURE_RC):
        return _build(options)


def _build(options: ReportOptions) -> Report:
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    data = adapters.load_measurements(options.db, options.run_ids, require_points=False)
    entities = build_entities(data)
    measured_any = any(e.points for e in entities)
    if not measured_any and not apps_report.load(options.db, options.run_ids).runs \
            and not replays.load(options.db):
        raise InputError(f"{options.db} has no measured point, no application run and no "
                         "predicted trace")
    seconds["load"] = time.perf_counter() - clock
    ordered = reference_first(entities, options.reference)  # an unknown name, before any fit
    notes: list[str] = []
    _attach_models(entities, options, notes)
    seconds["fit"] = time.perf_counter() - clock - seconds["load"]
    rates = Rates(options.units)
    findings = all_findings(entities, ordered)

    sections: list[tuple[str, str, str, bool]] = []
    all_figures: list[FigureSpec] = []
    all_tables: list[Table] = []

    def fig(spec: FigureSpec) -> str:
        spec.slug = slugify(spec.slug)
        all_figures.append(spec)
        return html.figure_html(spec, f"fig-{spec.slug}")

    def tab(table: Table) -> str:
        all_tables.append(table)
        return table_html(table, f"tab-{slugify(table.slug)}")

    t_draw = time.perf_counter()
    if not measured_any:  # application runs or traced programs alone
        sections += apps_report.sections(options.db, options.run_ids, fig, tab)
        _add_traced(sections, options.db, fig, tab)
        provenance = "".join(tab(t) for t in provenance_tables(data.runs, entities))
        sections.append(("method", "Environment and provenance", provenance, False))
        return _page(options, data, entities, sections, notes, all_figures, all_tables, [],
                     seconds, clock, t_draw)
    summary_rows = [[e.label, e.version, str(len(e.points)), ", ".join(map(str, sorted({pt["p"] for pt in e.points}))),
                     str(sum(1 for f in e.failures if not is_unsupported(f))),
                     str(sum(1 for pt in e.points if not pt["valid"])),
                     str(sum(1 for f in e.failures if is_unsupported(f)))]
                    for e in entities]
    summary = Table("summary", "What this report covers", ["library", "version", "points", "p",
                    "failures", "wrong results", "unsupported"], summary_rows)
    sections.append(("summary", "Summary", tab(summary), False))
    accuracy = accuracy_table(entities)
    if accuracy is not None:
        sections.append(("accuracy", "Model accuracy", tab(accuracy), False))
    sections.append(("findings", "Findings", html.findings_html(findings), False))

    measured = reference_first([e for e in entities if e.points], options.reference)
    if len(measured) >= 2:
        body = (f"<p>Reference of the comparison: <strong>{escape(measured[0].label)}</strong>"
                f"{' (chosen with --reference)' if options.reference else ' (first in run, then name order; --reference LIB chooses)'}"
                "; ratios are other / reference.</p>")
        for maker in (comparison_p2p, comparison_collectives):
            spec = maker(measured)
            if spec is not None:
                body += fig(spec)
        for other in measured[1:]:
            table = comparison_table(measured[0], other)
            if table is not None:
                body += tab(table)
        sections.append(("comparison", "Comparison", body or "<p>Nothing measured in common.</p>", False))

    on_and_off = locality_table(entities, rates)
    if on_and_off is not None:
        sections.append(("locality", "On-node and off-node", tab(on_and_off), False))

    am_table = active_messages.comparison_table(entities, rates)
    if am_table is not None:
        sections.append(("active-messages", "Active messages beside MPI", tab(am_table), False))
    pvm_tables = pvm_report.comparison_tables(entities, rates)
    if pvm_tables:
        sections.append(("pvm", "PVM beside MPI", "".join(tab(t) for t in pvm_tables), False))

    for e in entities:
        am_tables, am_figures = active_messages.entity_parts(e, rates)
        body = "".join(fig(spec) for spec in entity_figures(e, rates) + am_figures)
        body += "".join(tab(t) for t in entity_tables(e, rates) + am_tables)
        failed = failures_table(e)
        if failed is not None:
            body += tab(failed)
        sections.append((f"lib-{slugify(e.label)}", f"Library: {e.label}", body or "<p>No data.</p>", False))

    for e in entities:
        if e.advice is not None:
            # The advisor's fragment is escaped HTML with its own headings, embedded as is.
            sections.append((f"advice-{slugify(e.label)}", f"Advice: {e.label}", e.advice.html, True))

    sections += apps_report.sections(options.db, options.run_ids, fig, tab)
    _add_traced(sections, options.db, fig, tab)

    provenance = "".join(tab(t) for t in provenance_tables(data.runs, entities))
    sections.append(("method", "Environment, provenance and method", method_html(data, entities) + provenance, False))
    return _page(options, data, entities, sections, notes, all_figures, all_tables, findings,
                 seconds, clock, t_draw)


def _percent(errors: dict | None, name: str) -> str:
    value = (errors or {}).get(name)
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) else "-"


def accuracy_table(entities: list[Entity]) -> Table | None:
    """Each operation's relative errors as its fit stored them: at its own measured points
    (medians; means for the mean fit the replay uses) and at sizes held out of a second fit."""
    rows = []
    for e in entities:
        for acc in modelinfo.accuracy(e.model):
            worst = (acc.in_sample or {}).get("worst") or {}
            at = f" at {format_size(worst['n_bytes'])}" if isinstance(worst.get("n_bytes"), int) else ""
            over = (acc.in_sample or {}).get("over_10pct")
            rows.append([e.label, acc.key, _percent(acc.in_sample, "median"), _percent(acc.in_sample, "max") + at,
                         "-" if over is None else str(over), _percent(acc.held_out, "median"),
                         _percent(acc.held_out, "max"), _percent(acc.mean_in_sample, "median"),
                         _percent(acc.mean_in_sample, "max")])
    if not rows:
        return None
    return Table("model-accuracy", "Relative error of each operation's model: in-sample at its measured medians"
                 " (points missed by more than 10% are findings), held out (every 3rd interior size left out of"
                 " a second fit), and of the mean fit at the measured means",
                 ["library", "operation", "in-sample median", "in-sample max", "points > 10%",
                  "held-out median", "held-out max", "mean fit median", "mean fit max"], rows)


def _add_traced(sections: list[tuple[str, str, str, bool]], db: str,
                fig: Callable[[FigureSpec], str], tab: Callable[[Table], str]) -> None:
    traced = replays.section_html(db, fig, tab)
    if traced is not None:
        sections.append(("traces", "Traced programs: measured and predicted", traced, False))
    validated = validation.section_html(db, fig, tab)
    if validated is not None:
        sections.append(("validation", "Validation programs: measured and predicted", validated, False))


def _page(options: ReportOptions, data: adapters.Measurements, entities: list[Entity],
          sections: list[tuple[str, str, str, bool]], notes: list[str], all_figures: list[FigureSpec],
          all_tables: list[Table], findings: list[Finding], seconds: dict[str, float],
          clock: float, t_draw: float) -> Report:
    seconds["draw"] = time.perf_counter() - t_draw
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    meta = (f"{', '.join(f'{e.label} ({e.version})' for e in entities)} · database {data.db} · runs "
            f"{', '.join(str(r['id']) for r in data.runs)} · generated {created} by commchar {__version__}")
    page = html.page("commchar report", meta, notes, sections)
    seconds["total"] = time.perf_counter() - clock
    return Report(page, entities, all_figures, all_tables, findings, notes, seconds)


def write_figures(report: Report, directory: str | Path, fmt: str) -> list[Path]:
    """Each figure as its own file (png, svg or pdf) for papers."""
    target = Path(directory)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create figures directory {target}: {exc.strerror}") from None
    written = []
    for spec in report.figures:
        path = target / f"{spec.slug}.{fmt}"
        with matplotlib.rc_context(html.FIGURE_RC):
            try:
                spec.figure.savefig(path, format=fmt, dpi=150, metadata={})
            except OSError as exc:
                raise InputError(f"cannot write {path}: {exc.strerror}") from None
        written.append(path)
    return written
