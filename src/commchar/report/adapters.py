"""The report's one door to the rest of commchar: store, fitting, model files, advice.

Everything the report needs from the store, the models and the model file goes
through here (tests/test_report_door.py holds every other report module to it), so
the rest of the report works on plain data and a change in another package's API is
absorbed in one place. When a fit, a model evaluation or the advice cannot be
made, the report says so and shows the measurements alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commchar.errors import CommcharError, InputError
from commchar.modelfile import ModelDocument, ModelFile, load, parse_expr
from commchar.models import metrics as fit_metrics
from commchar.models.copy_footprint import SELF as FOOTPRINT_SELF
from commchar.models.laws import best_known_class, class_named
from commchar.models.loggp import unknown_parameters
from commchar.models.metrics import UNITS, aggregate_factor
from commchar.models.thresholds import SLOPE, describe, is_pinned
from commchar.store.locality import library_label
from commchar.vocabulary import default_key, unit_system

# Named here for the report's own modules, which import nothing else of commchar.models,
# store or modelfile: the thresholds' words (describe, SLOPE, is_pinned), an operation's
# best-known complexity (best_known_class, class_named), the metrics' one definition
# (fit_metrics, UNITS, aggregate_factor), a series' label (library_label), the expression
# parser (parse_expr), the footprint probe's prefix of its variants to oneself (FOOTPRINT_SELF).


@dataclass
class Measurements:
    """Everything one report reads from a database."""

    db: str
    runs: list[dict]
    jobs: list[dict]
    points: list[dict]
    failures: list[dict]


def load_measurements(db: str | Path, run_ids: list[int] | None, *,
                      require_points: bool = True) -> Measurements:
    """Read runs, jobs, points and failures; a missing database or run is an InputError,
    and so are a database without runs and runs without a measured point unless
    `require_points` is off (a database of application runs or traces alone)."""
    from commchar.store import Store

    path = Path(db)
    if not path.is_file():
        raise InputError(f"database {path} does not exist")
    with Store(path, readonly=True) as store:
        all_runs = store.runs()
        if not all_runs and require_points:
            raise InputError(f"database {path} holds no run (measure one with `commchar run`)")
        if run_ids:
            known = {r["id"] for r in all_runs}
            missing = [i for i in run_ids if i not in known]
            if missing:
                raise InputError(f"no run {missing[0]} in {path} (runs: "
                                 f"{', '.join(str(i) for i in sorted(known))})")
            runs = [r for r in all_runs if r["id"] in run_ids]
        else:
            runs = all_runs
        ids = [r["id"] for r in runs]
        points = store.points(ids)
        if not points and require_points:
            which = ", ".join(str(i) for i in ids)
            raise InputError(f"run {which} in {path} has no measured point")
        return Measurements(str(path), runs, store.jobs(ids), points, store.failures(ids))


def app_runs(db: str | Path, run_ids: list[int] | None) -> tuple[list[dict], list[dict]]:
    """The application runs of `run_ids` (every one when None or empty) and their stored
    predictions, oldest first."""
    from commchar.store import Store

    with Store(db, readonly=True) as store:
        known = {r["id"] for r in store.runs()}
        ids = [i for i in run_ids if i in known] if run_ids else None
        runs = store.app_runs(ids)
        return runs, list(store.app_predictions(r["id"] for r in runs))


def trace_predictions(db: str | Path) -> list[dict[str, Any]]:
    """Every stored trace prediction, oldest first (none when the database has no traces)."""
    from commchar.store import Store
    from commchar.store.trace_predictions import predictions

    with Store(db, readonly=True) as store:
        return predictions(store)


def validations(db: str | Path) -> list[dict[str, Any]]:
    """Every stored validation, oldest first (none when the database has none)."""
    from commchar.store import Store
    from commchar.validate.store import validations as stored

    with Store(db, readonly=True) as store:
        return stored(store)


def imported_source(points: list[dict]) -> str | None:
    """The line naming the peer tool the points were imported from (commchar.models.assemble)."""
    from commchar.models.assemble import imported_source as named

    return named(points)


def overlaps(points: list[dict]) -> list[Any]:
    """The non-blocking collectives' overlap of communication and computation (commchar.models.overlap)."""
    from commchar.models.overlap import overlaps as found

    return list(found(points))


def read_model_file(path: str | Path) -> ModelFile:
    """A model file through the one reader every verb uses (commchar.modelfile.load),
    every library checked now: a user's file is judged whole, before any figure."""
    model = load(path)
    model.check_all()
    return model


