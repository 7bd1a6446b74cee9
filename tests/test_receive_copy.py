"""The receiver's own copy of an eager message (commchar.models.receive_copy): O_r of each
eager size regime from the `exchange:sendrecv` points, within its bounds, and its field in
the model file."""

from __future__ import annotations

import pytest

from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import _validate_loggp_regimes
from commchar.models.receive_copy import exchange_table, exchange_times, with_receive_copy

KIB = 1024
S = 8256
REGIMES = [
    {"n_min": 0, "n_max": 64, "o_s": 0.11, "o_r": 0.06, "G": 9e-5, "O": 9e-5},
    {"n_min": 1024, "n_max": 8192, "o_s": 0.1, "o_r": 0.05, "G": 1.3e-4, "O": 1e-4},
    {"n_min": 8555, "n_max": None, "o_s": 1.5, "o_r": 0.9, "G": 7e-5, "O": 7e-5},
]
SIZES = (1, 16, 64, 1 * KIB, 2 * KIB, 4 * KIB, 8 * KIB, 16 * KIB, 64 * KIB)


def _exchange(o_r: float, regimes=REGIMES) -> dict[int, float]:
    """Exchange times as the simulator has them: o_s + o_r + (n-1)(O + O_r) in each regime."""
    times = {}
    for n in SIZES:
        r = next(r for r in regimes if r["n_min"] <= n and (r["n_max"] is None or n <= r["n_max"]))
        times[n] = r["o_s"] + r["o_r"] + (n - 1) * (r["O"] + o_r)
    return times


def test_the_receivers_copy_is_recovered_in_the_eager_regime_only():
    fitted = with_receive_copy(REGIMES, _exchange(4e-5), S)
    assert fitted[1]["O_r"] == pytest.approx(4e-5, rel=1e-9)
    # the smallest messages' bytes cost less than their overheads: O_r from the largest of
    # them, where LogGOPSim's receiver would charge its exchange more than it took
    assert fitted[0]["O_r"] == pytest.approx(4e-5, rel=1e-9)
    # beyond S the exchange is a rendezvous: no O_r, LogGOPSim's receiver
    assert "O_r" not in fitted[2]
    # everything else as it was
    assert [{k: v for k, v in r.items() if k != "O_r"} for r in fitted] == REGIMES
    # without S every size is eager
    assert "O_r" in with_receive_copy(REGIMES, _exchange(4e-5) | {256 * KIB: 20.0}, None)[2]


def test_the_receivers_copy_stays_between_a_one_way_time_and_logGOPSims():
    # an exchange no slower than one message: O_r = 0
    assert with_receive_copy(REGIMES, _exchange(-5e-5), S)[1]["O_r"] == 0.0
    # an exchange slower than two copies: O_r = max(O, G), never a slower ping-pong
    assert with_receive_copy(REGIMES, _exchange(1e-3), S)[1]["O_r"] == pytest.approx(1.3e-4)


def test_fewer_than_two_eager_sizes_keep_logGOPSims_receiver_unless_it_overcharges_them():
    def one_size(o_r: float) -> dict[int, float]:
        return {n: t for n, t in _exchange(o_r).items() if n not in (2 * KIB, 4 * KIB, 8 * KIB)}

    # the exchange of 1 KiB as LogGOPSim charges it (or slower): the regime as it was
    assert "O_r" not in with_receive_copy(REGIMES, one_size(1.3e-4), S)[1]
    assert "O_r" not in with_receive_copy(REGIMES, one_size(1e-3), S)[1]
    # cheaper: the receiver's copy that exchange leaves, never below 0
    assert with_receive_copy(REGIMES, one_size(4e-5), S)[1]["O_r"] == pytest.approx(4e-5, rel=1e-9)
    assert with_receive_copy(REGIMES, one_size(-5e-4), S)[1]["O_r"] == 0.0
    # only the one-byte exchange: nothing to take a copy from
    assert "O_r" not in with_receive_copy(REGIMES, {1: 0.1}, S)[0]


def test_the_regimes_statistic_picks_the_exchanges_time():
    points = [{"op": "exchange", "variant": "sendrecv", "n_bytes": 4096, "t_us": 1.0, "t_mean_us": 1.2,
               "valid": True},
              {"op": "exchange", "variant": "sendrecv", "n_bytes": 8192, "t_us": 2.0, "t_mean_us": None,
               "valid": True},
              {"op": "exchange", "variant": "replace", "n_bytes": 4096, "t_us": 9.0, "valid": True},
              {"op": "exchange", "variant": "sendrecv", "n_bytes": 2048, "t_us": 9.0, "valid": False}]
    assert exchange_times(points, "mean") == {4096: 1.2, 8192: 2.0}
    assert exchange_times(points, "median") == {4096: 1.0, 8192: 2.0}


