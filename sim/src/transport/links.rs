//! The busy intervals of every link, for the congested network.
//!
//! A link's intervals [start, end) are kept in order and apart (intervals
//! that touch are merged). Its first four live inline in its 64-byte slot
//! (one cache line). A link with more keeps them in a chunk of one shared
//! arena, and its slot holds the chunk's place and length and the end of its
//! last interval. So a reservation reaches a link's state in one
//! step from its slot, and the common one, a message reaching the link after
//! every interval on it, is decided from the slot alone: before, each listed
//! link cost three dependent cache misses (slot, list header, list), which
//! was most of a large congested run's time.
//!
//! Chunks hold a power of two of intervals; a full chunk first drops the
//! intervals ended by the current time, then moves to one twice its size.
//! Freed chunks are reused by size, a larger one split when none of the size
//! is free. The arena sits on huge pages in a mapping that grows and shrinks
//! in place (bigmem::Mapped), as the slots do on topologies whose links are
//! all used.
//!
//! Memory follows the reservations still ahead, not the history: intervals
//! that ended before the current time (no message can reach a link earlier)
//! are dropped by a sweep of the listed links whenever these have doubled or
//! the arena has grown half again beyond what the last sweep left; the sweep
//! compacts the arena (chunks slide down to its start, each cut to the
//! smallest size with room) and gives the memory beyond back.

use crate::fxhash::FxHashMap;
use crate::prefetch::prefetch;

/// Busy intervals kept in a link's slot.
const INLINE: usize = 4;

/// The smallest chunk (intervals): a list starts with one more than INLINE.
const MIN_CHUNK: usize = 8;

/// The first start of a slot whose intervals are in the arena.
const SPILLED: u64 = u64::MAX;

/// A link's state: up to INLINE intervals, those in use first (an unused
/// entry has end 0: a reservation always ends after 0); or, when the first
/// start is SPILLED, a `Chunk` (see `Chunk::of`).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub struct Slot([(u64, u64); INLINE]);

/// Where a listed link's intervals are, with the end of its last.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    offset: usize,
    len: usize,
    /// capacity MIN_CHUNK << class
    class: u32,
    /// index of the link in `LinkTable::listed`
    owner: usize,
    last_end: u64,
}

impl Chunk {
    fn of(slot: &Slot) -> Chunk {
        let s = &slot.0;
        Chunk {
            offset: s[0].1 as usize,
            len: s[1].0 as usize,
            class: s[1].1 as u32,
            owner: s[2].0 as usize,
            last_end: s[3].1,
        }
    }

    fn store(&self, slot: &mut Slot) {
        slot.0 = [
            (SPILLED, self.offset as u64),
            (self.len as u64, self.class as u64),
            (self.owner as u64, 0),
            (0, self.last_end),
        ];
    }

