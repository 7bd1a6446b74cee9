//! Receives into never-touched memory: the replay charges each receiving rank the
//! model's first-touch cost (us per byte) times the cold bytes the tracer recorded
//! (flag bit 2; the u64 at offset 48, an Irecv's at offset 56), after the call, in both
//! collective modes, and nothing for a record without the count.

mod common;

use commchar_sim::engine::Outcome;
use commchar_sim::first_touch::{self, ByteSteps, REC_COLD};
use commchar_sim::params::{Params, Rendezvous};
use commchar_sim::workload::replay::{CollectiveMode, Options, Signature, SignatureCost};
use common::{TraceDir, NS, R};

const SEND: u16 = 1;
const RECV: u16 = 5;
const IRECV: u16 = 10;
const WAIT: u16 = 13;
const SCATTER: u16 = 25;
const COMPLETE: u16 = 60;
const T0: u64 = 1_000_000;
const MIB: u64 = 1 << 20;

fn write(name: &str, ranks: &[Vec<R>]) -> TraceDir {
    common::write_at("touch", name, ranks, T0)
}

fn replay(dir: &TraceDir, opts: &Options) -> Outcome {
    replay_with(dir, opts, common::params(0))
}

fn replay_with(dir: &TraceDir, opts: &Options, params: Params) -> Outcome {
    common::replay_dir(&dir.0, opts, params).unwrap()
}

/// `delta` is `cost` less at most the message's flight (o_s + L: the receiver's charge,
/// made before it posts, overlaps what is already on its way)
fn about(delta: u64, cost: u64) {
    assert!(
        delta <= cost && delta + 4000 * NS >= cost,
        "{delta} ps, expected {cost} less at most 4 us"
    );
}

fn compute(o: &Outcome, r: usize) -> u64 {
    o.breakdown.as_ref().unwrap()[r].compute
}

/// 0.25 ns a byte: 250 ps
fn touch() -> ByteSteps {
    ByteSteps::from_us_per_byte(2.5e-4).unwrap()
}

fn with(opts: Options, ft: ByteSteps) -> Options {
    Options {
        first_touch: ft,
        ..opts
    }
}

/// Rank 0 sends 1 MiB; rank 1 receives it into memory `cold` bytes of which are cold.
fn one_message(cold: u64, flags: u16, name: &str) -> TraceDir {
    let send = R {
        call: SEND,
        peer: 1,
        tag: 1,
        bytes: MIB,
        ..R::default()
    };
    let recv = R {
        call: RECV,
        flags,
        peer: 0,
        tag: 1,
        bytes2: MIB,
        req: cold,
        aux: 0,
        aux2: 1,
        ..R::default()
    };
    write(
        &format!("one-{cold}-{flags}-{name}"),
        &[vec![send], vec![recv]],
    )
}

#[test]
fn a_receive_pays_its_cold_bytes_times_the_cost() {
    let dir = one_message(MIB, REC_COLD, "plain");
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), touch()));
    about(paid.finish[1] - free.finish[1], MIB * 250);
    assert_eq!(
        paid.finish[0], free.finish[0],
        "an eager sender pays nothing"
    );
    let b = paid.breakdown.as_ref().unwrap();
    let f = free.breakdown.as_ref().unwrap();
    assert_eq!(b[1].compute - f[1].compute, MIB * 250);
}

#[test]
fn a_record_without_the_flag_pays_nothing() {
    // an old trace: req of a blocking call is 0, and a stray value without the flag is ignored
    let dir = one_message(MIB, 0, "unflagged");
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), touch()));
    assert_eq!(paid.finish, free.finish);
    assert_eq!(first_touch::cold_bytes(RECV, 0, MIB, 0, 0), 0);
}

#[test]
fn an_irecv_carries_its_count_beside_its_request() {
    let cold: u64 = (5 << 32) | 4096; // more than 4 GiB: both halves are read
    assert_eq!(
        first_touch::cold_bytes(IRECV, REC_COLD | 1, 7, 4096, 5),
        cold
    );
    let send = R {
        call: SEND,
        peer: 1,
        tag: 1,
        bytes: MIB,
        ..R::default()
    };
    let irecv = R {
        call: IRECV,
        flags: REC_COLD | 1,
        peer: 0,
        tag: 1,
        bytes2: MIB,
        req: 7,
        aux: (MIB / 2) as i32,
        ..R::default()
    };
    let wait = R {
        call: WAIT,
        aux: 1,
        ..R::default()
    };
    let complete = R {
        call: COMPLETE,
        bytes2: MIB,
        req: 7,
        aux: 0,
        aux2: 1,
        ..R::default()
    };
    let dir = write("irecv", &[vec![send], vec![irecv, wait, complete]]);
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), touch()));
    let b = paid.breakdown.as_ref().unwrap();
    let f = free.breakdown.as_ref().unwrap();
    assert_eq!(b[1].compute - f[1].compute, MIB / 2 * 250);
}

