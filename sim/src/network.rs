//! The network between NICs: per-hop latency, and with congestion on, links
//! that carry one message at a time per direction.
//!
//! Congestion is modelled at injection: a message reserves each link of its
//! route in turn, the link busy for the hop latency plus the message's
//! serialization (s-1)G, its head moving on after the hop latency. Each link
//! keeps its busy intervals; a message takes the first free gap at or after
//! its head's arrival, so a message reserved later but reaching a link earlier
//! is not queued behind one still on its way. Reservations are made in event
//! order, so the result is deterministic. There is no flow-level bandwidth
//! sharing.

use crate::fxhash::FxHashMap;
use crate::topology::Topology;
use std::collections::VecDeque;

/// Most links whose state is kept in a vector (24 bytes each when idle).
const DENSE_LINKS: u64 = 1 << 22;

pub struct Network {
    topo: Box<dyn Topology>,
    hop: u64,
    congestion: bool,
    /// Busy intervals per link: in a vector indexed by link id when the ids are
    /// few enough, else in a hash map.
    dense: Vec<VecDeque<(u64, u64)>>,
    sparse: FxHashMap<u64, VecDeque<(u64, u64)>>,
    route: Vec<u64>,
}

impl Network {
    pub fn new(topo: Box<dyn Topology>, hop: u64, congestion: bool) -> Self {
        let dense = if congestion && topo.link_ids() <= DENSE_LINKS {
            (0..topo.link_ids()).map(|_| VecDeque::new()).collect()
        } else {
            Vec::new()
        };
        Network {
            topo,
            hop,
            congestion,
            dense,
            sparse: FxHashMap::default(),
            route: Vec::new(),
        }
    }

    pub fn topology_name(&self) -> String {
        self.topo.name()
    }

    /// The delay the network adds to a message leaving `src` at `depart`
    /// (time at which its head reaches `dst`, minus `depart`).
    pub fn transit(&mut self, src: u32, dst: u32, depart: u64, serialization: u64) -> u64 {
        if !self.congestion {
            return self.topo.hops(src, dst) as u64 * self.hop;
        }
        self.route.clear();
        self.topo.route(src, dst, &mut self.route);
        let mut head = depart;
        let hold = self.hop + serialization;
        for &link in &self.route {
            let busy = if self.dense.is_empty() {
                self.sparse.entry(link).or_default()
            } else {
                &mut self.dense[link as usize]
            };
            // nothing is ever reserved before `depart` again: forget the past
            while busy.front().is_some_and(|&(_, end)| end <= depart) {
                busy.pop_front();
            }
            // intervals ending by `head` cannot delay it: start looking after them
            let mut at = busy.partition_point(|&(_, end)| end <= head);
            let mut enter = head;
            while at < busy.len() {
                let (start, end) = busy[at];
                if enter + hold <= start {
                    break;
                }
                enter = enter.max(end);
                at += 1;
            }
            if hold > 0 {
                busy.insert(at, (enter, enter + hold));
            }
            head = enter + self.hop;
        }
        head - depart
    }
}