    fn capacity(&self) -> usize {
        MIN_CHUNK << self.class
    }
}

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
/// after `head`, searched outward from `guess`: its cost grows with the log of
/// the distance between the two. A message reaching the links of a straight
/// run lands about as far from the back of each link's intervals as of the
/// last (the same messages hold neighbouring links at about the same time):
/// on a 512x512 torus the distance was the same in 77% of the searches and
/// within one in 97%, where a third of the searches went 16 to 63 intervals
/// back. Without a guess (`busy.len()`), the search starts from the back: a
/// message usually reaches a link after most of those reserved before it.
fn first_ending_after(busy: &[(u64, u64)], head: u64, guess: usize) -> usize {
    let len = busy.len();
    let g = guess.min(len);
    if g < len && busy[g].1 <= head {
        // after g: gallop forward; every interval before `lo` ends by `head`
        let mut lo = g + 1;
        let mut step = 1;
        while lo + step <= len && busy[lo + step - 1].1 <= head {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(len);
        return lo + busy[lo..hi].partition_point(|&(_, end)| end <= head);
    }
    // at or before g: gallop back; the answer is at most `hi`
    let mut hi = g;
    let mut step = 1;
    while hi >= step && busy[hi - step].1 > head {
        hi -= step;
        step *= 2;
    }
    let lo = if hi >= step { hi - step + 1 } else { 0 };
    lo + busy[lo..hi].partition_point(|&(_, end)| end <= head)
}

/// How many intervals at the front of `busy` ended before `now`. One ending
/// at `now` is kept: a reservation from `now` touches it and must merge with
/// it, or a message holding the link for no time could slip in between.
fn ended(busy: &[(u64, u64)], now: u64) -> usize {
    busy.iter().take_while(|&&(_, end)| end < now).count()
}

/// Chunks of intervals in one vector, reused by size class.
#[derive(Default)]
struct Arena {
    data: crate::bigmem::Mapped<(u64, u64)>,
    /// Per class: offsets of free chunks.
    free: Vec<Vec<usize>>,
}

impl Arena {
    fn alloc(&mut self, class: u32) -> usize {
        let c = class as usize;
        if let Some(offset) = self.free.get_mut(c).and_then(Vec::pop) {
            return offset;
        }
        // a larger free chunk is split: its first part serves, the rest is
        // kept as one free chunk of each smaller class
        if let Some(larger) = (c + 1..self.free.len()).find(|&k| !self.free[k].is_empty()) {
            let offset = self.free[larger].pop().expect("not empty");
            for k in c..larger {
                self.free[k].push(offset + (MIN_CHUNK << k));
            }
            return offset;
        }
        let size = MIN_CHUNK << class;
        let offset = self.data.len();
        self.data.resize(offset + size, (0, 0));
        offset
    }

    fn release(&mut self, offset: usize, class: u32) {
        let c = class as usize;
        if self.free.len() <= c {
            self.free.resize_with(c + 1, Vec::new);
        }
        self.free[c].push(offset);
    }

    /// A slot holding `chunk`'s intervals (at most INLINE) in place.
    fn inline(&self, chunk: &Chunk) -> Slot {
        let mut slot = Slot::default();
        slot.0[..chunk.len].copy_from_slice(&self.data[chunk.offset..chunk.offset + chunk.len]);
        slot
    }

    /// Moves `chunk`'s intervals to a chunk of `class`.
    fn move_to(&mut self, chunk: &mut Chunk, class: u32) {
        let offset = self.alloc(class);
        self.data
            .copy_within(chunk.offset..chunk.offset + chunk.len, offset);
        self.release(chunk.offset, chunk.class);
        chunk.offset = offset;
        chunk.class = class;
    }
}

/// Fewest listed links or hashed slots before a sweep.
pub const SWEEP_FLOOR: usize = 1 << 12;

/// Every link's busy intervals.
pub struct LinkTable {
    /// Slots indexed by link id when the ids are few enough, else hashed.
    dense: crate::bigmem::Mapped<Slot>,
    sparse: FxHashMap<u64, Slot>,
    arena: Arena,
    /// The links whose intervals are in the arena (NONE: a free entry, whose
    /// index is in `vacant`).
    listed: Vec<u64>,
    vacant: Vec<usize>,
    /// Sizes of the sparse slots and of the listed links after their last sweep.
    swept: (usize, usize),
    sweep_floor: usize,
    /// Arena size (intervals) beyond which the listed links are swept.
    arena_limit: usize,
    /// How far from the back of its link's intervals the last search of the
    /// current route ended (0 before the first: from the back), where the
    /// next starts.
    finger: usize,
}

const NONE: u64 = u64::MAX;

fn slot_of<'a>(
    dense: &'a mut crate::bigmem::Mapped<Slot>,
    sparse: &'a mut FxHashMap<u64, Slot>,
    link: u64,
) -> &'a mut Slot {
    if dense.is_empty() {
        sparse.entry(link).or_default()
    } else {
        &mut dense[link as usize]
    }
}

impl LinkTable {
    /// A table for link ids below `ids`, in a vector when `dense`, on huge
    /// pages when `huge` too (most ids are used).
    pub fn new(ids: u64, dense: bool, huge: bool, sweep_floor: usize) -> Self {
        let dense = if dense {
            // SAFETY: an all-zero slot is an empty one (Slot::default)
            unsafe { crate::bigmem::zeroed(ids as usize, huge) }
        } else {
            crate::bigmem::Mapped::default()
        };
        LinkTable {
            dense,
            sparse: FxHashMap::default(),
            arena: Arena::default(),
            listed: Vec::new(),
            vacant: Vec::new(),
            swept: (0, 0),
            sweep_floor,
            arena_limit: sweep_floor.saturating_mul(MIN_CHUNK),
            finger: 0,
        }
    }

