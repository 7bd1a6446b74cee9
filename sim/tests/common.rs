#![allow(dead_code)]
//! Helpers shared by the integration tests.

use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::phased::Phased;

pub const NS: u64 = 1000; // ps

/// LogGOPSim's defaults in ns (L=2500, o=1500, g=1000, G=6, O=0), all eager, gamma in ns/B.
pub fn params(gamma_ns: u64) -> Params {
    Params {
        l: 2500 * NS,
        o_s: 1500 * NS,
        o_r: 1500 * NS,
        g: 1000 * NS,
        big_g: 6 * NS,
        big_o: 0,
        eager_max: u64::MAX,
        gamma: gamma_ns * NS,
        hop: 0,
        rendezvous: Rendezvous::Match,
        rendezvous_copy: RendezvousCopy::Both,
        cold_start: None,
        regimes: Vec::new(),
    }
}

pub fn run_with(
    spec: &str,
    p: u32,
    n: u64,
    params: Params,
    topo: &str,
    congestion: bool,
) -> Outcome {
    let alg = collectives::parse(spec).expect("known collective");
    let c = Collective::new(alg, p, n, params.gamma).expect("valid collective");
    let net = Network::new(
        topology::parse(topo, p).expect("topology"),
        params.hop,
        congestion,
    );
    let mut wl = Phased::new(c);
    engine::run(
        Config {
            params,
            network: net,
            trace_limit: None,
        },
        &mut wl,
    )
    .expect("run completes")
}

pub fn run(spec: &str, p: u32, n: u64, gamma_ns: u64) -> u64 {
    run_with(spec, p, n, params(gamma_ns), "full", false).makespan()
}
