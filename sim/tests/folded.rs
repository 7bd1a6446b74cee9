//! Collectives at rank counts that are not powers of two: recursive doubling and
//! halving with the extra ranks folded in, Bruck's allgather standing for recursive
//! doubling, and the pairwise reduce-scatter. Closed forms for what each sends, and a
//! contention-free cost oracle (o = g = G = 0: a message takes L, a reduction gamma
//! per byte) computed rank by rank from the folding's dependencies.

mod common;
use common::{params, run, run_with, NS};

use commchar_sim::params::Params;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::phased::PhaseSchedule;
use commchar_sim::workload::{Op, OpKind};

const PS: [u32; 8] = [3, 5, 6, 7, 12, 13, 24, 31];

/// (sender, receiver, bytes)
type Message = (u32, u32, u64);

/// Every message of a schedule, from the sends and, separately, from the receives.
fn messages(spec: &str, p: u32, n: u64) -> (Vec<Message>, Vec<Message>) {
    let c = Collective::new(collectives::parse(spec).unwrap(), p, n, NS).unwrap();
    let (mut sends, mut recvs) = (Vec::new(), Vec::new());
    let mut ops: Vec<Op> = Vec::new();
    for r in 0..p {
        for k in 0.. {
            ops.clear();
            if c.phase(r, k, &mut ops).is_none() {
                break;
            }
            for op in &ops {
                match op.kind {
                    OpKind::Send => sends.push((r, op.peer, op.size)),
                    OpKind::Recv => recvs.push((op.peer, r, op.size)),
                    _ => {}
                }
            }
        }
    }
    sends.sort_unstable();
    recvs.sort_unstable();
    (sends, recvs)
}

/// (messages, bytes) of a schedule, checking every send has its receive.
fn totals(spec: &str, p: u32, n: u64) -> (u64, u64) {
    let (sends, recvs) = messages(spec, p, n);
    assert_eq!(sends, recvs, "{spec} p={p}: sends and receives differ");
    assert!(sends.iter().all(|&(s, d, _)| s != d && s < p && d < p));
    (sends.len() as u64, sends.iter().map(|m| m.2).sum())
}

fn split(p: u32) -> (u64, u64, u64) {
    let q = 1u32 << (31 - p.leading_zeros());
    (q as u64, (p - q) as u64, q.trailing_zeros() as u64)
}

#[test]
fn folded_recursive_doubling_allreduce_sends_the_vector_in_out_and_lg_q_times() {
    for p in PS {
        let n = 4096u64;
        let (q, rem, lgq) = split(p);
        let count = 2 * rem + q * lgq;
        assert_eq!(
            totals("allreduce:recursive_doubling", p, n),
            (count, count * n),
            "p={p}"
        );
    }
}

#[test]
fn folded_rabenseifner_halves_and_doubles_among_the_survivors() {
    for p in PS {
        let n = 1u64 << 16;
        let (q, rem, lgq) = split(p);
        let halves: u64 = (1..=lgq).map(|i| n >> i).sum();
        assert_eq!(
            totals("allreduce:rabenseifner", p, n),
            (2 * rem + 2 * q * lgq, 2 * rem * n + 2 * q * halves),
            "p={p}"
        );
    }
}

#[test]
fn folded_recursive_halving_reduce_scatter_moves_each_block_once_per_step() {
    // every halving step moves p blocks' worth across the q survivors, halved:
    // c p q/2^(i+1), so c p (q - 1) in all; the fold adds r vectors and r blocks back
    for p in PS {
        let c = 512u64;
        let n = c * p as u64;
        let (q, rem, lgq) = split(p);
        assert_eq!(
            totals("reduce_scatter:recursive_halving", p, n),
            (
                2 * rem + q * lgq,
                rem * n + rem * c + c * p as u64 * (q - 1)
            ),
            "p={p}"
        );
    }
}

#[test]
fn pairwise_reduce_scatter_sends_every_block_to_its_owner() {
    for p in [2u32, 3, 5, 8, 12] {
        let c = 300u64;
        let pp = (p * (p - 1)) as u64;
        assert_eq!(
            totals("reduce_scatter:pairwise", p, c * p as u64),
            (pp, pp * c),
            "p={p}"
        );
    }
}

#[test]
fn recursive_doubling_allgather_is_brucks_off_powers_of_two() {
    for p in PS {
        for n in [64 * p as u64, 100_000] {
            assert_eq!(
                messages("allgather:recursive_doubling", p, n),
                messages("allgather:bruck", p, n),
                "p={p}"
            );
            assert_eq!(
                run("allgather:recursive_doubling", p, n, 0),
                run("allgather:bruck", p, n, 0)
            );
        }
    }
}

// ---- the cost oracle ------------------------------------------------------------

const L: u64 = 2500;

/// Only latency and reductions: every message takes L, no CPU or NIC is ever busy.
fn latency_only(gamma_ns: u64) -> Params {
    let mut p = params(gamma_ns);
    (p.o_s, p.o_r, p.g, p.big_g) = (0, 0, 0, 0);
    p
}

