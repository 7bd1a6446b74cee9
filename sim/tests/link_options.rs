//! Half-duplex links and store-and-forward routing, against closed forms, on
//! every network model (no congestion, one message per link, flow level).

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::goal::GoalGraph;
use common::NS;
use proptest::prelude::*;

const L: u64 = 700;
const O: u64 = 300;
const H: u64 = 1000;
const G: u64 = 2;

fn params(hop: u64) -> Params {
    Params {
        l: L * NS,
        o_s: O * NS,
        o_r: O * NS,
        g: 0,
        big_g: G * NS,
        big_o: 0,
        eager_max: u64::MAX,
        gamma: 0,
        hop: hop * NS,
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    Off,
    Links,
    Flow,
}

const MODELS: [Model; 3] = [Model::Off, Model::Links, Model::Flow];

/// Each rank's finish time (ns) for a GOAL schedule on `topo`.
fn finish(text: &str, topo: &str, model: Model, half_duplex: bool, saf: bool) -> Vec<u64> {
    let mut g = GoalGraph::parse(text, "t", NS).unwrap();
    let p = commchar_sim::workload::Workload::ranks(&g);
    let t = topology::parse(topo, p).unwrap();
    let wires = Network::new(t, H * NS).with_links(half_duplex, saf);
    let net = match model {
        Model::Off => Net::ideal(wires),
        Model::Links => Net::reserved(wires),
        Model::Flow => Net::flow_level(wires, G * NS),
    };
    let config = Config {
        params: params(H),
        network: net,
        trace_limit: None,
    };
    let out = engine::run(config, &mut g).unwrap();
    out.finish.iter().map(|f| f / NS).collect()
}

/// `ranks` ranks; `src` sends `s` bytes to `dst`, which receives it.
fn one_message(ranks: u32, src: u32, dst: u32, s: u64) -> String {
    let mut text = format!("num_ranks {ranks}\n");
    for r in 0..ranks {
        text += &format!("rank {r} {{\n");
        if r == src {
            text += &format!("a: send {s}b to {dst} tag 0\n");
        }
        if r == dst {
            text += &format!("b: recv {s}b from {src} tag 0\n");
        }
        text += "}\n";
    }
    text
}

/// One message alone, store-and-forward: each of the hops before the last
/// carries the whole message ((s-1)G) and the rank it reaches forwards it
/// (o_r + o_s, not on switches); the last hop is the receiver's copy as ever:
/// o + L + hops H + (hops-1)((s-1)G + fwd) + o + (s-1)G.
#[test]
fn a_message_alone_costs_the_store_and_forward_closed_form_on_every_model() {
    // (topology, ranks, src, dst, hops, forwarding ranks on the way)
    let cases = [
        ("hypercube:3", 8, 0, 7, 3, true),
        ("hypercube:5", 32, 5, 26, 5, true),
        ("torus:4x4", 16, 0, 10, 4, true),
        ("torus:5x3", 15, 4, 7, 3, true),
        ("fattree:4", 16, 0, 15, 6, false),
        ("full", 4, 1, 3, 1, false),
    ];
    for (topo, ranks, src, dst, hops, through_ranks) in cases {
        for s in [1u64, 1001] {
            let ser = (s - 1) * G;
            let fwd = if through_ranks { 2 * O } else { 0 };
            let want = O + L + hops * H + (hops - 1) * (ser + fwd) + O + ser;
            let cut = O + L + hops * H + O + ser;
            for model in MODELS {
                for half in [false, true] {
                    let text = one_message(ranks, src, dst, s);
                    let got = finish(&text, topo, model, half, true)[dst as usize];
                    assert_eq!(got, want, "{topo} s={s} {model:?} half={half}");
                    let through = finish(&text, topo, model, half, false)[dst as usize];
                    assert_eq!(through, cut, "{topo} s={s} {model:?} cut-through");
                }
            }
        }
    }
}

/// With links reserved or at the flow level, a rank on the way forwards a
/// message only when its CPU is free, and is busy for it; without congestion
/// nothing contends, the forwarding only delays the message.
#[test]
fn a_busy_rank_on_the_way_delays_what_it_forwards() {
    // 0 -> 3 on a 2-cube crosses rank 1, which computes for 5 us first
    let text = "num_ranks 4\nrank 0 {\na: send 1001b to 3 tag 0\n}\nrank 1 {\nc: calc 5000\n}\n\
                rank 2 {\n}\nrank 3 {\nb: recv 1001b from 0 tag 0\n}\n";
    let ser = 1000 * G;
    for model in [Model::Links, Model::Flow] {
        let f = finish(text, "hypercube:2", model, true, true);
        assert_eq!(f[1], 5000 + 2 * O, "{model:?}");
        assert_eq!(f[3], 5000 + 2 * O + H + L + O + ser, "{model:?}");
    }
    let f = finish(text, "hypercube:2", Model::Off, true, true);
    assert_eq!(f[1], 5000);
    assert_eq!(f[3], O + H + ser + 2 * O + H + L + O + ser);
}

/// Two neighbours swap messages at once: on full-duplex links neither waits;
/// on a half-duplex link the second waits for the first's hop and bytes.
#[test]
fn a_swap_over_a_half_duplex_link_waits_for_the_other_direction() {
    let s = 501u64;
    let ser = (s - 1) * G;
    // (topology, ranks, a, b): the torus pair is joined by the wrap-around link
    for (topo, ranks, a, b) in [
        ("full", 2, 0, 1),
        ("hypercube:3", 8, 2, 6),
        ("torus:4x4", 16, 0, 3),
        ("torus:4x4", 16, 5, 9),
    ] {
        let mut text = format!("num_ranks {ranks}\n");
        for r in 0..ranks {
            text += &format!("rank {r} {{\n");
            if r == a || r == b {
                let peer = if r == a { b } else { a };
                text += &format!("x: send {s}b to {peer} tag 0\ny: recv {s}b from {peer} tag 0\n");
            }
            text += "}\n";
        }
        for saf in [false, true] {
            let full = finish(&text, topo, Model::Links, false, saf);
            assert_eq!(
                (full[a as usize], full[b as usize]),
                (O + L + H + O + ser, O + L + H + O + ser)
            );
            let half = finish(&text, topo, Model::Links, true, saf);
            // the lower rank's send is handled first and takes the link
            let late = O + (H + ser) + H + L + O + ser;
            assert_eq!(
                (half[a as usize], half[b as usize]),
                (late, O + L + H + O + ser),
                "{topo}"
            );
            // without congestion no link is shared
            assert_eq!(
                finish(&text, topo, Model::Off, true, saf),
                finish(&text, topo, Model::Off, false, saf)
            );
        }
    }
}

/// At the flow level, two copies crossing one cable in opposite directions
/// share its bandwidth when it is half duplex.
#[test]
fn opposite_flows_share_a_half_duplex_link() {
    let text = "num_ranks 2\nrank 0 {\na: send 1001b to 1 tag 0\nb: recv 1001b from 1 tag 0\n}\n\
                rank 1 {\na: send 1001b to 0 tag 0\nb: recv 1001b from 0 tag 0\n}\n";
    let alone = O + L + H + O + 1000 * G;
    let full = finish(text, "full", Model::Flow, false, false);
    assert_eq!(full, vec![alone, alone]);
    // each copy at half the link's rate: twice the bytes' time (alone, the
    // copy's rate is its bytes over o_r plus their time, as the flow level has it)
    let shared = O + L + H + 2 * 1000 * G;
    let half = finish(text, "full", Model::Flow, true, false);
    assert_eq!(half, vec![shared, shared]);
}

proptest! {
    /// Every cable's two directions, and nothing else, share an undirected id.
    #[test]
    fn undirected_ids_pair_the_two_directions_of_each_cable(
        spec in prop::sample::select(vec!["full", "hypercube:4", "torus:4x4", "torus:5x3x3", "torus:3x4", "fattree:4"]),
    ) {
        let p = match spec { "fattree:4" => 16, "torus:5x3x3" => 45, "torus:3x4" => 12, "full" => 6, _ => 16 };
        let t = topology::parse(spec, p).unwrap();
        let mut links = std::collections::BTreeMap::<u64, std::collections::BTreeSet<u64>>::new();
        let mut route = Vec::new();
        for a in 0..p {
            for b in 0..p {
                route.clear();
                t.route(a, b, &mut route);
                for &l in &route {
                    let u = t.undirected(l);
                    prop_assert!(u < t.link_ids());
                    prop_assert_eq!(t.undirected(u), u);
                    links.entry(u).or_default().insert(l);
                }
                if t.hops(a, b) == 1 {
                    // a neighbour's way back is the same cable
                    let mut back = Vec::new();
                    t.route(b, a, &mut back);
                    prop_assert_eq!(t.undirected(back[0]), t.undirected(route[0]));
                }
            }
        }
        for (u, directed) in &links {
            prop_assert_eq!(directed.len(), 2, "undirected id {} joins {:?}", u, directed);
        }
    }

    /// Store-and-forward through ranks follows the topology's route: the
    /// nodes `next_hop` walks through cross the route's links in order.
    #[test]
    fn next_hops_walk_the_route(
        spec in prop::sample::select(vec!["hypercube:5", "torus:4x4", "torus:5x3x3", "torus:6x5"]),
        a in 0u32..90, b in 0u32..90,
    ) {
        let p = match spec { "hypercube:5" => 32, "torus:4x4" => 16, "torus:5x3x3" => 45, _ => 30 };
        let (a, b) = (a % p, b % p);
        let t = topology::parse(spec, p).unwrap();
        let mut route = Vec::new();
        t.route(a, b, &mut route);
        let mut at = a;
        for &link in &route {
            let (l, next) = t.next_hop(at, b).unwrap();
            prop_assert_eq!(l, link);
            prop_assert_eq!(t.hops(next, b) + 1, t.hops(at, b));
            at = next;
        }
        prop_assert_eq!(at, b);
    }
}
