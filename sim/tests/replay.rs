//! Replay of hand-written traces (docs/trace-format.md): semantics of the
//! calls, the breakdown, errors on bad files, and agreement with the
//! simulator's own generated collectives.

mod common;

use commchar_sim::copy_footprint::CopyFootprint;
use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::exchange_excess::ExchangeExcess;
use commchar_sim::first_touch::ByteSteps;
use commchar_sim::network::Network;
use commchar_sim::noise::Noise;
use commchar_sim::params::{ColdStart, Params, Rendezvous, RendezvousCopy};
use commchar_sim::placement::MisalignedCopy;
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::replay::{
    CollectiveMode, LocalCopy, Options, Replay, Signature, SignatureCost,
};
use commchar_sim::written_send::WrittenSend;
use commchar_sim::SimError;
use common::{NS, R};
use std::path::{Path, PathBuf};

// call ids (tracer/cc_trace_format.h)
const SEND: u16 = 1;
const BSEND: u16 = 2;
const SSEND: u16 = 3;
const RECV: u16 = 5;
const ISEND: u16 = 6;
const IRECV: u16 = 10;
const SENDRECV: u16 = 11;
const SENDRECV_REPLACE: u16 = 12;
const WAITALL: u16 = 14;
const BARRIER: u16 = 23;
const BCAST: u16 = 24;
const SCATTER: u16 = 25;
const ALLTOALL: u16 = 31;
const ALLREDUCE: u16 = 34;
const COMM_SPLIT: u16 = 39;
const PCONTROL: u16 = 43;
const COMPLETE: u16 = 60;
const MEMBERS: u16 = 61;
const OTHER: u16 = 62;

/// One rank's trace being written: records with a clock in ns.
struct RankTrace {
    rank: i32,
    size: i32,
    now: u64,
    records: Vec<[u8; 64]>,
}

const T0: u64 = 1_000_000;

impl RankTrace {
    fn new(rank: i32, size: i32) -> Self {
        RankTrace {
            rank,
            size,
            now: T0,
            records: Vec::new(),
        }
    }

    fn compute(&mut self, ns: u64) -> &mut Self {
        self.now += ns;
        self
    }

    /// A call at the current time lasting `dur` ns.
    fn call(&mut self, r: R, dur: u64) -> &mut Self {
        let b = common::record(r, self.now, self.now + dur);
        self.records.push(b);
        self.now += dur;
        self
    }

    fn send(&mut self, call: u16, peer: i32, bytes: u64, tag: i32) -> &mut Self {
        self.call(
            R {
                call,
                peer,
                tag,
                bytes,
                ..R::default()
            },
            0,
        )
    }

    fn recv(&mut self, peer: i32, bytes: u64, tag: i32) -> &mut Self {
        let r = R {
            call: RECV,
            peer,
            tag,
            bytes2: bytes,
            aux: peer,
            aux2: tag,
            ..R::default()
        };
        self.call(r, 0)
    }

    fn isend(&mut self, peer: i32, bytes: u64, tag: i32, req: u64) -> &mut Self {
        let r = R {
            call: ISEND,
            peer,
            tag,
            bytes,
            req,
            ..R::default()
        };
        self.call(r, 0)
    }

    /// An MPI_Waitall of `reqs` (no statuses), and the COMPLETE record of each.
    fn wait_all(&mut self, reqs: &[u64]) -> &mut Self {
        let all = R {
            call: WAITALL,
            aux: reqs.len() as i32,
            ..R::default()
        };
        self.call(all, 0);
        for &req in reqs {
            let done = R {
                call: COMPLETE,
                req,
                ..R::default()
            };
            self.call(done, 0);
        }
        self
    }

    fn members(&mut self, members: &[i32]) -> &mut Self {
        let mut b = [0u8; 64];
        b[0..2].copy_from_slice(&MEMBERS.to_le_bytes());
        for (i, m) in members.iter().enumerate() {
            b[16 + 4 * i..20 + 4 * i].copy_from_slice(&m.to_le_bytes());
        }
        b[56..60].copy_from_slice(&0i32.to_le_bytes());
        b[60..64].copy_from_slice(&(members.len() as i32).to_le_bytes());
        self.records.push(b);
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut h = common::rank_header(
            self.rank,
            self.size,
            T0,
            self.now,
            self.records.len(),
            b"host",
        );
        for r in &self.records {
            h.extend_from_slice(r);
        }
        h
    }
}

/// A directory of trace files removed when the test ends, pass or fail.
struct TraceDir(PathBuf);

impl std::ops::Deref for TraceDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_trace(name: &str, ranks: &[RankTrace]) -> TraceDir {
    // tests run in parallel and may write the same trace: each call has a folder of its own
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "commchar-replay-{}-{serial}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for r in ranks {
        std::fs::write(dir.join(format!("rank-{}.cctrace", r.rank)), r.bytes()).unwrap();
    }
    TraceDir(dir)
}

fn traces(p: i32) -> Vec<RankTrace> {
    (0..p).map(|r| RankTrace::new(r, p)).collect()
}

fn params(eager_max: u64, rendezvous: Rendezvous) -> Params {
    Params {
        eager_max,
        rendezvous,
        ..common::params(0)
    }
}

fn replay(dir: &Path, opts: &Options, params: Params) -> Result<Outcome, SimError> {
    common::replay_dir(dir, opts, params)
}

fn check_sums(o: &Outcome) {
    for (r, b) in o.breakdown.as_ref().unwrap().iter().enumerate() {
        assert_eq!(
            b.total(),
            o.finish[r],
            "rank {r}: breakdown {b:?} does not sum to its finish"
        );
    }
}

/// Rank 0 sends 1000 B at 0; rank 1 computes 10 us, then receives.
fn late_receiver(call: u16) -> TraceDir {
    let mut t = traces(2);
    t[0].send(call, 1, 1000, 7);
    t[1].compute(10_000).recv(0, 1000, 7);
    write_trace(&format!("late-{call}"), &t)
}

