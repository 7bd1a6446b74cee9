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
//!
//! Cost and memory: busy intervals that touch are merged (a gap of no length
//! holds nothing), so the messages of a pipeline down a line of links, which
//! follow each other back to back, keep one interval per link however many
//! they are. A link's first four intervals live inline in its 64-byte slot
//! (one cache line); only a link with more keeps a list on the side. So a
//! message costs a constant per link of its route, and intervals that ended
//! before the current time (no message can reach a link earlier than that)
//! are dropped when their link is next used, and by a sweep of the side
//! tables whenever these have doubled: memory follows the reservations still
//! ahead, not the history.

use crate::fxhash::FxHashMap;
use crate::prefetch::prefetch;
use crate::topology::Topology;

/// Most links whose slots are kept in a vector (64 bytes each, zeroed pages
/// that only become resident when used); beyond, slots live in a hash map.
const DENSE_LINKS: u64 = 1 << 24;

/// Side tables are swept for ended intervals when they have doubled since the
/// last sweep, and not below this many entries.
const SWEEP_FLOOR: usize = 1 << 12;

/// Lists up to this long are searched from the front, in order (cheaper
/// than a search's unpredictable branches).
const SHORT: usize = 16;

/// Busy intervals kept in a link's slot.
const INLINE: usize = 4;

/// A link's busy intervals [start, end), in order and apart, those in use
/// first (an unused entry has end 0: a reservation always ends after 0); or
/// `SPILLED` as the first start and the index of the link's side list as its end.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Slot([(u64, u64); INLINE]);

const SPILLED: u64 = u64::MAX;

/// Where a message enters a link whose busy intervals, in order and apart
/// from each other, are `busy`; and the position of the first interval after it.
fn first_fit(busy: &[(u64, u64)], head: u64, hold: u64) -> (usize, u64) {
    let mut at = 0;
    let mut enter = head;
    while at < busy.len() {
        let (start, end) = busy[at];
        if end > enter && enter + hold > start {
            enter = end;
        } else if end > enter {
            break;
        }
        at += 1;
    }
    (at, enter)
}

/// Inserts [enter, enter + hold) before position `at` of the first `len`
/// intervals of `busy` (which has room for one more), merging it with the
/// intervals it touches; returns the new count.
fn insert(busy: &mut [(u64, u64)], len: usize, at: usize, enter: u64, hold: u64) -> usize {
    let end = enter + hold;
    let joins_prev = at > 0 && busy[at - 1].1 == enter;
    let joins_next = at < len && busy[at].0 == end;
    match (joins_prev, joins_next) {
        (true, true) => {
            busy[at - 1].1 = busy[at].1;
            busy.copy_within(at + 1..len, at);
            len - 1
        }
        (true, false) => {
            busy[at - 1].1 = end;
            len
        }
        (false, true) => {
            busy[at].0 = enter;
            len
        }
        (false, false) => {
            busy.copy_within(at..len, at + 1);
            busy[at] = (enter, end);
            len + 1
        }
    }
}

/// The position of the first interval of `busy` (in order, apart) that ends
/// after `head`. A message usually reaches a link after most of those reserved
/// before it (they were ahead of it), so the search gallops from the back:
/// its cost grows with the log of the intervals after the position, not with
/// the list.
fn first_ending_after(busy: &[(u64, u64)], head: u64) -> usize {
    if busy.len() <= SHORT {
        return busy.iter().take_while(|&&(_, end)| end <= head).count();
    }
    // every interval at or after `hi` ends after `head`
    let mut hi = busy.len();
    let mut step = 1;
    loop {
        let lo = hi.saturating_sub(step);
        if lo == 0 {
            return busy[..hi].partition_point(|&(_, end)| end <= head);
        }
        if busy[lo].1 <= head {
            return lo + 1 + busy[lo + 1..hi].partition_point(|&(_, end)| end <= head);
        }
        hi = lo;
        step *= 2;
    }
}

/// How many intervals at the front of `busy` ended by `now`.
fn ended(busy: &[(u64, u64)], now: u64) -> usize {
    busy.iter().take_while(|&&(_, end)| end <= now).count()
}

fn slot_of<'a>(
    dense: &'a mut [Slot],
    sparse: &'a mut FxHashMap<u64, Slot>,
    link: u64,
) -> &'a mut Slot {
    if dense.is_empty() {
        sparse.entry(link).or_default()
    } else {
        &mut dense[link as usize]
    }
}

