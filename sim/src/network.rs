//! The network between NICs: per-hop latency, and with congestion on, links
//! that carry one message at a time per direction.
//!
//! Congestion is modelled at injection: a message reserves each link of its
//! route in turn, the link busy for the hop latency plus the message's
//! serialization (s-1)G, its head moving on after the hop latency. Each link
//! keeps its busy intervals; a message takes the first free gap at or after
//! its head's arrival, so a message reserved later but reaching a link earlier
//! is not queued behind one still on its way. Reservations are made in the
//! order messages are sent, so the result is deterministic; the engine hands
//! them over in batches (`transits`), the routes laid end to end so that the
//! links of the next messages are read from memory while earlier ones are
//! placed. The flow-level alternative, where the receivers' copies of messages
//! on a link share its bandwidth, is `--congestion flow` (flows.rs); there a
//! message's first byte is delayed by the hops as here, and its copy is a flow.
//!
//! Both models take two options (`with_links`): half-duplex links, where
//! both directions of a cable are one link, and store-and-forward routing,
//! where each hop receives the whole message before sending it on (through
//! ranks, message by message as the network model's `Hop` events,
//! transport/hops.rs: `step`, `reserve_hop`, `start_hop_flow`).
//!
//! Cost and memory: busy intervals that touch are merged (a gap of no length
//! holds nothing), so the messages of a pipeline down a line of links, which
//! follow each other back to back, keep one interval per link however many
//! they are. The intervals live in a `LinkTable` (links.rs): a message costs a
//! constant per link of its route, and memory follows the reservations still
//! ahead, not the history.

use crate::flows::{Due, FlowMsg, FlowNet};
use crate::links::{LinkTable, SWEEP_FLOOR};
use crate::topology::Topology;

/// Most links whose slots are kept in a vector (64 bytes each, zeroed pages
/// that only become resident when used); beyond, slots live in a hash map.
const DENSE_LINKS: u64 = 1 << 24;

pub struct Network {
    topo: Box<dyn Topology>,
    hop: u64,
    congestion: bool,
    links: LinkTable,
    /// Scratch: a batch's routes one after the other (a flow's alone), and
    /// where each ends.
    routes: Vec<u64>,
    route_ends: Vec<usize>,
    flows: Option<FlowNet>,
    /// Both directions of a cable are one link (`with_links`).
    half_duplex: bool,
    /// Each hop receives a whole message before sending it on (`with_links`).
    store_forward: bool,
    /// Flow level: each rank's node, when the messages between ranks of one
    /// node share its copy bandwidth (`with_node_resource`).
    nodes: Option<Nodes>,
}

/// Which node each rank is on, and the link id of node 0's shared resource
/// (node i's is `first_link + i`, beyond every NIC's); its gap (ps per byte)
/// and per-message cost (ps).
struct Nodes {
    of: Vec<u32>,
    first_link: u64,
    gap: f64,
    cost: f64,
}

impl Nodes {
    /// What each byte of a copy of `bytes` taking `lone` ps alone weighs on the
    /// node's resource: the copy needs c_node + bytes G_node of it, held to its
    /// lone time (one pair alone is never bound by the node, as the fit holds
    /// c_node <= a), and at least its bytes.
    fn weight(&self, bytes: u64, lone: u64) -> f64 {
        if self.cost == 0.0 || bytes == 0 {
            return 1.0;
        }
        let moved = bytes as f64 * self.gap;
        let need = (self.cost + moved).min(lone as f64).max(moved);
        need / moved
    }
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

/// A message whose route is still to be reserved (congestion on): it left
/// `src` for `dst` at `depart`, was sent at `now`, and holds each link for
/// the hop latency plus `serialization`.
#[derive(Debug, Clone, Copy)]
pub struct Transit {
    pub src: u32,
    pub dst: u32,
    pub now: u64,
    pub depart: u64,
    pub serialization: u64,
}

impl AsRef<Transit> for Transit {
    fn as_ref(&self) -> &Transit {
        self
    }
}

impl Network {
    pub fn new(topo: Box<dyn Topology>, hop: u64, congestion: bool) -> Self {
        Self::with_limits(topo, hop, congestion, DENSE_LINKS, SWEEP_FLOOR)
    }

