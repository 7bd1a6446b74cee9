//! One message per link at a time (`--congestion on`).
//!
//! Congestion is modelled at injection: a message reserves each link of its
//! route in turn, the link busy for the hop latency plus the message's
//! serialization (s-1)G, its head moving on after the hop latency. Each link
//! keeps its busy intervals; a message takes the first free gap at or after
//! its head's arrival, so a message reserved later but reaching a link earlier
//! is not queued behind one still on its way. Reservations are made in the
//! order messages are sent, so the result is deterministic. The arrivals wait
//! in a batch until one may be due or the batch is full, and are then queued
//! with the sequence numbers they took when sent (`flush`), so same-time
//! events keep the order they had when every message was queued as it was
//! sent; a batch's routes are laid end to end (`transits`), so that the links
//! of the next messages are read from memory while earlier ones are placed.
//! Store-and-forward through ranks moves each message hop by hop instead,
//! reserving each link as it reaches it (`reserve_hop`).
//!
//! Cost and memory: busy intervals that touch are merged (a gap of no length
//! holds nothing), so the messages of a pipeline down a line of links, which
//! follow each other back to back, keep one interval per link however many
//! they are. The intervals live in a `LinkTable` (links.rs): a message costs a
//! constant per link of its route, and memory follows the reservations still
//! ahead, not the history.

use super::hops::{schedule_hop, Hops};
use super::links::{LinkTable, SWEEP_FLOOR};
use super::{Host, NetKind, NetModel, Pending};
use crate::error::Result;
use crate::network::Network;

/// Most messages whose routes are reserved in one batch (a batch ends
/// sooner when an arrival may be due).
const TRANSIT_BATCH: usize = 1024;

/// Most links whose slots are kept in a vector (64 bytes each, zeroed pages
/// that only become resident when used); beyond, slots live in a hash map.
const DENSE_LINKS: u64 = 1 << 24;

/// A message whose route is still to be reserved: it left `src` for `dst`
/// at `depart`, was sent at `now`, and holds each link for the hop latency
/// plus `serialization`.
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

/// A message whose route is still to be reserved, and its arrival event
/// with the sequence number it took when it was sent.
#[derive(Debug, Clone, Copy)]
struct Sent {
    transit: Transit,
    seq: u64,
    kind: u8,
    msg: Pending,
}

impl AsRef<Transit> for Sent {
    fn as_ref(&self) -> &Transit {
        &self.transit
    }
}

pub struct Reserved {
    net: Network,
    links: LinkTable,
    /// Scratch: a batch's routes one after the other, and where each ends.
    routes: Vec<u64>,
    route_ends: Vec<usize>,
    /// Messages sent whose routes are still to be reserved, the earliest
    /// time one of them can arrive, and scratch for their delays.
    sent: Vec<Sent>,
    sent_bound: u64,
    delays: Vec<u64>,
    /// Store-and-forward through ranks: messages travel as `Hop` events.
    hop_by_hop: bool,
    hops: Hops,
}

impl Reserved {
    pub fn new(net: Network) -> Self {
        Self::with_limits(net, DENSE_LINKS, SWEEP_FLOOR)
    }

    fn with_limits(net: Network, dense_links: u64, sweep_floor: usize) -> Self {
        let ids = net.link_ids();
        let links = LinkTable::new(ids, ids <= dense_links, net.links_dense(), sweep_floor);
        Reserved {
            hop_by_hop: net.store_and_forward() && net.through_ranks(),
            net,
            links,
            routes: Vec::new(),
            route_ends: Vec::new(),
            sent: Vec::new(),
            sent_bound: u64::MAX,
            delays: Vec::new(),
            hops: Hops::default(),
        }
    }

    /// Reserves the routes of the messages sent since the last batch, in the
    /// order they were sent, and queues their arrivals. Nothing else reads
    /// the links, and no arrival is due before `sent_bound`, so a batch
    /// reserved before the first event at or after that time gives every
    /// message the delay it would have had when it was sent.
    fn reserve_routes<H: Host>(&mut self, host: &mut H) {
        let (mut sent, mut delays) = (
            std::mem::take(&mut self.sent),
            std::mem::take(&mut self.delays),
        );
        delays.clear();
        self.transits(&sent, &mut delays);
        for (s, &delay) in sent.iter().zip(&delays) {
            let l = host.params().latency(s.msg.size);
            let arrive = s.transit.depart.saturating_add(l).saturating_add(delay);
            host.queue_at(arrive, s.seq, s.kind, s.msg);
        }
        sent.clear();
        (self.sent, self.delays) = (sent, delays);
        host.held(0, false);
        self.sent_bound = u64::MAX;
    }

