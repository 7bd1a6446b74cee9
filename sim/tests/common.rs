#![allow(dead_code)]
//! Helpers shared by the integration tests.

use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{Params, Rendezvous, RendezvousCopy};
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::phased::Phased;
use commchar_sim::SimError;

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
        taken_in_calls: false,
        cold_start: None,
        regimes: Vec::new(),
        self_message: Vec::new(),
        send_post: Vec::new(),
        noise: None,
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
    let wires = Network::new(topology::parse(topo, p).expect("topology"), params.hop);
    let net = if congestion {
        Net::reserved(wires)
    } else {
        Net::ideal(wires)
    };
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

/// A GOAL schedule (`text`, times in ns) run under `params` on a full network without congestion.
pub fn run_goal(text: &str, params: Params) -> Result<Outcome, SimError> {
    let mut g = GoalGraph::parse(text, "test.goal", NS)?;
    let p = commchar_sim::workload::Workload::ranks(&g);
    let net = Net::ideal(Network::new(topology::parse("full", p)?, 0));
    engine::run(
        Config {
            params,
            network: net,
            trace_limit: None,
        },
        &mut g,
    )
}

pub fn run(spec: &str, p: u32, n: u64, gamma_ns: u64) -> u64 {
    run_with(spec, p, n, params(gamma_ns), "full", false).makespan()
}

/// One 64-byte trace record's fields (docs/trace-format.md), for hand-written traces.
#[derive(Default, Clone, Copy)]
pub struct R {
    pub call: u16,
    pub flags: u16,
    pub comm: i32,
    pub peer: i32,
    pub tag: i32,
    pub bytes: u64,
    pub bytes2: u64,
    pub req: u64,
    pub aux: i32,
    pub aux2: i32,
}

/// The record of a call from `start` to `end` (ns).
pub fn record(r: R, start: u64, end: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(&r.call.to_le_bytes());
    b[2..4].copy_from_slice(&r.flags.to_le_bytes());
    b[4..8].copy_from_slice(&r.comm.to_le_bytes());
    b[8..12].copy_from_slice(&r.peer.to_le_bytes());
    b[12..16].copy_from_slice(&r.tag.to_le_bytes());
    b[16..24].copy_from_slice(&r.bytes.to_le_bytes());
    b[24..32].copy_from_slice(&r.bytes2.to_le_bytes());
    b[32..40].copy_from_slice(&start.to_le_bytes());
    b[40..48].copy_from_slice(&end.to_le_bytes());
    b[48..56].copy_from_slice(&r.req.to_le_bytes());
    b[56..60].copy_from_slice(&r.aux.to_le_bytes());
    b[60..64].copy_from_slice(&r.aux2.to_le_bytes());
    b
}

/// A rank file's 256-byte header (version 1, 64-byte records) for `records` records,
/// the rank's clock running from `t0` to `t_end` (ns), on host `host`.
pub fn rank_header(
    rank: i32,
    size: i32,
    t0: u64,
    t_end: u64,
    records: usize,
    host: &[u8],
) -> Vec<u8> {
    let mut h = vec![0u8; 256];
    h[0..8].copy_from_slice(b"CCTRACE1");
    h[8..12].copy_from_slice(&1u32.to_le_bytes());
    h[12..16].copy_from_slice(&64u32.to_le_bytes());
    h[16..20].copy_from_slice(&rank.to_le_bytes());
    h[20..24].copy_from_slice(&size.to_le_bytes());
    h[24..32].copy_from_slice(&t0.to_le_bytes());
    h[32..40].copy_from_slice(&t_end.to_le_bytes());
    h[40..48].copy_from_slice(&(records as u64).to_le_bytes());
    h[48..52].copy_from_slice(&1u32.to_le_bytes());
    h[56..56 + host.len()].copy_from_slice(host);
    h
}

/// Replays a directory of rank files on a fully connected network, with the breakdown.
pub fn replay_dir(
    dir: &std::path::Path,
    opts: &commchar_sim::workload::replay::Options,
    params: Params,
) -> Result<Outcome, commchar_sim::SimError> {
    let mut r = commchar_sim::workload::replay::Replay::load(dir, opts)?;
    r.price_exchanges(params.eager_max); // as `--replay` does
    let net = Net::ideal(Network::new(
        topology::parse("full", r.measured.len() as u32)?,
        0,
    ));
    engine::run_accounted(
        Config {
            params,
            network: net,
            trace_limit: None,
        },
        &mut r,
    )
}

/// A directory of rank files, removed when dropped.
pub struct TraceDir(pub std::path::PathBuf);

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes each rank's records, every one at `t0` (no computation), as rank files of a
/// fresh temporary directory named after `kind` and `name`.
pub fn write_at(kind: &str, name: &str, ranks: &[Vec<R>], t0: u64) -> TraceDir {
    let dir = std::env::temp_dir().join(format!("commchar-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (rank, recs) in ranks.iter().enumerate() {
        let mut h = rank_header(rank as i32, ranks.len() as i32, t0, t0, recs.len(), b"");
        for r in recs {
            h.extend_from_slice(&record(*r, t0, t0));
        }
        std::fs::write(dir.join(format!("rank-{rank}.cctrace")), h).unwrap();
    }
    TraceDir(dir)
}

/// Writes each rank's records at their own (start, end) times in ns, the gaps between
/// them the rank's computation, as rank files of a fresh temporary directory.
pub fn write_timed(kind: &str, name: &str, ranks: &[Vec<(R, u64, u64)>]) -> TraceDir {
    let dir = std::env::temp_dir().join(format!("commchar-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (rank, recs) in ranks.iter().enumerate() {
        let t0 = recs.first().map_or(0, |r| r.1);
        let t_end = recs.last().map_or(0, |r| r.2);
        let mut h = rank_header(rank as i32, ranks.len() as i32, t0, t_end, recs.len(), b"");
        for &(r, start, end) in recs {
            h.extend_from_slice(&record(r, start, end));
        }
        std::fs::write(dir.join(format!("rank-{rank}.cctrace")), h).unwrap();
    }
    TraceDir(dir)
}
