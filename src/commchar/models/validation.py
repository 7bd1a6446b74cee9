"""Held-out prediction error: fit without some sizes and some p, predict them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any, Iterable

import numpy as np

from commchar.errors import InputError, UsageError
from commchar.modelfile.document import ModelDocument
from commchar.models.assemble import MISS_LIMIT, apply_oversubscribed_policy, fit_models
from commchar.models.core_distance_policy import keep_one_state
from commchar.vocabulary import LOGGP_OPS, P2P_OPS, op_key
from commchar.models.regimes import DEFAULT_PENALTY


def split_holdout(points: list[dict], every: int, hold_p: Iterable[int]) -> tuple[list[dict], list[dict]]:
    """(train, test): in each (library, op, variant, p) series the interior sizes at
    positions every//2, every//2 + every, ... are held out; so is every point at a p in hold_p
    (collectives only: point-to-point uses ranks 0 and 1 whatever p is)."""
    if every < 2:
        raise UsageError(f"--holdout-sizes must be at least 2, got {every}")
    hold = set(int(p) for p in hold_p)
    series: dict[tuple, list[int]] = defaultdict(list)
    for pt in points:
        series[(pt["library"], pt["op"], pt["variant"], pt["p"])].append(pt["n_bytes"])
    held_sizes: dict[tuple, set[int]] = {}
    for key, sizes in series.items():
        distinct = sorted(set(sizes))
        interior = distinct[1:-1]
        held_sizes[key] = {n for i, n in enumerate(interior) if i % every == every // 2}
    train, test = [], []
    for pt in points:
        key = (pt["library"], pt["op"], pt["variant"], pt["p"])
        p2p = pt["op"] in P2P_OPS
        if pt["op"] in LOGGP_OPS or not pt.get("valid", True):
            continue
        if (pt["p"] in hold and not p2p) or pt["n_bytes"] in held_sizes[key]:
            test.append(pt)
        else:
            train.append(pt)
    if not test:
        raise UsageError("nothing held out: too few sizes (use a smaller --holdout-sizes) or no such p")
    return train, test


def neighbour_floor(train: list[dict], test: list[dict]) -> float | None:
    """Median relative error of a model-free guess: each held-out size predicted by
    log-log interpolation between the measured sizes around it at the same p.

    It measures how smooth the measurements themselves are; no model of a few
    parameters can be expected to do much better on the same data.
    """
    series: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for pt in train:
        series[(pt["library"], pt["op"], pt["variant"], pt["p"])].append((pt["n_bytes"], pt["t_us"]))
    errors = []
    for pt in test:
        known = sorted(series.get((pt["library"], pt["op"], pt["variant"], pt["p"]), []))
        n = np.array([a for a, _ in known], dtype=float)
        i = int(np.searchsorted(n, pt["n_bytes"]))
        if i == 0 or i >= n.size:
            continue
        x0, x1, x = np.log(n[i - 1] + 1), np.log(n[i] + 1), np.log(pt["n_bytes"] + 1)
        y0, y1 = np.log(known[i - 1][1]), np.log(known[i][1])
        guess = float(np.exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0)))
        errors.append(abs(guess - pt["t_us"]) / pt["t_us"])
    return float(np.median(errors)) if errors else None


def holdout_errors(points: list[dict], every: int = 3, hold_p: Iterable[int] = (),
                   penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude") -> dict[str, Any]:
    """Median relative error of predictions at held-out points, per operation and overall.

    `oversubscribed` is the fit's policy (fit_points): points it leaves out of the fit are
    neither trained on nor scored (a dedicated-core model says nothing of time-shared cores);
    nor are those the fit leaves out as measured in another state of the ranks' cores
    (models/core_distance_policy.py).
    """
    hold_p = set(int(p) for p in hold_p)  # read twice below: a one-shot iterable would be empty the second time
    points, _ = keep_one_state([pt for pt in points if pt.get("valid", True)])
    points, _, _ = apply_oversubscribed_policy(points, oversubscribed)
    train, test = split_holdout(points, every, hold_p)
    models = fit_models(train, penalty, oversubscribed)
    per_op: dict[tuple[str, str], list[float]] = defaultdict(list)
    kinds: dict[str, list[float]] = defaultdict(list)
    missing = set()
    for pt in test:
        key = op_key(pt["op"], pt["variant"])
        fitted = models.get(pt["library"], {}).get(key)
        if fitted is None:
            missing.add(f"{pt['library']} {key}")
            continue
        pred = float(fitted.predict([pt["n_bytes"]], pt["p"])[0])
        err = abs(pred - pt["t_us"]) / pt["t_us"]
        per_op[(pt["library"], key)].append(err)
        held_p = pt["p"] in hold_p and fitted.kind == "collective"
        kinds["held-out p" if held_p else "held-out sizes"].append(err)
    if not per_op:
        raise InputError("no held-out point could be predicted")
    return _summary(per_op, kinds, train, test, missing)


def _summary(per_op: dict[tuple[str, str], list[float]], kinds: dict[str, list[float]], train: list[dict],
             test: list[dict], missing: set[str]) -> dict[str, Any]:
    everything = [e for errs in per_op.values() for e in errs]
    return {
        "overall": {"median": float(np.median(everything)), "points": len(everything),
                    "p90": float(np.percentile(everything, 90))},
        "by_kind": {k: {"median": float(np.median(v)), "points": len(v)} for k, v in kinds.items()},
        "per_operation": {f"{lib} {key}": _errors(v) for (lib, key), v in sorted(per_op.items())},
        "by_library": {lib: {key: _errors(v) for (lib2, key), v in sorted(per_op.items()) if lib2 == lib}
                       for lib in sorted({lib for lib, _ in per_op})},
        "train_points": len(train),
        "neighbour_floor": neighbour_floor(train, test),
        "not_predicted": sorted(missing),
    }


def _errors(errs: list[float]) -> dict[str, Any]:
    return {"median": float(np.median(errs)), "max": float(np.max(errs)), "points": len(errs),
            "over_10pct": int(np.count_nonzero(np.asarray(errs) > MISS_LIMIT))}


def add_held_out(model: ModelDocument, points: list[dict], every: int = 3, penalty: float = DEFAULT_PENALTY,
                 oversubscribed: str = "exclude") -> ModelDocument:
    """The model with each operation's held-out error (every `every`-th interior size left out
    of a second fit) in its `errors.held_out`; nothing where too few sizes leave none to hold out."""
    try:
        result = holdout_errors(points, every, (), penalty, oversubscribed)
    except (UsageError, InputError):
        return model
    for library, ops in result["by_library"].items():
        entry = model.libraries.get(library)
        if entry is None:
            continue
        operations = {key: op.with_errors(held_out=ops[key] | {"every": every}) if key in ops else op
                      for key, op in entry.operations.items()}
        model = model.with_library(library, replace(entry, operations=operations))
    return model
