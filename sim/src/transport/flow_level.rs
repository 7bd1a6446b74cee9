//! The flow-level network (`--congestion flow`, flows.rs): a message's first
//! byte is delayed by its hops as without congestion, and the receiver's copy
//! of its bytes is a flow sharing the links' bandwidth; the rates are found
//! again (`FlowSettle`) after flows start or end, and a flow's end
//! (`FlowDone`) hands the copy back to the engine. Store-and-forward moves a
//! message hop by hop, each hop's bytes a flow of their own.

use super::flows::{Due, FlowNet, HOP_FLOW};
use super::hops::{schedule_hop, Hops};
use super::{Host, NetKind, NetModel, Pending, ReceiverCopy};
use crate::error::Result;
use crate::network::Network;

pub struct FlowLevel {
    net: Network,
    flows: FlowNet,
    /// Each rank's node, when the messages between ranks of one node share
    /// its copy bandwidth (`with_node_resource`).
    nodes: Option<Nodes>,
    /// Scratch: a copy's route.
    route: Vec<u64>,
    /// Scratch of the finish times a start or end changed.
    due: Vec<Due>,
    /// Store-and-forward: messages travel as `Hop` events.
    hop_by_hop: bool,
    hops: Hops,
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

impl FlowLevel {
    /// Links, and each NIC's sending and receiving sides, of `link_gap`
    /// picoseconds per byte shared max-min fairly by the messages crossing
    /// them, plus the network's hop latency per link.
    pub fn new(net: Network, link_gap: u64) -> Self {
        FlowLevel {
            hop_by_hop: net.store_and_forward(),
            net,
            flows: FlowNet::new(link_gap),
            nodes: None,
            route: Vec::new(),
            due: Vec::new(),
            hops: Hops::default(),
        }
    }

    /// Every message between two ranks of one node (`node_of`, per rank) also
    /// crosses that node's copy resource, which moves one byte per `gap` ps
    /// (1 / B_node) shared max-min fairly by all of them, on top of each
    /// message's own G, and takes `cost` ps of it per message (c_node: a
    /// message of m bytes needs cost + m gap of the node, but never more than
    /// its lone time, nor less than m gap). Ranks beyond `node_of` are each alone.
    pub fn with_node_resource(mut self, node_of: Vec<u32>, gap: f64, cost: f64) -> Self {
        let first_link = self
            .net
            .link_ids()
            .saturating_add(2 * node_of.len() as u64 + 2);
        self.flows = self.flows.with_node_links(first_link, gap);
        self.nodes = Some(Nodes {
            of: node_of,
            first_link,
            gap,
            cost: cost.max(0.0),
        });
        self
    }

    /// The receiver's copy of a message from `msg.peer` to `msg.rank`, its
    /// `bytes` along the route from `at` (`now` or later), taking `lone` ps
    /// alone. The time of the settle it asks for (None: one already due now
    /// serves).
    fn start_flow(
        &mut self,
        now: u64,
        at: u64,
        bytes: u64,
        lone: u64,
        msg: ReceiverCopy,
    ) -> Option<u64> {
        let mut route = std::mem::take(&mut self.route);
        route.clear();
        // a message travels from its sender (the flow's `peer`) to `rank`, out of
        // the sender's NIC and into the receiver's, which messages share as links
        let nics = self.net.link_ids();
        route.push(nics.saturating_add(2 * msg.peer as u64));
        self.net.route(msg.peer, msg.rank, &mut route);
        // the topology's links follow the sender's NIC
        let mut links = 1;
        if self.net.store_and_forward() && route.len() > 2 {
            // the hops before the last were flows of their own: the copy
            // crosses the last link only
            route.drain(..route.len() - 1);
            links = 0;
        }
        self.net.held_links(&mut route[links..]);
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
            .start_at(now, at, &route, bytes, lone, weight, msg);
        self.route = route;
        settle
    }

    /// Hop by hop: one hop's `bytes` over `link` (out of `from`'s NIC too on
    /// the first hop) from `at`, taking `lone` ps alone. The time of the
    /// settle it asks for, as `start_flow`.
    #[allow(clippy::too_many_arguments)]
    fn start_hop_flow(
        &mut self,
        now: u64,
        at: u64,
        link: u64,
        from: Option<u32>,
        bytes: u64,
        lone: u64,
        msg: ReceiverCopy,
    ) -> Option<u64> {
        let link = self.net.held_link(link);
        let nics = self.net.link_ids();
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
        self.flows
            .start_at(now, at, &route[..n], bytes, lone, 1.0, msg)
    }

