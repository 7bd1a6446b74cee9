"""A message its sender just wrote (commchar.models.written_send) from `written` points: the
fit of each written variant over the clean one, its model-file field, the report's finding,
and the kernel's probe under real mpirun."""

from __future__ import annotations

import json

import pytest

from commchar.cli import main
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import _validate_written_send
from commchar.models.written_send import written_send_section
from commchar.vocabulary import WRITTEN_EXCESSES, WRITTEN_VARIANTS
from _model_data import loggp_findings

KIB = 1024
SIZES = (4 * KIB, 32 * KIB, 256 * KIB)
PATH = "libraries.lib.loggp.written_send"


def _points(ends_extra: float, whole_factor: float, variants=WRITTEN_VARIANTS) -> list[dict]:
    """A ping-pong of 1 us + 2e-4 us a byte when clean; `ends_extra` us more with its ends
    written, `whole_factor` times it from 32 KiB on when written throughout; an exchange
    of 1.2 us + 2e-4 us a byte, a fifth of `ends_extra` more with its ends written."""
    points = []
    for n in SIZES:
        clean, exchange = 1.0 + 2e-4 * n, 1.2 + 2e-4 * n
        times = {"clean": clean, "ends": clean + ends_extra,
                 "whole": whole_factor * clean if n >= 32 * KIB else clean,
                 "exchange_clean": exchange, "exchange_ends": exchange + ends_extra / 5}
        for variant in variants:
            t = times[variant]
            # a detour of the host in one sample moves a mean, which the fit leaves aside
            points.append({"op": "written", "variant": variant, "n_bytes": n, "t_us": t,
                           "t_mean_us": t + (100.0 if variant == "whole" else 0.0), "valid": True})
    return points


def _finding(entry: dict | None) -> list[str]:
    return loggp_findings("written_send", entry, "the written probe")


def test_each_written_variant_over_the_clean_one_per_size():
    skipped: list[str] = []
    entry = written_send_section(_points(0.5, 1.5), skipped, "lib")
    assert skipped == [] and entry is not None and set(entry) == {"ends", "whole", "exchange_ends"}
    for variant in entry:
        section = entry[variant]
        assert section["statistic"] == "median"
        assert [row["n"] for row in section["sizes"]] == list(SIZES)
        assert set(section) >= {"steps", "per_byte", "c", "max_bytes", "sizes"}
        assert section["max_bytes"] == 256 * KIB
    # ends: half a microsecond at every size, a tenth in an exchange
    for n, per_byte in entry["ends"]["steps"]:
        assert per_byte * n == pytest.approx(0.5, rel=1e-3)
    for n, per_byte in entry["exchange_ends"]["steps"]:
        assert per_byte * n == pytest.approx(0.1, rel=1e-3)
    # whole: nothing at 4 KiB, half the clean time more from 32 KiB on
    assert entry["whole"]["steps"][0] == [4 * KIB, 0.0]
    for n, per_byte in entry["whole"]["steps"][1:]:
        assert per_byte * n == pytest.approx(0.5 * (1.0 + 2e-4 * n), rel=1e-3)
    assert [row["whole_us"] for row in entry["whole"]["sizes"]][1:] == pytest.approx(
        [1.5 * (1.0 + 2e-4 * n) for n in SIZES[1:]], rel=1e-3)
    _validate_written_send(entry, PATH)


def test_a_variant_that_cannot_be_fitted_is_left_out_and_said():
    skipped: list[str] = []
    entry = written_send_section(_points(0.5, 1.5, ("clean", "whole")), skipped, "lib")
    assert entry is not None and set(entry) == {"whole"}
    assert len(skipped) == 2 and "written:ends" in skipped[0] and "written:exchange_ends" in skipped[1]
    _validate_written_send(entry, PATH)
    skipped = []
    assert written_send_section(_points(0.5, 1.5, ("ends", "whole", "exchange_ends")), skipped, "lib") is None
    assert len(skipped) == 3 and all("clean'" in why for why in skipped)


def test_sizes_below_the_rendezvous_threshold_are_left_out_and_said():
    # below S the sender copies its own lines (eager): the probe's difference there is its own
    # stores', which a program's trace shows as computation
    skipped: list[str] = []
    entry = written_send_section(_points(0.5, 1.5), skipped, "lib", rendezvous_min=8256.0)
    assert entry is not None and set(entry) == {"ends", "whole", "exchange_ends"}
    for variant in entry:
        assert [n for n, _ in entry[variant]["steps"]] == [32 * KIB, 256 * KIB]
        assert [row["n"] for row in entry[variant]["sizes"]] == [32 * KIB, 256 * KIB]
    assert skipped == ["lib written: sizes below S = 8256 B left out (eager: the sender copies its own "
                       "lines): 4096"]
    _validate_written_send(entry, PATH)
    # every size eager: nothing to charge, and why
    skipped = []
    assert written_send_section(_points(0.5, 1.5), skipped, "lib", rendezvous_min=1e9) is None
    assert "4096, 32768, 262144" in skipped[0] and len(skipped) == 4


def test_the_model_file_holds_each_variant_as_steps():
    entry = written_send_section(_points(0.5, 1.5), [], "lib")
    with pytest.raises(ModelError, match="written_send"):
        _validate_written_send({}, PATH)
    with pytest.raises(ModelError, match="written_send.whole.steps"):
        _validate_written_send(entry | {"whole": entry["whole"] | {"steps": [[32 * KIB, 1e-4], [4 * KIB, 1e-4]]}},
                               PATH)
    with pytest.raises(ModelError, match="written_send.ends.per_byte"):
        _validate_written_send({"ends": {"per_byte": -1.0}}, PATH)


def test_a_written_message_that_costs_more_is_a_finding():
    (text,) = _finding(written_send_section(_points(0.5, 1.8), [], "lib"))
    assert "256 KiB" in text and "1.80 times" in text and "first and last 8 bytes" in text
    assert "`commchar replay` charges" in text
    # a library whose written messages cost what clean ones do says nothing
    assert _finding(written_send_section(_points(0.0, 1.05), [], "lib")) == []
    assert _finding(None) == []


@pytest.mark.mpi
def test_a_real_run_measures_every_variant_and_the_model_keeps_them(mpi_libraries, tmp_path, capsys):
    library = mpi_libraries[0]
    db, model = tmp_path / "s.db", tmp_path / "model.json"
    assert main(["run", "--db", str(db), "--library", library.name, "--np", "2", "--ops", "written",
                 "--max-time", "0.05", "--precision", "0.1"]) == 0
    assert main(["fit", "--db", str(db), "-o", str(model)]) == 0
    capsys.readouterr()
    lib = json.loads(model.read_text())["libraries"][library.name]
    written = (lib.get("loggp") or lib["loggp_partial"])["written_send"]
    # the probe's own sizes from S up (the model's rendezvous threshold), every variant verified
    # and paired with the clean one at each
    assert set(written) == {"ends", "whole", "exchange_ends"}
    for variant in written:
        s = (lib.get("loggp") or lib["loggp_partial"]).get("S") or 0
        assert [row["n"] for row in written[variant]["sizes"]] == [n for n in SIZES if n >= s]
        clean = dict(WRITTEN_EXCESSES)[variant]
        assert all(row[f"{variant}_us"] > 0 and row[f"{clean}_us"] > 0 for row in written[variant]["sizes"])
    assert not any(key.startswith("written:") for key in lib["operations"])  # a probe, not a curve