/// One folded schedule by hand: survivors v < r start after the fold (L + n gamma);
/// step j, with mask `masks[j]`, ends at max(own, partner's + L) + reduced(v, j) gamma;
/// the folded ranks end L after their partner. Returns the makespan (ns).
fn folded_oracle(
    p: u32,
    n: u64,
    gamma: u64,
    masks: &[u32],
    reduced: impl Fn(u32, usize) -> u64,
) -> u64 {
    let (q, rem, _) = split(p);
    let (q, rem) = (q as u32, rem as u32);
    let mut t: Vec<u64> = (0..q)
        .map(|v| if v < rem { L + n * gamma } else { 0 })
        .collect();
    for (j, &m) in masks.iter().enumerate() {
        t = (0..q)
            .map(|v| t[v as usize].max(t[(v ^ m) as usize] + L) + reduced(v, j) * gamma)
            .collect();
    }
    let folded = (0..rem).map(|v| t[v as usize] + L);
    t.iter().copied().chain(folded).max().unwrap()
}

#[test]
fn folded_recursive_doubling_allreduce_meets_its_oracle() {
    for p in PS {
        for (n, gamma) in [(8u64, 0u64), (4096, 2)] {
            let lgq = split(p).2 as u32;
            let masks: Vec<u32> = (0..lgq).map(|i| 1 << i).collect();
            let expect = folded_oracle(p, n, gamma, &masks, |_, _| n);
            let got = run_with(
                "allreduce:recursive_doubling",
                p,
                n,
                latency_only(gamma),
                "full",
                false,
            );
            assert_eq!(got.makespan(), expect * NS, "p={p} n={n}");
        }
    }
    // p = 3 by hand: the fold, one exchange, the result handed back
    let (n, gamma) = (4096u64, 2u64);
    let got = run_with(
        "allreduce:recursive_doubling",
        3,
        n,
        latency_only(gamma),
        "full",
        false,
    );
    assert_eq!(got.makespan(), 2 * (L + n * gamma) * NS);
}

#[test]
fn folded_rabenseifner_meets_its_oracle() {
    for p in PS {
        let (n, gamma) = (1u64 << 16, 1u64);
        let lgq = split(p).2 as u32;
        // reduce-scatter masks ascending, then the allgather's descending
        let masks: Vec<u32> = (0..lgq).chain((0..lgq).rev()).map(|i| 1 << i).collect();
        let reduced = |_: u32, j: usize| {
            if j < lgq as usize {
                n >> (j + 1)
            } else {
                0
            }
        };
        let expect = folded_oracle(p, n, gamma, &masks, reduced);
        let got = run_with(
            "allreduce:rabenseifner",
            p,
            n,
            latency_only(gamma),
            "full",
            false,
        );
        assert_eq!(got.makespan(), expect * NS, "p={p}");
    }
}

#[test]
fn folded_recursive_halving_reduce_scatter_meets_its_oracle() {
    for p in PS {
        let (c, gamma) = (256u64, 3u64);
        let n = c * p as u64;
        let (q, rem, lgq) = split(p);
        let masks: Vec<u32> = (0..lgq as u32).map(|i| (q as u32) >> (i + 1)).collect();
        // at step j survivor v keeps the mask survivors of its half of the window,
        // two blocks for each below r
        let kept = |v: u32, j: usize| {
            let mask = masks[j];
            let first = v & !(mask - 1);
            let paired = (first..first + mask).filter(|&u| (u as u64) < rem).count() as u64;
            c * (mask as u64 + paired)
        };
        let expect = folded_oracle(p, n, gamma, &masks, kept);
        let got = run_with(
            "reduce_scatter:recursive_halving",
            p,
            n,
            latency_only(gamma),
            "full",
            false,
        );
        assert_eq!(got.makespan(), expect * NS, "p={p}");
    }
}

#[test]
fn pairwise_reduce_scatter_is_p_minus_one_exchanges_and_reductions() {
    for p in [2u32, 3, 5, 6, 12] {
        let (c, gamma) = (1024u64, 2u64);
        let hop = 2 * 1500 + L + (c - 1) * 6;
        assert_eq!(
            run("reduce_scatter:pairwise", p, c * p as u64, gamma),
            (p as u64 - 1) * (hop + c * gamma) * NS,
            "p={p}"
        );
    }
}

#[test]
fn every_rank_count_runs_every_collective() {
    // with LogGOPSim's costs and a small eager limit (rendezvous sends wait for
    // their receiver): a schedule that deadlocked would not complete
    for name in collectives::names() {
        for p in 1..=13u32 {
            let mut prm = params(1);
            prm.eager_max = 1000;
            let out = run_with(name, p, 6000, prm, "full", false);
            assert_eq!(out.finish.len(), p as usize, "{name} p={p}");
        }
    }
}
