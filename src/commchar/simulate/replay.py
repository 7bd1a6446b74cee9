"""Predict a traced MPI program: replay its trace in the simulator under LogGPS and LogGP.

The simulator reads the trace itself (`commchar-sim --replay DIR`) and says
which collective calls it holds (`--list-signatures`); this module prices
them from the model file, then runs the replay twice: with the model's
rendezvous threshold S (LogGPS) and with every message eager (LogGP, S
infinite). One simulator process (`binary.Session`) answers all of these: it
reads the model and the trace's files once, and builds the priced replay once
for both runs and the GOAL output. The result puts the trace's measured time per rank beside both
predictions, with each rank's predicted breakdown and per-phase times.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from commchar.errors import CommcharError, ModelError, UsageError
from commchar.modelfile import ModelFile
from commchar.simulate import selection
from commchar.simulate.binary import Session
from commchar.simulate.calibration import gamma_us
from commchar.vocabulary import format_size

FORMAT = "commchar-replay"
MODES = ("charged", "expanded")

# trace call -> (model operation, selection operation); n is already the generators' n
# (docs/simulator.md), which is the model's n (docs/models.md, section 2)
_MODEL_OP = {
    "barrier": "barrier", "bcast": "bcast", "scatter": "scatter", "scatterv": "scatter",
    "gather": "gather", "gatherv": "gather", "allgather": "allgather", "allgatherv": "allgather",
    "alltoall": "alltoall", "alltoallv": "alltoall", "reduce": "reduce", "allreduce": "allreduce",
    "reduce_scatter": "reduce_scatter", "reduce_scatter_block": "reduce_scatter",
    "scan": "scan", "exscan": "scan",
}
_MODELS = (("loggps", "LogGPS"), ("loggp", "LogGP"))
MAX_NOISE_RUNS = 99
POSTED_SENDS = ("blocking", "measured")


@dataclass(frozen=True)
class ReplayRequest:
    trace_dir: Path
    model_path: str
    library: str | None = None
    collectives: str = "charged"
    compute_scale: float = 1.0
    topology: str = "full"
    congestion: str = "off"
    emit_goal: str | None = None
    other_as_compute: bool = False
    cold_start: str = "on"  # charge each rank's first sends the model's cold start (on | off)
    # what an eager Isend costs its sender: a blocking send's o_s + (s-1)O, or the measured post
    # (loggp.send_post) where that holds the copy and costs less (blocking | measured)
    posted_sends: str = "blocking"
    noise: str = "on"  # draw the node's detours (loggp.noise) where the model has them (on | off)
    noise_runs: int = 5  # seeds drawn under noise: the run of the median makespan is the answer
    label: str | None = None  # how errors name the trace ("trace 3"): its directory is temporary


def _pct(predicted: float, measured: float) -> float | None:
    return 100.0 * (predicted - measured) / measured if measured > 0 else None


def _library(model: ModelFile, asked: str | None) -> str:
    with_loggp = [lib for lib in model.libraries() if model.loggp(lib) is not None]
    if asked:
        if asked not in model.libraries():
            raise UsageError(f"--library: the model has no library '{asked}' (it has: "
                             f"{', '.join(model.libraries())})")
        if model.loggp(asked) is None:
            raise ModelError(f"the model's library '{asked}' has no loggp section: fit it with "
                             "loggp measurements to replay a trace")
        return asked
    if len(with_loggp) == 1:
        return with_loggp[0]
    if not with_loggp:
        raise ModelError("no library of the model has a loggp section: fit one with loggp measurements")
    raise UsageError(f"the model has several libraries ({', '.join(with_loggp)}): choose one with --library")


def price_signatures(model: ModelFile, library: str, signatures: list[dict[str, Any]],
                     mode: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The simulator's costs file and one provenance row per collective signature.

    Every signature gets the algorithm the library's selection rules choose
    (commchar.simulate.selection). In charged mode it also gets the model's
    T(n, p) as its cost when the model has the operation (the expected cost of a call,
    which a program's sum of calls pays: the measured mean where the model's runs measured
    that n and p, else its `mean` fit, ModelFile.charged_time); a signature the
    model does not cover falls back to expanded, and one outside the fitted
    n or p range stays charged with the model's extrapolation warning.
    """
    entries, rows = [], []
    for sig in signatures:
        call, p, n = sig["call"], int(sig["p"]), int(sig["n"])
        op = _MODEL_OP[call]
        row: dict[str, Any] = {"call": call, "p": p, "n": n, "calls": sig.get("calls", 0),
                               "mode": "expanded", "algorithm": None, "selection": None,
                               "cost_us": None, "cost_basis": None, "warning": None}
        try:
            choice = selection.decide(library, op, n, p)
            row["algorithm"], row["selection"] = choice.algorithm, choice.source
        except UsageError as exc:  # no rules for this library: the simulator's default algorithm
            row["selection"] = str(exc)
        if mode == "charged":
            if model.has(library, op):
                # the means: a program's loop pays the sum of its calls, tail included; the
                # measured ones where the model's runs measured the size (charged_time)
                prediction = model.charged_time(library, op, n, p)
                row["mode"], row["cost_us"] = "charged", max(prediction.t_us, 0.0)
                row["cost_basis"] = prediction.basis
                if prediction.warnings:
                    row["warning"] = "; ".join(prediction.warnings)
            else:
                row["warning"] = f"the model has no {op} for {library}: expanded instead of charged"
        entries.append({"call": call, "p": p, "n": n, "cost": row["cost_us"], "algorithm": row["algorithm"]})
        rows.append(row)
    return {"format": "commchar-replay-costs", "version": 1, "unit": "us", "collectives": entries}, rows


