//! Replay of the records a wildcard receive's completion paths leave (docs/trace-format.md):
//! a cancelled receive is nothing, a matched probe's receive takes the message the probe
//! found, and runs of unsuccessful tests are computation or waiting.

mod common;

use commchar_sim::workload::replay::Options;
use common::{NS, R};
use std::path::PathBuf;

const SEND: u16 = 1;
const IRECV: u16 = 10;
const WAIT: u16 = 13;
const TESTANY: u16 = 19;
const TEST: u16 = 17;
const TEST_RUN: u16 = 46;
const CANCEL: u16 = 47;
const MPROBE: u16 = 48;
const MRECV: u16 = 50;
const COMPLETE: u16 = 60;
const REC_CANCELLED: u16 = 8;
const ANY: i32 = -2;
const T0: u64 = 1_000_000;

/// A rank's records as (record, start, end) in ns after T0, and its Finalize time.
type Rank = (Vec<(R, u64, u64)>, u64);

/// Writes the ranks into a fresh directory.
fn write(name: &str, ranks: &[Rank]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("commchar-polling-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (rank, (records, end)) in ranks.iter().enumerate() {
        let mut file = common::rank_header(
            rank as i32,
            ranks.len() as i32,
            T0,
            T0 + end,
            records.len(),
            b"host",
        );
        for &(r, a, b) in records {
            file.extend_from_slice(&common::record(r, T0 + a, T0 + b));
        }
        std::fs::write(dir.join(format!("rank-{rank}.cctrace")), file).unwrap();
    }
    dir
}

fn replay(dir: &PathBuf) -> Result<commchar_sim::engine::Outcome, commchar_sim::SimError> {
    let out = common::replay_dir(dir, &Options::default(), common::params(0));
    let _ = std::fs::remove_dir_all(dir);
    out
}

fn send(tag: i32) -> R {
    R {
        call: SEND,
        peer: 0,
        tag,
        bytes: 100,
        ..R::default()
    }
}

#[test]
fn a_cancelled_wildcard_receive_is_nothing_and_the_next_takes_its_recorded_source() {
    let irecv = |tag, req| R {
        call: IRECV,
        peer: ANY,
        tag,
        bytes2: 100,
        req,
        ..R::default()
    };
    let wait = R {
        call: WAIT,
        aux: 1,
        ..R::default()
    };
    let rank0 = vec![
        (irecv(99, 1), 0, 0),
        (
            R {
                call: CANCEL,
                req: 1,
                ..R::default()
            },
            0,
            0,
        ),
        (wait, 0, 0),
        (
            R {
                call: COMPLETE,
                flags: REC_CANCELLED,
                req: 1,
                aux: -1,
                aux2: -1,
                ..R::default()
            },
            0,
            0,
        ),
        (irecv(-1, 2), 0, 0),
        (wait, 0, 10_000),
        (
            R {
                call: COMPLETE,
                req: 2,
                aux: 1,
                aux2: 5,
                bytes2: 100,
                ..R::default()
            },
            10_000,
            10_000,
        ),
    ];
    let dir = write("cancel", &[(rank0, 10_000), (vec![(send(5), 0, 0)], 0)]);
    let o = replay(&dir).expect("a cancelled receive does not wait for a message");
    // the message: o_s + L + o_r + 99 G after rank 1's send at 0
    assert_eq!(o.finish[0], (1500 + 2500 + 1500 + 99 * 6) * NS);
}

#[test]
fn a_wildcard_receive_without_its_source_is_refused() {
    let rank0 = vec![
        (
            R {
                call: IRECV,
                peer: ANY,
                tag: -1,
                req: 1,
                ..R::default()
            },
            0,
            0,
        ),
        (
            R {
                call: WAIT,
                aux: 1,
                ..R::default()
            },
            0,
            0,
        ),
        (
            R {
                call: COMPLETE,
                req: 1,
                aux: -1,
                aux2: -1,
                ..R::default()
            },
            0,
            0,
        ),
    ];
    let dir = write("unresolved", &[(rank0, 0), (vec![(send(5), 0, 0)], 0)]);
    let err = replay(&dir).unwrap_err().to_string();
    assert!(err.contains("without its actual source and tag"), "{err}");
}

