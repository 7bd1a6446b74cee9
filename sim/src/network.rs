//! The wires every network model shares: the topology, each link's latency,
//! and how links are used (`with_links`): half-duplex, where both directions
//! of a cable are one link, and store-and-forward routing, where each hop
//! receives the whole message before sending it on.
//!
//! The network models (transport/) read routes, hops and least delays here;
//! what a model keeps of its own (link reservations, flows) lives with it.

use crate::topology::Topology;

pub struct Network {
    topo: Box<dyn Topology>,
    hop: u64,
    /// Scratch: one route (`step`).
    route: Vec<u64>,
    /// Both directions of a cable are one link (`with_links`).
    half_duplex: bool,
    /// Each hop receives a whole message before sending it on (`with_links`).
    store_forward: bool,
}

/// One hop of a store-and-forward message's route: its link, the rank it
/// reaches (`NO_NODE`: a switch, or the last hop), and whether it is the last.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub link: u64,
    pub node: u32,
    pub last: bool,
}

/// `Step::node` of a hop that reaches no rank on the way.
pub const NO_NODE: u32 = u32::MAX;

impl Network {
    pub fn new(topo: Box<dyn Topology>, hop: u64) -> Self {
        Network {
            topo,
            hop,
            route: Vec::new(),
            half_duplex: false,
            store_forward: false,
        }
    }

    /// Half-duplex links: a cable carries one message at a time over both
    /// directions together (one link id for both: `Topology::undirected`).
    /// Store-and-forward routing: each hop receives the whole message before
    /// sending it on, so a link's head moves on after the hop latency plus
    /// the message's serialization, and on topologies whose messages pass
    /// through ranks (hypercube, torus) each rank on the way forwards it
    /// (`forwarded_transit`, or hop by hop: transport/hops.rs). Where no
    /// link is shared half duplex changes nothing.
    pub fn with_links(mut self, half_duplex: bool, store_and_forward: bool) -> Self {
        self.half_duplex = half_duplex;
        self.store_forward = store_and_forward;
        self
    }

    /// The latency of each link.
    pub fn hop(&self) -> u64 {
        self.hop
    }

    pub fn store_and_forward(&self) -> bool {
        self.store_forward
    }

    #[inline]
    pub fn half_duplex(&self) -> bool {
        self.half_duplex
    }

    /// Whether messages pass through ranks on their way (hypercube, torus).
    #[inline]
    pub fn through_ranks(&self) -> bool {
        self.topo.through_ranks()
    }

    /// How many link ids the topology uses (ids beyond are free for NICs).
    #[inline]
    pub fn link_ids(&self) -> u64 {
        self.topo.link_ids()
    }

    /// Whether the topology's link ids are worth a huge-page table.
    #[inline]
    pub fn links_dense(&self) -> bool {
        self.topo.links_dense()
    }

    /// Appends the links of the route from `src` to `dst` to `out`.
    #[inline]
    pub fn route(&self, src: u32, dst: u32, out: &mut Vec<u64>) {
        self.topo.route(src, dst, out);
    }

    /// The link a message over `link` holds: with half duplex, one id for
    /// both directions of its cable.
    #[inline]
    pub fn held_link(&self, link: u64) -> u64 {
        if self.half_duplex {
            self.topo.undirected(link)
        } else {
            link
        }
    }

    /// Every link of `links` as `held_link`.
    #[inline]
    pub fn held_links(&self, links: &mut [u64]) {
        if self.half_duplex {
            for link in links {
                *link = self.topo.undirected(*link);
            }
        }
    }

    /// Hop by hop: hop `k` of the route from `src` to `dst`.
    pub fn step(&mut self, src: u32, dst: u32, k: u32) -> Step {
        let mut route = std::mem::take(&mut self.route);
        route.clear();
        self.topo.route(src, dst, &mut route);
        let k = k as usize;
        let last = k + 1 == route.len();
        let node = if self.topo.through_ranks() && !last {
            (0..=k).fold(src, |at, _| self.next_rank(at, dst))
        } else {
            NO_NODE
        };
        let step = Step {
            link: route[k],
            node,
            last,
        };
        self.route = route;
        step
    }

    fn next_rank(&self, at: u32, dst: u32) -> u32 {
        self.topo
            .next_hop(at, dst)
            .expect("a topology whose messages pass through ranks")
            .1
    }

    /// Store-and-forward where nothing contends: the delay of a message from
    /// `src` to `dst` whose serialization is `serialization`, forwarded by
    /// each rank on the way in `forward` (no CPU is held):
    /// hops x hop + (hops - 1)(serialization + forward), the last hop's
    /// bytes being the receiver's copy as ever. Through switches, nothing
    /// is charged for forwarding.
    pub fn forwarded_transit(&self, src: u32, dst: u32, serialization: u64, forward: u64) -> u64 {
        let hops = self.topo.hops(src, dst) as u64;
        let forward = if self.topo.through_ranks() {
            forward
        } else {
            0
        };
        let per_hop = serialization.saturating_add(forward);
        hops.saturating_mul(self.hop)
            .saturating_add(hops.saturating_sub(1).saturating_mul(per_hop))
    }

    pub fn topology_name(&self) -> String {
        self.topo.name()
    }

    /// The least delay the network adds to a message from `src` to `dst`
    /// (its hops, without waiting for a link).
    pub fn least_transit(&self, src: u32, dst: u32) -> u64 {
        (self.topo.hops(src, dst) as u64).saturating_mul(self.hop)
    }
}
