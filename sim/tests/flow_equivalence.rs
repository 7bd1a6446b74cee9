//! The flow level against the message level: where no two copies share a
//! link, `--congestion flow` gives `--congestion off`'s times exactly (the flow
//! is the receiver's copy, as long alone as LogGP's o_r + (s-1)max(O, G)); a
//! node's per-message cost c_node is charged on its shared resource, so that k
//! pairs take max(o_r + m G, k (c_node + m G_node)) a message, the fit's form.

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::flow_level::FlowLevel;
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::Workload;
use common::NS;

/// Every cost set and distinct (ps): L 1 us, o_s 0.5 us, o_r 0.7 us, g 0.1 us,
/// G 10 ps/B, O 2 ps/B, eager up to `eager_max` bytes.
fn params(eager_max: u64, copy: RendezvousCopy, rendezvous: Rendezvous) -> Params {
    Params {
        l: 1000 * NS,
        o_s: 500 * NS,
        o_r: 700 * NS,
        g: 100 * NS,
        big_g: 10,
        big_o: 2,
        eager_max,
        gamma: 0,
        hop: 0,
        rendezvous,
        rendezvous_copy: copy,
        taken_in_calls: false,
        cold_start: None,
        regimes: Vec::new(),
        self_message: Vec::new(),
        send_post: Vec::new(),
        noise: None,
    }
}

/// How messages cross: `off`, or flows with an optional node resource
/// (ranks per node, G_node in ps/B, c_node in ps).
#[derive(Clone, Copy)]
enum Net {
    Off,
    Flow(Option<(u32, f64, f64)>),
}

fn finish(text: &str, p: &Params, net: Net) -> Vec<u64> {
    let mut g = GoalGraph::parse(text, "t", NS).unwrap();
    let ranks = g.ranks();
    let topo = topology::parse("full", ranks).unwrap();
    let network = match net {
        Net::Off => commchar_sim::transport::Net::ideal(Network::new(topo, 0)),
        Net::Flow(node) => {
            let flows = FlowLevel::new(Network::new(topo, 0), p.fastest_gap_per_byte());
            match node {
                Some((per, gap, cost)) => flows
                    .with_node_resource((0..ranks).map(|r| r / per).collect(), gap, cost)
                    .into(),
                None => flows.into(),
            }
        }
    };
    let config = Config {
        params: p.clone(),
        network,
        trace_limit: None,
    };
    engine::run(config, &mut g).unwrap().finish
}

/// Rank 0 sends n bytes to 1 and waits for its reply, `rounds` times.
fn pingpong(n: u64, rounds: u32) -> String {
    let (mut a, mut b) = (String::new(), String::new());
    for i in 0..rounds {
        a += &format!(
            "s{i}: send {n}b to 1 tag 0\nr{i}: recv {n}b from 1 tag 0\nr{i} requires s{i}\n"
        );
        b += &format!(
            "r{i}: recv {n}b from 0 tag 0\ns{i}: send {n}b to 0 tag 0\ns{i} requires r{i}\n"
        );
        if i > 0 {
            a += &format!("s{i} requires r{}\n", i - 1);
            b += &format!("r{i} requires s{}\n", i - 1);
        }
    }
    format!("num_ranks 2\nrank 0 {{\n{a}}}\nrank 1 {{\n{b}}}\n")
}

/// Both ranks send n bytes to each other at once and receive, `rounds` times.
fn exchange(n: u64, rounds: u32) -> String {
    let mut text = String::from("num_ranks 2\n");
    for r in 0..2 {
        text += &format!("rank {r} {{\n");
        for i in 0..rounds {
            text += &format!(
                "s{i}: send {n}b to {o} tag 0\nr{i}: recv {n}b from {o} tag 0\nr{i} irequires s{i}\n",
                o = 1 - r
            );
            if i > 0 {
                text += &format!("s{i} requires r{}\ns{i} requires s{}\n", i - 1, i - 1);
            }
        }
        text += "}\n";
    }
    text
}

/// A 2x2 periodic halo: each rank sends n bytes to and receives from its two
/// neighbours, both ways round, all at once, then computes 1 us; `rounds` times.
fn halo(n: u64, rounds: u32) -> String {
    let mut text = String::from("num_ranks 4\n");
    for r in 0..4u32 {
        let (x, y) = (r % 2, r / 2);
        let peers = [(1 - x) + 2 * y, x + 2 * (1 - y)];
        text += &format!("rank {r} {{\n");
        for i in 0..rounds {
            let mut ops = Vec::new();
            for (j, q) in peers.iter().enumerate() {
                for d in 0..2 {
                    text += &format!("r{i}_{j}{d}: recv {n}b from {q} tag {d}\n");
                    text += &format!("s{i}_{j}{d}: send {n}b to {q} tag {}\n", 1 - d);
                    ops.push(format!("r{i}_{j}{d}"));
                    ops.push(format!("s{i}_{j}{d}"));
                }
            }
            text += &format!("c{i}: calc 1000\n");
            for o in &ops[1..] {
                text += &format!("{o} irequires {}\n", ops[0]);
            }
            for o in &ops {
                text += &format!("c{i} requires {o}\n");
            }
            if i > 0 {
                text += &format!("{} requires c{}\n", ops[0], i - 1);
            }
        }
        text += "}\n";
    }
    text
}