    fn with_limits(
        topo: Box<dyn Topology>,
        hop: u64,
        congestion: bool,
        dense_links: u64,
        sweep_floor: usize,
    ) -> Self {
        let ids = topo.link_ids();
        let dense = congestion && ids <= dense_links;
        let links = LinkTable::new(ids, dense, topo.links_dense(), sweep_floor);
        Network {
            topo,
            hop,
            congestion,
            links,
            routes: Vec::new(),
            route_ends: Vec::new(),
            flows: None,
            nodes: None,
            half_duplex: false,
            store_forward: false,
        }
    }

    /// Half-duplex links: a cable carries one message at a time over both
    /// directions together (one link id for both: `Topology::undirected`).
    /// Store-and-forward routing: each hop receives the whole message before
    /// sending it on, so a link's head moves on after the hop latency plus
    /// the message's serialization, and on topologies whose messages pass
    /// through ranks (hypercube, torus) the engine charges each rank on the
    /// way the forwarding (`forwards_hop_by_hop`, `forwarded_transit`).
    /// Without congestion half duplex changes nothing (no link is shared).
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

    /// Whether messages travel hop by hop as the engine's own events
    /// (store-and-forward with links reserved through ranks, whose CPUs
    /// forward them in their turn, or at the flow level, where each hop's
    /// bytes are a flow): `step` gives each hop.
    pub fn forwards_hop_by_hop(&self) -> bool {
        self.store_forward
            && ((self.congestion && self.topo.through_ranks()) || self.flows.is_some())
    }

    /// Hop by hop: hop `k` of the route from `src` to `dst`.
    pub fn step(&mut self, src: u32, dst: u32, k: u32) -> Step {
        let mut route = std::mem::take(&mut self.routes);
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
        self.routes = route;
        step
    }

    fn next_rank(&self, at: u32, dst: u32) -> u32 {
        self.topo
            .next_hop(at, dst)
            .expect("a topology whose messages pass through ranks")
            .1
    }

    /// Hop by hop, links reserved: `link` (either direction of its cable
    /// when half duplex) for `hold` from the first free moment at or after
    /// `head`, which it returns; `now` is the current time.
    pub fn reserve_hop(&mut self, link: u64, now: u64, head: u64, hold: u64) -> u64 {
        let link = if self.half_duplex {
            self.topo.undirected(link)
        } else {
            link
        };
        self.links.sweep(now);
        self.links.start_route();
        self.links.reserve(link, now, head, hold)
    }

    /// Flow level, hop by hop: one hop's `bytes` over `link` (out of `from`'s
    /// NIC too on the first hop) from `at`, taking `lone` ps alone. The time
    /// of the `settle_flows` it asks for, as `start_flow`.
    #[allow(clippy::too_many_arguments)]
    pub fn start_hop_flow(
        &mut self,
        now: u64,
        at: u64,
        link: u64,
        from: Option<u32>,
        bytes: u64,
        lone: u64,
        msg: FlowMsg,
    ) -> Option<u64> {
        let link = if self.half_duplex {
            self.topo.undirected(link)
        } else {
            link
        };
        let nics = self.topo.link_ids();
        let mut route = [0u64; 2];
        let n = match from {
            Some(src) => {
                route = [nics.saturating_add(2 * src as u64), link];
                2
            }
            None => {
                route[0] = link;
                1
            }
        };
        self.flows.as_mut().expect("a flow-level network").start_at(
            now,
            at,
            &route[..n],
            bytes,
            lone,
            1.0,
            msg,
        )
    }

    /// Store-and-forward without congestion: the delay of a message from
    /// `src` to `dst` whose serialization is `serialization`, forwarded by
    /// each rank on the way in `forward` (no CPU is held: nothing contends):
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

    /// The flow-level network: links, and each NIC's sending and receiving
    /// sides, of `link_gap` picoseconds per byte shared max-min fairly by the
    /// messages crossing them, plus `hop` of latency per link.
    pub fn with_flows(topo: Box<dyn Topology>, hop: u64, link_gap: u64) -> Self {
        let mut net = Self::new(topo, hop, false);
        net.flows = Some(FlowNet::new(link_gap));
        net
    }