def test_the_model_file_refuses_a_negative_receivers_copy():
    _validate_loggp_regimes([REGIMES[1] | {"O_r": 1e-5}], "loggp.regimes")
    with pytest.raises(ModelError, match=r"regimes\[0\]\.O_r"):
        _validate_loggp_regimes([REGIMES[1] | {"O_r": -1e-5}], "loggp.regimes")


def test_the_exchanges_are_shown_beside_the_models():
    fitted = with_receive_copy(REGIMES, _exchange(4e-5), S)
    rows = exchange_table(fitted, _exchange(4e-5), S, 0.0)
    # every eager size measured, none beyond S
    assert [r["n"] for r in rows] == [n for n in SIZES if n <= S]
    by_n = {r["n"]: r for r in rows}
    # where the regime has O_r the model charges what was measured, LogGOPSim both copies
    assert by_n[4 * KIB]["model_us"] == pytest.approx(by_n[4 * KIB]["exchange_us"], abs=1e-4)
    assert by_n[4 * KIB]["loggopsim_us"] == pytest.approx(0.15 + 4095 * (1e-4 + 1.3e-4), abs=1e-4)
    assert by_n[16]["model_us"] == pytest.approx(by_n[16]["exchange_us"], abs=1e-4)
    assert by_n[16]["loggopsim_us"] == pytest.approx(0.17 + 15 * 1.8e-4, abs=1e-4)
    # where it has none the two coincide
    plain = exchange_table(REGIMES, _exchange(4e-5), S, 0.0)[1]
    assert plain["model_us"] == plain["loggopsim_us"] == pytest.approx(0.17 + 15 * 1.8e-4, abs=1e-4)
    # a latency longer than the sender's copy: the message comes after it
    late = exchange_table(fitted, {4 * KIB: 1.0}, S, 5.0)[0]
    assert late["model_us"] == pytest.approx(0.15 + 5.0 + 4095 * 1.3e-4, abs=1e-4)
    assert late["loggopsim_us"] == pytest.approx(0.15 + 5.0 + 4095 * 1.3e-4, abs=1e-4)


def test_the_model_file_checks_the_exchange_table():
    from commchar.modelfile.schema import _validate_receive_copy

    _validate_receive_copy({"statistic": "mean", "sizes": [{"n": 4096, "exchange_us": 1.1, "model_us": 1.0,
                                                           "loggopsim_us": 1.2}]}, "loggp.receive_copy")
    with pytest.raises(ModelError, match=r"receive_copy\.sizes\[0\]\.model_us"):
        _validate_receive_copy({"sizes": [{"n": 4096, "exchange_us": 1.1, "loggopsim_us": 1.2}]},
                               "loggp.receive_copy")


def test_only_exchanges_of_the_ping_pongs_core_state_are_taken():
    from commchar.models.receive_copy import in_state_of

    def point(op: str, variant: str, n: int, rtt: float | None) -> dict:
        extra = {} if rtt is None else {"core_rtt_ns": [rtt, rtt + 2]}
        return {"op": op, "variant": variant, "n_bytes": n, "t_us": 1.0, "valid": True, "extra": extra}

    pingpongs = [point("pingpong", "send", n, 70 + n % 7) for n in range(1, 40)]
    near = [point("exchange", "sendrecv", n, 68) for n in (1024, 2048)]
    far = [point("exchange", "sendrecv", n, 320) for n in (4096, 8192)]
    unmeasured = [point("exchange", "sendrecv", 16384, None)]
    # an exchange measured with the ranks 300 ns apart is another machine's than ping-pongs 70 ns apart
    assert in_state_of(near + far + unmeasured, pingpongs) == near + unmeasured
    # every exchange in another state: none taken, so no O_r
    assert in_state_of(far, pingpongs) == []
    # no round trips on the ping-pongs (imported data): all taken
    assert in_state_of(far, [point("pingpong", "send", 1, None)]) == far


