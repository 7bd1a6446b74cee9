//! A workload that reports how far a long run has come: it forwards every
//! call to the workload it wraps and, about once a second of wall time,
//! writes one line `progress DONE TOTAL SECONDS` to stderr (TOTAL is `-` when
//! the workload cannot know its size in advance, as a collective generated
//! while it runs). `commchar simulate` turns these lines into a progress bar
//! with the time left.

use super::{Ready, Workload};
use std::time::{Duration, Instant};

/// Completed operations between two looks at the clock.
const CHECK_EVERY: u64 = 1 << 16;
const INTERVAL: Duration = Duration::from_secs(1);

pub struct Reported<'a, W: Workload + ?Sized> {
    inner: &'a mut W,
    total: Option<u64>,
    done: u64,
    start: Instant,
    last: Instant,
}

impl<'a, W: Workload + ?Sized> Reported<'a, W> {
    /// `total`: the operations the run will complete, when known before it starts.
    pub fn new(inner: &'a mut W, total: Option<u64>) -> Self {
        let now = Instant::now();
        Reported {
            inner,
            total,
            done: 0,
            start: now,
            last: now,
        }
    }

    fn report(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last) < INTERVAL {
            return;
        }
        self.last = now;
        let total = self
            .total
            .map_or_else(|| "-".to_string(), |t| t.to_string());
        eprintln!(
            "progress {} {total} {:.1}",
            self.done,
            now.duration_since(self.start).as_secs_f64()
        );
    }
}

impl<W: Workload + ?Sized> Workload for Reported<'_, W> {
    fn ranks(&self) -> u32 {
        self.inner.ranks()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn start(&mut self, rank: u32, out: &mut Ready) {
        self.inner.start(rank, out)
    }
    fn started(&mut self, rank: u32, id: u32, out: &mut Ready) {
        self.inner.started(rank, id, out)
    }
    fn done(&mut self, rank: u32, id: u32, out: &mut Ready) {
        self.inner.done(rank, id, out);
        self.done += 1;
        if self.done.is_multiple_of(CHECK_EVERY) {
            self.report();
        }
    }
    fn unfinished(&self) -> u64 {
        self.inner.unfinished()
    }
}
