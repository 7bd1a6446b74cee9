//! No congestion: a message's delay is its hops' latency (store-and-forward:
//! plus each hop's serialization and each rank's forwarding, as nothing
//! contends), its arrival queued when it is sent.

use super::{forward_cost, Host, NetModel, Pending};
use crate::error::Result;
use crate::network::Network;

pub struct Ideal {
    net: Network,
    store_forward: bool,
}

impl Ideal {
    pub fn new(net: Network) -> Self {
        Ideal {
            store_forward: net.store_and_forward(),
            net,
        }
    }
}

impl NetModel for Ideal {
    #[inline]
    fn send<H: Host>(
        &mut self,
        host: &mut H,
        _now: u64,
        depart: u64,
        kind: u8,
        msg: Pending,
        serialization: u64,
    ) -> Result<()> {
        let (src, dst) = (msg.peer, msg.rank);
        let transit = if self.store_forward {
            let forward = forward_cost(host.params(), msg.size);
            self.net.forwarded_transit(src, dst, serialization, forward)
        } else {
            self.net.least_transit(src, dst)
        };
        let arrive = depart
            .saturating_add(host.params().latency(msg.size))
            .saturating_add(transit);
        host.schedule(arrive, kind, msg)
    }
}