    /// A route's links do not depend on the reservations made along it, so
    /// the memory of the links ahead (`route` may be several routes end to
    /// end) is requested early: the slot 16 links ahead; 6 ahead, the last
    /// intervals of a listed link's chunk (where a reservation after every
    /// interval goes) and those where the route's last search ended, as far
    /// from the back (where this one will likely end: see
    /// `first_ending_after`). Reading the chunk's place needs the slot, which
    /// 8 and 3 links ahead was often still on its way. Links are scattered
    /// across memory; waiting for each in turn dominated the cost.
    #[inline]
    pub fn prefetch(&self, route: &[u64], i: usize) {
        if self.dense.is_empty() {
            return;
        }
        if let Some(&link) = route.get(i + 16) {
            prefetch(&self.dense[link as usize]);
        }
        if let Some(&link) = route.get(i + 6) {
            let slot = &self.dense[link as usize];
            if slot.0[0].0 == SPILLED {
                let c = Chunk::of(slot);
                let data = self.arena.data.as_ptr();
                prefetch(data.wrapping_add(c.offset + c.len - 1));
                if self.finger > 0 && self.finger < c.len {
                    let at = c.offset + c.len - self.finger;
                    prefetch(data.wrapping_add(at - 1));
                    prefetch(data.wrapping_add(at));
                }
            }
        }
    }

    /// A new route: its first search starts from the back.
    pub fn start_route(&mut self) {
        self.finger = 0;
    }