/// A scatter of 2 MiB from rank 0 (or rank 0 alone at p = 1: its own copy), each
/// rank's 1 MiB part cold.
fn scatter(p: usize, name: &str) -> TraceDir {
    let ranks: Vec<Vec<R>> = (0..p)
        .map(|_| {
            vec![R {
                call: SCATTER,
                flags: REC_COLD,
                peer: 0,
                tag: -1,
                bytes: MIB * p as u64,
                bytes2: MIB,
                req: MIB,
                ..R::default()
            }]
        })
        .collect();
    write(&format!("scatter-{p}-{name}"), &ranks)
}

/// Charged collectives: a scatter of `block` bytes a rank at p costs 100 ns, run as
/// `algorithm` (None: the simulator's default).
fn charged_scatter(p: u32, block: u64, algorithm: Option<&str>) -> Options {
    let mut o = Options {
        collectives: CollectiveMode::Charged,
        ..Options::default()
    };
    o.costs.insert(
        Signature {
            call: "scatter",
            p,
            n: block * p as u64,
        },
        SignatureCost {
            cost_ps: Some(100 * NS),
            algorithm: algorithm.map(String::from),
        },
    );
    o
}

fn charged(p: u32) -> Options {
    charged_scatter(p, MIB, None)
}

#[test]
fn collectives_charge_every_receiving_rank_in_both_modes() {
    for p in [1usize, 2] {
        let dir = scatter(p, "modes");
        for base in [Options::default(), charged(p as u32)] {
            let mode = base.collectives;
            let free = replay(&dir, &base);
            let paid = replay(&dir, &with(base, touch()));
            for r in 0..p {
                let b = &paid.breakdown.as_ref().unwrap()[r];
                let f = &free.breakdown.as_ref().unwrap()[r];
                assert_eq!(
                    b.compute - f.compute,
                    MIB * 250,
                    "p = {p}, rank {r}, {mode:?}"
                );
            }
        }
    }
}

#[test]
fn the_model_field_is_read_and_checked() {
    let model =
        r#"{"libraries": {"mpich": {"loggp_partial": {"first_touch": {"per_byte": 0.00025}}}}}"#;
    assert_eq!(
        first_touch::from_model(model, "m.json", Some("mpich")).unwrap(),
        touch()
    );
    let none = r#"{"libraries": {"mpich": {"loggp": {"L": 1}}}}"#;
    assert_eq!(
        first_touch::from_model(none, "m.json", Some("mpich")).unwrap(),
        ByteSteps::default()
    );
    let bad = r#"{"libraries": {"mpich": {"loggp": {"first_touch": {"per_byte": -1}}}}}"#;
    let e = first_touch::from_model(bad, "m.json", Some("mpich")).unwrap_err();
    assert!(
        e.to_string().contains("m.json: loggp first_touch.per_byte"),
        "{e}"
    );
}

#[test]
fn steps_charge_each_size_its_own_cost() {
    let model = r#"{"libraries": {"mpich": {"loggp": {"first_touch": {"per_byte": 0.00025,
        "steps": [[65536, 0.0002], [4194304, 0.0008]]}}}}}"#;
    let ft = first_touch::from_model(model, "m.json", Some("mpich")).unwrap();
    assert_eq!(ft.cost(4096), 4096 * 200, "below the first step: its cost");
    assert_eq!(ft.cost(MIB), MIB * 200);
    assert_eq!(ft.cost(4 * MIB), 4 * MIB * 800);
    assert_eq!(ft.cost(72 * MIB), 72 * MIB * 800);
    assert_eq!(ft.cost(0), 0);
    let dir = one_message(MIB, REC_COLD, "steps");
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), ft));
    assert_eq!(compute(&paid, 1) - compute(&free, 1), MIB * 200);
    let unsorted = r#"{"libraries": {"mpich": {"loggp": {"first_touch": {"per_byte": 0.00025,
        "steps": [[65536, 0.0002], [65536, 0.0008]]}}}}}"#;
    let e = first_touch::from_model(unsorted, "m.json", Some("mpich")).unwrap_err();
    assert!(e.to_string().contains("do not increase"), "{e}");
}

