"""The report's tables, in the published studies' layout, as commchar.tables.Table."""

from __future__ import annotations

import json

import numpy as np

from commchar.errors import CommcharError
from commchar.report.adapters import best_known_class, describe, overlaps, parse_expr, unknown_parameters
from commchar.report import modelinfo
from commchar.report.dataset import Entity
from commchar.vocabulary import REDUCTIONS, RMA_OPS, format_size, is_collective, op_key, split_key
from commchar.report.figures import collective_keys
from commchar.report.units import Rates, number
from commchar.tables import Table

COST_SIZES = (8, 1024, 1 << 20)


def _range(lo: int, hi: int | None) -> str:
    return f"{format_size(lo)} – {format_size(hi) if hi is not None else '∞'}"


def p2p_table(entity: Entity, rates: Rates) -> Table | None:
    keys = [k for k in entity.keys() if k.startswith("pingpong:")]
    if not keys:
        return None
    rows = []
    for key in keys:
        params = modelinfo.p2p_parameters(entity.model, key)
        for seg in params:
            rows.append([key.partition(":")[2], _range(seg.n_min, seg.n_max), number(seg.t_s),
                         number(seg.t_b), rates.specific(seg.pi_s), rates.bandwidth(seg.bw_as),
                         number(seg.n_half) if seg.n_half is None else str(seg.n_half),
                         number(seg.r2, 4)])
        if not params:
            s = entity.series(key, 2)
            if s is not None:
                rows.append([key.partition(":")[2], _range(int(s.n.min()), int(s.n.max())),
                             "–", "–", "–", "–", "–", "no model"])
    return Table(
        f"p2p-{entity.label}", f"{entity.label}: point-to-point parameters and metrics (Hockney, per regime)",
        ["send mode", "regime (n)", "t_s (us)", "t_b (us/B)", f"pi_s ({rates.pi_unit})",
         f"Bw_as ({rates.bw_unit})", "n_half (B)", "fit r²"],
        rows, ["T(n) = t_s + t_b·n in each regime; pi_s = 1/t_s, Bw_as = 1/t_b and n_half = ceil(t_s/t_b) "
               "of each regime alone (commchar.models.metrics)."],
    )


def rma_table(entity: Entity, rates: Rates) -> Table | None:
    """One-sided operations: Hockney per operation and synchronisation, as the send modes."""
    keys = [k for k in entity.keys() if k.partition(":")[0] in RMA_OPS]
    rows = []
    for key in keys:
        for seg in modelinfo.p2p_parameters(entity.model, key):
            rows.append([key, _range(seg.n_min, seg.n_max), number(seg.t_s), number(seg.t_b),
                         rates.bandwidth(seg.bw_as), number(seg.r2, 4)])
    if not rows:
        return None
    return Table(f"rma-{entity.label}", f"{entity.label}: one-sided operations (Hockney, per synchronisation)",
                 ["operation:synchronisation", "regime (n)", "t_s (us)", "t_b (us/B)",
                  f"Bw_as ({rates.bw_unit})", "fit r²"], rows,
                 ["fence: MPI_Win_fence; pscw: post-start-complete-wait; lock: MPI_Win_lock_all and"
                  " MPI_Win_flush per operation; *_bw: a window of W operations per epoch, time per operation."])


def overlap_table(entity: Entity) -> Table | None:
    """Non-blocking collectives: pure time, time with an equal computation overlapped, overlap."""
    found = overlaps(entity.points)
    if not found:
        return None
    rows = [[o.op, str(o.p), format_size(o.n_bytes), number(o.t_pure_us), number(o.t_overlap_us),
             number(o.t_compute_us), f"{100 * o.fraction:.0f}%"] for o in found]
    return Table(f"overlap-{entity.label}", f"{entity.label}: non-blocking collectives, overlap of communication"
                 " and computation", ["operation", "p", "n", "pure (us)", "with computation (us)",
                                      "computation (us)", "overlap"], rows,
                 ["overlap = 1 - (t_with - t_computation) / t_pure, clipped to [0, 1] (as OSU and IMB-NBC):"
                  " 100% when the communication hid entirely behind the computation."])


