"""Predict and advise from a model file: functions that return data.

    from commchar.modelfile import load
    from commchar.predict import predict, advise, advice_html

    result = predict(load("m.json"), ["allgather", "gather+bcast"], ["8*p"], [2, 4, 8])
    advice = advise(load("m.json"))
    fragment = advice_html(advice)   # the HTML report's advice section

Only the command line (`commchar predict`, `commchar advise`) prints.
"""

from commchar.predict.advice import (
    CATALOGUE,
    AdviceResult,
    Comparison,
    DesignFault,
    Equivalence,
    LibraryAdvice,
    Threshold,
    advise,
)
from commchar.predict.compose import Composition, Part, parse_composition
from commchar.predict.core import Estimate, PredictResult, Row, predict
from commchar.predict.html import advice_html
from commchar.predict.values import parse_n_values, parse_p_values

__all__ = [
    "CATALOGUE",
    "AdviceResult",
    "Comparison",
    "Composition",
    "DesignFault",
    "Equivalence",
    "Estimate",
    "LibraryAdvice",
    "Part",
    "PredictResult",
    "Row",
    "Threshold",
    "advice_html",
    "advise",
    "parse_composition",
    "parse_n_values",
    "parse_p_values",
    "predict",
]
