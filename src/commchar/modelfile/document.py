"""The model document: one typed value from `commchar fit` to the model file and back.

    ModelDocument                       format, version, units
    ├── provenance: Provenance          how the model was made (runs, points, notes)
    └── libraries: {name: LibraryEntry} version, imported_from, nbc_overlap, concurrency,
        │                               loggp / loggp_partial (call_costs, regimes inside)
        └── operations: {key: OperationEntry}
              ├── segments: (SegmentEntry, ...)     the fit of the medians
              └── mean: MeanFit                     the fit of the means, when known

`fit_document` (commchar.models.assemble) builds it, the simulator's calibration
returns a filled copy (`with_library`), `save` writes `to_json()` and
`ModelDocument.from_json` (or `load_document`) reads a file back into the same types.
The JSON is docs/model-format.md: keys are written in the order the fields are
declared, so a fitted model written, read and written again is byte-identical.
Informational sections (metrics, fit, errors, laws, the LogGP parameters) stay the
JSON objects the format describes; a key that no field names is kept in `extra`
and written after the named ones. A field left at ABSENT is not written at all;
None is written as null. `ModelDocument.from_json` reads a copy of what it is given
and `to_json` returns a fresh object, so a document never shares a dict with its
callers; an entry's own `from_json` (the reader's, per library) takes the objects
it is given as they are.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from typing import Any, Callable, Final, Mapping, TypeVar

from commchar.errors import ModelError


class Absent(enum.Enum):
    """The type of ABSENT: a key the file does not have (None is JSON's null)."""

    ABSENT = "absent"


ABSENT: Final = Absent.ABSENT

JSON = dict[str, Any]
T = TypeVar("T")


def given(value: T | Absent, default: T) -> T:
    """`value`, or `default` where the file has no such key."""
    return default if isinstance(value, Absent) else value


def _plain(value: Any) -> Any:
    """A field's value as fresh JSON: typed entries as objects, tuples as lists, dicts copied."""
    if is_dataclass(value) and not isinstance(value, type):
        return value.to_json()  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _to_json(entry: Any) -> JSON:
    out: JSON = {}
    for f in fields(entry):
        value = getattr(entry, f.name)
        if f.name != "extra" and value is not ABSENT:
            out[f.name] = _plain(value)
    out.update(_plain(entry.extra))
    return out


_NAMES: dict[Any, tuple[frozenset[str], tuple[str, ...]]] = {}


def _names(cls: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """The JSON keys a class names (its fields but `extra`), and those it requires."""
    if cls not in _NAMES:
        named = [f for f in fields(cls) if f.name != "extra"]
        _NAMES[cls] = (frozenset(f.name for f in named),
                       tuple(f.name for f in named if f.default is MISSING and f.default_factory is MISSING))
    return _NAMES[cls]


def _from_json(cls: type[T], data: Mapping[str, Any], path: str,
               nested: Mapping[str, Callable[[Any, str], Any]] | None = None) -> T:
    """`cls` from a validated JSON object: each named key through its `nested` reader (else
    taken as it is, not copied), the rest into `extra`."""
    if not isinstance(data, Mapping):
        raise ModelError(f"{path}: expected a JSON object, found {type(data).__name__}" if path
                         else f"expected a JSON object, found {type(data).__name__}")
    names, required = _names(cls)
    for name in required:
        if name not in data:
            raise ModelError(f"{path}: missing '{name}'" if path else f"missing '{name}'")
    readers = nested or {}
    kwargs: dict[str, Any] = {}
    extra: JSON = {}
    for name, value in data.items():
        if name not in names:
            extra[name] = value
            continue
        reader = readers.get(name)
        kwargs[name] = reader(value, f"{path}.{name}" if path else name) if reader else value
    kwargs["extra"] = extra
    return cls(**kwargs)


def _entries(reader: Callable[[Any, str], T]) -> Callable[[Any, str], tuple[T, ...]]:
    def read(value: Any, path: str) -> tuple[T, ...]:
        if not isinstance(value, list):
            raise ModelError(f"{path}: expected a JSON list, found {type(value).__name__}")
        return tuple(reader(item, f"{path}[{i}]") for i, item in enumerate(value))
    return read


def _named(reader: Callable[[Any, str], T]) -> Callable[[Any, str], dict[str, T]]:
    def read(value: Any, path: str) -> dict[str, T]:
        if not isinstance(value, Mapping):
            raise ModelError(f"{path}: expected a JSON object, found {type(value).__name__}")
        return {name: reader(item, f"{path}.{name}") for name, item in value.items()}
    return read


@dataclass(frozen=True, kw_only=True)
class SegmentEntry:
    """One regime of an operation: T(n, p) = t_s(p) + (t_b(p) + t_c(p)) * n for
    n_min <= n <= n_max (n_max None: unbounded); terms are numbers or expressions in p."""

    n_min: int | float
    n_max: int | float | None
    t_s: float | str
    t_b: float | str
    t_c: float | str | Absent = ABSENT
    fit: JSON | Absent = ABSENT
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> "SegmentEntry":
        return _from_json(cls, data, path)


_segments = _entries(SegmentEntry.from_json)


@dataclass(frozen=True, kw_only=True)
class MeanFit:
    """An operation's fit of the means (the expected cost of a call): its regimes, how they
    were chosen, where they break."""

    segments: tuple[SegmentEntry, ...]
    fit: JSON | Absent = ABSENT
    breakpoints: list[JSON] | Absent = ABSENT
    # the means the fit was made from, per p: [{p, steps: [[n, us], ...]}] (a collective's)
    measured: list[JSON] | Absent = ABSENT
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> "MeanFit":
        return _from_json(cls, data, path, {"segments": _segments})


@dataclass(frozen=True, kw_only=True)
class OperationEntry:
    """One operation key (`op` or `op:variant`) of a library: its regimes of the medians and
    what the fit says of them (laws in p, metrics, fit quality, errors)."""

    kind: str | Absent = ABSENT
    n_range: list[int | float] | Absent = ABSENT
    p_range: list[int | float] | Absent = ABSENT
    segments: tuple[SegmentEntry, ...]
    laws: JSON | Absent = ABSENT
    metrics: JSON | Absent = ABSENT
    fit: JSON | Absent = ABSENT
    breakpoints: list[JSON] | Absent = ABSENT
    mean: MeanFit | Absent = ABSENT
    errors: JSON | Absent = ABSENT
    oversubscribed_p: list[int] | Absent = ABSENT
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> "OperationEntry":
        return _from_json(cls, data, path, {"segments": _segments, "mean": MeanFit.from_json})

    def with_errors(self, **more: Any) -> "OperationEntry":
        """A copy whose `errors` also holds `more` (added after the errors it has)."""
        return replace(self, errors={**(self.errors if isinstance(self.errors, dict) else {}), **more})


_operations = _named(OperationEntry.from_json)


@dataclass(frozen=True, kw_only=True)
class LibraryEntry:
    """One library's models: its operations and, as the format's JSON objects, the LogGP
    section (complete, or partial when a parameter could not be resolved), the node's
    shared bandwidth and the non-blocking collectives' overlap."""

    version: str | Absent = ABSENT
    imported_from: str | Absent = ABSENT
    operations: dict[str, OperationEntry]
    nbc_overlap: list[JSON] | Absent = ABSENT
    loggp: JSON | None | Absent = ABSENT
    loggp_partial: JSON | None | Absent = ABSENT
    concurrency: JSON | None | Absent = ABSENT
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> "LibraryEntry":
        return _from_json(cls, data, path, {"operations": _operations})

    def with_loggp(self, **more: Any) -> "LibraryEntry":
        """A copy whose complete LogGP section also holds `more` (added after its keys)."""
        if not isinstance(self.loggp, dict):
            raise ModelError("the library has no complete loggp section")
        return replace(self, loggp={**self.loggp, **more})


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """How the model was made: the runs and points fitted, what the oversubscription and
    core-distance policies left out, what could not be fitted (`skipped`), the units and regime
    penalty used."""

    source: str | Absent = ABSENT
    created: str | Absent = ABSENT
    commchar_version: str | Absent = ABSENT
    runs: list[JSON] | Absent = ABSENT
    points: int | Absent = ABSENT
    invalid_points: int | Absent = ABSENT
    oversubscribed: list[str] | Absent = ABSENT
    oversubscribed_policy: str | Absent = ABSENT
    oversubscribed_excluded: list[JSON] | Absent = ABSENT
    failures: list[JSON] | Absent = ABSENT
    skipped: tuple[str, ...] | Absent = ABSENT
    units: JSON | Absent = ABSENT
    regime_penalty: float | Absent = ABSENT
    notes: str | Absent = ABSENT
    size_choice: JSON | None | Absent = ABSENT
    core_distance: JSON | Absent = ABSENT
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any, path: str = "provenance") -> "Provenance":
        return _from_json(cls, data, path, {"skipped": _notes})

    def with_skipped(self, notes: list[str] | tuple[str, ...]) -> "Provenance":
        """A copy whose `skipped` also lists `notes`."""
        return replace(self, skipped=(*(self.skipped if isinstance(self.skipped, tuple) else ()), *notes))


def _notes(value: Any, path: str) -> Any:
    """`skipped` as a tuple of its notes (the format leaves its shape open: other values stay)."""
    return tuple(value) if isinstance(value, list) else value


_libraries = _named(LibraryEntry.from_json)


@dataclass(frozen=True, kw_only=True)
class ModelDocument:
    """A whole model file (docs/model-format.md)."""

    format: str
    version: int
    units: JSON | Absent = ABSENT
    provenance: Provenance | Absent = ABSENT
    libraries: dict[str, LibraryEntry]
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        """The document as the model file's JSON object (fresh: changing it changes nothing here)."""
        return _to_json(self)

    @classmethod
    def from_json(cls, data: Any) -> "ModelDocument":
        """The typed document of a model file's JSON object; ModelError naming the JSON path
        of the first problem (the schema's checks, commchar.modelfile.schema)."""
        from commchar.modelfile.schema import validate

        validate(data)
        return _from_json(cls, copy.deepcopy(data), "", {"provenance": Provenance.from_json, "libraries": _libraries})

    def provenance_or_empty(self) -> Provenance:
        """The provenance, an empty one when the file has none."""
        return self.provenance if isinstance(self.provenance, Provenance) else Provenance()

    def with_provenance(self, provenance: Provenance) -> "ModelDocument":
        return replace(self, provenance=provenance)

    def with_skipped(self, notes: list[str] | tuple[str, ...]) -> "ModelDocument":
        """A copy whose provenance also lists `notes` as skipped."""
        return replace(self, provenance=self.provenance_or_empty().with_skipped(notes))

    def with_library(self, name: str, library: LibraryEntry) -> "ModelDocument":
        """A copy with `library` in place of the library `name` (added last when new)."""
        return replace(self, libraries={**self.libraries, name: library})
