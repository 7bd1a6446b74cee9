//! Network topologies behind one trait: hop counts and deterministic routes.
//!
//! A route is the list of directed links a message crosses, as integer ids;
//! the network keeps one "free at" time per link when congestion is simulated.

use crate::error::{usage, Result};

pub trait Topology {
    /// Human-readable name, e.g. "torus:8x8".
    fn name(&self) -> String;
    /// Number of links a message from `src` to `dst` crosses.
    fn hops(&self, src: u32, dst: u32) -> u32;
    /// Appends the ids of the directed links from `src` to `dst`, in order.
    fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>);
    /// An upper bound of the link ids, so that link state can live in a vector.
    fn link_ids(&self) -> u64;
    /// Whether traffic spreads over most link ids (then their state is worth
    /// huge pages); a fully connected network's ids are mostly never used.
    fn links_dense(&self) -> bool {
        true
    }
    /// The id both directions of `link`'s cable share, for half-duplex links
    /// (one message at a time over both directions together).
    fn undirected(&self, link: u64) -> u64;
    /// Store-and-forward through ranks: the first link from node `at` towards
    /// `dst` (`at != dst`) and the node it reaches, where messages pass through
    /// processor nodes that forward them (hypercube, torus); None where they
    /// pass through switches or no node at all (fat tree, fully connected).
    fn next_hop(&self, _at: u32, _dst: u32) -> Option<(u64, u32)> {
        None
    }
    /// Whether messages pass through processor nodes (`next_hop` answers).
    fn through_ranks(&self) -> bool {
        false
    }
}

/// Every pair of ranks has its own link in each direction.
pub struct FullyConnected {
    pub ranks: u32,
}

impl Topology for FullyConnected {
    fn name(&self) -> String {
        "full".into()
    }
    fn hops(&self, src: u32, dst: u32) -> u32 {
        u32::from(src != dst)
    }
    fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>) {
        if src != dst {
            out.push(src as u64 * self.ranks as u64 + dst as u64);
        }
    }
    fn link_ids(&self) -> u64 {
        self.ranks as u64 * self.ranks as u64
    }
    fn links_dense(&self) -> bool {
        false
    }
    fn undirected(&self, link: u64) -> u64 {
        let n = self.ranks as u64;
        let (a, b) = (link / n, link % n);
        a.min(b) * n + a.max(b)
    }
}

/// A hypercube of 2^dims nodes, routed in dimension order (lowest bit first).
pub struct Hypercube {
    pub dims: u32,
}

impl Topology for Hypercube {
    fn name(&self) -> String {
        format!("hypercube:{}", self.dims)
    }
    fn hops(&self, src: u32, dst: u32) -> u32 {
        (src ^ dst).count_ones()
    }
    fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>) {
        let mut at = src;
        for d in 0..self.dims {
            if (at ^ dst) & (1 << d) != 0 {
                out.push(at as u64 * self.dims as u64 + d as u64);
                at ^= 1 << d;
            }
        }
    }
    fn link_ids(&self) -> u64 {
        (1u64 << self.dims) * self.dims as u64
    }
    fn undirected(&self, link: u64) -> u64 {
        let dims = self.dims as u64;
        let (node, d) = (link / dims, link % dims);
        node.min(node ^ (1 << d)) * dims + d
    }
    fn next_hop(&self, at: u32, dst: u32) -> Option<(u64, u32)> {
        let d = (at ^ dst).trailing_zeros();
        Some((at as u64 * self.dims as u64 + d as u64, at ^ (1 << d)))
    }
    fn through_ranks(&self) -> bool {
        true
    }
}

/// A 2D or 3D torus with wrap-around links, routed in dimension order along
/// the shorter way round (ties go in the positive direction).
pub struct Torus {
    pub dims: Vec<u32>,
}

