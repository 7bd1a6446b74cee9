"""The whole fit: the in-sample model of assemble.py with the held-out errors of
validation.py (a second fit without every k-th interior size, scored on the sizes
left out). It sits above both, so neither imports the other back.

fit_document gives the typed model document (commchar.modelfile.document),
fit_points its JSON object (docs/model-format.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from commchar.modelfile.document import ModelDocument
from commchar.models.assemble import checked_points, fit_in_sample
from commchar.models.core_distance_policy import keep_one_state
from commchar.models.regimes import DEFAULT_PENALTY
from commchar.models.validation import add_held_out


def fit_document(points: list[dict], failures: list[dict] | None = None, *, units: str = "si",
                 runs: list[dict] | None = None, receiver_delay_us: dict[str, float] | None = None,
                 penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude",
                 held_out_every: int | None = 3) -> ModelDocument:
    """fit_in_sample's document, of the points measured in the host's main core-distance state
    (models/core_distance_policy.py, recorded in provenance.core_distance); with `held_out_every`,
    every operation's `errors` also hold those of a second fit without every that-many-th
    interior size."""
    points = checked_points(points)  # the held-out fit reads the same normalised points
    points, distance = keep_one_state(points)
    model = fit_in_sample(points, failures, units=units, runs=runs, receiver_delay_us=receiver_delay_us,
                          penalty=penalty, oversubscribed=oversubscribed)
    if distance:
        model = model.with_provenance(replace(model.provenance_or_empty(), core_distance=distance))
    if held_out_every is not None:
        model = add_held_out(model, points, held_out_every, penalty, oversubscribed)
    return model


def fit_points(points: list[dict], failures: list[dict] | None = None, *, units: str = "si",
               runs: list[dict] | None = None, receiver_delay_us: dict[str, float] | None = None,
               penalty: float = DEFAULT_PENALTY, oversubscribed: str = "exclude",
               held_out_every: int | None = 3) -> dict[str, Any]:
    """fit_document's model as the model file's JSON object (docs/model-format.md)."""
    return fit_document(points, failures, units=units, runs=runs, receiver_delay_us=receiver_delay_us,
                        penalty=penalty, oversubscribed=oversubscribed, held_out_every=held_out_every).to_json()