    /// Reserves `link` for `hold` from the first free moment at or after
    /// `head` that is long enough; returns that moment. `now` is the current
    /// time: intervals ended by then can delay no message.
    #[inline]
    pub fn reserve(&mut self, link: u64, now: u64, head: u64, hold: u64) -> u64 {
        let slot = slot_of(&mut self.dense, &mut self.sparse, link);
        if slot.0[0].0 == SPILLED {
            let mut chunk = Chunk::of(slot);
            let enter = reserve_listed(
                &mut self.arena,
                &mut chunk,
                &mut self.finger,
                now,
                head,
                hold,
            );
            if chunk.len <= INLINE {
                *slot = self.arena.inline(&chunk);
                self.arena.release(chunk.offset, chunk.class);
                self.listed[chunk.owner] = NONE;
                self.vacant.push(chunk.owner);
            } else {
                chunk.store(slot);
            }
            return enter;
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
        // a fifth interval: the link's intervals move to the arena
        let offset = self.arena.alloc(0);
        self.arena.data[offset..offset + len].copy_from_slice(&busy[..len]);
        let owner = match self.vacant.pop() {
            Some(i) => {
                self.listed[i] = link;
                i
            }
            None => {
                self.listed.push(link);
                self.listed.len() - 1
            }
        };
        let chunk = Chunk {
            offset,
            len,
            class: 0,
            owner,
            last_end: busy[len - 1].1,
        };
        chunk.store(slot);
        enter
    }

    /// Drops every interval ended by `now` from the hashed slots once these
    /// have doubled, and from the listed links once these have doubled or the
    /// arena has grown half again beyond what the last sweep left in it; the sweep of
    /// the listed links also compacts the arena. So links never used again
    /// hold no memory, and the arena follows the reservations still ahead.
    pub fn sweep(&mut self, now: u64) {
        if self.sparse.len() > (2 * self.swept.0).max(self.sweep_floor) {
            // a slot's last interval ends last
            self.sparse
                .retain(|_, s| s.0[0].0 == SPILLED || s.0.iter().any(|&(_, end)| end >= now));
            self.sparse.shrink_to_fit();
            self.swept.0 = self.sparse.len();
        }
        let listed = self.listed.len() - self.vacant.len();
        if listed > (2 * self.swept.1).max(self.sweep_floor)
            || self.arena.data.len() > self.arena_limit
        {
            self.sweep_listed(now);
        }
    }

    /// Drops the intervals ended by `now` from every listed link (a link left
    /// with at most INLINE goes back to its slot) and compacts the arena: the
    /// chunks, in the order of their places, slide down to its start, each
    /// in the smallest size with room for one more interval. Chunks freed
    /// and reused by size alone scattered holes of every size through the
    /// arena (a congested 1024x1024 torus peaked at 9.3 GB, most of it ended
    /// intervals and holes); now the arena holds at most half again what
    /// the last sweep kept.
    fn sweep_listed(&mut self, now: u64) {
        let mut kept: Vec<(usize, u64)> = Vec::with_capacity(self.listed.len() - self.vacant.len());
        for link in std::mem::take(&mut self.listed)
            .into_iter()
            .filter(|&l| l != NONE)
        {
            let slot = slot_of(&mut self.dense, &mut self.sparse, link);
            let mut chunk = Chunk::of(slot);
            let busy = &mut self.arena.data[chunk.offset..chunk.offset + chunk.len];
            let gone = ended(busy, now);
            busy.copy_within(gone.., 0);
            chunk.len -= gone;
            if chunk.len <= INLINE {
                *slot = self.arena.inline(&chunk);
            } else {
                chunk.store(slot);
                kept.push((chunk.offset, link));
            }
        }
        // sliding down in the order of places never overwrites a chunk not
        // yet moved: each keeps or lowers its size
        kept.sort_unstable();
        let mut to = 0;
        for (owner, &(_, link)) in kept.iter().enumerate() {
            let slot = slot_of(&mut self.dense, &mut self.sparse, link);
            let mut chunk = Chunk::of(slot);
            let mut class = 0;
            while MIN_CHUNK << class <= chunk.len {
                class += 1;
            }
            let class = class.min(chunk.class);
            self.arena
                .data
                .copy_within(chunk.offset..chunk.offset + chunk.len, to);
            chunk.offset = to;
            chunk.class = class;
            chunk.owner = owner;
            chunk.store(slot);
            to += chunk.capacity();
        }
        self.arena.data.resize(to, (0, 0));
        for free in &mut self.arena.free {
            free.clear();
        }
        self.arena_limit = (to + to / 2).max(self.sweep_floor * MIN_CHUNK);
        // the memory beyond the next sweep's size is given back
        self.arena.data.shrink_to(self.arena_limit);
        self.listed = kept.into_iter().map(|(_, link)| link).collect();
        self.vacant.clear();
        self.swept.1 = self.listed.len();
    }
}

/// Reserves a listed link (see `LinkTable::reserve`), updating its chunk.
#[inline]
fn reserve_listed(
    arena: &mut Arena,
    chunk: &mut Chunk,
    finger: &mut usize,
    now: u64,
    head: u64,
    hold: u64,
) -> u64 {
    // the front of the list is read only then: it is rarely in cache (the
    // back is, prefetched), and keeping its end in the slot cost a miss per
    // reservation placed between intervals
    if chunk.len == chunk.capacity() && hold > 0 && arena.data[chunk.offset].1 < now {
        // intervals ended before `now` are dropped when room is needed, not
        // each time the front has one: each drop moves the list (dropping
        // once the chunk is half full took 40% longer on a 512x512 torus
        // and saved no memory)
        let busy = &mut arena.data[chunk.offset..chunk.offset + chunk.len];
        let gone = busy.partition_point(|&(_, end)| end < now);
        busy.copy_within(gone.., 0);
        chunk.len -= gone;
        if chunk.len == 0 {
            chunk.last_end = 0;
        }
    }
    if chunk.len == chunk.capacity() && hold > 0 {
        let bigger = chunk.class + 1;
        arena.move_to(chunk, bigger);
    }
    let (offset, len) = (chunk.offset, chunk.len);
    let enter;
    if chunk.last_end <= head {
        // after every interval: no search, the slot alone decides
        enter = head;
        if hold > 0 {
            if len > 0 && chunk.last_end == enter {
                arena.data[offset + len - 1].1 = enter + hold;
            } else {
                arena.data[offset + len] = (enter, enter + hold);
                chunk.len += 1;
            }
            chunk.last_end = enter + hold;
        }
    } else {
        let busy = &mut arena.data[offset..offset + chunk.capacity()];
        // the intervals ended by `head` cannot delay the message: its search
        // starts after them, found from where the route's last search ended
        let guess = len.saturating_sub(*finger);
        let from = first_ending_after(&busy[..len], head, guess);
        *finger = len - from;
        let (at, e) = first_fit(&busy[from..len], head, hold);
        enter = e;
        if hold > 0 {
            chunk.len = insert(busy, len, from + at, enter, hold);
            chunk.last_end = busy[chunk.len - 1].1;
        }
    }
    enter
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Wherever the search starts, it finds the first interval ending after
        /// the head, as a plain search of the whole list does.
        #[test]
        fn a_search_from_any_guess_finds_the_first_interval_ending_after(
            gaps in prop::collection::vec((1u64..20, 1u64..20), 0..300),
            head in 0u64..12_000,
            guess in 0usize..400,
        ) {
            let mut busy = Vec::new();
            let mut t = 0;
            for (gap, len) in gaps {
                busy.push((t + gap, t + gap + len));
                t += gap + len;
            }
            let want = busy.partition_point(|&(_, end)| end <= head);
            prop_assert_eq!(first_ending_after(&busy, head, guess), want);
        }
    }

