//! The node's detours (`loggp.noise`) in a replay: drawn per rank from a seed, charged
//! where they hold a rank inside the library, dropped where they fall in a traced
//! computation (whose measured time holds them already), and only those beyond the two
//! ranks' that the costs of a message hold.

mod common;

use commchar_sim::engine::Outcome;
use commchar_sim::noise::Noise;
use commchar_sim::workload::replay::Options;
use common::{TraceDir, R};

const SEND: u16 = 1;
const RECV: u16 = 5;
const US: u64 = 1000; // ns

/// `pairs` pairs of ranks (0 and 1, 2 and 3, ...) each swap 8 bytes `iters` times (a
/// ping-pong), each round after `compute_us` of computation on both.
fn pingpong(name: &str, iters: u64, compute_us: u64, pairs: u32) -> TraceDir {
    let mut ranks = Vec::new();
    for pair in 0..pairs {
        let (zero, one) = pingpong_pair(iters, compute_us, 2 * pair as i32);
        ranks.push(zero);
        ranks.push(one);
    }
    common::write_timed("noise", name, &ranks)
}

type Calls = Vec<(R, u64, u64)>;

/// The calls of ranks `first` and `first + 1` of `pingpong`.
fn pingpong_pair(iters: u64, compute_us: u64, first: i32) -> (Calls, Calls) {
    let (mut zero, mut one) = (Vec::new(), Vec::new());
    let mut t = 1_000 * US;
    for _ in 0..iters {
        t += compute_us * US;
        let send = |peer| R {
            call: SEND,
            peer,
            tag: 1,
            bytes: 8,
            ..R::default()
        };
        let recv = |peer| R {
            call: RECV,
            peer,
            tag: 1,
            bytes2: 8,
            aux: peer,
            aux2: 1,
            ..R::default()
        };
        zero.push((send(first + 1), t, t + US));
        one.push((recv(first), t, t + 2 * US));
        one.push((send(first), t + 2 * US, t + 3 * US));
        zero.push((recv(first + 1), t + US, t + 4 * US));
        t += 4 * US;
    }
    (zero, one)
}

fn replay(dir: &TraceDir, noise: Option<Noise>) -> Outcome {
    let mut params = common::params(0);
    params.taken_in_calls = true;
    params.noise = noise;
    common::replay_dir(&dir.0, &Options::default(), params).unwrap()
}

/// `rate` detours a second of `us` microseconds each from 4 ranks on, none at 2: the costs
/// hold none, and a replay of 4 ranks draws every one.
fn noise(rate: f64, us: f64, seed: u64) -> Option<Noise> {
    Some(Noise::from_rows(
        vec![(2, vec![]), (4, vec![(rate, us)])],
        seed,
    ))
}

#[test]
fn detours_slow_a_program_that_waits_on_its_partner_and_a_seed_replays_alike() {
    let dir = pingpong("talk", 2000, 0, 2);
    let quiet = replay(&dir, None).makespan();
    // 2000 detours a second of 25 us: 5% of each rank's time
    let noisy: Vec<u64> = (1..=5)
        .map(|s| replay(&dir, noise(2000.0, 25.0, s)).makespan())
        .collect();
    assert_eq!(noisy[0], replay(&dir, noise(2000.0, 25.0, 1)).makespan());
    assert!(
        noisy.iter().any(|&m| m != noisy[0]),
        "other seeds draw other detours: {noisy:?}"
    );
    let mut sorted = noisy.clone();
    sorted.sort_unstable();
    let slower = sorted[2] as f64 / quiet as f64 - 1.0;
    // a detour of either rank holds both up; one that ends while its rank only waits costs nothing
    assert!(
        (0.04..0.11).contains(&slower),
        "median slowdown {slower:.3} ({quiet} ps quiet, {noisy:?})"
    );
}

#[test]
fn detours_that_fall_in_a_traced_computation_are_not_charged_again() {
    // 200 us of computation a round, 4 us of messages: nearly every detour lands in the
    // computation, whose traced time holds it
    let dir = pingpong("compute", 200, 200, 2);
    let quiet = replay(&dir, None);
    let noisy = replay(&dir, noise(2000.0, 25.0, 3));
    let b = |o: &Outcome| o.breakdown.as_ref().unwrap()[0];
    assert_eq!(
        b(&noisy).compute,
        b(&quiet).compute,
        "the computation is the trace's"
    );
    let slower = noisy.makespan() as f64 / quiet.makespan() as f64 - 1.0;
    assert!(
        slower < 0.01,
        "{slower:.4}: at most the detours that cover a message's call"
    );
}

#[test]
fn a_model_without_detours_changes_nothing() {
    let dir = pingpong("none", 100, 3, 1);
    let quiet = replay(&dir, None);
    let empty = replay(&dir, Some(Noise::from_rows(vec![(2, vec![])], 1)));
    assert_eq!(quiet.finish, empty.finish);
}

#[test]
fn a_replay_draws_only_the_detours_beyond_those_its_costs_hold() {
    // measured at p = 2: the costs of a message are means of two ranks' probes, which hold
    // both ranks' detours; a replay of two ranks draws none, of four half of each rank's
    let measured_at_two = |seed| Some(Noise::from_rows(vec![(2, vec![(2000.0, 25.0)])], seed));
    let two = pingpong("two", 2000, 0, 1);
    assert_eq!(
        replay(&two, measured_at_two(1)).finish,
        replay(&two, None).finish
    );
    let four = pingpong("four", 2000, 0, 2);
    let quiet = replay(&four, None).makespan() as f64;
    let median = |noise: &dyn Fn(u64) -> Option<Noise>| {
        let mut m: Vec<u64> = (1..=5)
            .map(|s| replay(&four, noise(s)).makespan())
            .collect();
        m.sort_unstable();
        m[2] as f64 / quiet - 1.0
    };
    let (half, all) = (
        median(&measured_at_two),
        median(&|s| noise(2000.0, 25.0, s)),
    );
    assert!(
        half > 0.01 && half < 0.75 * all,
        "half the detours drawn: {half:.3}, all of them: {all:.3}"
    );
}
