//! The network as the engine sees it: one interface (`Transport`) through
//! which a message leaves its sender and a receiver's copy of its bytes is
//! made, whatever the network model, and the network's own events.
//!
//! The engine knows the CPUs, NICs, matching and the workload; it hands each
//! message that leaves a rank to `Transport::send`, asks `copies_as_flows`
//! whether a receiver's copy is the network's to time (and then hands it to
//! `copy`), calls `flush` before each event it takes from the queue, and
//! passes every event of a kind at or after `FIRST_NET_KIND` to `on_event`.
//! The network reaches back through `Host`: the queue, a rank's CPU, and the
//! end of a copy.
//!
//! The models (`Model`, chosen once when the run starts, the one place that
//! tells them apart):
//! - `Ideal`: no congestion; a message's arrival is queued when it is sent
//!   (store-and-forward charges the forwarding in its delay).
//! - `Links`: one message per link at a time; arrivals are queued once their
//!   routes are reserved, in batches (`flush`).
//! - `Flows`: links shared max-min fairly by the receivers' copies
//!   (`FlowDone`, `FlowSettle` events).
//!
//! Store-and-forward through ranks (links reserved) or at the flow level
//! moves a message hop by hop as `Hop` events, whatever the model.

use crate::error::Result;
use crate::flows::{Due, HOP_FLOW};
pub use crate::flows::{FlowMsg, NO_RECV};
use crate::network::{Network, Transit};
use crate::params::Params;

/// A waiting event's data.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub size: u64,
    pub rank: u32,
    pub peer: u32,
    pub tag: u32,
    pub id: u32,
}

/// Event kinds from this one on are the network's (the engine's are below).
pub const FIRST_NET_KIND: u8 = 11;

/// The network's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum NetKind {
    /// Flow level: a message's last byte is copied (`id`: flow, `size`:
    /// version), unless the flow's rate changed since.
    FlowDone = FIRST_NET_KIND,
    /// Flow level: the rates found again after the flows started or ended now.
    FlowSettle,
    /// Store-and-forward through ranks: a whole message reaches rank `rank`
    /// on its way to `peer` (`id`: its place in `Transport::in_flight`).
    Hop,
}

impl NetKind {
    fn from_u8(k: u8) -> NetKind {
        match k {
            11 => NetKind::FlowDone,
            12 => NetKind::FlowSettle,
            13 => NetKind::Hop,
            _ => unreachable!("only network kinds are handed to the network"),
        }
    }
}

/// What the network asks of the engine.
pub trait Host {
    fn params(&self) -> &Params;
    /// Queues an event of `kind` at `time` with a new sequence number.
    fn schedule(&mut self, time: u64, kind: u8, ev: Pending) -> Result<()>;
    /// A new event's sequence number, for an event queued later (`queue_at`).
    fn next_seq(&mut self) -> Result<u64>;
    /// When the queue's next event is due (None: the queue is empty).
    fn next_time(&mut self) -> Option<u64>;
    /// Queues an event with the sequence number it took earlier.
    fn queue_at(&mut self, time: u64, seq: u64, kind: u8, ev: Pending);
    /// The network holds `n` messages whose arrivals are not queued yet
    /// (counted with the queue's events); `note`: keep the new peak.
    fn held(&mut self, n: usize, note: bool);
    /// A whole message at node `ev.rank` at t: Ok(when it leaves again) (a
    /// rank's CPU forwards it, a switch at once), Err(when to try again).
    fn forward_at(&mut self, t: u64, ev: &Pending) -> std::result::Result<u64, u64>;
    /// A receiver's copy ended at t (flow level).
    fn copy_done(&mut self, t: u64, m: FlowMsg) -> Result<()>;
}

/// How the network times messages (see the module's notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    Ideal,
    Links,
    Flows,
}

/// A message whose route is still to be reserved: its way through the
/// network, and its arrival event with the sequence number it took when it
/// was sent (so that same-time events keep the order they had when every
/// message was queued as it was sent).
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

/// Most messages whose routes are reserved in one batch (a batch ends
/// sooner when an arrival may be due).
const TRANSIT_BATCH: usize = 1024;

pub struct Transport {
    net: Network,
    model: Model,
    /// Flow level: scratch of the finish times a start or end changed.
    due: Vec<Due>,
    /// Links: messages sent whose routes are still to be reserved (`flush`),
    /// the earliest time one of them can arrive, and scratch for their delays.
    sent: Vec<Sent>,
    sent_bound: u64,
    delays: Vec<u64>,
    /// Store-and-forward: messages' delays charge forwarding (`store_forward`),
    /// and through ranks they travel as `Hop` events (`hop_by_hop`), kept in
    /// `in_flight` (free places in `in_flight_free`).
    store_forward: bool,
    hop_by_hop: bool,
    in_flight: Vec<(Pending, u8)>,
    in_flight_free: Vec<u32>,
}