def test_an_exchange_the_fit_cannot_reach_keeps_its_excess_at_every_size():
    from commchar.models.receive_copy import exchange_excess

    # an exchange slower than two full copies: O_r held at max(O, G), so the model charges
    # the sizes it was fitted at less than they took, and the excess makes it up
    times = _exchange(1e-3)
    fitted = with_receive_copy(REGIMES, times, S)
    assert fitted[1]["O_r"] == pytest.approx(1.3e-4)
    table = exchange_table(fitted, times, S, 0.0)
    by_n = dict(exchange_excess(fitted, table, S, "mean")["steps"])
    model = {row["n"]: row["model_us"] for row in table}
    for n in (2 * KIB, 4 * KIB, 8 * KIB):
        assert by_n[n] == pytest.approx(times[n] - model[n], abs=1e-4) and by_n[n] > 0.1
    # the regime without an O_r (LogGOPSim's receiver charging less than it took) too
    bare = [r for r in fitted]
    bare[1] = {k: v for k, v in fitted[1].items() if k != "O_r"}
    table = exchange_table(bare, times, S, 0.0)
    assert dict(exchange_excess(bare, table, S, "mean")["steps"])[4 * KIB] > 0.1


def test_what_the_exchange_costs_beyond_the_model_is_kept_below_the_receivers_copy():
    from commchar.modelfile.schema import _validate_exchange_excess
    from commchar.models.receive_copy import exchange_excess

    # 30 ns more than the model at the small sizes (two ranks through the same cells at once),
    # and 50 ns more at 2 KiB, where O_r is fitted (its residual there is the fit's, not kept)
    times = {n: t + (0.03 if n <= 64 else 0.05 if n == 2 * KIB else 0.0) for n, t in _exchange(4e-5).items()}
    fitted = with_receive_copy(REGIMES, times, S)
    excess = exchange_excess(fitted, exchange_table(fitted, times, S, 0.0), S, "mean")
    assert excess["statistic"] == "mean"
    by_n = dict(excess["steps"])
    # the sizes whose bytes cost less than their regime's overheads keep theirs; where O_r is
    # fitted, 0 (2 KiB's 50 ns is the fit's residual), so nothing leaks between the sizes
    assert sorted(by_n) == [1, 16, 64, 1 * KIB, 2 * KIB, 4 * KIB, 8 * KIB]
    assert by_n[1 * KIB] == pytest.approx(0.0, abs=0.01)
    assert by_n[2 * KIB] == by_n[4 * KIB] == by_n[8 * KIB] == 0.0
    # (at 16 and 64 B the model's receiver copies the stream again, 5e-5 us a byte more)
    assert [by_n[1], by_n[16], by_n[64]] == pytest.approx([0.03, 0.03 - 15 * 5e-5, 0.03 - 63 * 5e-5], abs=1e-4)
    # an exchange quicker than the model costs nothing extra
    quick = {n: t - 0.05 for n, t in _exchange(4e-5).items()}
    steps = exchange_excess(REGIMES, exchange_table(REGIMES, quick, S, 0.0), S, "mean")["steps"]
    assert [us for _, us in steps] == [0.0] * 7
    assert exchange_excess(fitted, [], S, "mean") is None
    _validate_exchange_excess(excess, "loggp.exchange_excess")
    with pytest.raises(ModelError, match=r"exchange_excess\.steps"):
        _validate_exchange_excess({"steps": [[64, 0.1], [16, 0.1]]}, "loggp.exchange_excess")
    with pytest.raises(ModelError, match=r"exchange_excess\.steps"):
        _validate_exchange_excess({"steps": "none"}, "loggp.exchange_excess")


def test_a_rendezvous_exchange_is_kept_at_its_own_probe():
    from commchar.models.receive_copy import exchange_excess, rendezvous_table

    L = 0.2
    times = _exchange(4e-5)
    rendezvous_regime = REGIMES[2]

    def charged(n: int) -> float:  # each rank's request, the other's pull, the ack
        r = rendezvous_regime
        return r["o_s"] + r["o_r"] + 2 * L + (n - 1) * max(r["O"], r["G"])

    # 0.6 us beyond the model at 16 KiB, less than it at 64 KiB
    times[16 * KIB] = charged(16 * KIB) + 0.6
    times[64 * KIB] = charged(64 * KIB) - 0.3
    rows = rendezvous_table(REGIMES, times, S, L)
    assert [row["n"] for row in rows] == [16 * KIB, 64 * KIB]
    assert rows[0]["model_us"] == pytest.approx(charged(16 * KIB), abs=1e-4)
    fitted = with_receive_copy(REGIMES, times, S)
    excess = exchange_excess(fitted, exchange_table(fitted, times, S, L), S, "mean", rows)
    # kept apart from the eager steps: a replay whose model sends those sizes eagerly (LogGP)
    # charges its own exchange there, not this one's excess
    assert max(n for n, _ in excess["steps"]) <= S
    steps = dict(excess["rendezvous"])
    assert steps[16 * KIB] == pytest.approx(0.6, abs=1e-3)
    assert steps[64 * KIB] == 0.0  # a quicker exchange is not made quicker
    assert "rendezvous" not in exchange_excess(fitted, exchange_table(fitted, times, S, L), S, "mean", [])
    from commchar.modelfile.schema import _validate_exchange_excess
    _validate_exchange_excess(excess, "loggp.exchange_excess")
    with pytest.raises(ModelError, match=r"exchange_excess\.rendezvous"):
        _validate_exchange_excess(excess | {"rendezvous": [[64, 0.1], [16, 0.1]]}, "loggp.exchange_excess")
    # everything eager at S = None: no rendezvous size
    assert rendezvous_table(REGIMES, times, None, L) == []