    /// Hop by hop: the message parked at `place` leaves over hop `k` at
    /// `ready` (sent or forwarded at `now`); its bytes cross the link as a
    /// flow after the hop latency, and it is whole at the next node when the
    /// flow ends.
    fn forward<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        ready: u64,
        place: u32,
        k: u32,
    ) -> Result<()> {
        let leg = self.hops.leg(host, &mut self.net, place, k);
        let head = ready.saturating_add(self.net.hop());
        let Some(at_next) = self.hops.arrive(host, &leg, place, k, head)? else {
            return Ok(());
        };
        let until = head.saturating_add(leg.serialization);
        if leg.s1 == 0 {
            return schedule_hop(host, until, at_next);
        }
        let whole = ReceiverCopy {
            rank: leg.step.node,
            peer: k + 1,
            send: place,
            recv: HOP_FLOW,
            pull: false,
            late: 0,
            until,
        };
        let from = (k == 0).then_some(leg.msg.peer);
        let (link, s1, lone) = (leg.step.link, leg.s1, leg.serialization);
        match self.start_hop_flow(now, head, link, from, s1, lone, whole) {
            Some(at) => schedule_settle(host, at),
            None => Ok(()),
        }
    }

    /// The rates found again; each flow whose finish moved gets an event.
    fn on_settle<H: Host>(&mut self, host: &mut H, t: u64) -> Result<Option<u64>> {
        let mut due = std::mem::take(&mut self.due);
        self.flows.settle(t, &mut due);
        for d in due.drain(..) {
            let ev = Pending {
                size: d.version as u64,
                rank: 0,
                peer: 0,
                tag: 0,
                id: d.id,
            };
            host.schedule(d.time, NetKind::FlowDone as u8, ev)?;
        }
        self.due = due;
        Ok(None)
    }

    /// A flow's last byte at t, unless its finish moved since this event was
    /// queued: a hop's bytes make the message whole at its far end; a
    /// receiver's copy goes back to the engine.
    fn on_done<H: Host>(&mut self, host: &mut H, t: u64, ev: &Pending) -> Result<Option<u64>> {
        if !self.flows.is_current(ev.id, ev.size as u32) {
            return Ok(None);
        }
        let (m, settle) = self.flows.finish(ev.id);
        if settle {
            schedule_settle(host, t)?;
        }
        if m.recv == HOP_FLOW {
            let msg = self.hops.message(m.send);
            let at_next = Pending {
                size: msg.size,
                rank: m.rank,
                peer: msg.rank,
                tag: m.peer,
                id: m.send,
            };
            return schedule_hop(host, t, at_next).map(|_| None);
        }
        host.copy_done(t, m).map(|_| None)
    }
}

impl NetModel for FlowLevel {
    #[inline]
    fn send<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        depart: u64,
        kind: u8,
        msg: Pending,
        _serialization: u64,
    ) -> Result<()> {
        if self.hop_by_hop {
            let place = self.hops.park(msg, kind);
            return self.forward(host, now, depart, place, 0);
        }
        let arrive = depart
            .saturating_add(host.params().latency(msg.size))
            .saturating_add(self.net.least_transit(msg.peer, msg.rank));
        host.schedule(arrive, kind, msg)
    }

    #[inline(always)]
    fn times_copies(&self) -> bool {
        true
    }

    fn copy<H: Host>(
        &mut self,
        host: &mut H,
        t: u64,
        start: u64,
        s1: u64,
        copy: ReceiverCopy,
    ) -> Result<()> {
        let lone = copy.until.saturating_sub(start);
        match self.start_flow(t, start, s1, lone, copy) {
            Some(at) => schedule_settle(host, at),
            None => Ok(()),
        }
    }

    fn on_event<H: Host>(
        &mut self,
        host: &mut H,
        kind: u8,
        t: u64,
        ev: &Pending,
    ) -> Result<Option<u64>> {
        match NetKind::from_u8(kind) {
            NetKind::FlowDone => self.on_done(host, t, ev),
            NetKind::FlowSettle => self.on_settle(host, t),
            NetKind::Hop => match host.forward_at(t, ev) {
                Ok(ready) => self.forward(host, t, ready, ev.id, ev.tag).map(|_| None),
                Err(later) => Ok(Some(later)),
            },
        }
    }
}

/// One settle of the rates at t, after the events already queued for t.
fn schedule_settle<H: Host>(host: &mut H, t: u64) -> Result<()> {
    let none = Pending {
        size: 0,
        rank: 0,
        peer: 0,
        tag: 0,
        id: 0,
    };
    host.schedule(t, NetKind::FlowSettle as u8, none)
}