    /// First fit over every interval ever reserved, none merged nor dropped.
    fn plain(busy: &mut Vec<(u64, u64)>, head: u64, hold: u64) -> u64 {
        let (at, enter) = first_fit(busy, head, hold);
        busy.insert(at, (enter, enter + hold));
        enter
    }

    /// Reservations scattered far ahead give lists of hundreds of intervals,
    /// which grow through the chunk sizes, shrink as time passes and are swept.
    #[test]
    fn long_lists_grow_shrink_and_give_the_plain_answers() {
        for dense in [true, false] {
            let mut table = LinkTable::new(3, dense, false, 1);
            let mut plains = vec![Vec::new(); 3];
            let mut state = 0x2545_f491_4f6c_dd1du64;
            let mut rand = move |n: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % n
            };
            let mut now = 0;
            for step in 0..20_000u64 {
                // long bursts far ahead, then time catches up
                now += if step % 4000 < 3000 {
                    rand(2)
                } else {
                    rand(400)
                };
                let link = rand(3);
                let head = now + rand(50_000);
                let hold = 1 + rand(30);
                let want = plain(&mut plains[link as usize], head, hold);
                assert_eq!(table.reserve(link, now, head, hold), want, "step {step}");
                table.sweep(now);
            }
            assert!(
                table.arena.data.len() > 64 * MIN_CHUNK,
                "lists grew past the smallest chunks"
            );
        }
    }

    /// Bursts that alternate a few long lists with many short ones, each
    /// burst over before the next: the arena holds about one burst. Before,
    /// freed chunks were reused only by their size, so the long lists' chunks
    /// stood empty while the short ones took new memory (the arena held both,
    /// as a congested 1024x1024 torus peaked at 9.3 GB).
    #[test]
    fn the_arena_follows_the_reservations_ahead() {
        let mut table = LinkTable::new(20_000, true, false, 16);
        let (mut now, mut peak) = (0, 0);
        let reserve = |table: &mut LinkTable, link: u64, now: u64, head: u64| {
            table.sweep(now);
            table.reserve(link, now, head, 5);
            table.arena.data.len()
        };
        for round in 0..6u64 {
            // 50 lists of 1000 intervals (chunks of 1024), or 6400 of 6 (chunks of 8)
            let (lists, len) = if round % 2 == 0 {
                (50, 1000)
            } else {
                (6400, 6)
            };
            for l in 0..lists {
                for i in 0..len {
                    let link = (round * 7000 + l) % 20_000;
                    peak = peak.max(reserve(&mut table, link, now, now + 10 * i));
                }
            }
            now += 100_000; // the burst is over
        }
        let burst = 50 * 1024;
        assert!(
            peak <= burst + burst / 4,
            "the arena peaked at {peak} intervals, a burst needs {burst}"
        );
    }

    /// A listed link whose intervals have all ended, reserved from the very
    /// end of its last one: the message starts there, the list starts anew.
    #[test]
    fn a_reservation_after_every_interval_ended() {
        let mut table = LinkTable::new(1, true, false, usize::MAX);
        for i in 0..8 {
            assert_eq!(table.reserve(0, 0, 10 * i, 5), 10 * i);
        }
        // every interval ended by 75, the last at exactly 75 (kept: it is touched)
        assert_eq!(table.reserve(0, 75, 75, 5), 75);
        assert_eq!(table.reserve(0, 75, 76, 5), 80);
        assert_eq!(table.reserve(0, 75, 77, 1), 85);
    }
}
