"""Validation of a model file's JSON against docs/model-format.md.

Each problem is reported as a ModelError naming its JSON path, for example
`libraries.openmpi.operations.bcast.segments[0].t_s: unexpected ')' ...`, so
whoever wrote the file (a person or `commchar fit`) can find it at once.
"""

from __future__ import annotations

import math
import re
from typing import Any

from commchar import ranges
from commchar.errors import ModelError
from commchar.modelfile.expr import Expr, constant, parse_expr
from commchar.vocabulary import WRITTEN_EXCESSES

WRITTEN_KEYS = tuple(written for written, _ in WRITTEN_EXCESSES)  # loggp.written_send's entries

# The format's name and version: written by commchar.models.assemble, checked here and by
# the simulator's reader (sim/src/params.rs MODEL_FORMAT, MODEL_VERSION). Both readers
# judge the files of tests/fixtures/modelfiles alike (tests/test_modelfile_fixtures.py).
FORMAT = "commchar-model"
VERSION = 1

OP_KEY = re.compile(r"^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$")
OP_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
KINDS = ("p2p", "collective")
LOGGP_REQUIRED = ("L", "o_s", "o_r", "g", "G")
LOGGP_OPTIONAL = ("O", "S", "s")
TERMS = ("t_s", "t_b", "t_c")
# Process counts are integers; beyond 2^53 a double no longer holds every one of them.
MAX_P = float(2**53)


