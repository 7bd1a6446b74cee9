//! One message per link at a time (`--congestion on`): a message's route is
//! reserved link by link (network.rs), in the order messages were sent. The
//! arrivals wait in a batch until one may be due or the batch is full, and
//! are then queued with the sequence numbers they took when sent (`flush`),
//! so same-time events keep the order they had when every message was queued
//! as it was sent. Store-and-forward through ranks moves each message hop by
//! hop instead, reserving each link as it reaches it.

use super::hops::{schedule_hop, Hops};
use super::{Host, NetKind, NetModel, Pending};
use crate::error::Result;
use crate::network::{Network, Transit};

/// Most messages whose routes are reserved in one batch (a batch ends
/// sooner when an arrival may be due).
const TRANSIT_BATCH: usize = 1024;

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
        Reserved {
            hop_by_hop: net.forwards_hop_by_hop(),
            net,
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
        self.delays.clear();
        self.net.transits(&self.sent, &mut self.delays);
        let l = host.params().l;
        for (s, &delay) in self.sent.iter().zip(&self.delays) {
            let arrive = s.transit.depart.saturating_add(l).saturating_add(delay);
            host.queue_at(arrive, s.seq, s.kind, s.msg);
        }
        self.sent.clear();
        host.held(0, false);
        self.sent_bound = u64::MAX;
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
        let enter = self.net.reserve_hop(leg.step.link, now, ready, hold);
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
        let earliest = depart.saturating_add(host.params().l).saturating_add(least);
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