pub struct Network {
    topo: Box<dyn Topology>,
    hop: u64,
    congestion: bool,
    /// Slots indexed by link id when the ids are few enough, else hashed.
    dense: Vec<Slot>,
    sparse: FxHashMap<u64, Slot>,
    /// Side lists of the links with more intervals than a slot holds (all of
    /// them, in order), with their link; free entries are in `unused`.
    lists: Vec<(u64, Vec<(u64, u64)>)>,
    unused: Vec<u64>,
    /// Sizes of the sparse slots and of the lists in use after their last sweep.
    swept: (usize, usize),
    sweep_floor: usize,
    route: Vec<u64>,
}

impl Network {
    pub fn new(topo: Box<dyn Topology>, hop: u64, congestion: bool) -> Self {
        Self::with_limits(topo, hop, congestion, DENSE_LINKS, SWEEP_FLOOR)
    }

    fn with_limits(
        topo: Box<dyn Topology>,
        hop: u64,
        congestion: bool,
        dense_links: u64,
        sweep_floor: usize,
    ) -> Self {
        let dense = if congestion && topo.link_ids() <= dense_links {
            vec![Slot::default(); topo.link_ids() as usize]
        } else {
            Vec::new()
        };
        Network {
            topo,
            hop,
            congestion,
            dense,
            sparse: FxHashMap::default(),
            lists: Vec::new(),
            unused: Vec::new(),
            swept: (0, 0),
            sweep_floor,
            route: Vec::new(),
        }
    }

    pub fn topology_name(&self) -> String {
        self.topo.name()
    }

    /// The delay the network adds to a message leaving `src` at `depart`
    /// (time at which its head reaches `dst`, minus `depart`); `now` is the
    /// current time, before which no message is ever sent again.
    pub fn transit(
        &mut self,
        src: u32,
        dst: u32,
        now: u64,
        depart: u64,
        serialization: u64,
    ) -> u64 {
        if !self.congestion {
            return self.topo.hops(src, dst) as u64 * self.hop;
        }
        debug_assert!(now <= depart);
        self.sweep(now);
        let mut route = std::mem::take(&mut self.route);
        route.clear();
        self.topo.route(src, dst, &mut route);
        let mut head = depart;
        let hold = self.hop + serialization;
        for i in 0..route.len() {
            self.prefetch(&route, i);
            head = self.reserve(route[i], now, head, hold) + self.hop;
        }
        self.route = route;
        head - depart
    }

    /// A route's links do not depend on the reservations made along it, so
    /// the memory of the links ahead is requested early: the slot 8 links
    /// ahead, the side list's entry 4 ahead, its first and last intervals 2 ahead. Links are
    /// scattered across memory; waiting for each in turn dominated the cost.
    #[inline]
    fn prefetch(&self, route: &[u64], i: usize) {
        if self.dense.is_empty() {
            return;
        }
        if let Some(&link) = route.get(i + 8) {
            prefetch(&self.dense[link as usize]);
        }
        let listed = |ahead: usize| {
            let slot = &self.dense[*route.get(i + ahead)? as usize];
            (slot.0[0].0 == SPILLED).then(|| &self.lists[slot.0[0].1 as usize])
        };
        if let Some(list) = listed(4) {
            prefetch(list);
        }
        if let Some(list) = listed(2) {
            // the front is checked for ended intervals, the search starts at the back
            prefetch(list.1.as_ptr());
            if let Some(last) = list.1.last() {
                prefetch(last);
            }
        }
    }

    fn slot(&mut self, link: u64) -> &mut Slot {
        slot_of(&mut self.dense, &mut self.sparse, link)
    }

    /// Reserves `link` for `hold` from the first free moment at or after
    /// `head` that is long enough; returns that moment.
    #[inline]
    fn reserve(&mut self, link: u64, now: u64, head: u64, hold: u64) -> u64 {
        let slot = slot_of(&mut self.dense, &mut self.sparse, link);
        if slot.0[0].0 == SPILLED {
            let index = slot.0[0].1 as usize;
            return self.reserve_listed(index, now, head, hold);
        }
        let mut busy = [(0u64, 0u64); INLINE + 1];
        let used = slot.0.iter().take_while(|&&(_, end)| end > 0).count();
        let gone = ended(&slot.0[..used], now);
        let mut len = used - gone;
        busy[..len].copy_from_slice(&slot.0[gone..used]);
        let (at, enter) = first_fit(&busy[..len], head, hold);
        if hold > 0 {
            len = insert(&mut busy, len, at, enter, hold);
        }
        if len <= INLINE {
            slot.0.copy_from_slice(&busy[..INLINE]);
            return enter;
        }
        let index = match self.unused.pop() {
            Some(i) => i,
            None => {
                self.lists.push((0, Vec::new()));
                self.lists.len() as u64 - 1
            }
        };
        slot.0 = [(0, 0); INLINE];
        slot.0[0] = (SPILLED, index);
        let (owner, list) = &mut self.lists[index as usize];
        *owner = link;
        list.clear();
        list.extend_from_slice(&busy);
        enter
    }