impl Transport {
    pub fn new(net: Network) -> Self {
        let model = if net.is_flow_level() {
            Model::Flows
        } else if net.reserves_links() {
            Model::Links
        } else {
            Model::Ideal
        };
        Transport {
            model,
            store_forward: net.store_and_forward(),
            hop_by_hop: net.forwards_hop_by_hop(),
            net,
            due: Vec::new(),
            sent: Vec::new(),
            sent_bound: u64::MAX,
            delays: Vec::new(),
            in_flight: Vec::new(),
            in_flight_free: Vec::new(),
        }
    }

    /// Whether a receiver's copy of a message's bytes is the network's to
    /// time (`copy`), its end handed back by `Host::copy_done`.
    #[inline(always)]
    pub fn copies_as_flows(&self) -> bool {
        self.model == Model::Flows
    }

    /// A message (`msg`, its arrival event `kind`) sent by `src` at `now`
    /// leaves at `depart`, its bytes serialized in `serialization`; its
    /// arrival is queued now, with the next batch, or hop by hop.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn send<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        depart: u64,
        kind: u8,
        msg: Pending,
        serialization: u64,
    ) -> Result<()> {
        let (src, dst) = (msg.peer, msg.rank);
        if self.hop_by_hop {
            let place = self.park(msg, kind);
            return self.forward(host, now, depart, place, 0);
        }
        match self.model {
            Model::Links => {
                let transit = Transit {
                    src,
                    dst,
                    now,
                    depart,
                    serialization,
                };
                self.send_reserving(host, transit, kind, msg)
            }
            Model::Ideal | Model::Flows => {
                let transit = if self.store_forward {
                    let forward = forward_cost(host.params(), msg.size);
                    self.net.forwarded_transit(src, dst, serialization, forward)
                } else {
                    self.net.least_transit(src, dst)
                };
                let arrive = depart
                    .saturating_add(host.params().l)
                    .saturating_add(transit);
                host.schedule(arrive, kind, msg)
            }
        }
    }

    /// Before the engine takes its next event: the routes of a full batch,
    /// or of one whose first arrival may be due before the queue's next
    /// event, are reserved and their arrivals queued.
    #[inline(always)]
    pub fn flush<H: Host>(&mut self, host: &mut H) {
        if !self.sent.is_empty()
            && (self.sent.len() >= TRANSIT_BATCH
                || host.next_time().is_none_or(|t| t >= self.sent_bound))
        {
            self.reserve_routes(host);
        }
    }

    /// Flow level: the receiver's copy of a message's `s1` bytes starts at
    /// `start` (t or later), as long alone as its CPU time (`copy.until`).
    pub fn copy<H: Host>(
        &mut self,
        host: &mut H,
        t: u64,
        start: u64,
        s1: u64,
        copy: FlowMsg,
    ) -> Result<()> {
        let lone = copy.until.saturating_sub(start);
        match self.net.start_flow(t, start, s1, lone, copy) {
            Some(at) => schedule_settle(host, at),
            None => Ok(()),
        }
    }

    /// One of the network's events at t: Ok(Some(later)) puts it back to wait.
    pub fn on_event<H: Host>(
        &mut self,
        host: &mut H,
        kind: u8,
        t: u64,
        ev: &Pending,
    ) -> Result<Option<u64>> {
        match NetKind::from_u8(kind) {
            NetKind::FlowDone => self.on_flow_done(host, t, ev),
            NetKind::FlowSettle => self.on_flow_settle(host, t),
            NetKind::Hop => self.on_hop(host, t, ev),
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

    /// Links: the message's route is reserved with the next batch
    /// (`reserve_routes`); its sequence number is taken now.
    fn send_reserving<H: Host>(
        &mut self,
        host: &mut H,
        transit: Transit,
        kind: u8,
        msg: Pending,
    ) -> Result<()> {
        let seq = host.next_seq()?;
        let least = self.net.least_transit(transit.src, transit.dst);
        let earliest = transit
            .depart
            .saturating_add(host.params().l)
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

    /// Store-and-forward, hop by hop: keeps a message on its way; its place.
    fn park(&mut self, msg: Pending, kind: u8) -> u32 {
        match self.in_flight_free.pop() {
            Some(i) => {
                self.in_flight[i as usize] = (msg, kind);
                i
            }
            None => {
                self.in_flight.push((msg, kind));
                (self.in_flight.len() - 1) as u32
            }
        }
    }

    /// Store-and-forward, hop by hop: the message parked at `place` leaves
    /// over hop `k` of its route at `ready` (sent or forwarded at `now`).
    /// With links reserved it holds the link for the hop latency plus its
    /// serialization from the first free moment, and is whole at the next
    /// node after both; at the flow level its bytes cross the link as a flow
    /// after the hop latency, whole at the next node when the flow ends. A
    /// node on the way is a `Hop` event; the receiver gets the message's
    /// first byte after the last hop's latency and L, and copies its bytes
    /// as ever (at the flow level, over the last link).
    fn forward<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        ready: u64,
        place: u32,
        k: u32,
    ) -> Result<()> {
        let (msg, kind) = self.in_flight[place as usize];
        let s1 = msg.size.saturating_sub(1);
        let serialization = s1.saturating_mul(host.params().cost(msg.size).big_g);
        let step = self.net.step(msg.peer, msg.rank, k);
        let hop = self.net.hop();
        let enter = if self.model == Model::Links {
            let hold = hop.saturating_add(serialization);
            self.net.reserve_hop(step.link, now, ready, hold)
        } else {
            ready
        };
        let head = enter.saturating_add(hop);
        if step.last {
            self.in_flight_free.push(place);
            let l = host.params().l;
            return host.schedule(head.saturating_add(l), kind, msg);
        }
        let at_next = Pending {
            size: msg.size,
            rank: step.node,
            peer: msg.rank,
            tag: k + 1,
            id: place,
        };
        if self.model != Model::Flows || s1 == 0 {
            let at = head.saturating_add(serialization);
            return host.schedule(at, NetKind::Hop as u8, at_next);
        }
        let whole = FlowMsg {
            rank: step.node,
            peer: k + 1,
            send: place,
            recv: HOP_FLOW,
            pull: false,
            late: 0,
            until: head.saturating_add(serialization),
        };
        let from = (k == 0).then_some(msg.peer);
        match self
            .net
            .start_hop_flow(now, head, step.link, from, s1, serialization, whole)
        {
            Some(at) => schedule_settle(host, at),
            None => Ok(()),
        }
    }

    /// Store-and-forward, hop by hop: a whole message at node `ev.rank` (a
    /// rank, or a switch or node beyond the ranks: no CPU) before hop `ev.tag`
    /// of its route. A rank's CPU forwards it when free (o_r + o_s); then it
    /// goes on.
    fn on_hop<H: Host>(&mut self, host: &mut H, t: u64, ev: &Pending) -> Result<Option<u64>> {
        match host.forward_at(t, ev) {
            Ok(ready) => self.forward(host, t, ready, ev.id, ev.tag).map(|_| None),
            Err(later) => Ok(Some(later)),
        }
    }

    /// Flow level: the rates found again; each flow whose finish moved gets an event.
    fn on_flow_settle<H: Host>(&mut self, host: &mut H, t: u64) -> Result<Option<u64>> {
        let mut due = std::mem::take(&mut self.due);
        self.net.settle_flows(t, &mut due);
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

    /// Flow level: a copy's last byte at t, unless its finish moved since this
    /// event was queued; a hop's bytes make the message whole at its far end.
    fn on_flow_done<H: Host>(&mut self, host: &mut H, t: u64, ev: &Pending) -> Result<Option<u64>> {
        if !self.net.flow_is_current(ev.id, ev.size as u32) {
            return Ok(None);
        }
        let (m, settle) = self.net.finish_flow(ev.id);
        if settle {
            schedule_settle(host, t)?;
        }
        if m.recv == HOP_FLOW {
            // store and forward: the message is whole at the hop's far end
            let size = self.in_flight[m.send as usize].0.size;
            let at_next = Pending {
                size,
                rank: m.rank,
                peer: self.in_flight[m.send as usize].0.rank,
                tag: m.peer,
                id: m.send,
            };
            return host.schedule(t, NetKind::Hop as u8, at_next).map(|_| None);
        }
        host.copy_done(t, m).map(|_| None)
    }
}

/// What a rank forwarding a message of `size` bytes (store-and-forward
/// through ranks) spends of its CPU: a receive's and a send's overhead,
/// o_r + o_s; its bytes move between the links without the CPU's copy.
pub fn forward_cost(p: &Params, size: u64) -> u64 {
    let c = p.cost(size);
    c.o_r.saturating_add(c.o_s)
}

/// Flow level: one settle of the rates at t, after the events already queued for t.
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
