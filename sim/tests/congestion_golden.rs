//! Golden makespans on every topology, congestion on and off: the network's
//! data structures may change, its answers may not. `COMMCHAR_BLESS=1 cargo
//! test --test congestion_golden` rewrites the golden file (only when a change
//! of results is intended and explained in docs/simulator.md).

mod common;
use commchar_sim::params::{MsgCost, Params, Regime, Rendezvous};
use common::{params, run_with, NS};

const GOLDEN: &str = "tests/golden/congestion.txt";

const COLLECTIVES: &[&str] = &[
    "allreduce:rabenseifner",
    "allreduce:ring",
    "allreduce:recursive_doubling",
    "alltoall:direct",
    "alltoall:pairwise",
    "bcast:binomial",
    "bcast:scatter_allgather",
    "allgather:bruck",
    "allgather:ring",
    "gather:linear",
    "barrier",
    "scan",
];

/// (ranks, topologies): every kind, 2D and 3D tori, and one machine bigger than p.
const MACHINES: &[(u32, &[&str])] = &[
    (
        64,
        &[
            "full",
            "hypercube",
            "torus:8x8",
            "torus:4x4x4",
            "fattree:8",
            "torus:16x4",
        ],
    ),
    (
        27,
        &[
            "full",
            "hypercube:5",
            "torus:3x3x3",
            "torus:9x3",
            "fattree:6",
        ],
    ),
];

/// Eager with hops; rendezvous (handshake) with hops; hops of zero, where a
/// link is held for the serialization alone; no latency nor overhead, with and
/// without hops, where a message arrives when it is sent or just after (the
/// engine reserves routes in batches, before the first event at or after the
/// earliest arrival: there, same-time order decides).
fn variants() -> Vec<(&'static str, Params)> {
    let mut hop = params(1);
    hop.hop = 100 * NS;
    let mut rdv = hop.clone();
    rdv.eager_max = 4096;
    rdv.rendezvous = Rendezvous::Handshake;
    let no_hop = params(0);
    // size regimes: messages of one run pay different o_s, so they leave out of order
    let mut regimes = hop.clone();
    let cost = |o_s: u64, g: u64| MsgCost {
        o_s: o_s * NS,
        o_r: 500 * NS,
        big_g: g * NS,
        big_o: 0,
        big_o_r: None,
        l: None,
    };
    regimes.regimes = vec![
        Regime {
            start: 0,
            cost: cost(3000, 2),
        },
        Regime {
            start: 1024,
            cost: cost(200, 9),
        },
    ];
    let mut tight = params(0);
    (tight.l, tight.o_s, tight.o_r, tight.g) = (0, 0, 0, 0);
    let mut tight_hop = tight.clone();
    tight_hop.hop = NS;
    vec![
        ("eager", hop),
        ("rendezvous", rdv),
        ("nohop", no_hop),
        ("regimes", regimes),
        ("tight", tight),
        ("tight-hop", tight_hop),
    ]
}

fn power_of_two_only(spec: &str) -> bool {
    spec.contains("rabenseifner") || spec.contains("recursive_doubling") || spec == "scan"
}

fn fingerprints() -> Vec<String> {
    let mut lines = Vec::new();
    for &(p, topos) in MACHINES {
        for &spec in COLLECTIVES {
            if !p.is_power_of_two() && power_of_two_only(spec) {
                continue;
            }
            for (vname, prm) in variants() {
                for n in [100u64, 10_000] {
                    for topo in topos {
                        for congestion in [false, true] {
                            let out = run_with(spec, p, n, prm.clone(), topo, congestion);
                            let sum: u128 = out.finish.iter().map(|&f| f as u128).sum();
                            lines.push(format!(
                                "{spec} p={p} n={n} {vname} {topo} congestion={congestion}: makespan={} sum={sum} events={}",
                                out.makespan(),
                                out.events
                            ));
                        }
                    }
                }
            }
        }
    }
    // the congested torus, scaled down: long routes, many messages per link
    for (p, topo) in [
        (256, "torus:16x16"),
        (1024, "torus:32x32"),
        (512, "torus:8x8x8"),
    ] {
        let mut prm = params(0);
        prm.hop = 50 * NS;
        let out = run_with("allreduce:rabenseifner", p, 1 << 20, prm, topo, true);
        lines.push(format!(
            "allreduce:rabenseifner p={p} n=1MiB {topo} hop=50: makespan={} events={}",
            out.makespan(),
            out.events
        ));
    }
    lines
}

#[test]
fn makespans_match_the_golden_file() {
    let got = fingerprints();
    if std::env::var_os("COMMCHAR_BLESS").is_some() {
        std::fs::write(GOLDEN, got.join("\n") + "\n").expect("golden file is writable");
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).expect("golden file exists");
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(got.len(), want.len(), "number of cases changed");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
}