#[test]
fn a_matched_probes_receive_takes_the_probed_message() {
    let rank0 = vec![
        (
            R {
                call: MPROBE,
                peer: ANY,
                tag: -1,
                bytes2: 100,
                aux: 1,
                aux2: 6,
                ..R::default()
            },
            0,
            5_000,
        ),
        (
            R {
                call: MRECV,
                peer: 1,
                tag: 6,
                bytes2: 100,
                aux: 1,
                aux2: 6,
                ..R::default()
            },
            5_000,
            5_000,
        ),
    ];
    let dir = write(
        "mprobe",
        &[(rank0.clone(), 5_000), (vec![(send(6), 0, 0)], 0)],
    );
    let o = replay(&dir).unwrap();
    assert_eq!(o.finish[0], (1500 + 2500 + 1500 + 99 * 6) * NS);
    // a receive of a message whose probe the trace lacks
    let mut orphan = rank0;
    orphan.remove(0);
    orphan[0].0.peer = -1;
    let dir = write("orphan", &[(orphan, 5_000), (vec![(send(6), 0, 0)], 0)]);
    let err = replay(&dir).unwrap_err().to_string();
    assert!(err.contains("whose probe the trace lacks"), "{err}");
}

/// A TEST_RUN of `count` calls, the quickest `least` ns inside MPI.
fn run(call: u16, count: u64, least: u64, key: u64) -> R {
    R {
        call: TEST_RUN,
        bytes: count,
        bytes2: least,
        req: key,
        aux: call as i32,
        aux2: 1,
        ..R::default()
    }
}

#[test]
fn a_polling_loop_is_computation_and_the_completing_test_waits_for_the_message() {
    // two sets polled in turn for 10 us, then the receive completes: rank 1 sends at 20 us
    let irecv = R {
        call: IRECV,
        peer: ANY,
        tag: -1,
        bytes2: 100,
        req: 1,
        ..R::default()
    };
    let rank0 = vec![
        (irecv, 0, 0),
        (run(TESTANY, 100, 45, 7), 0, 9_990),
        (run(TEST, 100, 45, 8), 10, 10_000),
        (
            R {
                call: TESTANY,
                aux: 1,
                ..R::default()
            },
            30_000,
            30_000,
        ),
        (
            R {
                call: COMPLETE,
                req: 1,
                aux: 1,
                aux2: 5,
                bytes2: 100,
                ..R::default()
            },
            30_000,
            30_000,
        ),
    ];
    let rank1 = vec![(send(5), 20_000, 20_000)];
    let dir = write("polling", &[(rank0, 30_000), (rank1, 20_000)]);
    let o = replay(&dir).unwrap();
    // the 10 us of polls, then 20 us more of computation; the message sent at 20 us has
    // arrived by then, and its receive overhead runs once the CPU is free
    assert_eq!(o.finish[0], (30_000 + 1500 + 99 * 6) * NS);
    // with the sender later than the polling: the completing test waits for its message
    let rank0 = vec![
        (irecv, 0, 0),
        (run(TESTANY, 100, 45, 7), 0, 10_000),
        (
            R {
                call: TESTANY,
                aux: 1,
                ..R::default()
            },
            10_000,
            10_000,
        ),
        (
            R {
                call: COMPLETE,
                req: 1,
                aux: 1,
                aux2: 5,
                bytes2: 100,
                ..R::default()
            },
            10_000,
            10_000,
        ),
    ];
    let dir = write(
        "late",
        &[(rank0, 10_000), (vec![(send(5), 50_000, 50_000)], 50_000)],
    );
    let o = replay(&dir).unwrap();
    assert_eq!(o.finish[0], (50_000 + 1500 + 2500 + 1500 + 99 * 6) * NS);
}
