//! The trace's calls of id 70 and up (docs/trace-format.md):
//!
//! - communicators made by topologies, Comm_create_group, Comm_split_type and
//!   Comm_idup are created as Comm_split's are (their MEMBERS records);
//!   NEIGHBORS records give a topology's sources and destinations;
//! - a non-blocking collective is replayed as its blocking call where it
//!   started (its Wait then waits for nothing), Alltoallw as Alltoallv;
//! - a neighborhood collective sends its bytes, split evenly, to each
//!   destination and receives from each source, all in one step;
//! - a persistent request's START is replayed as the Isend or Irecv its init
//!   call described, completed by the COMPLETE record that names it;
//! - MPI-IO is computation (its span stays in the gap to the next call) and
//!   is listed as such;
//! - one-sided operations of a fence epoch are messages at the fence that closes
//!   it: one send per target of what the rank put there, one receive per target
//!   of what it got, and at the target (its RMA_IN records) the matching receive
//!   and send per origin, all in one step, then a barrier on the window's
//!   communicator;
//! - a PSCW epoch's operations are messages too: at Win_complete the origin sends
//!   each target of its start group what it put there (a message even when
//!   empty: the target's Win_wait waits for it) and receives what it got from it,
//!   at Win_wait the target the reverse for each origin of its post group (their
//!   RMA_IN records); Win_post and Win_start keep their measured time;
//! - operations inside a lock epoch, and the lock and flush calls, keep their
//!   measured time (as computation).

use super::{call, Builder, RankState, Rec, COLLECTIVE_TAG, MEMBERS_PER_RECORD, PEER_NULL};
use crate::error::Result;
use crate::workload::Op;
use std::collections::{BTreeMap, HashMap};

pub(super) use call::NEIGHBORS;
use call::{
    ALLTOALLW, BSEND_INIT, IALLTOALLV, IALLTOALLW, IBARRIER, IEXSCAN, IREDUCE, RECV_INIT, REDUCE,
    REQUEST_FREE, RMA_IN, RSEND_INIT, SEND_INIT, SSEND_INIT, START, STARTALL, WIN_COMPLETE,
    WIN_CREATE, WIN_CREATE_DYNAMIC, WIN_FENCE, WIN_FREE, WIN_WAIT,
};
// the id ranges of the header's groups
const NEIGHBOR_FIRST: u16 = call::NEIGHBOR_ALLGATHER;
const NEIGHBOR_LAST: u16 = call::INEIGHBOR_ALLTOALLW;
const FILE_FIRST: u16 = call::FILE_OPEN;
const FILE_LAST: u16 = call::FILE_SYNC;
const RMA_FIRST: u16 = call::PUT;
const RMA_LAST: u16 = call::RACCUMULATE;
const WIN_SYNC_FIRST: u16 = call::WIN_LOCK;
const WIN_SYNC_LAST: u16 = call::WIN_WAIT;
/// The engine tag key of one-sided messages on a communicator (user tags are >= 0,
/// collectives -1).
const RMA_TAG: i64 = -2;

/// MPI-IO calls by id (120..=133).
const FILE_NAMES: [&str; 14] = [
    "File_open",
    "File_close",
    "File_read",
    "File_read_at",
    "File_read_all",
    "File_read_at_all",
    "File_write",
    "File_write_at",
    "File_write_all",
    "File_write_at_all",
    "File_iread",
    "File_iwrite",
    "File_set_view",
    "File_sync",
];

pub(super) fn is_extended(call: u16) -> bool {
    matches!(call, 70..=77 | ALLTOALLW..=IEXSCAN | NEIGHBOR_FIRST..=NEIGHBOR_LAST
        | SEND_INIT..=REQUEST_FREE | FILE_FIRST..=FILE_LAST | WIN_CREATE..=WIN_SYNC_LAST)
}

/// Records that describe a call rather than being one.
pub(super) fn is_pseudo(call: u16) -> bool {
    call == NEIGHBORS || call == RMA_IN
}

/// The MPI-IO calls a replay charged as computation: (name, count).
pub(super) fn io_calls(io: &BTreeMap<u16, u64>) -> Vec<(String, u64)> {
    io.iter()
        .map(|(&c, &n)| {
            let name = FILE_NAMES[(c - FILE_FIRST) as usize];
            (format!("MPI_{name}"), n)
        })
        .collect()
}

/// Which side of a PSCW epoch's messages is sent even when empty (origin to target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sync {
    /// Win_complete: the origin sends to each target of its start group.
    Send,
    /// Win_wait: the target receives from each origin of its post group.
    Recv,
}

/// The blocking collective a non-blocking one (or Alltoallw) is replayed as.
fn blocking_of(c: u16) -> u16 {
    match c {
        ALLTOALLW | IALLTOALLW => call::ALLTOALLV,
        IBARRIER..=IALLTOALLV => c - (IBARRIER - call::BARRIER),
        _ => c - (IREDUCE - REDUCE),
    }
}

