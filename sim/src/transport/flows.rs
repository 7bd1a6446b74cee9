//! The flow-level network (`--congestion flow`): the messages crossing a link
//! at the same time share its bandwidth, max-min fairly, as SimGrid's network
//! model does with equal weights.
//!
//! A flow is one message's copy by its receiver: its (s-1) bytes along its
//! route, from the moment the receiver turns to them (the engine's `on_msg`
//! for an eager message, the match for a single-copy rendezvous one). Alone,
//! a flow takes its `lone` time, the receiver's CPU time for the message under
//! the LogGP network (o_r + (s-1)max(O, G), or (s-1)max(O, G) for a pull), so
//! that flows that never overlap give `--congestion off`'s times exactly. A
//! link (one per direction) carries one byte per the smallest G of the model.
//! Whenever a flow starts or ends, the rates of all flows in flight are found
//! again by progressive filling: the link with the least bandwidth per unfrozen
//! flow fixes the rate of the flows crossing it, which are then frozen and
//! their share taken from their other links, until every flow has a rate (a
//! flow is also frozen at its own rate alone, its bytes over its lone time). A
//! flow whose rate changes gets a new finish time and a new version; its old
//! finish event is ignored when it comes.
//!
//! A node's shared resource (`with_node_links`) is a link of B_node bytes per
//! ps on which a flow weighs `weight` per byte (the per-message cost c_node
//! spread over its bytes, flow_level.rs): k flows bound by it move at
//! B_node / (sum of their weights) each, equal rates as on any link.
//!
//! A flow may be started ahead of its time (`start_at`): it waits, taking no
//! bandwidth, until the settle at its start.
//!
//! Cost: each instant with starts or ends recomputes every flow in flight,
//! O(flows x route length x bottleneck levels). A link is given a dense
//! number when a flow first crosses it (and gives it back when the last
//! leaves), so that recomputation indexes arrays instead of hashing each
//! link of each route three times, which was most of its cost.

use super::ReceiverCopy;
use crate::fxhash::FxHashMap;

/// `ReceiverCopy::recv` of one hop of a store-and-forward message (`rank`: the
/// node it reaches, `peer`: the next hop's index, `send`: its place in the
/// engine's messages on their way).
pub const HOP_FLOW: u32 = u32::MAX - 1;

struct Flow {
    /// Dense numbers of the links of its route (see `LinkNumbers`).
    links: Vec<u32>,
    /// Bytes per picosecond it moves alone (its bytes over its lone time).
    cap: f64,
    /// What one of its bytes takes of a node link's bandwidth (1: a byte).
    weight: f64,
    /// Bytes still to move as of `since`.
    remaining: f64,
    /// Bytes per picosecond.
    rate: f64,
    since: u64,
    version: u32,
    /// Its place in `active`.
    at: usize,
    msg: ReceiverCopy,
}

/// A flow's finish as now computed: an event for (id, version) at `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub id: u32,
    pub version: u32,
    pub time: u64,
}

pub struct FlowNet {
    /// Bytes per picosecond of a link; infinite when G = 0.
    capacity: f64,
    /// Links with ids from this one on are nodes' shared copy resources
    /// (`with_node_links`), each of `node_capacity`; u64::MAX: none.
    node_links_from: u64,
    node_capacity: f64,
    flows: Vec<Option<Flow>>,
    free: Vec<u32>,
    active: Vec<u32>,
    /// Flows started ahead of their time (their `since`), not yet in `active`.
    pending: Vec<u32>,
    numbers: LinkNumbers,
    /// Per link number (scratch of progressive filling, kept to reuse its
    /// memory): capacity left, and the weight and number of the flows not yet
    /// frozen on it.
    load: Vec<Load>,
    rates: Vec<f64>,
    frozen_now: Vec<usize>,
    /// Flows started or ended since the rates were last found.
    dirty: bool,
}

impl FlowNet {
    /// `link_gap`: a link's G in picoseconds per byte.
    pub fn new(link_gap: u64) -> Self {
        FlowNet {
            capacity: bytes_per_ps(link_gap),
            node_links_from: u64::MAX,
            node_capacity: f64::INFINITY,
            flows: Vec::new(),
            free: Vec::new(),
            active: Vec::new(),
            pending: Vec::new(),
            numbers: LinkNumbers::default(),
            load: Vec::new(),
            rates: Vec::new(),
            frozen_now: Vec::new(),
            dirty: false,
        }
    }

