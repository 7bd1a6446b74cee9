"""fit_in_sample: measured points in, a typed model document (commchar.modelfile.document) out.

fit_library is the one fitting core: it fits one library's points, applying the
oversubscription policy once. fit_in_sample (the model file, its provenance) and
fit_models (the estimators for held-out predictions) both call it per library;
models/document_fit.py adds the held-out errors (fit_document, fit_points)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from commchar import ranges
from commchar.errors import InputError, UsageError
from commchar.models.coldstart import ColdStartModel
from commchar.models.first_touch import OP as FIRST_TOUCH_OP
from commchar.models.first_touch import first_touch_section
from commchar.models.copy_footprint import BASE_OP as FOOTPRINT_BASE_OP
from commchar.models.copy_footprint import OP as FOOTPRINT_OP
from commchar.models.copy_footprint import copy_footprint_section
from commchar.models.misaligned_copy import OP as SKEW_OP
from commchar.models.misaligned_copy import misaligned_copy_section
from commchar.models.noise import OP as NOISE_OP, noise_section
from commchar.models.collstart import OP as COLLSTART_OP, collective_start_section
from commchar.models.fit_provenance import fit_provenance
from commchar.models.call_means import mean_steps
from commchar.models.collective import CollectiveModel
from commchar.models.concurrency import OP as CONCURRENCY_OP, concurrency_section
from commchar.models.hockney import HockneyModel, interval
from commchar.models.inputs import check_one_sync, normalise
from commchar.models.laws import ONE_P_NOTE
from commchar.models.loggp import LogGPModel
from commchar.models.replace_copy import OP as REPLACE_OP
from commchar.models.replace_copy import SLOW as REPLACE_VARIANT
from commchar.models.replace_copy import replace_copy_section
from commchar.models.request_growth import request_growth_section, series_of
from commchar.models.self_message import OP as SELF_OP
from commchar.models.self_message import VARIANT as SELF_VARIANT
from commchar.models.self_message import self_message_section
from commchar.models.send_post import OP as POST_OP, send_post_section
from commchar.models.transport import rendezvous_copy
from commchar.models.written_send import OP as WRITTEN_OP
from commchar.models.written_send import written_send_section
from commchar.models.metrics import (
    AGGREGATE_FACTOR, BUSBW_FACTOR, aggregated, bus_bandwidth, check_units, half_peak_length,
    peak_metrics, point_to_point_metrics, r_cc, scale_bandwidth, scale_specific, unit_names)
from commchar.models.plogp import size_regimes
from commchar.models.receive_copy import (OP as EXCHANGE_OP, exchange_excess, exchange_table, exchange_times,
                                         in_state_of, rendezvous_table, second_message_table,
                                         second_message_times, with_receive_copy)
from commchar.models.overlap import overlaps
from commchar.models.regimes import DEFAULT_PENALTY, MAX_MISS, MAX_Z, SegmentedHockneyModel
from commchar.modelfile.document import ABSENT, LibraryEntry, MeanFit, ModelDocument, OperationEntry, SegmentEntry
from commchar.modelfile.schema import FORMAT, VERSION
from commchar.segment_gaps import Threshold
from commchar.vocabulary import LOGGP_OPS, P2P_OPS, UNFITTED_OPS, op_key, switches_at_threshold

FEW_P_NOTE = ("laws in p were chosen from {k} value(s) of p ({ps}): with fewer than about 5"
              " the form of a law (log p or p) is weakly determined; simpler laws were preferred")


OVERSUBSCRIBED_POLICIES = ("exclude", "include")
# A measured point the model misses by more than this is counted (errors.*.over_10pct) and
# reported in red (report/findings.py).
MISS_LIMIT = 0.10


def check_oversubscribed(policy: str) -> str:
    if policy not in OVERSUBSCRIBED_POLICIES:
        raise UsageError(f"oversubscribed must be one of {', '.join(OVERSUBSCRIBED_POLICIES)}, got {policy!r}")
    return policy


def apply_oversubscribed_policy(points: list[dict], policy: str) -> tuple[list[dict], list[dict], dict]:
    """The points to fit under `policy`, what was left out, and the oversubscribed p fitted.

    Time-shared cores measure the scheduler, not the library (10-100 ms per MPICH call
    against microseconds on dedicated cores), so by default ("exclude") a (library, op,
    variant) with dedicated points is fitted from those alone. An operation measured only
    oversubscribed, or any under "include", is fitted with them and marked.
    Returns (kept points, [{library, operation, p, points}] left out,
    {(library, op key): [oversubscribed p fitted]}).
    """
    check_oversubscribed(policy)
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for pt in points:
        groups[(pt["library"], pt["op"], pt["variant"])].append(pt)
    kept: list[dict] = []
    excluded: list[dict] = []
    fitted_over: dict[tuple[str, str], list[int]] = {}
    for (library, op, variant), pts in sorted(groups.items()):
        over = [pt for pt in pts if pt["oversubscribed"]]
        dedicated = [pt for pt in pts if not pt["oversubscribed"]]
        if over and dedicated and policy == "exclude":
            kept.extend(dedicated)
            excluded.append({"library": library, "operation": op_key(op, variant),
                             "p": sorted({pt["p"] for pt in over}), "points": len(over)})
            continue
        kept.extend(pts)
        if over:
            fitted_over[(library, op_key(op, variant))] = sorted({pt["p"] for pt in over})
    return kept, excluded, fitted_over


@dataclass
class FittedOperation:
    """One operation key's fitted model, kept for predictions (held-out checks)."""

    key: str
    kind: str
    variant: str
    model: SegmentedHockneyModel | CollectiveModel

    def predict(self, n: Any, p: Any) -> np.ndarray:
        if isinstance(self.model, CollectiveModel):
            return self.model.predict(n, p, self.variant or None)
        return self.model.predict(n)