#[test]
fn a_rendezvous_sender_waits_while_the_receiver_faults_its_pages_in() {
    let dir = one_message(MIB, REC_COLD, "rendezvous");
    let rendezvous = Params {
        eager_max: 0,
        rendezvous: Rendezvous::Handshake,
        ..common::params(0)
    };
    let free = replay_with(&dir, &Options::default(), rendezvous.clone());
    let paid = replay_with(&dir, &with(Options::default(), touch()), rendezvous);
    about(paid.finish[1] - free.finish[1], MIB * 250);
    about(paid.finish[0] - free.finish[0], MIB * 250);
}

#[test]
fn a_roots_own_part_is_charged_after_it_has_sent() {
    // p = 2 with rendezvous: rank 1 faults its part in before it can take rank 0's message,
    // and rank 0 faults its own part in after the send, so the two add up at the root
    let dir = scatter(2, "root");
    let rendezvous = Params {
        eager_max: 0,
        rendezvous: Rendezvous::Handshake,
        ..common::params(0)
    };
    let free = replay_with(&dir, &Options::default(), rendezvous.clone());
    let paid = replay_with(&dir, &with(Options::default(), touch()), rendezvous);
    about(paid.finish[0] - free.finish[0], 2 * MIB * 250);
}

/// A scatter of `block` bytes a rank from rank 0 over `p` ranks, no cold user bytes
/// recorded: what it pays beyond the free run is the library's temporary buffers.
fn staged_scatter(p: usize, block: u64, name: &str) -> TraceDir {
    let ranks: Vec<Vec<R>> = (0..p)
        .map(|_| {
            vec![R {
                call: SCATTER,
                peer: 0,
                tag: -1,
                bytes: block * p as u64,
                bytes2: block,
                ..R::default()
            }]
        })
        .collect();
    write(&format!("staged-{p}-{block}-{name}"), &ranks)
}

fn binomial_charged(p: u32, block: u64) -> Options {
    charged_scatter(p, block, Some("scatter:binomial"))
}

/// (p, per rank: blocks staged in a temporary buffer, the blocks staged above the last
/// leaf, the slowest path's blocks when a parent's sends wait for each child's touch) of
/// a binomial scatter rooted at 0: inner ranks hold their subtree, the root and leaves none.
const STAGED: &[(usize, &[u64], u64, u64)] = &[
    (2, &[0, 0], 0, 0),
    (4, &[0, 0, 2, 0], 2, 2),
    (
        16,
        &[0, 0, 2, 0, 4, 0, 2, 0, 8, 0, 2, 0, 4, 0, 2, 0],
        8 + 4 + 2,
        8 + 4 + 2,
    ),
    // the root sends 4 blocks to 8, then 4 to 4, whose child 6 stages 2 more: 10 blocks
    // before rank 7 has its own, where no single path down the tree stages more than 6
    (12, &[0, 0, 2, 0, 4, 0, 2, 0, 4, 0, 2, 0], 4 + 2, 4 + 4 + 2),
];

#[test]
fn binomial_scatter_charges_its_inner_ranks_cold_temporary_buffers() {
    // 250 ps a byte; 1 MiB blocks: every temporary buffer is above the mmap threshold
    for &(p, blocks, path, charged) in STAGED {
        let dir = staged_scatter(p, MIB, "expanded");
        let free = replay(&dir, &Options::default());
        let paid = replay(&dir, &with(Options::default(), touch()));
        for (r, &b) in blocks.iter().enumerate() {
            assert_eq!(
                compute(&paid, r) - compute(&free, r),
                b * MIB * 250,
                "expanded p = {p}, rank {r}"
            );
        }
        // the last leaf waits for every staged hop above it, one after the other
        assert_eq!(
            paid.finish[p - 1] - free.finish[p - 1],
            path * MIB * 250,
            "expanded p = {p}, the last leaf"
        );
        // charged: every member pays T(n, p) plus the slowest path's first touch, a
        // parent's later sends held up by the earlier children's
        let free = replay(&dir, &binomial_charged(p as u32, MIB));
        let paid = replay(&dir, &with(binomial_charged(p as u32, MIB), touch()));
        for r in 0..p {
            assert_eq!(
                paid.finish[r] - free.finish[r],
                charged * MIB * 250,
                "charged p = {p}, rank {r}"
            );
        }
    }
}

