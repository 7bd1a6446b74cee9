//! Topologies (routes agree with hop counts) and congestion.

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::workload::goal::GoalGraph;
use common::NS;
use proptest::prelude::*;

fn pure_delay(hop: u64) -> Params {
    Params {
        l: 0,
        o_s: 0,
        o_r: 0,
        g: 0,
        big_g: 0,
        big_o: 0,
        eager_max: u64::MAX,
        gamma: 0,
        hop,
        rendezvous: Rendezvous::Match,
        rendezvous_copy: RendezvousCopy::Both,
        cold_start: None,
        regimes: Vec::new(),
    }
}

fn run_goal(text: &str, topo: &str, congestion: bool, hop: u64) -> Vec<u64> {
    let mut g = GoalGraph::parse(text, "t", NS).unwrap();
    let p = commchar_sim::workload::Workload::ranks(&g);
    let net = Network::new(topology::parse(topo, p).unwrap(), hop, congestion);
    engine::run(
        Config {
            params: pure_delay(hop),
            network: net,
            trace_limit: None,
        },
        &mut g,
    )
    .unwrap()
    .finish
}

#[test]
fn two_messages_on_one_link_queue_only_with_congestion() {
    let text = "num_ranks 2\nrank 0 {\na: send 1b to 1 tag 0\nb: send 1b to 1 tag 0\n}\nrank 1 {\nx: recv 1b from 0 tag 0\ny: recv 1b from 0 tag 0\n}\n";
    let h = 1000 * NS;
    assert_eq!(run_goal(text, "full", false, h)[1], h);
    assert_eq!(run_goal(text, "full", true, h)[1], 2 * h);
}

#[test]
fn a_message_reaching_a_link_first_is_not_queued_behind_a_later_one() {
    // 0->3 crosses 0->1 then 1->3; 1->3 reaches link 1->3 first and goes first
    let text = "num_ranks 4\nrank 0 {\na: send 1b to 3 tag 0\n}\nrank 1 {\nb: send 1b to 3 tag 1\n}\nrank 2 {\n}\n\
                rank 3 {\nx: recv 1b from 0 tag 0\ny: recv 1b from 1 tag 1\n}\n";
    let h = 1000 * NS;
    assert_eq!(run_goal(text, "hypercube", true, h)[3], 2 * h);
    assert_eq!(run_goal(text, "hypercube", false, h)[3], 2 * h);
}

#[test]
fn hop_counts() {
    let t = topology::parse("torus:8x8", 64).unwrap();
    assert_eq!(t.hops(0, 7), 1); // wrap-around
    assert_eq!(t.hops(0, 4 + 4 * 8), 8);
    let h = topology::parse("hypercube", 32).unwrap();
    assert_eq!(h.hops(0, 31), 5);
    let f = topology::parse("fattree:4", 16).unwrap();
    assert_eq!((f.hops(0, 1), f.hops(0, 2), f.hops(0, 15)), (2, 4, 6));
    assert_eq!(topology::parse("full", 9).unwrap().hops(3, 8), 1);
}

proptest! {
    #[test]
    fn routes_have_hop_count_links_and_no_repeats(spec in prop::sample::select(vec!["full", "hypercube:6", "torus:8x8", "torus:4x4x4", "fattree:4", "torus:5x3"]), a in 0u32..64, b in 0u32..64) {
        let p = match spec { "fattree:4" => 16, "torus:5x3" => 15, _ => 64 };
        let (a, b) = (a % p, b % p);
        let t = topology::parse(spec, p).unwrap();
        let mut route = Vec::new();
        t.route(a, b, &mut route);
        prop_assert_eq!(route.len() as u32, t.hops(a, b));
        let mut sorted = route.clone();
        sorted.sort_unstable();
        sorted.dedup();
        prop_assert_eq!(sorted.len(), route.len());
        let mut back = Vec::new();
        t.route(b, a, &mut back);
        prop_assert_eq!(back.len(), route.len());
    }

    #[test]
    fn links_that_hold_messages_for_no_time_never_contend(p in 2u32..24, n in 1u64..20_000, spec in prop::sample::select(vec!["alltoall:direct", "allgather:ring", "bcast:binomial", "allgather:bruck"])) {
        // congestion only matters through link occupancy: with hop = 0 and G = 0 it changes nothing
        let mut prm = common::params(0);
        prm.big_g = 0;
        let off = common::run_with(spec, p, n, prm.clone(), "fattree:6", false);
        let on = common::run_with(spec, p, n, prm, "fattree:6", true);
        prop_assert_eq!(on, off);
    }
}
