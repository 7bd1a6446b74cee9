//! Messages a rank sends to itself: the library's self path (no network, no
//! NIC, never rendezvous, one copy), in closed form.

mod common;
use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::Workload;
use common::{params, NS};

/// O = 2 ns/B, so the copy is visible; L, g and G are LogGOPSim's defaults.
fn model() -> Params {
    let mut p = params(0);
    p.big_o = 2 * NS;
    p
}

fn simulate(text: &str, p: Params, congestion: bool) -> Outcome {
    let mut g = GoalGraph::parse(text, "self.goal", NS).expect("parses");
    let ranks = g.ranks();
    let wires = Network::new(topology::parse("full", ranks).unwrap(), p.hop);
    let net = if congestion {
        Net::reserved(wires)
    } else {
        Net::ideal(wires)
    };
    engine::run(
        Config {
            params: p,
            network: net,
            trace_limit: None,
        },
        &mut g,
    )
    .expect("run completes")
}

const SIZE: u64 = 1001;

/// The receive is posted before the send starts.
fn posted_first() -> String {
    format!(
        "num_ranks 1\nrank 0 {{\nr: recv {SIZE}b from 0 tag 0\ns: send {SIZE}b to 0 tag 0\ns irequires r\n}}\n"
    )
}

/// The send completes, 10 us of computation follow, then the receive is posted.
fn posted_after() -> String {
    format!(
        "num_ranks 1\nrank 0 {{\ns: send {SIZE}b to 0 tag 0\nc: calc 10000\nr: recv {SIZE}b from 0 tag 0\nc requires s\nr requires c\n}}\n"
    )
}

/// o_s + o_r + (s-1)O: no L, no G, one copy.
fn self_cost(p: &Params) -> u64 {
    p.o_s + p.o_r + (SIZE - 1) * p.big_o
}

#[test]
fn eager_receive_posted_first() {
    let p = model();
    let out = simulate(&posted_first(), p.clone(), false);
    assert_eq!(out.makespan(), self_cost(&p));
    assert_eq!(out.makespan(), (1500 + 1500 + 2000) * NS);
    assert_eq!((out.messages, out.rendezvous), (1, 0));
}

#[test]
fn eager_receive_posted_after() {
    let p = model();
    let out = simulate(&posted_after(), p.clone(), false);
    // the message is copied when it is there, then the computation runs
    assert_eq!(out.makespan(), self_cost(&p) + 10_000 * NS);
}

#[test]
fn between_ranks_the_same_message_pays_the_network() {
    // the contrast: rank 0 to rank 1 pays L and max(O, G) at the receiver (the
    // message leaves after o_s, the sender's own copy runs meanwhile)
    let p = model();
    let text = format!(
        "num_ranks 2\nrank 0 {{\ns: send {SIZE}b to 1 tag 0\n}}\nrank 1 {{\nr: recv {SIZE}b from 0 tag 0\n}}\n"
    );
    let out = simulate(&text, p.clone(), false);
    let s1 = SIZE - 1;
    let expect = p.o_s + p.l + p.o_r + s1 * p.big_o.max(p.big_g);
    assert_eq!(out.finish[1], expect);
    assert!(out.makespan() > self_cost(&p) + p.l);
}

#[test]
fn above_s_never_rendezvous() {
    for (rendezvous, copy) in [
        (Rendezvous::Match, RendezvousCopy::Both),
        (Rendezvous::Handshake, RendezvousCopy::Both),
        (Rendezvous::Handshake, RendezvousCopy::Receiver),
    ] {
        let mut p = model();
        p.eager_max = 64;
        p.rendezvous = rendezvous;
        p.rendezvous_copy = copy;
        let first = simulate(&posted_first(), p.clone(), false);
        assert_eq!(first.makespan(), self_cost(&p), "{rendezvous:?} {copy:?}");
        assert_eq!(first.rendezvous, 0);
        // a blocking send before its receive completes (eager), no deadlock
        let after = simulate(&posted_after(), p.clone(), false);
        assert_eq!(after.makespan(), self_cost(&p) + 10_000 * NS);
        assert_eq!(after.rendezvous, 0);
    }
}

#[test]
fn self_messages_use_no_nic() {
    // two sends back to back are not spaced by g + (s-1)G: the second starts
    // when the CPU is free of the first (o_s), and each copy follows
    let p = model();
    let text = format!(
        "num_ranks 1\nrank 0 {{\nr1: recv {SIZE}b from 0 tag 1\nr2: recv {SIZE}b from 0 tag 2\n\
         s1: send {SIZE}b to 0 tag 1\ns2: send {SIZE}b to 0 tag 2\ns1 irequires r1\ns1 irequires r2\ns2 irequires s1\n}}\n"
    );
    let out = simulate(&text, p.clone(), false);
    assert_eq!(out.makespan(), 2 * self_cost(&p));
    assert!(p.g + (SIZE - 1) * p.big_g > p.o_s);
}

