//! Polling in a replayed trace: runs of unsuccessful tests (TEST_RUN records) and
//! cancelled requests.
//!
//! A run covers consecutive unsuccessful calls of one Test* call on one request set;
//! it holds their count, their span (first call's start to last call's end) and the
//! least time one of them took inside MPI, so count x least is the time spent inside
//! them. The gaps between the calls are the program's computation.
//! The time inside them is computation too when the program did other work between
//! tests (the polling is its own cost, paid however fast the messages come); a run
//! that did little else (its gaps add up to less than its time inside the calls) was
//! waiting, which the replay's own message timing stands for.

/// The computation (ns) a run of unsuccessful tests over `span_ns`, `in_call_ns`
/// of it inside the calls, stands for.
pub fn run_compute_ns(span_ns: u64, in_call_ns: u64) -> u64 {
    let in_call = in_call_ns.min(span_ns);
    let gaps = span_ns - in_call;
    if gaps < in_call {
        gaps
    } else {
        span_ns
    }
}

/// Consecutive TEST_RUN records of one rank (a loop polling a few request sets leaves
/// one per set, their spans overlapping), accounted as one run.
#[derive(Debug, Default)]
pub struct Runs {
    open: Option<(u64, u64, u64)>,
}

impl Runs {
    /// One more TEST_RUN record: its span (t_start <= t_end) and its time inside the calls (ns).
    pub fn add(&mut self, t_start: u64, t_end: u64, in_call_ns: u64) {
        self.open = Some(match self.open {
            None => (t_start, t_end, in_call_ns),
            Some((a, b, c)) => (a.min(t_start), b.max(t_end), c.saturating_add(in_call_ns)),
        });
    }

    /// The open run, closed: (trace time its computation reaches, its end).
    pub fn take(&mut self) -> Option<(u64, u64)> {
        let (start, end, in_call) = self.open.take()?;
        Some((start + run_compute_ns(end - start, in_call), end))
    }
}

/// What a cancelled request's operation becomes: nothing that moves data.
pub fn cancelled(op: super::Op) -> super::Op {
    super::Op {
        kind: super::OpKind::Calc,
        peer: 0,
        tag: 0,
        size: 0,
        id: op.id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_between_work_is_computation_and_a_spin_is_waiting() {
        assert_eq!(run_compute_ns(1000, 100), 1000);
        assert_eq!(run_compute_ns(1000, 900), 100);
        assert_eq!(run_compute_ns(1000, 500), 1000);
        assert_eq!(run_compute_ns(100, 500), 0);
    }

    #[test]
    fn overlapping_runs_are_one() {
        let mut runs = Runs::default();
        assert!(runs.take().is_none());
        runs.add(100, 1000, 50);
        runs.add(120, 1100, 50);
        assert_eq!(runs.take(), Some((1100, 1100)));
        runs.add(100, 200, 90);
        assert_eq!(runs.take(), Some((110, 200)));
    }
}
