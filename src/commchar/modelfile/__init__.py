"""The commchar model file: expression language, validation, loading and saving.

Every part of commchar that reads or writes a model goes through here:

    model = load("model.json")            # or ModelFile.from_dict(d)
    document = load_document("model.json")  # the typed document; save(document, path) writes it
    model.time("openmpi", "bcast", n=1024, p=8).t_us
    parse_expr("69*log2(p)").evaluate(8)

The format is specified in docs/model-format.md.
"""

from commchar.modelfile.document import (
    ABSENT,
    LibraryEntry,
    MeanFit,
    ModelDocument,
    OperationEntry,
    Provenance,
    SegmentEntry,
    given,
)
from commchar.modelfile.expr import MAX_DEPTH, MAX_LENGTH, Expr, parse_expr
from commchar.modelfile.model import (
    ModelFile,
    Prediction,
    Segment,
    load,
    load_document,
    save,
)
from commchar.modelfile.schema import FORMAT, VERSION, validate

__all__ = [
    "ABSENT",
    "FORMAT",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "VERSION",
    "Expr",
    "LibraryEntry",
    "MeanFit",
    "ModelDocument",
    "ModelFile",
    "OperationEntry",
    "Prediction",
    "Provenance",
    "Segment",
    "SegmentEntry",
    "given",
    "load",
    "load_document",
    "parse_expr",
    "save",
    "validate",
]