def _p2p_metrics(model: SegmentedHockneyModel, units: str) -> dict[str, Any]:
    fits = [s["fits"][0] for s in model.segments_]
    segs = [(s["n_min"], s["n_max"], f.t_s_, f.t_b_) for s, f in zip(model.segments_, fits)]
    metrics = point_to_point_metrics(segs, units)
    first, last = fits[0].draws_, fits[-1].draws_
    k = min(len(first), len(last))
    ci: dict[str, Any] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        bw = interval(1.0 / last[:, 1], 0.95)
        pi = interval(1.0 / first[:, 0], 0.95)
        ci["Bw_as"] = [scale_bandwidth(x, units) for x in bw] if bw else None
        ci["pi_s"] = [scale_specific(x, units) for x in pi] if pi else None
        if k >= 10:
            halves = []
            for i in range(k):
                drawn = [(a, b, first[i, 0] if j == 0 else f.t_s_, last[i, 1] if j == len(segs) - 1 else f.t_b_)
                         for j, ((a, b, _, _), f) in enumerate(zip(segs, fits))]
                if len(segs) == 1:
                    drawn = [(segs[0][0], segs[0][1], first[i, 0], first[i, 1])]
                h = half_peak_length(drawn)
                if h is not None:
                    halves.append(float(h))
            nh = interval(np.array(halves), 0.95)
            ci["n_half"] = [int(round(x)) for x in nh] if nh else None
    metrics["ci95"] = ci
    return metrics


def _hockney_summary(h: HockneyModel, units: str) -> dict[str, Any]:
    ci = h.ci_
    out: dict[str, Any] = {"t_s": h.t_s_, "t_b": h.t_b_, **h.quality_,
                           "ci95": {"t_s": ci["t_s"], "t_b": ci["t_b"]}}
    derived = point_to_point_metrics([(0.0, 0.0, h.t_s_, h.t_b_)], units)
    out.update({k: derived[k] for k in ("Bw_as", "n_half", "pi_s")})
    out["ci95"]["Bw_as"] = [scale_bandwidth(x, units) for x in ci["Bw_as"]] if ci["Bw_as"] else None
    out["ci95"]["pi_s"] = [scale_specific(x, units) for x in ci["pi_s"]] if ci["pi_s"] else None
    out["ci95"]["n_half"] = [math.ceil(x) for x in ci["n_half"]] if ci["n_half"] else None
    return out


# Point-to-point regimes: as many as the noise asks for (one size may be one); the default
# run measures 24 planned sizes and up to ~30 refined ones.
P2P_MAX_SEGMENTS = 12


def _p2p_segments(model: SegmentedHockneyModel) -> tuple[SegmentEntry, ...]:
    segments = []
    for i, s in enumerate(model.segments_):
        h = s["fits"][0]
        segments.append(SegmentEntry(
            n_min=int(s["n_min"]), n_max=None if i == len(model.segments_) - 1 else int(s["n_max"]),
            t_s=h.t_s_, t_b=h.t_b_,
            fit={**h.quality_, "ci95": {"t_s": h.ci_["t_s"], "t_b": h.ci_["t_b"]}},
        ))
    return tuple(segments)


def _breakpoints(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"after": int(b["after"]), "at": int(b["at"])} for b in found]


def _selection(model: SegmentedHockneyModel) -> dict[str, Any]:
    """How the number of regimes was chosen (docs/models.md "Protocol regimes")."""
    if model.selection_ == "bic":
        return {"rule": "bic", "penalty": model.penalty, "bic": {str(k): v for k, v in model.bic_.items()}}
    return {"rule": model.selection_, "noise_floor": model.noise_floor, "confidence": model.confidence,
            "max_z": MAX_Z, "max_miss": model.max_miss or None, "chi2": {str(k): v for k, v in model.chi2_.items()}}


