"""A loaded, validated model file and the time it predicts for (operation, n, p)."""

from __future__ import annotations

import bisect
import copy
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from commchar import jsonio
from commchar.errors import InputError, ModelError
from commchar.modelfile.document import ABSENT, LibraryEntry, MeanFit, ModelDocument, OperationEntry, SegmentEntry, given
from commchar.modelfile.expr import Expr, Number
from commchar.modelfile.schema import (LOGGP_OPTIONAL, LOGGP_REQUIRED, term_expr, validate,
                                       validate_header, validate_library)
from commchar.segment_gaps import locate, nearest, price
from commchar.vocabulary import ALTERNATE_VARIANTS, MPI_P2P_OPS, default_key, key_op



@dataclass(frozen=True)
class Segment:
    """One protocol regime: T(n, p) = t_s(p) + (t_b(p) + t_c(p)) * n for n_min <= n <= n_max."""

    n_min: float
    n_max: float | None
    t_s: Expr
    t_b: Expr
    t_c: Expr

    def time(self, n: float, p: float) -> float:
        return self.t_s.evaluate(p) + (self.t_b.evaluate(p) + self.t_c.evaluate(p)) * n

    def covers(self, n: float) -> bool:
        return self.n_min <= n and (self.n_max is None or n <= self.n_max)


@dataclass(frozen=True)
class Prediction:
    """The predicted time of one operation at (n, p).

    `segment` is the index of the segment used; `extrapolated_n` and
    `extrapolated_p` say that n or p lies outside what the fit saw, and
    `warnings` says so in words (never silently). `basis` says where t_us comes
    from: `fit`, or for `charged_time` `measured` (the mean measured at n and p) or
    `measured neighbours` (the fit scaled to the two measured sizes around n).
    """

    library: str
    key: str
    n: float
    p: float
    t_us: float
    segment: int
    extrapolated_n: bool
    extrapolated_p: bool
    warnings: tuple[str, ...]
    basis: str = "fit"

    @property
    def extrapolated(self) -> bool:
        return self.extrapolated_n or self.extrapolated_p


@dataclass(frozen=True)
class _Operation:
    key: str
    kind: str
    segments: tuple[Segment, ...]
    n_range: tuple[float, float] | None
    p_range: tuple[float, float] | None
    laws: dict[str, Any] | None
    oversubscribed_p: tuple[float, ...] = ()
    mean_segments: tuple[Segment, ...] = ()  # the fit of the means (`mean`), empty when absent
    # the means that fit was made from (`mean.measured`): p -> (sizes, us), sizes increasing
    mean_measured: dict[float, tuple[tuple[float, ...], tuple[float, ...]]] = field(default_factory=dict)


def _bounds(segments: tuple[Segment, ...]) -> list[tuple[float, float | None]]:
    return [(seg.n_min, seg.n_max) for seg in segments]


STATISTICS = ("median", "mean")


def _pick(op: _Operation, statistic: str) -> tuple[Segment, ...]:
    if statistic not in STATISTICS:
        raise ModelError(f"statistic must be one of {', '.join(STATISTICS)}, found {statistic!r}")
    return op.mean_segments if statistic == "mean" and op.mean_segments else op.segments


def _fmt(x: float) -> str:
    return f"{x:g}" if not float(x).is_integer() else str(int(x))