def _base_args(req: ReplayRequest, library: str) -> list[str]:
    argv = ["--replay", str(req.trace_dir), "--model", req.model_path, "--library", library, "--unit", "us",
            "--topology", req.topology, "--congestion", req.congestion,
            f"--compute-scale={float(req.compute_scale)!r}", "--cold-start", req.cold_start,
            "--posted-sends", req.posted_sends]
    if req.other_as_compute:
        argv.append("--other-as-compute")
    return argv


def replay(req: ReplayRequest) -> dict[str, Any]:
    """Replays the trace under LogGPS and LogGP; the `commchar replay --json` document.
    Errors about the trace name it by req.label when given, not by its directory."""
    if req.label is None:
        return _replay(req)
    try:
        return _replay(req)
    except CommcharError as exc:
        text = str(exc).replace(f"{req.trace_dir}/", f"{req.label}: ").replace(str(req.trace_dir), req.label)
        exc.args = (text,)
        raise


def _replay(req: ReplayRequest) -> dict[str, Any]:
    if req.collectives not in MODES:
        raise UsageError(f"--collectives must be one of {', '.join(MODES)}, not '{req.collectives}'")
    if req.cold_start not in ("on", "off"):
        raise UsageError(f"--cold-start must be on or off, not '{req.cold_start}'")
    if req.posted_sends not in POSTED_SENDS:
        raise UsageError(f"--posted-sends must be one of {', '.join(POSTED_SENDS)}, not '{req.posted_sends}'")
    if req.noise not in ("on", "off"):
        raise UsageError(f"--noise must be on or off, not '{req.noise}'")
    if not (isinstance(req.noise_runs, int) and 1 <= req.noise_runs <= MAX_NOISE_RUNS):
        raise UsageError(f"--noise-runs must be a whole number from 1 to {MAX_NOISE_RUNS}, not {req.noise_runs}")
    if not (req.compute_scale >= 0 and req.compute_scale != float("inf")):
        raise UsageError(f"--compute-scale must be a non-negative number, not {req.compute_scale}")
    from commchar.modelfile import load
    from commchar.trace.format import check_bounds

    check_bounds(req.trace_dir)  # sizes and times the replay can represent
    model = load(req.model_path)
    library = _library(model, req.library)
    req, node_warning = _node_resource(req, model, library)
    if req.emit_goal and req.collectives != "expanded":
        raise UsageError("--emit-goal writes the expanded schedule: use --collectives expanded")
    base = _base_args(req, library)
    gamma = gamma_us(model, library)
    loggp = model.loggp(library) or {}
    results: dict[str, dict[str, Any]] = {}
    with Session() as sim, tempfile.TemporaryDirectory(prefix="commchar-replay-") as tmp:
        listed = sim.run([*base, "--list-signatures"])
        costs, rows = price_signatures(model, library, listed["signatures"], req.collectives)
        if gamma is not None:
            base.append(f"--gamma={gamma!r}")
        costs_path = Path(tmp) / "costs.json"
        costs_path.write_text(json.dumps(costs))
        # a signature the model lacks is expanded even in charged mode (its entry has no cost)
        argv = [*base, "--collectives", req.collectives, "--replay-costs", str(costs_path)]
        if req.emit_goal:
            from commchar import outfile

            with outfile.output_path(req.emit_goal) as staged:  # the policy of every output file
                sim.run([*argv, "--emit-goal", str(staged)], expect_json=False)
        seeds: list[int | None] = (list(range(1, req.noise_runs + 1)) if req.noise == "on" and model.noise(library)
                                   else [])
        spread: dict[str, list[float]] = {}
        for key, extra in (("loggps", []), ("loggp", ["--S", "inf"])):
            runs = []
            for seed in seeds or [None]:
                runs.append(sim.run([*argv, *extra, *_noise_args(seed)]))
                # the costs hold every detour: every seed alike
                if seed is not None and not drew_detours(runs[0]["params"].get("noise")):
                    break
            results[key], spread[key] = _median_run(runs)
    doc = _document(req, library, loggp, listed, rows, results)
    doc["noise"] = ({"runs": len(spread["loggps"]), **(results["loggps"]["params"].get("noise") or {}),
                     "makespans": spread} if seeds else None)
    if node_warning:
        doc["warnings"].append(node_warning)
    return doc