def _segmented(n: np.ndarray, t: np.ndarray, noise: np.ndarray, max_miss: float = MAX_MISS,
               threshold: Threshold | None = None) -> SegmentedHockneyModel:
    return SegmentedHockneyModel(max_segments=P2P_MAX_SEGMENTS, min_sizes=1, max_miss=max_miss,
                                 threshold=threshold).fit(n, t, noise=noise)


def _fit_p2p(pts: list[dict], units: str, penalty: float, threshold: Threshold | None = None
             ) -> tuple[OperationEntry, SegmentedHockneyModel, SegmentedHockneyModel | None]:
    """One point-to-point operation's entry: segments of the medians, chosen by their noise,
    and (when every point knows its mean) a `mean` fit of the means beside them."""
    n = np.array([pt["n_bytes"] for pt in pts], float)
    t = np.array([pt["t_us"] for pt in pts], float)
    noise = np.array([pt.get("noise") or 0.0 for pt in pts], float)
    model = _segmented(n, t, noise, threshold=threshold)
    spike = {(size, time) for _, size, time in model.outliers_}
    kept = np.array([(a, b) not in spike for a, b in zip(n, t)])
    single = HockneyModel().fit(n[kept], t[kept])
    segments = _p2p_segments(model)
    ps = sorted({pt["p"] for pt in pts})
    entry = OperationEntry(
        kind="p2p", n_range=[int(n.min()), int(n.max())], p_range=[ps[0], ps[-1]],
        segments=segments,
        metrics=_p2p_metrics(model, units),
        fit={"hockney": _hockney_summary(single, units), "points": int(n.size),
             "regimes": len(segments), "selection": _selection(model),
             "outliers": _outliers(model.outliers_)},
        breakpoints=_breakpoints(model.breakpoints_),
    )
    mean_model = None
    means = [pt.get("t_mean_us") for pt in pts]
    if all(isinstance(m, float) and m > 0 for m in means):
        tm = np.array(means, float)
        mean_noise = np.array([pt.get("mean_noise") or 0.0 for pt in pts], float)
        # a mean's noise is its samples' spread, tail included: it alone bounds the fit (a rare
        # descheduled sample moves a mean by more than 10% and is no regime)
        mean_model = _segmented(n, tm, mean_noise, max_miss=0.0, threshold=threshold)
        entry = replace(entry, mean=MeanFit(
            segments=_p2p_segments(mean_model),
            fit={"points": int(n.size), "regimes": len(mean_model.segments_),
                 "selection": _selection(mean_model), "outliers": _outliers(mean_model.outliers_)},
            breakpoints=_breakpoints(mean_model.breakpoints_),
        ))
    return entry, model, mean_model


def _relative_errors(predicted: np.ndarray, measured: np.ndarray, n: np.ndarray, p: np.ndarray
                     ) -> dict[str, Any]:
    err = np.abs(predicted - measured) / measured
    worst = int(np.argmax(err))
    return {"median": float(np.median(err)), "max": float(err[worst]), "points": int(err.size),
            "over_10pct": int(np.count_nonzero(err > MISS_LIMIT)),
            "worst": {"n_bytes": int(n[worst]), "p": int(p[worst]), "t_us": float(measured[worst]),
                      "predicted_us": float(predicted[worst])}}


def _in_sample(estimator: "FittedOperation", pts: list[dict], outliers: list[dict], time_key: str
               ) -> dict[str, Any] | None:
    """The operation's relative errors at its own measured points (spikes left out of the fit
    are listed in fit.outliers, not scored)."""
    left_out = {(o["n_bytes"], o["t_us"]) for o in outliers}
    use = [pt for pt in pts if isinstance(pt.get(time_key), float) and pt[time_key] > 0
           and (pt["n_bytes"], pt[time_key]) not in left_out]
    if not use:
        return None
    n = np.array([pt["n_bytes"] for pt in use], float)
    p = np.array([pt["p"] for pt in use], float)
    t = np.array([pt[time_key] for pt in use], float)
    return _relative_errors(np.asarray(estimator.predict(n, p), float), t, n, p)


def _few_p_note(ps: list[int]) -> str:
    if len(ps) == 1:
        return f"{ONE_P_NOTE} (p = {ps[0]})"
    return FEW_P_NOTE.format(k=len(ps), ps=", ".join(map(str, ps)))


def _first_sized(model: CollectiveModel) -> int:
    """The first regime with n > 0: the zero-byte regime says nothing of startup or bandwidth."""
    if model.startup_only():
        return 0
    return 1 if model.segments_[0]["n_max"] == 0 else 0


def _outliers(found: list[tuple]) -> list[dict[str, Any]]:
    out = []
    for group, n, t in found:
        where = {"variant": group[0], "p": group[1]} if isinstance(group, tuple) else {}
        out.append({**where, "n_bytes": int(n), "t_us": t})
    return out


