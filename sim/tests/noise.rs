//! The node's detours (`loggp.noise`) in a replay: drawn per rank from a seed, charged
//! where they hold a rank inside the library, dropped where they fall in a traced
//! computation (whose measured time holds them already).

mod common;

use commchar_sim::engine::Outcome;
use commchar_sim::noise::Noise;
use commchar_sim::workload::replay::Options;
use common::{TraceDir, R};

const SEND: u16 = 1;
const RECV: u16 = 5;
const US: u64 = 1000; // ns

/// Ranks 0 and 1 swap 8 bytes `iters` times (a ping-pong), each round after `compute_us`
/// of computation on both.
fn pingpong(name: &str, iters: u64, compute_us: u64) -> TraceDir {
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
        zero.push((send(1), t, t + US));
        one.push((recv(0), t, t + 2 * US));
        one.push((send(0), t + 2 * US, t + 3 * US));
        zero.push((recv(1), t + US, t + 4 * US));
        t += 4 * US;
    }
    common::write_timed("noise", name, &[zero, one])
}

fn replay(dir: &TraceDir, noise: Option<Noise>) -> Outcome {
    let mut params = common::params(0);
    params.taken_in_calls = true;
    params.noise = noise;
    common::replay_dir(&dir.0, &Options::default(), params).unwrap()
}

/// `rate` detours a second of `us` microseconds each, at every rank count.
fn noise(rate: f64, us: f64, seed: u64) -> Option<Noise> {
    Some(Noise::from_rows(vec![(1, vec![(rate, us)])], seed))
}

#[test]
fn detours_slow_a_program_that_waits_on_its_partner_and_a_seed_replays_alike() {
    let dir = pingpong("talk", 2000, 0);
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
    let dir = pingpong("compute", 200, 200);
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
    let dir = pingpong("none", 100, 3);
    let quiet = replay(&dir, None);
    let empty = replay(&dir, Some(Noise::from_rows(vec![(2, vec![])], 1)));
    assert_eq!(quiet.finish, empty.finish);
}
