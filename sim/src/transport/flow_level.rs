//! The flow-level network (`--congestion flow`, flows.rs): a message's first
//! byte is delayed by its hops as without congestion, and the receiver's copy
//! of its bytes is a flow sharing the links' bandwidth; the rates are found
//! again (`FlowSettle`) after flows start or end, and a flow's end
//! (`FlowDone`) hands the copy back to the engine. Store-and-forward moves a
//! message hop by hop, each hop's bytes a flow of their own.

use super::hops::{schedule_hop, Hops};
use super::{FlowMsg, Host, NetKind, NetModel, Pending};
use crate::error::Result;
use crate::flows::{Due, HOP_FLOW};
use crate::network::Network;

pub struct FlowLevel {
    net: Network,
    /// Scratch of the finish times a start or end changed.
    due: Vec<Due>,
    /// Store-and-forward: messages travel as `Hop` events.
    hop_by_hop: bool,
    hops: Hops,
}

impl FlowLevel {
    pub fn new(net: Network) -> Self {
        FlowLevel {
            hop_by_hop: net.forwards_hop_by_hop(),
            net,
            due: Vec::new(),
            hops: Hops::default(),
        }
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
        let whole = FlowMsg {
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
        match self
            .net
            .start_hop_flow(now, head, link, from, s1, lone, whole)
        {
            Some(at) => schedule_settle(host, at),
            None => Ok(()),
        }
    }

    /// The rates found again; each flow whose finish moved gets an event.
    fn on_settle<H: Host>(&mut self, host: &mut H, t: u64) -> Result<Option<u64>> {
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

    /// A flow's last byte at t, unless its finish moved since this event was
    /// queued: a hop's bytes make the message whole at its far end; a
    /// receiver's copy goes back to the engine.
    fn on_done<H: Host>(&mut self, host: &mut H, t: u64, ev: &Pending) -> Result<Option<u64>> {
        if !self.net.flow_is_current(ev.id, ev.size as u32) {
            return Ok(None);
        }
        let (m, settle) = self.net.finish_flow(ev.id);
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
            .saturating_add(host.params().l)
            .saturating_add(self.net.least_transit(msg.peer, msg.rank));
        host.schedule(arrive, kind, msg)
    }

    #[inline(always)]
    fn copies_as_flows(&self) -> bool {
        true
    }

    fn copy<H: Host>(
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
