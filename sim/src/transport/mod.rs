//! The network as the engine sees it: one trait (`NetModel`) through which a
//! message leaves its sender and a receiver's copy of its bytes is made,
//! whatever the network model, and which handles the network's own events.
//!
//! The engine knows the CPUs, NICs, matching and the workload; it hands each
//! message that leaves a rank to `NetModel::send`, asks `times_copies`
//! whether a receiver's copy is the network's to time (and then hands it to
//! `copy`), calls `flush` before each event it takes from the queue, and
//! passes every event of a kind at or after `FIRST_NET_KIND` to `on_event`.
//! The network reaches back through `Host`: the queue, a rank's CPU, and the
//! end of a copy.
//!
//! The models, one file each, chosen once when a run starts (`Net`, whose
//! `drive` hands the model to the engine through `Driver`):
//! - `ideal`: no congestion; a message's arrival is queued when it is sent
//!   (store-and-forward charges the forwarding in its delay).
//! - `reserved`: one message per link at a time; arrivals are queued once
//!   their routes are reserved, in batches (`flush`).
//! - `flow_level`: links shared max-min fairly by the receivers' copies
//!   (the max-min solver: `flows`).
//!
//! Each model keeps its own state; what they share (topology, routes, hop
//! latency, half duplex, store-and-forward) is `crate::network::Network`.
//!
//! Store-and-forward through ranks (links reserved) or at the flow level
//! moves a message hop by hop as `Hop` events (`hops`).

pub mod flow_level;
pub mod flows;
pub mod hops;
pub mod ideal;
mod links;
pub mod reserved;

use crate::error::Result;
use crate::network::Network;
use crate::params::Params;
use flow_level::FlowLevel;
use ideal::Ideal;
use reserved::Reserved;

/// A receiver's copy of a message's bytes that the network times
/// (`NetModel::copy`), handed back to the engine when it ends: whose copy it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverCopy {
    /// The receiver, whose CPU copies the bytes, and the sender.
    pub rank: u32,
    pub peer: u32,
    /// The send's id, and the receive's (`NO_RECV`: the message waits unexpected).
    pub send: u32,
    pub recv: u32,
    /// A single-copy rendezvous message: its sender is released when the copy ends.
    pub pull: bool,
    /// The sender's synchronization wait, accounted when it is released.
    pub late: u64,
    /// When the copy would end alone: the receiver's CPU is held to then at least.
    pub until: u64,
}

/// `ReceiverCopy::recv` of a message copied before its receive is posted.
pub const NO_RECV: u32 = u32::MAX;

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
pub const FIRST_NET_KIND: u8 = 12;

/// The network's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NetKind {
    /// Flow level: a message's last byte is copied (`id`: flow, `size`:
    /// version), unless the flow's rate changed since.
    FlowDone = FIRST_NET_KIND,
    /// Flow level: the rates found again after the flows started or ended now.
    FlowSettle,
    /// Store-and-forward through ranks: a whole message reaches rank `rank`
    /// on its way to `peer` (`id`: its place in `hops::Hops`).
    Hop,
}

impl NetKind {
    pub fn from_u8(k: u8) -> NetKind {
        match k {
            12 => NetKind::FlowDone,
            13 => NetKind::FlowSettle,
            14 => NetKind::Hop,
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
    fn copy_done(&mut self, t: u64, m: ReceiverCopy) -> Result<()>;
}

/// A network model, as the engine drives it. The engine is generic over it,
/// so each call is direct (no trait object).
pub trait NetModel {
    /// A message (`msg`, its arrival event `kind`) sent by `msg.peer` at
    /// `now` leaves at `depart`, its bytes serialized in `serialization`.
    fn send<H: Host>(
        &mut self,
        host: &mut H,
        now: u64,
        depart: u64,
        kind: u8,
        msg: Pending,
        serialization: u64,
    ) -> Result<()>;

    /// Before the engine takes its next event: messages held back are queued
    /// if one may be due.
    #[inline(always)]
    fn flush<H: Host>(&mut self, _host: &mut H) {}

    /// Whether a receiver's copy of a message's bytes is the network's to
    /// time (`copy`), its end handed back by `Host::copy_done`.
    #[inline(always)]
    fn times_copies(&self) -> bool {
        false
    }

    /// The receiver's copy of a message's `s1` bytes, from `start` (t or
    /// later), as long alone as its CPU time (`copy.until`).
    fn copy<H: Host>(
        &mut self,
        _host: &mut H,
        _t: u64,
        _start: u64,
        _s1: u64,
        _copy: ReceiverCopy,
    ) -> Result<()> {
        unreachable!("only a model whose copies are flows is handed copies")
    }

    /// One of the network's events at t: Ok(Some(later)) puts it back to wait.
    fn on_event<H: Host>(
        &mut self,
        _host: &mut H,
        _kind: u8,
        _t: u64,
        _ev: &Pending,
    ) -> Result<Option<u64>> {
        unreachable!("this model queues no events of its own")
    }
}

/// A run's network model, chosen once when it starts: `drive` hands the
/// model itself to the engine, which is compiled for each (every call of
/// the model is then direct, no trait object).
pub enum Net {
    Ideal(Ideal),
    Reserved(Reserved),
    FlowLevel(FlowLevel),
}

/// What runs with a network model of any type (the engine).
pub trait Driver {
    type Output;
    fn drive<N: NetModel>(self, net: N) -> Self::Output;
}

impl Net {
    /// No congestion (`--congestion off`).
    pub fn ideal(wires: Network) -> Net {
        Net::Ideal(Ideal::new(wires))
    }

    /// One message per link at a time (`--congestion on`).
    pub fn reserved(wires: Network) -> Net {
        Net::Reserved(Reserved::new(wires))
    }

    /// Links shared by flows of `link_gap` ps per byte (`--congestion flow`).
    pub fn flow_level(wires: Network, link_gap: u64) -> Net {
        Net::FlowLevel(FlowLevel::new(wires, link_gap))
    }

    pub fn drive<D: Driver>(self, driver: D) -> D::Output {
        match self {
            Net::Ideal(m) => driver.drive(m),
            Net::Reserved(m) => driver.drive(m),
            Net::FlowLevel(m) => driver.drive(m),
        }
    }
}

impl From<Ideal> for Net {
    fn from(m: Ideal) -> Net {
        Net::Ideal(m)
    }
}

impl From<Reserved> for Net {
    fn from(m: Reserved) -> Net {
        Net::Reserved(m)
    }
}

impl From<FlowLevel> for Net {
    fn from(m: FlowLevel) -> Net {
        Net::FlowLevel(m)
    }
}

/// What a rank forwarding a message of `size` bytes (store-and-forward
/// through ranks) spends of its CPU: a receive's and a send's overhead,
/// o_r + o_s; its bytes move between the links without the CPU's copy.
pub fn forward_cost(p: &Params, size: u64) -> u64 {
    let c = p.cost(size);
    c.o_r.saturating_add(c.o_s)
}
