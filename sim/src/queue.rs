//! The event queue: a radix heap of events ordered by (time, sequence number).
//!
//! Sequence numbers are unique, so the order is total and repeatable. A
//! sequence number is given when an event is created and kept when the event
//! is put back to wait for a busy resource (LogGOPSim's rule), so same-time
//! events keep their creation order.
//!
//! Events are kept in a radix heap on time (a bucket per highest differing
//! bit) and, once their time comes, sorted by sequence number.
//!
//! A radix heap needs monotone keys: nothing is queued before the event being
//! handled. That holds because a rank's resources are never free before the
//! current time once it has acted; every push checks it. Buckets are plain
//! vectors holding the events themselves (no side table), so pushes and pops
//! walk memory in order: a binary heap over millions of events spent most of
//! its time in cache misses.

/// Emptied buckets larger than this (in events) are not kept by their
/// bucket; they wait as spares for the next bucket that grows past it.
const KEEP_CAPACITY: usize = 1 << 16;

/// Most spare vectors kept: a step where every rank acts at once holds one
/// large list being handled and one being filled, so two spares suffice.
const SPARES: usize = 2;

/// How many events ahead of a list's reading or writing point its memory is
/// asked for: 2.5 KB, as far as a memory access takes while a few dozen
/// events are handled (16 left the writes to a 2^20-rank step's bucket
/// waiting for memory).
const STREAM_AHEAD: usize = 64;

/// Most events one run can create.
pub const MAX_EVENTS: u64 = 1 << 59;

/// Added to an event's sequence number to put it after every event due at the
/// same time that has none (`late_seq`), those created later included.
const LATE: u64 = 1 << 59;

/// An event: when, its order among same-time events, and its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<P: Copy> {
    pub time: u64,
    /// sequence << 4 | kind, so that kinds travel in the key's spare bits
    pub seq_kind: u64,
    pub data: P,
}

impl<P: Copy> Event<P> {
    pub fn seq(&self) -> u64 {
        self.seq_kind >> 4
    }
    pub fn kind(&self) -> u8 {
        (self.seq_kind & 15) as u8
    }
}

pub struct EventQueue<P: Copy> {
    /// Events at the current time, in sequence order, from `head` on (those
    /// before it were popped). A vector read from a moving position, not a
    /// ring: reading and indexing it cost no wrap-around arithmetic.
    now: Vec<Event<P>>,
    head: usize,
    /// buckets[i]: events whose time differs from `now_time` first in bit i-1.
    buckets: Vec<Vec<Event<P>>>,
    now_time: u64,
    len: usize,
    next_seq: u64,
    /// Large spent vectors, their pages already mapped: a bucket that grows
    /// past KEEP_CAPACITY takes one instead of asking the system for fresh
    /// memory (whose page faults cost a third of a 2^20-rank run's time).
    spares: Vec<Vec<Event<P>>>,
    /// The earliest non-empty bucket as `next_time` scanned it, until a push
    /// into the buckets (the refill that follows needs no second pass).
    scanned: Option<Scan>,
}

/// A bucket's index, earliest and latest times, and whether its events are in
/// sequence order.
#[derive(Debug, Clone, Copy)]
struct Scan {
    bucket: usize,
    min: u64,
    max: u64,
    sorted: bool,
}

impl<P: Copy> Default for EventQueue<P> {
    fn default() -> Self {
        EventQueue {
            now: Vec::new(),
            head: 0,
            buckets: (0..65).map(|_| Vec::new()).collect(),
            now_time: 0,
            len: 0,
            next_seq: 0,
            spares: Vec::new(),
            scanned: None,
        }
    }
}

