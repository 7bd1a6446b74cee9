"""One vocabulary for every verb: the same size spellings accepted by run, simulate,
predict and app; one way to print a size; one set of unit-system names."""

import pytest

from commchar.errors import UsageError
from commchar.measure.plan import parse_message_size, parse_sizes
from commchar.predict.values import parse_n_values
from commchar.vocabulary import (default_key, format_size, key_order, op_key, parse_number,
                                 parse_size, split_key, unit_system)

# every spelling the docs promise, with the bytes it means
SPELLINGS = [("0", 0), ("64", 64), ("64B", 64), ("1K", 1024), ("1k", 1024), ("1Ki", 1024),
             ("1KiB", 1024), ("1KB", 1024), ("1kib", 1024), ("1.5K", 1536), ("4M", 4 << 20),
             ("4Mi", 4 << 20), ("1MiB", 1 << 20), ("1G", 1 << 30), (" 2K ", 2048), ("1e3", 1000)]


@pytest.mark.parametrize("text,expected", SPELLINGS)
def test_every_verb_accepts_every_documented_spelling(text, expected):
    assert parse_size(text, "--n") == expected                     # simulate --n, --S
    assert parse_message_size(text) == expected                    # run --sizes items, app --fragment
    assert parse_sizes(text) == [expected]
    assert parse_n_values(text) == [float(expected)]              # predict / advise --n


@pytest.mark.parametrize("bad", ["", "K", "1.3", "-1", "1X", "1KK", "1 K B i", "0x10", "1iB"])
def test_bad_sizes_are_one_usage_error_naming_the_flag(bad):
    with pytest.raises(UsageError, match="^--n: "):
        parse_size(bad, "--n")


def test_predict_takes_fractional_values_that_byte_counts_refuse():
    assert parse_number("1.3", "--n") == 1.3
    with pytest.raises(UsageError, match="whole number of bytes"):
        parse_size("1.3", "--sizes")


@pytest.mark.parametrize("n,text", [(0, "0 B"), (8, "8 B"), (1023, "1023 B"), (1024, "1 KiB"),
                                    (1536, "1.5 KiB"), (8276.2, "8.082 KiB"), (65536, "64 KiB"),
                                    (3 << 20, "3 MiB"), (1 << 30, "1 GiB"), (0.5, "0.5 B")])
def test_one_size_format(n, text):
    assert format_size(n) == text


def test_sizes_printed_read_back_as_the_same_bytes_when_exact():
    for n in (0, 8, 1000, 1024, 1536, 3 << 20, 1 << 30):
        assert parse_size(format_size(n).replace(" ", "")) == n


def test_keys():
    assert op_key("pingpong", "send") == "pingpong:send" and op_key("bcast", "") == "bcast"
    assert split_key("reduce:nop") == ("reduce", "nop") and split_key("bcast") == ("bcast", "")
    assert default_key("pingpong") == "pingpong:send" and default_key("bcast") == "bcast"
    assert default_key("reduce") == "reduce:sum" and default_key("reduce:nop") == "reduce:nop"
    keys = ["reduce:nop", "bcast", "reduce:sum", "pingpong:isend", "pingpong:send", "loggp"]
    assert sorted(keys, key=key_order) == ["pingpong:send", "pingpong:isend", "loggp", "bcast",
                                           "reduce:sum", "reduce:nop"]


def test_unit_names_are_one_set_with_the_old_report_spelling_kept():
    assert unit_system("si") == "si" and unit_system("iec") == "iec" and unit_system("binary") == "iec"
    with pytest.raises(UsageError):
        unit_system("metric")
