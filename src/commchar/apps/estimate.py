"""Predict stored application runs from a model file: the trace of each case's
median run (of those made with the ranks' cores in the model's state, where the runs
and the model say: chosen_run) replayed through `commchar replay`'s machinery
(commchar.simulate.replay) under LogGPS (the model's rendezvous threshold S)
and under LogGP (every message eager).

What is compared is the timed region of the program: the phases it marked
with MPI_Pcontrol levels 1 and up (setup, verification and reporting, level 0,
are left out on both sides), on the slowest rank, predicted from the replay's
per-phase breakdown and measured by the case's untraced runs (their median, of
those made in the model's state of the cores where there are such: measured_time),
the program's own clock; the traced run's time of the region, the tracer's
work included, is kept beside it (`traced_s`). A case stored with traced runs
only is measured from its trace.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from commchar.core_distance import in_recorded_main, rtt_pair
from commchar.errors import CommcharError, ModelError
from commchar.modelfile import load
from commchar.simulate.replay import ReplayRequest, replay
from commchar.store import Store
from commchar.store.traces import extract_trace
from commchar.trace import CALL_IDS, read_trace

MODELS = ("loggps", "loggp")
# point-to-point sends whose `bytes` is one message (Sendrecv's send side included)
_SENDS = ("Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend", "Issend", "Irsend", "Sendrecv",
          "Sendrecv_replace")
COMMUNICATION_PHASE = 3  # the Pcontrol level of apps/app_common.h's communication phase


@dataclass(frozen=True)
class ModelChoice:
    path: str
    library: str
    key: str  # name, content digest and collectives mode: a changed file or mode is a new model
    rendezvous_min: float | None  # the model's S in bytes, None when it has none
    # where ranks 0 and 1's cores were while the model's points were measured (the fit's
    # provenance.core_distance record of the library), None when not recorded
    cores: dict | None = None

    @classmethod
    def open(cls, path: str, library: str, collectives: str = "charged") -> "ModelChoice":
        model = load(path)
        if library not in model.libraries():
            raise ModelError(f"{path} has no model of {library} "
                             f"(it has {', '.join(model.libraries()) or 'none'})")
        loggp = model.loggp(library) or {}
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
        s = loggp.get("S")
        cores = (model.provenance.get("core_distance") or {}).get(library)
        return cls(str(path), library, f"{Path(path).name}@{digest}:{collectives}",
                   float(s) if s is not None else None, cores if isinstance(cores, dict) else None)


def _in_model_state(runs: list[dict], model: ModelChoice) -> tuple[list[dict], str]:
    """The runs made in the model's state of the cores, else every run, and which: "same", or
    "other" when none was in that state, "unknown" when the runs or the model do not say
    (commchar.core_distance). A time measured in another state is, in effect, another
    machine's."""
    found = [(r, in_recorded_main(model.cores, rtt_pair(r))) for r in runs]
    same = [r for r, state in found if state]
    if same:
        return same, "same"
    return runs, "other" if any(state is False for _, state in found) else "unknown"


def chosen_run(case: dict, model: ModelChoice) -> tuple[int, str]:
    """The trace a case is predicted from, and where its run's cores were against the model's
    points: the traced run of median time among those made in the model's state of the cores,
    else the case's median traced run (_in_model_state)."""
    runs = [r for r in case.get("results") or [] if isinstance(r, dict) and "trace_id" in r]
    chosen, label = _in_model_state(runs, model)
    if label != "same":
        return case["trace"]["median"], label
    ranked = sorted(chosen, key=lambda r: r["elapsed_s"])
    return ranked[(len(ranked) - 1) // 2]["trace_id"], label


def measured_time(case: dict, model: ModelChoice) -> tuple[float, str] | None:
    """The case's time from its untraced runs, and where their cores were against the model's
    points: the median of those made in the model's state, else of them all
    (_in_model_state); None when the case has no untraced run."""
    runs = [r for r in case.get("results") or []
            if isinstance(r, dict) and "trace_id" not in r and isinstance(r.get("elapsed_s"), (int, float))]
    if not runs:
        return None
    chosen, label = _in_model_state(runs, model)
    return float(np.median([r["elapsed_s"] for r in chosen])), label


def message_sizes(directory: Path) -> np.ndarray:
    """Bytes of every point-to-point message the traced program sent, all ranks."""
    wanted = [CALL_IDS[name] for name in _SENDS]
    trace = read_trace(directory)
    sizes = [rank.records["bytes"][np.isin(rank.records["call"], wanted)] for rank in trace.ranks]
    return np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.uint64)