    fn reserve_listed(&mut self, index: usize, now: u64, head: u64, hold: u64) -> u64 {
        let busy = &mut self.lists[index].1;
        // the intervals ended by `head` cannot delay the message: its search
        // starts after them, found from the back (see `first_ending_after`)
        let from = first_ending_after(busy, head);
        let (at, enter) = first_fit(&busy[from..], head, hold);
        if hold > 0 {
            let len = busy.len();
            busy.push((0, 0));
            let len = insert(busy, len, from + at, enter, hold);
            busy.truncate(len);
        }
        // intervals ended by `now` are dropped once they are a quarter of the
        // list (memory stays within 4/3 of the live intervals), not each time:
        // each drop moves the whole list
        if busy[0].1 <= now {
            let gone = busy.partition_point(|&(_, end)| end <= now);
            busy.drain(..gone);
            if busy.len() <= INLINE {
                self.unlist(index);
            }
        }
        enter
    }

    /// Moves a list that fits back into its link's slot.
    fn unlist(&mut self, index: usize) {
        let (link, busy) = &mut self.lists[index];
        let mut inline = Slot::default();
        inline.0[..busy.len()].copy_from_slice(busy);
        busy.clear();
        let link = *link;
        *self.slot(link) = inline;
        self.unused.push(index as u64);
    }

    /// Drops every interval ended by `now` from the sparse slots and the side
    /// lists once these have doubled, so links never used again hold no memory.
    fn sweep(&mut self, now: u64) {
        if self.sparse.len() > (2 * self.swept.0).max(self.sweep_floor) {
            // a slot's last interval ends last
            self.sparse
                .retain(|_, s| s.0[0].0 == SPILLED || s.0.iter().any(|&(_, end)| end > now));
            self.sparse.shrink_to_fit();
            self.swept.0 = self.sparse.len();
        }
        let listed = self.lists.len() - self.unused.len();
        if listed > (2 * self.swept.1).max(self.sweep_floor) {
            let mut in_use = vec![true; self.lists.len()];
            for &i in &self.unused {
                in_use[i as usize] = false;
            }
            for (index, used) in in_use.into_iter().enumerate() {
                if used {
                    let busy = &mut self.lists[index].1;
                    busy.drain(..ended(busy, now));
                    if busy.len() <= INLINE {
                        self.unlist(index);
                    }
                }
            }
            // entries unused at the end give their memory back
            while self.lists.last().is_some_and(|l| l.1.is_empty()) {
                self.lists.pop();
            }
            let len = self.lists.len() as u64;
            self.unused.retain(|&i| i < len);
            self.lists.shrink_to_fit();
            self.swept.1 = self.lists.len() - self.unused.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The plain model: every link keeps all its reservations, never merged
    /// nor forgotten, and a message takes the first gap long enough (the
    /// network before reservations were merged, but for the one case noted).
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
        #[test]
        fn merged_inline_and_swept_intervals_give_the_plain_answers(
            spec in prop::sample::select(vec!["torus:4x3", "hypercube:4", "full", "fattree:4"]),
            hop in 0u64..4,
            // (src, dst, time step, delay to departure, serialization)
            msgs in prop::collection::vec((0u32..12, 0u32..12, 0u64..3, 0u64..5, 0u64..40), 1..400),
            dense in any::<bool>(),
        ) {
            let ranks = 12;
            let mut net = Network::with_limits(
                topology::parse(spec, ranks).unwrap(), hop, true, if dense { u64::MAX } else { 0 }, 2,
            );
            let topo = topology::parse(spec, ranks).unwrap();
            let mut reference = Reference { links: FxHashMap::default() };
            let mut now = 0;
            let mut route = Vec::new();
            for (src, dst, step, delay, ser) in msgs {
                now += step;
                let (src, dst) = (src % ranks, dst % ranks);
                route.clear();
                topo.route(src, dst, &mut route);
                let want = reference.transit(&route, now + delay, hop, hop + ser);
                prop_assert_eq!(net.transit(src, dst, now, now + delay, ser), want);
            }
        }
    }
}