    /// Flow level: every message between two ranks of one node (`node_of`, per
    /// rank) also crosses that node's copy resource, which moves one byte per
    /// `gap` ps (1 / B_node) shared max-min fairly by all of them, on top of
    /// each message's own G, and takes `cost` ps of it per message (c_node:
    /// a message of m bytes needs cost + m gap of the node, but never more than
    /// its lone time, nor less than m gap). Ranks beyond `node_of` are each alone.
    pub fn with_node_resource(mut self, node_of: Vec<u32>, gap: f64, cost: f64) -> Self {
        let first_link = self
            .topo
            .link_ids()
            .saturating_add(2 * node_of.len() as u64 + 2);
        let flows = self.flows.take().expect("a flow-level network");
        self.flows = Some(flows.with_node_links(first_link, gap));
        self.nodes = Some(Nodes {
            of: node_of,
            first_link,
            gap,
            cost: cost.max(0.0),
        });
        self
    }

    pub fn is_flow_level(&self) -> bool {
        self.flows.is_some()
    }

    /// Flow level: the receiver's copy of a message from `msg.peer` to
    /// `msg.rank`, its `bytes` along the route from `at` (`now` or later),
    /// taking `lone` ps alone. The time of the `settle_flows` it asks for
    /// (None: one already due now serves).
    pub fn start_flow(
        &mut self,
        now: u64,
        at: u64,
        bytes: u64,
        lone: u64,
        msg: FlowMsg,
    ) -> Option<u64> {
        let mut route = std::mem::take(&mut self.routes);
        route.clear();
        // a message travels from its sender (the flow's `peer`) to `rank`, out of
        // the sender's NIC and into the receiver's, which messages share as links
        let nics = self.topo.link_ids();
        route.push(nics.saturating_add(2 * msg.peer as u64));
        self.topo.route(msg.peer, msg.rank, &mut route);
        // the topology's links follow the sender's NIC
        let mut links = 1;
        if self.store_forward && route.len() > 2 {
            // the hops before the last were flows of their own: the copy
            // crosses the last link only
            route.drain(..route.len() - 1);
            links = 0;
        }
        if self.half_duplex {
            for link in &mut route[links..] {
                *link = self.topo.undirected(*link);
            }
        }
        route.push(nics.saturating_add(2 * msg.rank as u64 + 1));
        let mut weight = 1.0;
        if let Some(nodes) = &self.nodes {
            let node = |r: u32| nodes.of.get(r as usize).copied();
            match (node(msg.peer), node(msg.rank)) {
                (Some(a), Some(b)) if a == b && msg.peer != msg.rank => {
                    route.push(nodes.first_link.saturating_add(a as u64));
                    weight = nodes.weight(bytes, lone);
                }
                _ => {}
            }
        }
        let settle = self
            .flows
            .as_mut()
            .expect("a flow-level network")
            .start_at(now, at, &route, bytes, lone, weight, msg);
        self.routes = route;
        settle
    }

    /// Flow level: every rate found again after the starts and ends at `now`;
    /// finish times that changed are appended to `due`.
    pub fn settle_flows(&mut self, now: u64, due: &mut Vec<Due>) {
        self.flows
            .as_mut()
            .expect("a flow-level network")
            .settle(now, due);
    }

    /// Flow level: whether this finish event is the flow's latest.
    pub fn flow_is_current(&self, id: u32, version: u32) -> bool {
        self.flows
            .as_ref()
            .is_some_and(|f| f.is_current(id, version))
    }

    /// Flow level: flow `id` ends now; its message, and whether a
    /// `settle_flows` now must follow.
    pub fn finish_flow(&mut self, id: u32) -> (FlowMsg, bool) {
        self.flows
            .as_mut()
            .expect("a flow-level network")
            .finish(id)
    }

    pub fn topology_name(&self) -> String {
        self.topo.name()
    }

    /// Whether messages reserve the links of their routes (congestion on, one
    /// message per link at a time), so that their delays can be found in
    /// batches (`transits`).
    pub fn reserves_links(&self) -> bool {
        self.congestion
    }

    /// The least delay the network adds to a message from `src` to `dst`
    /// (its hops, without waiting for a link).
    pub fn least_transit(&self, src: u32, dst: u32) -> u64 {
        (self.topo.hops(src, dst) as u64).saturating_mul(self.hop)
    }