impl<P: Copy> EventQueue<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh sequence number for a new event, or None once MAX_EVENTS were made.
    pub fn next_seq(&mut self) -> Option<u64> {
        let s = self.next_seq;
        if s >= MAX_EVENTS {
            return None;
        }
        self.next_seq += 1;
        Some(s)
    }

    /// A fresh sequence number that orders its event after every other event due at
    /// its time, whenever those are created, or None once MAX_EVENTS were made.
    pub fn late_seq(&mut self) -> Option<u64> {
        self.next_seq().map(|s| s | LATE)
    }

    /// How many sequence numbers were given out (events created).
    pub fn created(&self) -> u64 {
        self.next_seq
    }

    #[inline(always)]
    pub fn push(&mut self, time: u64, seq: u64, kind: u8, data: P) {
        debug_assert!(kind < 16 && seq < LATE << 1);
        assert!(
            time >= self.now_time,
            "event queued in the past (time {time} < {})",
            self.now_time
        );
        let e = Event {
            time,
            seq_kind: (seq << 4) | kind as u64,
            data,
        };
        self.len += 1;
        if time == self.now_time {
            self.push_now(e);
        } else {
            let b = (64 - (time ^ self.now_time).leading_zeros()) as usize;
            self.scanned = None;
            let bucket = &mut self.buckets[b];
            if bucket.len() == bucket.capacity() && bucket.len() >= KEEP_CAPACITY {
                grow(bucket, &mut self.spares);
            }
            bucket.push(e);
            // a bucket fills in order, often far beyond the caches: its lines
            // a few events ahead are asked for before they are written
            crate::prefetch::prefetch(bucket.as_ptr().wrapping_add(bucket.len() + STREAM_AHEAD));
        }
    }

    /// Queues an event due at the current time.
    fn push_now(&mut self, e: Event<P>) {
        if self.now.len() == self.now.capacity() && self.head >= self.now.len() / 2 {
            // the popped events' room serves again rather than the list
            // doubling: a list of every rank's step is gigabytes at 2^24 ranks
            self.now.copy_within(self.head.., 0);
            self.now.truncate(self.now.len() - self.head);
            self.head = 0;
        }
        // a new event has the highest sequence number; keep the order anyway
        match self.now.last() {
            Some(b) if b.seq_kind > e.seq_kind => {
                let at =
                    self.head + self.now[self.head..].partition_point(|x| x.seq_kind < e.seq_kind);
                self.now.insert(at, e);
            }
            _ => self.now.push(e),
        }
    }

    /// The earliest event (by time, then sequence number).
    #[inline]
    pub fn pop(&mut self) -> Option<Event<P>> {
        if self.head == self.now.len() {
            if self.len == 0 {
                return None;
            }
            self.refill();
        }
        let e = self.now[self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// Makes the earliest non-empty bucket's earliest events the current list
    /// (the current list is empty, the queue is not).
    #[inline(never)]
    fn refill(&mut self) {
        let Scan {
            bucket: i,
            min,
            max,
            sorted,
        } = match self.scanned.take() {
            Some(scan) => scan,
            None => self.scan(),
        };
        let mut moving = std::mem::take(&mut self.buckets[i]);
        self.now_time = min;
        if min != max {
            // the earliest events stay in the bucket's own vector, which becomes
            // the current list: a step where millions of events fall due at once
            // (all ranks of a collective) is never copied, nor held twice
            let buckets = &mut self.buckets;
            moving.retain(|e| {
                if e.time == min {
                    return true;
                }
                buckets[(64 - (e.time ^ min).leading_zeros()) as usize].push(*e);
                false
            });
        }
        if !sorted {
            moving.sort_unstable_by_key(|e| e.seq_kind);
        }
        let mut spent = std::mem::replace(&mut self.now, moving);
        self.head = 0;
        // a small spent list's memory serves the bucket again; a large one
        // waits as a spare for the next bucket to grow (keeping every
        // bucket's high-water mark would cost gigabytes)
        spent.clear();
        if spent.capacity() <= KEEP_CAPACITY {
            self.buckets[i] = spent;
        } else {
            self.spares.push(spent);
            // the largest first; beyond SPARES the smallest are given back
            self.spares
                .sort_unstable_by_key(|v| std::cmp::Reverse(v.capacity()));
            self.spares.truncate(SPARES);
        }
    }

    /// The time of the next event to pop, if any. The current time does not
    /// move: events may still be pushed for any time from it on.
    pub fn next_time(&mut self) -> Option<u64> {
        if self.head < self.now.len() {
            return Some(self.now_time);
        }
        if self.len == 0 {
            return None;
        }
        let scan = match self.scanned {
            Some(scan) => scan,
            None => {
                let scan = self.scan();
                self.scanned = Some(scan);
                scan
            }
        };
        Some(scan.min)
    }

    /// The earliest non-empty bucket (the queue is not empty): one pass finds
    /// its earliest and latest times and whether its events are in sequence
    /// order (each a pass saved: a bucket holding every rank's step is larger
    /// than the caches).
    fn scan(&self) -> Scan {
        let bucket = self
            .buckets
            .iter()
            .position(|b| !b.is_empty())
            .expect("len > 0");
        let (mut min, mut max) = (u64::MAX, 0);
        let (mut sorted, mut prev) = (true, 0);
        for e in &self.buckets[bucket] {
            min = min.min(e.time);
            max = max.max(e.time);
            sorted &= e.seq_kind >= prev;
            prev = e.seq_kind;
        }
        Scan {
            bucket,
            min,
            max,
            sorted,
        }
    }

    /// The event `k` places behind the next one to pop, if it is due at the
    /// current time (so that its memory can be asked for ahead).
    #[inline]
    pub fn peek_due(&self, k: usize) -> Option<&Event<P>> {
        // the list is read in order, often from beyond the caches: the events
        // after that one are asked for too
        let at = self.head + k;
        crate::prefetch::prefetch(self.now.as_ptr().wrapping_add(at + STREAM_AHEAD));
        self.now.get(at)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Makes room in a full `bucket`: moves its events into the largest spare
/// when that is larger, else into a new vector twice its size (advised to use
/// huge pages), its old vector becoming a spare.
#[cold]
#[inline(never)]
fn grow<P: Copy>(bucket: &mut Vec<Event<P>>, spares: &mut Vec<Vec<Event<P>>>) {
    let mut bigger = match spares.first() {
        Some(s) if s.capacity() > bucket.len() => spares.remove(0),
        _ => crate::bigmem::with_capacity(2 * bucket.capacity()),
    };
    bigger.extend_from_slice(bucket);
    let mut old = std::mem::replace(bucket, bigger);
    old.clear();
    if spares.len() < SPARES {
        spares.push(old);
        spares.sort_unstable_by_key(|v| std::cmp::Reverse(v.capacity()));
    }
}