def _collective_entries(op: str, pts: list[dict], units: str, penalty: float, threshold: Threshold | None = None
                        ) -> tuple[dict[str, OperationEntry], CollectiveModel, CollectiveModel | None]:
    """Each variant's entry: regimes of the medians chosen by their noise (shared by every
    variant and p), and (when every point knows its mean) a `mean` fit of the means beside
    them (as _fit_p2p's, with the 10% bound)."""
    n = np.array([pt["n_bytes"] for pt in pts], float)
    p = np.array([pt["p"] for pt in pts], float)
    t = np.array([pt["t_us"] for pt in pts], float)
    v = [pt["variant"] for pt in pts]
    noise = np.array([pt.get("noise") or 0.0 for pt in pts], float)
    model = CollectiveModel(penalty=penalty, op=op, threshold=threshold).fit(n, p, t, v, noise=noise)
    mean_model = None
    means = [pt.get("t_mean_us") for pt in pts]
    if all(isinstance(m, float) and m > 0 for m in means):
        mean_noise = np.array([pt.get("mean_noise") or 0.0 for pt in pts], float)
        # the mean's own noise, and (unlike point-to-point's mean fit, which prices every
        # message size) the 10% bound: a charged collective call costs exactly this fit at
        # its (n, p), so no measured mean may be missed by more than a median may
        mean_model = CollectiveModel(penalty=penalty, op=op, threshold=threshold).fit(
            n, p, np.array(means, float), v, noise=mean_noise)
    entries = {}
    for variant in model.variants_:
        sel = np.array([x == variant for x in v])
        entry = _collective_entry(op, variant, model, n[sel], p[sel], units)
        if mean_model is not None:
            entry = replace(entry, mean=MeanFit(
                segments=_collective_segments(variant, mean_model),
                fit={"points": int(np.count_nonzero(sel)), "regimes": len(mean_model.segments_),
                     **({"selection": _selection(mean_model.regimes_)} if mean_model.regimes_ else {}),
                     "outliers": [o for o in _outliers(mean_model.outliers_) if o.get("variant") == variant]},
                breakpoints=_breakpoints(mean_model.breakpoints_),
                measured=_measured_means(variant, [pt for pt, here in zip(pts, sel) if here], mean_model),
            ))
        entries[op_key(op, variant)] = entry
    return entries, model, mean_model


def _measured_means(variant: str, pts: list[dict], mean_model: CollectiveModel) -> list[dict[str, Any]]:
    """The variant's measured means per p, [{p, steps: [[n, us], ...]}] (call_means.mean_steps:
    a model of several runs has one point per run and size), the spikes the fit left out left
    out. A charged call pays these where it was measured (ModelFile.charged_time): the fit
    may miss one by up to its bound."""
    spikes = {(int(group[1]), float(size), float(t)) for group, size, t in mean_model.outliers_
              if group[0] == variant}
    kept = [pt for pt in pts if (int(pt["p"]), float(pt["n_bytes"]), float(pt["t_mean_us"])) not in spikes]
    return [{"p": q, "steps": mean_steps([pt for pt in kept if int(pt["p"]) == q])}
            for q in sorted({int(pt["p"]) for pt in kept})]


def _collective_segments(variant: str, model: CollectiveModel) -> tuple[SegmentEntry, ...]:
    segments = []
    last = len(model.segments_) - 1
    for i, seg in enumerate(model.segments_):
        laws = seg["laws"][variant]
        per_p = {str(q): dict(f) for q, f in sorted(seg["per_p"][variant].items())}
        for q, f in per_p.items():
            if int(q) in seg["t_c"] and variant == "sum":
                f["t_c"] = seg["t_c"][int(q)]
        fit: dict[str, Any] = {"per_p": per_p, "laws": {k: s.describe() for k, s in laws.items()}}
        if seg.get("notes"):
            fit["notes"] = list(seg["notes"])
        segments.append(SegmentEntry(
            n_min=int(seg["n_min"]), n_max=None if i == last else int(seg["n_max"]),
            t_s=laws["t_s"].law_.expr(), t_b=laws["t_b"].law_.expr(),
            t_c=laws["t_c"].law_.expr() if "t_c" in laws else "0", fit=fit))
    return tuple(segments)


def _collective_entry(op: str, variant: str, model: CollectiveModel, n: np.ndarray, p: np.ndarray,
                      units: str) -> OperationEntry:
    segments = _collective_segments(variant, model)
    first_laws = model.segments_[_first_sized(model)]["laws"][variant]
    last_laws = model.segments_[-1]["laws"][variant]
    op_laws = {"t_s": first_laws["t_s"].describe(), "t_b": last_laws["t_b"].describe()}
    if "t_c" in last_laws:
        op_laws["t_c"] = last_laws["t_c"].describe()
    ps = sorted(set(int(x) for x in p))
    return OperationEntry(
        kind="collective",
        n_range=[int(n.min()), int(n.max())],
        p_range=[ps[0], ps[-1]],
        segments=segments,
        laws=op_laws,
        metrics=_collective_metrics(op, variant, model, n, p, units),
        fit={"points": int(n.size), "regimes": len(segments),
             **({"selection": _selection(model.regimes_)} if model.regimes_ else {}),
             "outliers": [o for o in _outliers(model.outliers_) if o.get("variant") == variant],
             **({"note": _few_p_note(ps)} if len(ps) < 5 else {})},
        breakpoints=_breakpoints(model.breakpoints_),
    )