def ranks_table(entity: Entity) -> Table | None:
    """Collectives: each rank's own median at the largest size measured, so a straggler shows
    (the points' times are the slowest rank's per repetition)."""
    best: dict[tuple[str, int], dict] = {}
    for pt in entity.points:
        medians = (pt.get("extra") or {}).get("rank_median_us")
        if not isinstance(medians, list) or not medians or not is_collective(op_key(pt["op"], pt["variant"])):
            continue
        series = (op_key(pt["op"], pt["variant"]), pt["p"])
        if series not in best or pt["n_bytes"] > best[series]["n_bytes"]:
            best[series] = pt
    if not best:
        return None
    rows = []
    for (key, p), pt in sorted(best.items()):
        medians = [float(x) for x in pt["extra"]["rank_median_us"]]
        low = min(medians)
        rows.append([key, str(p), format_size(pt["n_bytes"]), ", ".join(number(x) for x in medians),
                     str(max(range(len(medians)), key=medians.__getitem__)),
                     f"{max(medians) / low:.2f}" if low > 0 else "–"])
    return Table(f"ranks-{entity.label}", f"{entity.label}: collectives, each rank's own median at the largest n",
                 ["operation", "p", "n", "rank medians (us), rank 0 first", "slowest rank", "slowest / fastest"],
                 rows, ["A rank's median of its own call durations; a ratio far above 1 is a straggler or an"
                        " imbalanced algorithm (the root of a rooted collective often returns first)."])


def late_table(entity: Entity) -> Table | None:
    """--sync window: the points where repetitions started late on some rank and were
    redone (none shown when every window was met)."""
    rows = []
    for pt in entity.points:
        window = (pt.get("extra") or {}).get("sync_window")
        if not isinstance(window, dict) or not (window.get("late") or window.get("bound_hit")):
            continue
        rows.append([op_key(pt["op"], pt["variant"]), str(pt["p"]), format_size(pt["n_bytes"]),
                     number(float(window.get("window_us") or 0.0)), str(pt["reps"]),
                     str(window.get("late", 0)), str(window.get("redone", 0)),
                     "yes" if window.get("bound_hit") else "no"])
    if not rows:
        return None
    return Table(f"late-{entity.label}", f"{entity.label}: window synchronization, repetitions started late",
                 ["operation", "p", "n", "window (us)", "kept", "late", "redone", "bound hit"], rows,
                 ["Under --sync window every repetition starts at a common time on offset-corrected clocks;"
                  " one that a rank reached after its start is discarded and redone. 'bound hit': the point"
                  " stopped with late repetitions still to redo (as many as max-reps, or min-reps after"
                  " max-time), so it has fewer samples than asked."])


def laws_table(entity: Entity) -> Table | None:
    keys = [k for k in entity.keys() if is_collective(k)]
    if not keys or entity.model is None:
        return None
    rows = []
    for key in keys:
        laws = modelinfo.laws(entity.model, key)
        segs = modelinfo.segments(entity.model, key)
        for i, seg in enumerate(segs):
            cells = [key if i == 0 else "", _range(int(seg.get("n_min") or 0), seg.get("n_max"))]
            for term in ("t_s", "t_b", "t_c"):
                expr = str(seg.get(term, "0"))
                law = laws.get(term, {}) if len(segs) == 1 or i == len(segs) - 1 else {}
                cls = law.get("complexity")
                if term == "t_c" and "t_c" in seg and seg.get("n_max") != 0 and not _t_c_resolved(entity, key, seg):
                    cells.append("not resolved")
                    continue
                cells.append(f"{expr}  [{cls}]" if cls else expr)
            op = key.partition(":")[0]
            best = best_known_class(op, "t_s")
            cells.append((best.name if best else "–") if i == 0 else "")
            rows.append(cells)
    if not rows:
        return None
    return Table(f"laws-{entity.label}", f"{entity.label}: collective laws in p",
                 ["operation", "regime (n)", "t_s(p) (us)", "t_b(p) (us/B)", "t_c(p) (us/B)",
                  "best-known t_s"], rows,
                 ["T(n, p) = t_s(p) + (t_b(p) + t_c(p))·n; complexity class in brackets; "
                  "best-known startup law from Thakur, Rabenseifner and Gropp (2005). t_c 'not resolved': "
                  "in that regime the sum was nowhere slower than the nop beyond the 95% CIs of their "
                  "medians, or the fitted t_c was not positive, so no computation cost can be read off."])


