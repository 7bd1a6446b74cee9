//! A node's shared copy bandwidth at the flow level: the messages between ranks
//! of one node share B_node on top of each one's own G.

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::params::{self, Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::flow_level::FlowLevel;
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::Workload;
use common::NS;

/// Latency `l` and a gap per byte `gap`, nothing else.
fn params(l: u64, gap: u64) -> Params {
    Params {
        l,
        o_s: 0,
        o_r: 0,
        g: 0,
        big_g: gap,
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
    }
}

/// k pairs (rank i sends `bytes` to rank i + k) all at once.
fn pairs(k: u32, bytes: u64) -> String {
    let mut text = format!("num_ranks {}\n", 2 * k);
    for i in 0..k {
        text += &format!("rank {i} {{\na: send {bytes}b to {} tag 0\n}}\n", i + k);
    }
    for i in 0..k {
        text += &format!("rank {} {{\na: recv {bytes}b from {i} tag 0\n}}\n", i + k);
    }
    text
}

/// Each rank's finish time; `node`: (ranks per node, node gap in ps per byte).
fn finish(text: &str, l: u64, gap: u64, node: Option<(u32, f64)>) -> Vec<u64> {
    let mut g = GoalGraph::parse(text, "t", NS).unwrap();
    let ranks = g.ranks();
    let mut flows = FlowLevel::new(
        Network::new(topology::parse("full", ranks).unwrap(), 0),
        gap,
    );
    if let Some((per, node_gap)) = node {
        flows = flows.with_node_resource((0..ranks).map(|r| r / per).collect(), node_gap, 0.0);
    }
    let network = flows.into();
    let config = Config {
        params: params(l, gap),
        network,
        trace_limit: None,
    };
    engine::run(config, &mut g).unwrap().finish
}

#[test]
fn k_simultaneous_pairs_take_the_larger_of_their_own_gap_and_the_nodes_share() {
    // m = 100000 bytes moved (a message of m + 1: the first byte is in L), G = 10 ps/B,
    // G_node = 4 ps/B (B_node 2.5 times one pair's bandwidth), L = 1 us
    let (m, gap, node_gap, l) = (100_000u64, 10u64, 4.0f64, 1000 * NS);
    for k in 1..=8u32 {
        let text = pairs(k, m + 1);
        let shared = finish(&text, l, gap, Some((2 * k, node_gap)));
        let want = (m * gap).max(k as u64 * m * node_gap as u64) + l;
        assert!(
            shared[k as usize..].iter().all(|&t| t == want),
            "k = {k}: {shared:?}, want {want}"
        );
        // without the node's resource, or with every rank on a node of its own: m G + L
        let free = finish(&text, l, gap, None);
        assert!(free[k as usize..].iter().all(|&t| t == m * gap + l));
        assert_eq!(finish(&text, l, gap, Some((1, node_gap))), free);
    }
}

#[test]
fn pairs_split_over_nodes_share_only_within_their_node() {
    // 8 pairs, rank i -> i + 1 for even i, each pair within one node
    let (m, gap, node_gap, l) = (100_000u64, 10u64, 4.0f64, 0u64);
    let mut text = String::from("num_ranks 16\n");
    for r in 0..16u32 {
        text += &if r % 2 == 0 {
            format!("rank {r} {{\na: send {}b to {} tag 0\n}}\n", m + 1, r + 1)
        } else {
            format!("rank {r} {{\na: recv {}b from {} tag 0\n}}\n", m + 1, r - 1)
        };
    }
    // 4 ranks a node: two pairs share each node, 2 m G_node = 800000 < m G = 1000000
    let four = finish(&text, l, gap, Some((4, node_gap)));
    assert_eq!(four[1], m * gap);
    // 16 ranks on one node: eight pairs, 8 m G_node
    let one = finish(&text, l, gap, Some((16, node_gap)));
    assert_eq!(one[1], 8 * m * node_gap as u64);
}

#[test]
fn the_node_gap_is_read_from_the_models_concurrency_section() {
    let model = r#"{"format": "commchar-model", "version": 1, "libraries": {"lib": {
        "operations": {}, "loggp": {"L": 1, "o_s": 0.5, "o_r": 0.5, "g": 0.1, "G": 0.0001},
        "concurrency": {"G_node": 2.5e-5, "B_node": 40000, "c_node": 0.05}}}}"#;
    let gap = params::node_gap_from_model(model, "m.json", Some("lib")).unwrap();
    assert_eq!(gap, Some(25.0));
    let without = model.replace(r#""concurrency""#, r#""other""#);
    assert_eq!(
        params::node_gap_from_model(&without, "m.json", Some("lib")).unwrap(),
        None
    );
    let broken = model.replace("2.5e-5", "0");
    let err = params::node_gap_from_model(&broken, "m.json", Some("lib")).unwrap_err();
    assert!(err.to_string().contains("concurrency.G_node"), "{err}");
    // c_node, 0.05 us a message: 50000 ps; none without the section or the key
    let cost = params::node_cost_from_model(model, "m.json", Some("lib")).unwrap();
    assert_eq!(cost, 50_000.0);
    assert_eq!(
        params::node_cost_from_model(&without, "m.json", Some("lib")).unwrap(),
        0.0
    );
    let no_key = model.replace(r#", "c_node": 0.05"#, "");
    assert_eq!(
        params::node_cost_from_model(&no_key, "m.json", Some("lib")).unwrap(),
        0.0
    );
    let negative = model.replace("0.05", "-1");
    let err = params::node_cost_from_model(&negative, "m.json", Some("lib")).unwrap_err();
    assert!(err.to_string().contains("concurrency.c_node"), "{err}");
}