#[test]
fn temporary_buffers_below_the_mmap_threshold_are_free() {
    // 32 KiB blocks at p = 16: rank 8 stages 256 KiB and rank 12 128 KiB (both mapped
    // fresh), rank 14 64 KiB (heap memory malloc reuses: no charge)
    assert_eq!(first_touch::MMAP_THRESHOLD, 128 * 1024);
    let ft = touch();
    assert_eq!(ft.temp_cost(MIB, 64 * 1024), 0);
    assert_eq!(ft.temp_cost(MIB, 128 * 1024), MIB * 250);
    let block = 32 * 1024;
    let dir = staged_scatter(16, block, "threshold");
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), touch()));
    for (r, staged) in [(8, 8 * block), (12, 4 * block), (14, 0), (2, 0)] {
        assert_eq!(
            compute(&paid, r) - compute(&free, r),
            staged * 250,
            "rank {r}"
        );
    }
    let free = replay(&dir, &binomial_charged(16, block));
    let paid = replay(&dir, &with(binomial_charged(16, block), touch()));
    assert_eq!(paid.finish[0] - free.finish[0], 12 * block * 250);
}

#[test]
fn a_charged_call_adds_no_temporary_buffer_its_probe_mapped_afresh_too() {
    // 8 MiB blocks at p = 16: rank 8 stages 64 MiB (above glibc's largest mmap threshold: the
    // probe behind T(n, p) faulted it in on every call), rank 12 32 MiB and rank 14 16 MiB
    // (warm in the probe after its first call: this call's first touch is extra)
    assert_eq!(first_touch::MMAP_THRESHOLD_MAX, 32 * MIB);
    let ft = touch();
    assert_eq!(ft.temp_cost_beyond_probe(64 * MIB), 0);
    assert_eq!(ft.temp_cost_beyond_probe(32 * MIB), 32 * MIB * 250);
    let block = 8 * MIB;
    let dir = staged_scatter(16, block, "probed");
    let free = replay(&dir, &binomial_charged(16, block));
    let paid = replay(&dir, &with(binomial_charged(16, block), touch()));
    for r in [0, 8, 15] {
        assert_eq!(
            paid.finish[r] - free.finish[r],
            (4 + 2) * block * 250,
            "rank {r}"
        );
    }
    // expanded, the one call faults every staged buffer in, the largest too
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), touch()));
    assert_eq!(compute(&paid, 8) - compute(&free, 8), 8 * block * 250);
}

#[test]
fn a_temporary_buffer_pays_the_step_of_its_own_size() {
    // rank 2 of p = 4 stages 2 MiB: the 1 MiB step's cost, though no message is that big
    let model = r#"{"libraries": {"mpich": {"loggp": {"first_touch": {"per_byte": 0.00025,
        "steps": [[65536, 0.0002], [2097152, 0.0008]]}}}}}"#;
    let ft = first_touch::from_model(model, "m.json", Some("mpich")).unwrap();
    let dir = staged_scatter(4, MIB, "steps");
    let free = replay(&dir, &Options::default());
    let paid = replay(&dir, &with(Options::default(), ft));
    assert_eq!(compute(&paid, 2) - compute(&free, 2), 2 * MIB * 800);
    assert_eq!(compute(&paid, 1) - compute(&free, 1), 0);
}

#[test]
fn a_scatter_on_one_rank_copies_the_roots_block() {
    // O = 100 ps a byte: the 1 MiB copy from the send buffer to the receive buffer,
    // then its cold bytes, in both modes
    let params = Params {
        big_o: 100,
        ..common::params(0)
    };
    let dir = scatter(1, "copy");
    for base in [Options::default(), charged(1)] {
        let opts = Options {
            local_copy: commchar_sim::workload::replay::LocalCopy::from_params(&params),
            ..with(base.clone(), touch())
        };
        let free = replay(&dir, &base);
        let paid = replay(&dir, &opts);
        assert_eq!(compute(&paid, 0) - compute(&free, 0), MIB * 100 + MIB * 250);
    }
}
