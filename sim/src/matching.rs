//! MPI message matching: posted receives and unexpected messages per rank.
//!
//! Each (rank, source, tag) has its own FIFO (a linked list through a slab of
//! nodes), so non-overtaking order holds however many receives are
//! outstanding. Wildcard receives are FIFOs of their own; a message takes the
//! oldest (by posting sequence) among the fronts of the up to four FIFOs that
//! can match it. A wildcard receive walks its rank's unexpected messages in
//! arrival order.
//!
//! Most ranks of a collective hold one posted receive or one unexpected
//! message at a time; that one lives inline in the rank's record and never
//! touches the hash table. A second entry of its queue moves it into the
//! FIFOs; an entry of the other queue goes to the FIFOs while the slot is
//! taken. A rank's record is half a cache line (32 bytes, 512 MB at 2^24
//! ranks): the ends of its arrival-order list, needed only once its messages
//! are in the FIFOs, and its count of wildcard receives are kept aside.

use crate::fxhash::FxHashMap;

/// MPI_ANY_SOURCE / MPI_ANY_TAG.
pub const ANY: u32 = u32::MAX;
const NIL: u32 = u32::MAX;

/// What a queue entry carries: the peer's operation id and the message size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub src: u32,
    pub tag: u32,
    pub size: u64,
    pub id: u32,
    /// Rendezvous bookkeeping: the sending rank's send operation id.
    pub aux: u32,
}

#[derive(Clone, Copy)]
struct Node {
    entry: Entry,
    seq: u64,
    next: u32,
    // arrival-order list of the rank (unexpected queue only)
    r_prev: u32,
    r_next: u32,
}

fn key(rank: u32, src: u32, tag: u32) -> u128 {
    ((rank as u128) << 64) | ((src as u128) << 32) | tag as u128
}

#[derive(Default)]
struct Fifos {
    heads: FxHashMap<u128, (u32, u32)>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    seq: u64,
}

impl Fifos {
    fn push(&mut self, rank: u32, e: Entry) -> u32 {
        let node = Node {
            entry: e,
            seq: self.seq,
            next: NIL,
            r_prev: NIL,
            r_next: NIL,
        };
        self.seq += 1;
        let idx = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let k = key(rank, e.src, e.tag);
        match self.heads.get_mut(&k) {
            Some((_, tail)) => {
                let old = *tail;
                *tail = idx;
                self.nodes[old as usize].next = idx;
            }
            None => {
                self.heads.insert(k, (idx, idx));
            }
        }
        idx
    }

    fn front(&self, rank: u32, src: u32, tag: u32) -> Option<u32> {
        self.heads.get(&key(rank, src, tag)).map(|&(h, _)| h)
    }

    fn pop_front(&mut self, rank: u32, src: u32, tag: u32) -> u32 {
        let k = key(rank, src, tag);
        let (head, tail) = self.heads[&k];
        if head == tail {
            self.heads.remove(&k);
        } else {
            let next = self.nodes[head as usize].next;
            self.heads.insert(k, (next, tail));
        }
        self.free.push(head);
        head
    }
}

/// One rank's queue sizes and inline entry.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct RankQueues {
    /// The entry of the queue whose count has `INLINE` set, if one has.
    inline: Entry,
    /// Counts, with `INLINE` set while the queue's single entry is the inline one.
    posted: u32,
    unexpected: u32,
}

const _: () = assert!(std::mem::size_of::<RankQueues>() == 32);

impl RankQueues {
    fn inline_free(&self) -> bool {
        (self.posted | self.unexpected) & INLINE == 0
    }
}

const INLINE: u32 = 1 << 31;

/// Posted receives and unexpected messages of all ranks.
pub struct Matcher {
    posted: Fifos,
    unexpected: Fifos,
    ranks: Vec<RankQueues>,
    /// Per rank with wildcard receives posted, how many (messages look at
    /// wildcard FIFOs only then).
    wild_posted: FxHashMap<u32, u32>,
    /// Per rank with unexpected messages in the FIFOs: the oldest and newest (arrival order).
    uq_ends: FxHashMap<u32, (u32, u32)>,
}

fn matches(e: &Entry, src: u32, tag: u32) -> bool {
    (src == ANY || e.src == ANY || e.src == src) && (tag == ANY || e.tag == ANY || e.tag == tag)
}

impl Matcher {
    pub fn new(ranks: u32) -> Self {
        let none = Entry {
            src: 0,
            tag: 0,
            size: 0,
            id: 0,
            aux: 0,
        };
        let empty = RankQueues {
            inline: none,
            posted: 0,
            unexpected: 0,
        };
        Matcher {
            posted: Fifos::default(),
            unexpected: Fifos::default(),
            ranks: crate::bigmem::filled(ranks as usize, empty),
            wild_posted: FxHashMap::default(),
            uq_ends: FxHashMap::default(),
        }
    }

    /// Asks for `rank`'s record ahead of its use.
    #[inline]
    pub fn prefetch(&self, rank: u32) {
        if let Some(rq) = self.ranks.get(rank as usize) {
            crate::prefetch::prefetch(rq);
        }
    }

    /// A message (src, tag) arrived at `rank`: the oldest posted receive it matches, if any.
    pub fn match_posted(&mut self, rank: u32, src: u32, tag: u32) -> Option<Entry> {
        let rq = &mut self.ranks[rank as usize];
        if rq.posted == 0 {
            return None;
        }
        if rq.posted & INLINE != 0 {
            let e = rq.inline;
            if !matches(&e, src, tag) {
                return None;
            }
            rq.posted = 0;
            if e.src == ANY || e.tag == ANY {
                self.unpost_wild(rank);
            }
            return Some(e);
        }
        let e = self.match_posted_fifos(rank, src, tag)?;
        let rq = &mut self.ranks[rank as usize];
        rq.posted -= 1;
        Some(e)
    }