def drew_detours(noise: dict[str, Any] | None) -> bool:
    """Whether a replay drew detours, from its noise summary (a simulator run's
    `params.noise`, a replay document's `noise`): its model has them at the replay's rank
    count beyond those the costs of a message hold (docs/models.md, "The node's detours")."""
    return bool((noise or {}).get("fraction"))


def _noise_args(seed: int | None) -> list[str]:
    """The simulator's flags for one run: a seed of the detours' draws, or none drawn."""
    return ["--noise", "off"] if seed is None else ["--noise-seed", str(seed)]


def _median_run(runs: list[dict[str, Any]]) -> tuple[dict[str, Any], list[float]]:
    """The run of the median makespan (the lower middle of an even count), as the measured
    side is the run of the median time of its repeats, and every run's makespan."""
    ordered = sorted(runs, key=lambda r: r["makespan"])
    return ordered[(len(ordered) - 1) // 2], [r["makespan"] for r in ordered]


def _node_resource(req: ReplayRequest, model: ModelFile, library: str) -> tuple[ReplayRequest, str | None]:
    """A model with a concurrency section charges the messages between ranks of one host
    the node's shared copy bandwidth, which the simulator has at the flow level: the
    replay then runs at the flow level unless another congestion model was asked for
    (which leaves the node's bandwidth out, with a warning)."""
    if model.concurrency(library) is None:
        return req, None
    if req.congestion == "off":
        return replace(req, congestion="flow"), None
    if req.congestion == "flow":
        return req, None
    return req, (f"the model's concurrency section (the node's shared bandwidth) is charged at the flow"
                 f" level only: not charged under --congestion {req.congestion}")


def _io_note(replay: dict[str, Any]) -> list[str]:
    """MPI-IO is not modelled: its calls' time is replayed as the rank's computation."""
    calls = replay.get("io_as_compute") or []
    if not calls:
        return []
    named = ", ".join(f"{c['call']} ×{c['count']}" for c in calls)
    return [f"MPI-IO replayed as computation (its measured time): {named}"]


def charge_notes(doc: dict[str, Any]) -> list[str]:
    """What a replay document says of the copies it charged beyond the model's messages:
    misaligned ones, and those of ranks whose buffers outgrow their caches."""
    notes = []
    count = (doc.get("misaligned_copies") or {}).get("messages") or 0
    if count:
        notes.append(
            f"{count} cop{'ies' if count != 1 else 'y'} (a message received, an all-to-all's block) "
            f"landed a few bytes ahead of where {'they' if count != 1 else 'it'} left in the page "
            f"(loggp.misaligned_copy): {doc['misaligned_copies']['time']:.1f} us charged in all; message "
            "buffers allocated 64-byte aligned (posix_memalign) never pay it")
    count = (doc.get("written_sends") or {}).get("messages") or 0
    if count:
        notes.append(
            f"{count} message{'s' if count != 1 else ''} left a send buffer the program had written since its "
            f"last send from it (loggp.written_send): {doc['written_sends']['time']:.1f} us charged in all")
    count = (doc.get("footprint_copies") or {}).get("messages") or 0
    if count:
        spans = doc.get("measured", {}).get("buffer_bytes") or []
        largest = format_size(max(spans)) if spans else "?"
        notes.append(
            f"{count} message{'s' if count != 1 else ''} received by ranks whose message buffers span up to "
            f"{largest} paid what a copy costs beyond a warm one there (loggp.copy_footprint): "
            f"{doc['footprint_copies']['time']:.1f} us charged in all")
    return notes


def _document(req: ReplayRequest, library: str, loggp: dict[str, float], listed: dict[str, Any],
              rows: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    first = results["loggps"]
    measured = first["replay"]["measured"]
    wall = [m["wall"] for m in measured]
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": 1,
        "unit": "us",
        "trace": {"dir": str(req.trace_dir), "p": len(measured), "calls": listed["calls"],
                  "hosts": sorted({m["host"] for m in measured}),
                  "mpi_version": measured[0]["library"] if measured else ""},
        "model": {"path": req.model_path, "library": library, "S": loggp.get("S"),
                  "cold_start": first["params"].get("cold_start")},
        "collectives": req.collectives,
        "compute_scale": req.compute_scale,
        "posted_sends": req.posted_sends,
        "topology": first["topology"],
        "congestion": first["congestion"],
        "congestion_model": first["congestion_model"],
        "node": first["params"].get("node"),
        "signatures": rows,
        "warnings": [r["warning"] for r in rows if r["warning"]] + _io_note(first["replay"]),
        # receives whose buffer lay in the model's slow class ahead of the send buffer they matched
        "misaligned_copies": first["replay"].get("misaligned_copies") or {"messages": 0, "time": 0.0},
        # receives whose sender wrote its buffer since its last send from it
        "written_sends": first["replay"].get("written_sends") or {"messages": 0, "time": 0.0},
        # receives of ranks whose buffers outgrow their caches (the header's buffer_bytes)
        "footprint_copies": first["replay"].get("footprint_copies") or {"messages": 0, "time": 0.0},
        "measured": {"makespan": max(wall, default=0.0), "ranks": wall,
                     "buffer_bytes": [int(m.get("buffer_bytes") or 0) for m in measured],
                     "phases": [[ph["time"] for ph in m["phases"]] for m in measured]},
        "predictions": {},
    }
    for key, label in _MODELS:
        res = results[key]
        ranks = []
        for b, m in zip(res["breakdown"], measured):
            phases = [{"phase": ph["phase"], "level": ph["level"], "measured": mp["time"],
                       "predicted": ph["time"], "error_pct": _pct(ph["time"], mp["time"]),
                       "compute": ph["compute"], "communication": ph["communication"],
                       "sync_wait": ph["sync_wait"]}
                      for ph, mp in zip(b["phases"], m["phases"])]
            ranks.append({"rank": b["rank"], "measured": m["wall"], "predicted": b["finish"],
                          "error_pct": _pct(b["finish"], m["wall"]), "compute": b["compute"],
                          "communication": b["communication"], "sync_wait": b["sync_wait"],
                          "phases": phases})
        doc["predictions"][key] = {
            "model": label,
            "S": res["params"]["S"],
            "makespan": res["makespan"],
            "error_pct": _pct(res["makespan"], doc["measured"]["makespan"]),
            "messages": res["messages"],
            "rendezvous_messages": res["rendezvous_messages"],
            "events": res["events"],
            "wall_s": res["performance"]["wall_s"],
            "ranks": ranks,
        }
    return doc