def _fail(path: str, message: str) -> ModelError:
    return ModelError(f"{path}: {message}" if path else message)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _mapping(value: Any, path: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(path, f"expected a JSON object, found {type(value).__name__}")
    return value


def _number(value: Any, path: str, minimum: float | None = None) -> float:
    if not _is_number(value):
        raise _fail(path, f"expected a finite number, found {value!r}"[:200])
    if minimum is not None and value < minimum:
        raise _fail(path, f"must be >= {minimum:g}, found {value!r}")
    return float(value)


def _bytes(value: Any, path: str) -> float:
    """A size in bytes: a whole number >= 0 (the simulator counts bytes in integers)."""
    n = _number(value, path, 0)
    if not n.is_integer():
        raise _fail(path, f"expected a whole number of bytes, found {value!r}")
    return n


def term_expr(value: Any, path: str) -> Expr:
    """A t_s/t_b/t_c value (JSON number or expression string) as an Expr."""
    if _is_number(value):
        return constant(value)
    if isinstance(value, str):
        try:
            return parse_expr(value)
        except ModelError as exc:
            raise _fail(path, str(exc)) from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise _fail(path, f"expected a finite number, found {value!r}"[:200])
    raise _fail(path, f"expected a number or an expression string, found {type(value).__name__}")


def _range(value: Any, path: str, minimum: float, maximum: float = math.inf) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise _fail(path, "expected a list [low, high]")
    low = _number(value[0], f"{path}[0]", minimum)
    high = _number(value[1], f"{path}[1]", minimum)
    if high > maximum:
        raise _fail(f"{path}[1]", f"must be <= {maximum:.0f}, found {high:g}")
    if high < low:
        raise _fail(path, f"high {high:g} is below low {low:g}")
    return low, high


def _check_finite_over(expr: Expr, p_range: tuple[float, float] | None, path: str) -> None:
    """An expression must give a number at every integer p the fit saw."""
    if p_range is None:
        return
    # Every p for small ranges; ends and powers of two for large ones.
    for p in ranges.sample(p_range[0], p_range[1], every_up_to=257):
        try:
            expr.evaluate(p)
        except ModelError as exc:
            raise _fail(path, str(exc)) from None


def _validate_segments(segments: Any, path: str, p_range: tuple[float, float] | None) -> None:
    if not isinstance(segments, list) or not segments:
        raise _fail(path, "expected a non-empty list of segments")
    previous_max: float | None = None
    for i, segment in enumerate(segments):
        here = f"{path}[{i}]"
        _mapping(segment, here)
        for needed in ("n_min", "n_max", "t_s", "t_b"):
            if needed not in segment:
                raise _fail(here, f"missing '{needed}'")
        n_min = _number(segment["n_min"], f"{here}.n_min", 0)
        n_max = segment["n_max"]
        if n_max is None:
            if i != len(segments) - 1:
                raise _fail(f"{here}.n_max", "only the last segment may be unbounded (null)")
        else:
            n_max = _number(n_max, f"{here}.n_max", 0)
            if n_max < n_min:
                raise _fail(f"{here}.n_max", f"{n_max:g} is below n_min {n_min:g}")
        if previous_max is not None and n_min <= previous_max:
            raise _fail(f"{here}.n_min", f"{n_min:g} overlaps the previous segment (ends at {previous_max:g}); segments must be sorted and disjoint")
        previous_max = n_max
        for term in TERMS:
            if term in segment:
                _check_finite_over(term_expr(segment[term], f"{here}.{term}"), p_range, f"{here}.{term}")
        if "fit" in segment:
            _mapping(segment["fit"], f"{here}.fit")


def _validate_operation(op: Any, path: str) -> None:
    _mapping(op, path)
    if "segments" not in op:
        raise _fail(path, "missing 'segments'")
    kind = op.get("kind", "collective")
    if kind not in KINDS:
        raise _fail(f"{path}.kind", f"expected one of {', '.join(KINDS)}, found {kind!r}")
    if "n_range" in op:
        _range(op["n_range"], f"{path}.n_range", 0)
    p_range = _range(op["p_range"], f"{path}.p_range", 1, MAX_P) if "p_range" in op else None
    _validate_segments(op["segments"], f"{path}.segments", p_range)
    for info in ("metrics", "fit", "errors"):
        if info in op:
            _mapping(op[info], f"{path}.{info}")
    if "mean" in op:
        mean = _mapping(op["mean"], f"{path}.mean")
        if "segments" not in mean:
            raise _fail(f"{path}.mean", "missing 'segments'")
        _validate_segments(mean["segments"], f"{path}.mean.segments", p_range)
        if "measured" in mean:
            _validate_measured_means(mean["measured"], f"{path}.mean.measured")
    if "laws" in op:
        laws = _mapping(op["laws"], f"{path}.laws")
        for term, law in laws.items():
            here = f"{path}.laws.{term}"
            _mapping(law, here)
            if "expr" in law:
                term_expr(law["expr"], f"{here}.expr")
            if "complexity" in law and not isinstance(law["complexity"], str):
                raise _fail(f"{here}.complexity", "expected a string such as 'O(log p)'")


RENDEZVOUS_COPIES = ("both", "receiver")
REGIME_STATISTICS = ("mean", "median")


def _validate_loggp(loggp: Any, path: str, required: tuple[str, ...] = LOGGP_REQUIRED) -> None:
    _mapping(loggp, path)
    for name in required:
        if name not in loggp:
            raise _fail(path, f"missing '{name}'")
        _number(loggp[name], f"{path}.{name}", 0)
    for name in LOGGP_OPTIONAL + tuple(n for n in LOGGP_REQUIRED if n not in required):
        if loggp.get(name) is not None:
            _number(loggp[name], f"{path}.{name}", 0)
    for name in ("S", "s"):
        if loggp.get(f"{name}_interval") is not None:
            here = f"{path}.{name}_interval"
            low, high = _range(loggp[f"{name}_interval"], here, 0)
            if loggp.get(name) is not None and not low <= loggp[name] < high:
                raise _fail(here, f"[{low:g}, {high:g}) does not hold {name} = {loggp[name]:g}")
    if loggp.get("rendezvous_copy") is not None and loggp["rendezvous_copy"] not in RENDEZVOUS_COPIES:
        raise _fail(f"{path}.rendezvous_copy", f"expected one of {', '.join(RENDEZVOUS_COPIES)}")
    for name in ("regimes", "regimes_median"):
        if loggp.get(name) is not None:
            _validate_loggp_regimes(loggp[name], f"{path}.{name}")
    if loggp.get("regimes_statistic") not in (None, *REGIME_STATISTICS):
        raise _fail(f"{path}.regimes_statistic", f"expected one of {', '.join(REGIME_STATISTICS)}")
    if loggp.get("call_costs") is not None:
        _validate_call_costs(loggp["call_costs"], f"{path}.call_costs")
    if loggp.get("cold_start") is not None:
        _validate_cold_start(loggp["cold_start"], f"{path}.cold_start")
    if loggp.get("request_growth") is not None:
        _validate_request_growth(loggp["request_growth"], f"{path}.request_growth")
    if loggp.get("noise") is not None:
        _validate_noise(loggp["noise"], f"{path}.noise")
    if loggp.get("collective_start") is not None:
        _validate_collective_start(loggp["collective_start"], f"{path}.collective_start")
    for name in ("first_touch", "replace_copy", "misaligned_copy"):
        if loggp.get(name) is not None:
            _validate_steps(loggp[name], f"{path}.{name}")
    own = (loggp.get("misaligned_copy") or {}).get("self")
    if own is not None:  # the same of a message to oneself
        _validate_steps(own, f"{path}.misaligned_copy.self")
    if loggp.get("written_send") is not None:
        _validate_written_send(loggp["written_send"], f"{path}.written_send")
    for name in ("self_message", "send_post"):
        if loggp.get(name) is not None:
            _validate_call_means(loggp[name], f"{path}.{name}")
    if loggp.get("receive_copy") is not None:
        _validate_receive_copy(loggp["receive_copy"], f"{path}.receive_copy")
    if loggp.get("exchange_excess") is not None:
        _validate_exchange_excess(loggp["exchange_excess"], f"{path}.exchange_excess")
    if loggp.get("copy_footprint") is not None:
        _validate_copy_footprint(loggp["copy_footprint"], f"{path}.copy_footprint")


def _validate_copy_footprint(section: Any, path: str) -> None:
    """What a copy costs a byte once a rank's buffers span F bytes (models/copy_footprint.py):
    {statistic, by_size ([{n, steps: [[F, us per byte], F increasing, at least one]}], n
    increasing, at least one), self_by_size (optional, the same for messages to oneself),
    held_bytes and self_held_bytes (optional, bytes: the footprint up to which the curves
    are 0), sizes (informational)}."""
    _mapping(section, path)
    _footprint_curves(section.get("by_size"), f"{path}.by_size")
    if section.get("self_by_size") is not None:
        _footprint_curves(section["self_by_size"], f"{path}.self_by_size")
    for key in ("held_bytes", "self_held_bytes"):
        if section.get(key) is not None:
            _bytes(section[key], f"{path}.{key}")


def _footprint_curves(by_size: Any, path: str) -> None:
    if not isinstance(by_size, list) or not by_size:
        raise _fail(path, "expected a non-empty list of {n, steps}")
    previous = -1.0
    for i, entry in enumerate(by_size):
        _mapping(entry, f"{path}[{i}]")
        n = _bytes(entry.get("n"), f"{path}[{i}].n")
        if n <= previous:
            raise _fail(f"{path}[{i}].n", "sizes must increase")
        previous = n
        steps = entry.get("steps")
        if not isinstance(steps, list) or not steps:
            raise _fail(f"{path}[{i}].steps", "expected a non-empty list of [footprint bytes, us per byte]")
        _sized_pairs(steps, f"{path}[{i}].steps", "us per byte")


def _validate_exchange_excess(section: Any, path: str) -> None:
    """What a simultaneous exchange costs beyond the model (models/receive_copy.py):
    {statistic, steps ([n, us per exchange], n increasing: eager sizes), rendezvous
    (optional, the same for rendezvous sizes), burst and burst_eager (optional, [n, us per
    two messages each way that one wait completed], rendezvous and eager sizes:
    simulate/burst.py)}."""
    _mapping(section, path)
    for key, required in (("steps", True), ("rendezvous", False), ("burst", False), ("burst_eager", False)):
        steps = section.get(key)
        if steps is None and not required:
            continue
        if not isinstance(steps, list):
            raise _fail(f"{path}.{key}", "expected a list of [n, us]")
        _sized_pairs(steps, f"{path}.{key}", "us")


def _validate_receive_copy(section: Any, path: str) -> None:
    """The exchanges beside the model's (models/receive_copy.py): {statistic, sizes: [{n,
    exchange_us, model_us, loggopsim_us}], second (optional): [{n, second_us, model_us}]},
    informational."""
    _mapping(section, path)
    sizes = section.get("sizes")
    if not isinstance(sizes, list):
        raise _fail(f"{path}.sizes", "expected a list of {n, exchange_us, model_us, loggopsim_us}")
    for i, row in enumerate(sizes):
        _mapping(row, f"{path}.sizes[{i}]")
        _bytes(row.get("n"), f"{path}.sizes[{i}].n")
        for name in ("exchange_us", "model_us", "loggopsim_us"):
            _number(row.get(name), f"{path}.sizes[{i}].{name}", 0)
    second = section.get("second")
    if second is None:
        return
    if not isinstance(second, list):
        raise _fail(f"{path}.second", "expected a list of {n, second_us, model_us}")
    for i, row in enumerate(second):
        _mapping(row, f"{path}.second[{i}]")
        _bytes(row.get("n"), f"{path}.second[{i}].n")
        for name in ("second_us", "model_us"):
            _number(row.get(name), f"{path}.second[{i}].{name}", 0)


def _validate_call_means(section: Any, path: str) -> None:
    """One call's mean time by size (models/call_means.py): a message to oneself
    (self_message), the post of a non-blocking send (send_post): {steps ([n, us per call],
    n increasing, at least one), ...}."""
    _mapping(section, path)
    steps = section.get("steps")
    if not isinstance(steps, list) or not steps:
        raise _fail(f"{path}.steps", "expected a non-empty list of [n, us]")
    _sized_pairs(steps, f"{path}.steps", "us")


def _validate_measured_means(section: Any, path: str) -> None:
    """A collective's measured means (models/assemble.py): [{p, steps ([n, us per call], n
    increasing, at least one)}, ...], each p once."""
    if not isinstance(section, list):
        raise _fail(path, "expected a list of {p, steps}")
    seen: set[float] = set()
    for i, entry in enumerate(section):
        here = f"{path}[{i}]"
        _mapping(entry, here)
        p = _number(entry.get("p"), f"{here}.p", 1)
        if not p.is_integer():
            raise _fail(f"{here}.p", f"expected a whole number of processes, found {entry.get('p')!r}")
        if p in seen:
            raise _fail(f"{here}.p", f"p = {p:g} is listed twice")
        seen.add(p)
        steps = entry.get("steps")
        if not isinstance(steps, list) or not steps:
            raise _fail(f"{here}.steps", "expected a non-empty list of [n, us]")
        _sized_pairs(steps, f"{here}.steps", "us")


def _validate_written_send(section: Any, path: str) -> None:
    """A message its sender just wrote (models/written_send.py): {ends, whole, exchange_ends},
    each optional (at least one), each a cost per byte by size over its clean message
    (_validate_steps)."""
    _mapping(section, path)
    if not any(section.get(key) is not None for key in WRITTEN_KEYS):
        raise _fail(path, "expected one or more of " + ", ".join(WRITTEN_KEYS))
    for key in WRITTEN_KEYS:
        if section.get(key) is not None:
            _validate_steps(section[key], f"{path}.{key}")


def _validate_steps(section: Any, path: str) -> None:
    """A cost per byte by size (models/excess.py): a receive into never-touched memory
    (first_touch), MPI_Sendrecv_replace's extra copy (replace_copy), a message landing
    elsewhere in its page than it left (misaligned_copy): {per_byte (us/B),
    per_page (us), page_bytes, c (us), min_bytes, max_bytes, steps ([n, us/B], n
    increasing), slow_ahead ([first, last] bytes ahead, misaligned_copy's), line_bytes
    (misaligned_copy's: only the distances that are no multiple of it are slow)}; the
    simulator charges the steps, else per_byte."""
    _mapping(section, path)
    _number(section.get("per_byte"), f"{path}.per_byte", 0)
    for name in ("per_page", "c"):
        if section.get(name) is not None:
            _number(section[name], f"{path}.{name}", 0)
    for name in ("page_bytes", "min_bytes", "max_bytes"):
        if section.get(name) is not None:
            _bytes(section[name], f"{path}.{name}")
    steps = section.get("steps")
    if steps is not None:
        if not isinstance(steps, list):
            raise _fail(f"{path}.steps", "expected a list of [n, per_byte]")
        _sized_pairs(steps, f"{path}.steps", "per_byte")
    slow = section.get("slow_ahead")
    if slow is not None and not (isinstance(slow, list) and len(slow) == 2
                                 and all(type(d) is int and 1 <= d < 4096 for d in slow) and slow[0] <= slow[1]):
        raise _fail(f"{path}.slow_ahead", "expected [first, last]: distances of 1 to 4095 bytes, first <= last")
    line = section.get("line_bytes")
    if line is not None and not (type(line) is int and 1 <= line <= 4096):
        raise _fail(f"{path}.line_bytes", "expected a whole number of bytes from 1 to 4096")


def _sized_pairs(steps: list, path: str, value: str) -> None:
    """[[n, value], ...]: n whole bytes, increasing; each value a number >= 0."""
    previous = -1.0
    for i, step in enumerate(steps):
        if not isinstance(step, list) or len(step) != 2:
            raise _fail(f"{path}[{i}]", f"expected [n, {value}]")
        n = _bytes(step[0], f"{path}[{i}][0]")
        _number(step[1], f"{path}[{i}][1]", 0)
        if n <= previous:
            raise _fail(f"{path}[{i}][0]", "sizes must increase")
        previous = n


def _validate_cold_start(section: Any, path: str) -> None:
    """A program's first sends: {messages, o_s, O_s, o_r, O_r, first_us, min_bytes, max_bytes,
    rendezvous_first_us, rendezvous_reverse_us} (o_r, O_r, first_us, min_bytes and the
    rendezvous pair optional); messages 0 needs nothing else."""
    _mapping(section, path)
    messages = section.get("messages")
    if not isinstance(messages, int) or isinstance(messages, bool) or messages < 0:
        raise _fail(f"{path}.messages", "expected a whole number of sends >= 0")
    for name in ("rendezvous_first_us", "rendezvous_reverse_us"):
        if section.get(name) is not None:
            _number(section[name], f"{path}.{name}", 0)
    if messages == 0:
        return
    for name in ("o_s", "O_s"):
        _number(section.get(name), f"{path}.{name}", 0)
    for name in ("o_r", "O_r", "first_us"):
        if section.get(name) is not None:
            _number(section[name], f"{path}.{name}", 0)
    if section.get("min_bytes") is not None:
        _bytes(section["min_bytes"], f"{path}.min_bytes")
    _bytes(section.get("max_bytes"), f"{path}.max_bytes")


def _validate_request_growth(section: Any, path: str) -> None:
    """The first holding of k requests: {counts ([k, us], k increasing), warm_us, series,
    max_requests}; only counts required."""
    _mapping(section, path)
    counts = section.get("counts")
    if not isinstance(counts, list):
        raise _fail(f"{path}.counts", "expected a list of [requests, us]")
    _sized_pairs(counts, f"{path}.counts", "us")
    if section.get("warm_us") is not None:
        _number(section["warm_us"], f"{path}.warm_us", 0)
    for name in ("series", "max_requests"):
        if section.get(name) is not None:
            _bytes(section[name], f"{path}.{name}")


def _rows_by_p(section: Any, path: str, fields: str) -> list[tuple[str, dict]]:
    """A section's `by_p` rows, each an object whose p is a whole number of ranks, p
    increasing: [(its path, the row)]."""
    _mapping(section, path)
    rows = section.get("by_p")
    if not isinstance(rows, list) or not rows:
        raise _fail(f"{path}.by_p", f"expected a non-empty list of {{{fields}}}")
    out = []
    last_p = 0
    for i, row in enumerate(rows):
        where = f"{path}.by_p[{i}]"
        _mapping(row, where)
        p = row.get("p")
        if not isinstance(p, int) or isinstance(p, bool) or p <= last_p:
            raise _fail(f"{where}.p", "expected a whole number of ranks, increasing")
        last_p = p
        out.append((where, row))
    return out


def _validate_noise(section: Any, path: str) -> None:
    """Detours per p: {by_p: [{p, bins: [[lower_us, rate_per_s, mean_us], ...], ...}]},
    p increasing; lower bounds increasing, rates and lengths finite and >= 0."""
    for where, row in _rows_by_p(section, path, "p, bins"):
        bins = row.get("bins")
        if not isinstance(bins, list):
            raise _fail(f"{where}.bins", "expected a list of [lower_us, rate_per_s, mean_us]")
        lower = -1.0
        for j, b in enumerate(bins):
            if not (isinstance(b, list) and len(b) == 3):
                raise _fail(f"{where}.bins[{j}]", "expected [lower_us, rate_per_s, mean_us]")
            for k, name in enumerate(("lower_us", "rate_per_s", "mean_us")):
                _number(b[k], f"{where}.bins[{j}].{name}", 0)
            if b[0] <= lower:
                raise _fail(f"{where}.bins[{j}].lower_us", "expected increasing lower bounds")
            lower = b[0]


def _validate_collective_start(section: Any, path: str) -> None:
    """A communicator's first collectives: {by_p: [{p, shared, calls: [[k, us]], kinds: {kind:
    [[k, us]]}}]}, p increasing, calls increasing."""
    for where, row in _rows_by_p(section, path, "p, shared, calls, kinds"):
        if not isinstance(row.get("shared"), bool):
            raise _fail(f"{where}.shared", "expected true or false")
        calls = row.get("calls")
        if not isinstance(calls, list):
            raise _fail(f"{where}.calls", "expected a list of [call, us]")
        _sized_pairs(calls, f"{where}.calls", "us")
        kinds = _mapping(row.get("kinds"), f"{where}.kinds")
        for kind, steps in kinds.items():
            if kind not in ("bcast", "reduce", "barrier", "allreduce") or not isinstance(steps, list):
                raise _fail(f"{where}.kinds.{kind}", "expected bcast, reduce, barrier or allreduce: [[call, us]]")
            _sized_pairs(steps, f"{where}.kinds.{kind}", "us")


def _validate_call_costs(section: Any, path: str) -> None:
    """Per-call collective costs: {"ops": {op: [{n_min, n_max, fixed, per_byte, scale}, ...]}},
    each list sorted, disjoint, only the last unbounded; fixed (us), per_byte (us/B, optional)
    and scale >= 0."""
    _mapping(section, path)
    ops = _mapping(section.get("ops"), f"{path}.ops")
    if "p" in section:
        _number(section["p"], f"{path}.p", 1)
    for op, table in ops.items():
        here = f"{path}.ops.{op}"
        if not isinstance(op, str) or not OP_NAME.match(op):
            raise _fail(here, "expected a lower-case operation name without a variant, such as 'allreduce'")
        if not isinstance(table, list) or not table:
            raise _fail(here, "expected a non-empty JSON list")
        previous_max: float | None = -1.0
        for i, entry in enumerate(table):
            at = f"{here}[{i}]"
            _mapping(entry, at)
            n_min = _bytes(entry.get("n_min"), f"{at}.n_min")
            n_max = entry.get("n_max")
            if n_max is not None and _bytes(n_max, f"{at}.n_max") < n_min:
                raise _fail(f"{at}.n_max", "is below n_min")
            if previous_max is None or n_min <= previous_max:
                raise _fail(f"{at}.n_min", "entries must be sorted, disjoint, and only the last unbounded")
            if n_max is None and i + 1 < len(table):
                raise _fail(f"{at}.n_max", "only the last entry may be unbounded (null)")
            for name in ("fixed", "scale"):
                _number(entry.get(name), f"{at}.{name}", 0)
            if entry.get("per_byte") is not None:
                _number(entry["per_byte"], f"{at}.per_byte", 0)
            previous_max = None if n_max is None else float(n_max)


def _validate_loggp_regimes(regimes: Any, path: str) -> None:
    """Size-dependent overheads and gaps: sorted, disjoint, only the last unbounded."""
    if not isinstance(regimes, list):
        raise _fail(path, f"expected a JSON list, found {type(regimes).__name__}")
    previous_max: float | None = -1.0
    for i, regime in enumerate(regimes):
        here = f"{path}[{i}]"
        _mapping(regime, here)
        n_min = _bytes(regime.get("n_min"), f"{here}.n_min")
        n_max = regime.get("n_max")
        if n_max is not None and _bytes(n_max, f"{here}.n_max") < n_min:
            raise _fail(f"{here}.n_max", "is below n_min")
        if previous_max is None or n_min <= previous_max:
            raise _fail(f"{here}.n_min", "regimes must be sorted, disjoint, and only the last unbounded")
        for name in ("o_s", "o_r", "G"):
            _number(regime.get(name), f"{here}.{name}", 0)
        for name in ("O", "O_r", "L"):
            if regime.get(name) is not None:
                _number(regime[name], f"{here}.{name}", 0)
        previous_max = None if n_max is None else float(n_max)


def _validate_concurrency(section: Any, path: str) -> None:
    """The node's shared resource (models/concurrency.py): G_node > 0 (us per byte of every
    message between ranks of one node), c_node >= 0 (us per message); B_node, when given,
    is 1 / G_node."""
    _mapping(section, path)
    g_node = _number(section.get("G_node"), f"{path}.G_node", 0)
    if g_node <= 0:
        raise _fail(f"{path}.G_node", "must be > 0 (a node of infinite bandwidth has no section)")
    _number(section.get("c_node", 0), f"{path}.c_node", 0)
    if "B_node" in section:
        b_node = _number(section["B_node"], f"{path}.B_node", 0)
        if abs(b_node * g_node - 1) > 1e-6:
            raise _fail(f"{path}.B_node", f"must be 1 / G_node ({1 / g_node:g}), found {b_node:g}")


def validate(d: Any) -> None:
    """Check a decoded model file; raise ModelError naming the JSON path of the first problem.

    Checks the header, every library and operation key, segment order, that
    every t_s/t_b/t_c parses and gives a finite number at every p in the
    operation's p_range, LogGP parameters, and the shape of the informational
    fields (fit, metrics, laws). `validate_header` and `validate_library` make
    the same checks in parts, so a reader can check only the libraries it uses.
    """
    validate_header(d)
    for name, library in d["libraries"].items():
        validate_library(name, library)


def validate_header(d: Any) -> None:
    """Check everything of a model file but its libraries' content."""
    _mapping(d, "")
    if d.get("format") != FORMAT:
        raise _fail("format", f"expected {FORMAT!r}, found {d.get('format')!r}")
    if type(d.get("version")) is not int or d.get("version") != VERSION:  # not 1.0, not true
        raise _fail("version", f"this commchar reads version {VERSION}, found {d.get('version')!r}")
    if "units" in d:
        units = _mapping(d["units"], "units")
        if units.get("time", "us") != "us" or units.get("size", "B") != "B":
            raise _fail("units", f"times must be in us and sizes in B, found {units!r}")
    if "provenance" in d:
        _mapping(d["provenance"], "provenance")
    libraries = _mapping(d.get("libraries"), "libraries")
    if not libraries:
        raise _fail("libraries", "no library in the model")


def validate_library(name: str, library: Any) -> None:
    """Check one library of a model file (see `validate`)."""
    path = f"libraries.{name}"
    _mapping(library, path)
    if "version" in library and not isinstance(library["version"], str):
        raise _fail(f"{path}.version", "expected a string")
    operations = _mapping(library.get("operations"), f"{path}.operations")
    if not operations and library.get("loggp") is None and library.get("loggp_partial") is None:
        raise _fail(f"{path}.operations", "no operation in this library (and no loggp section)")
    for key, op in operations.items():
        if not OP_KEY.match(key):
            raise _fail(f"{path}.operations", f"bad operation key {key!r} (expected op or op:variant)")
        _validate_operation(op, f"{path}.operations.{key}")
    if library.get("loggp") is not None:
        _validate_loggp(library["loggp"], f"{path}.loggp")
    if library.get("loggp_partial") is not None:
        _validate_loggp(library["loggp_partial"], f"{path}.loggp_partial", required=())
    if library.get("concurrency") is not None:
        _validate_concurrency(library["concurrency"], f"{path}.concurrency")