#[test]
fn eager_send_completes_after_its_overhead() {
    let dir = late_receiver(SEND);
    let o = replay(
        &dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    check_sums(&o);
    assert_eq!(o.finish[0], 1500 * NS);
    // handled once the computation is done: o_r + 999 G
    assert_eq!(o.finish[1], (10_000 + 1500 + 999 * 6) * NS);
    let b = &o.breakdown.as_ref().unwrap()[1];
    assert_eq!((b.compute, b.sync), (10_000 * NS, 0));
}

#[test]
fn rendezvous_sender_waits_for_the_late_receiver() {
    let dir = late_receiver(SEND);
    let o = replay(&dir, &Options::default(), params(0, Rendezvous::Handshake)).unwrap();
    check_sums(&o);
    // matched at 10 us, the clear-to-send arrives L later
    assert_eq!(o.finish[0], (10_000 + 2500) * NS);
    let b = o.breakdown.as_ref().unwrap()[0];
    // the message waited 10 - 4 us for its receive: synchronization; the rest is communication
    assert_eq!(b.sync, 6000 * NS);
    assert_eq!(b.comm, 6500 * NS);
}

#[test]
fn ssend_is_synchronous_and_bsend_local_whatever_s() {
    let o = replay(
        &late_receiver(SSEND),
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    assert_eq!(o.finish[0], 12_500 * NS);
    let o = replay(
        &late_receiver(BSEND),
        &Options::default(),
        params(0, Rendezvous::Handshake),
    )
    .unwrap();
    assert_eq!(o.finish[0], 1500 * NS);
}

#[test]
fn isend_irecv_waitall_keep_order_and_overlap() {
    // rank 0: Isend 100 B tag 1, Isend tag 2, compute 5 us, Waitall; rank 1: Irecv tag 2, Irecv tag 1, Waitall
    let mut t = traces(2);
    let isend = |tag, req| R {
        call: ISEND,
        peer: 1,
        tag,
        bytes: 100,
        req,
        ..R::default()
    };
    t[0].call(isend(1, 11), 0)
        .call(isend(2, 12), 0)
        .compute(5000);
    t[0].call(
        R {
            call: WAITALL,
            aux: 2,
            ..R::default()
        },
        0,
    );
    t[0].call(
        R {
            call: COMPLETE,
            req: 11,
            ..R::default()
        },
        0,
    );
    t[0].call(
        R {
            call: COMPLETE,
            req: 12,
            peer: 1,
            ..R::default()
        },
        0,
    );
    let irecv = |tag, req| R {
        call: IRECV,
        peer: 0,
        tag,
        bytes2: 100,
        req,
        ..R::default()
    };
    t[1].call(irecv(2, 21), 0).call(irecv(1, 22), 0);
    t[1].call(
        R {
            call: WAITALL,
            aux: 2,
            ..R::default()
        },
        0,
    );
    t[1].call(
        R {
            call: COMPLETE,
            req: 21,
            aux: 0,
            aux2: 2,
            ..R::default()
        },
        0,
    );
    t[1].call(
        R {
            call: COMPLETE,
            req: 22,
            aux: 0,
            aux2: 1,
            peer: 1,
            ..R::default()
        },
        0,
    );
    let dir = write_trace("nonblocking", &t);
    let o = replay(
        &dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    check_sums(&o);
    // the second send waits for the NIC (g + 99 G), then the computation runs
    let second = 1000 + 99 * 6;
    assert_eq!(o.finish[0], (second + 1500 + 5000) * NS);
    // the first message is handled at 4 us (o + L); the second arrives while
    // the CPU is busy and is handled right after
    let handled = 1500 + 99 * 6;
    assert_eq!(o.finish[1], (4000 + 2 * handled) * NS);
}

/// Rank 0 sends 1000 B to rank 1 by `call` (an MPI_Isend completed by a Waitall, or a
/// blocking send); rank 1 receives it.
fn one_message(call: u16) -> TraceDir {
    let mut t = traces(2);
    if call == ISEND {
        t[0].isend(1, 1000, 1, 11).wait_all(&[11]);
    } else {
        t[0].send(call, 1, 1000, 1);
    }
    t[1].recv(0, 1000, 1);
    write_trace(&format!("one-message-{call}"), &t)
}

#[test]
fn a_non_blocking_send_costs_its_measured_post_where_that_holds_the_copy_and_costs_less() {
    // posts of 400 ns at 0 B and 600 ns at 2000 B: 500 ns at 1000 B, against o_s 1500 ns
    let posting = |eager_max, big_o| Params {
        send_post: vec![(0, 400 * NS), (2000, 600 * NS)],
        big_o,
        ..params(eager_max, Rendezvous::Handshake)
    };
    let blocking = |eager_max, big_o| Params {
        big_o,
        ..params(eager_max, Rendezvous::Handshake)
    };
    let (isend, send) = (one_message(ISEND), one_message(SEND));
    let finish = |dir: &TraceDir, prm: Params| {
        let o = replay(dir, &Options::default(), prm).unwrap();
        check_sums(&o);
        o.finish
    };
    let plain = finish(&isend, blocking(u64::MAX, 0));
    let posted = finish(&isend, posting(u64::MAX, 0));
    // the sender is free 1000 ns sooner, and its message leaves as much sooner
    assert_eq!(posted[0] + 1000 * NS, plain[0]);
    assert_eq!(posted[1] + 1000 * NS, plain[1]);
    assert_eq!(posted[0], 500 * NS);
    // o_s is what is left of the post after the copy: 500 - 999 x 0.2 ns
    let copying = finish(&isend, posting(u64::MAX, NS / 5));
    assert_eq!(copying[0], 500 * NS);
    // a post shorter than the copy (999 x 1 ns) leaves the bytes to later calls: blocking cost
    assert_eq!(
        finish(&isend, posting(u64::MAX, NS)),
        finish(&isend, blocking(u64::MAX, NS))
    );
    // a post above the blocking send's cost: the blocking send is a post and its completion
    let slow_post = Params {
        send_post: vec![(0, 1800 * NS)],
        ..params(u64::MAX, Rendezvous::Handshake)
    };
    assert_eq!(finish(&isend, slow_post), plain);
    // a blocking send, and a rendezvous message, pay what they paid
    assert_eq!(
        finish(&send, posting(u64::MAX, 0)),
        finish(&send, blocking(u64::MAX, 0))
    );
    assert_eq!(
        finish(&isend, posting(0, 0)),
        finish(&isend, blocking(0, 0))
    );
}

/// Rank 0 posts a 10000 B Isend, computes 5 us and waits; rank 1 receives at once.
fn isend_overlapping_computation() -> TraceDir {
    let mut t = traces(2);
    t[0].isend(1, 10_000, 1, 11).compute(5000).wait_all(&[11]);
    t[1].recv(0, 10_000, 1);
    write_trace("isend-overlap", &t)
}

#[test]
fn a_single_copy_rendezvous_leaves_the_senders_cpu_free() {
    let dir = isend_overlapping_computation();
    let run = |copy| {
        let p = Params {
            big_o: 2 * NS,
            rendezvous_copy: copy,
            ..params(0, Rendezvous::Handshake)
        };
        let o = replay(&dir, &Options::default(), p).unwrap();
        check_sums(&o);
        o
    };
    let both = run(RendezvousCopy::Both);
    // the sender copies 9999 B at 2 ns/B before it can compute
    assert_eq!(both.finish[0], (1500 + 9999 * 2 + 5000) * NS);
    let single = run(RendezvousCopy::Receiver);
    // o_s, then the computation while the receiver pulls the bytes (matched at o + L,
    // o_r + 9999 max(O, G)); the wait ends when its ack is back, L later
    assert_eq!(
        single.finish[0],
        (1500 + 2500 + 1500 + 9999 * 6 + 2500) * NS
    );
    assert_eq!(single.breakdown.as_ref().unwrap()[0].compute, 5000 * NS);
    // the receiver pays o_r + 9999 max(O, G) in both
    assert_eq!(both.finish[1], single.finish[1]);
    // an eager message is still copied by its sender
    let eager = Params {
        big_o: 2 * NS,
        rendezvous_copy: RendezvousCopy::Receiver,
        ..params(u64::MAX, Rendezvous::Handshake)
    };
    assert_eq!(
        replay(&dir, &Options::default(), eager).unwrap().finish[0],
        (1500 + 9999 * 2 + 5000) * NS
    );
}

#[test]
fn a_ranks_first_sends_pay_the_cold_start_and_later_ones_do_not() {
    // rank 0 sends three 1000 B messages in a row; rank 1, quick to receive, waits for each
    let mut t = traces(2);
    for _ in 0..3 {
        t[0].send(SEND, 1, 1000, 7);
        t[1].recv(0, 1000, 7);
    }
    let dir = write_trace("cold-start", &t);
    let run = |cold_start| {
        let p = Params {
            cold_start,
            o_r: 100 * NS,
            big_g: 0,
            ..params(u64::MAX, Rendezvous::Handshake)
        };
        let o = replay(&dir, &Options::default(), p).unwrap();
        check_sums(&o);
        o
    };
    let warm = run(None);
    let cold = |o_r| ColdStart {
        messages: 2,
        o_s: 2000 * NS,
        big_o_s: NS,
        o_r,
        big_o_r: 0,
        first: 0,
        min_bytes: 0,
        max_bytes: 512,
        rendezvous_first: 0,
        rendezvous_reverse: 0,
    };
    // the first two sends are cold: 2 us + 1 ns/B up to 512 B each, before they leave
    let senders = run(Some(cold(0)));
    let extra = 2 * (2000 + 512) * NS;
    assert_eq!(senders.finish[0], warm.finish[0] + extra);
    assert_eq!(senders.finish[1], warm.finish[1] + extra);
    assert_eq!(
        senders.breakdown.as_ref().unwrap()[0].comm,
        warm.breakdown.as_ref().unwrap()[0].comm + extra
    );
    // a cold receive of 1 us hides behind the next cold send's 2.5 us; the last
    // message is warm, so the receiver ends as before
    let both = run(Some(cold(1000 * NS)));
    assert_eq!(both.finish[1], senders.finish[1]);
    // a single cold message: its receiver's 1 us shows in full
    let mut one = traces(2);
    one[0].send(SEND, 1, 1000, 7);
    one[1].recv(0, 1000, 7);
    let dir = write_trace("cold-start-one", &one);
    let single = |cold_start| {
        let p = Params {
            cold_start,
            ..params(u64::MAX, Rendezvous::Handshake)
        };
        replay(&dir, &Options::default(), p).unwrap().finish[1]
    };
    assert_eq!(
        single(Some(cold(1000 * NS))),
        single(None) + (2000 + 512 + 1000) * NS
    );
}

#[test]
fn small_messages_take_their_cells_warm_rendezvous_ones_none_and_the_first_cold_send_pays_once_more(
) {
    // rank 0 sends 64 B, 100 KiB (rendezvous) and then two 1000 B messages
    let mut t = traces(2);
    for size in [64, 100_000, 1000, 1000] {
        t[0].send(SEND, 1, size, 7);
        t[1].recv(0, size, 7);
    }
    let dir = write_trace("cold-start-sizes", &t);
    let run = |cold_start| {
        let p = Params {
            cold_start,
            big_g: 0,
            ..params(8192, Rendezvous::Handshake)
        };
        let o = replay(&dir, &Options::default(), p).unwrap();
        check_sums(&o);
        o.finish[1]
    };
    let cold = ColdStart {
        messages: 3,
        o_s: 2000 * NS,
        big_o_s: 0,
        o_r: 0,
        big_o_r: 0,
        first: 5000 * NS,
        min_bytes: 64,
        max_bytes: 8192,
        rendezvous_first: 0,
        rendezvous_reverse: 0,
    };
    // the 64 B send takes the first cell and pays nothing, the rendezvous one neither pays
    // nor takes one, the two 1000 B sends take the others and pay, the first of them
    // `first` too
    assert_eq!(run(Some(cold)), run(None) + (2 * 2000 + 5000) * NS);
    // two cells: the second 1000 B send is warm
    let two = ColdStart {
        messages: 2,
        ..cold
    };
    assert_eq!(run(Some(two)), run(None) + (2000 + 5000) * NS);
    // one cell: the 64 B send takes it, and nothing is paid
    let one = ColdStart {
        messages: 1,
        ..cold
    };
    assert_eq!(run(Some(one)), run(None));
}

#[test]
fn a_pairs_first_rendezvous_messages_pay_once_each_way() {
    // 0 -> 1 twice, then 1 -> 0 twice, 100 KiB each (rendezvous), each receive posted first
    let mut t = traces(2);
    for _ in 0..2 {
        t[1].recv(0, 100_000, 7);
        t[0].send(SEND, 1, 100_000, 7);
    }
    for _ in 0..2 {
        t[0].recv(1, 100_000, 7);
        t[1].send(SEND, 0, 100_000, 7);
    }
    let dir = write_trace("cold-rendezvous", &t);
    let run = |cold_start| {
        let p = Params {
            cold_start,
            ..params(8192, Rendezvous::Handshake)
        };
        let o = replay(&dir, &Options::default(), p).unwrap();
        check_sums(&o);
        o.finish[0]
    };
    let pair = ColdStart::rendezvous_only(100_000 * NS, 30_000 * NS);
    // each way's first message pays once, on the path every later one waits for
    assert_eq!(run(Some(pair)), run(None) + (100_000 + 30_000) * NS);
}

#[test]
fn any_source_takes_the_source_the_trace_received_from() {
    // rank 2 receives with MPI_ANY_SOURCE: the status says rank 1
    let mut t = traces(3);
    t[1].send(SEND, 2, 8, 0);
    t[0].compute(50_000).send(SEND, 2, 8, 0);
    t[2].call(
        R {
            call: RECV,
            peer: -2,
            tag: 0,
            bytes2: 8,
            aux: 1,
            aux2: 0,
            ..R::default()
        },
        0,
    );
    t[2].recv(0, 8, 0);
    let dir = write_trace("anysource", &t);
    let o = replay(
        &dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    check_sums(&o);
    // the late sender is rank 0: rank 2 ends after its message
    assert_eq!(o.finish[2], (50_000 + 1500 + 2500 + 1500 + 7 * 6) * NS);
    let b = o.breakdown.as_ref().unwrap()[2];
    assert!(
        b.sync >= 44_000 * NS,
        "waiting for rank 0's late send is synchronization: {b:?}"
    );
}

#[test]
fn communicator_ranks_become_world_ranks() {
    // a split whose rank order is reversed: rank 0 of the new communicator is world rank 1
    let mut t = traces(2);
    for tr in &mut t {
        tr.call(
            R {
                call: COMM_SPLIT,
                comm: 0,
                aux: 2,
                aux2: 2,
                ..R::default()
            },
            0,
        );
        tr.members(&[1, 0]);
    }
    // world 0 (new rank 1) sends to new rank 0 = world 1
    t[0].call(
        R {
            call: SEND,
            comm: 2,
            peer: 0,
            tag: 3,
            bytes: 8,
            ..R::default()
        },
        0,
    );
    t[1].call(
        R {
            call: RECV,
            comm: 2,
            peer: 1,
            tag: 3,
            bytes2: 8,
            aux: 1,
            aux2: 3,
            ..R::default()
        },
        0,
    );
    let dir = write_trace("comm", &t);
    let o = replay(
        &dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    assert_eq!(o.finish[1], (1500 + 2500 + 1500 + 7 * 6) * NS);
    // the same message on the world communicator has another tag space: a deadlock
    let mut t = traces(2);
    t[0].call(
        R {
            call: SEND,
            comm: 0,
            peer: 1,
            tag: 3,
            bytes: 8,
            ..R::default()
        },
        0,
    );
    for tr in &mut t {
        tr.call(
            R {
                call: COMM_SPLIT,
                comm: 0,
                aux: 2,
                aux2: 2,
                ..R::default()
            },
            0,
        );
        tr.members(&[1, 0]);
    }
    t[1].call(
        R {
            call: RECV,
            comm: 2,
            peer: 1,
            tag: 3,
            bytes2: 8,
            aux: 1,
            aux2: 3,
            ..R::default()
        },
        0,
    );
    let dir = write_trace("comm-mismatch", &t);
    let e = replay(
        &dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap_err();
    assert!(matches!(e, SimError::Deadlock(_)), "{e}");
}

fn charged(costs: &[(&'static str, u32, u64, f64)]) -> Options {
    let mut o = Options {
        collectives: CollectiveMode::Charged,
        ..Options::default()
    };
    for &(call, p, n, us) in costs {
        o.costs.insert(
            Signature { call, p, n },
            SignatureCost {
                cost_ps: Some((us * 1e6) as u64),
                algorithm: None,
            },
        );
    }
    o
}

#[test]
fn a_charged_collectives_messages_pay_the_cold_start_the_slowest_member_holding_all() {
    // three allreduces of 1000 B at p = 3 (two rounds of messages a member), then one of
    // 64 B; rank 0 has already used one cold send on a message of its own
    let mut t = traces(3);
    t[0].send(SEND, 1, 1000, 7);
    t[1].recv(0, 1000, 7);
    for rank in t.iter_mut() {
        for bytes in [1000, 1000, 1000, 64] {
            rank.call(
                R {
                    call: ALLREDUCE,
                    bytes,
                    bytes2: bytes,
                    aux: 1,
                    ..R::default()
                },
                0,
            );
        }
    }
    let dir = write_trace("charged-cold", &t);
    let opts = charged(&[("allreduce", 3, 1000, 5.0), ("allreduce", 3, 64, 5.0)]);
    let run = |cold_start| {
        let p = Params {
            cold_start,
            ..params(u64::MAX, Rendezvous::Handshake)
        };
        let o = replay(&dir, &opts, p).unwrap();
        check_sums(&o);
        o.finish[2]
    };
    let cold = ColdStart {
        messages: 5,
        o_s: 1000 * NS,
        big_o_s: 0,
        o_r: 100 * NS,
        big_o_r: 0,
        first: 0,
        min_bytes: 64,
        max_bytes: 8192,
        rendezvous_first: 0,
        rendezvous_reverse: 0,
    };
    // rank 1 reaches the first call 1.1 us later (rank 0's cold send, its own cold
    // receive); then per call the costliest member: 2 sends and 2 receives (2.2 us), again
    // (2.2 us), then rank 2's last send and receive (1.1 us: rank 0 has no send left, rank
    // 1 no receive); the 64 B call pays nothing
    let expected = 1100 + 2200 + 2200 + 1100;
    assert_eq!(run(Some(cold)), run(None) + expected * NS);
}

#[test]
fn a_charged_collectives_rendezvous_messages_pay_each_pairs_first() {
    // two scatters of 64 KiB a member at p = 2, rendezvous: the first pays the pair's first
    // rendezvous message (the slowest member's), the second nothing; a later point-to-point
    // rendezvous message between the two pays nothing more
    let mut t = traces(2);
    for rank in t.iter_mut() {
        for _ in 0..2 {
            rank.call(
                R {
                    call: SCATTER,
                    bytes: 131_072,
                    bytes2: 65_536,
                    aux: 0,
                    ..R::default()
                },
                0,
            );
        }
    }
    t[0].send(SEND, 1, 65_536, 7);
    t[1].recv(0, 65_536, 7);
    let dir = write_trace("charged-cold-rendezvous", &t);
    let opts = charged(&[("scatter", 2, 131_072, 20.0)]);
    let run = |cold_start| {
        let p = Params {
            cold_start,
            ..params(8192, Rendezvous::Handshake)
        };
        let o = replay(&dir, &opts, p).unwrap();
        check_sums(&o);
        o.finish[1]
    };
    let pair = ColdStart::rendezvous_only(100_000 * NS, 30_000 * NS);
    assert_eq!(run(Some(pair)), run(None) + 100_000 * NS);
}

#[test]
fn charged_collective_waits_for_the_last_member() {
    let mut t = traces(3);
    for r in 0..3 {
        t[r as usize].compute(r as u64 * 10_000);
        t[r as usize].call(
            R {
                call: ALLREDUCE,
                bytes: 64,
                bytes2: 64,
                aux: 1,
                ..R::default()
            },
            0,
        );
        t[r as usize]
            .call(
                R {
                    call: PCONTROL,
                    aux: 1,
                    ..R::default()
                },
                0,
            )
            .compute(1000);
    }
    let dir = write_trace("charged", &t);
    let o = replay(
        &dir,
        &charged(&[("allreduce", 3, 64, 5.0)]),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    check_sums(&o);
    // all leave at the last arrival (20 us) + 5 us, then compute 1 us
    assert_eq!(o.finish, vec![26_000 * NS; 3]);
    let b = o.breakdown.as_ref().unwrap();
    assert_eq!(
        (b[0].sync, b[0].comm, b[0].compute),
        (20_000 * NS, 5000 * NS, 1000 * NS)
    );
    assert_eq!(b[2].sync, 0);
    // each rank passed its Pcontrol at 25 us with the collective behind it
    assert_eq!(o.marks.len(), 3);
    assert!(o
        .marks
        .iter()
        .all(|m| m.time == 25_000 * NS && m.level == 1));
    // a signature listed with neither a cost nor an algorithm (the model lacks the
    // operation and the library has no selection rules) is expanded into the default
    let mut listed = charged(&[]);
    listed.costs.insert(
        Signature {
            call: "allreduce",
            p: 3,
            n: 64,
        },
        SignatureCost {
            cost_ps: None,
            algorithm: None,
        },
    );
    let expanded = Options::default();
    let params = || params(u64::MAX, Rendezvous::Handshake);
    assert_eq!(
        replay(&dir, &listed, params()).unwrap().finish,
        replay(&dir, &expanded, params()).unwrap().finish
    );
    // a signature without a cost is refused in one line
    let e = Replay::load(&dir, &charged(&[])).err().unwrap();
    assert!(
        e.to_string().contains("no cost for allreduce p=3 n=64"),
        "{e}"
    );
}

#[test]
fn breakdown_sums_to_finish_on_a_mixed_program() {
    let mut t = traces(2);
    for step in 0..20u64 {
        let bytes = if step % 3 == 0 { 100_000 } else { 64 };
        t[0].compute(1000 + step * 300)
            .send(SEND, 1, bytes, 0)
            .recv(1, 8, 1);
        t[1].compute(2000)
            .recv(0, bytes, 0)
            .compute(step * 100)
            .send(SEND, 0, 8, 1);
    }
    let dir = write_trace("mixed", &t);
    for (s, rv) in [
        (1000, Rendezvous::Handshake),
        (u64::MAX, Rendezvous::Match),
        (0, Rendezvous::Match),
    ] {
        let o = replay(&dir, &Options::default(), params(s, rv)).unwrap();
        check_sums(&o);
    }
}

fn expect_input_error(dir: &Path, needle: &str) {
    match Replay::load(dir, &Options::default()) {
        Err(SimError::Input(m)) => assert!(m.contains(needle), "{m}"),
        Err(e) => panic!("wrong error kind: {e}"),
        Ok(_) => panic!("a bad trace was accepted"),
    }
}

#[test]
fn truncated_or_corrupt_traces_give_one_line_errors() {
    let mut t = traces(2);
    t[0].send(SEND, 1, 8, 0);
    t[1].recv(0, 8, 0);
    let dir = write_trace("bad", &t);
    let file = dir.join("rank-1.cctrace");
    let good = std::fs::read(&file).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() - 10].to_vec(), "truncated"),
        (good[..100].to_vec(), "truncated"),
        ([b"XXTRACE1".as_slice(), &good[8..]].concat(), "bad magic"),
        (
            [&good[..8], 3u32.to_le_bytes().as_slice(), &good[12..]].concat(),
            "version 3",
        ),
        (
            [&good[..12], 32u32.to_le_bytes().as_slice(), &good[16..]].concat(),
            "record size 32",
        ),
        (
            [&good[..48], 0u32.to_le_bytes().as_slice(), &good[52..]].concat(),
            "cut short",
        ),
        (
            [&good[..256], 99u16.to_le_bytes().as_slice(), &good[258..]].concat(),
            "unknown call id 99",
        ),
    ];
    for (bytes, needle) in cases {
        std::fs::write(&file, &bytes).unwrap();
        expect_input_error(&dir, needle);
    }
    let first = std::fs::read(dir.join("rank-0.cctrace")).unwrap();
    std::fs::write(&file, &good).unwrap();
    std::fs::write(dir.join("rank-0.cctrace"), &first[..first.len() - 64]).unwrap();
    expect_input_error(&dir, "the header says 1 records, the file holds 0");
    std::fs::remove_file(&file).unwrap();
    std::fs::remove_file(dir.join("rank-0.cctrace")).unwrap();
    expect_input_error(&dir, "no rank-<r>.cctrace");
    std::fs::write(&file, &good).unwrap();
    expect_input_error(&dir, "rank 0 is missing");
}

#[test]
fn other_calls_are_refused_by_name_unless_computation() {
    let mut t = traces(1);
    t[0].call(
        R {
            call: OTHER,
            aux: 0,
            ..R::default()
        },
        500,
    );
    let dir = write_trace("other", &t);
    expect_input_error(&dir, "cannot follow: MPI_Put (1x)");
    assert_eq!(commchar_sim::workload::replay::other_name(1), "MPI_Get");
    let opts = Options {
        other_as_compute: true,
        ..Options::default()
    };
    let o = replay(&dir, &opts, params(0, Rendezvous::Handshake)).unwrap();
    assert_eq!(o.finish[0], 500 * NS);
}

/// The simulator's generated collective and the same messages traced.
fn generated(spec: &str, p: u32, n: u64, params: Params) -> u64 {
    common::run_with(spec, p, n, params, "full", false).makespan()
}

#[test]
fn traced_binomial_bcast_matches_the_generated_schedule() {
    // MPICH's binomial broadcast from root 0, written out as Send/Recv calls
    let p = 8;
    let n = 100_000;
    let mut t = traces(p);
    for r in 0..p {
        let tr = &mut t[r as usize];
        let mut mask = 1;
        while mask < p {
            if r & mask != 0 {
                tr.recv(r - mask, n, 0);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if r + mask < p {
                tr.send(SEND, r + mask, n, 0);
            }
            mask >>= 1;
        }
    }
    let dir = write_trace("bcast-p2p", &t);
    for prm in [
        params(u64::MAX, Rendezvous::Match),
        params(4096, Rendezvous::Handshake),
    ] {
        let o = replay(&dir, &Options::default(), prm.clone()).unwrap();
        assert_eq!(o.makespan(), generated("bcast:binomial", p as u32, n, prm));
    }
}

#[test]
fn traced_recursive_doubling_allreduce_matches_the_generated_schedule() {
    let p = 8;
    let n = 4096;
    let mut t = traces(p);
    for r in 0..p {
        let mut mask = 1;
        while mask < p {
            let peer = r ^ mask;
            let sr = R {
                call: SENDRECV,
                peer,
                tag: 0,
                bytes: n,
                bytes2: n,
                aux: peer,
                aux2: 0,
                ..R::default()
            };
            t[r as usize].call(sr, 0);
            mask <<= 1;
        }
    }
    let dir = write_trace("allreduce-p2p", &t);
    for prm in [
        params(u64::MAX, Rendezvous::Match),
        params(1024, Rendezvous::Handshake),
    ] {
        let o = replay(&dir, &Options::default(), prm.clone()).unwrap();
        assert_eq!(
            o.makespan(),
            generated("allreduce:recursive_doubling", p as u32, n, prm)
        );
    }
}

#[test]
fn expanded_collective_records_match_the_generated_schedule() {
    for (call, spec, n) in [
        (BCAST, "bcast:binomial", 100_000u64),
        (ALLREDUCE, "allreduce:recursive_doubling", 4096),
        (BARRIER, "barrier", 0),
    ] {
        let p = 8;
        let mut t = traces(p);
        for tr in &mut t {
            tr.call(
                R {
                    call,
                    peer: 0,
                    bytes: n,
                    bytes2: n,
                    ..R::default()
                },
                0,
            );
        }
        let dir = write_trace(&format!("expanded-{call}"), &t);
        for prm in [
            params(u64::MAX, Rendezvous::Match),
            params(4096, Rendezvous::Handshake),
        ] {
            let prm = Params {
                gamma: 2 * NS,
                ..prm
            };
            let opts = Options {
                gamma: prm.gamma,
                ..Options::default()
            };
            let o = replay(&dir, &opts, prm.clone()).unwrap();
            assert_eq!(o.makespan(), generated(spec, p as u32, n, prm), "{spec}");
        }
    }
}

#[test]
fn rooted_collectives_rotate_to_their_root() {
    // a bcast from root 3 takes as long as one from root 0
    let p = 5;
    let mut t = traces(p);
    for tr in &mut t {
        tr.call(
            R {
                call: BCAST,
                peer: 3,
                bytes: 1000,
                bytes2: 1000,
                ..R::default()
            },
            0,
        );
    }
    let dir = write_trace("root3", &t);
    let prm = params(u64::MAX, Rendezvous::Match);
    let o = replay(&dir, &Options::default(), prm.clone()).unwrap();
    let gen = common::run_with("bcast:binomial", p as u32, 1000, prm, "full", false);
    for v in 0..p as usize {
        assert_eq!(
            o.finish[(v + 3) % p as usize],
            gen.finish[v],
            "virtual rank {v}"
        );
    }
}

#[test]
fn emitted_goal_replays_to_the_same_makespan() {
    let mut t = traces(2);
    let isend = R {
        call: ISEND,
        peer: 1,
        tag: 5,
        bytes: 100_000,
        req: 1,
        ..R::default()
    };
    t[0].compute(3000).call(isend, 0).compute(2000);
    t[0].call(
        R {
            call: WAITALL,
            aux: 1,
            ..R::default()
        },
        0,
    )
    .call(
        R {
            call: COMPLETE,
            req: 1,
            ..R::default()
        },
        0,
    );
    t[0].call(
        R {
            call: ALLREDUCE,
            bytes: 64,
            bytes2: 64,
            ..R::default()
        },
        0,
    );
    t[1].compute(1000).recv(0, 100_000, 5).compute(500);
    t[1].call(
        R {
            call: ALLREDUCE,
            bytes: 64,
            bytes2: 64,
            ..R::default()
        },
        0,
    );
    let dir = write_trace("goal", &t);
    let r = Replay::load(&dir, &Options::default()).unwrap();
    let mut text = Vec::new();
    r.write_goal(1000, &mut text).unwrap();
    let mut g = commchar_sim::workload::goal::GoalGraph::parse(
        std::str::from_utf8(&text).unwrap(),
        "x",
        1000,
    )
    .unwrap();
    let prm = params(4096, Rendezvous::Handshake);
    let net = || Net::ideal(Network::new(topology::parse("full", 2).unwrap(), 0));
    let from_goal = engine::run(
        Config {
            params: prm.clone(),
            network: net(),
            trace_limit: None,
        },
        &mut g,
    )
    .unwrap();
    let replayed = replay(&dir, &Options::default(), prm).unwrap();
    assert_eq!(from_goal.makespan(), replayed.makespan());
}

/// Ranks 0 and 1 exchange `n` bytes with one MPI_Sendrecv (or `call`) each, at once.
fn simultaneous_exchange(n: u64) -> TraceDir {
    exchange_with(SENDRECV, n)
}

/// One `call` (MPI_Sendrecv or MPI_Sendrecv_replace) of n bytes with `peer`, tag 3.
fn exchange_record(call: u16, peer: i32, n: u64) -> R {
    R {
        call,
        peer,
        tag: 3,
        bytes: n,
        bytes2: n,
        aux: peer,
        aux2: 3,
        ..R::default()
    }
}

fn exchange_with(call: u16, n: u64) -> TraceDir {
    let mut t = traces(2);
    for r in 0..2 {
        t[r as usize].call(exchange_record(call, 1 - r, n), 0);
    }
    write_trace(&format!("exchange-{call}-{n}"), &t)
}

#[test]
fn a_single_copy_exchange_ends_when_each_pull_is_acknowledged() {
    // each rank: o_s for its request to send, which reaches the other at o_s + L; there
    // o_r and the pull of 9999 bytes at max(O, G) = 6 ns; the ack is back L later
    let dir = simultaneous_exchange(10_000);
    let pulled = Params {
        big_o: 2 * NS,
        rendezvous_copy: RendezvousCopy::Receiver,
        ..params(0, Rendezvous::Handshake)
    };
    let o = replay(&dir, &Options::default(), pulled.clone()).unwrap();
    check_sums(&o);
    let exchange = (1500 + 2500 + 1500 + 9999 * 6 + 2500) * NS;
    assert_eq!(o.finish, vec![exchange, exchange]);
    // at the match (LogGOPSim's rule) the ack's L is not waited for
    let at_match = Params {
        rendezvous: Rendezvous::Match,
        ..pulled.clone()
    };
    let o = replay(&dir, &Options::default(), at_match).unwrap();
    assert_eq!(o.finish, vec![exchange - 2500 * NS; 2]);
    // eager (LogGP): each sender copies first (o_s + 9999 O), so the other's message
    // waits for that CPU, then o_r + 9999 max(O, G)
    let eager = Params {
        eager_max: u64::MAX,
        ..pulled
    };
    let o = replay(&dir, &Options::default(), eager).unwrap();
    let both_copy = (1500 + 9999 * 2 + 1500 + 9999 * 6) * NS;
    assert_eq!(o.finish, vec![both_copy, both_copy]);
}

/// One size regime from 0 with o_s = o_r = 1.5 us, G = 6, O = 5 ns/B and the receiver's
/// own copy O_r (None: LogGOPSim's rule), every message eager.
fn receiving(o_r: Option<u64>) -> Params {
    let mut p = params(u64::MAX, Rendezvous::Handshake);
    p.regimes = vec![commchar_sim::params::Regime {
        start: 0,
        cost: commchar_sim::params::MsgCost {
            o_s: 1500 * NS,
            o_r: 1500 * NS,
            big_g: 6 * NS,
            big_o: 5 * NS,
            big_o_r: o_r.map(|v| v * NS),
            l: None,
        },
    }];
    p
}

#[test]
fn an_exchanges_receiver_copies_only_the_bytes_already_there() {
    let s1 = 9999;
    // LogGOPSim: each rank copies its own message (o_s + s1 O), then takes in the other's,
    // which came while it copied, at o_r + s1 max(O, G)
    let dir = simultaneous_exchange(s1 + 1);
    let o = replay(&dir, &Options::default(), receiving(None)).unwrap();
    assert_eq!(o.finish, vec![(1500 + s1 * 5 + 1500 + s1 * 6) * NS; 2]);
    // with O_r = 3: the other's bytes are there by then, so o_r + s1 O_r
    let o = replay(&dir, &Options::default(), receiving(Some(3))).unwrap();
    check_sums(&o);
    assert_eq!(o.finish, vec![(1500 + s1 * 5 + 1500 + s1 * 3) * NS; 2]);
    // O_r can not make the stream faster than G: with O_r = 0 the other's message, taken
    // in s1 max(O, G) after its first byte, comes after the own copy ends
    let o = replay(&dir, &Options::default(), receiving(Some(0))).unwrap();
    assert_eq!(o.finish, vec![(1500 + s1 * 6 + 2500 + 1500) * NS; 2]);
    // a ping-pong's receiver waits for the first byte: its time is LogGOPSim's either way
    let one_way = (1500 + 2500 + 1500 + s1 * 6) * NS;
    for o_r in [None, Some(0), Some(3), Some(9)] {
        let o = replay(
            &placed_pingpong(s1 + 1, None),
            &Options::default(),
            receiving(o_r),
        )
        .unwrap();
        let expect = match o_r {
            Some(9) => 2 * (1500 + 2500 + 1500 + s1 * 9) * NS, // the receiver's copy outlasts G
            _ => 2 * one_way,
        };
        assert_eq!(o.finish[0], expect, "O_r {o_r:?}");
    }
    // a rendezvous message is pulled as before: O_r is an eager message's
    let mut rendezvous = receiving(Some(3));
    rendezvous.eager_max = 0;
    let mut plain = receiving(None);
    plain.eager_max = 0;
    assert_eq!(
        replay(&dir, &Options::default(), rendezvous)
            .unwrap()
            .finish,
        replay(&dir, &Options::default(), plain).unwrap().finish
    );
}

/// Rank 1 exchanges 1000 bytes with MPI_Sendrecv at once; rank 0 computes 1 us, marks a
/// phase, computes 10 us more, then makes its MPI_Sendrecv: rank 1's message reaches it
/// while it computes, sent before its last computation began.
fn exchange_with_a_computing_peer() -> TraceDir {
    let mut t = traces(2);
    let exchange = |peer: i32| exchange_record(SENDRECV, peer, 1000);
    let mark = R {
        call: PCONTROL,
        aux: 1,
        ..R::default()
    };
    t[0].compute(1000)
        .call(mark, 0)
        .compute(10_000)
        .call(exchange(1), 0);
    t[1].call(exchange(0), 0);
    write_trace("exchange-computing-peer", &t)
}

#[test]
fn a_message_reaching_a_computing_rank_is_taken_in_after_its_next_calls_sends() {
    let dir = exchange_with_a_computing_peer();
    let copying = Params {
        big_o: 2 * NS,
        ..params(u64::MAX, Rendezvous::Handshake)
    };
    // rank 1 copies its message (o_s + 999 O = 3.498 us); it reaches rank 0 at
    // o_s + L = 4 us, while rank 0 computes until 11 us
    let (send, take_in) = (1500 + 999 * 2, 1500 + 999 * 6);
    // taken in at the next call, after that call's send: rank 0 sends at 11 us, its
    // message reaches rank 1 at 11 + o_s + L = 15 us; rank 0 takes rank 1's in after
    // its own copy
    let in_calls = Params {
        taken_in_calls: true,
        ..copying.clone()
    };
    let o = replay(&dir, &Options::default(), in_calls).unwrap();
    check_sums(&o);
    assert_eq!(o.finish[0], (11_000 + send + take_in) * NS);
    assert_eq!(o.finish[1], (15_000 + take_in) * NS);
    // LogGOPSim's rule: taken in as soon as the CPU is free, before the send that
    // became due after the message was sent, so rank 1 waits for that too
    let o = replay(&dir, &Options::default(), copying).unwrap();
    check_sums(&o);
    assert_eq!(o.finish[0], (11_000 + take_in + send) * NS);
    assert_eq!(o.finish[1], (11_000 + take_in + 1500 + 2500 + take_in) * NS);
}

#[test]
fn a_pulled_message_is_copied_when_its_late_receive_is_posted() {
    let dir = late_receiver(SEND);
    let pulled = Params {
        rendezvous_copy: RendezvousCopy::Receiver,
        ..params(0, Rendezvous::Handshake)
    };
    let o = replay(&dir, &Options::default(), pulled).unwrap();
    check_sums(&o);
    // the request arrives at 4 us while rank 1 computes: handled at 10 us (o_r), then
    // the receive is posted and the 999 bytes pulled (999 G); the ack L later
    let pulled_at = (10_000 + 1500 + 999 * 6) * NS;
    assert_eq!(o.finish[1], pulled_at);
    assert_eq!(o.finish[0], pulled_at + 2500 * NS);
}

#[test]
fn sendrecv_replace_copies_through_a_temporary_buffer() {
    let pulled = Params {
        big_o: 2 * NS,
        rendezvous_copy: RendezvousCopy::Receiver,
        ..params(0, Rendezvous::Handshake)
    };
    let exchange = (1500 + 2500 + 1500 + 9999 * 6 + 2500) * NS;
    let opts = Options {
        local_copy: LocalCopy::from_params(&pulled),
        ..Options::default()
    };
    let o = replay(
        &exchange_with(SENDRECV_REPLACE, 10_000),
        &opts,
        pulled.clone(),
    )
    .unwrap();
    check_sums(&o);
    // the 10000 bytes copied at O = 2 ns/B, then the exchange as with MPI_Sendrecv
    assert_eq!(o.finish, vec![10_000 * 2 * NS + exchange; 2]);
    let plain = replay(&exchange_with(SENDRECV, 10_000), &opts, pulled).unwrap();
    assert_eq!(plain.finish, vec![exchange; 2]);
    // by size: the regime's O
    let mut by_size = Params {
        big_o: 2 * NS,
        ..params(0, Rendezvous::Handshake)
    };
    let regime = |start, big_o| commchar_sim::params::Regime {
        start,
        cost: commchar_sim::params::MsgCost {
            o_s: 1500 * NS,
            o_r: 1500 * NS,
            big_g: 6 * NS,
            big_o,
            big_o_r: None,
            l: None,
        },
    };
    by_size.regimes = vec![regime(0, 0), regime(4096, 3 * NS)];
    let copy = LocalCopy::from_params(&by_size);
    assert_eq!((copy.cost(4095), copy.cost(4096)), (0, 4096 * 3 * NS));
    assert_eq!(LocalCopy::default().cost(1 << 20), 0);
}

#[test]
fn sendrecv_replace_pays_the_measured_copy_when_the_model_has_one() {
    let pulled = Params {
        big_o: 2 * NS,
        rendezvous_copy: RendezvousCopy::Receiver,
        ..params(0, Rendezvous::Handshake)
    };
    let exchange = (1500 + 2500 + 1500 + 11_999 * 6 + 2500) * NS;
    // measured: 5 ps a byte from 4 KiB, 1 ps below (fs per byte); the model's O is ignored
    let opts = Options {
        local_copy: LocalCopy::from_params(&pulled),
        replace_copy: ByteSteps {
            fs_per_byte: 0,
            steps: vec![(64, 1000), (4096, 5000)],
        },
        ..Options::default()
    };
    let o = replay(
        &exchange_with(SENDRECV_REPLACE, 12_000),
        &opts,
        pulled.clone(),
    )
    .unwrap();
    check_sums(&o);
    assert_eq!(o.finish, vec![12_000 * 5 + exchange; 2]);
    // 1000 bytes: the step of 64 B, 1 ps a byte, before the same exchange as MPI_Sendrecv's
    let small = replay(
        &exchange_with(SENDRECV_REPLACE, 1000),
        &opts,
        pulled.clone(),
    )
    .unwrap();
    let plain = replay(&exchange_with(SENDRECV, 1000), &opts, pulled).unwrap();
    assert_eq!(small.finish, vec![plain.finish[0] + 1000; 2]);
}

#[test]
fn a_sendrecv_both_ways_pays_the_measured_exchange_excess_of_its_size() {
    // measured: 40 ns beyond the model at 1000 B, nothing at 4 KiB; nothing above
    let opts = Options {
        exchange_excess: ExchangeExcess::from_steps(vec![(1000, 40 * NS), (4096, 0)], vec![]),
        ..Options::default()
    };
    let prm = params(u64::MAX, Rendezvous::Handshake);
    for call in [SENDRECV, SENDRECV_REPLACE] {
        let plain = replay(&exchange_with(call, 1000), &Options::default(), prm.clone()).unwrap();
        let o = replay(&exchange_with(call, 1000), &opts, prm.clone()).unwrap();
        check_sums(&o);
        // after the exchange, on each rank, as the library's time (communication)
        assert_eq!(o.finish, vec![plain.finish[0] + 40 * NS; 2]);
        for r in 0..2 {
            let with = o.breakdown.as_ref().unwrap()[r];
            let without = plain.breakdown.as_ref().unwrap()[r];
            assert_eq!(with.comm, without.comm + 40 * NS);
            assert_eq!(with.compute, without.compute);
        }
        let big = replay(&exchange_with(call, 12_000), &opts, prm.clone()).unwrap();
        let big_plain = replay(
            &exchange_with(call, 12_000),
            &Options::default(),
            prm.clone(),
        )
        .unwrap();
        assert_eq!(big.finish, big_plain.finish);
    }
}

/// `iters` MPI_Sendrecv of 256 B between ranks 0 and 1, both buffers at the start of
/// their pages, `gap_ns` of computation between calls.
fn exchange_loop(iters: u64, gap_ns: u64) -> TraceDir {
    let mut t = traces(2);
    for _ in 0..iters {
        for r in 0..2 {
            let call = R {
                bytes: placed(256, 0),
                bytes2: placed(256, 0),
                ..exchange_record(SENDRECV, 1 - r, 256)
            };
            t[r as usize].call(call, 300).compute(gap_ns);
        }
    }
    write_trace(&format!("exchange-loop-{iters}-{gap_ns}"), &t)
}

#[test]
fn a_message_that_comes_while_the_library_closes_a_call_waits_for_the_next_call() {
    // as Open MPI's Sendrecv of 256 B here: o_s 160, o_r 300, L 130 ns, 80 ns of the
    // call's own excess once its message is in, 65 ns of program between calls
    let prm = Params {
        l: 130 * NS,
        o_s: 160 * NS,
        o_r: 300 * NS,
        g: 0,
        big_g: 0,
        taken_in_calls: true,
        ..params(u64::MAX, Rendezvous::Match)
    };
    // and the copy of a receive buffer that lies as its source does, which costs nothing:
    // the library's work of no length that follows lets no message in before the next call
    let opts = Options {
        exchange_excess: ExchangeExcess::from_steps(vec![(256, 80 * NS)], vec![]),
        ..misaligned_from(256)
    };
    let dir = exchange_loop(4000, 65);
    let quiet = replay(&dir, &opts, prm.clone()).unwrap().makespan();
    // a thousand detours of 1 us a second on each rank: 0.1% of its time; each holds
    // both ranks up once, and the loop falls back into step after it
    for seed in 1..=3 {
        let noisy = Params {
            noise: Some(Noise::from_rows(vec![(1, vec![(1000.0, 1.0)])], seed)),
            ..prm.clone()
        };
        let o = replay(&dir, &opts, noisy).unwrap();
        check_sums(&o);
        let slower = o.makespan() as f64 / quiet as f64 - 1.0;
        assert!(
            (0.0..0.01).contains(&slower),
            "seed {seed}: {slower:.4} slower ({quiet} ps quiet)"
        );
    }
}

/// 40 ns beyond X(n) at 1000 B eager; 300 ns beyond the rendezvous rule at 12 000 B.
fn exchange_excesses() -> Options {
    Options {
        exchange_excess: ExchangeExcess::from_steps(
            vec![(1000, 40 * NS)],
            vec![(12_000, 300 * NS)],
        ),
        ..Options::default()
    }
}

#[test]
fn a_rendezvous_exchange_pays_its_own_excess_and_an_eager_one_the_eager_steps() {
    let opts = exchange_excesses();
    for (eager_max, paid) in [(0, 300 * NS), (u64::MAX, 0)] {
        let prm = params(eager_max, Rendezvous::Handshake);
        for call in [SENDRECV, SENDRECV_REPLACE] {
            let plain = replay(
                &exchange_with(call, 12_000),
                &Options::default(),
                prm.clone(),
            )
            .unwrap();
            let o = replay(&exchange_with(call, 12_000), &opts, prm.clone()).unwrap();
            check_sums(&o);
            // a rendezvous exchange (S = 0) pays the rendezvous step; sent eagerly (LogGP)
            // it pays none: the eager steps end at 1000 B
            assert_eq!(o.finish, vec![plain.finish[0] + paid; 2]);
        }
    }
}

/// Each rank: Irecv `n` bytes from the other, Isend `n` bytes to it, Waitall.
fn nonblocking_exchange(n: u64) -> TraceDir {
    nonblocking_burst(n, 1)
}

/// Each rank: `k` Irecvs of `n` bytes from the other, `k` Isends of `n` bytes to it, one
/// Waitall of all of them (a halo's left and right neighbours at p = 2 are `k` = 2).
fn nonblocking_burst(n: u64, k: u32) -> TraceDir {
    let mut t = traces(2);
    for r in 0..2i32 {
        let other = 1 - r;
        let rank = &mut t[r as usize];
        for m in 0..k {
            rank.call(
                R {
                    call: IRECV,
                    peer: other,
                    tag: 4 + m as i32,
                    bytes2: n,
                    req: 1 + 2 * m as u64,
                    ..R::default()
                },
                0,
            );
        }
        for m in 0..k {
            rank.call(
                R {
                    call: ISEND,
                    peer: other,
                    tag: 4 + m as i32,
                    bytes: n,
                    req: 2 + 2 * m as u64,
                    ..R::default()
                },
                0,
            );
        }
        rank.call(
            R {
                call: WAITALL,
                aux: 2 * k as i32,
                ..R::default()
            },
            0,
        );
        for m in 0..k {
            rank.call(
                R {
                    call: COMPLETE,
                    req: 1 + 2 * m as u64,
                    aux: other,
                    aux2: 4 + m as i32,
                    ..R::default()
                },
                0,
            )
            .call(
                R {
                    call: COMPLETE,
                    req: 2 + 2 * m as u64,
                    ..R::default()
                },
                0,
            );
        }
    }
    write_trace(&format!("nonblocking-burst-{n}-{k}"), &t)
}

/// What each rank's finish gains when `trace` is replayed under `opts` instead of the
/// default options, the engine's parameters `prm` alike (the replay's sums checked).
fn paid(trace: &TraceDir, opts: &Options, prm: &Params) -> Vec<u64> {
    let plain = replay(trace, &Options::default(), prm.clone()).unwrap();
    let o = replay(trace, opts, prm.clone()).unwrap();
    check_sums(&o);
    o.finish
        .iter()
        .zip(&plain.finish)
        .map(|(a, b)| a - b)
        .collect()
}

#[test]
fn a_waitall_completing_a_receive_from_a_rank_and_a_send_to_it_pays_the_rendezvous_excess() {
    let opts = exchange_excesses();
    let rendezvous = params(0, Rendezvous::Handshake);
    assert_eq!(
        paid(&nonblocking_exchange(12_000), &opts, &rendezvous),
        vec![300 * NS; 2]
    );
    // an eager exchange by Isend and Irecv pays nothing: the eager excess is the Sendrecv's
    let eager = params(u64::MAX, Rendezvous::Handshake);
    assert_eq!(paid(&nonblocking_exchange(1000), &opts, &eager), vec![0; 2]);
}

#[test]
fn a_burst_of_exchanges_pays_the_measured_burst_once_not_once_a_pair() {
    let rendezvous = params(0, Rendezvous::Handshake);
    // no burst measured: each of the two pairs pays a single exchange's excess
    let single = exchange_excesses();
    assert_eq!(
        paid(&nonblocking_burst(12_000, 2), &single, &rendezvous),
        vec![2 * 300 * NS; 2]
    );
    // measured: the two pairs share the burst's 360 ns, and a single exchange still pays
    // its own
    let burst = Options {
        exchange_excess: single
            .exchange_excess
            .clone()
            .with_burst(vec![(12_000, 360 * NS)], vec![(1000, 50 * NS)]),
        ..Options::default()
    };
    assert_eq!(
        paid(&nonblocking_burst(12_000, 2), &burst, &rendezvous),
        vec![360 * NS; 2]
    );
    assert_eq!(
        paid(&nonblocking_exchange(12_000), &burst, &rendezvous),
        vec![300 * NS; 2]
    );
    // an eager burst shares the eager burst's 50 ns; an eager single pair pays nothing
    let eager = params(u64::MAX, Rendezvous::Handshake);
    for (k, expected) in [(2, 50 * NS), (1, 0)] {
        assert_eq!(
            paid(&nonblocking_burst(1000, k), &burst, &eager),
            vec![expected; 2],
            "{k} pair(s)"
        );
    }
}

/// A size field holding where its buffer lay in its page (tracer/cc_trace_format.h).
fn placed(bytes: u64, place: u16) -> u64 {
    bytes | (u64::from(0x8000 | place) << 48)
}

/// 1 ps a byte from 4 KiB, for a destination 1 to 31 bytes ahead of its source.
fn misaligned() -> Options {
    misaligned_from(4096)
}

/// 1 ps a byte from `bytes`, for a destination 1 to 31 bytes ahead of its source.
fn misaligned_from(bytes: u64) -> Options {
    Options {
        misaligned_copy: MisalignedCopy {
            steps: ByteSteps {
                fs_per_byte: 0,
                steps: vec![(bytes, 1000)],
            },
            own: None,
            slow_ahead: (1, 31),
            line_bytes: None,
        },
        ..Options::default()
    }
}

/// A ping-pong of `n` bytes, blocking, each send buffer at `from` in its page, each
/// receive buffer at `to` (None: the version-1 trace, no places).
fn placed_pingpong(n: u64, places: Option<(u16, u16)>) -> TraceDir {
    let (send, recv) = match places {
        Some((from, to)) => (placed(n, from), placed(n, to)),
        None => (n, n),
    };
    pingpong_fields(send, recv, 1, &format!("placed-{n}-{places:?}"))
}

/// `rounds` round trips of blocking sends whose records carry the size fields `send` and
/// `recv` as given.
fn pingpong_fields(send: u64, recv: u64, rounds: usize, name: &str) -> TraceDir {
    let mut t = traces(2);
    for r in 0..2 {
        for _ in 0..rounds {
            let s = R {
                call: SEND,
                peer: 1 - r,
                tag: 5,
                bytes: send,
                ..R::default()
            };
            let v = R {
                call: RECV,
                peer: 1 - r,
                tag: 5,
                bytes2: recv,
                aux: 1 - r,
                aux2: 5,
                ..R::default()
            };
            if r == 0 {
                t[0].call(s, 0).call(v, 0);
            } else {
                t[1].call(v, 0).call(s, 0);
            }
        }
    }
    write_trace(name, &t)
}

#[test]
fn a_message_landing_ahead_of_its_source_in_the_page_pays_the_misaligned_copy() {
    let eager = params(u64::MAX, Rendezvous::Handshake);
    let opts = misaligned();
    let plain = replay(&placed_pingpong(32768, None), &opts, eager.clone()).unwrap();
    // 16 bytes ahead: each receive pays 32768 ps after it; rank 0 waits for both
    let slow = replay(
        &placed_pingpong(32768, Some((16, 32))),
        &opts,
        eager.clone(),
    )
    .unwrap();
    check_sums(&slow);
    assert_eq!(slow.finish[0], plain.finish[0] + 2 * 32768);
    assert_eq!(slow.finish[1], plain.finish[1] + 32768);
    // the copy is the library's: communication, not computation
    let b = slow.breakdown.as_ref().unwrap()[1];
    assert_eq!(b.compute, plain.breakdown.as_ref().unwrap()[1].compute);
    // 32 ahead, behind, aligned, and below the model's smallest size: as a plain trace
    for (n, from, to) in [
        (32768, 16, 48),
        (32768, 32, 16),
        (32768, 16, 16),
        (2048, 16, 32),
    ] {
        let base = replay(&placed_pingpong(n, None), &opts, eager.clone()).unwrap();
        let o = replay(&placed_pingpong(n, Some((from, to))), &opts, eager.clone()).unwrap();
        assert_eq!(o.finish, base.finish, "{n} B from {from} to {to}");
    }
    // without the model's entry nothing is charged
    let o = replay(
        &placed_pingpong(32768, Some((16, 32))),
        &Options::default(),
        eager,
    )
    .unwrap();
    assert_eq!(o.finish, plain.finish);
}

#[test]
fn exchanges_and_waited_receives_pay_the_misaligned_copy_too() {
    let eager = params(u64::MAX, Rendezvous::Handshake);
    let opts = misaligned();
    // MPI_Sendrecv: each rank receives 16 bytes ahead of the other's send buffer
    let exchange = |places: bool| {
        let mut t = traces(2);
        for r in 0..2 {
            let (b, b2) = if places {
                (placed(8192, 100), placed(8192, 116))
            } else {
                (8192, 8192)
            };
            let sr = R {
                call: SENDRECV,
                peer: 1 - r,
                tag: 3,
                bytes: b,
                bytes2: b2,
                aux: 1 - r,
                aux2: 3,
                ..R::default()
            };
            t[r as usize].call(sr, 0);
        }
        write_trace(&format!("placed-exchange-{places}"), &t)
    };
    let plain = replay(&exchange(false), &opts, eager.clone()).unwrap();
    let slow = replay(&exchange(true), &opts, eager.clone()).unwrap();
    check_sums(&slow);
    assert_eq!(slow.finish, vec![plain.finish[0] + 8192; 2]);
    // Isend, and a wildcard Irecv completed by MPI_Waitall: charged after the wait
    let nonblocking = |places: bool| {
        let mut t = traces(2);
        let (b, b2) = if places {
            (placed(8192, 4090), placed(8192, 4))
        } else {
            (8192, 8192)
        };
        let isend = R {
            call: ISEND,
            peer: 1,
            tag: 1,
            bytes: b,
            req: 11,
            ..R::default()
        };
        let waitall = R {
            call: WAITALL,
            aux: 1,
            ..R::default()
        };
        t[0].call(isend, 0).call(waitall, 0).call(
            R {
                call: COMPLETE,
                req: 11,
                ..R::default()
            },
            0,
        );
        let irecv = R {
            call: IRECV,
            peer: -2,
            tag: -1,
            bytes2: b2,
            req: 21,
            ..R::default()
        };
        t[1].call(irecv, 0).call(waitall, 0).call(
            R {
                call: COMPLETE,
                req: 21,
                aux: 0,
                aux2: 1,
                ..R::default()
            },
            0,
        );
        write_trace(&format!("placed-nonblocking-{places}"), &t)
    };
    let plain = replay(&nonblocking(false), &opts, eager.clone()).unwrap();
    let slow = replay(&nonblocking(true), &opts, eager).unwrap();
    check_sums(&slow);
    // 10 bytes ahead across the page's end
    assert_eq!(slow.finish[0], plain.finish[0]);
    assert_eq!(slow.finish[1], plain.finish[1] + 8192);
}

/// The tracer's own times in every rank's header: (offset, ps) of record_gap_ps (52),
/// complete_gap_ps (184), collective_gap_ps (188).
fn with_tracer_times(dir: TraceDir, ranks: usize, fields: &[(usize, u32)]) -> TraceDir {
    for r in 0..ranks {
        let path = dir.0.join(format!("rank-{r}.cctrace"));
        let mut bytes = std::fs::read(&path).unwrap();
        for &(at, ps) in fields {
            bytes[at..at + 4].copy_from_slice(&ps.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
    }
    dir
}

/// Rank 0's computation in the replay of `dir` (2 ranks, all eager).
fn rank0_compute(dir: &TraceDir) -> u64 {
    let o = replay(
        dir,
        &Options::default(),
        params(u64::MAX, Rendezvous::Handshake),
    )
    .unwrap();
    check_sums(&o);
    o.breakdown.as_ref().unwrap()[0].compute
}

/// Rank 0 computes `gap` ns between two sends to rank 1; the tracer's header says each
/// wrapper spends `own` ps outside its span.
fn two_sends_apart(gap: u64, own: u32) -> TraceDir {
    let mut t = traces(2);
    t[0].send(SEND, 1, 8, 1).compute(gap).send(SEND, 1, 8, 1);
    t[1].recv(0, 8, 1).recv(0, 8, 1);
    with_tracer_times(
        write_trace(&format!("tracer-gap-{gap}-{own}"), &t),
        2,
        &[(52, own)],
    )
}

/// Rank 0: an Isend and its Waitall (one COMPLETE record), `gap` ns, then a Send; the
/// headers say the tracer takes `own` ps a wrapper and `complete` ps a COMPLETE record.
fn isend_wait_then_apart(gap: u64, own: u32, complete: u32) -> TraceDir {
    let mut t = traces(2);
    let isend = R {
        call: ISEND,
        peer: 1,
        tag: 1,
        bytes: 8,
        req: 7,
        ..R::default()
    };
    let waitall = R {
        call: WAITALL,
        aux: 1,
        ..R::default()
    };
    let complete_rec = R {
        call: COMPLETE,
        req: 7,
        ..R::default()
    };
    t[0].call(isend, 0).call(waitall, 0).call(complete_rec, 0);
    t[0].compute(gap).send(SEND, 1, 8, 1);
    t[1].recv(0, 8, 1).recv(0, 8, 1);
    let dir = write_trace(&format!("tracer-complete-{gap}-{own}-{complete}"), &t);
    with_tracer_times(dir, 2, &[(52, own), (184, complete)])
}

/// Both ranks: a Barrier, `gap` ns, a Barrier; the headers say the tracer takes `own` ps a
/// wrapper and `coll` ps a blocking collective's.
fn barriers_apart(gap: u64, own: u32, coll: u32) -> TraceDir {
    let mut t = traces(2);
    let barrier = R {
        call: BARRIER,
        ..R::default()
    };
    for tr in &mut t {
        tr.call(barrier, 0).compute(gap).call(barrier, 0);
    }
    let dir = write_trace(&format!("tracer-coll-{gap}-{own}-{coll}"), &t);
    with_tracer_times(dir, 2, &[(52, own), (188, coll)])
}

#[test]
fn the_tracers_own_time_is_not_computation() {
    // 1000 ns between the sends, 300 ns of it the tracer's: 700 ns of computation
    assert_eq!(rank0_compute(&two_sends_apart(1000, 0)), 1000 * NS);
    assert_eq!(rank0_compute(&two_sends_apart(1000, 300_000)), 700 * NS);
    // a gap shorter than the tracer's time is no computation, and never negative
    assert_eq!(rank0_compute(&two_sends_apart(200, 300_000)), 0);
}

#[test]
fn the_tracers_completion_records_are_not_computation() {
    // 1000 ns after the Waitall: its wrapper's 100 ns and its COMPLETE record's 50 ns are
    // the tracer's (the Isend's 100 ns lie in the gap before the Waitall, of no length)
    assert_eq!(rank0_compute(&isend_wait_then_apart(1000, 0, 0)), 1000 * NS);
    assert_eq!(
        rank0_compute(&isend_wait_then_apart(1000, 100_000, 0)),
        900 * NS
    );
    assert_eq!(
        rank0_compute(&isend_wait_then_apart(1000, 100_000, 50_000)),
        850 * NS
    );
    // a trace of a tracer that measured no completion cost (0) charges none
    assert_eq!(
        rank0_compute(&isend_wait_then_apart(1000, 0, 50_000)),
        950 * NS
    );
}

#[test]
fn a_collective_wrappers_own_time_is_its_own() {
    // the gap after the first barrier is its wrapper's: 100 ns a wrapper, 300 a collective's
    assert_eq!(rank0_compute(&barriers_apart(1000, 100_000, 0)), 900 * NS);
    assert_eq!(
        rank0_compute(&barriers_apart(1000, 100_000, 300_000)),
        700 * NS
    );
}

#[test]
fn an_alltoall_pays_for_each_block_that_lands_ahead_of_where_its_sender_placed_it() {
    let eager = params(u64::MAX, Rendezvous::Handshake);
    let opts = misaligned();
    // MPI_Alltoall (or MPI_Allreduce) of `n` bytes a block, each rank's send and receive
    // buffers at the places given (None: MPI_IN_PLACE, no send buffer's place)
    let collective = |call: u16, n: u64, places: [Option<(u16, u16)>; 2]| {
        let mut t = traces(2);
        for (r, at) in places.into_iter().enumerate() {
            let (bytes, bytes2) = at.map_or((n, n), |(s, d)| (placed(n, s), placed(n, d)));
            t[r].call(
                R {
                    call,
                    bytes,
                    bytes2,
                    ..R::default()
                },
                0,
            );
        }
        write_trace(&format!("placed-{call}-{n}-{places:?}"), &t)
    };
    let charged = |dir: &Path| Replay::load(dir, &opts).unwrap().misaligned;
    let run = |call: u16, n: u64, places| {
        let dir = collective(call, n, places);
        let out = replay(&dir, &opts, eager.clone()).unwrap();
        check_sums(&out);
        (out.finish, charged(&dir))
    };
    let (plain, none) = run(ALLTOALL, 8192, [None, None]);
    assert_eq!(none, (0, 0));
    // both ranks' receive buffers 16 bytes ahead of their send buffers, as the kernel's
    // --recv-offset places them: each peer's block lands 16 ahead, 1 ps a byte
    let (both, paid) = run(ALLTOALL, 8192, [Some((16, 32)), Some((16, 32))]);
    assert_eq!(both, vec![plain[0] + 8192, plain[1] + 8192]);
    assert_eq!(paid, (2, 2 * 8192));
    // a program's: each rank's own receive buffer 16 ahead of its send buffer, but rank 1's
    // block lands 16 behind where it left, rank 0's 48 ahead: no copy is slow
    let (program, paid) = run(ALLTOALL, 8192, [Some((560, 576)), Some((592, 608))]);
    assert_eq!((program, paid), (plain.clone(), (0, 0)));
    // neither rank's own buffers lie ahead, but each peer's block lands 16 ahead
    let (crossed, _) = run(ALLTOALL, 8192, [Some((16, 64)), Some((48, 32))]);
    assert_eq!(crossed, vec![plain[0] + 8192, plain[1] + 8192]);
    // blocks of 8208 bytes: rank 1's block for rank 0 leaves from its first (at 200) and
    // lands in rank 0's second, 8208 bytes (16 modulo the page) into its buffer at 200
    let (plain_8208, _) = run(ALLTOALL, 8208, [None, None]);
    let (shifted, paid) = run(ALLTOALL, 8208, [Some((100, 200)), Some((200, 300))]);
    assert_eq!(shifted, vec![plain_8208[0] + 8208, plain_8208[1]]);
    assert_eq!(paid, (1, 8208));
    // without the model's entry: nothing
    let dir = collective(ALLTOALL, 8192, [Some((16, 32)), Some((16, 32))]);
    assert_eq!(
        Replay::load(&dir, &Options::default()).unwrap().misaligned,
        (0, 0)
    );
    // a reduction placed so pays nothing: what it receives lands in the library's buffer
    let (reduction, _) = run(ALLREDUCE, 8192, [None, None]);
    let (ahead, paid) = run(ALLREDUCE, 8192, [Some((16, 32)), Some((16, 32))]);
    assert_eq!((ahead, paid), (reduction, (0, 0)));
    // where the class is by the line (80 ahead as slow as 16), the program's 48 ahead is
    // slow: rank 1 pays for rank 0's block; rank 1's, 16 behind, stays fast
    let mut line = misaligned();
    line.misaligned_copy.slow_ahead = (1, 255);
    line.misaligned_copy.line_bytes = Some(64);
    let dir = collective(ALLTOALL, 8192, [Some((560, 576)), Some((592, 608))]);
    let out = replay(&dir, &line, eager.clone()).unwrap();
    check_sums(&out);
    assert_eq!(out.finish, vec![plain[0], plain[1] + 8192]);
    assert_eq!(Replay::load(&dir, &line).unwrap().misaligned, (1, 8192));
}

/// Every rank's header says its message buffers spanned `bytes` (buffer_bytes, offset 192).
fn with_buffer_bytes(dir: TraceDir, ranks: usize, bytes: u64) -> TraceDir {
    for r in 0..ranks {
        let path = dir.0.join(format!("rank-{r}.cctrace"));
        let mut raw = std::fs::read(&path).unwrap();
        raw[192..200].copy_from_slice(&bytes.to_le_bytes());
        std::fs::write(&path, raw).unwrap();
    }
    dir
}

/// Nothing below 512 KiB of buffers, 6 ps a received byte from 2 MiB; to oneself, 2 ps
/// (`with_self`) or the same.
fn footprint_with(with_self: bool) -> Options {
    let curve = |ps: f64| vec![(1 << 16, vec![(1 << 19, 0.0), (1 << 21, ps)])];
    Options {
        copy_footprint: CopyFootprint::from_sizes(
            curve(6.0),
            if with_self { curve(2.0) } else { Vec::new() },
        ),
        ..Options::default()
    }
}

fn footprint() -> Options {
    footprint_with(false)
}

#[test]
fn a_rank_whose_buffers_outgrow_the_caches_pays_each_received_byte_more() {
    let prm = params(0, Rendezvous::Handshake);
    let n = 100_000;
    let plain = replay(&exchange_with(SENDRECV, n), &footprint(), prm.clone()).unwrap();
    let spread = with_buffer_bytes(exchange_with(SENDRECV, n), 2, 1 << 21);
    let o = replay(&spread, &footprint(), prm.clone()).unwrap();
    check_sums(&o);
    // 6 ps x 100 000 B after the exchange, on each rank, as the library's time
    assert_eq!(o.finish, vec![plain.finish[0] + 600 * NS; 2]);
    for r in 0..2 {
        let (with, without) = (
            o.breakdown.as_ref().unwrap()[r],
            plain.breakdown.as_ref().unwrap()[r],
        );
        assert_eq!(with.comm, without.comm + 600 * NS);
        assert_eq!(with.compute, without.compute);
    }
    // buffers within the first step's, or a model without the key: nothing
    let small = with_buffer_bytes(exchange_with(SENDRECV, n), 2, 1 << 18);
    assert_eq!(
        replay(&small, &footprint(), prm.clone()).unwrap().finish,
        plain.finish
    );
    assert_eq!(
        replay(&spread, &Options::default(), prm).unwrap().finish,
        plain.finish
    );
}

#[test]
fn a_message_to_oneself_pays_the_self_paths_curve() {
    let prm = params(0, Rendezvous::Handshake);
    let n = 100_000;
    let to_self = || {
        let mut t = traces(2);
        for r in 0..2 {
            t[r as usize].call(exchange_record(SENDRECV, r, n), 0);
        }
        t
    };
    let plain = replay(
        &write_trace("footprint-self-plain", &to_self()),
        &footprint(),
        prm.clone(),
    )
    .unwrap();
    let spread = with_buffer_bytes(write_trace("footprint-self-spread", &to_self()), 2, 1 << 21);
    // 2 ps x 100 000 B with the self curve; the others' 6 ps in a model without one
    for (with_self, ns) in [(true, 200), (false, 600)] {
        let o = replay(&spread, &footprint_with(with_self), prm.clone()).unwrap();
        check_sums(&o);
        assert_eq!(o.finish, vec![plain.finish[0] + ns * NS; 2], "{with_self}");
    }
    // between ranks, the self curve changes nothing
    let between = with_buffer_bytes(exchange_with(SENDRECV, n), 2, 1 << 21);
    assert_eq!(
        replay(&between, &footprint_with(true), prm.clone())
            .unwrap()
            .finish,
        replay(&between, &footprint(), prm).unwrap().finish
    );
}

#[test]
fn a_non_blocking_receive_pays_it_after_the_wait_that_completed_it() {
    let prm = params(u64::MAX, Rendezvous::Handshake);
    let trace = |name: &str| {
        let mut t = traces(2);
        t[0].send(SEND, 1, 50_000, 1).send(SEND, 1, 50_000, 2);
        for (tag, req) in [(1, 21), (2, 22)] {
            t[1].call(
                R {
                    call: IRECV,
                    peer: 0,
                    tag,
                    bytes2: 50_000,
                    req,
                    ..R::default()
                },
                0,
            );
        }
        t[1].call(
            R {
                call: WAITALL,
                aux: 2,
                ..R::default()
            },
            0,
        );
        for (tag, req) in [(1, 21), (2, 22)] {
            t[1].call(
                R {
                    call: COMPLETE,
                    req,
                    aux: 0,
                    aux2: tag,
                    bytes2: 50_000,
                    ..R::default()
                },
                0,
            );
        }
        write_trace(name, &t)
    };
    let plain = replay(&trace("footprint-wait-plain"), &footprint(), prm.clone()).unwrap();
    let spread = with_buffer_bytes(trace("footprint-wait-spread"), 2, 1 << 21);
    let o = replay(&spread, &footprint(), prm).unwrap();
    check_sums(&o);
    // both receives, 2 x 50 000 B at 6 ps, after the Waitall on the receiver only
    assert_eq!(o.finish[1], plain.finish[1] + 600 * NS);
    assert_eq!(o.finish[0], plain.finish[0]);
    // counted for the replay's document: two messages, 600 ns in all
    assert_eq!(
        Replay::load(&spread, &footprint()).unwrap().footprint,
        (2, 600 * NS)
    );
}

/// A send field of `bytes` from a buffer 16 bytes into its page with WRITTEN code `code`.
fn written(bytes: u64, code: u16) -> u64 {
    bytes | (u64::from(0x8000 | (code << 12) | 16) << 48)
}

/// Two messages of 32 KiB each way whose send buffers had their ends written: a ping-pong
/// (Send/Recv), or two exchanges (Sendrecv).
fn written_messages(exchange: bool) -> TraceDir {
    let n = 32768;
    if !exchange {
        return pingpong_fields(written(n, 1), placed(n, 16), 2, "written-pingpong");
    }
    let mut t = traces(2);
    for r in 0..2i32 {
        for _ in 0..2 {
            let x = R {
                bytes: written(n, 1),
                bytes2: placed(n, 16),
                ..exchange_record(SENDRECV, 1 - r, n)
            };
            t[r as usize].call(x, 0);
        }
    }
    write_trace("written-exchange", &t)
}

#[test]
fn a_written_message_pays_the_single_excess_alone_and_the_exchanges_in_an_exchange() {
    let eager = params(u64::MAX, Rendezvous::Handshake);
    // the ends: 1 ps a byte at 32 KiB alone, 0.25 in an exchange
    let steps = |fs| ByteSteps {
        fs_per_byte: 0,
        steps: vec![(32768, fs)],
    };
    let with = |exchange_ends| Options {
        written_send: WrittenSend {
            ends: steps(1000),
            whole: ByteSteps::default(),
            exchange_ends,
        },
        ..Options::default()
    };
    for exchange in [false, true] {
        let dir = written_messages(exchange);
        let plain = replay(&dir, &Options::default(), eager.clone()).unwrap();
        // each rank receives two: one after the other on a ping-pong's path, side by side
        // in the exchanges
        let on_path = if exchange { 2 } else { 4 };
        for (exchange_ends, each) in [
            (steps(250), if exchange { 8192 } else { 32768 }),
            // without the exchange's probe an exchange's message pays as one alone
            (ByteSteps::default(), 32768),
        ] {
            let o = replay(&dir, &with(exchange_ends), eager.clone()).unwrap();
            check_sums(&o);
            assert_eq!(
                o.finish[0],
                plain.finish[0] + on_path * each,
                "exchange {exchange}, each {each}"
            );
        }
    }
}
