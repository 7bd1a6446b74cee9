//! Topologies (routes agree with hop counts) and congestion.

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::Net;
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
        taken_in_calls: false,
        cold_start: None,
        regimes: Vec::new(),
        self_message: Vec::new(),
        send_post: Vec::new(),
        noise: None,
    }
}

/// Each rank's finish time for a GOAL schedule, with the network `net` builds for its ranks.
fn finish_times(text: &str, params: Params, net: impl FnOnce(u32) -> Net) -> Vec<u64> {
    let mut g = GoalGraph::parse(text, "t", NS).unwrap();
    let network = net(commchar_sim::workload::Workload::ranks(&g));
    engine::run(
        Config {
            params,
            network,
            trace_limit: None,
        },
        &mut g,
    )
    .unwrap()
    .finish
}

fn run_goal(text: &str, topo: &str, congestion: bool, hop: u64) -> Vec<u64> {
    finish_times(text, pure_delay(hop), |p| {
        let wires = Network::new(topology::parse(topo, p).unwrap(), hop);
        if congestion {
            Net::reserved(wires)
        } else {
            Net::ideal(wires)
        }
    })
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

/// Pure delay but for G: a link moves one byte per `gap_ps_per_byte`.
fn with_gap(gap_ps_per_byte: u64) -> Params {
    Params {
        big_g: gap_ps_per_byte,
        ..pure_delay(0)
    }
}

fn run_goal_flows(text: &str, topo: &str, gap_ps_per_byte: u64) -> Vec<u64> {
    finish_times(text, with_gap(gap_ps_per_byte), |p| {
        Net::flow_level(
            Network::new(topology::parse(topo, p).unwrap(), 0),
            gap_ps_per_byte,
        )
    })
}

#[test]
fn flows_sharing_a_link_split_its_bandwidth_until_the_shorter_ends() {
    // on a 3-cube 0->3 crosses 0->1 and 1->3, and 1->7 crosses 1->3 and 3->7:
    // they share link 1->3 only. 1000 and 3000 bytes at 1 ns a byte: both at half
    // rate until the first is done at 2 us, the second alone for its last 2000 bytes.
    let text = "num_ranks 8\nrank 0 {\na: send 1001b to 3 tag 0\n}\nrank 1 {\nb: send 3001b to 7 tag 0\n}\n\
                rank 2 {\n}\nrank 3 {\nx: recv 1001b from 0 tag 0\n}\nrank 4 {\n}\nrank 5 {\n}\nrank 6 {\n}\n\
                rank 7 {\ny: recv 3001b from 1 tag 0\n}\n";
    let finish = run_goal_flows(text, "hypercube:3", 1000);
    assert_eq!((finish[3], finish[7]), (2000 * NS, 4000 * NS));
    // alone on the same routes: 1 and 3 us
    let alone = "num_ranks 8\nrank 0 {\na: send 1001b to 3 tag 0\n}\nrank 1 {\n}\nrank 2 {\n}\n\
                 rank 3 {\nx: recv 1001b from 0 tag 0\n}\nrank 4 {\n}\nrank 5 {\n}\nrank 6 {\n}\nrank 7 {\n}\n";
    assert_eq!(run_goal_flows(alone, "hypercube:3", 1000)[3], 1000 * NS);
}

#[test]
fn flows_that_share_no_link_give_the_congestion_free_times() {
    // a ring shift, twice: every NIC sends one message and receives one at a time
    let mut text = String::from("num_ranks 6\n");
    for r in 0..6 {
        let (next, prev) = ((r + 1) % 6, (r + 5) % 6);
        text += &format!(
            "rank {r} {{\na: send 4001b to {next} tag 0\nb: recv 4001b from {prev} tag 0\n\
             c: send 4001b to {next} tag 1\nd: recv 4001b from {prev} tag 1\nc requires b\nd requires b\n}}\n"
        );
    }
    let flows = run_goal_flows(&text, "full", 250);
    let off = finish_times(&text, with_gap(250), |p| {
        Net::ideal(Network::new(topology::parse("full", p).unwrap(), 0))
    });
    assert_eq!(flows, off);
    assert_eq!(flows[0], 2000 * NS);
}
