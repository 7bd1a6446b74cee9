"""The typed model document: what `fit` builds is what the file holds, and a file read back
is the same document.

tests/fixtures/points/two_libraries.json.gz is `commchar export --format json` of one
short measured run of Open MPI and MPICH on this kind of machine (every operation, the
LogGP probes, cold start, first touch), so the models below are real fitted models; the
report's fixture database (test_report.py) adds enough sizes for held-out errors.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from pathlib import Path

import pytest

from commchar.cli import main
from commchar.errors import ModelError
from commchar.modelfile import ABSENT, ModelDocument, load_document, save
from commchar.models.document_fit import fit_document, fit_points

FIXTURES = Path(__file__).parent / "fixtures"
POINTS = FIXTURES / "points" / "two_libraries.json.gz"


def _points() -> list[dict]:
    with gzip.open(POINTS, "rt", encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory, simulator: str) -> Path:
    """The model `commchar fit` writes of the measured run, call costs included."""
    folder = tmp_path_factory.mktemp("document")
    source = folder / "points.json"
    source.write_text(json.dumps(_points()), encoding="utf-8")
    out = folder / "model.json"
    assert main(["fit", "--json", str(source), "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def fitted_db(tmp_path_factory: pytest.TempPathFactory, simulator: str) -> Path:
    """The model `commchar fit --db` writes of the report's fixture database, its
    oversubscribed p fitted too."""
    from test_report import make_fixture_db

    folder = tmp_path_factory.mktemp("document-db")
    make_fixture_db(folder / "fixture.db")
    out = folder / "model.json"
    assert main(["fit", "--db", str(folder / "fixture.db"), "--oversubscribed", "include", "-o", str(out)]) == 0
    return out


def test_a_fitted_model_read_and_written_again_is_byte_identical(fitted: Path, fitted_db: Path,
                                                                  tmp_path: Path) -> None:
    for i, path in enumerate((fitted, fitted_db)):
        again = tmp_path / f"again{i}.json"
        save(load_document(path), again)
        assert again.read_bytes() == path.read_bytes(), path
    # the parts the simulator and the report read are typed, not dicts
    document = load_document(fitted)
    mpich = document.libraries["mpich"]
    assert isinstance(mpich.loggp, dict) and "call_costs" in mpich.loggp
    send = mpich.operations["pingpong:send"]
    assert send.kind == "p2p" and send.segments[0].n_min == 0 and send.segments[-1].n_max is None
    assert send.mean is not ABSENT and isinstance(send.errors, dict) and "in_sample" in send.errors
    assert document.provenance_or_empty().source == "fit"
    synthetic = load_document(fitted_db)
    assert any("held_out" in op.errors for lib in synthetic.libraries.values() for op in lib.operations.values()
               if isinstance(op.errors, dict))
    assert isinstance(synthetic.provenance_or_empty().size_choice, dict)


def test_fit_document_is_what_fit_points_and_the_file_hold(fitted: Path) -> None:
    points = _points()
    runs = [{"json": str(fitted.parent / "points.json")}]
    document = fit_document(points, runs=runs)
    as_json = fit_points(points, runs=runs)
    file = json.loads(fitted.read_text(encoding="utf-8"))
    for d in (as_json, file):
        d["provenance"].pop("created")
    mine = document.to_json()
    mine["provenance"].pop("created")
    assert json.dumps(mine) == json.dumps(as_json)
    # the file adds the simulator's call costs (and nothing else) to the same fit
    for library in file["libraries"].values():
        (library.get("loggp") or {}).pop("call_costs", None)
    file["provenance"].pop("size_choice", None)
    assert json.dumps(mine) == json.dumps(file)


def test_a_document_is_a_value(fitted: Path) -> None:
    document = load_document(fitted)
    with pytest.raises(dataclasses.FrozenInstanceError):
        document.version = 2  # type: ignore[misc]
    out = document.to_json()
    out["libraries"]["mpich"]["operations"].clear()
    out["provenance"]["skipped"].append("changed")
    assert document.libraries["mpich"].operations and "changed" not in document.provenance_or_empty().skipped
    noted = document.with_skipped(["one more"])
    assert noted.provenance_or_empty().skipped[-1] == "one more"
    assert "one more" not in document.provenance_or_empty().skipped


@pytest.mark.parametrize("path", sorted((FIXTURES / "modelfiles" / "valid").glob("*.json")), ids=lambda p: p.stem)
def test_every_valid_file_reads_into_the_document_and_writes_the_same_text(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    document = ModelDocument.from_json(data)
    assert json.dumps(document.to_json(), indent=2) == json.dumps(data, indent=2)


@pytest.mark.parametrize("path", sorted((FIXTURES / "modelfiles" / "invalid").glob("*.json")), ids=lambda p: p.stem)
def test_every_invalid_file_is_refused_naming_the_file(path: Path) -> None:
    with pytest.raises(ModelError, match=f"^{re.escape(str(path))}[: ]"):
        load_document(path)


def test_unknown_keys_are_kept_after_the_known_ones() -> None:
    data = {"format": "commchar-model", "version": 1, "libraries": {"x": {"operations": {"bcast": {
        "segments": [{"n_min": 0, "n_max": None, "t_s": 1.0, "t_b": 0.001, "note": "hand-written"}],
        "kind": "collective"}}}}, "comment": "kept"}
    out = ModelDocument.from_json(data).to_json()
    assert out["comment"] == "kept"
    op = out["libraries"]["x"]["operations"]["bcast"]
    assert list(op) == ["kind", "segments"] and op["segments"][0]["note"] == "hand-written"


def test_the_file_keeps_the_formats_key_order(fitted: Path, fitted_db: Path) -> None:
    """Other tools read the JSON: its keys come in the order docs/model-format.md shows."""
    top = json.loads(fitted_db.read_text(encoding="utf-8"))
    assert list(top) == ["format", "version", "units", "provenance", "libraries"]
    assert list(top["provenance"]) == [
        "source", "created", "commchar_version", "runs", "points", "invalid_points", "oversubscribed",
        "oversubscribed_policy", "oversubscribed_excluded", "failures", "skipped", "units", "regime_penalty",
        "notes", "size_choice"]
    ops = top["libraries"]["openmpi"]["operations"]
    assert list(ops["pingpong:send"]) == ["kind", "n_range", "p_range", "segments", "metrics", "fit",
                                          "breakpoints", "mean", "errors"]
    assert list(ops["pingpong:send"]["segments"][0]) == ["n_min", "n_max", "t_s", "t_b", "fit"]
    assert list(ops["bcast"]) == ["kind", "n_range", "p_range", "segments", "laws", "metrics", "fit",
                                  "breakpoints", "mean", "errors", "oversubscribed_p"]
    assert list(ops["bcast"]["segments"][0]) == ["n_min", "n_max", "t_s", "t_b", "t_c", "fit"]
    assert list(ops["bcast"]["mean"]) == ["segments", "fit", "breakpoints", "measured"]
    assert list(ops["bcast"]["errors"]) == ["in_sample", "mean_in_sample", "held_out"]
    measured = json.loads(fitted.read_text(encoding="utf-8"))["libraries"]["mpich"]
    assert list(measured) == ["version", "operations", "nbc_overlap", "loggp"]
    assert list(measured["loggp"])[-3:] == ["cold_start", "first_touch", "call_costs"]


def test_an_entry_read_without_a_required_key_is_a_model_error() -> None:
    from commchar.modelfile import LibraryEntry, OperationEntry

    with pytest.raises(ModelError, match=r"^libraries\.x\.operations\.bcast: missing 'segments'$"):
        LibraryEntry.from_json({"operations": {"bcast": {"kind": "collective"}}}, "libraries.x")
    with pytest.raises(ModelError, match=r"^segments\[0\]: missing 't_b'$"):
        OperationEntry.from_json({"segments": [{"n_min": 0, "n_max": None, "t_s": 1.0}]})
