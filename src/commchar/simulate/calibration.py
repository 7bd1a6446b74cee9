"""Calibrating the simulator from a fitted model: reduction cost and per-call collective costs.

`calibrated(model, points, call_costs=...)` is what `commchar fit` and `commchar validate`
call: the call costs (where asked) and a burst's exchange excess (simulate/burst.py), or a
note in the provenance where the simulator is missing. `add_call_costs(model, points)`
returns a copy of a model document
(commchar.modelfile.document) whose libraries' loggp sections hold `call_costs`
(docs/model-format.md): for each collective measured at a
dedicated p, the simulator runs the algorithm the library chooses there
(`selection.choose`) at every measured size without call costs, and
`models.callcost.CallCostModel` fits what the measured times add to that.
One simulator process (`binary.Session`) answers every run of a model: it
reads the model once.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from typing import Any, Callable

import numpy as np

from commchar.modelfile.document import ModelDocument
from commchar.models.callcost import DEFAULT_CALL_PENALTY, CallCostModel
from commchar.models.regimes import DEFAULT_OUTLIER_FACTOR, spikes
from commchar.simulate import selection
from commchar.simulate.binary import Session
from commchar.vocabulary import DEFAULT_VARIANTS


def gamma_us(model: Any, library: str) -> float | None:
    """Computation per reduced byte (us/B) at p = 2 from a loaded model: the long-message
    time of reduce:sum minus reduce:nop over n (the model's t_c at p = 2). The loggp
    section holds transfer parameters only, and a calibrated reduction without its
    arithmetic would run fast by exactly this term."""
    if not {"reduce:sum", "reduce:nop"} <= set(model.operations(library)):
        return None
    fitted = model.n_range(library, "reduce:sum")
    n = fitted[1] if fitted and fitted[1] > 0 else float(1 << 20)
    t_c_us = (model.time(library, "reduce:sum", n, 2).t_us - model.time(library, "reduce:nop", n, 2).t_us) / n
    return max(t_c_us, 0.0)


def simulate_bare(sim: Session, model_path: str, library: str, algorithm: str, n: int, p: int,
                  gamma: float | None) -> float:
    """The simulated time (us) of one call without the model's call costs."""
    argv = ["--model", model_path, "--library", library, "--unit", "us", "--collective", algorithm,
            "--n", str(n), "--p", str(p), "--call-costs", "off"]
    if gamma is not None:
        argv.append(f"--gamma={gamma!r}")
    return float(sim.run(argv)["makespan"])


def dedicated_series(points: list[dict], library: str) -> tuple[int | None, dict[str, dict[int, float]]]:
    """The largest dedicated p of the library's collectives and, per operation, n -> mean time there
    (the expected cost of a call, which a program's sum of calls pays; the median where the mean
    is not known)."""
    chosen = [pt for pt in points if pt["library"] == library and pt.get("valid", True)
              and not pt.get("oversubscribed") and pt["op"] in selection.OPERATIONS
              and pt.get("variant", "") == DEFAULT_VARIANTS.get(pt["op"], "")]  # a reduction's sum: its arithmetic is gamma
    if not chosen:
        return None, {}
    p = max(pt["p"] for pt in chosen)
    series: dict[str, dict[int, float]] = defaultdict(dict)
    for pt in chosen:
        n = int(pt["n_bytes"])
        # zero-byte calls return at once (no message at all); barrier has only n = 0
        t_us = float(pt.get("t_mean_us") or pt["t_us"])
        if pt["p"] == p and t_us > 0 and (n > 0 or pt["op"] == "barrier"):
            series[pt["op"]][n] = t_us
    # a descheduled point (10x what its neighbours allow) is the machine, not the library:
    # the same rule the collective fits use
    for op, times in series.items():
        sizes = np.array(sorted(times), dtype=float)
        spiked = spikes(sizes, np.array([times[int(n)] for n in sizes]), DEFAULT_OUTLIER_FACTOR)
        for n in sizes[spiked]:
            del times[int(n)]
    return p, {op: times for op, times in series.items() if times}


def fit_library(sim: Session, model_path: str, library: str, points: list[dict], gamma: float | None,
                penalty: float = DEFAULT_CALL_PENALTY) -> dict[str, Any] | None:
    """The `call_costs` section of one library, or None when it measured no collective."""
    p, series = dedicated_series(points, library)
    if p is None or not series:
        return None
    jobs = [(op, n, selection.choose(library, op, n, p)) for op, times in sorted(series.items())
            for n in sorted(times)]
    bare = [simulate_bare(sim, model_path, library, algorithm, n, p, gamma) for _, n, algorithm in jobs]
    by_op: dict[str, list[tuple[int, float, float, str]]] = defaultdict(list)
    for (op, n, algorithm), b in zip(jobs, bare):
        by_op[op].append((n, series[op][n], b, algorithm))
    ops: dict[str, Any] = {}
    for op, rows in by_op.items():
        fitted = CallCostModel(penalty=penalty).fit([r[0] for r in rows], [r[1] for r in rows],
                                                    [r[2] for r in rows])
        segments: list[dict[str, Any]] = [dict(seg) for seg in fitted.segments_]
        bare_of = {r[0]: r[2] for r in rows}

        def bare_at(n: int, op: str = op) -> float:
            return simulate_bare(sim, model_path, library, selection.choose(library, op, n, p), n, p, gamma)

        for lower, upper in zip(segments, segments[1:]):
            sizes = sorted(n for n in bare_of if lower["n_min"] <= n <= lower["n_max"])
            if len(sizes) >= 2:
                switch = bare_switch(bare_at, (sizes[-2], bare_of[sizes[-2]]), (sizes[-1], bare_of[sizes[-1]]),
                                     upper["n_min"])
                if switch is not None:
                    lower["n_max"], upper["n_min"] = switch - 1, switch
        ops[op] = [{"n_min": seg["n_min"], "n_max": seg["n_max"], "fixed": seg["fixed"],
                    "per_byte": seg["per_byte"], "scale": seg["scale"],
                    "fit": {"points": seg["points"], "max_rel_residual": seg["max_rel_residual"]}}
                   for seg in segments]
    return {"p": p, "variant": "sum for reductions", "ops": ops,
            "notes": ["fitted from the measured collectives themselves at this p: T(n) = fixed +"
                      " per_byte * n + scale * simulated(n) of the algorithm the library chooses"
                      " (docs/models.md)"]}


def bare_switch(bare_at: Callable[[int], float], before: tuple[int, float], last: tuple[int, float],
                next_size: int, tolerance: float = 0.005) -> int | None:
    """The first size after `last` where the bare simulated time leaves the line through
    `before` and `last`, searched up to `next_size` (the next measured size); None when it
    stays on it. Between two segments fitted from measured sizes, the call costs switch
    where the simulated messages switch protocol or algorithm (the ping-pong regimes know
    where), not at the midpoint: a size the run did not measure takes the right side."""
    (n0, t0), (n1, t1) = before, last
    slope = (t1 - t0) / (n1 - n0)

    def on_line(n: int) -> bool:
        expected = t1 + slope * (n - n1)
        return abs(bare_at(n) - expected) <= tolerance * max(abs(expected), 1e-9)

    if on_line(next_size):
        return None
    lo, hi = n1, next_size  # on the line at lo, off it at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if on_line(mid):
            lo = mid
        else:
            hi = mid
    return hi


def add_call_costs(model: ModelDocument, points: list[dict],
                   penalty: float = DEFAULT_CALL_PENALTY) -> tuple[ModelDocument, list[str]]:
    """`model` with loggp.call_costs in every library that has a loggp section, and notes on
    those that could not have them."""
    from commchar.modelfile import load, save
    from commchar.models.inputs import normalise

    points = [normalise(pt, f"point {i + 1}") for i, pt in enumerate(points)]
    notes: list[str] = []
    calibrated = model
    with tempfile.TemporaryDirectory(prefix="commchar-cal-") as tmp, Session() as sim:
        path = os.path.join(tmp, "model.json")
        save(model, path)  # the simulator reads the model as a file, written the one way files are
        loaded = load(path)
        for library, lib in model.libraries.items():
            if not isinstance(lib.loggp, dict):
                continue
            if selection.rules_for(library) is None:
                notes.append(f"{library}: no collective selection rules for this library: no call costs")
                continue
            section = fit_library(sim, path, library, points, gamma_us(loaded, library), penalty)
            if section is None:
                notes.append(f"{library}: no collective measured at a dedicated p: no call costs")
                continue
            calibrated = calibrated.with_library(library, lib.with_loggp(call_costs=section))
    return calibrated, notes


def calibrated(model: ModelDocument, points: list[dict], *, call_costs: bool) -> ModelDocument:
    """`model` with what needs the simulator: per-call collective costs (where `call_costs`)
    and a burst's exchange excess (simulate/burst.py); without the simulator the model is
    complete but uncalibrated, and its provenance says so."""
    from commchar.simulate.binary import SimulationError, find_binary
    from commchar.simulate.burst import add_burst_excess

    try:
        find_binary()
    except SimulationError as exc:
        what = "call costs and the burst's exchange excess" if call_costs else "the burst's exchange excess"
        return model.with_skipped([f"{what} not fitted: {exc}"])
    notes: list[str] = []
    if call_costs:
        model, notes = add_call_costs(model, points)
    return add_burst_excess(model, points).with_skipped(notes)
