"""Findings in words, each carrying the numbers it rests on.

Every rule here reads the measurements or the model and states what it saw
with the values, the operation and the (n, p) it saw them at, so a reader can
find the point in the tables and figures.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from commchar.core_distance import (SLOWED, by_round_trip, copy_floor, copy_pair, group_label, point_pairs, point_slowed,
                                    rtt_pair, slowed, split)
from commchar.report.adapters import FOOTPRINT_SELF, best_known_class, class_named, describe
from commchar.report import modelinfo
from commchar.report.compare import BANDS, band_ratios
from commchar.report.dataset import Entity
from commchar.vocabulary import LOGGP_OPS, format_size, format_time, is_collective, op_key
from commchar.report.units import number

VARIANCE_RATIO = 2.0  # p95 / median above this is reported as unusual variance
MODEL_MISS = 0.10     # a measured point the model misses by more than this is a red finding
LISTED = 3            # examples named per finding
SKEW_RATIO = 1.5      # a misaligned message this many times the aligned one's time is a finding
WRITTEN_RATIO = 1.2   # a message written throughout this many times the clean one's time is a finding
FOOTPRINT_RATIO = 1.2  # an exchange over many buffers this many times the one-pair one's is a finding
POST_LARGE = 64 * 1024  # the post probe's largest size from which its post is a finding ...
POST_FLAT = 2.0         # ... where it is no more than this many times the smallest size's post


@dataclass
class Finding:
    category: str  # one of ORDER
    subject: str   # the entity label, or "comparison"
    text: str


def _where(pt: dict) -> str:
    return f"{op_key(pt['op'], pt['variant'])} at n = {format_size(pt['n_bytes'])}, p = {pt['p']}"


def thresholds(e: Entity) -> list[Finding]:
    out = []
    params = modelinfo.p2p_parameters(e.model, "pingpong:send")
    for prev, seg in zip(params, params[1:]):
        # A protocol switch trades startup for per-byte cost; a per-byte cost that
        # rises with size is the message outgrowing a cache, not a new protocol.
        # (t_b is None where the model cannot be evaluated, e.g. a hand-written 1/(p-2) at p = 2.)
        cache = (seg.t_b is not None and prev.t_b is not None and seg.t_b > prev.t_b * 1.05
                 and seg.n_min >= 64 * 1024)
        kind = "regime" if cache else "protocol regime"
        why = " (the per-byte cost rises: messages outgrowing a cache, not a protocol switch)" if cache else ""
        out.append(Finding("threshold", e.label, (
            f"{e.label}: the standard send changes {kind} at {format_size(seg.n_min)} "
            f"(previous regime up to {format_size(prev.n_max) if prev.n_max is not None else '?'}): "
            f"t_s {number(prev.t_s)} → {number(seg.t_s)} us, t_b {number(prev.t_b)} → "
            f"{number(seg.t_b)} us/B{why}.")))
    loggp = (e.model.loggp() or e.model.rendezvous()) if e.model else None
    if loggp:
        raw = (e.model.rendezvous() if e.model else None) or {}
        named = [(f"{k} = {int(loggp[k])} B in {describe(*raw[f'{k}_interval'])}"
                  if isinstance(raw.get(f"{k}_interval"), list) else f"{k} = {format_size(loggp[k])}")
                 for k in ("s", "S") if isinstance(loggp.get(k), (int, float))]
        if named:
            out.append(Finding("threshold", e.label, (
                f"{e.label}: LogGPS thresholds {', '.join(named)} (s: longest single-packet message; "
                "S: shortest message the sender cannot complete before the receiver posts its receive).")))
    cold = _loggp_entry(e, "cold_start") or {}  # a model has the LogGP section or its partial one
    if cold.get("messages"):
        small = f", none of {format_size(cold['min_bytes'])} or less" if cold.get("min_bytes") else ""
        out.append(Finding("threshold", e.label, (
            f"{e.label}: each rank's first {cold['messages']} eager messages cost more than warm ones"
            f"{small}: at 2 KiB {number(_at(cold, 's', 2048))} us to send and "
            f"{number(_at(cold, 'r', 2048))} us to receive, the very first "
            f"{number(float(cold.get('first_us') or 0.0))} us more (the coldstart probe). A program of "
            "few messages runs slower than the warm parameters say; `commchar replay` charges it.")))
    first, back = (float(cold.get(k) or 0.0) for k in ("rendezvous_first_us", "rendezvous_reverse_us"))
    if first or back:
        out.append(Finding("threshold", e.label, (
            f"{e.label}: the first rendezvous message from one rank to another costs {number(first)} us "
            f"more, the first back {number(back)} us (once per pair of ranks; the coldstart probe): "
            "a program whose ranks meet many peers with large messages pays it for each; "
            "`commchar replay` charges it.")))
    noise = _loggp_entry(e, "noise") or {}
    rows = [r for r in noise.get("by_p") or [] if isinstance(r, dict) and r.get("bins")]
    if rows:
        worst = max(rows, key=lambda r: r.get("fraction") or 0.0)
        longest = max((b for r in rows for b in r["bins"]), key=lambda b: b[2])
        out.append(Finding("threshold", e.label, (
            f"{e.label}: a busy rank loses {100 * (worst.get('fraction') or 0.0):.2f}% of its time to the node's "
            f"detours at p = {worst['p']} ({worst.get('rate_per_s', 0):.0f} a second; the longest kind "
            f"{number(longest[2])} us, {longest[1]:g} a second; the noise probe, p = "
            f"{', '.join(str(r['p']) for r in rows)}). A tightly coupled program pays every rank's: "
            "`commchar replay` draws them where they hold a rank inside the library.")))
    start = _loggp_entry(e, "collective_start") or {}
    steps = [(us, k, r["p"], r.get("shared")) for r in start.get("by_p") or [] if isinstance(r, dict)
             for k, us in (r.get("calls") if r.get("shared") else
                           [s for kind in (r.get("kinds") or {}).values() for s in kind]) or []]
    if steps:
        us, k, p, shared = max(steps)
        which = "counting Bcast, Reduce, Barrier and Allreduce together" if shared else "counting its kind's"
        out.append(Finding("threshold", e.label, (
            f"{e.label}: a communicator's first collectives cost more than warm ones: call {k} ({which}) "
            f"{number(us)} us more at p = {p} (the collstart probe). A program pays it once; "
            "`commchar replay` charges it.")))
    skew = _loggp_entry(e, "misaligned_copy") or {}
    slower = [(row["ahead_us"] / row["aligned_us"], row["n"]) for row in skew.get("sizes") or []
              if isinstance(row, dict) and (row.get("aligned_us") or 0) > 0 and row.get("ahead_us")]
    if slower and max(slower)[0] >= SKEW_RATIO:
        ratio, n = max(slower)
        first = min(size for r, size in slower if r >= SKEW_RATIO)
        out.append(Finding("threshold", e.label, (
            f"{e.label}: a message whose receive buffer lies {skew.get('skew_bytes', 16)} bytes further into "
            f"its page than its send buffer costs {ratio:.1f} times as much at {format_size(n)} "
            f"({SKEW_RATIO:g} times or more from {format_size(first)}; the skew probe): allocate message "
            "buffers 64-byte aligned (posix_memalign), so that no destination lies a few bytes ahead of "
            "its source. `commchar replay` charges it to each message its trace shows so placed.")))
    out += _written_send(e)
    out += _footprint(e)
    out += _send_post(e)
    return out


def _written_send(e: Entity) -> list[Finding]:
    """What a message its sender wrote throughout just before costs beyond a clean one (the
    written probe), at the size where it is the most times as much."""
    written = _loggp_entry(e, "written_send") or {}
    rows = {variant: {row["n"]: row[f"{variant}_us"] / row["clean_us"]
                      for row in (written.get(variant) or {}).get("sizes") or []
                      if isinstance(row, dict) and (row.get("clean_us") or 0) > 0 and row.get(f"{variant}_us")}
            for variant in ("ends", "whole")}
    if not rows["whole"] or max(rows["whole"].values()) < WRITTEN_RATIO:
        return []
    ratio, n = max((r, size) for size, r in rows["whole"].items())
    ends = (f"; its first and last 8 bytes written, {rows['ends'][n]:.2f} times"
            if n in rows["ends"] else "")
    return [Finding("threshold", e.label, (
        f"{e.label}: a message of {format_size(n)} whose sender wrote every cache line of it just before "
        f"costs {ratio:.2f} times as much as the same message sent clean{ends} (the written probe): "
        "the receiver, or the library's single copy, pulls each line from the sender's cache. A "
        "benchmark's ping-pong sends clean buffers; `commchar replay` charges each message its trace "
        "shows written."))]


def _send_post(e: Entity) -> list[Finding]:
    """What MPI_Isend of the post probe's largest size costs to post, where that is a request
    to send (no more than POST_FLAT times the smallest size's post)."""
    steps = [s for s in (_loggp_entry(e, "send_post") or {}).get("steps") or []
             if isinstance(s, list) and len(s) == 2 and all(isinstance(v, (int, float)) for v in s)]
    if len(steps) < 2:
        return []
    (small, first), (large, last) = min(steps), max(steps)
    if large < POST_LARGE or not 0 < last <= POST_FLAT * first:
        return []
    blocking = e.model.time("pingpong:send", large, 2) if e.model else None
    versus = (f", where its blocking ping-pong takes {number(blocking)} us a half round trip"
              if blocking is not None and blocking > last else "")
    return [Finding("threshold", e.label, (
        f"{e.label}: MPI_Isend of {format_size(large)} returns in {number(last)} us, about what one of "
        f"{format_size(small)} takes ({number(first)} us; the post probe){versus}: a program that computes "
        "between a large MPI_Isend and its wait can hide nearly all of the message's time."))]


def _footprint(e: Entity) -> list[Finding]:
    """Copies once a rank's buffers outgrow the caches (the footprint probe), at its largest size,
    between ranks and, where measured, to oneself."""
    entry = _loggp_entry(e, "copy_footprint") or {}
    rows = [r for r in entry.get("sizes") or []
            if isinstance(r, dict) and (r.get("one_pair_us") or 0) > 0 and r.get("footprint_us")]
    if not rows:
        return []
    n = max(r["n"] for r in rows)
    paths: dict[bool, list[tuple[int, float]]] = {}  # to oneself or not -> (footprint, ratio)
    for r in rows:
        if r["n"] == n:
            paths.setdefault(str(r.get("variant") or "").startswith(FOOTPRINT_SELF), []).append(
                (r["footprint_bytes"], r["footprint_us"] / r["one_pair_us"]))
    if False not in paths or max(ratio for at in paths.values() for _, ratio in at) < FOOTPRINT_RATIO:
        return []

    def listed(at: list[tuple[int, float]]) -> str:
        return "; ".join(f"{format_size(f)}: {ratio:.2f} times" for f, ratio in sorted(at))

    to_self = f"; a rank's messages to itself: {listed(paths[True])}" if True in paths else ""
    # a whole number of bytes, as the model file's schema takes it (1081344 or 1081344.0)
    held = entry.get("held_bytes")
    held_text = (f" Up to {format_size(int(held))} a rank every size's probe took within the host's noise of one "
                 "pair: the caches hold that much, and the replay charges nothing there."
                 if isinstance(held, (int, float)) and not isinstance(held, bool) and held > 0 else "")
    return [Finding("threshold", e.label, (
        f"{e.label}: an exchange of {format_size(n)} costs more when each rank cycles through many buffers than "
        f"when it uses one pair (a rank's buffers spanning {listed(paths[False])} as much; the footprint probe)"
        f"{to_self}. A program whose message buffers outgrow the caches pays it on every "
        f"copy; `commchar replay` charges each rank by the buffers its trace shows it used.{held_text}"))]


def _loggp_entry(e: Entity, name: str) -> dict | None:
    """A probe's entry of the model's LogGP section (or its partial one), or None."""
    for section_name in ("loggp", "loggp_partial"):
        section = e.model.data.get(section_name) if e.model else None
        entry = section.get(name) if isinstance(section, dict) else None
        if isinstance(entry, dict):
            return entry
    return None


def _at(cold: dict, side: str, n: int) -> float:
    """A cold message's extra cost at n bytes to its sender ('s') or receiver ('r'), us."""
    n = min(n, cold.get("max_bytes") or n)
    return float(cold.get(f"o_{side}") or 0.0) + float(cold.get(f"O_{side}") or 0.0) * n


def _evidence(e: Entity, op: str) -> str:
    ps = sorted({p for key in e.keys() if key.partition(":")[0] == op for p in e.ps(key)})
    if not ps:
        return ""
    weak = ": weak evidence" if len(ps) < 4 else ""
    return f" (fitted on {len(ps)} process counts, p = {ps[0]}..{ps[-1]}{weak})"


def laws(e: Entity) -> list[Finding]:
    """Laws in p worse than the best-known algorithm's: the advisor's design faults when it
    ran, otherwise the model's complexity classes against models.md section 6."""
    if e.advice is not None:
        # One finding per operation; a reduction's nop variant only when its sum has no fault.
        by_op: dict[str, list] = {}
        for fault in e.advice.faults:
            by_op.setdefault(fault.op.partition(":")[0], []).append(fault)
        out = []
        for op, faults in by_op.items():
            variants = {f.op for f in faults}
            shown = [f for f in faults if not (f.op.endswith(":nop") and f.op.replace(":nop", ":sum") in variants)]
            parts = []
            for fault in shown:
                gaps = [g for g in fault.gaps if g.ratio is not None]
                gap = f", {gaps[0].ratio:.1f}× its cost at p = {gaps[0].p:g}" if gaps else ""
                parts.append(f"{fault.term}(p) = {fault.expr} is {fault.law} where {fault.algorithm} "
                             f"achieves {fault.best_law}{gap}")
            out.append(Finding("law", e.label, (
                f"{e.label}: {shown[0].op} has a law in p worse than the best-known algorithm's: "
                + "; ".join(parts) + f"{_evidence(e, op)}.")))
        return out
    out = []
    for key in e.keys():
        if not is_collective(key) or e.model is None:
            continue
        op = key.partition(":")[0]
        found = modelinfo.laws(e.model, key)
        for term in ("t_s", "t_b"):
            law = found.get(term) or {}
            have, best = class_named(law.get("complexity")), best_known_class(op, term)
            if have is not None and best is not None and have.rank > best.rank:
                out.append(Finding("law", e.label, (
                    f"{e.label}: {key} {term}(p) = {law.get('expr', '?')} is {law.get('complexity')}, "
                    f"worse than the best-known algorithm's {best.name}{_evidence(e, op)}.")))
    return out


def is_unsupported(failure: dict) -> bool:
    """A point the library has no call for (an MPI-4 operation of an MPI-3 library): recorded,
    never a failure."""
    return failure.get("kind") == "unsupported"


def unsupported(e: Entity) -> list[Finding]:
    missing = [f for f in e.failures if is_unsupported(f)]
    if not missing:
        return []
    ops = sorted({op_key(f["op"], f.get("variant") or "") for f in missing})
    reason = str(missing[0].get("message") or "")[:120]
    return [Finding("unsupported", e.label, (
        f"{e.label} does not implement {', '.join(ops[:LISTED * 2])}{' …' if len(ops) > LISTED * 2 else ''}"
        f" ({len(missing)} point(s) not measured{': ' + reason if reason else ''}). Not a failure: the"
        " library lacks the call."))]


def failures(e: Entity) -> list[Finding]:
    out = []
    by_kind = Counter(f["kind"] for f in e.failures if not is_unsupported(f))
    for kind, count in sorted(by_kind.items()):
        examples = [f for f in e.failures if f["kind"] == kind][:LISTED]
        where = "; ".join(
            f"{op_key(f['op'], f.get('variant') or '')} at "
            f"{'n = ' + format_size(f['n_bytes']) + ', ' if f.get('n_bytes') is not None else ''}p = {f['p']}"
            f" ({str(f.get('message') or '')[:120]})" for f in examples)
        out.append(Finding("failure", e.label, f"{e.label}: {count} {kind} failure(s): {where}"
                           + (" …" if count > LISTED else "") + "."))
    wrong = [pt for pt in e.points if not pt["valid"]]
    if wrong:
        where = "; ".join(f"{_where(pt)} ({pt.get('invalid_reason') or 'no detail'})" for pt in wrong[:LISTED])
        out.append(Finding("wrong-result", e.label, (
            f"{e.label} returned wrong results at {len(wrong)} point(s): {where}"
            + (" …" if len(wrong) > LISTED else "") + ". A fast wrong answer is not a result: these "
            "points are drawn as red crosses and left out of comparisons.")))
    return out


def oversubscription(e: Entity) -> list[Finding]:
    over = [pt for pt in e.points if pt["oversubscribed"]]
    if not over:
        return []
    ps = sorted({pt["p"] for pt in over})
    cores = (e.run.get("host") or {}).get("cores")
    return [Finding("oversubscribed", e.label, (
        f"{e.label}: {len(over)} of {len(e.points)} points ran oversubscribed (p = "
        f"{', '.join(map(str, ps))} on {cores if cores else 'fewer'} cores): processes time-share, so these "
        "times measure the scheduler as much as the library (hollow markers in the figures)."
        + _model_stance(e)))]


def _model_stance(e: Entity) -> str:
    """What the model did with the oversubscribed points: left out, or fitted and marked."""
    if e.model is None:
        return ""
    over_keys = sorted({op_key(pt["op"], pt["variant"]) for pt in e.points if pt["oversubscribed"]})
    marked = {k: (e.model.operation(k) or {}).get("oversubscribed_p") for k in over_keys}
    fitted = [f"{k} (p = {', '.join(map(str, ps))})" for k, ps in marked.items() if ps]
    left = [k for k, ps in marked.items() if not ps and e.model.operation(k) is not None]
    text = ""
    if left:
        text += (f" The model leaves them out of {len(left)} operation(s) that also ran on dedicated cores"
                 f" ({', '.join(left[:LISTED])}{', …' if len(left) > LISTED else ''}).")
    if fitted:
        text += (f" The model was fitted with them for {', '.join(fitted[:LISTED])}"
                 f"{', …' if len(fitted) > LISTED else ''}: its predictions there include time-sharing.")
    return text


def precision(e: Entity) -> list[Finding]:
    missed = [pt for pt in e.points if not pt["precision_met"]]
    if not missed:
        return []

    def rel(pt: dict) -> float:
        t, lo, hi = pt["t_us"], pt.get("ci_lo_us"), pt.get("ci_hi_us")
        if not t or lo is None or hi is None:
            return 0.0
        return max(t - lo, hi - t) / t

    worst = sorted(missed, key=rel, reverse=True)[:LISTED]
    target = missed[0].get("precision_target")
    return [Finding("precision", e.label, (
        f"{e.label}: {len(missed)} of {len(e.points)} points did not reach the precision target"
        + (f" (95% CI of the median within ±{100 * target:.3g}%)" if target else "")
        + "; widest: " + "; ".join(f"{_where(pt)} ±{100 * rel(pt):.1f}%" for pt in worst) + "."))]


def variance(e: Entity) -> list[Finding]:
    noisy = [pt for pt in e.points if pt.get("t_p95_us") and pt["t_us"] > 0
             and pt["t_p95_us"] / pt["t_us"] > VARIANCE_RATIO]
    if not noisy:
        return []
    noisy.sort(key=lambda pt: pt["t_p95_us"] / pt["t_us"], reverse=True)
    where = "; ".join(f"{_where(pt)}: p95/median = {pt['t_p95_us'] / pt['t_us']:.1f} "
                      f"({format_time(pt['t_p95_us'])} vs {format_time(pt['t_us'])})" for pt in noisy[:LISTED])
    return [Finding("variance", e.label, (
        f"{e.label}: unusual variance at {len(noisy)} of {len(e.points)} points "
        f"(95th percentile more than {VARIANCE_RATIO:g}× the median); largest: {where}."))]


def _other_state(e: Entity) -> Callable[[dict], bool]:
    """Whether a point was measured in another core-distance state than the one its operation
    was fitted in, or on a slowed core, and its model was fitted without it (the model's record
    says which operations it left such points out of, and which it fitted in a state other than
    the main one; every operation in the main state, for a model that does not say)."""
    slow = _slowed_left_out(e)
    states = split(point_pairs(pt for pt in e.points if pt["valid"]))
    if states is None or not states.mixed:
        return slow
    left_out = e.model.left_out if e.model is not None else None
    fitted_in = {label: states.index(ns) for label, ns in
                 (e.model.fitted_state_ns if e.model is not None else {}).items()}

    def other(pt: dict) -> bool:
        label = group_label(pt["op"], pt["variant"] or "", pt["p"])
        if label in fitted_in:
            pair = rtt_pair(pt.get("extra"))
            return pair is not None and states.state_of(pair) != fitted_in[label]
        return slow(pt) or not states.in_main(pt.get("extra")) and (left_out is None or label in left_out)
    return other


def _slowed_left_out(e: Entity) -> Callable[[dict], bool]:
    """Whether the fit left a point out as measured on a slowed core (the model's record)."""
    record = e.model.slowed if e.model is not None else None
    if not record or not isinstance(record.get("copy_floor_ns"), (int, float)):
        return lambda pt: False
    floor, left = float(record["copy_floor_ns"]), record.get("left_out_by_operation") or {}
    return lambda pt: group_label(pt["op"], pt["variant"] or "", pt["p"]) in left and point_slowed(pt, floor)


def core_distance(e: Entity) -> list[Finding]:
    """The host moved ranks 0 and 1 between states during the run (commchar.core_distance)."""
    states = split(point_pairs(pt for pt in e.points if pt["valid"]))
    if states is None or not states.mixed:
        return []
    main = states.main()
    parts = [f"{len(m)} with their cores {statistics.median(m):.0f} ns apart" for m in states.members]
    other = states.in_other_states()
    return [Finding("model", e.label, (
        f"{e.label}: the host moved ranks 0 and 1 during the run: of the points, {', '.join(parts)}"
        f" (a cache line's round trip){f', and {states.changed} moved while measured' if states.changed else ''}."
        f" Times on one node follow that distance, so the {other} point(s) outside the main state"
        f" ({statistics.median(states.members[main]):.0f} ns) describe another machine: the model is fitted"
        " without them wherever enough of the operation's points remain (its provenance says where), and"
        " the points it left out are not scored (docs/method.md, \"Where the ranks' cores are\")."
        f"{_fitted_elsewhere(e)}"))]


def slowed_cores(e: Entity) -> list[Finding]:
    """The host slowed a core of rank 0 or 1 during some points (commchar.core_distance.slowed)."""
    copies = [pair for pt in e.points if pt["valid"] and (pair := copy_pair(pt.get("extra"))) is not None]
    floor = copy_floor(copies)
    hit = [max(pair) for pair in copies if slowed(pair, floor)]
    if floor is None or not hit:
        return []
    return [Finding("variance", e.label, (
        f"{e.label}: the host slowed a core of rank 0 or 1 during {len(hit)} of {len(copies)} points: a copy of"
        f" 4 KiB within a rank's L1 cache took {floor:.0f} ns on full-speed cores and up to {max(hit):.0f} ns"
        f" at those points (more than {SLOWED:.2f}× it), as when the host runs another guest's thread on the"
        " core's other hyperthread. Their times may lie tens of percent above the others': the model is"
        " fitted without them wherever an operation keeps enough full-speed points (its provenance says"
        " where), those left out are not scored, and a program run on such a host pays either speed"
        " (commchar validate runs a program again while a core is slowed; docs/method.md,"
        " \"A slowed core\")."))]


def _fitted_elsewhere(e: Entity) -> str:
    """The operations the fit took from another state, where most of their own points lie."""
    own = e.model.fitted_state_ns if e.model is not None else {}
    if not own:
        return ""
    listed = "; ".join(f"{ns:.0f} ns: {', '.join(labels)}" for ns, labels in by_round_trip(own))
    return (f" Operations measured mostly in another state are fitted in that state, their model one of"
            f" that state, not the main one ({listed}): measure them again to model the main state.")


def model_misses(e: Entity) -> list[Finding]:
    if e.model is None:
        return []
    misses = []
    unscored = 0
    scored: Counter[str] = Counter()
    other_state = _other_state(e)
    for pt in e.points:
        key = op_key(pt["op"], pt["variant"])
        if not pt["valid"] or key.partition(":")[0] in LOGGP_OPS or pt["t_us"] <= 0 or other_state(pt):
            continue
        if pt["oversubscribed"] and not (e.model.operation(key) or {}).get("oversubscribed_p"):
            unscored += 1  # left out of the fit: a dedicated-core model says nothing of time-sharing
            continue
        predicted = e.model.time(key, pt["n_bytes"], pt["p"])
        if predicted is not None:
            scored[key] += 1
            err = (predicted - pt["t_us"]) / pt["t_us"]
            if abs(err) > MODEL_MISS:
                misses.append((abs(err), err, pt, predicted))
    if not misses:
        return []
    out = []
    by_key: dict[str, list] = {}
    for miss in sorted(misses, key=lambda m: m[0], reverse=True):
        by_key.setdefault(op_key(miss[2]["op"], miss[2]["variant"]), []).append(miss)
    for key, found in sorted(by_key.items(), key=lambda kv: -kv[1][0][0]):
        where = "; ".join(f"n = {format_size(pt['n_bytes'])}, p = {pt['p']}: model {format_time(pred)} vs "
                          f"measured {format_time(pt['t_us'])} ({100 * err:+.0f}%)" for _, err, pt, pred in found[:LISTED])
        out.append(Finding("model", e.label, (
            f"{e.label}: the model of {key} misses {len(found)} of its {scored[key]} measured point(s) by more"
            f" than {100 * MODEL_MISS:.0f}%; largest: {where}.")))
    if unscored:
        out[-1].text += f" {unscored} oversubscribed point(s) the model left out are not scored."
    return out


def exchange_misses(e: Entity) -> list[Finding]:
    """The simulator's simultaneous exchange against the measured one at each eager size
    (`loggp.receive_copy`, models/receive_copy.py): what a replay charges two ranks that
    exchange at once, where it misses by more than MODEL_MISS."""
    table = _loggp_entry(e, "receive_copy")
    sizes = [row for row in (table or {}).get("sizes") or [] if row.get("exchange_us")]
    misses = sorted((((row["model_us"] - row["exchange_us"]) / row["exchange_us"], row) for row in sizes
                     if abs(row["model_us"] - row["exchange_us"]) > MODEL_MISS * row["exchange_us"]),
                    key=lambda m: -abs(m[0]))  # the largest first
    if not misses:
        return []
    where = "; ".join(f"n = {format_size(row['n'])}: replayed {format_time(row['model_us'])} vs measured "
                      f"{format_time(row['exchange_us'])} ({100 * err:+.0f}%)" for err, row in misses[:LISTED])
    inherit = ("Replays of programs that exchange at these sizes inherit it (the model file's "
               "loggp.receive_copy)." if not _loggp_entry(e, "exchange_excess") else
               "A replay charges each MPI_Sendrecv and MPI_Sendrecv_replace what the exchange took beyond the "
               "model (loggp.exchange_excess); exchanges by Isend and Irecv at these sizes inherit the miss "
               "(the model file's loggp.receive_copy).")
    return [Finding("model", e.label, (
        f"{e.label}: the simulator's exchange of two ranks at once (LogGPS, eager, X(n)) misses {len(misses)} of "
        f"the {len(sizes)} exchange size(s) measured by more than {100 * MODEL_MISS:.0f}%; largest: {where}. "
        + inherit))]


def comparison(entities: list[Entity]) -> list[Finding]:
    if len(entities) < 2:
        return []
    ref, out = entities[0], []
    for other in entities[1:]:
        ratios = band_ratios(ref, other)
        for _, _, band in BANDS:
            in_band = [r for r in ratios if r.band == band]
            if not in_band:
                continue
            faster = [r for r in in_band if r.ratio < 1 / 1.05]
            slower = [r for r in in_band if r.ratio > 1.05]
            geo = math.exp(sum(math.log(r.ratio) for r in in_band) / len(in_band))
            biggest = max(in_band, key=lambda r: abs(math.log(r.ratio)))
            over = sum(1 for r in in_band if r.oversubscribed)
            out.append(Finding("comparison", "comparison", (
                f"{band}: {other.label} is faster than {ref.label} (the reference) in {len(faster)} and slower in "
                f"{len(slower)} of {len(in_band)} operations (the rest within 5%); geometric-mean time ratio "
                f"{other.label}/{ref.label} = {geo:.3g}; largest gap {biggest.key} at p = {biggest.p}: "
                f"{biggest.ratio:.3g} (widest single size {format_size(biggest.worst_n)}: "
                f"{biggest.worst_ratio:.3g})"
                + (f"; {over} of these operations only ran oversubscribed" if over else "") + ".")))
    return out


# What a reader needs first: how well the model predicts, then what is slow, then what is
# wrong; the rest are details. GROUPS names the headings the report shows them under.
ORDER = ("model", "comparison", "law", "wrong-result", "failure", "threshold", "oversubscribed", "precision",
         "variance", "unsupported")
GROUPS = (("How well the model predicts", ("model",)),
          ("What is slow", ("comparison", "law")),
          ("What is wrong", ("wrong-result", "failure")),
          ("Details", ("threshold", "oversubscribed", "precision", "variance", "unsupported")))


def all_findings(entities: list[Entity], compared: list[Entity] | None = None) -> list[Finding]:
    """Every finding in ORDER (what matters first), entities in order within a kind.

    compared: the entities of the comparison, reference first (default: `entities`)."""
    out: list[Finding] = []
    for e in entities:
        for rule in (failures, core_distance, slowed_cores, oversubscription, thresholds, laws, precision, variance, model_misses,
                     exchange_misses, unsupported):
            out.extend(rule(e))
    out.extend(comparison(entities if compared is None else compared))
    return sorted(out, key=lambda f: ORDER.index(f.category))

