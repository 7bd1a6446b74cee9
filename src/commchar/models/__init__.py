"""Models fitted to measurements: Hockney, protocol regimes, collective laws in p, LogGP/LogGPS,
per-call collective costs for the simulator.

Every model follows the estimator convention (cheap constructor, `fit`
returns self, fitted attributes end in `_`, unfitted models refuse to
predict). `fit_points` turns measured points into a model-file dict
(docs/model-format.md) by calling `fit_library`, the one fitting core, for each
library; docs/models.md says how each quantity is fitted.
"""

from commchar.models._base import Estimator, NotFittedError
from commchar.models.assemble import FittedOperation, LibraryFit, fit_library, fit_models, fit_points
from commchar.models.callcost import CallCostModel
from commchar.models.collective import CollectiveModel
from commchar.models.hockney import HockneyModel
from commchar.models.laws import FORMS, Law, LawSelector
from commchar.models.loggp import LogGPModel
from commchar.models.regimes import SegmentedHockneyModel

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
