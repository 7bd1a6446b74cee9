//! Workloads: what each rank does. The engine asks a workload for the
//! operations that become ready as earlier ones start or complete, so a
//! collective's schedule is generated rank by rank while it runs.

pub mod collectives;
pub mod cycle;
pub mod goal;
pub mod jacobi;
pub mod phased;
pub mod polling;
pub mod progress;
pub mod replay;

/// Most ranks a run may have.
pub const MAX_RANKS: u32 = 1 << 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A send whose protocol follows its size (eager up to S, else rendezvous).
    Send,
    /// A synchronous send (MPI_Ssend): completes when matched, whatever its size.
    SendSync,
    /// A locally completing send (MPI_Bsend): always eager.
    SendLocal,
    /// A send a non-blocking call started (MPI_Isend, MPI_Irsend): its protocol follows
    /// its size, as Send's; an eager one to another rank costs its sender the library's
    /// measured post (`loggp.send_post`) in place of a blocking send's o_s + (s-1)O.
    SendPosted,
    Recv,
    Calc,
    /// A collective charged as a whole: `peer` names the instance, `tag` its
    /// member count, `size` its cost (ps); every member finishes at the last
    /// arrival plus the cost.
    Join,
    /// A phase boundary (MPI_Pcontrol): no cost; `tag` is the phase level.
    Mark,
}

impl OpKind {
    /// Order among operations ready at once, LogGOPSim's: sends, then
    /// receives, then computation.
    #[inline]
    pub fn order(self) -> u8 {
        match self {
            OpKind::Send | OpKind::SendSync | OpKind::SendLocal | OpKind::SendPosted => 1,
            OpKind::Recv => 2,
            OpKind::Calc | OpKind::Join | OpKind::Mark => 3,
        }
    }

    pub fn is_send(self) -> bool {
        self.order() == 1
    }
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
    /// The library's own CPU time (a copy it makes): a Calc that counts as communication.
    pub fn copy(ps: u64) -> Op {
        Op {
            tag: LIBRARY_WORK,
            ..Op::calc(ps)
        }
    }
}

/// A Calc's tag when its time is the library's rather than the program's.
pub const LIBRARY_WORK: u32 = 1;

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
    /// Asks for `rank`'s state ahead of its use (a hint; nothing by default).
    #[inline]
    fn prefetch(&self, _rank: u32) {}
    /// Operations not yet completed (zero once the workload has finished).
    fn unfinished(&self) -> u64;
    /// The most bytes a member sends in charged collective `instance` (0: unknown; what
    /// its messages may pay of the model's cold start).
    #[inline]
    fn join_bytes(&self, _instance: u32) -> u64 {
        0
    }
}