/// A communicator's neighbors as ranks in it (MPI_PROC_NULL kept), in MPI's order.
#[derive(Debug, Clone, Default)]
pub(super) struct Topology {
    sources: Vec<i32>,
    destinations: Vec<i32>,
}

/// One-sided traffic with a peer in a fence epoch: (peer, bytes to it, bytes from it).
type Moved = (i32, u64, u64);

/// A rank's state for the calls of this module.
#[derive(Debug, Default)]
pub(super) struct RankExt {
    /// Communicators with a topology: their NEIGHBORS.
    topologies: HashMap<i32, Topology>,
    /// Per window id: its communicator and the fence epoch's messages so far.
    windows: HashMap<i32, (i32, Vec<Moved>)>,
}

impl Builder<'_> {
    /// The call's span is MPI bookkeeping: neither computation nor communication.
    fn bookkeeping(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        self.compute_until(st, rec.t_start)?;
        st.t_prev = st.t_prev.max(rec.t_end);
        Ok(())
    }

    pub(super) fn extended(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        match rec.call {
            70..=77 => self.begin_comm(st, rec),
            ALLTOALLW..=IEXSCAN => {
                let blocking = Rec {
                    call: blocking_of(rec.call),
                    ..*rec
                };
                self.blocking_collective(st, &blocking)
            }
            NEIGHBOR_FIRST..=NEIGHBOR_LAST => {
                self.bookkeeping(st, rec)?;
                self.neighbor_collective(st, rec)
            }
            START => {
                let as_call = match rec.aux as u16 {
                    SEND_INIT => call::ISEND,
                    BSEND_INIT => call::IBSEND,
                    SSEND_INIT => call::ISSEND,
                    RSEND_INIT => call::IRSEND,
                    RECV_INIT => call::IRECV,
                    _ => return st.err("MPI_Start of a request whose init call was not traced"),
                };
                self.bookkeeping(st, rec)?;
                self.point_to_point(
                    st,
                    &Rec {
                        call: as_call,
                        ..*rec
                    },
                )
            }
            SEND_INIT..=RECV_INIT | STARTALL | REQUEST_FREE => self.bookkeeping(st, rec),
            WIN_CREATE..=WIN_CREATE_DYNAMIC => {
                self.bookkeeping(st, rec)?;
                st.comm(rec.comm)?;
                st.ext.windows.insert(rec.aux, (rec.comm, Vec::new()));
                Ok(())
            }
            WIN_FREE => self.bookkeeping(st, rec),
            RMA_FIRST..=RMA_LAST if rec.aux2 == 0 => {
                self.bookkeeping(st, rec)?;
                self.window(st, rec)?
                    .push((rec.peer, rec.bytes, rec.bytes2));
                Ok(())
            }
            WIN_COMPLETE => self.pscw(st, rec, Sync::Send),
            WIN_WAIT => self.pscw(st, rec, Sync::Recv),
            // inside a lock or PSCW epoch: the measured time, as computation (a PSCW
            // epoch's bytes come with Win_complete's and Win_wait's RMA_IN records)
            RMA_FIRST..=RMA_LAST | WIN_SYNC_FIRST..=WIN_SYNC_LAST => Ok(()),
            WIN_FENCE => self.fence(st, rec),
            _ => {
                *self.shared.io.entry(rec.call).or_insert(0) += 1;
                Ok(())
            }
        }
    }

    pub(super) fn pseudo(&mut self, st: &mut RankState, rec: &Rec, raw: &[u8]) -> Result<()> {
        if rec.call == RMA_IN {
            // tag 1: what this rank moved to and from a target (a PSCW origin); otherwise
            // what an origin moved to and from this rank: the reverse of its operations
            let entry = if rec.tag == 1 {
                (rec.peer, rec.bytes, rec.bytes2)
            } else {
                (rec.peer, rec.bytes2, rec.bytes)
            };
            self.window(st, rec)?.push(entry);
            return Ok(());
        }
        self.neighbors(st, rec, raw)
    }

    /// The fence epoch's messages of the record's window so far.
    fn window<'s>(&self, st: &'s mut RankState, rec: &Rec) -> Result<&'s mut Vec<Moved>> {
        if !st.ext.windows.contains_key(&rec.aux) {
            return st.err(format!("window {} was not created in the trace", rec.aux));
        }
        Ok(&mut st.ext.windows.get_mut(&rec.aux).expect("checked").1)
    }

    /// A fence: the epoch's messages in one step, then a barrier.
    fn fence(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        self.bookkeeping(st, rec)?;
        let comm = self.epoch_messages(st, rec, None)?;
        let barrier = Rec {
            call: call::BARRIER,
            comm,
            peer: -1,
            bytes: 0,
            bytes2: 0,
            flags: 0,
            t_start: rec.t_end,
            t_end: rec.t_end,
            ..*rec
        };
        self.blocking_collective(st, &barrier)
    }

    /// Win_complete (an origin) or Win_wait (a target): the PSCW epoch's messages.
    fn pscw(&mut self, st: &mut RankState, rec: &Rec, sync: Sync) -> Result<()> {
        self.bookkeeping(st, rec)?;
        self.epoch_messages(st, rec, Some(sync)).map(|_| ())
    }

    /// The window's epoch messages, one per peer and direction in peer order on every
    /// rank, all in one step; with `sync`, the origin-to-target one even when empty.
    /// Returns the window's communicator.
    fn epoch_messages(&mut self, st: &mut RankState, rec: &Rec, sync: Option<Sync>) -> Result<i32> {
        let comm = match st.ext.windows.get(&rec.aux) {
            Some(w) => w.0,
            None => return st.err(format!("window {} was not created in the trace", rec.aux)),
        };
        let moved = std::mem::take(self.window(st, rec)?);
        let c = st.comm(comm)?.clone();
        let tag = self.shared.tag(c.global, RMA_TAG)?;
        let mut per_peer: BTreeMap<i32, (u64, u64)> = BTreeMap::new();
        for (peer, to, from) in moved {
            let e = per_peer.entry(peer).or_default();
            e.0 += to;
            e.1 += from;
        }
        let mut ops = Vec::new();
        for (peer, (to, from)) in per_peer {
            let Some(&world) = c.members.get(peer.max(0) as usize).filter(|_| peer >= 0) else {
                return st.err(format!(
                    "peer {peer} is not a rank of the window's communicator"
                ));
            };
            if world == st.rank {
                continue;
            }
            if to > 0 || sync == Some(Sync::Send) {
                ops.push(Op::send(world, to, tag));
            }
            if from > 0 || sync == Some(Sync::Recv) {
                ops.push(Op::recv(world, from, tag));
            }
        }
        if !ops.is_empty() {
            st.wait_step = None;
            self.step(&ops, true)?;
        }
        Ok(comm)
    }

    /// A NEIGHBORS record: tag 0 the sources, 1 the destinations; aux the first index,
    /// aux2 how many, peer the total.
    fn neighbors(&mut self, st: &mut RankState, rec: &Rec, raw: &[u8]) -> Result<()> {
        st.comm(rec.comm)?;
        let topo = st.ext.topologies.entry(rec.comm).or_default();
        let list = match rec.tag {
            0 => &mut topo.sources,
            1 => &mut topo.destinations,
            _ => return st.err("a NEIGHBORS record with an unknown direction"),
        };
        if rec.aux < 0
            || rec.aux as usize != list.len()
            || !(1..=MEMBERS_PER_RECORD as i32).contains(&rec.aux2)
            || rec.aux + rec.aux2 > rec.peer
        {
            return st.err("NEIGHBORS records out of order");
        }
        for i in 0..rec.aux2 as usize {
            list.push(Rec::member(raw, i));
        }
        Ok(())
    }

    fn neighbor_collective(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        let c = st.comm(rec.comm)?.clone();
        let Some(topo) = st.ext.topologies.get(&rec.comm) else {
            return st.err("a neighborhood collective on a communicator without a topology");
        };
        let p = c.members.len() as i32;
        let world = |r: i32| -> Option<u32> {
            if r == PEER_NULL {
                None
            } else {
                c.members
                    .get(r as usize)
                    .copied()
                    .filter(|_| (0..p).contains(&r))
            }
        };
        let tag = self.shared.tag(c.global, COLLECTIVE_TAG)?;
        let each_sent = rec.bytes / topo.destinations.len().max(1) as u64;
        let each_received = rec.bytes2 / topo.sources.len().max(1) as u64;
        let mut ops = Vec::with_capacity(topo.sources.len() + topo.destinations.len());
        // a neighbor that is the rank itself is a local copy, not a message
        for &d in &topo.destinations {
            match world(d) {
                Some(w) if w != st.rank => ops.push(Op::send(w, each_sent, tag)),
                Some(_) => {}
                None if d == PEER_NULL => {}
                None => return st.err(format!("neighbor {d} is not a rank of the communicator")),
            }
        }
        for &s in &topo.sources {
            match world(s) {
                Some(w) if w != st.rank => ops.push(Op::recv(w, each_received, tag)),
                Some(_) => {}
                None if s == PEER_NULL => {}
                None => return st.err(format!("neighbor {s} is not a rank of the communicator")),
            }
        }
        if !ops.is_empty() {
            st.wait_step = None;
            self.step(&ops, true)?;
        }
        Ok(())
    }
}