@dataclass
class ModelView:
    """One library's model, as the report reads it: evaluation plus the raw fields."""

    library: str
    data: dict  # the library's entry of the model file
    source: str
    _evaluator: Any = field(default=None, repr=False)
    # the operations (core_distance.group_label) whose points outside the main state of the
    # ranks' cores the fit left out; None: the model does not say
    left_out: frozenset[str] | None = None
    # the operations the fit took from another state than the main one, where most of their
    # own points lie: the round trip (ns) of that state
    fitted_state_ns: dict[str, float] = field(default_factory=dict)
    # the fit's record of the points a slowed core measured (copy_floor_ns, left_out_by_operation:
    # models/core_distance_policy.py); None: the model says of none
    slowed: dict | None = None

    def stored_key(self, key: str) -> str | None:
        """The model's key for `key`: itself, its default variant (`pingpong` -> `pingpong:send`,
        as ModelFile.resolve does), or the bare operation a default variant may be stored
        under (`reduce:sum` -> `reduce`); None when the model has no such operation."""
        ops = self.data.get("operations") or {}
        op = key.partition(":")[0]
        bare = op if default_key(op) == key else key
        return next((k for k in (key, default_key(key), bare) if k in ops), None)

    def operation(self, key: str) -> dict | None:
        stored = self.stored_key(key)
        return None if stored is None else self.data["operations"][stored]

    def time(self, key: str, n: float, p: int) -> float | None:
        """Predicted time (us) or None when the model cannot say."""
        stored = self.stored_key(key)
        if self._evaluator is None or stored is None:
            return None
        try:
            t = float(self._evaluator.time(self.library, stored, int(n), int(p)).t_us)
        except (CommcharError, ArithmeticError, ValueError, KeyError):
            return None
        return t if math.isfinite(t) else None

    def loggp(self) -> dict | None:
        if self._evaluator is not None:
            try:
                value = self._evaluator.loggp(self.library)
            except CommcharError:
                value = None
            if value is not None:
                return value
        raw = self.data.get("loggp")
        return raw if isinstance(raw, dict) else None

    def rendezvous(self) -> dict | None:
        """The section holding S (and `S_interval` when the fit bracketed it): loggp, or
        loggp_partial when only the rndv probe was measured."""
        for section in (self.data.get("loggp"), self.data.get("loggp_partial"), self.loggp()):
            if isinstance(section, dict) and isinstance(section.get("S"), (int, float)):
                return section
        return None


def model_views(model: ModelFile | ModelDocument | dict, source: str, *,
                strict: bool = True) -> tuple[dict[str, ModelView], str | None]:
    """One view per library of a model (a loaded file, a document fitted just now, or a
    model file's JSON object), and a note when it cannot be evaluated.

    strict: a model the reader rejects is an error (a user's file); otherwise (a
    model fitted just now) the report goes on without it and says why.
    """
    try:
        if isinstance(model, ModelFile):
            evaluator = model
        else:
            evaluator = ModelFile.from_dict(model.to_json() if isinstance(model, ModelDocument) else model,
                                            source=source)
    except CommcharError as exc:
        if strict:
            raise InputError(f"model ({source}): {exc}") from None
        return {}, f"the model {source} was rejected by the model-file reader, so it is not shown: {exc}"
    views = {lib: ModelView(lib, evaluator.data["libraries"][lib], source, evaluator,
                            _left_out(evaluator.data, lib), _fitted_state_ns(evaluator.data, lib),
                            _slowed(evaluator.data, lib))
             for lib in evaluator.libraries()}
    return views, None


def _core_distance_record(data: dict, library: str) -> dict | None:
    record = ((data.get("provenance") or {}).get("core_distance") or {}).get(library)
    return record if isinstance(record, dict) else None


def _left_out(data: dict, library: str) -> frozenset[str] | None:
    record = _core_distance_record(data, library)
    if record is None:
        return None
    return frozenset((record.get("left_out_by_operation") or {}).keys())


def _slowed(data: dict, library: str) -> dict | None:
    record = (_core_distance_record(data, library) or {}).get("slowed")
    return record if isinstance(record, dict) else None


def _fitted_state_ns(data: dict, library: str) -> dict[str, float]:
    own = (_core_distance_record(data, library) or {}).get("own_state_by_operation") or {}
    return {label: float(entry["rtt_ns"]) for label, entry in own.items()
            if isinstance(entry, dict) and isinstance(entry.get("rtt_ns"), (int, float))}


def fit_model(points: list[dict], failures: list[dict], units: str, runs: list[dict],
              oversubscribed: str = "exclude") -> tuple[ModelDocument | None, str | None]:
    """Fit a model on the fly; (None, why) when the fit fails.

    runs: [{"db", "run_id"}] for the model's provenance; oversubscribed: the fit's
    policy for time-shared points (commchar.models.document_fit.fit_document).
    """
    from commchar.models.document_fit import fit_document

    try:
        return fit_document(points, failures=failures, units=unit_system(units), runs=runs,
                          oversubscribed=oversubscribed), None
    except CommcharError as exc:
        return None, f"fitting failed: {exc}"


@dataclass
class Advice:
    """The advisor's escaped HTML fragment and its design faults (commchar.predict.DesignFault)."""

    html: str
    faults: list[Any]


def advice_for(view: ModelView, n_values: list[int], p_values: list[int]) -> tuple[Advice | None, str | None]:
    """Advice on one library's model; (None, why) when the advisor cannot give it."""
    if view._evaluator is None:
        return None, None
    from commchar.predict import advice_html, advise

    try:
        result = advise(view._evaluator, n_values, p_values, library=view.library)
    except CommcharError as exc:
        return None, f"no advice for {view.library}: {exc}"
    faults = [f for lib in result.libraries for f in lib.faults]
    return Advice(advice_html(result), faults), None
