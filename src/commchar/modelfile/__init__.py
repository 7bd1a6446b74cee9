"""The commchar model file: expression language, validation, loading and saving.

Every part of commchar that reads a model goes through here:

    model = load("model.json")            # or ModelFile.from_dict(d)
    model.time("openmpi", "bcast", n=1024, p=8).t_us
    parse_expr("69*log2(p)").evaluate(8)

The format is specified in docs/model-format.md.
"""

from commchar.modelfile.expr import MAX_DEPTH, MAX_LENGTH, Expr, parse_expr
from commchar.modelfile.model import (
    ModelFile,
    Prediction,
    Segment,
    load,
    save,
)
from commchar.modelfile.schema import FORMAT, VERSION, validate

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "VERSION",
    "Expr",
    "ModelFile",
    "Prediction",
    "Segment",
    "load",
    "parse_expr",
    "save",
    "validate",
]
