"""The estimator convention every commchar model follows (scikit-learn's).

Constructors only store their parameters; `fit` checks its parameters and
input, sets the fitted attributes (names ending in `_`) and returns the
estimator; a model that has not been fitted refuses to predict.

Fitted attributes exist only after a fit that succeeded: every subclass's `fit`
is wrapped once here so that a fit that raises part-way leaves the estimator
as it was before the call (unfitted, or with its previous fit), instead of
half-fitted and claiming to be fitted.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from commchar.errors import InputError, ModelError, UsageError


class NotFittedError(ModelError):
    """predict() or a fitted attribute was asked of a model before fit()."""


# name -> (predicate, description used in the one message template)
Constraint = tuple[Callable[[Any], bool], str]


def positive_int(minimum: int = 1) -> Constraint:
    return (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum,
            f"an integer >= {minimum}")


def number_in(low: float, high: float) -> Constraint:
    return (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high,
            f"a number in [{low:g}, {high:g}]")


def _is_fitted_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


def _all_or_nothing(fit: Callable[..., Any]) -> Callable[..., Any]:
    """`fit` that, when it raises, restores the fitted attributes it found."""

    @functools.wraps(fit)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = {k: v for k, v in vars(self).items() if _is_fitted_name(k)}
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in [k for k in vars(self) if _is_fitted_name(k)]:
                delattr(self, name)
            vars(self).update(before)
            raise

    guarded.__wrapped_fit__ = True  # type: ignore[attr-defined]
    return guarded


class Estimator:
    """Base of the models: parameter introspection, validation, fitted checks."""

    _parameter_constraints: dict[str, Constraint] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__wrapped_fit__", False):
            cls.fit = _all_or_nothing(fit)  # type: ignore[attr-defined]

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [name for name in sig.parameters if name != "self"]

    def get_params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "Estimator":
        for name, value in params.items():
            if name not in self._param_names():
                raise UsageError(f"{type(self).__name__}: unknown parameter {name!r}")
            setattr(self, name, value)
        return self

    def _validate_params(self) -> None:
        for name, (check, description) in self._parameter_constraints.items():
            value = getattr(self, name)
            if not check(value):
                raise UsageError(
                    f"{type(self).__name__}: parameter {name} must be {description}, got {value!r}")

    def is_fitted(self) -> bool:
        return any(_is_fitted_name(k) for k in vars(self))

    def _check_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit() first")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def fitted_section(estimator: Estimator, points: list[dict], skipped: list[str], what: str) -> dict | None:
    """A model-file section from `estimator` fitted to `points`: its params_, with its
    notes_ when it has any; None when the points cannot be fitted, and why in
    `skipped` ("<what>: <reason>")."""
    try:
        estimator.fit(points)  # type: ignore[attr-defined]
    except InputError as exc:
        skipped.append(f"{what}: {exc}")
        return None
    notes = vars(estimator).get("notes_")
    return dict(vars(estimator)["params_"]) | ({"notes": notes} if notes else {})

