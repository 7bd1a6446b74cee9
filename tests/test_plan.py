import pytest

from commchar.errors import UsageError
from commchar.measure.operations import OPERATIONS, parse_ops
from commchar.measure.plan import (default_sizes, parse_message_size, parse_np, parse_sizes,
                                   plan_argument, points_for)


def test_sizes_range_is_zero_and_powers_of_two():
    assert parse_sizes("0:4M") == [0] + [1 << k for k in range(23)]
    assert parse_sizes("1K:8K") == [1024, 2048, 4096, 8192]


def test_sizes_lists_factors_and_steps_combine():
    assert parse_sizes("0,8,1K") == [0, 8, 1024]
    assert parse_sizes("1K:64K:x4") == [1024, 4096, 16384, 65536]
    assert parse_sizes("0:4K:+1K") == [0, 1024, 2048, 3072, 4096]
    assert parse_sizes("8,1:4") == [1, 2, 4, 8]


@pytest.mark.parametrize("bad", ["", "1X", "4:1", "0:4M:x1", "0:1K:+0", "1:2:3:4", "-5", "3G", "a:b"])
def test_bad_sizes_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_sizes(bad)


def test_size_suffixes_are_binary():
    assert parse_message_size("1K") == 1024 and parse_message_size("4M") == 4 << 20
    assert parse_message_size("2Ki") == 2048 and parse_message_size("1.5K") == 1536


def test_message_size_above_two_gib_is_refused():
    assert parse_message_size("2G") == 2 << 30
    with pytest.raises(UsageError, match="larger than 2 GiB"):
        parse_message_size("2049M")


def test_np():
    assert parse_np("2,4,8") == [2, 4, 8]
    assert parse_np("2:5") == [2, 3, 4, 5]
    for bad in ("1", "0,2", "x", "4:2"):
        with pytest.raises(UsageError):
            parse_np(bad)


def test_ops_pingpong_means_every_send_mode():
    ops = parse_ops("pingpong,reduce:nop")
    assert [str(o) for o in ops] == ["pingpong:send", "pingpong:bsend", "pingpong:ssend",
                                     "pingpong:rsend", "pingpong:isend", "reduce:nop"]


@pytest.mark.parametrize("bad", ["foo", "pingpong:fast", "bcast:sum", "bcast,,scan"])
def test_unknown_ops_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_ops(bad)


def test_default_ops_cover_every_operation_and_variant():
    keys = {str(o) for transport in ("mpi", "am") for o in parse_ops(None, transport)}
    for op in OPERATIONS.values():
        for v in op.variants:
            assert (f"{op.name}:{v}" if v else op.name) in keys


def test_effective_sizes_follow_the_n_convention():
    ops = parse_ops("scatter,reduce_scatter:sum,allreduce:sum,barrier,pingpong:send")
    pts = points_for(ops, [0, 1, 8, 100], 3)
    by_op = {}
    for pt in pts:
        by_op.setdefault(pt.key, []).append(pt.n_bytes)
    assert by_op["scatter"] == [0, 3, 9, 102]  # multiples of p
    assert by_op["reduce_scatter:sum"] == [0, 24, 120]  # multiples of 8p, deduplicated
    assert by_op["allreduce:sum"] == [0, 8, 104]
    assert by_op["barrier"] == [0]
    assert "pingpong:send" not in by_op  # two-rank operations run at p = 2 only


def test_default_sizes_stop_at_each_operations_maximum():
    pts = points_for(parse_ops("pingpong:send,bcast"), None, 2)
    assert max(p.n_bytes for p in pts if p.op == "pingpong") == 4 << 20
    assert max(p.n_bytes for p in pts if p.op == "bcast") == 1 << 20
    assert default_sizes(4)[:4] == [0, 1, 2, 4]


def test_plan_argument_groups_by_operation_in_order():
    pts = points_for(parse_ops("bcast,reduce:sum"), [0, 16], 2)
    assert plan_argument(pts) == "bcast=0,16;reduce:sum=0,16"


def test_active_message_operations_are_not_mpi_defaults():
    mpi = {o.op for o in parse_ops(None)}
    am = {o.op for o in parse_ops(None, "am")}
    assert not any(op.startswith("am_") for op in mpi)
    assert am == {name for name, op in OPERATIONS.items() if op.transport == "am"}


def test_am_rtt_sizes_are_argument_words():
    ops = parse_ops("am_rtt")
    assert [p.n_bytes for p in points_for(ops, None, 2)] == [4, 8, 12, 16]
    # user sizes round up to whole words; more than four words cannot be sent
    assert [p.n_bytes for p in points_for(ops, [0, 5, 64], 2)] == [4, 8]


def test_am_defaults_follow_the_study():
    pts = points_for(parse_ops("am_store,am_pipe:async,am_cost:poll_empty,am_loss:0.01"), None, 2)
    store = [p.n_bytes for p in pts if p.op == "am_store"]
    pipe = [p.n_bytes for p in pts if p.op == "am_pipe"]
    assert store[0] == 16 and store[-1] == 4 << 20
    assert pipe[0] == 64 and pipe[-1] == 1 << 20
    assert [p.n_bytes for p in pts if p.op == "am_cost"] == [0]
    assert [p.n_bytes for p in pts if p.op == "am_loss"] == [1 << 20]
    assert points_for(parse_ops("am_store"), None, 3) == []  # two ranks only
