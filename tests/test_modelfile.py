"""Model files: validation with JSON paths, loading, saving, resolving keys, predicting one operation."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from commchar.errors import InputError, ModelError
from commchar.modelfile import ModelFile, load, save, validate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ap3000-mpi.json"


def two_regime_model() -> dict:
    """The model of docs/model-format.md: two point-to-point segments with a gap, LogGPS parameters."""
    return {
        "format": "commchar-model",
        "version": 1,
        "units": {"time": "us", "size": "B"},
        "libraries": {
            "openmpi": {
                "version": "Open MPI v4.1.4",
                "operations": {
                    "pingpong:send": {
                        "kind": "p2p", "n_range": [0, 4194304], "p_range": [2, 2],
                        "segments": [
                            {"n_min": 0, "n_max": 4096, "t_s": "0.41", "t_b": "0.000087"},
                            {"n_min": 8192, "n_max": None, "t_s": "1.9", "t_b": "0.000071"},
                        ],
                    },
                    "bcast": {
                        "kind": "collective", "n_range": [0, 1048576], "p_range": [2, 4],
                        "segments": [{"n_min": 0, "n_max": None, "t_s": "0.3 + 0.6*log2(p)",
                                      "t_b": "0.00011*log2(p)", "t_c": "0"}],
                        "laws": {"t_s": {"expr": "0.3 + 0.6*log2(p)", "complexity": "O(log p)"}},
                    },
                    "reduce:sum": {"kind": "collective", "segments": [
                        {"n_min": 0, "n_max": None, "t_s": "90*log2(p) - 15",
                         "t_b": "0.0171*log2(p) + 0.0037", "t_c": "0.0051*log2(p) - 0.0037"}]},
                },
                "loggp": {"L": 0.2, "o_s": 0.15, "o_r": 0.18, "g": 0.1, "G": 0.00008, "S": 65536, "s": 4096},
            }
        },
    }


def test_the_shipped_example_loads():
    model = load(EXAMPLE)
    assert model.libraries() == ["mpi"]
    assert "reduce_scatter:sum" in model.operations("mpi")
    assert model.p_range("mpi", "bcast") == (2, 12)
    assert "Tourino" in model.provenance["citation"]


def test_time_of_one_operation_by_hand():
    model = ModelFile.from_dict(two_regime_model())
    # reduce:sum at n=1024, p=8: (90*3 - 15) + (0.0171*3 + 0.0037 + 0.0051*3 - 0.0037)*1024
    #   = 255 + 0.0666*1024 = 255 + 68.1984 = 323.1984 us
    prediction = model.time("openmpi", "reduce", 1024, 8)
    assert prediction.t_us == pytest.approx(323.1984, rel=1e-12)
    assert prediction.key == "reduce:sum"


def test_segment_choice_follows_n_and_the_nearest_bound_in_a_gap():
    model = ModelFile.from_dict(two_regime_model())
    # n = 1000 in segment 0: 0.41 + 0.000087*1000 = 0.497
    assert model.time("openmpi", "pingpong", 1000, 2).t_us == pytest.approx(0.497)
    # n = 5000 in the gap (4096, 8192): nearer 4096, so segment 0: 0.41 + 0.000087*5000 = 0.845
    low = model.time("openmpi", "pingpong", 5000, 2)
    assert (low.segment, low.t_us) == (0, pytest.approx(0.845))
    # n = 7000 is nearer 8192: segment 1: 1.9 + 0.000071*7000 = 2.397
    high = model.time("openmpi", "pingpong", 7000, 2)
    assert (high.segment, high.t_us) == (1, pytest.approx(2.397))
    # n = 10^6 in the unbounded last segment: 1.9 + 71 = 72.9
    assert model.time("openmpi", "pingpong:send", 10**6, 2).t_us == pytest.approx(72.9)


def test_a_gap_is_held_between_the_times_at_its_ends():
    # segment 0 steeper, 0.41 + 0.0005 n: 2.458 at its last size, 4096 B; segment 1 takes
    # 2.481632 at its first, 8192 B (1.9 + 0.000071*8192)
    data = two_regime_model()
    data["libraries"]["openmpi"]["operations"]["pingpong:send"]["segments"][0]["t_b"] = "0.0005"
    model = ModelFile.from_dict(data)
    # n = 5000, nearer 4096: segment 0's line, 2.91, passes the upper end and is held there
    gap = model.time("openmpi", "pingpong", 5000, 2)
    assert (gap.segment, gap.t_us) == (0, pytest.approx(2.481632))
    # n = 7000, nearer 8192: segment 1's line, 2.397, lies below the lower end: held there
    late = model.time("openmpi", "pingpong", 7000, 2)
    assert (late.segment, late.t_us) == (1, pytest.approx(2.458))
    # a size a segment covers keeps its line: 4000 B, 0.41 + 2.0
    assert model.time("openmpi", "pingpong", 4000, 2).t_us == pytest.approx(2.41)


def test_extrapolation_is_flagged_never_silent():
    model = ModelFile.from_dict(two_regime_model())
    inside = model.time("openmpi", "bcast", 1024, 4)
    assert not inside.extrapolated and inside.warnings == ()
    outside_p = model.time("openmpi", "bcast", 1024, 16)
    assert outside_p.extrapolated_p and not outside_p.extrapolated_n
    assert "p=16 is outside the fitted p range [2, 4]" in outside_p.warnings[0]
    outside_n = model.time("openmpi", "bcast", 2**21, 4)
    assert outside_n.extrapolated_n and "n=2097152" in outside_n.warnings[0]
    # A point-to-point model does not depend on p: p = 64 is no extrapolation.
    assert not model.time("openmpi", "pingpong", 100, 64).extrapolated


def test_negative_time_is_warned():
    # reduce:sum at p=1: t_s = 90*0 - 15 = -15 us
    prediction = ModelFile.from_dict(two_regime_model()).time("openmpi", "reduce", 0, 1)
    assert prediction.t_us == pytest.approx(-15)
    assert any("negative" in w for w in prediction.warnings)


def test_resolve_default_variants_and_unknown_operations():
    model = ModelFile.from_dict(two_regime_model())
    assert model.resolve("openmpi", "pingpong") == "pingpong:send"
    assert model.resolve("openmpi", "reduce") == "reduce:sum"
    assert model.resolve("openmpi", "bcast") == "bcast"
    with pytest.raises(ModelError, match="unknown operation 'pingpong:ssend'.*the model has: pingpong:send"):
        model.resolve("openmpi", "pingpong:ssend")
    with pytest.raises(ModelError, match="no library 'mpich'"):
        model.operations("mpich")


def test_loggp_and_laws():
    model = ModelFile.from_dict(two_regime_model())
    assert model.loggp("openmpi") == {"L": 0.2, "o_s": 0.15, "o_r": 0.18, "g": 0.1, "G": 0.00008,
                                      "S": 65536.0, "s": 4096.0, "O": 0.0}
    assert model.laws("openmpi", "bcast")["t_s"]["complexity"] == "O(log p)"
    assert load(EXAMPLE).loggp("mpi") is None


def _broken(path: list, value) -> dict:
    d = two_regime_model()
    target = d
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


OPS = ["libraries", "openmpi", "operations"]


@pytest.mark.parametrize("path, value, message", [
    (["format"], "other", "format: expected 'commchar-model'"),
    (["version"], 2, "version: this commchar reads version 1"),
    (["units"], {"time": "ms"}, "units: times must be in us"),
    (["libraries"], {}, "libraries: no library"),
    (OPS + ["bcast", "segments", 0, "t_s"], "58 + 53*p)",
     "libraries.openmpi.operations.bcast.segments[0].t_s: unexpected ')' at column 10 in '58 + 53*p)'"),
    (OPS + ["bcast", "segments", 0, "t_s"], "__import__('os').system('true')",
     "libraries.openmpi.operations.bcast.segments[0].t_s: unexpected character"),
    (OPS + ["bcast", "segments", 0, "t_b"], "1/(p-3)",
     "libraries.openmpi.operations.bcast.segments[0].t_b: '1/(p - 3)' cannot be evaluated at p=3"),
    (OPS + ["bcast", "segments", 0, "t_b"], [1], "segments[0].t_b: expected a number or an expression string"),
    (OPS + ["bcast", "segments", 0, "t_b"], KeyError, "segments[0]: missing 't_b'"),
    (OPS + ["bcast", "segments"], [], "bcast.segments: expected a non-empty list"),
    (OPS + ["bcast", "segments"], KeyError, "operations.bcast: missing 'segments'"),
    (OPS + ["pingpong:send", "segments", 1, "n_min"], 100, "segments[1].n_min: 100 overlaps the previous segment"),
    (OPS + ["pingpong:send", "segments", 0, "n_max"], None, "segments[0].n_max: only the last segment may be unbounded"),
    (OPS + ["pingpong:send", "segments", 0, "n_min"], -1, "segments[0].n_min: must be >= 0"),
    (OPS + ["pingpong:send", "n_range"], [10, 1], "pingpong:send.n_range: high 1 is below low 10"),
    (OPS + ["bcast", "p_range"], [0, 4], "bcast.p_range[0]: must be >= 1"),
    (OPS + ["bcast", "kind"], "teleport", "bcast.kind: expected one of p2p, collective"),
    (OPS + ["bcast", "laws", "t_s", "expr"], "log2(", "bcast.laws.t_s.expr: unexpected end of input at column 6"),
    (OPS + ["Bcast!"], {"segments": []}, "bad operation key 'Bcast!'"),
    (OPS + ["pingpong:send", "mean"], {"segments": [{"n_min": 0, "n_max": None, "t_s": "x"}]},
     "pingpong:send.mean.segments[0]: missing 't_b'"),
    (OPS + ["pingpong:send", "mean"], {}, "pingpong:send.mean: missing 'segments'"),
    (OPS + ["pingpong:send", "errors"], [0.1], "pingpong:send.errors: expected a JSON object"),
    (["libraries", "openmpi", "loggp", "regimes_statistic"], "p95",
     "loggp.regimes_statistic: expected one of mean, median"),
    (["libraries", "openmpi", "loggp", "regimes_median"], [{"n_min": 0, "n_max": None, "o_s": 1, "o_r": 1, "G": -1}],
     "loggp.regimes_median[0].G: must be >= 0"),
    (["libraries", "openmpi", "loggp", "G"], -1, "libraries.openmpi.loggp.G: must be >= 0"),
    (["libraries", "openmpi", "loggp", "L"], KeyError, "libraries.openmpi.loggp: missing 'L'"),
    (["libraries", "openmpi", "loggp", "o_s"], "fast", "loggp.o_s: expected a finite number"),
    (["libraries", "openmpi", "loggp", "S_interval"], [1, 2], "loggp.S_interval: [1, 2) does not hold S"),
    (["libraries", "openmpi", "loggp", "S_interval"], [9, 2], "loggp.S_interval: high 2 is below low 9"),
])
def test_validation_names_the_json_path(path, value, message):
    with pytest.raises(ModelError) as info:
        validate(_broken(path, value))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_library_needs_operations_unless_it_has_a_loggp_section():
    empty = _broken(OPS, {})
    validate(empty)  # the loggp section alone is a model (LogGP/LogGPS from the probes)
    del empty["libraries"]["openmpi"]["loggp"]
    with pytest.raises(ModelError, match="libraries.openmpi.operations: no operation"):
        validate(empty)
    empty["libraries"]["openmpi"]["loggp_partial"] = {"S": 12000, "S_interval": [12000, 12001]}
    validate(empty)  # the rndv probe alone gives S


def test_load_errors(tmp_path):
    with pytest.raises(InputError, match="cannot read model file"):
        load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelError, match="not valid JSON"):
        load(bad)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(_broken(OPS + ["bcast", "segments", 0, "t_s"], "exp(")))
    # A library is checked when first used (a file of thousands of libraries loads at once).
    with pytest.raises(ModelError, match=r"broken.json: libraries.openmpi.operations.bcast.segments\[0\].t_s"):
        load(broken).operations("openmpi")
    with pytest.raises(ModelError, match=r"libraries.openmpi.operations.bcast.segments\[0\].t_s"):
        load(broken).check_all()


def test_a_model_of_many_libraries_costs_only_the_libraries_used(tmp_path):
    """20000 libraries must not take over 90 s to load before one is used."""
    import time

    def library(i: int) -> dict:  # expressions differ, as fitted libraries' do
        segment = {"n_min": 0, "n_max": None, "t_s": f"{69 + i * 1e-6:.6f}*log2(p)", "t_b": "0.0162*log2(p)"}
        return {"operations": {"bcast": {"kind": "collective", "p_range": [2, 4096], "segments": [segment]}}}

    path = tmp_path / "many.json"
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {f"lib{i}": library(i) for i in range(20000)}}))
    started = time.process_time()
    model = load(path)
    t_us = model.time("lib17", "bcast", 1024, 4).t_us
    elapsed = time.process_time() - started
    assert t_us > 0 and len(model.libraries()) == 20000
    assert list(model._ops) == ["lib17"]  # the other 19999 were neither validated nor built
    assert elapsed < 10, f"{elapsed:.1f} s of CPU to load a model and use one of its libraries"


def test_save_round_trip_and_refuses_invalid(tmp_path):
    d = two_regime_model()
    target = tmp_path / "m.json"
    save(d, target)
    assert json.loads(target.read_text()) == d
    assert load(target).time("openmpi", "bcast", 0, 4).t_us == pytest.approx(0.3 + 0.6 * 2)
    with pytest.raises(ModelError):
        save(_broken(["version"], 7), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_model_keeps_its_own_copy():
    d = two_regime_model()
    model = ModelFile.from_dict(d)
    d["libraries"]["openmpi"]["operations"].clear()
    assert "bcast" in model.operations("openmpi")
    assert copy.deepcopy(model.data) == model.data


def test_errors_on_bad_n_and_p():
    model = ModelFile.from_dict(two_regime_model())
    with pytest.raises(ModelError, match="message length"):
        model.time("openmpi", "bcast", -1, 4)
    with pytest.raises(ModelError, match="process count"):
        model.time("openmpi", "bcast", 1, 0)


def test_an_operation_fitted_from_oversubscribed_runs_warns_at_every_prediction():
    import json
    from pathlib import Path

    from commchar.modelfile import ModelFile

    data = json.loads((Path(__file__).parents[1] / "examples" / "ap3000-mpi.json").read_text())
    data["libraries"]["mpi"]["operations"]["bcast"]["oversubscribed_p"] = [3, 4]
    model = ModelFile.from_dict(data)
    assert any("oversubscribed" in w for w in model.time("mpi", "bcast", 1024, 8).warnings)
    assert not any("oversubscribed" in w for w in model.time("mpi", "gather", 1024, 8).warnings)


def test_loggp_regimes_are_validated_by_path():
    import copy
    import json
    import re
    from pathlib import Path

    import pytest

    from commchar.errors import ModelError
    from commchar.modelfile import validate

    base = json.loads((Path(__file__).parents[1] / "examples" / "ap3000-mpi.json").read_text())
    base["libraries"]["mpi"]["loggp"] = {"L": 1, "o_s": 1, "o_r": 1, "g": 1, "G": 0.01}
    good = [{"n_min": 0, "n_max": 1024, "o_s": 1, "o_r": 1, "G": 0.01},
            {"n_min": 2048, "n_max": None, "o_s": 2, "o_r": 2, "G": 0.005, "O": 0.001}]
    model = copy.deepcopy(base)
    model["libraries"]["mpi"]["loggp"]["regimes"] = good
    validate(model)
    for bad, where in (([good[1], good[0]], "regimes[1].n_min"),
                       ([{**good[0], "G": -1}], "regimes[0].G"),
                       ([{**good[0], "o_s": "fast"}], "regimes[0].o_s"),
                       ("many", "regimes")):
        model = copy.deepcopy(base)
        model["libraries"]["mpi"]["loggp"]["regimes"] = bad
        with pytest.raises(ModelError, match=re.escape(f"loggp.{where}")):
            validate(model)


def test_the_mean_fit_is_read_with_statistic_mean_and_the_median_by_default():
    d = two_regime_model()
    d["libraries"]["openmpi"]["operations"]["pingpong:send"]["mean"] = {
        "segments": [{"n_min": 0, "n_max": None, "t_s": "0.5", "t_b": "0.0001"}]}
    m = ModelFile.from_dict(d)
    assert m.time("openmpi", "pingpong:send", 10000, 2).t_us == pytest.approx(1.9 + 0.000071 * 10000)
    assert m.time("openmpi", "pingpong:send", 10000, 2, statistic="mean").t_us == pytest.approx(1.5)
    assert len(m.segments("openmpi", "pingpong:send", "mean")) == 1
    # an operation without a mean fit answers with its median one
    assert m.time("openmpi", "bcast", 0, 4, statistic="mean").t_us == pytest.approx(1.5)


def test_measured_means_price_a_charged_call_and_a_bad_table_is_refused():
    d = two_regime_model()
    d["libraries"]["openmpi"]["operations"]["bcast"]["mean"] = {
        "segments": [{"n_min": 0, "n_max": None, "t_s": "1.0", "t_b": "0.001"}],
        "measured": [{"p": 4, "steps": [[0, 1.2], [1000, 2.2], [4000, 4.0]]}]}
    m = ModelFile.from_dict(d)
    bcast = lambda n, p: m.charged_time("openmpi", "bcast", n, p).t_us  # noqa: E731
    assert bcast(1000, 4) == pytest.approx(2.2)
    assert [m.charged_time("openmpi", "bcast", n, 4).basis for n in (1000, 2000, 8000)] == [
        "measured", "measured neighbours", "fit"]
    assert bcast(0, 4) == pytest.approx(1.2)
    # between two sizes the fit (1 + 0.001 n) times the ratio interpolated in log n: at 2000,
    # halfway from 2.2 / 2 = 1.1 to 4 / 5 = 0.8
    assert bcast(2000, 4) == pytest.approx(3.0 * 0.95)
    # from 0 bytes the ratio is interpolated in n: 1.2 / 1 at 0, 1.1 at 1000
    assert bcast(500, 4) == pytest.approx(1.5 * 1.15)
    # beyond the table, or at a p it does not hold: the mean fit
    assert bcast(8000, 4) == pytest.approx(9.0)
    assert bcast(1000, 8) == pytest.approx(2.0)
    for bad, where in (({"p": 4, "steps": [[1000, 2.2], [0, 1.2]]}, "measured[0].steps[1][0]"),
                       ({"p": 4, "steps": []}, "measured[0].steps"),
                       ({"p": 0.5, "steps": [[0, 1.0]]}, "measured[0].p"),
                       ({"p": 4, "steps": [[0, -1.0]]}, "measured[0].steps[0][1]")):
        d2 = copy.deepcopy(d)
        d2["libraries"]["openmpi"]["operations"]["bcast"]["mean"]["measured"] = [bad]
        with pytest.raises(ModelError, match=re.escape(f"bcast.mean.{where}")):
            ModelFile.from_dict(d2)
