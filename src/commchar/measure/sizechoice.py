"""How a run's sizes were chosen, read back from its store: the rule, and per series
(library, operation, variant, p) the sizes of each round with the precision each
was measured to, and under the adaptive rule the model's segments when it
stopped with the 95% CI of each parameter (measure/adaptive.py).

Round 0 is the rule's planned points (the coarse grid under adaptive); round k
the k-th job of refined points of the series' library and p (a crashed job's
relaunch counts as a round of its own).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from commchar.measure import adaptive
from commchar.measure.plan import ADAPTIVE, DEFAULT_MIN_REPS, size_rule
from commchar.store import Store
from commchar.vocabulary import op_key

RULES = {
    "adaptive": ("a coarse grid (0, 1 B and every 4th power of two, and the largest size; its points"
                 f" to {adaptive.COARSE_FACTOR:g} x --precision where the rule chooses the sizes), then"
                 f" rounds adding sizes ({adaptive.LOOSE_FACTOR:g} x --precision) where the segments' model"
                 " is uncertain: a breakpoint whose neighbouring segments disagree, a gap wider than 2-fold"
                 f" below {adaptive.CHEAP_BYTES // 1024} KiB and {adaptive.MAX_GAP:g}-fold above, a new"
                 " size off the previous model beyond its noise, a segment whose predicted time is not"
                 " known to the CI target; each state of the ranks' cores a line of its own, the series'"
                 " scatter its noise floor, its added points measured to half that floor where looser than"
                 f" the target, and from {adaptive.CHEAP_BYTES // 1024} KiB on (the rendezvous probe's at"
                 f" every size) may stop with {adaptive.LONG_MIN_REPS} samples where --min-reps is its"
                 " default; the LogGP probe"
                 f" times its overheads below {adaptive.LOGGP_OVERHEADS_BELOW // 1024 // 1024} MiB only"
                 " (docs/method.md \"Which sizes\")"),
    "grid": "0 and every power of two, then sizes where the curve changes",
    "dense": "0, every power of two and the midpoints between them, then sizes where the curve changes",
    "list": "the sizes given (--sizes), then sizes where the curve changes",
}


def size_choice(db: str | Path, run_ids: Iterable[int]) -> dict[str, Any]:
    """{"runs": [{run_id, rule, description, precision, ci_target?, series: [...]}]} for the runs."""
    out: list[dict[str, Any]] = []
    with Store(db, readonly=True) as store:
        runs = [store.run(i) for i in run_ids] if run_ids else store.runs()
        for run in runs:
            # a run of applications or traces measured no sizes: nothing to say of it
            if store.connection.execute("SELECT 1 FROM points WHERE run_id = ? LIMIT 1",
                                        (run["id"],)).fetchone():
                out.append(_one_run(store, run))
    return {"runs": out}


def _one_run(store: Store, run: dict) -> dict[str, Any]:
    options = run.get("options") or {}
    sizes = options.get("sizes")
    rule = (size_rule(sizes) if sizes is None or isinstance(sizes, str) else None) or "list"
    precision = float(options.get("precision") or 0.01)
    rows = store.connection.execute(
        "SELECT library, op, variant, p, n_bytes, job_id, refined, precision_target, t_us, ci_lo_us,"
        " ci_hi_us, valid, oversubscribed, json_extract(extra_json, '$.min_reps') AS own_min_reps"
        " FROM points WHERE run_id = ? ORDER BY job_id, n_bytes",
        (run["id"],)).fetchall()
    refined_jobs: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in rows:
        where = (r["library"], int(r["p"]))
        if r["refined"] and r["job_id"] not in refined_jobs[where]:
            refined_jobs[where].append(r["job_id"])
    rounds: dict[tuple[str, str, str, int], dict[int, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        key = (r["library"], r["op"], r["variant"] or "", int(r["p"]))
        number = refined_jobs[(key[0], key[3])].index(r["job_id"]) + 1 if r["refined"] else 0
        entry = rounds[key].setdefault(number, {"round": number, "sizes": [], "precision": None})
        entry["sizes"].append(int(r["n_bytes"]))
        target = r["precision_target"]
        if isinstance(target, (int, float)) and math.isfinite(target):
            entry["precision"] = target
    record: dict[str, Any] = {"run_id": run["id"], "rule": rule, "description": RULES[rule],
                              "precision": precision, "min_reps": int(options.get("min_reps") or DEFAULT_MIN_REPS)}
    # the fewest samples a size rule held its larger points to, where not the run's
    floors = [(r["op"], int(r["n_bytes"]), int(r["own_min_reps"])) for r in rows
              if isinstance(r["own_min_reps"], int)]
    if floors:
        # from a size on, and the operations whose every repetition is slow at every size
        sized = [n for op, n, _ in floors if op not in adaptive.SLOW_AT_EVERY_SIZE]
        every = sorted({op for op, _, _ in floors if op in adaptive.SLOW_AT_EVERY_SIZE})
        record["min_reps_from"] = {**({"bytes": min(sized)} if sized else {}),
                                   "min_reps": min(m for *_, m in floors),
                                   **({"every_size": every} if every else {})}
    models: dict[tuple[str, str, str, int], adaptive.SeriesState] = {}
    if rule == ADAPTIVE:
        record["ci_target"] = adaptive.LOOSE_FACTOR * precision
        chosen = adaptive.series(store.points([run["id"]]))
        above = adaptive.scattered_thresholds(chosen)
        for key, found in chosen.items():
            models[key], _ = adaptive.analyse(found.n, found.t, found.noise, record["ci_target"],
                                              state=found.state, left_out=found.left_out,
                                              scattered_above=above.get(key[0], adaptive.SCATTERED))
    series = []
    for key in sorted(rounds):
        library, op, variant, p = key
        item: dict[str, Any] = {"library": library, "op": op_key(op, variant), "p": p,
                                "sizes": sum(len(e["sizes"]) for e in rounds[key].values()),
                                "rounds": [rounds[key][k] for k in sorted(rounds[key])]}
        state = models.get(key)
        if state is not None:
            measured = {n for e in rounds[key].values() for n in e["sizes"]}
            item["segments"] = [_finite(s) for s in state.segments]
            item["scatter"], item["noise_floor"] = state.scatter, state.noise_floor
            bound = adaptive.point_precision(record["ci_target"], state.noise_floor)
            item["ci_met"] = all(s["ci_rel"] is not None and s["ci_rel"] <= bound
                                 for s in state.segments if s["n_max"] > s["n_min"])
            # what one more round would have measured (empty: the rule had stopped)
            item["open"] = sorted(n for n in state.sizes if n not in measured)
        series.append(item)
    record["series"] = series
    return record


def _finite(segment: dict[str, Any]) -> dict[str, Any]:
    """A segment as the model file holds it: a CI half-width that is not finite is unknown."""
    rel = segment.get("ci_rel")
    return segment | {"ci_rel": rel if isinstance(rel, float) and math.isfinite(rel) else None}
