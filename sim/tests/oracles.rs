//! Closed-form costs under the contention-free LogGOPS model, exact to the picosecond.

mod common;
use common::{run, NS};

const L: u64 = 2500;
const O: u64 = 1500;
const G: u64 = 6;

/// One message end to end: 2o + L + (s-1)G (ns).
fn hop(s: u64) -> u64 {
    2 * O + L + (s - 1) * G
}

#[test]
fn binomial_bcast_is_k_times_one_message() {
    for k in 1..=10u32 {
        for s in [1u64, 1024, 65536] {
            let p = 1 << k;
            assert_eq!(
                run("bcast:binomial", p, s, 0),
                k as u64 * hop(s) * NS,
                "p={p} s={s}"
            );
        }
    }
}

#[test]
fn recursive_doubling_allreduce() {
    for k in 1..=8u32 {
        let (p, n, gamma) = (1 << k, 4096u64, 2u64);
        let expect = k as u64 * (hop(n) + n * gamma);
        assert_eq!(
            run("allreduce:recursive_doubling", p, n, gamma),
            expect * NS,
            "p={p}"
        );
    }
}

#[test]
fn ring_allreduce_any_p() {
    for p in [2u32, 3, 5, 8, 13, 32] {
        let c = 1024u64;
        let n = c * p as u64;
        let gamma = 3;
        let steps = (p - 1) as u64;
        let expect = steps * (hop(c) + c * gamma) + steps * hop(c);
        assert_eq!(run("allreduce:ring", p, n, gamma), expect * NS, "p={p}");
    }
}

#[test]
fn rabenseifner_on_powers_of_two() {
    for k in 1..=10u32 {
        let p = 1u32 << k;
        let n = 1u64 << 20;
        let gamma = 1;
        let mut expect = 0;
        for i in 1..=k {
            let part = n >> i;
            expect += hop(part) + part * gamma; // reduce-scatter step
            expect += hop(part); // allgather step
        }
        assert_eq!(
            run("allreduce:rabenseifner", p, n, gamma),
            expect * NS,
            "p={p}"
        );
    }
}

#[test]
fn dissemination_barrier() {
    for p in 2..=40u32 {
        let rounds = (p as f64).log2().ceil() as u64;
        assert_eq!(
            run("barrier:dissemination", p, 0, 0),
            rounds * hop(1) * NS,
            "p={p}"
        );
    }
}

#[test]
fn pairwise_alltoall() {
    for p in [2u32, 3, 4, 7, 16] {
        let n = 2048u64;
        assert_eq!(
            run("alltoall:pairwise", p, n, 0),
            (p as u64 - 1) * hop(n) * NS,
            "p={p}"
        );
    }
}

#[test]
fn linear_bcast_serializes_at_the_root() {
    // the root's sends leave every max(o, g + (s-1)G); the last arrives one message later
    let (p, s) = (9u64, 1000u64);
    let gap = O.max(1000 + (s - 1) * G);
    assert_eq!(
        run("bcast:linear", p as u32, s, 0),
        ((p - 2) * gap + hop(s)) * NS
    );
}

#[test]
fn a_rendezvous_send_waits_for_the_receiver() {
    use commchar_sim::params::Rendezvous;
    // a late receive holds a long send: rank 0's CPU is released at the match
    let text = "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 0\n}\nrank 1 {\nc: calc 1000000\nr: recv 100000b from 0 tag 0\nr requires c\n}\n";
    let mut p = common::params(0);
    p.eager_max = 65535;
    for (mode, sender_end) in [
        (Rendezvous::Match, 1_000_000u64),
        (Rendezvous::Handshake, 1_000_000 + L),
    ] {
        p.rendezvous = mode;
        let mut g = commchar_sim::workload::goal::GoalGraph::parse(text, "t", NS).unwrap();
        let net = commchar_sim::transport::Net::ideal(commchar_sim::network::Network::new(
            commchar_sim::topology::parse("full", 2).unwrap(),
            0,
        ));
        let out = commchar_sim::engine::run(
            commchar_sim::engine::Config {
                params: p.clone(),
                network: net,
                trace_limit: None,
            },
            &mut g,
        )
        .unwrap();
        assert_eq!(out.finish[0], sender_end * NS, "{mode:?}");
    }
}

#[test]
fn reduce_bcast_allreduce_is_a_reduce_then_a_bcast() {
    // the root finishes the reduce last, then broadcasts from there: the two makespans add
    for p in [2u32, 4, 8, 16, 5] {
        for n in [8u64, 4096, 100_000] {
            let whole = run("allreduce:reduce_bcast", p, n, 3);
            let parts = run("reduce:binomial", p, n, 3) + run("bcast:binomial", p, n, 3);
            assert_eq!(whole, parts, "p={p} n={n}");
        }
    }
    // p = 2: one message each way and one reduction at the root
    let msg = (1500 + 2500 + 1500 + 4095 * 6) * 1000;
    assert_eq!(
        run("allreduce:reduce_bcast", 2, 4096, 3),
        2 * msg + 4096 * 3 * 1000
    );
}

#[test]
fn linear_scan_is_a_chain_of_messages_and_reductions() {
    // rank r waits for rank r-1's prefix, reduces, forwards: p-1 links in series
    for p in [1u32, 2, 3, 7] {
        for (n, gamma) in [(8u64, 0u64), (4096, 2)] {
            let expect = (p as u64 - 1) * (hop(n) + n * gamma);
            assert_eq!(run("scan:linear", p, n, gamma), expect * NS, "p={p} n={n}");
        }
    }
}

#[test]
fn linear_sync_gather_asks_before_each_block() {
    // p = 2: the root's empty request, then rank 1's block; its empty second segment
    // leaves max(o, g + (c-1)G) after the block and is received once the root's CPU
    // has received the block
    let (c, n) = (512u64, 1024u64);
    let empty = 2 * O + L; // a zero-byte message: no byte after the first
    let second_sent = empty + O.max(1000 + (c - 1) * G);
    let block_received = empty + hop(c);
    let expect = (second_sent + O + L).max(block_received) + O;
    assert_eq!(run("gather:linear_sync", 2, n, 0), expect * NS);
    // every rank in turn: the root's requests are serialized by the blocks they ask for
    assert!(run("gather:linear_sync", 5, 5 * c, 0) >= 4 * (empty + hop(c)) * NS);
    assert!(run("gather:linear_sync", 2, n, 0) > run("gather:linear", 2, n, 0));
}
