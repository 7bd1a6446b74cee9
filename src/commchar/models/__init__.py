"""Models fitted to measurements: Hockney, protocol regimes, collective laws in p, LogGP/LogGPS,
per-call collective costs for the simulator.

Every model follows the estimator convention (cheap constructor, `fit`
returns self, fitted attributes end in `_`, unfitted models refuse to
predict). `fit_points` turns measured points into a model-file dict
(docs/model-format.md) by calling `fit_library`, the one fitting core, for each
library; docs/models.md says how each quantity is fitted.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from commchar.models._base import Estimator, NotFittedError
    from commchar.models.assemble import FittedOperation, LibraryFit, fit_library, fit_models, fit_points
    from commchar.models.callcost import CallCostModel
    from commchar.models.collective import CollectiveModel
    from commchar.models.hockney import HockneyModel
    from commchar.models.laws import FORMS, Law, LawSelector
    from commchar.models.loggp import LogGPModel
    from commchar.models.regimes import SegmentedHockneyModel

# Loaded on first use: a module that needs one small model (the runner's threshold search)
# does not pay for scipy's import through the fitting core.
_HOMES = {
    "Estimator": "_base", "NotFittedError": "_base",
    "FittedOperation": "assemble", "LibraryFit": "assemble", "fit_library": "assemble",
    "fit_models": "assemble", "fit_points": "assemble",
    "CallCostModel": "callcost", "CollectiveModel": "collective", "HockneyModel": "hockney",
    "FORMS": "laws", "Law": "laws", "LawSelector": "laws", "LogGPModel": "loggp",
    "SegmentedHockneyModel": "regimes",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'commchar.models' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"commchar.models.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMS",
    "CallCostModel",
    "CollectiveModel",
    "Estimator",
    "FittedOperation",
    "HockneyModel",
    "Law",
    "LawSelector",
    "LibraryFit",
    "LogGPModel",
    "NotFittedError",
    "SegmentedHockneyModel",
    "fit_library",
    "fit_models",
    "fit_points",
]