class ModelFile:
    """A validated model file. Build it with `load(path)` or `ModelFile.from_dict(d)`."""

    def __init__(self, data: dict[str, Any], source: str = "<dict>", *, owned: bool = False) -> None:
        # A library is validated and built when first used, so the cost of a file of
        # thousands of libraries is paid only for those a command reads.
        validate_header(data)
        self.data = data if owned else copy.deepcopy(data)
        self.source = source
        self._from_file = owned
        self._ops: dict[str, dict[str, _Operation]] = {}
        self._entries: dict[str, LibraryEntry] = {}

    def __repr__(self) -> str:
        return f"ModelFile({self.source!r}, libraries={self.libraries()!r})"

    @classmethod
    def from_document(cls, document: ModelDocument, source: str = "<document>") -> "ModelFile":
        """The evaluator of a typed document (commchar.modelfile.document)."""
        return cls(document.to_json(), source)

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<dict>") -> "ModelFile":
        """Validate `d` (ModelError naming the JSON path otherwise) and wrap it."""
        model = cls(d, source)
        model.check_all()
        return model

    def check_all(self) -> None:
        """Validate every library now (ModelError for the first problem)."""
        for library in self.libraries():
            self._library(library)

    @staticmethod
    def _segments(path: str, entries: tuple[SegmentEntry, ...]) -> tuple[Segment, ...]:
        segments = []
        for i, seg in enumerate(entries):
            here = f"{path}.segments[{i}]"
            segments.append(Segment(
                n_min=float(seg.n_min),
                n_max=None if seg.n_max is None else float(seg.n_max),
                t_s=term_expr(seg.t_s, f"{here}.t_s"),
                t_b=term_expr(seg.t_b, f"{here}.t_b"),
                t_c=Number(0.0) if seg.t_c is ABSENT else term_expr(seg.t_c, f"{here}.t_c"),
            ))
        return tuple(segments)

    @classmethod
    def _build(cls, lib: str, key: str, op: OperationEntry) -> _Operation:
        path = f"libraries.{lib}.operations.{key}"
        segments = cls._segments(f"{path}.segments", op.segments)
        mean_segments = (cls._segments(f"{path}.mean.segments", op.mean.segments)
                         if isinstance(op.mean, MeanFit) else ())
        tables = given(op.mean.measured, []) if isinstance(op.mean, MeanFit) else []
        measured = {float(entry["p"]): (tuple(float(n) for n, _ in entry["steps"]),
                                        tuple(float(t) for _, t in entry["steps"]))
                    for entry in tables}
        kind = given(op.kind, "") or ("p2p" if key_op(key) in MPI_P2P_OPS else "collective")
        n_range = tuple(float(x) for x in op.n_range) if isinstance(op.n_range, list) else None
        p_range = tuple(float(x) for x in op.p_range) if isinstance(op.p_range, list) else None
        oversubscribed = tuple(float(x) for x in given(op.oversubscribed_p, None) or ())
        return _Operation(key, kind, segments, n_range, p_range, given(op.laws, None),  # type: ignore[arg-type]
                          oversubscribed, mean_segments, measured)

    # --- what the model holds -------------------------------------------------

    def libraries(self) -> list[str]:
        """Library names in file order."""
        return list(self.data["libraries"])

    def operations(self, library: str) -> list[str]:
        """Operation keys (`op` or `op:variant`) of a library, in file order."""
        return list(self._library(library))

    def version(self, library: str) -> str | None:
        """The library's version string, when the file gives one."""
        return given(self._entry(library).version, None)

    @property
    def document(self) -> ModelDocument:
        """The whole file as a typed document (every library validated)."""
        try:
            return ModelDocument.from_json(self.data)
        except ModelError as exc:
            raise ModelError(f"{self.source}: {exc}" if self._from_file else str(exc)) from None

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self.data.get("provenance") or {})

    def _library(self, library: str) -> dict[str, _Operation]:
        built = self._ops.get(library)
        if built is not None:
            return built
        raw = self.data["libraries"].get(library)
        if raw is None:
            names = list(self.data["libraries"])
            listed = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
            raise ModelError(f"no library {library!r} in the model (it has: {listed})")
        try:
            validate_library(library, raw)
            entry = LibraryEntry.from_json(raw, f"libraries.{library}")
            built = {key: self._build(library, key, op) for key, op in entry.operations.items()}
        except ModelError as exc:
            # load() names the file in its errors; from_dict() callers name their source themselves
            raise ModelError(f"{self.source}: {exc}" if self._from_file else str(exc)) from None
        self._ops[library] = built
        self._entries[library] = entry
        return built

    def _entry(self, library: str) -> LibraryEntry:
        """The library's typed entry (validated on first use)."""
        self._library(library)
        return self._entries[library]

    def has(self, library: str, key: str) -> bool:
        """True when `resolve(library, key)` would succeed."""
        ops = self._library(library)
        alternate = f"{key}:{ALTERNATE_VARIANTS[key]}" if key in ALTERNATE_VARIANTS else None
        return key in ops or default_key(key) in ops or alternate in ops

    def resolve(self, library: str, key: str) -> str:
        """The model's key for `key`: itself if present, else its default variant.

        `pingpong` -> `pingpong:send` (PVM's: `pingpong:psend`), `reduce`/`allreduce`/
        `reduce_scatter`/`scan` -> `:sum`. ModelError names the known operations when
        there is none.
        """
        ops = self._library(library)
        if key in ops:
            return key
        if default_key(key) in ops:
            return default_key(key)
        if key in ALTERNATE_VARIANTS and f"{key}:{ALTERNATE_VARIANTS[key]}" in ops:
            return f"{key}:{ALTERNATE_VARIANTS[key]}"
        raise ModelError(f"unknown operation {key!r} for library {library!r} (the model has: {', '.join(ops)})")

    def _op(self, library: str, key: str) -> _Operation:
        return self._library(library)[self.resolve(library, key)]

    def kind(self, library: str, key: str) -> str:
        """`p2p` or `collective`."""
        return self._op(library, key).kind

    def segments(self, library: str, key: str, statistic: str = "median") -> tuple[Segment, ...]:
        """The operation's segments, sorted by n: the fit of the medians, or with statistic
        "mean" the fit of the means where the file has one (else the medians')."""
        return _pick(self._op(library, key), statistic)

    def n_range(self, library: str, key: str) -> tuple[float, float] | None:
        """The n the fit saw, or None when the file does not say."""
        return self._op(library, key).n_range

    def p_range(self, library: str, key: str) -> tuple[float, float] | None:
        """The p the fit saw, or None when the file does not say."""
        return self._op(library, key).p_range

    def laws(self, library: str, key: str) -> dict[str, Any] | None:
        """The informational `laws` field (law in p and complexity per term), if any."""
        return self._op(library, key).laws

    def loggp(self, library: str) -> dict[str, float] | None:
        """LogGP/LogGPS parameters (L, o_s, o_r, g in us; G, O in us/B; S, s in B) or None.

        `O` defaults to 0; `S` and `s` are present only when known.
        """
        raw = given(self._entry(library).loggp, None)
        if raw is None:
            return None
        params = {k: float(v) for k, v in raw.items() if k in LOGGP_REQUIRED + LOGGP_OPTIONAL and v is not None}
        params.setdefault("O", 0.0)
        return params

    def first_touch(self, library: str) -> dict[str, Any] | None:
        """A receive into never-touched memory (per_byte us/B, per_page us, page_bytes,
        min_bytes; models/first_touch.py) from the loggp section or its partial one, or None."""
        entry = self._entry(library)
        raw = ((given(entry.loggp, None) or {}).get("first_touch")
               or (given(entry.loggp_partial, None) or {}).get("first_touch"))
        return dict(raw) if raw is not None else None

    def noise(self, library: str) -> dict[str, Any] | None:
        """The detours a busy rank suffers ({by_p: [{p, rate_per_s, fraction, bins}]};
        models/noise.py) from the loggp section, which the simulator reads it from, or None."""
        raw = (given(self._entry(library).loggp, None) or {}).get("noise")
        return dict(raw) if raw is not None else None

    def concurrency(self, library: str) -> dict[str, Any] | None:
        """The node's shared resource (G_node us/B, c_node us, ...; docs/models.md) or None."""
        raw = given(self._entry(library).concurrency, None)
        return dict(raw) if raw is not None else None

    # --- prediction -------------------------------------------------------------

    def segment_index(self, library: str, key: str, n: float, statistic: str = "median") -> int:
        """Index of the segment covering n; in a gap or outside, the one with the nearest bound."""
        return nearest(*locate(_bounds(_pick(self._op(library, key), statistic)), n))

    def time(self, library: str, key: str, n: float, p: float, statistic: str = "median") -> Prediction:
        """Predicted time in us of operation `key` at message length n (bytes) and p processes.

        n follows the convention of reference models.md section 2 for the
        operation. Outside the fitted n_range/p_range the prediction carries a
        warning. `statistic`: "median" (the typical call: latency tables) or "mean"
        (the expected cost of a call, tail included: what a program's sum of calls
        pays), from the operation's `mean` fit where it has one, else the median's.
        ModelError for an unknown operation, a term that is not a finite number at p,
        or n < 0 / p < 1.
        """
        if not (math.isfinite(n) and n >= 0):
            raise ModelError(f"message length must be a finite number >= 0, found {n!r}")
        if not (math.isfinite(p) and p >= 1):
            raise ModelError(f"process count must be >= 1, found {p!r}")
        op = self._op(library, key)
        segments = _pick(op, statistic)
        bounds = _bounds(segments)
        index = nearest(*locate(bounds, n))
        where = "mean.segments" if segments is op.mean_segments else "segments"
        path = f"libraries.{library}.operations.{op.key}.{where}[{index}]"
        try:
            t_us = price(bounds, n, lambda k, size: segments[k].time(size, p))
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None
        warnings = []
        n_low, n_high = op.n_range or (op.segments[0].n_min, op.segments[-1].n_max if op.segments[-1].n_max is not None else math.inf)
        extrapolated_n = not (n_low <= n <= n_high)
        if extrapolated_n:
            warnings.append(f"{library} {op.key}: n={_fmt(n)} is outside the fitted n range [{_fmt(n_low)}, {_fmt(n_high)}] (extrapolation)")
        # A point-to-point model does not depend on p: any p is fine.
        extrapolated_p = op.kind != "p2p" and op.p_range is not None and not (op.p_range[0] <= p <= op.p_range[1])
        if extrapolated_p:
            warnings.append(f"{library} {op.key}: p={_fmt(p)} is outside the fitted p range [{_fmt(op.p_range[0])}, {_fmt(op.p_range[1])}] (extrapolation)")  # type: ignore[index]
        if t_us < 0:
            warnings.append(f"{library} {op.key}: negative predicted time {t_us:.4g} us at n={_fmt(n)}, p={_fmt(p)} (the model does not hold there)")
        if op.oversubscribed_p:
            warnings.append(f"{library} {op.key}: fitted with oversubscribed runs at p="
                            f"{','.join(_fmt(q) for q in op.oversubscribed_p)} (cores time-shared)")
        return Prediction(library, op.key, float(n), float(p), t_us, index, extrapolated_n, extrapolated_p, tuple(warnings))

    def charged_time(self, library: str, key: str, n: float, p: float) -> Prediction:
        """The expected cost in us of one call of `key` at (n, p) as a program's sum of calls
        pays it: at a size the model's runs measured at this p, the mean they measured
        (`mean.measured`); between two such sizes, the mean fit scaled by their ratios of
        measured to fitted, interpolated in log n (in n from 0 bytes); elsewhere, and for an
        operation without measured means, the mean fit (`time(..., statistic="mean")`).
        The fit may miss a measured mean by up to its bound (10%); a charged call at that
        size would pay the miss in full."""
        fitted = self.time(library, key, n, p, statistic="mean")
        op = self._op(library, key)
        sizes, means = op.mean_measured.get(float(p), ((), ()))
        if not sizes or not sizes[0] <= n <= sizes[-1]:
            return fitted
        upper = bisect.bisect_left(sizes, n)
        if sizes[upper] == n:
            return replace(fitted, t_us=means[upper], basis="measured")
        n1, n2 = sizes[upper - 1], sizes[upper]
        fit1 = self.time(library, key, n1, p, statistic="mean").t_us
        fit2 = self.time(library, key, n2, p, statistic="mean").t_us
        w = (math.log(n / n1) / math.log(n2 / n1)) if n1 > 0 else (n - n1) / (n2 - n1)
        if fit1 <= 0 or fit2 <= 0 or fitted.t_us <= 0:  # no ratio to carry: the means' line
            return replace(fitted, t_us=(1 - w) * means[upper - 1] + w * means[upper], basis="measured neighbours")
        ratio = (1 - w) * means[upper - 1] / fit1 + w * means[upper] / fit2
        return replace(fitted, t_us=fitted.t_us * ratio, basis="measured neighbours")


def load(path: str | os.PathLike[str]) -> ModelFile:
    """Read and validate a model file; InputError if unreadable, ModelError if invalid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read model file {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"model file {str(path)!r} is not UTF-8 text") from None
    data = jsonio.loads(text, str(path), ModelError)
    try:
        return ModelFile(data, str(path), owned=True)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None


def load_document(path: str | os.PathLike[str]) -> ModelDocument:
    """Read a model file into its typed document; InputError if unreadable, ModelError if invalid."""
    return load(path).document


def save(model: ModelDocument | dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Validate `model` (a document, or its JSON object) and write it as indented JSON
    (atomically, via a temporary file): the one way a model file is written, so nothing the
    readers would refuse reaches disk."""
    model_dict = model.to_json() if isinstance(model, ModelDocument) else model
    validate(model_dict)
    from commchar import outfile

    outfile.write_text(path, jsonio.dumps(model_dict, indent=2) + "\n")