    fn match_posted_fifos(&mut self, rank: u32, src: u32, tag: u32) -> Option<Entry> {
        let mut best: Option<(u64, u32, u32)> = None;
        let mut consider = |f: &Fifos, s: u32, t: u32| {
            if let Some(h) = f.front(rank, s, t) {
                let seq = f.nodes[h as usize].seq;
                if best.is_none_or(|(b, _, _)| seq < b) {
                    best = Some((seq, s, t));
                }
            }
        };
        consider(&self.posted, src, tag);
        // no hashing at all in the common run without wildcard receives
        if !self.wild_posted.is_empty() && self.wild_posted.contains_key(&rank) {
            consider(&self.posted, ANY, tag);
            consider(&self.posted, src, ANY);
            consider(&self.posted, ANY, ANY);
        }
        let (_, s, t) = best?;
        if s == ANY || t == ANY {
            self.unpost_wild(rank);
        }
        let idx = self.posted.pop_front(rank, s, t);
        Some(self.posted.nodes[idx as usize].entry)
    }

    fn unpost_wild(&mut self, rank: u32) {
        let left = self
            .wild_posted
            .get_mut(&rank)
            .expect("a posted wildcard receive is counted");
        *left -= 1;
        if *left == 0 {
            self.wild_posted.remove(&rank);
        }
    }

    /// Queues a receive at `rank` that found no message.
    pub fn post(&mut self, rank: u32, e: Entry) {
        if e.src == ANY || e.tag == ANY {
            *self.wild_posted.entry(rank).or_insert(0) += 1;
        }
        let rq = &mut self.ranks[rank as usize];
        if rq.posted == 0 && rq.inline_free() {
            rq.inline = e;
            rq.posted = INLINE | 1;
            return;
        }
        if rq.posted & INLINE != 0 {
            rq.posted = 1;
            let old = rq.inline;
            self.posted.push(rank, old);
        }
        self.ranks[rank as usize].posted += 1;
        self.posted.push(rank, e);
    }

    /// A receive (src, tag) is posted at `rank`: the oldest unexpected message it matches.
    pub fn match_unexpected(&mut self, rank: u32, src: u32, tag: u32) -> Option<Entry> {
        let rq = &mut self.ranks[rank as usize];
        if rq.unexpected == 0 {
            return None;
        }
        if rq.unexpected & INLINE != 0 {
            let e = rq.inline;
            if !matches(&e, src, tag) {
                return None;
            }
            rq.unexpected = 0;
            return Some(e);
        }
        let e = self.match_unexpected_fifos(rank, src, tag)?;
        self.ranks[rank as usize].unexpected -= 1;
        Some(e)
    }

    fn match_unexpected_fifos(&mut self, rank: u32, src: u32, tag: u32) -> Option<Entry> {
        let idx = if src != ANY && tag != ANY {
            self.unexpected.front(rank, src, tag)?
        } else {
            let mut cur = self.uq_ends.get(&rank).map_or(NIL, |e| e.0);
            loop {
                if cur == NIL {
                    return None;
                }
                let n = &self.unexpected.nodes[cur as usize];
                if (src == ANY || n.entry.src == src) && (tag == ANY || n.entry.tag == tag) {
                    break cur;
                }
                cur = n.r_next;
            }
        };
        let e = self.unexpected.nodes[idx as usize].entry;
        // the oldest match of its (src, tag) FIFO is that FIFO's front
        let popped = self.unexpected.pop_front(rank, e.src, e.tag);
        debug_assert_eq!(popped, idx);
        let (prev, next) = {
            let n = &self.unexpected.nodes[idx as usize];
            (n.r_prev, n.r_next)
        };
        let ends = self
            .uq_ends
            .get_mut(&rank)
            .expect("a rank with FIFO messages has ends");
        if prev == NIL {
            ends.0 = next;
        } else {
            self.unexpected.nodes[prev as usize].r_next = next;
        }
        if next == NIL {
            ends.1 = prev;
        } else {
            self.unexpected.nodes[next as usize].r_prev = prev;
        }
        if *ends == (NIL, NIL) {
            self.uq_ends.remove(&rank);
        }
        Some(e)
    }

    /// Queues a message at `rank` that found no receive.
    pub fn add_unexpected(&mut self, rank: u32, e: Entry) {
        let rq = &mut self.ranks[rank as usize];
        if rq.unexpected == 0 && rq.inline_free() {
            rq.inline = e;
            rq.unexpected = INLINE | 1;
            return;
        }
        if rq.unexpected & INLINE != 0 {
            rq.unexpected = 1;
            let old = rq.inline;
            self.push_unexpected(rank, old);
        }
        self.ranks[rank as usize].unexpected += 1;
        self.push_unexpected(rank, e);
    }

    fn push_unexpected(&mut self, rank: u32, e: Entry) {
        let idx = self.unexpected.push(rank, e);
        let ends = self.uq_ends.entry(rank).or_insert((NIL, NIL));
        let old_tail = ends.1;
        self.unexpected.nodes[idx as usize].r_prev = old_tail;
        if old_tail == NIL {
            ends.0 = idx;
        } else {
            self.unexpected.nodes[old_tail as usize].r_next = idx;
        }
        ends.1 = idx;
    }

    pub fn posted_len(&self) -> u64 {
        self.ranks.iter().map(|r| (r.posted & !INLINE) as u64).sum()
    }

    pub fn unexpected_len(&self) -> u64 {
        self.ranks
            .iter()
            .map(|r| (r.unexpected & !INLINE) as u64)
            .sum()
    }
}
