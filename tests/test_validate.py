"""The validation programs (apps/, loop_common.h) and `commchar validate`: each
program checks its data at p = 2 with every library and fails on wrong data;
the command measures a model, traces, replays and stores a tiny configuration
end to end, and the report shows it. Real mpirun (marker mpi), tiny sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commchar.apps.sweep import CaseFailed
from commchar.cli import main
from commchar.measure.build import LOOPS
from commchar.measure.plan import parse_sizes
from commchar.store import Store
from commchar.validate import PROGRAMS, ValidateOptions, summarize
from commchar.core_distance import Cores
from commchar.validate.core import (_distance_row, fit_runs, measure_slowed_again, median_points, probe_ops, slowed_only,
                                    steps_per_library)
from commchar.validate.store import validations

from _apps import run_app

# below and above every library's rendezvous threshold here (MPICH 8 KiB, Open MPI 4 KiB)
SIZES = (24, 40000)


def test_every_program_is_built_and_known() -> None:
    assert [p.name for p in PROGRAMS] == list(LOOPS)


@pytest.mark.mpi
def test_the_programs_verify_their_data_at_p2(built_apps) -> None:
    for library, directory in built_apps:
        for program in PROGRAMS:
            for n in SIZES:
                result = run_app(library, 2, [str(directory / program.name), "--bytes", str(n),
                                           "--iterations", "3"])
                assert result["verified"] and result["errors"] == 0, (library.name, program.name, n)
                assert (result["app"], result["p"], result["bytes"], result["iterations"]) == \
                    (program.name, 2, n, 3)
                assert result["per_iteration_us"] > 0
                assert set(result["phases_s"]) == {"communication"}


@pytest.mark.mpi
def test_wrong_data_fails_and_bad_options_are_refused(one_built_library) -> None:
    library, directory = one_built_library
    for program in PROGRAMS:
        with pytest.raises(CaseFailed) as wrong:
            run_app(library, 2, [str(directory / program.name), "--bytes", "40000", "--iterations", "4"],
                 {"COMMCHAR_APP_FAULT": "wrong"})
        assert wrong.value.kind == "wrong-answer", program.name
    for argv, message in ((["allreduce_loop", "--bytes", "12"], "multiple of 8"),
                          (["master_worker", "--bytes", "8"], "at least 16"),
                          (["halo2d"], "--bytes is required"),
                          (["pingpong_loop", "--bytes", "8", "--iterations", "0"], "--iterations")):
        with pytest.raises(CaseFailed) as refused:
            run_app(library, 2, [str(directory / argv[0]), *argv[1:]])
        assert message in refused.value.message, argv


@pytest.mark.mpi
def test_master_worker_and_halo_run_on_more_ranks(one_built_library) -> None:
    library, directory = one_built_library
    for name in ("master_worker", "halo2d", "ring_replace", "alltoall_loop"):
        result = run_app(library, 3, [str(directory / name), "--bytes", "64", "--iterations", "7"])
        assert result["verified"] and result["p"] == 3, name


def test_the_models_points_are_each_the_median_of_its_runs() -> None:
    def point(run: int, op: str, n: int, mean: float, valid: bool = True) -> dict:
        return {"library": "lib", "op": op, "variant": "send", "n_bytes": n, "p": 2, "sync": "barrier",
                "t_us": mean - 0.01, "t_mean_us": mean, "valid": valid, "run_id": run}

    points = [point(1, "pingpong", 64, 0.5), point(2, "pingpong", 64, 0.9), point(3, "pingpong", 64, 0.6),
              point(1, "pingpong", 4096, 2.0), point(2, "pingpong", 4096, 1.0),  # even: the lower middle
              point(1, "exchange", 64, 0.3), point(2, "exchange", 64, 9.0, valid=False),
              point(3, "exchange", 64, 0.4),
              point(2, "pingpong", 8300, 5.0)]  # one run's refinement alone
    kept = {(pt["op"], pt["n_bytes"]): pt for pt in median_points(points)}
    assert len(kept) == 4
    assert kept[("pingpong", 64)]["run_id"] == 3  # 0.6 of 0.5, 0.6, 0.9
    assert kept[("pingpong", 4096)]["run_id"] == 2
    assert kept[("exchange", 64)]["run_id"] == 1  # of the valid ones, 0.3 and 0.4
    assert kept[("pingpong", 8300)]["t_mean_us"] == 5.0
    # a point is kept whole, as its run measured it
    assert kept[("pingpong", 64)] is points[2]


def test_the_models_points_leave_out_those_measured_on_a_slowed_core_where_a_run_had_none() -> None:
    def point(run: int, n: int, mean: float, copy: list[float] | None) -> dict:
        return {"library": "lib", "op": "alltoall", "variant": "", "n_bytes": n, "p": 2, "sync": "none",
                "t_us": mean, "t_mean_us": mean, "valid": True, "run_id": run,
                "extra": {"core_copy_ns": copy} if copy else {}}

    fast, slow = [42.0, 42.2], [42.0, 56.0]
    points = [point(1, 4096, 1.2, fast), point(2, 4096, 1.9, slow), point(3, 4096, 1.8, slow),
              point(1, 256, 0.5, slow), point(2, 256, 0.8, slow), point(3, 256, 0.85, slow),
              point(1, 64, 0.3, None), point(2, 64, 0.4, fast), point(3, 64, 0.35, None)]
    points += [point(k, 8 + k, 0.1, fast) for k in range(10)]  # the library's floor: 42 ns
    kept = {pt["n_bytes"]: pt for pt in median_points(points)}
    assert kept[4096]["run_id"] == 1  # the one run on full-speed cores, not the slowed median 1.8
    assert kept[256]["run_id"] == 2  # every run slowed: their median
    assert kept[64]["run_id"] == 3  # unknown copies count as full speed: 0.3, 0.35, 0.4


def test_a_row_whose_launches_all_ran_slowed_is_launched_again_until_one_runs_at_full_speed() -> None:
    cores = Cores(((70.0, 70.0),) * 20, 44.0)  # the model's points: one state, copies' floor 44 ns

    def attempt(us: float, copy: float) -> dict:
        return {"per_iteration_us": us, "core_rtt_ns": [70.0, 70.0], "core_copy_ns": [44.0, copy], "kept": True}

    def row(attempts: list[dict]) -> dict:
        distance = _distance_row(attempts, cores)
        return {"program": "halo2d", "bytes": 262144, "launches_us": distance.pop("launches_us"),
                "measured_us": distance.pop("measured_us"), "core_distance": distance,
                "loggps_us": 58.0, "loggp_us": 70.0, "loggps_error_pct": None, "loggp_error_pct": None}

    slowed = row([attempt(72.0, 56.0), attempt(70.0, 55.0), attempt(75.0, 57.0)])
    settled = row([attempt(59.0, 44.0), attempt(72.0, 56.0), attempt(60.0, 44.5)])
    assert slowed_only(slowed) and not slowed_only(settled)
    passes = iter([[attempt(71.0, 58.0)] * 3, [attempt(58.5, 44.0), attempt(73.0, 60.0), attempt(59.5, 44.2)]])
    asked: list[tuple[str, int]] = []

    def launch(r: dict) -> list[dict]:
        asked.append((r["program"], r["bytes"]))
        return next(passes)

    measure_slowed_again([slowed, settled], launch, cores, passes=3)
    # launched again twice: the first pass ran slowed too, the second found full speed
    assert asked == [("halo2d", 262144)] * 2
    assert slowed["core_distance"]["passes"] == 3 and "passes" not in settled["core_distance"]
    assert len(slowed["launches_us"]) == 9 and slowed["core_distance"]["slowed"] == 7
    assert slowed["measured_us"] == 59.0  # the median of the two full-speed launches
    assert slowed["core_distance"]["first_measured_us"] == 72.0
    assert slowed["loggps_error_pct"] == pytest.approx(100 * (58.0 - 59.0) / 59.0)
    assert settled["measured_us"] == 59.5
    # no pass: the row keeps its slowed time
    again = row([attempt(72.0, 56.0)])
    measure_slowed_again([again], launch, cores, passes=0)
    assert again["measured_us"] == 72.0 and "passes" not in again["core_distance"]


def test_the_noise_probe_of_the_median_run_is_the_one_whose_detours_took_the_median_share() -> None:
    def noise(run: int, loop_us: float, lost_us: list[float]) -> dict:
        bins = [[4.0, 1000.0, lost_us[0]], [512.0, 1.0, lost_us[1]]]
        return {"library": "lib", "op": "noise", "variant": "", "n_bytes": 0, "p": 2, "sync": "barrier",
                "t_us": loop_us, "t_mean_us": loop_us, "valid": True, "run_id": run,
                "extra": {"noise_seconds_rank": [0.5, 0.5], "noise_bins": bins}}

    # the clock loop's time orders these runs 1, 2, 3; their detours 1, 3, 2: one rank lost
    # 40% of its time to a neighbour in run 2, which the median run's model must not charge
    runs = [noise(1, 0.497, [5000.0, 600.0]), noise(2, 0.498, [6000.0, 200000.0]),
            noise(3, 0.499, [6000.0, 900.0]), noise(4, 0.4, [1.0, 1.0])]
    runs[3]["extra"] = {}  # not the kernel's lists: ordered last
    (kept,) = median_points(runs)
    assert kept["run_id"] == 3
    (kept,) = median_points(runs[:3])
    assert kept["run_id"] == 3


def test_summary_is_the_median_and_spread_over_runs() -> None:
    def row(repeat: int, measured: float, gps: float, gp: float) -> dict:
        return {"library": "lib", "program": "ring_sendrecv", "bytes": 64, "p": 2, "S": 1024.0,
                "measured_us": measured, "loggps_us": gps, "loggp_us": gp, "load_avg_1m": 0.5 * repeat,
                "loggps_error_pct": 100 * (gps - measured) / measured,
                "loggp_error_pct": 100 * (gp - measured) / measured}

    runs = [{"rows": [row(1, 2.0, 2.2, 1.0)]}, {"rows": [row(2, 1.0, 0.9, 1.0)]},
            {"rows": [row(3, 4.0, 4.0, 5.0)]}]
    (entry,) = summarize(runs)
    assert entry["repeats"] == 3 and entry["measured_us"] == 2.0 and entry["loggps_us"] == 2.2
    assert entry["loggps_error_pct"] == pytest.approx(0.0)
    assert entry["loggps_error_range"] == pytest.approx([-10.0, 10.0])
    assert entry["loggp_error_range"] == pytest.approx([-50.0, 25.0])
    assert entry["loggp_error_pct"] == pytest.approx(0.0) and entry["load_avg_1m"] == 1.5
    # per repeat |LogGPS| - |LogGP|: 10 - 50, 10 - 0, 0 - 25 points; their median
    assert entry["loggps_further_pct"] == pytest.approx(-25.0)
    assert entry["probe_drift_pct"] is None
    assert entry["loggps_draw_span_pct"] is None  # replayed without the node's detours


def test_a_predictions_resolution_is_the_span_of_its_noise_draws() -> None:
    def row(draws: list[float]) -> dict:
        return {"library": "lib", "program": "pingpong_loop", "bytes": 64, "p": 2, "S": 1024.0,
                "measured_us": 1.0, "loggps_us": 1.0, "loggp_us": 1.0, "load_avg_1m": 0.5,
                "loggps_error_pct": 0.0, "loggp_error_pct": 0.0,
                "noise": {"makespans": {"loggps": draws, "loggp": draws}}}

    # each repeat's span over its median: 2%, 4% and 0%; their median kept
    runs = [{"rows": [row([99.0, 100.0, 101.0])]}, {"rows": [row([98.0, 100.0, 102.0])]},
            {"rows": [row([100.0, 100.0, 100.0])]}]
    (entry,) = summarize(runs)
    assert entry["loggps_draw_span_pct"] == pytest.approx(2.0)


def test_the_drift_is_the_median_of_the_runs_that_measured_it() -> None:
    def row(drift: float | None) -> dict:
        return {"library": "lib", "program": "ring_sendrecv", "bytes": 64, "p": 2, "S": 1024.0,
                "measured_us": 1.0, "loggps_us": 1.0, "loggp_us": 1.0, "load_avg_1m": 0.5,
                "loggps_error_pct": 0.0, "loggp_error_pct": 0.0, "probe_us": 1.0,
                "probe_after_us": None if drift is None else 1.0 + drift / 100, "probe_drift_pct": drift}

    (entry,) = summarize([{"rows": [row(d)]} for d in (30.0, None, -4.0, 2.0)])
    assert entry["probe_drift_pct"] == pytest.approx(2.0)
    assert entry["probe_after_us"] == pytest.approx(1.02)


def test_the_probes_measured_again_are_those_of_the_chosen_programs() -> None:
    chosen = ValidateOptions(programs=["pingpong_loop", "ring_sendrecv", "ring_replace", "halo2d"])
    assert probe_ops(chosen) == ["exchange", "pingpong:send"]
    assert probe_ops(ValidateOptions(programs=["allreduce_loop", "alltoall_loop"])) == [
        "allreduce:sum", "alltoall"]
    # programs without a probe, or the step asked away, measure nothing more
    assert probe_ops(ValidateOptions(programs=["halo2d", "master_worker"])) == []
    assert probe_ops(ValidateOptions(probes_after=False)) == []
    sizes = len(ValidateOptions().sizes)
    # three runs of the model and its fit, the cases, the probes again
    assert steps_per_library(ValidateOptions(repeat=2)) == 2 * (4 + len(PROGRAMS) * sizes + 1)
    assert steps_per_library(ValidateOptions(repeat=2, probes_after=False)) == 2 * (4 + len(PROGRAMS) * sizes)
    assert steps_per_library(ValidateOptions(model_launches=1)) == 2 + len(PROGRAMS) * sizes + 1


def test_the_model_is_measured_at_the_programs_sizes_too() -> None:
    options = ValidateOptions(sizes=[12288, 256], model_sizes="0:1K")
    assert parse_sizes(options.measured_sizes()) == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 12288]


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "--repeat"),
    (["--programs", "pingpong_loop,nope"], "unknown program 'nope'"),
    (["--sizes", "64,lots"], "--sizes"),
    (["--iterations", "0"], "--iterations"),
    (["--np", "0"], "--np"),
    (["--launches", "0"], "--launches"),
    (["--model-launches", "0"], "--model-launches"),
    (["--slowed-passes", "-1"], "--slowed-passes"),
])
def test_bad_options_are_one_line(argv: list[str], message: str, tmp_path: Path, capsys) -> None:
    assert main(["validate", "--db", str(tmp_path / "v.db"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.mpi
def test_validate_end_to_end_on_a_tiny_configuration(built_apps, tmp_path: Path, capsys) -> None:
    db = tmp_path / "v.db"
    names = ",".join(lib.name for lib, _ in built_apps)
    assert main(["validate", "--db", str(db), "--library", names, "--sizes", "64,40000",
                 "--iterations", "20", "--programs", "pingpong_loop,ring_sendrecv,allreduce_loop",
                 "--model-sizes", "0,64,1K,4K,16K,64K", "--max-time", "0.05", "--precision", "0.1",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [run["library"] for run in doc["runs"]] == [lib.name for lib, _ in built_apps]
    assert len(doc["summary"]) == 3 * 2 * len(built_apps)
    assert all(0 <= e["repeats_in_state"] <= e["repeats"] == 1 for e in doc["summary"])
    for run in doc["runs"]:
        assert run["loggp"]["S"] is not None and len(run["rows"]) == 6
        for row in run["rows"]:
            assert row["measured_us"] > 0 and row["loggps_us"] > 0 and row["loggp_us"] > 0
            assert row["loggps_error_pct"] == pytest.approx(
                100 * (row["loggps_us"] - row["measured_us"]) / row["measured_us"])
            # the traced run's own clock and the trace's loop phase agree; the measured time is
            # another, untraced run's
            assert row["program_us"] == pytest.approx(row["traced_us"], rel=0.05, abs=0.2)
            assert row["traced_us"] > 0
            # the kernel's probe of the same operation (exchange:sendrecv for the ring): the model
            # measures the programs' sizes too, 40000 B beside its --model-sizes
            assert row["probe_us"] > 0
            if run["probe_core_distance"]["match"] == "differs":  # another state: not compared
                assert row["probe_drift_pct"] is None
            else:
                assert row["probe_drift_pct"] == pytest.approx(
                    100 * (row["probe_after_us"] - row["probe_us"]) / row["probe_us"])
            # measured again after the programs at every size of the validation
            assert row["probe_after_us"] > 0
            if row["bytes"] < run["loggp"]["S"]:  # eager either way: the models coincide
                assert row["loggps_us"] == pytest.approx(row["loggp_us"])
            # the loop's cores timed before and after it, against the model's main state
            distance = row["core_distance"]
            # three launches (the default), each tried again while in another state, and all
            # three again in a later pass (at most 2 more) while every one ran on a slowed core
            passes = distance.get("passes", 1)
            assert 1 <= passes <= 3 and ("first_measured_us" in distance) == (passes > 1)
            assert distance["match"] in ("same", "differs") and 3 * passes <= distance["runs"] <= 12 * passes
            assert len(distance["attempts"]) == distance["runs"] and all(
                len(a["core_rtt_ns"]) == 2 and a["per_iteration_us"] > 0 for a in distance["attempts"])
            assert len(row["launches_us"]) == 3 * passes and min(row["launches_us"]) <= row["measured_us"] \
                <= max(row["launches_us"])
            assert distance["model_rtt_ns"] > 0
            if distance["match"] == "differs":  # only after every attempt ran in another state
                assert distance["runs"] == 12 * passes
        # three runs of the model, each tried again while its points span two states
        kept = run["model_run_ids"]
        # the programs are timed from their first message: the model knows what a program's
        # first sends and a pair's first rendezvous message cost
        (model, _) = fit_runs(db, kept)
        cold = model.libraries[run["library"]].loggp["cold_start"]
        assert cold["messages"] >= 0 and cold["rendezvous_first_us"] is not None
        assert len(kept) == 3 and kept[0] == run["model_run_id"] and kept == sorted(kept)
        assert 3 <= len(run["model_core_distance"]["attempts"]) <= 12
        assert {a["run_id"] for a in run["model_core_distance"]["attempts"]} >= set(kept)
        assert run["probe_run_id"] > max(kept)
        after = run["probe_core_distance"]
        assert after["match"] in ("same", "differs") and 1 <= after["runs"] <= 4
        assert after["match"] == "same" or after["runs"] == 4
    with Store(db) as store:
        (stored,) = validations(store)
        assert stored["result"]["summary"] == doc["summary"] and stored["id"] == doc["id"]
        assert len({t["id"] for t in store.connection.execute("SELECT id FROM traces")}) == 6 * len(built_apps)

    from commchar.report import ReportOptions, build_report

    report = build_report(ReportOptions(str(db)))
    assert "Validation programs: measured and predicted" in report.html
    table = next(t for t in report.tables if t.slug == f"validation-{doc['id']}")
    assert len(table.rows) == len(doc["summary"])
    assert any(f.slug == f"validation-{doc['id']}-errors" for f in report.figures)
