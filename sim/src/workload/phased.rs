//! Phased schedules: each rank runs a sequence of phases; the operations of a
//! phase are issued together and the next phase starts once all have
//! completed. Collectives and Jacobi are written this way and generated on
//! the fly: a rank's state is its phase number and outstanding count.

use super::{Op, Ready, Workload};

/// A schedule that can say, for any rank and phase number, which operations
/// that phase holds. `None` means the rank has no further phases.
pub trait PhaseSchedule {
    fn ranks(&self) -> u32;
    fn describe(&self) -> String;
    /// Appends the operations of phase `k` of `rank` (possibly none).
    fn phase(&self, rank: u32, k: u32, out: &mut Vec<Op>) -> Option<()>;
}

pub struct Phased<S: PhaseSchedule> {
    schedule: S,
    /// Per rank: (next phase, operations of the current phase not yet done).
    state: Vec<(u32, u32)>,
    unfinished_ranks: u64,
    unfinished_ops: u64,
    scratch: Vec<Op>,
}

impl<S: PhaseSchedule> Phased<S> {
    pub fn new(schedule: S) -> Self {
        let p = schedule.ranks() as usize;
        Phased {
            schedule,
            state: crate::bigmem::filled(p, (0, 0)),
            unfinished_ranks: p as u64,
            unfinished_ops: 0,
            scratch: Vec::new(),
        }
    }

    pub fn schedule(&self) -> &S {
        &self.schedule
    }

    fn advance(&mut self, rank: u32, out: &mut Ready) {
        let r = rank as usize;
        loop {
            self.scratch.clear();
            let k = self.state[r].0;
            if self.schedule.phase(rank, k, &mut self.scratch).is_none() {
                self.unfinished_ranks -= 1;
                return;
            }
            self.state[r].0 = k + 1;
            if !self.scratch.is_empty() {
                self.state[r].1 = self.scratch.len() as u32;
                self.unfinished_ops += self.scratch.len() as u64;
                // field by field: a whole-record copy went through the stack
                // in two overlapping halves, and the second waited for the first
                for op in &self.scratch {
                    let op = Op {
                        kind: op.kind,
                        peer: op.peer,
                        tag: op.tag,
                        size: op.size,
                        id: op.id,
                    };
                    out.push((rank, op));
                }
                return;
            }
        }
    }
}

impl<S: PhaseSchedule> Workload for Phased<S> {
    fn ranks(&self) -> u32 {
        self.schedule.ranks()
    }
    fn describe(&self) -> String {
        self.schedule.describe()
    }
    fn start(&mut self, rank: u32, out: &mut Ready) {
        self.advance(rank, out);
    }
    fn started(&mut self, _rank: u32, _id: u32, _out: &mut Ready) {}
    fn done(&mut self, rank: u32, _id: u32, out: &mut Ready) {
        let r = rank as usize;
        self.unfinished_ops -= 1;
        self.state[r].1 -= 1;
        if self.state[r].1 == 0 {
            self.advance(rank, out);
        }
    }
    #[inline]
    fn prefetch(&self, rank: u32) {
        if let Some(s) = self.state.get(rank as usize) {
            crate::prefetch::prefetch(s);
        }
    }
    fn unfinished(&self) -> u64 {
        self.unfinished_ops + self.unfinished_ranks
    }
}

/// Writes a phased schedule as GOAL text: every operation of a phase
/// `requires` every operation of the rank's previous non-empty phase.
pub fn write_goal<S: PhaseSchedule, W: std::io::Write>(
    schedule: &S,
    unit_ps: u64,
    w: &mut W,
) -> std::io::Result<()> {
    let p = schedule.ranks();
    writeln!(w, "num_ranks {p}")?;
    let mut ops = Vec::new();
    for rank in 0..p {
        writeln!(w, "\nrank {rank} {{")?;
        let mut label = 0u64;
        let mut prev: std::ops::Range<u64> = 0..0;
        let mut k = 0;
        loop {
            ops.clear();
            if schedule.phase(rank, k, &mut ops).is_none() {
                break;
            }
            k += 1;
            if ops.is_empty() {
                continue;
            }
            let first = label;
            for op in &ops {
                write_goal_op(w, label, op, unit_ps)?;
                for dep in prev.clone() {
                    writeln!(w, "l{label} requires l{dep}")?;
                }
                label += 1;
            }
            prev = first..label;
        }
        writeln!(w, "}}")?;
    }
    Ok(())
}

/// Writes one operation as a GOAL line `l<label>: ...`. GOAL has no send
/// modes or charged collectives: synchronous, buffered and posted sends are
/// written as sends, a phase mark as `calc 0`; a charged collective cannot be written.
pub fn write_goal_op<W: std::io::Write + ?Sized>(
    w: &mut W,
    label: u64,
    op: &Op,
    unit_ps: u64,
) -> std::io::Result<()> {
    use super::OpKind;
    match op.kind {
        OpKind::Send | OpKind::SendSync | OpKind::SendLocal | OpKind::SendPosted => writeln!(
            w,
            "l{label}: send {}b to {} tag {}",
            op.size, op.peer, op.tag
        ),
        OpKind::Recv => writeln!(
            w,
            "l{label}: recv {}b from {} tag {}",
            op.size, op.peer, op.tag
        ),
        OpKind::Calc => writeln!(w, "l{label}: calc {}", op.size / unit_ps),
        OpKind::Mark => writeln!(w, "l{label}: calc 0"),
        OpKind::Join => Err(std::io::Error::other(
            "a collective charged as a whole has no GOAL form",
        )),
    }
}
