//! Replay of the trace's calls of id 70 and up (docs/trace-format.md), on
//! hand-written traces: a topology's neighborhood collective, persistent
//! requests, a non-blocking collective, MPI-IO, fence and PSCW epochs.

mod common;

use commchar_sim::params::Rendezvous;
use commchar_sim::workload::replay::{Options, Replay};
use common::{NS, R};
use std::path::PathBuf;

const WAIT: u16 = 13;
const ALLREDUCE: u16 = 34;
const COMPLETE: u16 = 60;
const MEMBERS: u16 = 61;
const CART_CREATE: u16 = 70;
const NEIGHBORS: u16 = 79;
const IALLREDUCE: u16 = 93;
const NEIGHBOR_ALLTOALL: u16 = 102;
const SEND_INIT: u16 = 110;
const RECV_INIT: u16 = 114;
const START: u16 = 115;
const REQUEST_FREE: u16 = 117;
const FILE_WRITE: u16 = 126;

const T0: u64 = 1_000_000;

/// One rank's records and clock (ns).
struct Rank {
    now: u64,
    records: Vec<[u8; 64]>,
}

impl Rank {
    fn call(&mut self, r: R, dur: u64) -> &mut Self {
        self.records
            .push(common::record(r, self.now, self.now + dur));
        self.now += dur;
        self
    }