def _t_c_resolved(entity: Entity, key: str, seg: dict) -> bool:
    """Whether a reduction's t_c in one regime is a measured cost: positive at every
    measured p, and the sum slower than the nop beyond both CIs at some size of the regime."""
    op, variant = split_key(key)
    if variant != "sum":
        return True
    lo, hi = float(seg.get("n_min") or 0), seg.get("n_max")
    ps = entity.ps(key)
    try:
        t_c = parse_expr(str(seg["t_c"])) if not isinstance(seg["t_c"], (int, float)) else None
        values = [float(seg["t_c"])] if t_c is None else [t_c.evaluate(p) for p in ps]
    except (CommcharError, TypeError, ValueError):
        return False
    if not values or min(values) <= 0:
        return False
    for p in ps:
        total, empty = entity.series(key, p), entity.series(op_key(op, "nop"), p)
        if total is None or empty is None:
            continue
        for j, n in enumerate(total.n):
            if n < lo or (hi is not None and n > hi) or n == 0:
                continue
            k = np.nonzero(empty.n == n)[0]
            if k.size and total.ci_lo[j] > empty.ci_hi[k[0]]:
                return True
    return False


def peaks_table(entity: Entity, rates: Rates) -> Table | None:
    if entity.model is None:
        return None
    rows = []
    for key in collective_keys(entity):
        if key.startswith("barrier"):
            continue
        peaks = modelinfo.peak_metrics(entity.model, key, entity.ps(key))
        if peaks is None:
            continue
        rows.append([key,
                     f"{rates.bandwidth(peaks.bw_pag)} (p={peaks.bw_pag_p})" if peaks.bw_pag else "–",
                     f"{rates.specific(peaks.pi_pag)} (p={peaks.pi_pag_p})" if peaks.pi_pag else "–",
                     f"{peaks.n_half_mag:.0f} (p={peaks.n_half_mag_p})" if peaks.n_half_mag else "–"])
    if not rows:
        return None
    return Table(f"peaks-{entity.label}", f"{entity.label}: peak aggregated metrics over the measured p",
                 ["operation", f"Bw_pag ({rates.bw_unit})", f"pi_pag ({rates.pi_unit})", "n_half_mag (B)"],
                 rows, ["The fit's peak metrics (docs/models.md): over every integer p of the fitted range, "
                        "Bw_ag(p) = F(p)/t_b(p) of the last regime, pi_ag(p) = F(p)/t_s(p) of the first with "
                        "n > 0; F(p) = p(p-1) for alltoall, 2(p-1) for allreduce, p-1 otherwise; a reduction's "
                        "t_b is its nop transfer term."])


def rcc_table(entity: Entity) -> Table | None:
    if entity.model is None:
        return None
    ops = [op for op in REDUCTIONS if f"{op}:sum" in entity.keys() and f"{op}:nop" in entity.keys()]
    ps = sorted({p for op in ops for p in entity.ps(f"{op}:sum")})
    rows = [[op] + [number(modelinfo.r_cc(entity.model, op, p)) for p in ps] for op in ops]
    if not rows or all(c == "–" for r in rows for c in r[1:]):
        return None
    return Table(f"rcc-{entity.label}", f"{entity.label}: transfer-to-computation ratio r_cc(p)",
                 ["operation"] + [f"p = {p}" for p in ps], rows,
                 ["r_cc(p) = t_b(p)/t_c(p): per-byte time of the empty (nop) reduction over what the "
                  "sum of doubles adds. '–': the sum was not slower per byte than the nop."])


def loggp_table(entity: Entity) -> Table | None:
    loggp = entity.model.loggp() or entity.model.rendezvous() if entity.model else None
    if not loggp:
        return None
    names = (("L", "us"), ("o_s", "us"), ("o_r", "us"), ("g", "us"), ("G", "us/B"), ("O", "us/B"),
             ("s", "B"), ("S", "B"))
    section = (entity.model.rendezvous() if entity.model else None) or {}  # the raw section: it keeps the intervals
    cells = []
    for k, _ in names:
        value = loggp.get(k)
        cell = number(value, 4) if isinstance(value, (int, float)) else "–"
        interval = section.get(f"{k}_interval") if k in ("s", "S") else None
        if isinstance(interval, list) and len(interval) == 2 and isinstance(value, (int, float)):
            cell = f"{int(value)} in {describe(*interval)}"
        cells.append(cell)
    return Table(f"loggp-{entity.label}", f"{entity.label}: LogGP / LogGPS parameters",
                 [f"{k} ({u})" for k, u in names], [cells],
                 ["s: longest message sent as one short packet; S: shortest message sent by "
                  "rendezvous (models.md section 4). [a, b): the sizes measured either side of the"
                  " threshold bracket it there (refined sizes narrow it to the byte)."]
                 # a parameter the points could not give is shown as 0: say which
                 + unknown_parameters(entity.model.data.get("loggp") if entity.model else None))