def _collective_metrics(op: str, variant: str, model: CollectiveModel, n: np.ndarray, p: np.ndarray,
                        units: str) -> dict[str, Any]:
    per_p: dict[str, Any] = {}
    startup_only = model.startup_only()
    transfer_variant = "nop" if variant == "sum" and "nop" in model.variants_ else variant
    for q in sorted(set(int(x) for x in p)):
        segs = []
        for seg in model.segments_[_first_sized(model):]:
            own = seg["per_p"][variant].get(q)
            xfer = seg["per_p"][transfer_variant].get(q)
            if own is not None and xfer is not None:
                segs.append((seg["n_min"], seg["n_max"], own["t_s"], xfer["t_b"]))
        if not segs:
            continue
        t_s, t_b = segs[0][2], segs[-1][3]
        row: dict[str, Any] = {"t_s": t_s, "t_b": t_b}
        if startup_only:
            row["pi_s"] = scale_specific(1.0 / t_s, units) if t_s > 0 else None
            per_p[str(q)] = row
            continue
        n_half = half_peak_length(segs)
        row.update({"Bw_as": scale_bandwidth(1.0 / t_b, units) if t_b > 0 else None, "n_half": n_half,
                    "pi_s": scale_specific(1.0 / t_s, units) if t_s > 0 else None})
        t_c = model.segments_[-1]["t_c"].get(q) if variant == "sum" else None
        if t_c is not None:
            row["t_c"] = t_c
            row["r_cc"] = r_cc(t_b, t_c)
        row.update(aggregated(op, q, t_s, t_b, n_half, units))
        n_big = float(n[p == q].max())
        row.update({k if k != "n" else "bus_n": v for k, v in
                    bus_bandwidth(op, n_big, q, float(model.predict([n_big], q, variant)[0]), units).items()})
        per_p[str(q)] = row
    out: dict[str, Any] = {"units": unit_names(units), "per_p": per_p}
    if op in AGGREGATE_FACTOR:
        out["aggregate_factor"] = AGGREGATE_FACTOR[op][1]
    if op in BUSBW_FACTOR:
        out["busbw_factor"] = BUSBW_FACTOR[op][1]
    if not startup_only:
        first, last = model.segments_[_first_sized(model)]["laws"][variant], model.segments_[-1]["laws"][variant]
        measured = tuple(float(q) for q in np.unique(p))
        ps = ranges.sample(measured[0], measured[-1], extra=measured)
        out["peak"] = peak_metrics(op, first["t_s"].predict, last["t_b"].predict, ps, units)
    return out


def imported_source(points: list[dict]) -> str | None:
    """One line naming the peer tool whose output the points were imported from (OSU, IMB), and
    that their times are its means, not medians; None for commchar's own measurements."""
    tools = sorted({f"{s.get('tool', '?').upper()} {s.get('version', '')}".strip()
                    for pt in points if isinstance(s := (pt.get("extra") or {}).get("source"), dict)})
    if not tools:
        return None
    return f"imported {', '.join(tools)} output: times are the tool's means, not medians"


def _by_key(points: list[dict], key: str) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = defaultdict(list)
    for pt in points:
        by[pt[key]].append(pt)
    return by


@dataclass
class LibraryFit:
    """One library's fit: its entry in the model document (None when nothing could be fitted),
    the estimators behind its operations (held-out predictions use them), and for
    the provenance what was skipped and what the oversubscription policy did."""

    section: LibraryEntry | None
    estimators: dict[str, FittedOperation]
    skipped: list[str]
    excluded: list[dict]  # [{library, operation, p, points}] left out by the policy
    oversubscribed_p: dict[str, list[int]]  # op key -> oversubscribed p fitted


def _outliers_of(fit: Any) -> list[dict]:
    return fit["outliers"] if isinstance(fit, dict) else []


def _with_errors(entry: OperationEntry, estimator: FittedOperation, mean: FittedOperation | None,
                 pts: list[dict]) -> OperationEntry:
    """The entry with its in-sample errors, and those of its mean fit when it has one."""
    errors: dict[str, Any] = {"in_sample": _in_sample(estimator, pts, _outliers_of(entry.fit), "t_us")}
    if mean is not None and isinstance(entry.mean, MeanFit):
        errors["mean_in_sample"] = _in_sample(mean, pts, _outliers_of(entry.mean.fit), "t_mean_us")
    return entry.with_errors(**errors)


