//! Workloads: what each rank does. The engine asks a workload for the
//! operations that become ready as earlier ones start or complete, so a
//! collective's schedule is generated rank by rank while it runs.

pub mod collectives;
pub mod cycle;
pub mod goal;
pub mod jacobi;
pub mod phased;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    // the order is LogGOPSim's: ready sends first, then receives, then computation
    Send = 1,
    Recv = 2,
    Calc = 3,
}

/// One operation of a rank. `size` is bytes for messages and picoseconds for
/// computation; `id` is the workload's own handle for the operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub peer: u32,
    pub tag: u32,
    pub size: u64,
    pub id: u32,
}

impl Op {
    pub fn send(peer: u32, size: u64, tag: u32) -> Op {
        Op {
            kind: OpKind::Send,
            peer,
            tag,
            size,
            id: 0,
        }
    }
    pub fn recv(peer: u32, size: u64, tag: u32) -> Op {
        Op {
            kind: OpKind::Recv,
            peer,
            tag,
            size,
            id: 0,
        }
    }
    pub fn calc(ps: u64) -> Op {
        Op {
            kind: OpKind::Calc,
            peer: 0,
            tag: 0,
            size: ps,
            id: 0,
        }
    }
}

/// Ready operations handed to the engine: (rank, operation).
pub type Ready = Vec<(u32, Op)>;

pub trait Workload {
    fn ranks(&self) -> u32;
    fn describe(&self) -> String;
    /// Operations of `rank` ready at time zero.
    fn start(&mut self, rank: u32, out: &mut Ready);
    /// Operation `id` of `rank` has started (its `irequires` dependents may start).
    fn started(&mut self, rank: u32, id: u32, out: &mut Ready);
    /// Operation `id` of `rank` has completed.
    fn done(&mut self, rank: u32, id: u32, out: &mut Ready);
    /// Operations not yet completed (zero once the workload has finished).
    fn unfinished(&self) -> u64;
}
