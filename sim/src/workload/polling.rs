//! Polling in a replayed trace: runs of unsuccessful tests (TEST_RUN records) and
//! cancelled requests.
//!
//! A run covers consecutive unsuccessful calls of one Test* call on one request set; it
//! holds their count, their span (first call's start to last call's end) and the least
//! time one of them took inside MPI. A replay cannot change how often the program polled:
//! the loop made those calls, each at its cost, with the program's own work between them,
//! so a run's whole span is computation, as the time between any two calls is. (A loop
//! that only waited for a message keeps the time it waited; the test that completes the
//! request then waits for the modelled message as any Wait does.)

/// Consecutive TEST_RUN records of one rank (a loop polling a few request sets leaves
/// one per set, their spans overlapping), accounted as one run.
#[derive(Debug, Default)]
pub struct Runs {
    open: Option<(u64, u64)>,
}

impl Runs {
    /// One more TEST_RUN record: its span (t_start <= t_end, ns).
    pub fn add(&mut self, t_start: u64, t_end: u64) {
        self.open = Some(match self.open {
            None => (t_start, t_end),
            Some((a, b)) => (a.min(t_start), b.max(t_end)),
        });
    }

    /// The open run, closed: its (start, end).
    pub fn take(&mut self) -> Option<(u64, u64)> {
        self.open.take()
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
    fn overlapping_runs_are_one() {
        let mut runs = Runs::default();
        assert!(runs.take().is_none());
        runs.add(100, 1000);
        runs.add(120, 1100);
        assert_eq!(runs.take(), Some((100, 1100)));
        assert!(runs.take().is_none());
    }
}
