"""The provenance of a fitted model: which runs and points, what the oversubscription
policy left out or fitted, what could not be fitted, the units and regime penalty."""

from __future__ import annotations

from datetime import datetime, timezone

from commchar import __version__
from commchar.modelfile.document import Provenance
from commchar.models.metrics import unit_names

FAILURE_FIELDS = ("library", "op", "variant", "p", "n_bytes", "kind", "message")


def fit_provenance(points: list[dict], *, runs: list[dict] | None, failures: list[dict] | None,
                   skipped: list[str], excluded: list[dict], over: list[str], units: str,
                   penalty: float, oversubscribed: str) -> Provenance:
    """`points` are the checked points fitted (invalid ones counted); `runs` ([{"db", "run_id"}])
    defaults to the points' run ids; `over` names each "library key p=q" fitted from
    oversubscribed jobs and `excluded` what the policy left out ([{library, operation, p, points}])."""
    return Provenance(
        source="fit",
        created=datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        commchar_version=__version__,
        runs=runs or sorted(({"run_id": r} for r in {pt["run_id"] for pt in points if pt.get("run_id") is not None}),
                            key=lambda d: str(d["run_id"])),
        points=len(points),
        invalid_points=sum(1 for pt in points if not pt["valid"]),
        oversubscribed=over,
        oversubscribed_policy=oversubscribed,
        oversubscribed_excluded=excluded,
        failures=[{k: f.get(k) for k in FAILURE_FIELDS} for f in (failures or [])],
        skipped=tuple(skipped),
        units=unit_names(units),
        regime_penalty=penalty,
        notes=("Hockney fits on relative error; regimes by exact segmented least squares + BIC;"
               " laws in p by leave-one-out cross-validation (docs/models.md)."
               + (f" {len(over)} operation/p combination(s) were fitted from oversubscribed jobs:"
                  " timings there include time-sharing of cores." if over else "")
               + (f" Oversubscribed points left out of the fits (dedicated points exist):"
                  f" {sum(e['points'] for e in excluded)} in {len(excluded)} operation(s)." if excluded else "")),
    )