#[test]
fn copies_that_never_share_a_link_give_the_message_levels_times_exactly() {
    // S = 5000: 1000 bytes go eagerly, 100000 by rendezvous; every protocol
    let mut cases = 0;
    for copy in [RendezvousCopy::Both, RendezvousCopy::Receiver] {
        for rendezvous in [Rendezvous::Match, Rendezvous::Handshake] {
            let p = params(5000, copy, rendezvous);
            for n in [1, 2, 1000, 100_000] {
                for text in [pingpong(n, 3), exchange(n, 3), halo(n, 3)] {
                    let off = finish(&text, &p, Net::Off);
                    // no node, or one of all but unbounded bandwidth and no cost a message
                    for node in [None, Some((4, 1e-6, 0.0))] {
                        let flow = finish(&text, &p, Net::Flow(node));
                        assert_eq!(
                            flow, off,
                            "n = {n}, {copy:?}, {rendezvous:?}, node {node:?}\n{text}"
                        );
                    }
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 48);
    // the figures themselves (ns), as LogGP gives them: a ping-pong of 100000 bytes
    // eager, each way o_s + L + o_r + (s-1)max(O, G) = 0.5 + 1 + 0.7 + 0.99999 us
    let p = params(u64::MAX, RendezvousCopy::Both, Rendezvous::Match);
    let one_way = 500 * NS + 1000 * NS + 700 * NS + 99_999 * 10;
    let flow = finish(&pingpong(100_000, 3), &p, Net::Flow(None));
    assert_eq!(flow[0], 6 * one_way);
}

#[test]
fn a_node_within_the_fits_bounds_never_slows_one_pair() {
    // G_node <= G and c_node <= o_r (the fit holds c_node <= a, G_node <= G):
    // a ping-pong is one copy at a time, and the node's share never binds it
    for n in [2, 1000, 100_000] {
        for copy in [RendezvousCopy::Both, RendezvousCopy::Receiver] {
            let p = params(5000, copy, Rendezvous::Match);
            let text = pingpong(n, 4);
            let off = finish(&text, &p, Net::Off);
            for node in [(2, 10.0, 700.0 * NS as f64), (2, 4.0, 300.0 * NS as f64)] {
                assert_eq!(
                    finish(&text, &p, Net::Flow(Some(node))),
                    off,
                    "n = {n}, {node:?}"
                );
            }
        }
    }
}

/// k pairs on one node, rank i sending `rounds` messages of `bytes` to rank i + k.
fn pairs(k: u32, bytes: u64, rounds: u32) -> String {
    let mut text = format!("num_ranks {}\n", 2 * k);
    for i in 0..k {
        text += &format!("rank {i} {{\n");
        for j in 0..rounds {
            text += &format!("s{j}: send {bytes}b to {} tag 0\n", i + k);
            if j > 0 {
                text += &format!("s{j} requires s{}\n", j - 1);
            }
        }
        text += "}\n";
    }
    for i in 0..k {
        text += &format!("rank {} {{\n", i + k);
        for j in 0..rounds {
            text += &format!("r{j}: recv {bytes}b from {i} tag 0\n");
        }
        text += "}\n";
    }
    text
}

#[test]
fn k_pairs_take_the_larger_of_their_own_time_and_k_times_the_nodes_cost_a_message() {
    // m = 100000 bytes (the first byte of m + 1 is in L), G = 10 ps/B, O = 0,
    // o_r = 0.5 us: alone a copy takes a = o_r + m G = 1.5 us. The node: G_node =
    // 4 ps/B, c_node = 0.3 us, so each message needs c + m G_node = 0.7 us of it.
    let (m, g, gn, c, o_r) = (100_000u64, 10u64, 4u64, 300 * NS, 500 * NS);
    let p = Params {
        l: 1000 * NS,
        o_s: 200 * NS,
        o_r,
        g: 0,
        big_g: g,
        big_o: 0,
        eager_max: u64::MAX,
        gamma: 0,
        hop: 0,
        rendezvous: Rendezvous::Match,
        rendezvous_copy: RendezvousCopy::Both,
        taken_in_calls: false,
        cold_start: None,
        regimes: Vec::new(),
        self_message: Vec::new(),
        send_post: Vec::new(),
        noise: None,
    };
    let arrive = p.o_s + p.l;
    for k in 1..=8u32 {
        let text = pairs(k, m + 1, 1);
        let charged = finish(&text, &p, Net::Flow(Some((2 * k, gn as f64, c as f64))));
        // max(a + G m, k (c_node + G_node m)) after the first byte's arrival
        let want = arrive + (o_r + m * g).max(k as u64 * (c + m * gn));
        assert!(
            charged[k as usize..].iter().all(|&t| t == want),
            "k = {k}: {charged:?}, want {want}"
        );
        // without c_node only the bytes share the node: max(a + G m, k G_node m)
        let bytes_only = finish(&text, &p, Net::Flow(Some((2 * k, gn as f64, 0.0))));
        let want = arrive + (o_r + m * g).max(k as u64 * m * gn);
        assert!(
            bytes_only[k as usize..].iter().all(|&t| t == want),
            "k = {k}"
        );
        // pairs on nodes of their own share nothing, whatever c_node
        let apart = finish(&text, &p, Net::Flow(Some((2, gn as f64, c as f64))));
        assert_eq!(apart, finish(&text, &p, Net::Off), "k = {k}");
    }
    // streams of 10 messages a pair: once the node binds, it is never idle and
    // the last copy ends 10 k (c + m G_node) after the first began (to a
    // picosecond a copy: rates are fractions of bytes per ps, ends rounded up)
    for k in [3u32, 4, 6] {
        let text = pairs(k, m + 1, 10);
        let charged = finish(&text, &p, Net::Flow(Some((2 * k, gn as f64, c as f64))));
        let want = arrive + 10 * k as u64 * (c + m * gn);
        assert!(
            charged[k as usize..]
                .iter()
                .all(|&t| t >= want && t <= want + 10),
            "k = {k}: {charged:?}, want {want}"
        );
    }
}

#[test]
fn a_pulled_rendezvous_message_moves_when_matched_and_releases_its_sender_at_the_copys_end() {
    // single copy: the request arrives at o_s + L, the receiver (computing 5 us
    // first) takes it then (o_r) and pulls when it posts, its CPU busy
    // (s-1)max(O, G); the sender is released L after the copy (handshake). Under
    // sharing (two pairs, G_node = G: half speed each) the copy takes twice as long.
    let p = params(1000, RendezvousCopy::Receiver, Rendezvous::Handshake);
    let m = 100_000u64;
    let mut text = String::from("num_ranks 4\n");
    for i in 0..2 {
        text += &format!("rank {i} {{\na: send {}b to {} tag 0\n}}\n", m + 1, i + 2);
    }
    for i in 0..2 {
        text += &format!(
            "rank {} {{\nc: calc 5000\nr: recv {}b from {i} tag 0\nr requires c\n}}\n",
            i + 2,
            m + 1
        );
    }
    let off = finish(&text, &p, Net::Off);
    let copy = m * p.big_g; // G > O
    let pull = 5000 * NS + p.o_r;
    assert_eq!(off[2], pull + copy);
    assert_eq!(off[0], pull + copy + p.l);
    assert_eq!(finish(&text, &p, Net::Flow(None)), off);
    let shared = finish(&text, &p, Net::Flow(Some((4, 10.0, 0.0))));
    assert_eq!(shared[2], pull + 2 * copy);
    assert_eq!(shared[0], pull + 2 * copy + p.l);
}

#[test]
fn a_sender_whose_messages_are_pulled_waits_the_gap_not_their_bytes() {
    // a burst of Isends: two rendezvous messages of 100000 bytes to rank 1, then 10 bytes
    // (eager) to rank 2, each started as soon as the one before. Pulled by the receiver, a
    // rendezvous message leaves as a request to send: the next starts when its o_s ends (g
    // is shorter), not (s-1)G later. Copied by the sender, each waits g + (s-1)G.
    let text = "num_ranks 3\n\
                rank 0 {\na: send 100000b to 1 tag 0\nb: send 100000b to 1 tag 1\n\
                b irequires a\nc: send 10b to 2 tag 0\nc irequires b\n}\n\
                rank 1 {\na: recv 100000b from 0 tag 0\nb: recv 100000b from 0 tag 1\n}\n\
                rank 2 {\na: recv 10b from 0 tag 0\n}\n";
    // the small message's way: o_s + L + o_r + 9 max(O, G)
    let small = 500 * NS + 1000 * NS + 700 * NS + 9 * 10;
    let pulled = params(1000, RendezvousCopy::Receiver, Rendezvous::Match);
    for net in [Net::Off, Net::Flow(None)] {
        assert_eq!(finish(text, &pulled, net)[2], 2 * 500 * NS + small);
    }
    let copied = params(1000, RendezvousCopy::Both, Rendezvous::Match);
    let third = 2 * (100 * NS + 99_999 * 10);
    assert_eq!(finish(text, &copied, Net::Off)[2], third + small);
}
