"""A user's mistakes end in one line on stderr and exit code 2, never a traceback."""

import subprocess
import sys

import pytest


def commchar(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("args, needle", [
    (["run", "--ops", "pingpong:warp"], "no variant 'warp'"),
    (["run", "--ops", "teleport"], "unknown operation 'teleport'"),
    (["run", "--sizes", "0:4Q"], "not a byte count"),
    (["run", "--np", "1"], "at least 2 processes"),
    (["run", "--precision", "5"], "--precision"),
    (["run", "--env", "NOEQUALS"], "KEY=VALUE"),
    (["run", "--refine-budget", "-1"], "--refine-budget must be a positive number"),
    (["run", "--recv-offset", "4096"], "--recv-offset must be 0 to 4095 bytes"),
    (["run", "--recv-offset", "32", "--cache", "cold"], "--recv-offset needs warm buffers"),
    (["run", "--buffer-offset", "-1"], "--buffer-offset must be 0 to 4095 bytes"),
    (["run", "--batch-min-us", "-5"], "--batch-min-us must be between 0 and"),
    (["run", "--batch-min-us", "nan"], "--batch-min-us must be between 0 and"),
    (["run", "--frobnicate"], "unrecognized arguments"),
    (["nosuchverb"], "invalid choice"),
    (["export", "--db", "/nonexistent/x.db"], "does not exist"),
    (["runs", "--db", "/nonexistent/x.db"], "does not exist"),
    (["trace", "--np", "2"], "no program given"),
    (["trace", "--np", "2", "--"], "no program given"),
    (["trace", "--library", "mpich", "--", "/nonexistent/app"], "not found"),
    (["trace", "--timeout", "-1", "--", "true"], "--timeout"),
    (["trace", "--library", "mpich", "--trace-dir", "/nonexistent", "--", "true"], "--trace-dir"),
])
def test_usage_errors_are_one_line_with_exit_2(args, needle):
    result = commchar(*args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_that_is_not_a_database_is_named(tmp_path):
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is not sqlite, just text " * 50)
    result = commchar("runs", "--db", str(bogus))
    assert result.returncode == 2
    assert "notes.db" in result.stderr and "Traceback" not in result.stderr


def test_export_of_a_missing_run_is_named(tmp_path):
    from commchar.store import Store

    with Store(tmp_path / "c.db"):
        pass
    result = commchar("export", "--db", str(tmp_path / "c.db"), "--run", "7")
    assert result.returncode == 2 and "no run 7" in result.stderr
