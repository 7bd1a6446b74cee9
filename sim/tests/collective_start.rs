//! A communicator's first collectives (`loggp.collective_start`) in a replay: the call of
//! a listed count pays the listed time before it, once, on every rank that makes it;
//! counted over Bcast, Reduce, Barrier and Allreduce together where the model's row says
//! they share one count, else per kind; the row of the largest p at most the
//! communicator's size.

mod common;

use commchar_sim::collective_start;
use commchar_sim::engine::Outcome;
use commchar_sim::workload::replay::Options;
use common::{TraceDir, R};

const BARRIER: u16 = 23;
const BCAST: u16 = 24;
const ALLREDUCE: u16 = 34;
const T0: u64 = 1_000_000;
const US: u64 = 1_000_000; // ps

/// Every rank makes the calls in order (8 bytes each, root 0), all at T0.
fn program(name: &str, p: usize, calls: &[u16]) -> TraceDir {
    let rank: Vec<R> = calls
        .iter()
        .map(|&call| R {
            call,
            bytes: if call == BARRIER { 0 } else { 8 },
            bytes2: if call == BARRIER { 0 } else { 8 },
            aux: 1,
            ..R::default()
        })
        .collect();
    common::write_at("collstart", name, &vec![rank; p], T0)
}

fn replay(dir: &TraceDir, section: &str) -> Outcome {
    let text = format!(
        r#"{{"libraries": {{"m": {{"loggp": {{"collective_start": {{"by_p": {section}}}}}}}}}}}"#
    );
    let opts = Options {
        collective_start: collective_start::from_model(&text, "m.json", Some("m")).unwrap(),
        ..Options::default()
    };
    common::replay_dir(&dir.0, &opts, common::params(0)).unwrap()
}

fn compute(o: &Outcome) -> Vec<u64> {
    o.breakdown
        .as_ref()
        .unwrap()
        .iter()
        .map(|b| b.compute)
        .collect()
}

#[test]
fn a_shared_count_charges_the_listed_call_of_the_four_kinds_once_on_every_rank() {
    let calls = [
        BARRIER, BCAST, ALLREDUCE, ALLREDUCE, ALLREDUCE, ALLREDUCE, ALLREDUCE, ALLREDUCE,
    ];
    let dir = program("shared", 4, &calls);
    let free = replay(&dir, "[]");
    let charged = replay(
        &dir,
        r#"[{"p": 2, "shared": true, "calls": [[7, 250.0]], "kinds": {}}]"#,
    );
    let extra: Vec<u64> = compute(&charged)
        .iter()
        .zip(compute(&free))
        .map(|(c, f)| c - f)
        .collect();
    assert_eq!(
        extra,
        vec![250 * US; 4],
        "the seventh call, once, every rank"
    );
    // on the path of every rank: the makespan grows by it, less the waits it overlaps
    let grew = charged.makespan() - free.makespan();
    assert!((240 * US..=250 * US).contains(&grew), "{grew} ps");
}

#[test]
fn a_kinds_own_count_and_the_row_of_the_communicators_size_decide() {
    let calls = [BCAST, ALLREDUCE, ALLREDUCE, BCAST, ALLREDUCE];
    let section = r#"[
        {"p": 2, "shared": false, "calls": [], "kinds": {"allreduce": [[3, 100.0]], "bcast": [[2, 10.0]]}},
        {"p": 8, "shared": false, "calls": [], "kinds": {"allreduce": [[3, 400.0]]}}]"#;
    for (p, paid) in [(4, 110 * US), (8, 400 * US), (16, 400 * US)] {
        let dir = program(&format!("kinds{p}"), p, &calls);
        let extra = compute(&replay(&dir, section))[0] - compute(&replay(&dir, "[]"))[0];
        assert_eq!(extra, paid, "p = {p}");
    }
}