    /// The delays of a batch of messages (appended to `delays`): for each, in
    /// the batch's order, the time at which its head reaches `dst` minus its
    /// departure; no message is ever sent again before its `now`. The routes
    /// are laid end to end, so that the memory of the links ahead is asked
    /// for across message boundaries: one message at a time, the first links
    /// of every route were waited for in turn.
    fn transits<M: AsRef<Transit>>(&mut self, batch: &[M], delays: &mut Vec<u64>) {
        let mut routes = std::mem::take(&mut self.routes);
        let mut ends = std::mem::take(&mut self.route_ends);
        routes.clear();
        ends.clear();
        for m in batch.iter().map(AsRef::as_ref) {
            let start = routes.len();
            self.net.route(m.src, m.dst, &mut routes);
            self.net.held_links(&mut routes[start..]);
            ends.push(routes.len());
        }
        let hop = self.net.hop();
        let store_forward = self.net.store_and_forward();
        let mut at = 0;
        for (m, &end) in batch.iter().map(AsRef::as_ref).zip(&ends) {
            debug_assert!(m.now <= m.depart);
            self.links.sweep(m.now);
            let mut head = m.depart;
            let hold = hop + m.serialization;
            // store and forward (through switches): the next hop starts once
            // the whole message is in; the last hop's bytes are the receiver's copy
            let advance = if store_forward { hold } else { hop };
            let first = at;
            self.links.start_route();
            while at < end {
                self.links.prefetch(&routes, at);
                head = self.links.reserve(routes[at], m.now, head, hold) + advance;
                at += 1;
            }
            if store_forward && first < end {
                head -= advance - hop;
            }
            delays.push(head - m.depart);
        }
        self.routes = routes;
        self.route_ends = ends;
    }

    /// Hop by hop: `link` (either direction of its cable when half duplex)
    /// for `hold` from the first free moment at or after `head`, which it
    /// returns; `now` is the current time.
    fn reserve_hop(&mut self, link: u64, now: u64, head: u64, hold: u64) -> u64 {
        let link = self.net.held_link(link);
        self.links.sweep(now);
        self.links.start_route();
        self.links.reserve(link, now, head, hold)
    }

    /// Hop by hop: the message parked at `place` leaves over hop `k` at
    /// `ready` (sent or forwarded at `now`), holding the link for the hop
    /// latency plus its serialization from the link's first free moment; it
    /// is whole at the next node after both.
    fn forward<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        ready: u64,
        place: u32,
        k: u32,
    ) -> Result<()> {
        let leg = self.hops.leg(host, &mut self.net, place, k);
        let hop = self.net.hop();
        let hold = hop.saturating_add(leg.serialization);
        let enter = self.reserve_hop(leg.step.link, now, ready, hold);
        let head = enter.saturating_add(hop);
        match self.hops.arrive(host, &leg, place, k, head)? {
            Some(at_next) => schedule_hop(host, head.saturating_add(leg.serialization), at_next),
            None => Ok(()),
        }
    }
}

impl NetModel for Reserved {
    #[inline]
    fn send<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        depart: u64,
        kind: u8,
        msg: Pending,
        serialization: u64,
    ) -> Result<()> {
        if self.hop_by_hop {
            let place = self.hops.park(msg, kind);
            return self.forward(host, now, depart, place, 0);
        }
        let transit = Transit {
            src: msg.peer,
            dst: msg.rank,
            now,
            depart,
            serialization,
        };
        // the route is reserved with the next batch; the sequence number is taken now
        let seq = host.next_seq()?;
        let least = self.net.least_transit(transit.src, transit.dst);
        let earliest = depart
            .saturating_add(host.params().latency(msg.size))
            .saturating_add(least);
        self.sent_bound = self.sent_bound.min(earliest);
        self.sent.push(Sent {
            transit,
            seq,
            kind,
            msg,
        });
        host.held(self.sent.len(), true);
        Ok(())
    }

    #[inline(always)]
    fn flush<H: Host>(&mut self, host: &mut H) {
        if !self.sent.is_empty()
            && (self.sent.len() >= TRANSIT_BATCH
                || host.next_time().is_none_or(|t| t >= self.sent_bound))
        {
            self.reserve_routes(host);
        }
    }

    /// A whole message at a node on its way: a rank's CPU forwards it when
    /// free (o_r + o_s); then it goes on.
    fn on_event<H: Host>(
        &mut self,
        host: &mut H,
        kind: u8,
        t: u64,
        ev: &Pending,
    ) -> Result<Option<u64>> {
        debug_assert_eq!(NetKind::from_u8(kind), NetKind::Hop);
        match host.forward_at(t, ev) {
            Ok(ready) => self.forward(host, t, ready, ev.id, ev.tag).map(|_| None),
            Err(later) => Ok(Some(later)),
        }
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
    /// same answers without merging, but for the one case noted).
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
            let mut net = Reserved::with_limits(
                Network::new(topology::parse(spec, ranks).unwrap(), hop), if dense { u64::MAX } else { 0 }, 2,
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