    /// MEMBERS (call 61) or NEIGHBORS (79, `direction` in tag) of `values`.
    fn list(&mut self, call: u16, comm: i32, direction: i32, values: &[i32]) -> &mut Self {
        let mut b = common::record(
            R {
                call,
                comm,
                peer: values.len() as i32,
                tag: direction,
                aux: 0,
                aux2: values.len() as i32,
                ..R::default()
            },
            self.now,
            self.now,
        );
        for (i, v) in values.iter().enumerate() {
            b[16 + 4 * i..20 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        self.records.push(b);
        self
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(name: &str, ranks: &[Rank]) -> Dir {
    let dir = std::env::temp_dir().join(format!("commchar-ext-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let size = ranks.len() as i32;
    for (rank, r) in ranks.iter().enumerate() {
        let mut bytes = common::rank_header(rank as i32, size, T0, r.now, r.records.len(), b"host");
        for rec in &r.records {
            bytes.extend_from_slice(rec);
        }
        std::fs::write(dir.join(format!("rank-{rank}.cctrace")), bytes).unwrap();
    }
    Dir(dir)
}

fn ranks(p: usize) -> Vec<Rank> {
    (0..p)
        .map(|_| Rank {
            now: T0,
            records: Vec::new(),
        })
        .collect()
}

fn params() -> commchar_sim::params::Params {
    commchar_sim::params::Params {
        eager_max: u64::MAX,
        rendezvous: Rendezvous::Handshake,
        ..common::params(0)
    }
}

#[test]
fn a_neighborhood_collective_sends_to_each_destination_of_the_topology() {
    // a periodic ring of 3 whose ranks are reordered: cart rank r is world rank (r + 1) % 3
    let mut t = ranks(3);
    for (world, tr) in t.iter_mut().enumerate() {
        let me = (world as i32 + 2) % 3;
        let (left, right) = ((me + 2) % 3, (me + 1) % 3);
        tr.call(
            R {
                call: CART_CREATE,
                aux: 2,
                aux2: 3,
                ..R::default()
            },
            0,
        )
        .list(MEMBERS, 2, 0, &[1, 2, 0])
        .list(NEIGHBORS, 2, 0, &[left, right])
        .list(NEIGHBORS, 2, 1, &[left, right])
        .call(
            R {
                call: NEIGHBOR_ALLTOALL,
                comm: 2,
                peer: -1,
                bytes: 16,
                bytes2: 16,
                ..R::default()
            },
            0,
        );
    }
    let dir = write("neighbors", &t);
    let o = common::replay_dir(&dir.0, &Options::default(), params()).unwrap();
    assert_eq!(o.messages, 6); // two per rank, 8 bytes each
    let replay = Replay::load(&dir.0, &Options::default()).unwrap();
    assert_eq!(replay.calls, 6);
    assert!(replay.other_calls.is_empty());
}

#[test]
fn a_persistent_request_is_sent_at_each_start_and_completed_by_its_wait() {
    let mut t = ranks(2);
    let send = R {
        call: SEND_INIT,
        peer: 1,
        tag: 4,
        bytes: 800,
        ..R::default()
    };
    t[0].call(send, 0);
    let recv = R {
        call: RECV_INIT,
        peer: 0,
        tag: 4,
        bytes2: 800,
        ..R::default()
    };
    t[1].call(recv, 0);
    for round in 0..2u64 {
        for (rank, init) in [(0usize, send), (1, recv)] {
            let req = 10 + round;
            let start = R {
                call: START,
                flags: 1,
                aux: init.call as i32,
                req,
                ..init
            };
            let complete = R {
                call: COMPLETE,
                req,
                aux: if rank == 1 { 0 } else { -1 },
                aux2: if rank == 1 { 4 } else { -1 },
                bytes2: init.bytes2,
                ..R::default()
            };
            t[rank].call(start, 0).call(
                R {
                    call: WAIT,
                    aux: 1,
                    ..R::default()
                },
                0,
            );
            t[rank].call(complete, 0);
        }
    }
    for tr in &mut t {
        tr.call(
            R {
                call: REQUEST_FREE,
                ..R::default()
            },
            0,
        );
    }
    let dir = write("persistent", &t);
    let o = common::replay_dir(&dir.0, &Options::default(), params()).unwrap();
    assert_eq!(o.messages, 2);
    assert!(o.finish[1] > 0);
}

#[test]
fn a_nonblocking_collective_costs_what_its_blocking_call_costs() {
    let run = |call: u16| {
        let mut t = ranks(2);
        for tr in &mut t {
            tr.call(
                R {
                    call,
                    peer: -1,
                    bytes: 4096,
                    bytes2: 4096,
                    aux: 1,
                    ..R::default()
                },
                0,
            );
        }
        let dir = write(&format!("nbc-{call}"), &t);
        common::replay_dir(&dir.0, &Options::default(), params()).unwrap()
    };
    let (blocking, nonblocking) = (run(ALLREDUCE), run(IALLREDUCE));
    assert!(blocking.messages > 0);
    assert_eq!(nonblocking.messages, blocking.messages);
    assert_eq!(nonblocking.finish, blocking.finish);
}

#[test]
fn mpi_io_is_computation_and_listed() {
    let mut t = ranks(2);
    for tr in &mut t {
        tr.call(
            R {
                call: FILE_WRITE,
                comm: -1,
                peer: -1,
                bytes: 1 << 20,
                ..R::default()
            },
            40_000,
        );
    }
    let dir = write("io", &t);
    let replay = Replay::load(&dir.0, &Options::default()).unwrap();
    assert_eq!(replay.io_calls, vec![("MPI_File_write".to_string(), 2)]);
    let o = common::replay_dir(&dir.0, &Options::default(), params()).unwrap();
    assert_eq!(o.finish, vec![40_000 * NS, 40_000 * NS]);
}

#[test]
fn a_put_in_a_fence_epoch_is_a_message_at_the_closing_fence() {
    const WIN_CREATE: u16 = 140;
    const PUT: u16 = 145;
    const WIN_FENCE: u16 = 154;
    const RMA_IN: u16 = 166;
    let run = |bytes: u64| {
        let mut t = ranks(2);
        let fence = R {
            call: WIN_FENCE,
            peer: -1,
            aux: 1,
            ..R::default()
        };
        for tr in &mut t {
            tr.call(
                R {
                    call: WIN_CREATE,
                    aux: 1,
                    ..R::default()
                },
                0,
            )
            .call(fence, 0);
        }
        if bytes > 0 {
            let put = R {
                call: PUT,
                peer: 1,
                bytes,
                aux: 1,
                ..R::default()
            };
            t[0].call(put, 0);
            let arrived = R {
                call: RMA_IN,
                peer: 0,
                bytes,
                aux: 1,
                ..R::default()
            };
            t[1].call(arrived, 0);
        }
        for tr in &mut t {
            tr.call(fence, 0);
        }
        let dir = write(&format!("fence-{bytes}"), &t);
        common::replay_dir(&dir.0, &Options::default(), params()).unwrap()
    };
    let (without, with) = (run(0), run(100_000));
    assert_eq!(with.messages, without.messages + 1);
    // the target leaves its fence only once the data is there: 100 kB at G = 6 ns/B
    assert!(with.finish[1] >= without.finish[1] + 100_000 * 6 * NS);
}

#[test]
fn a_pscw_epoch_is_a_message_from_origin_to_target_even_when_empty() {
    use commchar_sim::trace_calls::{
        PUT, RMA_IN, WIN_COMPLETE, WIN_CREATE, WIN_POST, WIN_START, WIN_WAIT,
    };
    let win = |call| R {
        call,
        peer: -1,
        aux: 1,
        ..R::default()
    };
    // rank 0 the origin (start group {1}), rank 1 the target (post group {0}); the
    // target may come late to its epoch
    let run = |bytes: u64, target_late: u64| {
        let mut t = ranks(2);
        for tr in &mut t {
            tr.call(win(WIN_CREATE), 0);
        }
        t[0].call(win(WIN_START), 0);
        if bytes > 0 {
            t[0].call(
                R {
                    call: PUT,
                    peer: 1,
                    bytes,
                    aux: 1,
                    aux2: 2,
                    ..R::default()
                },
                0,
            );
        }
        // what the origin moved to its target (tag 1), then Win_complete
        t[0].call(
            R {
                call: RMA_IN,
                peer: 1,
                tag: 1,
                bytes,
                aux: 1,
                ..R::default()
            },
            0,
        )
        .call(win(WIN_COMPLETE), 0);
        t[1].now += target_late;
        t[1].call(win(WIN_POST), 0)
            .call(
                R {
                    call: RMA_IN,
                    peer: 0,
                    tag: -1,
                    bytes,
                    aux: 1,
                    ..R::default()
                },
                0,
            )
            .call(win(WIN_WAIT), 0);
        let dir = write(&format!("pscw-{bytes}-{target_late}"), &t);
        common::replay_dir(&dir.0, &Options::default(), params()).unwrap()
    };
    let (empty, full) = (run(0, 0), run(100_000, 0));
    // one message each way of synchronization: even an empty epoch sends one
    assert_eq!(empty.messages, 1);
    assert_eq!(full.messages, 1);
    // the target leaves its Win_wait only once the data is there: (100 kB - 1) G, G = 6 ns/B
    assert!(full.finish[1] >= empty.finish[1] + (100_000 - 1) * 6 * NS);
}
