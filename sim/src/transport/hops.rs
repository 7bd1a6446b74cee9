//! Store-and-forward, hop by hop (links reserved through ranks, or at the
//! flow level): the messages on their way, and the part of a hop every model
//! shares. A message leaves over hop `k` of its route once it is whole at
//! the node before (sent, or forwarded by a rank's CPU: `Host::forward_at`);
//! the model says when it enters the link and how its bytes cross; the
//! receiver gets its first byte after the last hop's latency and L, and
//! copies its bytes as ever (at the flow level, over the last link).

use super::{Host, NetKind, Pending};
use crate::error::Result;
use crate::network::{Network, Step};

#[derive(Default)]
pub struct Hops {
    /// Messages on their way and their arrival kinds, by place; free places.
    in_flight: Vec<(Pending, u8)>,
    free: Vec<u32>,
}

/// One hop of a parked message: the message, its route's hop, and its
/// bytes' serialization.
pub struct Leg {
    pub msg: Pending,
    pub kind: u8,
    pub step: Step,
    pub serialization: u64,
    pub s1: u64,
}

impl Hops {
    /// Keeps a message on its way; its place.
    pub fn park(&mut self, msg: Pending, kind: u8) -> u32 {
        match self.free.pop() {
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

    /// The message parked at `place`.
    pub fn message(&self, place: u32) -> Pending {
        self.in_flight[place as usize].0
    }

    /// Hop `k` of the message parked at `place`.
    pub fn leg<H: Host>(&self, host: &H, net: &mut Network, place: u32, k: u32) -> Leg {
        let (msg, kind) = self.in_flight[place as usize];
        let s1 = msg.size.saturating_sub(1);
        Leg {
            msg,
            kind,
            step: net.step(msg.peer, msg.rank, k),
            serialization: s1.saturating_mul(host.params().cost(msg.size).big_g),
            s1,
        }
    }

    /// The leg's head reaches the far end of its link at `head`: on the last
    /// hop the receiver gets the message (None); otherwise the `Hop` event
    /// for the next node, to queue when the message is whole there.
    pub fn arrive<H: Host>(
        &mut self,
        host: &mut H,
        leg: &Leg,
        place: u32,
        k: u32,
        head: u64,
    ) -> Result<Option<Pending>> {
        if leg.step.last {
            self.free.push(place);
            let l = host.params().latency(leg.msg.size);
            host.schedule(head.saturating_add(l), leg.kind, leg.msg)?;
            return Ok(None);
        }
        Ok(Some(Pending {
            size: leg.msg.size,
            rank: leg.step.node,
            peer: leg.msg.rank,
            tag: k + 1,
            id: place,
        }))
    }
}

/// Queues a `Hop` event.
pub fn schedule_hop<H: Host>(host: &mut H, at: u64, ev: Pending) -> Result<()> {
    host.schedule(at, NetKind::Hop as u8, ev)
}