#[test]
fn congestion_on_charges_the_same() {
    let p = model();
    let first = simulate(&posted_first(), p.clone(), true);
    assert_eq!(first.makespan(), self_cost(&p));
    let after = simulate(&posted_after(), p.clone(), true);
    assert_eq!(after.makespan(), self_cost(&p) + 10_000 * NS);
}

#[test]
fn generated_collectives_never_send_to_self() {
    use commchar_sim::engine::SpanKind;
    use commchar_sim::workload::collectives::{self, Collective};
    use commchar_sim::workload::phased::Phased;
    for name in collectives::names() {
        let alg = collectives::parse(name).unwrap();
        for p in [2u32, 3, 4, 5, 7, 8, 9, 16] {
            for n in [8u64, 1000, 65536] {
                let Ok(c) = Collective::new(alg, p, n, 0) else {
                    continue;
                };
                let net = Net::ideal(Network::new(topology::parse("full", p).unwrap(), 0));
                let out = engine::run(
                    Config {
                        params: model(),
                        network: net,
                        trace_limit: Some(1 << 20),
                    },
                    &mut Phased::new(c),
                )
                .expect("run completes");
                let spans = out.trace.expect("traced");
                assert!(!spans.is_empty());
                let own = spans
                    .iter()
                    .filter(|s| s.kind == SpanKind::Send && s.peer == s.rank)
                    .count();
                assert_eq!(own, 0, "{name} p={p} n={n} sends to itself");
            }
        }
    }
}

#[test]
fn a_self_message_pays_the_smallest_messages_overheads_and_its_own_copy() {
    // the model's regimes: from 0, o 100/50 ns; from 1000 B (a rendezvous regime whose
    // o_s and o_r carry the handshake), o 5/4 us; O = 2 ns/B in both
    let regime = |start, o_s, o_r| commchar_sim::params::Regime {
        start,
        cost: commchar_sim::params::MsgCost {
            o_s: o_s * NS,
            o_r: o_r * NS,
            big_g: 6 * NS,
            big_o: 2 * NS,
            big_o_r: None,
            l: None,
        },
    };
    let mut p = model();
    p.regimes = vec![regime(0, 100, 50), regime(1000, 5000, 4000)];
    let out = simulate(&posted_first(), p.clone(), false);
    assert_eq!(out.makespan(), (100 + 50 + (SIZE - 1) * 2) * NS);
    // between ranks the same size pays its own regime
    let text = format!(
        "num_ranks 2\nrank 0 {{\ns: send {SIZE}b to 1 tag 0\n}}\nrank 1 {{\nr: recv {SIZE}b from 0 tag 0\n}}\n"
    );
    let out = simulate(&text, p.clone(), false);
    assert_eq!(out.finish[1], (5000 + 4000 + (SIZE - 1) * 6) * NS + p.l);
}

#[test]
fn a_measured_self_path_is_charged_as_measured() {
    // one call to oneself: 100 ns at 0 B, 300 ns at 2000 B, 1300 ns at 12000 B
    let mut p = model();
    p.self_message = vec![(0, 100 * NS), (2000, 300 * NS), (12_000, 1300 * NS)];
    // between the sizes: linear, half to the send and half to the receive
    let out = simulate(&posted_first(), p.clone(), false);
    assert_eq!(out.makespan(), 100 * NS + 200 * NS * SIZE / 2000);
    assert_eq!(p.self_time(7000), Some(800 * NS));
    // beyond the largest size along the last segment, below the first along the first
    assert_eq!(p.self_time(22_000), Some(2300 * NS));
    assert_eq!(p.self_time(0), Some(100 * NS));
    let c = p.self_cost(2000);
    assert_eq!((c.o_s, c.o_r, c.big_o, c.big_g), (150 * NS, 150 * NS, 0, 0));
    // a message to another rank is not affected
    let text = format!(
        "num_ranks 2\nrank 0 {{\ns: send {SIZE}b to 1 tag 0\n}}\nrank 1 {{\nr: recv {SIZE}b from 0 tag 0\n}}\n"
    );
    let plain = model();
    assert_eq!(
        simulate(&text, p, false).finish[1],
        simulate(&text, plain, false).finish[1]
    );
}