def _second(o_r: float, regimes=REGIMES) -> dict[int, float]:
    """What a second message each way adds, as the model's CPUs spend it: o_s + o_r +
    (n-1)(O + O_r) in each regime."""
    return _exchange(o_r, regimes)


def test_a_second_message_each_way_gives_the_receivers_copy_the_single_exchange_cannot():
    from commchar.models.receive_copy import exchange_excess

    # a single exchange slower than two full copies holds O_r at its bound max(O, G); the
    # second message each way of a halo, taken in with its bytes there, says 3e-5
    times, second = _exchange(1e-3), _second(3e-5)
    fitted = with_receive_copy(REGIMES, times, S, second)
    assert fitted[1]["O_r"] == pytest.approx(3e-5, rel=1e-9)
    assert with_receive_copy(REGIMES, times, S)[1]["O_r"] == pytest.approx(1.3e-4)
    # the smallest messages' bytes cost less than their overheads: no second-message fit
    # there, the single exchange's rule (its largest size, bound max(O, G): none)
    assert "O_r" not in fitted[0]
    # beyond S the messages are rendezvous: no O_r whatever was measured
    assert "O_r" not in with_receive_copy(REGIMES, times, S, _second(3e-5) | {16 * KIB: 2.0})[2]
    # within the same bounds
    assert with_receive_copy(REGIMES, times, S, _second(-2e-4))[1]["O_r"] == 0.0
    assert with_receive_copy(REGIMES, times, S, _second(1e-3))[1]["O_r"] == pytest.approx(1.3e-4)
    # the single exchange was not fitted: every size keeps what it took beyond the model
    table = exchange_table(fitted, times, S, 0.0)
    model = {row["n"]: row["model_us"] for row in table}
    by_n = dict(exchange_excess(fitted, table, S, "mean", None, second)["steps"])
    for n in (2 * KIB, 4 * KIB, 8 * KIB):
        assert by_n[n] == pytest.approx(times[n] - model[n], abs=1e-4) and by_n[n] > 1.0


def test_a_second_message_is_two_each_way_less_one_each_way():
    from commchar.models.receive_copy import second_message_table, second_message_times

    def point(variant: str, n: int, mean: float) -> dict:
        return {"op": "exchange", "variant": variant, "n_bytes": n, "t_us": mean - 0.1, "t_mean_us": mean,
                "valid": True}

    points = [point("isend", 4096, 1.2), point("isend2", 4096, 2.0), point("isend", 8192, 1.8),
              point("isend2", 8192, 3.1), point("isend2", 2048, 1.5),  # 2 KiB: no one-each-way point
              point("isend", 1024, 0.9), point("isend2", 1024, 0.8),  # quicker with two: left out
              point("sendrecv", 4096, 9.0)]
    second = second_message_times(points, "mean")
    assert second == pytest.approx({4096: 0.8, 8192: 1.3})
    assert second_message_times(points, "median") == pytest.approx({4096: 0.8, 8192: 1.3})
    fitted = with_receive_copy(REGIMES, {}, S, second)
    rows = second_message_table(fitted, second, S)
    assert [r["n"] for r in rows] == [4096, 8192]
    r = fitted[1]
    assert rows[0]["second_us"] == 0.8
    assert rows[0]["model_us"] == pytest.approx(r["o_s"] + r["o_r"] + 4095 * (r["O"] + r["O_r"]), abs=1e-4)


def test_the_model_file_checks_the_second_message_table():
    from commchar.modelfile.schema import _validate_receive_copy

    table = {"statistic": "mean", "sizes": [], "second": [{"n": 4096, "second_us": 0.8, "model_us": 0.79}]}
    _validate_receive_copy(table, "loggp.receive_copy")
    with pytest.raises(ModelError, match=r"receive_copy\.second\[0\]\.second_us"):
        _validate_receive_copy(table | {"second": [{"n": 4096, "second_us": -1, "model_us": 0.79}]},
                               "loggp.receive_copy")
    with pytest.raises(ModelError, match=r"receive_copy\.second"):
        _validate_receive_copy(table | {"second": {}}, "loggp.receive_copy")