def predict_case(store: Store, case: dict, model: ModelChoice,
                 collectives: str = "charged") -> dict[str, dict]:
    """Both models' prediction of one stored case (keyed 'loggps', 'loggp')."""
    trace = case.get("trace") or {}
    if "median" not in trace:
        raise ModelError(f"case {case['id']} ({case['app']} {case['config']} N={case['n']}) has "
                         "no trace: it was run with --no-trace")
    trace_id, cores = chosen_run(case, model)
    with tempfile.TemporaryDirectory(prefix="commchar-app-predict-") as directory:
        try:
            extract_trace(store, trace_id, directory)
            sizes = message_sizes(Path(directory))
            doc = replay(ReplayRequest(trace_dir=Path(directory), model_path=model.path,
                                       library=model.library, collectives=collectives))
        except CommcharError as exc:
            # the trace's temporary copy means nothing to the reader: name the file alone
            raise type(exc)(str(exc).replace(f"{directory}/", "")) from None
    over = int((sizes >= model.rendezvous_min).sum()) if model.rendezvous_min is not None else 0
    # S is the shortest message sent by rendezvous (LogGPS's "shortest synchronous message")
    messages = {"count": int(sizes.size), "largest_bytes": int(sizes.max()) if sizes.size else 0,
                "S": model.rendezvous_min, "at_least_S": over}
    modes = sorted({row["mode"] for row in doc["signatures"]})
    untraced = measured_time(case, model)
    out = {}
    for name in MODELS:
        found = summarize(doc["predictions"][name], doc["measured"])
        if untraced is not None:
            found = {**found, "traced_s": found["measured_s"], "measured_s": untraced[0]}
        out[name] = {**found, "messages": messages, "trace_id": trace_id,
                     "cores": untraced[1] if untraced is not None else cores,
                     "collectives": modes, "warnings": doc["warnings"]}
    return out


def summarize(prediction: dict, measured: dict) -> dict:
    """The timed region measured and predicted, and the predicted breakdown per rank (s),
    from a `commchar replay` document's prediction of one model (times in us)."""
    ranks = []
    for rank in prediction["ranks"]:
        timed = [ph for ph in rank["phases"] if _in_region(ph)]
        ranks.append({
            "rank": rank["rank"],
            "measured_s": sum(ph["measured"] for ph in timed) * 1e-6,
            "total_s": sum(ph["predicted"] for ph in timed) * 1e-6,
            "computation_s": sum(ph["compute"] for ph in timed) * 1e-6,
            "communication_s": sum(ph["communication"] for ph in timed) * 1e-6,
            "wait_s": sum(ph["sync_wait"] for ph in timed) * 1e-6,
            "exchange_s": sum(ph["predicted"] for ph in timed
                              if ph["level"] == COMMUNICATION_PHASE) * 1e-6,
        })
    slowest = max(ranks, key=lambda r: r["total_s"])
    return {
        "measured_s": max(r["measured_s"] for r in ranks),
        "predicted_s": slowest["total_s"],
        "predicted_overhead": slowest["exchange_s"] / slowest["total_s"] if slowest["total_s"] else 0.0,
        "measured_span_s": measured["makespan"] * 1e-6,
        "predicted_span_s": prediction["makespan"] * 1e-6,
        "rendezvous_messages": prediction["rendezvous_messages"],
        "ranks": ranks,
    }


def _in_region(phase: dict) -> bool:
    return phase.get("level") is not None and phase["level"] > 0