def cost_value(entity: Entity, key: str, n: int, p: int) -> str:
    s = entity.series(key, p)
    measured = s.at(n) if s is not None else None
    if measured is not None:
        return number(measured)
    predicted = entity.model.time(key, n, p) if entity.model else None
    return f"{number(predicted)}*" if predicted is not None else "–"


def cost_table(entity: Entity) -> Table | None:
    keys = [k for k in collective_keys(entity) if not k.startswith("barrier")]
    if not keys:
        return None
    ps = sorted({p for k in keys for p in entity.ps(k)})
    rows = []
    for n in COST_SIZES:
        for i, key in enumerate(keys):
            rows.append([format_size(n) if i == 0 else "", key] + [cost_value(entity, key, n, p) for p in ps])
    return Table(f"cost-{entity.label}", f"{entity.label}: cost in us at 8 B, 1 KiB and 1 MiB by p",
                 ["n", "operation"] + [f"p = {p}" for p in ps], rows,
                 ["Measured median where this exact size was measured; '*' a model prediction; "
                  "'–' neither."])


def entity_tables(entity: Entity, rates: Rates) -> list[Table]:
    makers = (lambda: p2p_table(entity, rates), lambda: rma_table(entity, rates),
              lambda: overlap_table(entity), lambda: ranks_table(entity), lambda: late_table(entity),
              lambda: laws_table(entity),
              lambda: peaks_table(entity, rates), lambda: rcc_table(entity),
              lambda: loggp_table(entity), lambda: cost_table(entity))
    return [t for t in (make() for make in makers) if t is not None]


def failures_table(entity: Entity) -> Table | None:
    rows = [[f["kind"], f"{f['op']}{':' + f['variant'] if f.get('variant') else ''}",
             format_size(f["n_bytes"]) if f.get("n_bytes") is not None else "–", str(f["p"]),
             str(f.get("message", ""))] for f in entity.failures]
    rows += [["wrong result", f"{pt['op']}{':' + pt['variant'] if pt['variant'] else ''}",
              format_size(pt["n_bytes"]), str(pt["p"]), str(pt.get("invalid_reason") or "")]
             for pt in entity.points if not pt["valid"]]
    if not rows:
        return None
    return Table(f"failures-{entity.label}", f"{entity.label}: failures, wrong results and calls the library"
                 " lacks (kind unsupported)",
                 ["kind", "operation", "n", "p", "message"], rows)


def provenance_tables(runs: list[dict], entities: list[Entity]) -> list[Table]:
    run_rows = []
    for r in runs:
        host = r.get("host") or {}
        hosts = host.get("hostnames") or host.get("hostname") or "–"
        run_rows.append([str(r["id"]), str(r.get("started_at") or "–"), str(r.get("finished_at") or "–"),
                         str(r.get("status")), str(r.get("commchar_version")),
                         ", ".join(map(str, hosts)) if isinstance(hosts, list) else str(hosts),
                         str(host.get("cpu_model", "–")), str(host.get("cores", "–")),
                         str(host.get("os", "–")), json.dumps(r.get("options") or {}, sort_keys=True)])
    job_rows = []
    for e in entities:
        for j in e.jobs:
            timer = j.get("timer") or {}
            job_rows.append([str(j["run_id"]), e.label, str(j["p"]), str(j.get("library_version") or "–"),
                             str(j.get("mpi_version") or "–"), ", ".join(map(str, j.get("hosts") or [])),
                             str(j.get("compiler") or "–"),
                             f"{timer.get('timer', '–')} ({number(timer.get('timer_resolution_ns'))} ns)",
                             "yes" if j.get("oversubscribed") else "no",
                             " ".join(map(str, j.get("launcher_cmd") or []))])
    return [
        Table("runs", "Runs: machine, date, options", ["run", "started", "finished", "status", "commchar",
              "hosts", "CPU", "cores", "OS", "options"], run_rows),
        Table("jobs", "Jobs: library versions, launch and timer", ["run", "library", "p", "library version",
              "MPI", "hosts", "compiler", "timer (resolution)", "oversubscribed", "launch command"], job_rows),
    ]

