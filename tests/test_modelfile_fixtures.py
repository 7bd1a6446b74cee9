"""The model file has one door and two readers: the Python schema and the simulator's
reader (sim/src/params.rs) must accept and refuse the same files (tests/fixtures/modelfiles)."""

import subprocess
from pathlib import Path

import pytest

from commchar.errors import CommcharError
from commchar.modelfile import FORMAT, VERSION, load
from commchar.simulate.binary import find_binary

FIXTURES = Path(__file__).parent / "fixtures" / "modelfiles"
VALID = sorted((FIXTURES / "valid").glob("*.json"))
INVALID = sorted((FIXTURES / "invalid").glob("*.json"))


def python_accepts(path: Path) -> bool:
    try:
        load(path).check_all()
    except CommcharError:
        return False
    return True


def simulator_verdict(path: Path) -> subprocess.CompletedProcess:
    # allreduce with call costs on: the simulator reads both the loggp parameters and call_costs
    return subprocess.run([str(find_binary()), "--model", str(path), "--library", "lib",
                           "--collective", "allreduce:ring", "--n", "1024", "--p", "4", "--json"],
                          capture_output=True, text=True, timeout=60)


def test_both_kinds_of_fixture_exist():
    assert len(VALID) >= 4 and len(INVALID) >= 30


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_file_is_accepted_by_both_readers(path):
    assert python_accepts(path)
    done = simulator_verdict(path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_file_is_refused_by_both_readers(path):
    assert not python_accepts(path)
    done = simulator_verdict(path)
    # an input error (exit 3) in one line naming the file, never a panic (101)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and str(path) in done.stderr


def test_commchar_simulate_refuses_what_the_schema_refuses_in_its_words(capsys, tmp_path):
    """A file the simulator alone would run (a broken segment it does not read) is refused
    by `commchar simulate` before the simulator starts."""
    from commchar.cli import main

    text = (FIXTURES / "valid" / "minimal.json").read_text().replace('"t_s": 1.0', '"t_s": "1+"')
    broken = tmp_path / "m.json"
    broken.write_text(text)
    assert simulator_verdict(broken).returncode == 0  # the simulator does not read segments
    assert main(["simulate", "--model", str(broken), "--library", "lib", "--collective", "bcast:binomial",
                 "--n", "8", "--p", "4"]) == 2
    err = capsys.readouterr().err
    assert "segments[0].t_s" in err and err.count("\n") == 1


def test_fit_writes_the_format_both_readers_read(tmp_path):
    """`commchar fit` writes through modelfile.save: the header carries FORMAT and VERSION."""
    import json

    from commchar.modelfile import save

    doc = json.loads((FIXTURES / "valid" / "minimal.json").read_text())
    assert (doc["format"], doc["version"]) == (FORMAT, VERSION)
    save(doc, tmp_path / "m.json")
    assert python_accepts(tmp_path / "m.json") and simulator_verdict(tmp_path / "m.json").returncode == 0
    doc["libraries"]["lib"]["loggp"]["G"] = -1.0
    with pytest.raises(CommcharError, match="loggp.G"):
        save(doc, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def test_cold_start_is_charged_to_a_generated_schedule_only_when_asked():
    """A generated schedule is what the kernel measures warm: `auto` leaves the model's
    cold start out of it (a replay, a program from its start, pays it; tests/replay.rs)."""
    import json

    def makespan(model: str, *flags: str) -> float:
        done = subprocess.run([str(find_binary()), "--model", str(FIXTURES / "valid" / model),
                               "--library", "lib", "--collective", "bcast:binomial", "--n", "64",
                               "--p", "4", "--json", *flags],
                              capture_output=True, text=True, timeout=60, check=True)
        return json.loads(done.stdout)["makespan"]

    warm = makespan("single_copy_rendezvous.json")
    assert makespan("cold_start.json") == warm
    assert makespan("cold_start_sender_only.json") == warm
    # every path of binomial bcast at p = 4 crosses two cold sends (the root's two, or the
    # root's and its relay's), each o + O n = 1500 + 64 * 0.5 ns; the last finisher may change
    cold = makespan("cold_start_sender_only.json", "--cold-start", "on")
    assert cold - warm == pytest.approx(2 * 1532, abs=5)