    /// The delays of a batch of messages (appended to `delays`): for each, in
    /// the batch's order, the time at which its head reaches `dst` minus its
    /// departure; no message is ever sent again before its `now`. The routes are laid end to
    /// end, so that the memory of the links ahead is asked for across message
    /// boundaries: one message at a time, the first links of every route were
    /// waited for in turn.
    pub fn transits<M: AsRef<Transit>>(&mut self, batch: &[M], delays: &mut Vec<u64>) {
        if !self.congestion {
            let least = batch.iter().map(|m| m.as_ref());
            delays.extend(least.map(|m| self.least_transit(m.src, m.dst)));
            return;
        }
        let mut routes = std::mem::take(&mut self.routes);
        let mut ends = std::mem::take(&mut self.route_ends);
        routes.clear();
        ends.clear();
        for m in batch.iter().map(AsRef::as_ref) {
            let start = routes.len();
            self.topo.route(m.src, m.dst, &mut routes);
            if self.half_duplex {
                for link in &mut routes[start..] {
                    *link = self.topo.undirected(*link);
                }
            }
            ends.push(routes.len());
        }
        let mut at = 0;
        for (m, &end) in batch.iter().map(AsRef::as_ref).zip(&ends) {
            debug_assert!(m.now <= m.depart);
            self.links.sweep(m.now);
            let mut head = m.depart;
            let hold = self.hop + m.serialization;
            // store and forward (through switches): the next hop starts once
            // the whole message is in; the last hop's bytes are the receiver's copy
            let advance = if self.store_forward { hold } else { self.hop };
            let first = at;
            self.links.start_route();
            while at < end {
                self.links.prefetch(&routes, at);
                head = self.links.reserve(routes[at], m.now, head, hold) + advance;
                at += 1;
            }
            if self.store_forward && first < end {
                head -= advance - self.hop;
            }
            delays.push(head - m.depart);
        }
        self.routes = routes;
        self.route_ends = ends;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fxhash::FxHashMap;
    use crate::topology;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The plain model: every link keeps all its reservations, never merged
    /// nor forgotten, and a message takes the first gap long enough (the
    /// network before reservations were merged, but for the one case noted).
    struct Reference {
        links: FxHashMap<u64, VecDeque<(u64, u64)>>,
    }

    impl Reference {
        fn transit(&mut self, route: &[u64], depart: u64, hop: u64, hold: u64) -> u64 {
            let mut head = depart;
            for link in route {
                let busy = self.links.entry(*link).or_default();
                let mut at = busy.partition_point(|&(_, end)| end <= head);
                let mut enter = head;
                while at < busy.len() {
                    let (start, end) = busy[at];
                    // a message holding the link for no time does not slip
                    // between two reservations that follow each other
                    let touching = at > 0 && busy[at - 1].1 == start;
                    if enter + hold <= start && !(hold == 0 && touching && enter == start) {
                        break;
                    }
                    enter = enter.max(end);
                    at += 1;
                }
                if hold > 0 {
                    busy.insert(at, (enter, enter + hold));
                }
                head = enter + hop;
            }
            head - depart
        }
    }

    proptest! {
        /// Messages reserved one by one or in batches of any size (as the
        /// engine does) get the plain model's delays.
        #[test]
        fn merged_inline_and_swept_intervals_give_the_plain_answers(
            spec in prop::sample::select(vec!["torus:4x3", "hypercube:4", "full", "fattree:4"]),
            hop in 0u64..4,
            // (src, dst, time step, delay to departure, serialization)
            msgs in prop::collection::vec((0u32..12, 0u32..12, 0u64..3, 0u64..5, 0u64..40), 1..400),
            dense in any::<bool>(),
            batch in 1usize..40,
        ) {
            let ranks = 12;
            let mut net = Network::with_limits(
                topology::parse(spec, ranks).unwrap(), hop, true, if dense { u64::MAX } else { 0 }, 2,
            );
            let topo = topology::parse(spec, ranks).unwrap();
            let mut reference = Reference { links: FxHashMap::default() };
            let mut now = 0;
            let mut route = Vec::new();
            let (mut wanted, mut sent) = (Vec::new(), Vec::new());
            for (src, dst, step, delay, ser) in msgs {
                now += step;
                let (src, dst) = (src % ranks, dst % ranks);
                route.clear();
                topo.route(src, dst, &mut route);
                wanted.push(reference.transit(&route, now + delay, hop, hop + ser));
                sent.push(Transit { src, dst, now, depart: now + delay, serialization: ser });
            }
            let mut got = Vec::new();
            for chunk in sent.chunks(batch) {
                net.transits(chunk, &mut got);
            }
            prop_assert_eq!(got, wanted);
        }
    }
}
