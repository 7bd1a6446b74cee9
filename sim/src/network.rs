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
//! they are. A link's first interval lives inline in a 16-byte slot; only a
//! link with two or more separate intervals keeps a list on the side. So a
//! message costs a constant per link of its route, and intervals that ended
//! before the current time (no message can reach a link earlier than that)
//! are dropped when their link is next used, and by a sweep of the side
//! tables whenever these have doubled: memory follows the reservations still
//! ahead, not the history.

use crate::fxhash::FxHashMap;
use crate::topology::Topology;

/// Most links whose slots are kept in a vector (16 bytes each, zeroed pages
/// that only become resident when used); beyond, slots live in a hash map.
const DENSE_LINKS: u64 = 1 << 26;

/// Side tables are swept for ended intervals when they have doubled since the
/// last sweep, and not below this many entries.
const SWEEP_FLOOR: usize = 1 << 12;

/// A link's state: its first busy interval [start, end), empty when end <= now,
/// or `SPILLED` in `start` and an index into the side lists in `end`.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    start: u64,
    end: u64,
}

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

/// Inserts [enter, enter + hold) before position `at`, merging it with the
/// intervals it touches.
fn insert(busy: &mut Vec<(u64, u64)>, at: usize, enter: u64, hold: u64) {
    let end = enter + hold;
    let joins_prev = at > 0 && busy[at - 1].1 == enter;
    let joins_next = at < busy.len() && busy[at].0 == end;
    match (joins_prev, joins_next) {
        (true, true) => {
            busy[at - 1].1 = busy[at].1;
            busy.remove(at);
        }
        (true, false) => busy[at - 1].1 = end,
        (false, true) => busy[at].0 = enter,
        (false, false) => busy.insert(at, (enter, end)),
    }
}

/// Drops the intervals ended by `now` from the front of `busy`.
fn prune(busy: &mut Vec<(u64, u64)>, now: u64) {
    let ended = busy.iter().take_while(|&&(_, end)| end <= now).count();
    if ended > 0 {
        busy.drain(..ended);
    }
}

pub struct Network {
    topo: Box<dyn Topology>,
    hop: u64,
    congestion: bool,
    /// Slots indexed by link id when the ids are few enough, else hashed.
    dense: Vec<Slot>,
    sparse: FxHashMap<u64, Slot>,
    /// Side lists of the links with two or more separate busy intervals (all
    /// of them, in order), with their link; free entries are in `unused`.
    lists: Vec<(u64, Vec<(u64, u64)>)>,
    unused: Vec<u64>,
    /// Sizes of the sparse slots and of the lists in use after their last sweep.
    swept: (usize, usize),
    route: Vec<u64>,
}

impl Network {
    pub fn new(topo: Box<dyn Topology>, hop: u64, congestion: bool) -> Self {
        let dense = if congestion && topo.link_ids() <= DENSE_LINKS {
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
        for &link in &route {
            head = self.reserve(link, now, head, hold) + self.hop;
        }
        self.route = route;
        head - depart
    }

    fn slot(&mut self, link: u64) -> &mut Slot {
        if self.dense.is_empty() {
            self.sparse.entry(link).or_default()
        } else {
            &mut self.dense[link as usize]
        }
    }

    /// Reserves `link` for `hold` from the first free moment at or after
    /// `head` that is long enough; returns that moment.
    #[inline]
    fn reserve(&mut self, link: u64, now: u64, head: u64, hold: u64) -> u64 {
        let slot = self.slot(link);
        let (start, end) = (slot.start, slot.end);
        if start == SPILLED {
            return self.reserve_listed(end as usize, now, head, hold);
        }
        // at most one interval: decided in place unless a second one starts
        if end <= now {
            if hold > 0 {
                *slot = Slot {
                    start: head,
                    end: head + hold,
                };
            }
            return head;
        }
        if end <= head {
            if end == head {
                slot.end = head + hold;
                return head;
            }
        } else if head + hold > start {
            // the head meets the interval: it waits for its end
            slot.end = end + hold;
            return end;
        } else if head + hold == start {
            slot.start = head;
            return head;
        }
        // a free gap apart from the interval: two intervals from now on
        if hold == 0 {
            return head;
        }
        let index = match self.unused.pop() {
            Some(i) => i,
            None => {
                self.lists.push((0, Vec::with_capacity(4)));
                self.lists.len() as u64 - 1
            }
        };
        *self.slot(link) = Slot {
            start: SPILLED,
            end: index,
        };
        let (owner, busy) = &mut self.lists[index as usize];
        *owner = link;
        busy.clear();
        busy.push((start, end));
        busy.insert(usize::from(end <= head), (head, head + hold));
        head
    }

    fn reserve_listed(&mut self, index: usize, now: u64, head: u64, hold: u64) -> u64 {
        let busy = &mut self.lists[index].1;
        prune(busy, now);
        let (at, enter) = first_fit(busy, head, hold);
        if hold > 0 {
            insert(busy, at, enter, hold);
        }
        if busy.len() <= 1 {
            self.unlist(index);
        }
        enter
    }

    /// Moves a list of at most one interval back into its link's slot.
    fn unlist(&mut self, index: usize) {
        let (link, busy) = &mut self.lists[index];
        let (start, end) = busy.first().copied().unwrap_or((0, 0));
        busy.clear();
        let link = *link;
        *self.slot(link) = Slot { start, end };
        self.unused.push(index as u64);
    }

    /// Drops every interval ended by `now` from the sparse slots and the side
    /// lists once these have doubled, so links never used again hold no memory.
    fn sweep(&mut self, now: u64) {
        if self.sparse.len() > (2 * self.swept.0).max(SWEEP_FLOOR) {
            self.sparse.retain(|_, s| s.start == SPILLED || s.end > now);
            self.sparse.shrink_to_fit();
            self.swept.0 = self.sparse.len();
        }
        let listed = self.lists.len() - self.unused.len();
        if listed > (2 * self.swept.1).max(SWEEP_FLOOR) {
            let mut in_use = vec![true; self.lists.len()];
            for &i in &self.unused {
                in_use[i as usize] = false;
            }
            for index in 0..self.lists.len() {
                if in_use[index] {
                    prune(&mut self.lists[index].1, now);
                    if self.lists[index].1.len() <= 1 {
                        self.unlist(index);
                    }
                }
            }
            // entries left unused at the end give their memory back
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