def _fit_operations(library: str, ops: dict[str, list[dict]], units: str, penalty: float, skipped: list[str],
                    threshold: Threshold | None = None
                    ) -> tuple[dict[str, OperationEntry], dict[str, FittedOperation]]:
    """Every point-to-point and collective operation key of one library, with its estimator;
    one that cannot be fitted is skipped with a note. `threshold`: where the library's
    rendezvous threshold S lies (the rndv probe's bracket), which closes the gap holding it
    in the series whose messages are n bytes (vocabulary.switches_at_threshold)."""
    operations: dict[str, OperationEntry] = {}
    estimators: dict[str, FittedOperation] = {}
    for op, pts in sorted(ops.items()):
        if op in LOGGP_OPS or op in UNFITTED_OPS or op in (CONCURRENCY_OP, NOISE_OP, COLLSTART_OP):
            continue
        try:
            if op in P2P_OPS:
                for variant in sorted({pt["variant"] for pt in pts}):
                    key = op_key(op, variant)
                    mine = [pt for pt in pts if pt["variant"] == variant]
                    at_s = switches_at_threshold(op, variant, {pt["p"] for pt in mine})
                    entry, model, mean_model = _fit_p2p(mine, units, penalty, threshold if at_s else None)
                    estimators[key] = FittedOperation(key, "p2p", variant, model)
                    mean = None if mean_model is None else FittedOperation(key, "p2p", variant, mean_model)
                    operations[key] = _with_errors(entry, estimators[key], mean, mine)
            else:
                ps = {pt["p"] for pt in pts}
                entries, cmodel, cmean = _collective_entries(
                    op, pts, units, penalty, threshold if switches_at_threshold(op, "", ps) else None)
                operations.update(entries)
                for variant in cmodel.variants_:
                    key = op_key(op, variant)
                    estimators[key] = FittedOperation(key, "collective", variant, cmodel)
                    mine = [pt for pt in pts if pt["variant"] == variant]
                    mean = None if cmean is None else FittedOperation(key, "collective", variant, cmean)
                    operations[key] = _with_errors(operations[key], estimators[key], mean, mine)
        except InputError as exc:
            skipped.append(f"{library} {op}: {exc}")
    return operations, estimators


