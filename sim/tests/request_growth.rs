//! The first time a rank holds k requests at once the replay charges what the model's
//! `loggp.request_growth` lists for k, before the call that raises the count, once per
//! rank: a second round that holds as many again pays nothing.

mod common;

use commchar_sim::engine::Outcome;
use commchar_sim::request_growth::RequestGrowth;
use commchar_sim::workload::replay::Options;
use common::{TraceDir, R};

const SEND: u16 = 1;
const IRECV: u16 = 10;
const WAIT: u16 = 13;
const COMPLETE: u16 = 60;
const T0: u64 = 1_000_000;
const MS: u64 = 1_000_000_000; // ps

fn write(name: &str, ranks: &[Vec<R>]) -> TraceDir {
    common::write_at("requests", name, ranks, T0)
}

/// `rounds` rounds in which rank 0 posts `held` receives from rank 1 and waits for each,
/// and rank 1 sends them.
fn rounds_of(held: u64, rounds: u64) -> TraceDir {
    let (mut zero, mut one) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for k in 0..held {
            let req = round * held + k + 1;
            zero.push(R {
                call: IRECV,
                peer: 1,
                tag: 1,
                bytes2: 8,
                req,
                ..R::default()
            });
            one.push(R {
                call: SEND,
                peer: 0,
                tag: 1,
                bytes: 8,
                ..R::default()
            });
        }
        for k in 0..held {
            let req = round * held + k + 1;
            zero.push(R {
                call: WAIT,
                aux: 1,
                ..R::default()
            });
            zero.push(R {
                call: COMPLETE,
                bytes2: 8,
                req,
                aux: 1,
                aux2: 1,
                ..R::default()
            });
        }
    }
    write(&format!("{held}-{rounds}"), &[zero, one])
}

fn replay(dir: &TraceDir, growth: RequestGrowth) -> Outcome {
    let opts = Options {
        request_growth: growth,
        ..Options::default()
    };
    common::replay_dir(&dir.0, &opts, common::params(0)).unwrap()
}

fn compute(o: &Outcome, r: usize) -> u64 {
    o.breakdown.as_ref().unwrap()[r].compute
}

#[test]
fn the_call_that_first_holds_a_listed_count_pays_it_once() {
    let growth = || RequestGrowth::from_costs(vec![(9, MS), (12, 2 * MS)]);
    for (held, rounds, paid) in [
        (8, 1, 0),
        (9, 1, MS),
        (10, 1, MS),
        (12, 1, 3 * MS),
        (10, 3, MS),
    ] {
        let dir = rounds_of(held, rounds);
        let free = replay(&dir, RequestGrowth::default());
        let charged = replay(&dir, growth());
        assert_eq!(
            compute(&charged, 0) - compute(&free, 0),
            paid,
            "{held} held, {rounds} round(s)"
        );
        assert_eq!(
            compute(&charged, 1),
            compute(&free, 1),
            "blocking sends hold no request"
        );
        assert!(
            charged.finish[0] >= paid,
            "the charge lies on rank 0's path"
        );
    }
}
