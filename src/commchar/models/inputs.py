"""Reading points to fit: a commchar database, a CSV file or a JSON export.

Every reader returns point dicts with at least library, op, variant, p,
n_bytes, t_us (the median of the samples), valid, oversubscribed and extra,
and what the samples say beyond their median: t_mean_us (None when not known),
noise (the relative standard error of the median, from its 95% CI; 0 when not
known), mean_noise (that of the mean, from the samples' spread; None when not
known) and refined (a size the run added where the curve changes). Bad input
raises InputError with one line naming the file, the row and the problem.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable


from commchar import jsonio
from commchar.errors import InputError
from commchar.statistics import Z95, summarize
from commchar.store.locality import CACHE_MODES, LOCALITIES, library_label
from commchar.vocabulary import LOGGP_OPS, op_key

REQUIRED = ("op", "p", "n_bytes", "t_us")
DEFAULT_LIBRARY = "unknown"
STARTUP_ONLY_OPS = ("barrier",)  # n is 0 by definition: only t_s is fitted
MAX_P = 2**31 - 1  # MPI ranks are C ints
MAX_N_BYTES = 2**53  # every length up to here is exact as a double
TRUE_TEXT = {"1", "true", "yes", "t", "y"}
FALSE_TEXT = {"0", "false", "no", "f", "n", ""}


def _number(value: Any, column: str, where: str, *, integer: bool = False, positive: bool = False) -> float:
    if isinstance(value, bool) or value is None:
        raise InputError(f"{where}: {column} {value!r} is not a number")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {column} {str(value)[:40]!r} is not a number") from None
    if not math.isfinite(x):
        raise InputError(f"{where}: {column} {value!r} is not a finite number")
    if x < 0 or (positive and x == 0):
        raise InputError(f"{where}: {column} {value!r} is {'negative' if x < 0 else 'zero'}"
                         f" (must be {'> 0' if positive else '>= 0'})")
    if integer and x != int(x):
        raise InputError(f"{where}: {column} {value!r} is not a whole number")
    return x


def _flag(value: Any, column: str, where: str, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    text = str(value).strip().lower()
    if text in TRUE_TEXT:
        return True
    if text in FALSE_TEXT:
        return default if text == "" else False
    raise InputError(f"{where}: {column} {str(value)[:40]!r} is not a boolean")


def _extra(value: Any, where: str) -> dict:
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        decoded = jsonio.loads(value, f"{where}: extra")
        if isinstance(decoded, dict):
            return decoded
    raise InputError(f"{where}: extra is not a JSON object")


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def spread(raw: dict) -> dict[str, Any]:
    """t_mean_us, noise and mean_noise (see the module's docstring) from a point's stored
    summary (t_mean_us, ci_lo_us, ci_hi_us, t_std_us, reps, and transient: the first samples
    the mean leaves out); what is missing is unknown."""
    t = _positive(raw.get("t_us"))
    mean = _positive(raw.get("t_mean_us"))
    lo, hi = _positive(raw.get("ci_lo_us")), _positive(raw.get("ci_hi_us"))
    noise = 0.0
    if t is not None and lo is not None and hi is not None:
        noise = max(t - lo, hi - t, 0.0) / (Z95 * t)
    std, reps = raw.get("t_std_us"), raw.get("reps")
    mean_noise = None
    if (mean is not None and isinstance(std, (int, float)) and not isinstance(std, bool) and math.isfinite(std)
            and std >= 0 and isinstance(reps, (int, float)) and not isinstance(reps, bool) and reps >= 2):
        transient = raw.get("transient")
        if isinstance(transient, int) and not isinstance(transient, bool) and 0 < transient < reps - 1:
            reps -= transient
        mean_noise = float(std) / math.sqrt(float(reps)) / mean
    return {"t_mean_us": mean, "noise": noise if math.isfinite(noise) else 0.0, "mean_noise": mean_noise}


def from_samples(point: dict, samples: list[float]) -> None:
    """Set a point's t_us (the median), t_mean_us, noise and mean_noise from its samples."""
    summary = summarize(samples)
    point["t_us"] = summary["t_us"]
    point["samples"] = len(samples)
    point.update(spread(summary))


def normalise(raw: dict, where: str, sample_key: str | None = None) -> dict:
    """One checked point (or sample) dict from a row of any source."""
    p = _number(raw.get("p"), "p", where, integer=True)
    if p < 1:
        raise InputError(f"{where}: p {raw.get('p')!r} must be at least 1")
    op = str(raw.get("op") or "").strip()
    if not op:
        raise InputError(f"{where}: op is empty")
    time_key = sample_key if sample_key and raw.get(sample_key) not in (None, "") else "t_us"
    valid = _flag(raw.get("valid"), "valid", where, True)
    if valid:
        t_us = _number(raw.get(time_key), time_key, where, positive=True)
    else:  # left out of every fit: its time only needs to be readable
        value = raw.get(time_key)
        t_us = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")
    n_bytes = _number(raw.get("n_bytes"), "n_bytes", where, integer=True)
    for column, value, largest in (("p", p, MAX_P), ("n_bytes", n_bytes, MAX_N_BYTES)):
        if value > largest:
            raise InputError(f"{where}: {column} {value:g} is larger than {largest} (not a count commchar can use)")
    locality = str(raw.get("locality") or "").strip()
    if locality and locality not in LOCALITIES:
        raise InputError(f"{where}: locality {locality[:40]!r} is not one of {', '.join(LOCALITIES)}")
    cache = str(raw.get("cache") or "warm").strip()
    if cache not in CACHE_MODES:
        raise InputError(f"{where}: cache {cache[:40]!r} is not one of {', '.join(CACHE_MODES)}")
    library = str(raw.get("library") or DEFAULT_LIBRARY).strip() or DEFAULT_LIBRARY
    extra = _extra(raw.get("extra"), where)
    point = {
        # on-node and off-node, warm and cold measurements are fitted as libraries side by side
        "library": library_label(library, locality, cache),
        "library_version": raw.get("library_version") or "",
        "op": op,
        "variant": str(raw.get("variant") or "").strip(),
        "p": int(p),
        "n_bytes": int(n_bytes),
        "t_us": t_us,
        "valid": valid,
        "oversubscribed": _flag(raw.get("oversubscribed"), "oversubscribed", where, False),
        "extra": extra,
        "run_id": raw.get("run_id"),
        "sync": str(raw.get("sync") or "").strip(),
        "refined": _flag(raw.get("refined"), "refined", where, False),
    }
    # the bytes a rank's buffers rotated over (--cache cold, the footprint probe)
    region = raw.get("cache_region_bytes")
    if region not in (None, "", 0):
        point["cache_region_bytes"] = int(_number(region, "cache_region_bytes", where, integer=True))
    # a stored point records the transient its mean leaves out in extra (statistics.py)
    known = spread(raw | {"t_us": t_us, "transient": extra.get("transient_samples")})
    # a JSON export may already carry the derived fields (a re-fit of normalised points)
    for name in ("noise", "mean_noise", "t_mean_us"):
        if known[name] in (None, 0.0) and _positive(raw.get(name)) is not None:
            known[name] = float(raw[name])
    point.update(known)
    return point


def _key(pt: dict) -> tuple:
    return (pt["library"], pt["op"], pt["variant"], pt["p"], pt["n_bytes"], str(pt.get("run_id")))


def aggregate_samples(rows: list[tuple[dict, str]]) -> list[dict]:
    """Rows sharing (library, op, variant, p, n_bytes, run) are samples: keep their median."""
    groups: dict[tuple, list[tuple[dict, str]]] = defaultdict(list)
    for pt, where in rows:
        groups[_key(pt)].append((pt, where))
    out = []
    for members in groups.values():
        first, where = members[0]
        point = dict(first)
        point["row"] = where
        if len(members) > 1:
            from_samples(point, [m["t_us"] for m in (m for m, _ in members) if math.isfinite(m["t_us"])]
                         or [float("nan")])
            point["valid"] = all(m["valid"] for m, _ in members)
            point["oversubscribed"] = any(m["oversubscribed"] for m, _ in members)
        out.append(point)
    return out


def check_fittable(points: list[dict], source: str) -> None:
    """Every (library, op, variant, p) needs two points at two sizes (barrier: one)."""
    if not points:
        raise InputError(f"{source}: no points")
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for pt in points:
        if pt["valid"]:
            groups[(pt["library"], pt["op"], pt["variant"], pt["p"])].append(pt)
    if not groups:
        raise InputError(f"{source}: no valid points (every row is marked invalid)")
    for (library, op, variant, p), members in groups.items():
        if op in STARTUP_ONLY_OPS or op in LOGGP_OPS:
            continue
        name = op_key(op, variant)
        where = members[0].get("row", source)
        sizes = {m["n_bytes"] for m in members}
        if len(sizes) < 2:
            raise InputError(f"{where}: too few points to fit: {library} {name} at p={p} has a single"
                             f" size ({next(iter(sizes))} B), so t_b cannot be fitted")


def check_one_sync(points: list[dict]) -> None:
    """A series (library, op, variant, over every p) is measured under one start
    synchronization: a barrier's time and a window's (from a common start) are different
    quantities, so a fit over both would describe neither. Points that do not say (CSV
    without the column) count as any."""
    groups: dict[tuple, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for pt in points:
        if pt["valid"] and pt.get("sync"):
            groups[(pt["library"], pt["op"], pt["variant"])][pt["sync"]].add(pt.get("run_id"))
    for (library, op, variant), syncs in sorted(groups.items()):
        if len(syncs) > 1:
            where = "; ".join(f"{name} in run(s) {', '.join(sorted(map(str, runs)))}"
                              for name, runs in sorted(syncs.items()))
            raise InputError(f"{library} {op_key(op, variant)} mixes start synchronizations ({where}):"
                             " fit them apart (--run)")


def read_csv(path: str | Path) -> list[dict]:
    """Points from a CSV; rows sharing library, op, variant, p, n_bytes and run are samples.

    A per-sample export has millions of rows, so only the first row of each
    point is checked in full; the others only need a positive time.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = [c.strip() for c in next(reader, [])]
            if not header:
                raise InputError(f"{path}: empty file (no header row)")
            missing = [c for c in REQUIRED if c not in header and not (c == "t_us" and "sample_us" in header)]
            if missing:
                raise InputError(f"{path}: row 1 (header): missing column(s) {', '.join(missing)}")
            col = {name: i for i, name in enumerate(header)}
            key_cols = [col.get(c) for c in ("library", "op", "variant", "p", "n_bytes", "run_id",
                                             "locality", "cache")]
            sample_col, time_col = col.get("sample_us"), col["t_us"] if "t_us" in col else None
            flag_cols = [col.get("valid"), col.get("oversubscribed")]
            groups: dict[tuple, tuple[dict, list[float], str, list[str]]] = {}
            for i, row in enumerate(reader, start=2):
                if len(row) > len(header):
                    raise InputError(f"{path}: row {i}: more fields than the header has")
                if not any(cell.strip() for cell in row):
                    continue
                row = row + [""] * (len(header) - len(row))
                key = tuple(row[c].strip() if c is not None else "" for c in key_cols)
                where = f"{path}: row {i}"
                use = sample_col if sample_col is not None and row[sample_col].strip() else time_col
                name = header[use] if use is not None else "t_us"
                group = groups.get(key)
                if group is None:
                    point = normalise(dict(zip(header, row)), where, "sample_us")
                    flags = [row[c] if c is not None else "" for c in flag_cols]
                    groups[key] = (point, [point["t_us"]], where, flags)
                    continue
                point, samples, _, flags = group
                value = _number(row[use] if use is not None else None, name, where, positive=True)
                samples.append(value)
                for k, c in enumerate(flag_cols):
                    if c is not None and row[c] != flags[k]:
                        flag = _flag(row[c], header[c], where, k == 0)
                        point["valid" if k == 0 else "oversubscribed"] = (
                            point["valid"] and flag if k == 0 else point["oversubscribed"] or flag)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None
    except csv.Error as exc:
        raise InputError(f"{path}: not a valid CSV file ({exc})") from None
    points = []
    for point, samples, where, _ in groups.values():
        point["row"] = where
        if len(samples) > 1:
            from_samples(point, samples)
        points.append(point)
    check_fittable(points, str(path))
    return points


def load_json(path: str | Path, what: str = "") -> Any:
    """A JSON file's content; an unreadable or malformed file is an InputError naming it
    (`what` says what the file is: "model file")."""
    name = f"{what} {path}".strip()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {name} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{name} is not valid JSON (not UTF-8 text)") from None
    return jsonio.loads(text, name)


def read_json(path: str | Path) -> list[dict]:
    path = Path(path)
    data = load_json(path)
    if isinstance(data, dict) and isinstance(data.get("points"), list):
        data = data["points"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of point objects")
    rows = []
    for i, raw in enumerate(data):
        where = f"{path}: row {i + 1}"
        if not isinstance(raw, dict):
            raise InputError(f"{where}: expected a JSON object")
        missing = [c for c in REQUIRED if c not in raw and not (c == "t_us" and "sample_us" in raw)]
        if missing:
            raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
        rows.append((normalise(raw, where, "sample_us"), where))
    points = aggregate_samples(rows)
    check_fittable(points, str(path))
    return points


def receiver_delays(facts: dict[str, Any]) -> dict[str, float]:
    """{library: us} the rndv probe's receiver delay each library's jobs ran with (read_store's
    facts; a library whose jobs name none is left out)."""
    delays = {}
    for job in facts.get("jobs", []):
        value = (job.get("kernel_options") or {}).get("rndv_delay_us")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            delays[job["library"]] = float(value)
    return delays


def read_store(db: str | Path, run_ids: Iterable[int]) -> tuple[list[dict], list[dict], dict[str, Any]]:
    """Points, failures and per-library facts (versions, kernel options) of the runs."""
    from commchar.store import Store

    if not Path(db).exists():
        raise InputError(f"database {db} does not exist")
    ids = list(run_ids)
    with Store(db, readonly=True) as store:
        raw = store.points(ids or None)
        failures = store.failures(ids or None)
        jobs = store.jobs(ids or None)
        if not ids:
            ids = [r["id"] for r in store.runs()]
    if not raw:
        raise InputError(f"{db}: no points in run(s) {', '.join(map(str, ids)) or '(none)'}")
    for pt in raw:
        # a stored time that is not positive cannot be fitted: the point is left out as invalid
        if not (isinstance(pt.get("t_us"), (int, float)) and pt["t_us"] > 0):
            pt["valid"] = False
    points = [normalise(pt, f"{db}: point {pt.get('point_id')}") | {"row": f"{db}: point {pt.get('point_id')}"}
              for pt in raw]
    facts = {"runs": [{"db": str(db), "run_id": int(i)} for i in ids], "jobs": jobs}
    return points, failures, facts