def fit_library(library: str, points: list[dict], *, units: str = "si",
                penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude",
                receiver_delay_us: float | None = None) -> LibraryFit:
    """The one fitting core: one library's valid, checked points, the oversubscription
    policy applied to them once, every operation fitted. An operation that cannot be
    fitted is skipped with a note; so is the library when none could be."""
    kept, excluded, fitted_over = apply_oversubscribed_policy(points, oversubscribed)
    ops = _by_key(kept, "op")
    skipped: list[str] = []
    versions = sorted({pt["library_version"] for pt in kept if pt["library_version"]})
    source = imported_source(kept)
    # the LogGP probes first: their rendezvous threshold closes the gap that holds it
    loggp_pts = [pt for op in ("loggp", "rndv") for pt in ops.get(op, [])]
    lg: LogGPModel | None = None
    if loggp_pts:
        try:
            lg = LogGPModel(receiver_delay_us=receiver_delay_us).fit(loggp_pts)
        except InputError as exc:
            skipped.append(f"{library} loggp: {exc}")
    operations, estimators = _fit_operations(library, ops, units, penalty, skipped,
                                             None if lg is None else lg.threshold())
    over_p = {key: ps for (_, key), ps in fitted_over.items()}
    operations = {key: replace(entry, oversubscribed_p=over_p[key]) if key in over_p else entry
                  for key, entry in operations.items()}
    found = overlaps(kept)
    # the LogGP section when every parameter was resolved, else the partial one
    loggp: dict[str, Any] | None = None
    partial: dict[str, Any] | None = None
    if lg is not None:
        try:
            loggp, partial = _loggp_sections(library, lg, operations)
        except InputError as exc:
            skipped.append(f"{library} loggp: {exc}")
    if loggp is not None and ops.get(EXCHANGE_OP):  # the receiver's own copy (models/receive_copy.py)
        _add_receive_copy(loggp, in_state_of(ops[EXCHANGE_OP], ops.get("pingpong", [])))
    # the probes that add to the LogGP section (or to its partial one): name -> entry
    extras: dict[str, Any] = {}
    if ops.get("coldstart"):
        extras["cold_start"] = _cold_start(ops["coldstart"], skipped, library)
        if series_of(ops["coldstart"]):  # a kernel that times its requests
            extras["request_growth"] = request_growth_section(ops["coldstart"], skipped, library)
    if ops.get(FIRST_TOUCH_OP):  # receives into never-touched memory (models/first_touch.py)
        extras["first_touch"] = first_touch_section(ops[FIRST_TOUCH_OP], skipped, library)
    if any(pt["variant"] == REPLACE_VARIANT for pt in ops.get(REPLACE_OP, [])):  # models/replace_copy.py
        extras["replace_copy"] = replace_copy_section(ops[REPLACE_OP], skipped, library)
    if ops.get(SKEW_OP):  # where a message lands in its page (models/misaligned_copy.py)
        extras["misaligned_copy"] = misaligned_copy_section(ops[SKEW_OP], skipped, library)
    if ops.get(WRITTEN_OP):  # a message its sender just wrote (models/written_send.py)
        extras["written_send"] = written_send_section(ops[WRITTEN_OP], skipped, library,
                                                      (loggp or {}).get("S"))
    if any(pt["variant"] == SELF_VARIANT for pt in ops.get(SELF_OP, [])):  # models/self_message.py
        extras["self_message"] = self_message_section(ops[SELF_OP], skipped, library)
    if ops.get(POST_OP):  # what a non-blocking send costs to post (models/send_post.py)
        extras["send_post"] = send_post_section(ops[POST_OP], skipped, library)
    if ops.get(FOOTPRINT_OP):  # copies once the buffers outgrow the caches (models/copy_footprint.py)
        extras["copy_footprint"] = copy_footprint_section(ops[FOOTPRINT_OP], ops.get(FOOTPRINT_BASE_OP, []),
                                                          skipped, library)
    if ops.get(NOISE_OP):  # the detours a busy rank suffers (models/noise.py)
        extras["noise"] = noise_section(ops[NOISE_OP], skipped, library)
    if ops.get(COLLSTART_OP):  # a communicator's first collectives (models/collstart.py)
        extras["collective_start"] = collective_start_section(ops[COLLSTART_OP], skipped, library)
    extras = {name: entry for name, entry in extras.items() if entry is not None}
    if extras:
        if loggp is not None:
            loggp.update(extras)
        else:
            partial = (partial or {}) | extras
    concurrency = None
    if ops.get(CONCURRENCY_OP):  # the node's shared bandwidth (models/concurrency.py)
        concurrency = concurrency_section(ops[CONCURRENCY_OP], library, skipped)
        if concurrency is not None and CONCURRENCY_OP in over_p:
            concurrency = concurrency | {"oversubscribed_p": over_p[CONCURRENCY_OP]}
    section: LibraryEntry | None = LibraryEntry(
        version=versions[0] if versions else "",
        imported_from=source or ABSENT,
        operations=operations,
        # informational, as metrics: how much of each non-blocking collective hid behind work
        nbc_overlap=[{"op": o.op, "p": o.p, "n": o.n_bytes, "t_pure": o.t_pure_us, "t_overlap": o.t_overlap_us,
                      "t_compute": o.t_compute_us, "overlap": round(o.fraction, 4)} for o in found] or ABSENT,
        loggp=ABSENT if loggp is None else loggp,
        loggp_partial=ABSENT if partial is None else partial,
        concurrency=ABSENT if concurrency is None else concurrency,
    )
    if not (operations or loggp is not None or partial is not None):  # the rndv probe alone gives S
        section = None
        skipped.append(f"{library}: no operation could be fitted")
    return LibraryFit(section, estimators, skipped, excluded, over_p)


