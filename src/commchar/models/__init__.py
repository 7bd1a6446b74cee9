"""Models fitted to measurements: Hockney, protocol regimes, collective laws in p, LogGP/LogGPS,
per-call collective costs for the simulator.

Every model follows the estimator convention (cheap constructor, `fit`
returns self, fitted attributes end in `_`, unfitted models refuse to
predict). `fit_document` turns measured points into a typed model document
(commchar.modelfile.document; `fit_points` gives its JSON object, docs/model-format.md)
by calling `fit_library`, the one fitting core, for each library; docs/models.md says
how each quantity is fitted.
"""

from __future__ import annotations

import importlib
from typing import Any

# Each public name and the module that defines it, loaded on first use: importing the
# package, or one small model (`python -X importtime -c "import commchar.models.thresholds"`:
# about 0.1 s), does not pay for the fitting core's numpy and scipy (commchar.models.assemble:
# about 1 s). Code inside commchar imports from the defining module, which mypy checks.
_HOMES = {
    "Estimator": "_base", "NotFittedError": "_base",
    "FittedOperation": "assemble", "LibraryFit": "assemble", "fit_document": "document_fit",
    "fit_library": "assemble", "fit_models": "assemble", "fit_points": "document_fit",
    "CallCostModel": "callcost", "CollectiveModel": "collective", "HockneyModel": "hockney",
    "FORMS": "laws", "Law": "laws", "LawSelector": "laws", "LogGPModel": "loggp",
    "SegmentedHockneyModel": "regimes",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'commchar.models' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"commchar.models.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