impl Torus {
    fn coords(&self, mut r: u32) -> [u32; 3] {
        let mut c = [0; 3];
        for (i, &d) in self.dims.iter().enumerate() {
            c[i] = r % d;
            r /= d;
        }
        c
    }
    /// The id of the link of dimension i and direction `plus` that leaves
    /// coordinate 0 of `at`'s line (the one leaving coordinate c is c beyond).
    fn link_base(&self, i: usize, plus: bool, at: &[u32; 3], nodes: u64) -> u64 {
        let d = self.dims[i] as u64;
        // position of `at` among the nodes ordered by coordinate i first
        let mut rest = 0u64;
        for j in (0..self.dims.len()).rev() {
            if j != i {
                rest = rest * self.dims[j] as u64 + at[j] as u64;
            }
        }
        (i as u64 * 2 + u64::from(plus)) * nodes + rest * d
    }
    /// The coordinate after c along dimension i in direction `plus`.
    fn step(&self, i: usize, plus: bool, c: u64) -> u64 {
        let d = self.dims[i] as u64;
        match (plus, c) {
            (true, c) if c + 1 == d => 0,
            (true, c) => c + 1,
            (false, 0) => d - 1,
            (false, c) => c - 1,
        }
    }
    /// Steps and direction (+1 or -1) along dimension i.
    fn way(&self, i: usize, from: u32, to: u32) -> (u32, bool) {
        let d = self.dims[i];
        let fwd = (to + d - from) % d;
        if fwd <= d - fwd {
            (fwd, true)
        } else {
            (d - fwd, false)
        }
    }
}

impl Topology for Torus {
    fn name(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(u32::to_string).collect();
        format!("torus:{}", dims.join("x"))
    }
    fn hops(&self, src: u32, dst: u32) -> u32 {
        let (a, b) = (self.coords(src), self.coords(dst));
        (0..self.dims.len())
            .map(|i| self.way(i, a[i], b[i]).0)
            .sum()
    }
    // Links are numbered by dimension and direction, then by node with the
    // route's own coordinate varying fastest, so that the links of a straight
    // run are neighbours in memory.
    fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>) {
        let mut at = self.coords(src);
        let to = self.coords(dst);
        let nodes: u64 = self.dims.iter().map(|&d| d as u64).product();
        for i in 0..self.dims.len() {
            let (steps, plus) = self.way(i, at[i], to[i]);
            if steps == 0 {
                continue;
            }
            let base = self.link_base(i, plus, &at, nodes);
            let mut c = at[i] as u64;
            for _ in 0..steps {
                out.push(base + c);
                c = self.step(i, plus, c);
            }
            at[i] = c as u32;
        }
    }
    fn link_ids(&self) -> u64 {
        let nodes: u64 = self.dims.iter().map(|&d| d as u64).product();
        nodes * self.dims.len() as u64 * 2
    }
    // a link in the negative direction shares its cable with the positive
    // one leaving the coordinate below
    fn undirected(&self, link: u64) -> u64 {
        let nodes: u64 = self.dims.iter().map(|&d| d as u64).product();
        let (block, within) = (link / nodes, link % nodes);
        if block % 2 == 1 {
            return link;
        }
        let d = self.dims[(block / 2) as usize] as u64;
        let c = within % d;
        (block + 1) * nodes + within - c + (c + d - 1) % d
    }
    fn next_hop(&self, at: u32, dst: u32) -> Option<(u64, u32)> {
        let mut here = self.coords(at);
        let to = self.coords(dst);
        let nodes: u64 = self.dims.iter().map(|&d| d as u64).product();
        let i = (0..self.dims.len()).find(|&i| here[i] != to[i])?;
        let (_, plus) = self.way(i, here[i], to[i]);
        let link = self.link_base(i, plus, &here, nodes) + here[i] as u64;
        here[i] = self.step(i, plus, here[i] as u64) as u32;
        let next = (0..self.dims.len())
            .rev()
            .fold(0u32, |r, j| r * self.dims[j] + here[j]);
        Some((link, next))
    }
    fn through_ranks(&self) -> bool {
        true
    }
}

/// A three-level fat tree of k-port switches (k pods of k/2 edge and k/2
/// aggregation switches, (k/2)^2 core switches, k^3/4 hosts). Up-links are
/// chosen from the destination (d-mod-k), so a route is deterministic.
pub struct FatTree {
    pub k: u32,
}

impl FatTree {
    fn half(&self) -> u64 {
        self.k as u64 / 2
    }
}