    /// Links numbered `first_id` and up move one byte per `gap` ps (a node's
    /// copy bandwidth, shared by the messages between its ranks), not the
    /// network link's.
    pub fn with_node_links(mut self, first_id: u64, gap: f64) -> Self {
        self.node_links_from = first_id;
        self.node_capacity = if gap > 0.0 { 1.0 / gap } else { f64::INFINITY };
        self
    }

    /// Starts a flow of `bytes` over `links` at `now`, at most one byte per
    /// `gap` ps. Its rate, and the others', are found by the next `settle`,
    /// which must come at `now`: true when this start asks for one (the first
    /// change since the last), so the many sends of one instant cost one settle.
    pub fn start(
        &mut self,
        now: u64,
        links: &[u64],
        bytes: u64,
        gap: u64,
        msg: ReceiverCopy,
    ) -> bool {
        self.insert(now, now, links, bytes, bytes_per_ps(gap), 1.0, msg)
            .is_some()
    }

    /// Starts a flow of `bytes` over `links` at `at` (`now` or later) that
    /// takes `lone` ps alone, each of its bytes weighing `weight` on node
    /// links. Its rate, and the others', are found by a `settle` at `at`: the
    /// time of the settle it asks for, None when one already due at `now`
    /// serves (the starts of one instant cost one settle).
    #[allow(clippy::too_many_arguments)]
    pub fn start_at(
        &mut self,
        now: u64,
        at: u64,
        links: &[u64],
        bytes: u64,
        lone: u64,
        weight: f64,
        msg: ReceiverCopy,
    ) -> Option<u64> {
        let cap = if lone == 0 {
            f64::INFINITY
        } else {
            bytes as f64 / lone as f64
        };
        self.insert(now, at, links, bytes, cap, weight, msg)
    }

    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        now: u64,
        at: u64,
        links: &[u64],
        bytes: u64,
        cap: f64,
        weight: f64,
        msg: ReceiverCopy,
    ) -> Option<u64> {
        let later = at > now;
        let flow = Flow {
            links: links.iter().map(|&l| self.numbers.take(l)).collect(),
            cap,
            weight,
            remaining: bytes as f64,
            rate: f64::NAN, // differs from every rate: the new flow is always due
            since: at,
            version: 0,
            at: if later { 0 } else { self.active.len() },
            msg,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.flows[id as usize] = Some(flow);
                id
            }
            None => {
                self.flows.push(Some(flow));
                (self.flows.len() - 1) as u32
            }
        };
        if later {
            self.pending.push(id);
            return Some(at);
        }
        self.active.push(id);
        (!std::mem::replace(&mut self.dirty, true)).then_some(now)
    }

    /// Whether (id, version) is the flow's finish as last computed.
    pub fn is_current(&self, id: u32, version: u32) -> bool {
        matches!(self.flows.get(id as usize), Some(Some(f)) if f.version == version)
    }

    /// Ends flow `id` now (at its current finish) and returns its message, and
    /// whether a `settle` now is needed (as for `start`).
    pub fn finish(&mut self, id: u32) -> (ReceiverCopy, bool) {
        // the others keep their rates up to the settle at this same instant,
        // which moves their bytes on
        let flow = self.flows[id as usize].take().expect("a current flow");
        for &n in &flow.links {
            self.numbers.give_back(n);
        }
        self.free.push(id);
        self.active.swap_remove(flow.at);
        if let Some(&moved) = self.active.get(flow.at) {
            self.flows[moved as usize].as_mut().expect("active").at = flow.at;
        }
        (flow.msg, !std::mem::replace(&mut self.dirty, true))
    }

    /// Finds every rate again after the starts and ends at `now`; the finish
    /// times that changed are appended to `due`.
    pub fn settle(&mut self, now: u64, due: &mut Vec<Due>) {
        self.advance(now);
        self.activate(now);
        self.reallocate(now, due);
        self.dirty = false;
    }

    /// The flows started ahead whose time has come join those in flight.
    fn activate(&mut self, now: u64) {
        let mut i = 0;
        while i < self.pending.len() {
            let id = self.pending[i];
            let f = self.flows[id as usize].as_mut().expect("pending");
            if f.since <= now {
                f.since = now;
                f.at = self.active.len();
                self.active.push(id);
                self.pending.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Moves every flow's bytes on to `now` at its current rate.
    fn advance(&mut self, now: u64) {
        for &id in &self.active {
            let f = self.flows[id as usize].as_mut().expect("active");
            if f.rate.is_finite() && f.rate > 0.0 && now > f.since {
                f.remaining = (f.remaining - f.rate * (now - f.since) as f64).max(0.0);
            }
            f.since = now;
        }
    }

    /// Max-min fair rates by progressive filling; flows whose rate changed get
    /// a new version and finish time.
    fn reallocate(&mut self, now: u64, due: &mut Vec<Due>) {
        self.load.clear();
        let (from, node, link) = (self.node_links_from, self.node_capacity, self.capacity);
        let loads = self.numbers.links.iter().map(|&(id, _)| Load {
            cap: if id >= from { node } else { link },
            weight: 0.0,
            users: 0,
            node: id >= from,
        });
        self.load.extend(loads);
        for &id in &self.active {
            let f = self.flows[id as usize].as_ref().expect("active");
            for &l in &f.links {
                let e = &mut self.load[l as usize];
                e.weight += if e.node { f.weight } else { 1.0 };
                e.users += 1;
            }
        }
        // scratch kept between settles: a fresh vector of a million rates
        // would be pages mapped and zeroed at every settle
        let mut rates = std::mem::take(&mut self.rates);
        rates.clear();
        rates.resize(self.active.len(), f64::NAN);
        let mut frozen_now = std::mem::take(&mut self.frozen_now);
        let mut left = self.active.len();
        while left > 0 {
            let mut share = f64::INFINITY;
            for e in &self.load {
                if e.users > 0 {
                    share = share.min(e.share());
                }
            }
            for (k, &id) in self.active.iter().enumerate() {
                if rates[k].is_nan() {
                    share = share.min(self.flows[id as usize].as_ref().expect("active").cap);
                }
            }
            frozen_now.clear();
            for (k, &id) in self.active.iter().enumerate() {
                if !rates[k].is_nan() {
                    continue;
                }
                let f = self.flows[id as usize].as_ref().expect("active");
                let bottlenecked = f.cap <= share
                    || f.links
                        .iter()
                        .any(|&l| self.load[l as usize].share() <= share);
                if bottlenecked {
                    rates[k] = share;
                    frozen_now.push(k);
                }
            }
            for &k in &frozen_now {
                let f = self.flows[self.active[k] as usize]
                    .as_ref()
                    .expect("active");
                for &l in &f.links {
                    let e = &mut self.load[l as usize];
                    let w = if e.node { f.weight } else { 1.0 };
                    e.cap = (e.cap - share * w).max(0.0);
                    e.weight -= w;
                    e.users -= 1;
                }
            }
            // the link that set `share` is among the frozen flows' links
            assert!(
                !frozen_now.is_empty(),
                "progressive filling freezes a flow each round"
            );
            left -= frozen_now.len();
        }
        for (k, &id) in self.active.iter().enumerate() {
            let f = self.flows[id as usize].as_mut().expect("active");
            if rates[k] == f.rate {
                continue;
            }
            f.rate = rates[k];
            f.version = f.version.wrapping_add(1);
            let span = if f.remaining <= 0.0 || f.rate.is_infinite() {
                0
            } else {
                whole_ps(f.remaining / f.rate)
            };
            due.push(Due {
                id,
                version: f.version,
                time: now.saturating_add(span),
            });
        }
        self.rates = rates;
        self.frozen_now = frozen_now;
    }
}

/// One link in progressive filling.
#[derive(Debug, Clone, Copy)]
struct Load {
    /// Bytes per picosecond left to the flows not yet frozen.
    cap: f64,
    /// Their weights summed (their number where every weight is 1).
    weight: f64,
    users: u32,
    /// A node's resource, where a flow's bytes weigh its `weight`.
    node: bool,
}

impl Load {
    /// The rate each unfrozen flow would get here.
    fn share(&self) -> f64 {
        if self.weight > 0.0 {
            self.cap / self.weight
        } else {
            f64::INFINITY
        }
    }
}

/// Link ids below this are numbered through a vector indexed by id (4 bytes
/// per id up to the highest seen); larger ids, as a fully connected network
/// of many ranks has, through a hash map.
const DIRECT_IDS: u64 = 1 << 25;

/// Dense numbers for the links flows cross now: a link keeps its number while
/// some flow crosses it, and a number given back serves the next new link.
#[derive(Default)]
struct LinkNumbers {
    /// Per link id below DIRECT_IDS: its number plus one, 0 for none.
    direct: Vec<u32>,
    hashed: FxHashMap<u64, u32>,
    /// Per number: its link and how many flows cross it.
    links: Vec<(u64, u32)>,
    unused: Vec<u32>,
}

impl LinkNumbers {
    fn lookup(&self, link: u64) -> Option<u32> {
        if link < DIRECT_IDS {
            match self.direct.get(link as usize) {
                Some(&n) if n > 0 => Some(n - 1),
                _ => None,
            }
        } else {
            self.hashed.get(&link).copied()
        }
    }

    fn set(&mut self, link: u64, n: Option<u32>) {
        if link < DIRECT_IDS {
            let i = link as usize;
            if i >= self.direct.len() {
                self.direct.resize((i + 1).next_power_of_two(), 0);
            }
            self.direct[i] = n.map_or(0, |n| n + 1);
        } else {
            match n {
                Some(n) => self.hashed.insert(link, n),
                None => self.hashed.remove(&link),
            };
        }
    }

    /// `link`'s number, one more flow counted on it.
    fn take(&mut self, link: u64) -> u32 {
        let n = match self.lookup(link) {
            Some(n) => n,
            None => {
                let n = match self.unused.pop() {
                    Some(n) => n,
                    None => {
                        self.links.push((0, 0));
                        (self.links.len() - 1) as u32
                    }
                };
                self.links[n as usize] = (link, 0);
                self.set(link, Some(n));
                n
            }
        };
        self.links[n as usize].1 += 1;
        n
    }

    /// One flow fewer on number `n`; the last frees it.
    fn give_back(&mut self, n: u32) {
        let entry = &mut self.links[n as usize];
        entry.1 -= 1;
        if entry.1 == 0 {
            let link = entry.0;
            self.set(link, None);
            self.unused.push(n);
        }
    }

    /// Numbers given so far (the highest in use plus one, at most).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.links.len()
    }
}

fn bytes_per_ps(gap: u64) -> f64 {
    if gap == 0 {
        f64::INFINITY
    } else {
        1.0 / gap as f64
    }
}

/// Picoseconds a transfer of `x` ps takes, rounded up, but not for the last
/// bits of a division that was exact (300 bytes at 1/9 byte/ps is 2700 ps).
fn whole_ps(x: f64) -> u64 {
    let near = x.round();
    if (x - near).abs() <= 1e-9 * near.max(1.0) {
        near as u64
    } else {
        x.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::NO_RECV;

    fn msg() -> ReceiverCopy {
        ReceiverCopy {
            rank: 0,
            peer: 0,
            send: 0,
            recv: NO_RECV,
            pull: false,
            late: 0,
            until: 0,
        }
    }

    /// Starts a flow and settles at once (one start an instant).
    fn begin(net: &mut FlowNet, now: u64, links: &[u64], bytes: u64, gap: u64, due: &mut Vec<Due>) {
        net.start(now, links, bytes, gap, msg());
        net.settle(now, due);
    }

    fn end(net: &mut FlowNet, now: u64, id: u32, due: &mut Vec<Due>) {
        net.finish(id);
        net.settle(now, due);
    }

    fn latest(due: &[Due], id: u32) -> Due {
        *due.iter().rev().find(|d| d.id == id).expect("due")
    }

    #[test]
    fn a_flow_alone_takes_its_bytes_times_g() {
        let mut net = FlowNet::new(10);
        let mut due = Vec::new();
        begin(&mut net, 100, &[1, 2, 3], 50, 10, &mut due);
        assert_eq!(
            due,
            vec![Due {
                id: 0,
                version: 1,
                time: 600
            }]
        );
    }

    #[test]
    fn two_flows_on_one_link_each_get_half_and_the_survivor_speeds_up() {
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        begin(&mut net, 0, &[7], 100, 1, &mut due);
        begin(&mut net, 0, &[7, 8], 100, 1, &mut due);
        // both at half rate: 200 ps each
        assert_eq!(latest(&due, 0).time, 200);
        assert_eq!(latest(&due, 1).time, 200);
        assert!(net.is_current(0, latest(&due, 0).version));
        due.clear();
        end(&mut net, 200, 0, &mut due);
        // flow 1 had finished too at 200: nothing left, due now
        assert_eq!(latest(&due, 1).time, 200);
    }

    #[test]
    fn a_later_flow_slows_the_first_for_the_time_they_share() {
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        begin(&mut net, 0, &[1], 100, 1, &mut due); // alone: done at 100
        begin(&mut net, 50, &[1], 100, 1, &mut due); // from 50 both at 1/2
                                                     // flow 0: 50 bytes left at 50, at 1/2 -> 150; flow 1: 50 bytes by 150, then alone 50 more -> 200
        let f0 = latest(&due, 0);
        assert_eq!(f0.time, 150);
        assert!(!net.is_current(0, 1) && net.is_current(0, f0.version));
        due.clear();
        end(&mut net, 150, 0, &mut due);
        assert_eq!(latest(&due, 1).time, 200);
    }

    #[test]
    fn max_min_gives_the_unshared_capacity_to_the_flow_not_bottlenecked() {
        // flows A and B share link 1; B and C share link 2, and C also crosses
        // links 3: all three at 1/2 (link 1 and link 2 each split between two)
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        begin(&mut net, 0, &[1], 1000, 1, &mut due);
        begin(&mut net, 0, &[1, 2], 1000, 1, &mut due);
        begin(&mut net, 0, &[2, 3], 1000, 1, &mut due);
        for id in 0..3 {
            assert_eq!(latest(&due, id).time, 2000);
        }
        // three flows on link 1 and one on link 2 alone with a fourth: the
        // three get 1/3 each, the fourth takes link 2's remaining 2/3
        let mut net = FlowNet::new(3);
        let mut due = Vec::new();
        begin(&mut net, 0, &[1], 300, 3, &mut due);
        begin(&mut net, 0, &[1], 300, 3, &mut due);
        begin(&mut net, 0, &[1, 2], 300, 3, &mut due);
        begin(&mut net, 0, &[2], 300, 3, &mut due);
        assert_eq!(latest(&due, 0).time, 2700); // 300 bytes at 1/9 byte/ps
        assert_eq!(latest(&due, 3).time, 1350); // at 2/9
    }

    #[test]
    fn a_flow_slower_than_the_link_leaves_the_rest_to_the_others() {
        // a link of 1 byte/ps; a small message's own G is 4 ps/byte
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        begin(&mut net, 0, &[1], 100, 4, &mut due); // alone: 400 ps
        begin(&mut net, 0, &[1], 300, 1, &mut due); // gets 3/4 of the link
        assert_eq!(latest(&due, 0).time, 400);
        assert_eq!(latest(&due, 1).time, 400);
    }

    #[test]
    fn the_starts_of_one_instant_ask_for_one_settle() {
        let mut net = FlowNet::new(1);
        assert!(net.start(0, &[1], 100, 1, msg()));
        assert!(!net.start(0, &[1], 100, 1, msg()));
        let mut due = Vec::new();
        net.settle(0, &mut due);
        assert_eq!(due.len(), 2);
        assert!(due.iter().all(|d| d.time == 200));
        assert!(net.finish(1).1);
    }

    #[test]
    fn link_numbers_follow_the_flows_crossing_and_far_ids_share_as_near_ones() {
        let far = DIRECT_IDS + 12345;
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        // a far link (hashed) shared by two flows halves their rates as a near one does
        begin(&mut net, 0, &[far, 3], 100, 1, &mut due);
        begin(&mut net, 0, &[far], 100, 1, &mut due);
        assert_eq!(latest(&due, 0).time, 200);
        assert_eq!(latest(&due, 1).time, 200);
        assert_eq!(net.numbers.len(), 2);
        end(&mut net, 200, 0, &mut due);
        end(&mut net, 200, 1, &mut due);
        assert!(net.numbers.lookup(far).is_none() && net.numbers.lookup(3).is_none());
        // the numbers given back serve the next links: none is added
        due.clear();
        begin(&mut net, 300, &[7, far + 1], 10, 1, &mut due);
        assert_eq!(net.numbers.len(), 2);
        assert_eq!(due.last().expect("due").time, 310);
    }

    #[test]
    fn k_flows_through_a_node_link_share_its_bandwidth_on_top_of_their_own_gap() {
        // links of 1 ps/byte; node links (ids 100 and up) of 4 ps/byte; each flow's own G 2 ps/byte
        for k in 1..=6u64 {
            let mut net = FlowNet::new(1).with_node_links(100, 4.0);
            let mut due = Vec::new();
            for i in 0..k {
                net.start(0, &[2 * i, 2 * i + 1, 100], 1000, 2, msg());
            }
            net.settle(0, &mut due);
            // max(m G, k m G_node)
            let want = (1000 * 2).max(k * 1000 * 4);
            assert!(due.iter().all(|d| d.time == want), "k = {k}: {due:?}");
        }
        // flows of two nodes do not share: each node link has its own bandwidth
        let mut net = FlowNet::new(1).with_node_links(100, 4.0);
        let mut due = Vec::new();
        net.start(0, &[1, 100], 1000, 2, msg());
        net.start(0, &[2, 101], 1000, 2, msg());
        net.settle(0, &mut due);
        assert!(due.iter().all(|d| d.time == 4000));
    }

    #[test]
    fn a_node_link_takes_each_flows_weight_a_byte() {
        // a node link of 4 ps/byte; k flows of 1000 bytes weighing 1.5 each
        // there (a per-message cost of half their bytes' time): k 1.5 1000 4 ps
        for k in 1..=4u64 {
            let mut net = FlowNet::new(1).with_node_links(100, 4.0);
            let mut due = Vec::new();
            for i in 0..k {
                net.start_at(0, 0, &[2 * i, 100], 1000, 1000, 1.5, msg());
            }
            net.settle(0, &mut due);
            assert!(due.iter().all(|d| d.time == k * 6000), "k = {k}: {due:?}");
        }
        // the weight counts on node links only: on a plain link it is a byte
        let mut net = FlowNet::new(4);
        let mut due = Vec::new();
        net.start_at(0, 0, &[1], 1000, 0, 1.5, msg());
        net.start_at(0, 0, &[1], 1000, 0, 1.5, msg());
        net.settle(0, &mut due);
        assert!(due.iter().all(|d| d.time == 8000), "{due:?}");
    }

    #[test]
    fn a_flow_started_ahead_waits_for_its_time_and_takes_its_lone_time() {
        let mut net = FlowNet::new(1);
        let mut due = Vec::new();
        // 1000 bytes over 3000 ps alone: a third of a byte per ps
        assert_eq!(
            net.start_at(0, 500, &[1], 1000, 3000, 1.0, msg()),
            Some(500)
        );
        assert_eq!(net.start_at(0, 0, &[1], 1000, 1000, 1.0, msg()), Some(0));
        net.settle(0, &mut due);
        assert_eq!(
            due,
            vec![Due {
                id: 1,
                version: 1,
                time: 1000
            }]
        );
        // from 500 the link's byte per ps is shared: 1/3 to the first, 2/3 left
        // to the second, whose last 500 bytes then take 750 ps
        due.clear();
        net.settle(500, &mut due);
        assert_eq!(latest(&due, 0).time, 3500);
        assert_eq!(latest(&due, 1).time, 1250);
    }

    #[test]
    fn infinite_bandwidth_ends_every_flow_at_once_and_ids_are_reused() {
        let mut net = FlowNet::new(0);
        let mut due = Vec::new();
        begin(&mut net, 5, &[1], 1 << 40, 0, &mut due);
        assert_eq!(due[0].time, 5);
        end(&mut net, 5, 0, &mut due);
        due.clear();
        begin(&mut net, 9, &[1], 1, 0, &mut due);
        assert_eq!(due[0].id, 0);
    }
}