def _loggp_sections(library: str, lg: LogGPModel, operations: dict[str, OperationEntry]
                    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the loggp section, None) when every LogGP parameter was resolved, else (None, the partial one)."""
    section = {k: v for k, v in lg.params_.items() if v is not None}
    for name, bracket in (("S_interval", lg.S_interval_), ("s_interval", lg.s_interval_)):
        if bracket is not None:
            section[name] = bracket
    if not {"L", "o_s", "o_r", "g", "G"} <= section.keys():
        return None, section | {"notes": lg.notes_, "receiver_delay_us": lg.delay_us_}
    copy, why = rendezvous_copy(library)
    notes = lg.notes_ + ([why] if why else [])
    full = section | {"rendezvous_copy": copy, "notes": notes, "receiver_delay_us": lg.delay_us_}
    if "pingpong:send" in operations:
        # the simulator prices each message from `regimes`: a program pays the mean of its calls
        send = operations["pingpong:send"]
        median = size_regimes(section, [seg.to_json() for seg in send.segments])
        mean = (size_regimes(section, [seg.to_json() for seg in send.mean.segments])
                if isinstance(send.mean, MeanFit) else None)
        if mean or median:
            full["regimes"] = mean or median
            full["regimes_statistic"] = "mean" if mean else "median"
        if mean and median:
            full["regimes_median"] = median
    return full, None


def _add_receive_copy(loggp: dict[str, Any], exchange: list[dict]) -> None:
    """O_r in each eager size regime of the loggp section whose exchanges were measured, the
    exchanges and the second messages each way beside the model's (`receive_copy`), and what
    the exchanges cost beyond it (`exchange_excess`)."""
    for name, statistic in (("regimes", loggp.get("regimes_statistic", "median")), ("regimes_median", "median")):
        if not loggp.get(name):
            continue
        times, second = exchange_times(exchange, statistic), second_message_times(exchange, statistic)
        loggp[name] = with_receive_copy(loggp[name], times, loggp.get("S"), second)
        L = float(loggp.get("L") or 0.0)
        sizes = exchange_table(loggp[name], times, loggp.get("S"), L)
        if name != "regimes":
            continue
        seconds = second_message_table(loggp[name], second, loggp.get("S"))
        if sizes or seconds:
            loggp["receive_copy"] = {"statistic": statistic, "sizes": sizes} | ({"second": seconds} if seconds else {})
        # what the simulator charges
        excess = exchange_excess(loggp[name], sizes, loggp.get("S"), statistic,
                                 rendezvous_table(loggp[name], times, loggp.get("S"), L), second)
        if excess is not None:
            loggp["exchange_excess"] = excess


def _fit_libraries(points: list[dict], units: str, penalty: float, oversubscribed: str,
                   receiver_delay_us: dict[str, float] | None) -> dict[str, LibraryFit]:
    """fit_library for each library of `points` (checked), in name order; invalid points left out."""
    check_oversubscribed(oversubscribed)
    valid = _by_key([pt for pt in points if pt["valid"]], "library")
    return {library: fit_library(library, pts, units=units, penalty=penalty,
                                 oversubscribed=oversubscribed,
                                 receiver_delay_us=(receiver_delay_us or {}).get(library))
            for library, pts in sorted(valid.items())}


def fit_models(points: list[dict], penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude"
               ) -> dict[str, dict[str, FittedOperation]]:
    """The fitted estimators per library and operation key (for predictions)."""
    fits = _fit_libraries(checked_points(points), "si", penalty, oversubscribed, None)
    return {library: fit.estimators for library, fit in fits.items()}


def checked_points(points: list[dict]) -> list[dict]:
    """The points normalised (commchar.models.inputs), each named by its row, one sync rule."""
    out = []
    for i, pt in enumerate(points):
        where = pt.get("row") or f"point {pt.get('point_id', i + 1)}"
        clean = normalise(pt, str(where))
        clean["row"] = where
        out.append(clean)
    check_one_sync(out)
    return out


def fit_in_sample(points: list[dict], failures: list[dict] | None = None, *, units: str = "si",
                  runs: list[dict] | None = None, receiver_delay_us: dict[str, float] | None = None,
                  penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude") -> ModelDocument:
    """Fit every library and operation in `points` (store point dicts) into a model document.

    Invalid points are left out of the fits and counted. `oversubscribed`:
    "exclude" (default) leaves oversubscribed points out wherever the same
    (library, op, variant) has dedicated ones, and lists them in provenance;
    "include" fits them too. Every operation fitted with oversubscribed points
    carries `oversubscribed_p`. An operation that cannot be fitted
    (a single size, too few points) is skipped with a note in provenance.
    `runs` ([{"db", "run_id"}]) goes into provenance; `receiver_delay_us`
    gives the rndv receiver delay per library when the points do not record it;
    `penalty` is the extra BIC charge per protocol breakpoint (docs/models.md).
    Every operation gets `errors`: its in-sample relative errors (the held-out ones
    are models/document_fit.py's).
    """
    check_units(units)
    if not (isinstance(penalty, (int, float)) and 0 <= penalty <= 1000):
        raise UsageError(f"the regime penalty must be a number in [0, 1000], got {penalty!r}")
    points = checked_points(points)
    if not points:
        raise InputError("no points to fit")
    fits = _fit_libraries(points, units, penalty, oversubscribed, receiver_delay_us)
    libraries = {library: fit.section for library, fit in fits.items() if fit.section is not None}
    skipped = [note for fit in fits.values() for note in fit.skipped]
    excluded = [entry for fit in fits.values() for entry in fit.excluded]
    if not libraries:
        wrong = sum(1 for pt in points if not pt["valid"])
        why = "; ".join(skipped) or (f"every point ({wrong}) is marked invalid" if wrong == len(points)
                                     else "no operation has enough valid points")
        raise InputError("nothing could be fitted: " + why[:300])
    over = sorted(f"{library} {key} p={q}" for library, fit in fits.items()
                  for key, ps in fit.oversubscribed_p.items() for q in ps)
    provenance = fit_provenance(points, runs=runs, failures=failures, skipped=skipped, excluded=excluded,
                                over=over, units=units, penalty=penalty, oversubscribed=oversubscribed)
    return ModelDocument(format=FORMAT, version=VERSION, units={"time": "us", "size": "B"},
                         provenance=provenance, libraries=libraries)


def _cold_start(points: list[dict], skipped: list[str], library: str) -> dict | None:
    """The cold-start parameters (the loggp section's, or beside the partial one); None when
    they could not be fitted."""
    try:
        model = ColdStartModel().fit(points)
    except InputError as exc:
        skipped.append(f"{library} coldstart: {exc}")
        return None
    return (model.params_ or {"messages": 0}) | (model.rendezvous_ or {}) | {"notes": model.notes_}