// Link id spaces: host<->edge, edge<->aggregation, aggregation<->core; the
// lowest bit is the direction (0 up, 1 down).
impl Topology for FatTree {
    fn name(&self) -> String {
        format!("fattree:{}", self.k)
    }
    fn hops(&self, src: u32, dst: u32) -> u32 {
        let h = self.half() as u32;
        if src == dst {
            0
        } else if src / h == dst / h {
            2
        } else if src / (h * h) == dst / (h * h) {
            4
        } else {
            6
        }
    }
    fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>) {
        if src == dst {
            return;
        }
        let h = self.half();
        let (s, d) = (src as u64, dst as u64);
        let hosts = h * h * self.k as u64;
        let edges = h * self.k as u64;
        let (se, de) = (s / h, d / h); // edge switch ids
        let (sp, dp) = (s / (h * h), d / (h * h)); // pods
        let host_link = |host: u64, down: bool| (host * 2 + u64::from(down)) * 3;
        let edge_agg =
            |edge: u64, agg: u64, down: bool| ((edge * h + agg) * 2 + u64::from(down)) * 3 + 1;
        let agg_core = |pod: u64, agg: u64, core: u64, down: bool| {
            (((pod * h + agg) * h + core) * 2 + u64::from(down)) * 3 + 2
        };
        debug_assert!(s < hosts && d < hosts && se < edges);
        out.push(host_link(s, false));
        if se != de {
            let agg = d % h;
            out.push(edge_agg(se, agg, false));
            if sp != dp {
                let core = (d / h) % h;
                out.push(agg_core(sp, agg, core, false));
                out.push(agg_core(dp, agg, core, true));
            }
            out.push(edge_agg(de, agg, true));
        }
        out.push(host_link(d, true));
    }
    fn link_ids(&self) -> u64 {
        let (h, k) = (self.half(), self.k as u64);
        // the largest of the three interleaved id spaces, plus one
        let hosts = h * h * k * 2 * 3;
        let edge_agg = h * k * h * 2 * 3 + 1;
        let agg_core = k * h * h * 2 * 3 + 2;
        hosts.max(edge_agg).max(agg_core) + 1
    }
    // the up and down links of a cable differ in the bit above the id space's
    fn undirected(&self, link: u64) -> u64 {
        let (cable, space) = (link / 3, link % 3);
        (cable & !1) * 3 + space
    }
}

/// Parses `full`, `hypercube[:D]`, `torus:AxB[xC]`, `fattree:K` for `ranks` ranks.
pub fn parse(spec: &str, ranks: u32) -> Result<Box<dyn Topology>> {
    let (kind, arg) = match spec.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (spec, None),
    };
    match kind {
        "full" | "fully-connected" => Ok(Box::new(FullyConnected { ranks })),
        "hypercube" => {
            let dims = match arg {
                Some(a) => match a.parse::<u32>() {
                    Ok(d) if d <= 30 => d,
                    _ => {
                        return usage(format!("hypercube dimension '{a}' is not an integer 0..30"))
                    }
                },
                None if ranks.is_power_of_two() => ranks.trailing_zeros(),
                None => {
                    return usage(format!(
                        "a hypercube needs a power-of-two rank count, not {ranks}"
                    ))
                }
            };
            if (1u64 << dims) < ranks as u64 {
                return usage(format!(
                    "hypercube:{dims} has {} nodes, fewer than {ranks} ranks",
                    1u64 << dims
                ));
            }
            Ok(Box::new(Hypercube { dims }))
        }
        "torus" => {
            let a = arg.unwrap_or("");
            let dims: Vec<u32> = a
                .split('x')
                .map(|d| d.parse::<u32>().ok().filter(|&d| d >= 1))
                .collect::<Option<Vec<u32>>>()
                .unwrap_or_default();
            if dims.len() < 2 || dims.len() > 3 {
                return usage(format!(
                    "torus shape '{a}' must be AxB or AxBxC with positive integers"
                ));
            }
            let nodes: u64 = dims.iter().map(|&d| d as u64).product();
            if nodes < ranks as u64 {
                return usage(format!(
                    "torus:{a} has {nodes} nodes, fewer than {ranks} ranks"
                ));
            }
            Ok(Box::new(Torus { dims }))
        }
        "fattree" => {
            let k = match arg.map(str::parse::<u32>) {
                Some(Ok(k)) if k >= 2 && k % 2 == 0 && k <= 2048 => k,
                _ => return usage("fattree:K needs an even switch port count K >= 2"),
            };
            let hosts = (k as u64).pow(3) / 4;
            if hosts < ranks as u64 {
                return usage(format!(
                    "fattree:{k} has {hosts} hosts, fewer than {ranks} ranks"
                ));
            }
            Ok(Box::new(FatTree { k }))
        }
        other => usage(format!(
            "unknown topology '{other}' (use full, hypercube, torus:AxB[xC], fattree:K)"
        )),
    }
}
