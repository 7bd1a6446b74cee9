//! Replay of a traced MPI program (docs/trace-format.md): each rank's trace
//! becomes a chain of steps, the gaps between its MPI calls computation.
//!
//! A step starts some operations and waits for some to complete; the next
//! step begins once the step's operations have all started and its waited
//! operations are done. A blocking call is a step that starts and waits for
//! its own operations; a non-blocking start only starts one (its request is
//! waited for by the later Wait*/Test* step whose COMPLETE records name it),
//! so MPI's per-rank order holds, and messages of one (communicator, tag)
//! pair keep their order through the engine's FIFO matching.
//!
//! Messages are matched on (source, tag) only, so each (communicator, tag)
//! pair gets its own engine tag, and each communicator one more for its
//! collectives: a collective's messages never meet the program's. Wildcard
//! receives take the source and tag the trace recorded they received.

use super::collectives::{self, Collective};
use super::phased::{write_goal_op, PhaseSchedule};
use super::polling;
use super::{Op, OpKind, Ready, Workload};
use crate::collective_start::CollectiveStart;
use crate::copy_footprint::CopyFootprint;
use crate::error::{input, usage, Result, SimError};
use crate::exchange_excess::ExchangeExcess;
use crate::first_touch::{self, ByteSteps};
use crate::matching::ANY;
use crate::params::Params;
use crate::placement::{self, Book, Channel, Charge, MisalignedCopy};
use crate::request_growth::RequestGrowth;
use crate::written_send::WrittenSend;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

mod extended;
mod files;

pub use files::TraceFiles;
use files::{read_header, RankFile};

const MAGIC: &[u8; 8] = b"CCTRACE1";
/// The version the tracer writes; every version from 1 is read (1 records no buffer places).
const VERSION: u32 = 2;
const HEADER_BYTES: usize = 256;
const RECORD_BYTES: usize = 64;
const FINALIZED: u32 = 1;
const REC_ERROR: u16 = 2;
const REC_CANCELLED: u16 = 8;
/// On a call that created a communicator: an intercommunicator (local group, then remote).
const REC_INTER: u16 = 16;
const PEER_NONE: i32 = -1;
const PEER_ANY: i32 = -2;
const PEER_NULL: i32 = -3;
const TAG_ANY: i32 = -1;
const MEMBERS_PER_RECORD: usize = 10;
/// The tracer's header, whose `CC_TRACE_OTHER_NAMES` list names OTHER records.
const FORMAT_HEADER: &str = include_str!("../../../tracer/cc_trace_format.h");

/// Trace call ids, generated from tracer/cc_trace_format.h.
use crate::trace_calls as call;

/// How collective calls are replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveMode {
    /// Every member waits for the last, then all pay the signature's cost.
    Charged,
    /// The call becomes the simulator's generated algorithm.
    Expanded,
}

impl CollectiveMode {
    pub fn parse(text: &str) -> Result<CollectiveMode> {
        match text {
            "charged" => Ok(CollectiveMode::Charged),
            "expanded" => Ok(CollectiveMode::Expanded),
            other => usage(format!(
                "unknown collective replay '{other}' (use charged or expanded)"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CollectiveMode::Charged => "charged",
            CollectiveMode::Expanded => "expanded",
        }
    }
}

/// A collective call as priced: operation, communicator size, bytes (n as
/// the simulator's generators count it, docs/simulator.md).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Signature {
    pub call: &'static str,
    pub p: u32,
    pub n: u64,
}

/// What the costs file says about one signature.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignatureCost {
    /// Cost of the whole call (ps), for charged mode.
    pub cost_ps: Option<u64>,
    /// `op:algorithm` for expanded mode.
    pub algorithm: Option<String>,
}

/// How a signature was replayed, for the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureUse {
    pub calls: u64,
    /// "charged" or "expanded"
    pub mode: &'static str,
    pub algorithm: Option<&'static str>,
    pub cost_ps: Option<u64>,
}

/// Reads `--replay-costs`: `{"format": "commchar-replay-costs", "unit": "us"|"ns",
/// "collectives": [{"call", "p", "n", "cost", "algorithm"}]}` (cost and
/// algorithm each optional or null).
pub fn parse_costs(text: &str, path: &str) -> Result<HashMap<Signature, SignatureCost>> {
    use serde_json::Value;
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| SimError::Input(format!("{path}: not valid JSON ({e})")))?;
    if doc.get("format").and_then(Value::as_str) != Some("commchar-replay-costs") {
        return input(format!(
            "{path}: not a replay costs file (format is not 'commchar-replay-costs')"
        ));
    }
    let unit = match doc.get("unit").and_then(Value::as_str) {
        Some(u) => crate::params::Unit::parse(u)
            .map_err(|_| SimError::Input(format!("{path}: unit must be us or ns")))?,
        None => return input(format!("{path}: no unit")),
    };
    let Some(list) = doc.get("collectives").and_then(Value::as_array) else {
        return input(format!("{path}: no 'collectives' list"));
    };
    let mut out = HashMap::new();
    for (i, e) in list.iter().enumerate() {
        let at = format!("{path}: collectives[{i}]");
        let call = e.get("call").and_then(Value::as_str).unwrap_or("");
        let Some(call) = COLLECTIVE_CALLS.iter().find(|c| c.1 == call).map(|c| c.1) else {
            return input(format!("{at}: unknown call '{call}'"));
        };
        let p = e.get("p").and_then(Value::as_u64).filter(|&p| p >= 1);
        let n = e.get("n").and_then(Value::as_u64);
        let (Some(p), Some(n)) = (p, n) else {
            return input(format!("{at}: p and n must be whole numbers"));
        };
        let cost_ps = match e.get("cost") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(x) => Some(
                    unit.to_ps(x, "cost")
                        .map_err(|m| SimError::Input(format!("{at}: {m}")))?,
                ),
                None => return input(format!("{at}: cost is not a number")),
            },
        };
        let algorithm = match e.get("algorithm") {
            None | Some(Value::Null) => None,
            Some(Value::String(a)) => {
                collectives::parse(a).map_err(|m| SimError::Input(format!("{at}: {m}")))?;
                Some(a.clone())
            }
            Some(_) => return input(format!("{at}: algorithm is not a string")),
        };
        let sig = Signature {
            call,
            p: p.min(u32::MAX as u64) as u32,
            n,
        };
        out.insert(sig, SignatureCost { cost_ps, algorithm });
    }
    Ok(out)
}

/// Collective calls: (trace id, name, generator operation, rooted).
const COLLECTIVE_CALLS: &[(u16, &str, &str, bool)] = &[
    (23, "barrier", "barrier", false),
    (24, "bcast", "bcast", true),
    (25, "scatter", "scatter", true),
    (26, "scatterv", "scatter", true),
    (27, "gather", "gather", true),
    (28, "gatherv", "gather", true),
    (29, "allgather", "allgather", false),
    (30, "allgatherv", "allgather", false),
    (31, "alltoall", "alltoall", false),
    (32, "alltoallv", "alltoall", false),
    (33, "reduce", "reduce", true),
    (34, "allreduce", "allreduce", false),
    (35, "reduce_scatter", "reduce_scatter", false),
    (36, "reduce_scatter_block", "reduce_scatter", false),
    (37, "scan", "scan", false),
    (38, "exscan", "scan", false),
];

/// Everything that shapes the replay besides the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Multiplies every computation (0.5: a CPU twice as fast).
    pub compute_scale: f64,
    /// Treat calls the tracer does not follow as computation instead of refusing.
    pub other_as_compute: bool,
    pub collectives: CollectiveMode,
    pub costs: HashMap<Signature, SignatureCost>,
    /// Computation per reduced byte of an expanded reduction (ps/B).
    pub gamma: u64,
    /// Only list the collective signatures (no costs needed).
    pub list_only: bool,
    /// What a rank pays to copy a message through a temporary buffer.
    pub local_copy: LocalCopy,
    /// What a rank pays to fault in the cold bytes of its receive buffers.
    pub first_touch: ByteSteps,
    /// What MPI_Sendrecv_replace costs beyond MPI_Sendrecv, by size, as measured
    /// (`loggp.replace_copy`); without steps the copy is `local_copy`'s.
    pub replace_copy: ByteSteps,
    /// What a simultaneous exchange costs beyond the model, by size (`loggp.exchange_excess`):
    /// a Sendrecv that both sends and receives, at eager and rendezvous sizes, and a
    /// Wait*/Test* that completes a receive from a rank and a send to it, at rendezvous sizes
    /// (the data path's cost; the eager excess is the Sendrecv call's); empty: nothing.
    pub exchange_excess: ExchangeExcess,
    /// What a message costs whose destination lies in the slow class relative to its
    /// source in their pages (`loggp.misaligned_copy`); without steps nothing is charged.
    pub misaligned_copy: MisalignedCopy,
    /// What a message costs whose sender wrote its buffer since its last send from it
    /// (`loggp.written_send`); empty: nothing is charged.
    pub written_send: WrittenSend,
    /// What a received byte costs once the rank's buffers outgrow its caches, by the bytes
    /// of buffers it used (`loggp.copy_footprint`); empty: nothing.
    pub copy_footprint: CopyFootprint,
    /// What a rank pays the first time it holds k requests (`loggp.request_growth`).
    pub request_growth: RequestGrowth,
    /// What a communicator's first collectives cost (`loggp.collective_start`).
    pub collective_start: CollectiveStart,
}

/// The CPU time of a local copy of a message: the model's O (ps/B) of the
/// message's size, times its bytes. MPI_Sendrecv_replace pays one: MPICH packs
/// the buffer into a temporary one and sends from it (MPIR_Sendrecv_replace_impl),
/// Open MPI receives into a temporary buffer and unpacks it into the user's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalCopy {
    /// (first size, ps per byte), sorted by size, the first starting at 0; empty: free.
    per_byte: Vec<(u64, u64)>,
}

impl LocalCopy {
    /// O by size from the model's parameters (its regimes, else the global O).
    pub fn from_params(p: &Params) -> LocalCopy {
        let per_byte = if p.regimes.is_empty() {
            vec![(0, p.big_o)]
        } else {
            p.regimes.iter().map(|r| (r.start, r.cost.big_o)).collect()
        };
        LocalCopy { per_byte }
    }

    /// ps to copy `bytes` bytes.
    pub fn cost(&self, bytes: u64) -> u64 {
        let after = self.per_byte.partition_point(|&(start, _)| start <= bytes);
        match after.checked_sub(1).and_then(|i| self.per_byte.get(i)) {
            Some(&(_, o)) => bytes.saturating_mul(o),
            None => 0,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compute_scale: 1.0,
            other_as_compute: false,
            collectives: CollectiveMode::Expanded,
            costs: HashMap::new(),
            gamma: 0,
            list_only: false,
            local_copy: LocalCopy::default(),
            first_touch: ByteSteps::default(),
            replace_copy: ByteSteps::default(),
            exchange_excess: ExchangeExcess::default(),
            misaligned_copy: MisalignedCopy::default(),
            written_send: WrittenSend::default(),
            copy_footprint: CopyFootprint::default(),
            request_growth: RequestGrowth::default(),
            collective_start: CollectiveStart::default(),
        }
    }
}

/// What the trace measured for one rank (ns): MPI_Init's end to
/// MPI_Finalize's start, and its Pcontrol calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    pub wall_ns: u64,
    /// (level, ns since MPI_Init's end) per Pcontrol call, in order.
    pub marks: Vec<(i32, u64)>,
    pub host: String,
    pub library: String,
    /// The bytes of the distinct message buffers the rank used (0: the trace does not say).
    pub buffer_bytes: u64,
}

/// A step: starts ops[first_op .. next step's first_op], waits for
/// waits[first_wait .. next step's first_wait].
#[derive(Debug, Clone, Copy)]
struct Step {
    first_op: u32,
    first_wait: u32,
}

const NONE: u32 = u32::MAX;

#[derive(Clone)]
pub struct Replay {
    ranks: u32,
    ops: Vec<Op>,
    /// Per op: the step that waits for it (NONE if none does).
    waiter: Vec<u32>,
    done_flag: Vec<bool>,
    /// All ranks' steps, rank by rank, plus a sentinel.
    steps: Vec<Step>,
    waits: Vec<u32>,
    /// Per rank: its first step (ranks + 1 entries).
    rank_steps: Vec<u32>,
    /// Per rank: current step, and what it still waits for.
    current: Vec<u32>,
    outstanding: Vec<u32>,
    unfinished_ops: u64,
    unfinished_ranks: u64,
    pub measured: Vec<Measured>,
    pub signatures: BTreeMap<Signature, SignatureUse>,
    pub mode: CollectiveMode,
    /// Calls recorded as OTHER and replayed as computation: (name, count).
    pub other_calls: Vec<(String, u64)>,
    /// MPI-IO calls, replayed as computation: (name, count).
    pub io_calls: Vec<(String, u64)>,
    pub calls: u64,
    /// Receives and all-to-alls (their blocks) charged `loggp.misaligned_copy`: (how
    /// many, ps in all).
    pub misaligned: (u64, u64),
    /// Receives charged `loggp.written_send` for the send buffer their sender wrote: (how
    /// many, ps in all).
    pub written: (u64, u64),
    /// Messages received by ranks whose buffers outgrow their caches, charged
    /// `loggp.copy_footprint`: (how many, ps in all).
    pub footprint: (u64, u64),
    /// The exchanges charged `loggp.exchange_excess`, priced by the replay's S
    /// (price_exchanges).
    exchanges: Vec<ExchangeCharge>,
    /// Per charged collective instance: the most bytes a member sends in it.
    join_bytes: Vec<u64>,
    dir: String,
}

/// One 64-byte record, decoded.
#[derive(Debug, Clone, Copy, Default)]
struct Rec {
    call: u16,
    flags: u16,
    /// Where the buffers of `bytes` and `bytes2` lay in their pages, if recorded.
    places: [Option<u16>; 2],
    /// A send's: how much of its buffer was written since its last send (WRITTEN code).
    written: u8,
    comm: i32,
    peer: i32,
    tag: i32,
    bytes: u64,
    bytes2: u64,
    t_start: u64,
    t_end: u64,
    req: u64,
    aux: i32,
    aux2: i32,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn i32_at(b: &[u8], o: usize) -> i32 {
    u32_at(b, o) as i32
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

impl Rec {
    fn decode(b: &[u8]) -> Rec {
        let call = u16_at(b, 0);
        // message calls and the collectives that copy a rank's own block carry their
        // buffers' places above the sizes (call::PLACED)
        let placed = call::PLACED.contains(&call);
        // a send's first size also says how much of its buffer was written (call::WRITTEN)
        let (bytes, place, written) = if call::WRITTEN.contains(&call) {
            placement::split_sent(u64_at(b, 16))
        } else if placed {
            let (n, at) = placement::split(u64_at(b, 16));
            (n, at, 0)
        } else {
            (u64_at(b, 16), None, 0)
        };
        let second = u64_at(b, 24);
        let sizes = [
            (bytes, place),
            if placed {
                placement::split(second)
            } else {
                (second, None)
            },
        ];
        Rec {
            call,
            flags: u16_at(b, 2),
            comm: i32_at(b, 4),
            peer: i32_at(b, 8),
            tag: i32_at(b, 12),
            bytes: sizes[0].0,
            bytes2: sizes[1].0,
            places: [sizes[0].1, sizes[1].1],
            written,
            t_start: u64_at(b, 32),
            t_end: u64_at(b, 40),
            req: u64_at(b, 48),
            aux: i32_at(b, 56),
            aux2: i32_at(b, 60),
        }
    }

    /// The i-th of up to ten members of a MEMBERS record (offsets 16..55).
    fn member(b: &[u8], i: usize) -> i32 {
        i32_at(b, 16 + 4 * i)
    }
}

/// The name of OTHER record index `i`, from the format header's list.
pub fn other_name(i: i32) -> String {
    let names = FORMAT_HEADER
        .split_once("#define CC_TRACE_OTHER_NAMES(X)")
        .map(|(_, rest)| rest.split("\n\n").next().unwrap_or(""))
        .unwrap_or("");
    let found = names
        .split("X(")
        .skip(1)
        .filter_map(|s| s.split_once(')').map(|x| x.0.trim()))
        .nth(i.max(0) as usize);
    match (i >= 0, found) {
        (true, Some(n)) => format!("MPI_{n}"),
        _ => format!("unknown call #{i}"),
    }
}

/// A communicator as one rank sees it.
#[derive(Debug, Clone)]
struct Comm {
    global: u32,
    /// World rank of each communicator rank.
    members: std::rc::Rc<Vec<u32>>,
    me: u32,
    /// An intercommunicator: `members` is the remote group (a peer names one of its
    /// ranks), `me` this rank's place in the local group.
    inter: bool,
    /// Communicators created from this one so far (to name them across ranks).
    created: u32,
    /// Collective calls made on it so far (to name each instance).
    collectives: u32,
    /// Its Bcast, Reduce, Barrier and Allreduce calls so far: together, and of each kind
    /// (collective_start.rs).
    counted: u64,
    kinds: [u64; 4],
}

/// Names shared by all ranks while the trace is read.
#[derive(Default)]
struct Shared {
    comm_ids: HashMap<(u32, u32, Vec<u32>), u32>,
    tags: HashMap<(u32, i64), u32>,
    instances: HashMap<(u32, u32), u32>,
    /// Per instance: the most bytes a member's call sends (cold start, engine.rs).
    instance_bytes: Vec<u64>,
    other: BTreeMap<i32, u64>,
    /// MPI-IO calls (replayed as computation) by call id.
    io: BTreeMap<u16, u64>,
}

impl Shared {
    fn tag(&mut self, comm: u32, tag: i64) -> Result<u32> {
        let next = self.tags.len() as u32;
        if next == ANY {
            return input("the trace uses too many (communicator, tag) pairs");
        }
        Ok(*self.tags.entry((comm, tag)).or_insert(next))
    }
}

/// Collective messages of a communicator use this tag key (user tags are >= 0).
const COLLECTIVE_TAG: i64 = -1;

struct Builder<'a> {
    opts: &'a Options,
    shared: Shared,
    ops: Vec<Op>,
    waiter: Vec<u32>,
    steps: Vec<Step>,
    waits: Vec<u32>,
    signatures: BTreeMap<Signature, SignatureUse>,
    ranks: u32,
    calls: u64,
    /// Sends and receives in matching order, when the model charges misaligned copies.
    book: Option<Book>,
    /// Each all-to-all's ranks with their buffers' places, by (communicator, instance),
    /// when the model charges misaligned copies (`all_to_all_blocks`).
    all_to_alls: HashMap<(u32, u32), Vec<PlacedBlocks>>,
    /// Receives charged `loggp.copy_footprint`: (how many, ps in all).
    footprint: (u64, u64),
    /// Exchanges charged `loggp.exchange_excess`.
    exchanges: Vec<ExchangeCharge>,
}

/// An exchange's excess op: (op, bytes each way, ps if its messages are eager under the
/// replay's model, ps if they are rendezvous ones).
type ExchangeCharge = (u32, u64, u64, u64);

/// The exchanges among the messages one Wait*/Test* step completed with other ranks,
/// (peer, bytes, whether a send): each receive from a rank paired with a send to it, in
/// order; per pair, the larger of its two messages' bytes and how many pairs the step
/// completed with that rank (a burst of two or more shares its excess).
fn waited_exchanges(exchanged: Vec<(u32, u64, bool)>) -> Vec<(u64, usize)> {
    let mut sends: Vec<(u32, u64)> = exchanged
        .iter()
        .filter(|e| e.2)
        .map(|&(peer, bytes, _)| (peer, bytes))
        .collect();
    let mut pairs = Vec::new();
    for &(peer, bytes, _) in exchanged.iter().filter(|e| !e.2) {
        if let Some(i) = sends.iter().position(|s| s.0 == peer) {
            pairs.push((peer, bytes.max(sends.remove(i).1)));
        }
    }
    let mut per_peer: HashMap<u32, usize> = HashMap::new();
    for &(peer, _) in &pairs {
        *per_peer.entry(peer).or_default() += 1;
    }
    pairs
        .iter()
        .map(|&(peer, bytes)| (bytes, per_peer[&peer]))
        .collect()
}

/// One rank's part of an all-to-all whose copies may be misaligned: its send and receive
/// buffers' places, each less its own block's offset in the buffer (so that peer k's block
/// sent from one rank to another lies `receive - send` ahead modulo the page for every k),
/// its block size, and the operation that pays for its slow copies.
#[derive(Debug, Clone, Copy)]
struct PlacedBlocks {
    send: u16,
    receive: u16,
    bytes: u64,
    op: u32,
}

/// Each all-to-all rank's slow copies: (its operation, how many blocks, ps). A peer's block
/// from a send place s to a receive place r is slow when r lies `slow_ahead` of s; per
/// instance the ranks' send places are counted once, so every rank's count is a sum over
/// the slow distances, not over its peers. A rank's own block is not counted.
fn settle_all_to_alls(
    all: &HashMap<(u32, u32), Vec<PlacedBlocks>>,
    model: &MisalignedCopy,
) -> Vec<(u32, u64, u64)> {
    let page = usize::from(placement::PAGE_SPAN);
    // the slow distances, or the fast ones where those are fewer (a class by the line)
    let (slow_set, fast_set): (Vec<u16>, Vec<u16>) =
        (0..placement::PAGE_SPAN).partition(|&d| model.is_slow(d));
    let count_slow = slow_set.len() <= fast_set.len();
    let counted = if count_slow { slow_set } else { fast_set };
    let mut out = Vec::new();
    let mut sends = vec![0u64; page];
    for ranks in all.values() {
        sends.iter_mut().for_each(|c| *c = 0);
        for r in ranks {
            sends[usize::from(r.send)] += 1;
        }
        let total = ranks.len() as u64;
        for r in ranks {
            let own = (r.receive + placement::PAGE_SPAN - r.send) % placement::PAGE_SPAN;
            let at: u64 = counted
                .iter()
                .map(|&d| sends[(usize::from(r.receive) + page - usize::from(d)) % page])
                .sum();
            let slow = if count_slow { at } else { total - at } - u64::from(model.is_slow(own));
            let each = model.slow(r.bytes);
            if slow > 0 && each > 0 {
                out.push((r.op, slow, each.saturating_mul(slow)));
            }
        }
    }
    out
}

/// A receive whose copy may be misaligned: (its channel and index there, once known;
/// its buffer's place; its bytes).
type PlacedRecv = (Option<(Channel, u32)>, u16, u64);

/// Per-rank reading state.
struct RankState {
    rank: u32,
    comms: HashMap<i32, Comm>,
    /// Request id -> (op index, communicator id) of its non-blocking start.
    requests: HashMap<u64, (u32, i32)>,
    /// The most requests the rank has held at once so far.
    most_requests: u64,
    /// Trace time up to which the rank's time is accounted (ns).
    t_prev: u64,
    /// The tracer's own time per traced call outside the spans (ps, the header's).
    tracer_gap_ps: u64,
    /// ...and per COMPLETE record (ps, the header's).
    tracer_complete_ps: u64,
    /// ...and per blocking collective (ps, the header's; 0: tracer_gap_ps).
    tracer_collective_ps: u64,
    /// The tracer's time in the gap now open (ps): taken out of it, not computation.
    tracer_debt_ps: u64,
    /// The Wait*/Test* step COMPLETE records add to (its index), if open.
    wait_step: Option<usize>,
    /// Non-blocking receives that may pay a misaligned copy, by op.
    placed_recvs: HashMap<u32, PlacedRecv>,
    /// ...those the open Wait*/Test* step completed: charged after it.
    wait_charges: Vec<((Channel, u32), u16, u64)>,
    /// The bytes of the rank's message buffers (the trace header's buffer_bytes), by which
    /// its receives are charged `loggp.copy_footprint`, and the receives the open
    /// Wait*/Test* step completed (how many, ps beyond the model), charged after it.
    buffer_bytes: u64,
    footprint_waited: (u64, u64),
    /// The messages the open Wait*/Test* step completed with other ranks, (peer, bytes,
    /// whether a send): a receive from a rank and a send to it among them are an exchange,
    /// charged its rendezvous excess after the step.
    exchanged: Vec<(u32, u64, bool)>,
    /// Consecutive TEST_RUN records read and not yet accounted (polling::Runs).
    polling: polling::Runs,
    /// A communicator being created: (new id, parent id, expected size, members).
    creating: Option<(i32, i32, usize, Vec<u32>)>,
    /// The local group's size when the communicator being created is an intercommunicator.
    creating_inter: Option<usize>,
    /// Intercommunicators created so far per set of world ranks they join (to name them
    /// across both groups, whose parents differ).
    inter_created: HashMap<Vec<u32>, u32>,
    /// Topologies and windows (calls of id 70 and up).
    ext: extended::RankExt,
    file: String,
    index: u64,
}

impl RankState {
    fn err<T>(&self, msg: impl std::fmt::Display) -> Result<T> {
        input(format!("{} record {}: {msg}", self.file, self.index))
    }

    fn comm(&self, id: i32) -> Result<&Comm> {
        match self.comms.get(&id) {
            Some(c) => Ok(c),
            None if id < 0 => {
                self.err("a communicator created by a call the replay cannot follow (Comm_spawn)")
            }
            None => self.err(format!("unknown communicator {id}")),
        }
    }
}

impl Builder<'_> {
    fn push_step(&mut self) -> usize {
        self.steps.push(Step {
            first_op: self.ops.len() as u32,
            first_wait: self.waits.len() as u32,
        });
        self.steps.len() - 1
    }

    fn push_op(&mut self, op: Op) -> Result<u32> {
        let id = self.ops.len();
        if id >= (u32::MAX - 1) as usize {
            return input("the trace has too many operations to replay");
        }
        self.ops.push(Op {
            id: id as u32,
            ..op
        });
        self.waiter.push(NONE);
        Ok(id as u32)
    }

    fn wait_for(&mut self, step: usize, op: u32) {
        self.waits.push(op);
        self.waiter[op as usize] = step as u32;
    }

    /// A step that starts `ops` and, when `blocking`, waits for them.
    fn step(&mut self, ops: &[Op], blocking: bool) -> Result<Vec<u32>> {
        let s = self.push_step();
        let mut ids = Vec::with_capacity(ops.len());
        for &op in ops {
            ids.push(self.push_op(op)?);
        }
        if blocking {
            for &id in &ids {
                self.wait_for(s, id);
            }
        }
        Ok(ids)
    }

    /// The computation between the last accounted time and `t` (ns), less the
    /// tracer's own time in that gap (the wrappers' records since the last gap).
    fn compute_until(&mut self, st: &mut RankState, t: u64) -> Result<()> {
        let gap_ps = t.saturating_sub(st.t_prev).saturating_mul(1000);
        st.t_prev = st.t_prev.max(t);
        let own = st.tracer_debt_ps.min(gap_ps);
        st.tracer_debt_ps = 0;
        let ps = ((gap_ps - own) as f64 * self.opts.compute_scale).round();
        if ps >= 1.0 {
            st.wait_step = None;
            self.step(&[Op::calc(ps.min(1.8e19) as u64)], true)?;
        }
        Ok(())
    }

    fn read_rank<R: Read>(&mut self, file: RankFile<R>, rank: u32, size: u32) -> Result<Measured> {
        let RankFile {
            shown,
            len,
            mut reader,
        } = file;
        let (h, count) = read_header(&shown, len, &mut reader)?;
        if h.rank != rank as i32 || h.size != size as i32 {
            return input(format!(
                "{shown}: header says rank {} of {}, expected rank {rank} of {size}",
                h.rank, h.size
            ));
        }
        let world: std::rc::Rc<Vec<u32>> = std::rc::Rc::new((0..size).collect());
        let mut st = RankState {
            rank,
            comms: HashMap::new(),
            requests: HashMap::new(),
            most_requests: 0,
            t_prev: h.t_init,
            tracer_gap_ps: u64::from(h.record_gap_ps),
            tracer_complete_ps: u64::from(h.complete_gap_ps),
            tracer_collective_ps: u64::from(h.collective_gap_ps),
            tracer_debt_ps: 0,
            wait_step: None,
            placed_recvs: HashMap::new(),
            wait_charges: Vec::new(),
            buffer_bytes: h.buffer_bytes,
            footprint_waited: (0, 0),
            exchanged: Vec::new(),
            polling: polling::Runs::default(),
            creating: None,
            creating_inter: None,
            inter_created: HashMap::new(),
            ext: extended::RankExt::default(),
            file: shown.clone(),
            index: 0,
        };
        st.comms.insert(
            0,
            Comm {
                global: 0,
                members: world,
                me: rank,
                inter: false,
                created: 0,
                collectives: 0,
                counted: 0,
                kinds: [0; 4],
            },
        );
        st.comms.insert(
            1,
            Comm {
                global: 1 + rank,
                members: std::rc::Rc::new(vec![rank]),
                me: 0,
                inter: false,
                created: 0,
                collectives: 0,
                counted: 0,
                kinds: [0; 4],
            },
        );
        let mut measured = Measured {
            wall_ns: h.t_finalize - h.t_init,
            marks: Vec::new(),
            host: h.host.clone(),
            library: h.library.clone(),
            buffer_bytes: h.buffer_bytes,
        };
        let mut buf = [0u8; RECORD_BYTES];
        for i in 0..count {
            st.index = i;
            reader
                .read_exact(&mut buf)
                .map_err(|e| SimError::Input(format!("{shown}: cannot read record {i}: {e}")))?;
            let rec = Rec::decode(&buf);
            self.record(&mut st, &rec, &buf, &mut measured, h.t_init)?;
        }
        if let Some((id, ..)) = st.creating {
            return st.err(format!(
                "communicator {id} lacks some of its MEMBERS records"
            ));
        }
        self.charge_waited(&mut st)?;
        self.close_polling(&mut st)?;
        self.compute_until(&mut st, h.t_finalize)?;
        Ok(measured)
    }

    fn record(
        &mut self,
        st: &mut RankState,
        rec: &Rec,
        raw: &[u8],
        measured: &mut Measured,
        t_init: u64,
    ) -> Result<()> {
        if rec.call != call::COMPLETE {
            self.charge_waited(st)?;
        }
        if rec.call == call::TEST_RUN {
            if rec.t_end < rec.t_start {
                return st.err("the call ends before it starts");
            }
            self.calls += rec.bytes;
            st.polling.add(rec.t_start, rec.t_end);
            return Ok(());
        }
        self.close_polling(st)?;
        if rec.call == call::COMPLETE {
            // written after the wait's span: the tracer's time, in the gap that follows
            st.tracer_debt_ps = st.tracer_debt_ps.saturating_add(st.tracer_complete_ps);
            return self.complete(st, rec);
        }
        if rec.call == call::MEMBERS {
            return self.members(st, rec, raw);
        }
        if extended::is_pseudo(rec.call) {
            return self.pseudo(st, rec, raw);
        }
        if st.creating.is_some() {
            return st.err("a communicator's MEMBERS records are incomplete");
        }
        if rec.call != call::MARK && rec.call != call::INIT {
            // a wrapper ran: its entry, record and return lie in the gaps around its span
            let own = match rec.call {
                call::BARRIER..=call::EXSCAN if st.tracer_collective_ps > 0 => {
                    st.tracer_collective_ps
                }
                _ => st.tracer_gap_ps,
            };
            st.tracer_debt_ps = st.tracer_debt_ps.saturating_add(own);
        }
        st.wait_step = None;
        if rec.call != call::OTHER && rec.call != call::MARK {
            self.calls += 1;
        }
        if rec.t_end < rec.t_start {
            return st.err("the call ends before it starts");
        }
        if rec.flags & REC_ERROR != 0 {
            // a call that failed moved nothing: its time is neither computation nor communication
            self.compute_until(st, rec.t_start)?;
            st.t_prev = st.t_prev.max(rec.t_end);
            return Ok(());
        }
        match rec.call {
            call::INIT | call::FINALIZE => Ok(()),
            call::OTHER => {
                *self.shared.other.entry(rec.aux).or_insert(0) += 1;
                // as computation: its span stays in the gap to the next call
                Ok(())
            }
            call::MRECV | call::IMRECV => {
                self.compute_until(st, rec.t_start)?;
                st.t_prev = st.t_prev.max(rec.t_end);
                if rec.peer == PEER_NONE {
                    return st.err("a receive of a probed message whose probe the trace lacks");
                }
                self.first_touch(st, rec)?;
                // the message's source and tag are the ones its probe found
                let plain = if rec.call == call::MRECV {
                    call::RECV
                } else {
                    call::IRECV
                };
                self.point_to_point(
                    st,
                    &Rec {
                        call: plain,
                        ..*rec
                    },
                )
            }
            call::MARK
            | call::PROBE
            | call::IPROBE
            | call::MPROBE
            | call::IMPROBE
            | call::CANCEL
            | call::COMM_FREE => {
                // waiting (probes) or tracer/bookkeeping time: not computation
                self.compute_until(st, rec.t_start)?;
                st.t_prev = st.t_prev.max(rec.t_end);
                Ok(())
            }
            call::WAIT..=call::TESTSOME => {
                // the step opens with the first COMPLETE record that follows
                self.compute_until(st, rec.t_start)?;
                st.t_prev = st.t_prev.max(rec.t_end);
                Ok(())
            }
            call::PCONTROL => {
                self.compute_until(st, rec.t_start)?;
                st.t_prev = st.t_prev.max(rec.t_end);
                measured
                    .marks
                    .push((rec.aux, rec.t_start.saturating_sub(t_init)));
                let mut mark = Op::calc(0);
                mark.kind = OpKind::Mark;
                mark.tag = rec.aux.max(0) as u32;
                self.step(&[mark], true)?;
                Ok(())
            }
            call::COMM_SPLIT..=call::COMM_CREATE
            | call::INTERCOMM_CREATE
            | call::INTERCOMM_MERGE => self.begin_comm(st, rec),
            call::SEND..=call::SENDRECV_REPLACE => {
                self.compute_until(st, rec.t_start)?;
                st.t_prev = st.t_prev.max(rec.t_end);
                self.first_touch(st, rec)?;
                self.point_to_point(st, rec)
            }
            call::BARRIER..=call::EXSCAN => self.blocking_collective(st, rec),
            c if extended::is_extended(c) => self.extended(st, rec),
            other => st.err(format!("unknown call id {other}")),
        }
    }

    /// A call that creates a communicator: MEMBERS records follow (none for MPI_COMM_NULL).
    fn begin_comm(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        self.compute_until(st, rec.t_start)?;
        st.t_prev = st.t_prev.max(rec.t_end);
        st.comm(rec.comm)?;
        let n = rec.aux2.max(0) as usize;
        if rec.aux >= 0 && (n == 0 || n > self.ranks as usize) {
            return st.err(format!("new communicator of size {n}"));
        }
        if rec.aux == 0 || rec.aux == 1 {
            return st.err("a new communicator cannot reuse id 0 or 1");
        }
        st.creating_inter = None;
        if rec.flags & REC_INTER != 0 {
            let local = rec.tag.max(0) as usize;
            if local == 0 || local >= n {
                return st.err(format!(
                    "intercommunicator with a local group of {} of its {n} members",
                    rec.tag
                ));
            }
            st.creating_inter = Some(local);
        }
        st.creating = Some((rec.aux, rec.comm, n, Vec::with_capacity(n)));
        if rec.aux < 0 || n == 0 {
            self.finish_comm(st)?;
        }
        Ok(())
    }

    /// A collective call (ids 23..=38) with its receive buffers' first touch.
    fn blocking_collective(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        self.compute_until(st, rec.t_start)?;
        st.t_prev = st.t_prev.max(rec.t_end);
        // the root's cold bytes are its own part, copied after it has sent the others'
        let root = st.comm(rec.comm)?.me as i64 == rec.peer as i64;
        if !root {
            self.first_touch(st, rec)?;
        }
        self.collective(st, rec)?;
        if root {
            self.first_touch(st, rec)?;
        }
        self.all_to_all_blocks(st, rec)
    }

    /// An all-to-all copies each peer's block from that peer's send buffer into this rank's
    /// receive buffer: where the receive place lies 1 to 31 bytes ahead of the send place
    /// in the page (`loggp.misaligned_copy`), that copy is slow. The tracer places both of
    /// every rank's buffers (none for MPI_IN_PLACE); which pairs lie so is known once every
    /// rank is read (`settle_all_to_alls`), and this rank pays for them after the call. Its
    /// own block, copied within the process, pays nothing, and neither does a reduction
    /// (Allreduce, Scan, Exscan), traced with both places too: what it receives lands in
    /// the library's own temporary buffer, and its time with the receive buffer 16 bytes
    /// ahead is its time aligned (docs/models.md, "Where a message lands in its page").
    fn all_to_all_blocks(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        if rec.call != call::ALLTOALL || self.book.is_none() {
            return Ok(());
        }
        let (Some(send), Some(receive)) = (rec.places[0], rec.places[1]) else {
            return Ok(());
        };
        if !self.opts.misaligned_copy.applies(rec.bytes) {
            return Ok(());
        }
        let c = st.comm(rec.comm)?;
        // the instance's number on its communicator (counted by `collective`)
        let instance = (c.global, c.collectives.saturating_sub(1));
        let me = c.me;
        st.wait_step = None;
        let op = self.step(&[Op::copy(0)], true)?[0];
        let page = u64::from(placement::PAGE_SPAN);
        // block k of a buffer lies k * bytes further: keep each place less its own block's
        // offset, so a pair's distance is the difference of two of them
        let shift = u64::from(me) * (rec.bytes % page) % page;
        let back = |place: u16| ((u64::from(place) + page - shift) % page) as u16;
        self.all_to_alls
            .entry(instance)
            .or_default()
            .push(PlacedBlocks {
                send: back(send),
                receive: back(receive),
                bytes: rec.bytes,
                op,
            });
        Ok(())
    }

    /// The TEST_RUN records read since the last other record: computation (polling.rs).
    fn close_polling(&mut self, st: &mut RankState) -> Result<()> {
        if let Some((_, until)) = st.polling.take() {
            self.compute_until(st, until)?;
        }
        Ok(())
    }

    /// The receiving rank faults in its buffer's cold bytes: before its receive is posted
    /// (the pages fault in as the data arrives, so a rendezvous sender waits for them),
    /// after a rooted collective at its root (its own part, copied last).
    fn first_touch(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        let cold = first_touch::cold_bytes(rec.call, rec.flags, rec.req, rec.aux, rec.aux2);
        let ps = self.opts.first_touch.cost(cold);
        if ps > 0 {
            st.wait_step = None;
            self.step(&[Op::calc(ps)], true)?;
        }
        Ok(())
    }

    /// A non-blocking call about to hold request `req`: the first time the rank holds that
    /// many, what the model says the library pays to have more request objects, before the
    /// call, as computation.
    fn request_growth(&mut self, st: &mut RankState, req: u64) -> Result<()> {
        let held = st.requests.len() as u64 + u64::from(!st.requests.contains_key(&req));
        if held <= st.most_requests {
            return Ok(());
        }
        st.most_requests = held;
        let ps = self.opts.request_growth.cost_at(held);
        if ps > 0 {
            st.wait_step = None;
            self.step(&[Op::calc(ps)], true)?;
        }
        Ok(())
    }

    fn members(&mut self, st: &mut RankState, rec: &Rec, raw: &[u8]) -> Result<()> {
        let ranks = self.ranks;
        let Some((_, _, n, members)) = st.creating.as_mut() else {
            return st.err("MEMBERS record without a communicator being created");
        };
        let first = rec.aux;
        let count = rec.aux2;
        if first < 0 || first as usize != members.len() || !(1..=10).contains(&count) {
            return st.err("MEMBERS records out of order");
        }
        for i in 0..count as usize {
            let m = Rec::member(raw, i.min(MEMBERS_PER_RECORD - 1));
            if m < 0 || m as u32 >= ranks {
                return st.err(format!("member {m} is not a world rank"));
            }
            members.push(m as u32);
        }
        if members.len() > *n {
            return st.err("more MEMBERS than the communicator's size");
        }
        if members.len() == *n {
            self.finish_comm(st)?;
        }
        Ok(())
    }

    /// Registers the communicator whose MEMBERS are all read.
    fn finish_comm(&mut self, st: &mut RankState) -> Result<()> {
        let (id, parent, _, members) = st.creating.take().expect("a communicator is open");
        let rank = st.rank;
        let p = match st.comms.get_mut(&parent) {
            Some(p) => p,
            None => return st.err(format!("unknown communicator {parent}")),
        };
        let k = p.created;
        p.created += 1;
        let parent_global = p.global;
        if id < 0 {
            return Ok(());
        }
        let inter = st.creating_inter.take();
        let local = inter.unwrap_or(members.len());
        let Some(me) = members[..local].iter().position(|&m| m == rank) else {
            return st.err(format!(
                "rank {rank} is not a member of its new communicator {id}"
            ));
        };
        // both groups of an intercommunicator come from different parents: it is named by
        // the ranks it joins and how many such intercommunicators came before
        let key = match inter {
            None => (parent_global, k, members.clone()),
            Some(_) => {
                let mut joined = members.clone();
                joined.sort_unstable();
                let nth = st.inter_created.entry(joined.clone()).or_insert(0);
                *nth += 1;
                (u32::MAX, *nth, joined)
            }
        };
        let next = self.shared.comm_ids.len() as u32 + 1 + self.ranks;
        let global = *self.shared.comm_ids.entry(key).or_insert(next);
        let members = match inter {
            None => members,
            Some(local) => members[local..].to_vec(),
        };
        st.comms.insert(
            id,
            Comm {
                global,
                members: std::rc::Rc::new(members),
                me: me as u32,
                inter: inter.is_some(),
                created: 0,
                collectives: 0,
                counted: 0,
                kinds: [0; 4],
            },
        );
        Ok(())
    }

    /// World rank and engine tag of a peer and tag in communicator `comm`.
    fn peer_tag(&mut self, st: &RankState, comm: i32, peer: i32, tag: i32) -> Result<(u32, u32)> {
        let c = st.comm(comm)?;
        if peer < 0 || peer as usize >= c.members.len() {
            return st.err(format!(
                "peer {peer} is not a rank of communicator {comm} (size {})",
                c.members.len()
            ));
        }
        if tag < 0 {
            return st.err(format!("tag {tag} is not a received tag"));
        }
        let world = c.members[peer as usize];
        let global = c.global;
        Ok((world, self.shared.tag(global, tag as i64)?))
    }

    fn point_to_point(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        let send_kind = |c: u16| match c {
            call::SSEND | call::ISSEND => OpKind::SendSync,
            call::BSEND | call::IBSEND => OpKind::SendLocal,
            _ => OpKind::Send,
        };
        match rec.call {
            call::SEND | call::BSEND | call::SSEND | call::RSEND => {
                if rec.peer == PEER_NULL {
                    return Ok(());
                }
                let (peer, tag) = self.peer_tag(st, rec.comm, rec.peer, rec.tag)?;
                self.book_send(st, peer, tag, rec);
                let mut op = Op::send(peer, rec.bytes, tag);
                op.kind = send_kind(rec.call);
                self.step(&[op], true)?;
            }
            call::RECV => {
                if rec.peer == PEER_NULL {
                    return Ok(());
                }
                // the status says who was received
                let src = if rec.aux >= 0 { rec.aux } else { rec.peer };
                let tag = if rec.aux2 >= 0 { rec.aux2 } else { rec.tag };
                if src == PEER_ANY {
                    return st.err("a receive from MPI_ANY_SOURCE without its actual source");
                }
                let (peer, tag) = self.peer_tag(st, rec.comm, src, tag)?;
                let at = self.book_recv(st, peer, tag);
                self.step(&[Op::recv(peer, rec.bytes2, tag)], true)?;
                let ps = self.footprint_ps(st, rec.bytes2, peer);
                self.charge_footprint(st, 1, ps)?;
                self.charge_after(at, rec.places[1], rec.bytes2, false)?;
            }
            call::ISEND..=call::IRSEND => {
                if rec.peer == PEER_NULL {
                    return Ok(());
                }
                let (peer, tag) = self.peer_tag(st, rec.comm, rec.peer, rec.tag)?;
                self.book_send(st, peer, tag, rec);
                self.request_growth(st, rec.req)?;
                let mut op = Op::send(peer, rec.bytes, tag);
                op.kind = match send_kind(rec.call) {
                    OpKind::Send => OpKind::SendPosted,
                    other => other,
                };
                let ids = self.step(&[op], false)?;
                st.requests.insert(rec.req, (ids[0], rec.comm));
            }
            call::IRECV => {
                if rec.peer == PEER_NULL {
                    return Ok(());
                }
                // a wildcard is resolved by the COMPLETE record that names the request
                let wildcard = rec.peer == PEER_ANY || rec.tag == TAG_ANY;
                let (peer, tag) = if wildcard {
                    let c = st.comm(rec.comm)?;
                    let peer = if rec.peer == PEER_ANY {
                        ANY
                    } else {
                        match c.members.get(rec.peer.max(0) as usize) {
                            Some(&w) if rec.peer >= 0 => w,
                            _ => {
                                return st.err(format!(
                                    "peer {} is not in communicator {}",
                                    rec.peer, rec.comm
                                ))
                            }
                        }
                    };
                    let tag = if rec.tag == TAG_ANY {
                        ANY
                    } else {
                        let g = c.global;
                        self.shared.tag(g, rec.tag as i64)?
                    };
                    (peer, tag)
                } else {
                    self.peer_tag(st, rec.comm, rec.peer, rec.tag)?
                };
                // its place in its channel's order: now, or once its wildcard is resolved
                let at = if wildcard {
                    None
                } else {
                    self.book_recv(st, peer, tag)
                };
                self.request_growth(st, rec.req)?;
                let ids = self.step(&[Op::recv(peer, rec.bytes2, tag)], false)?;
                st.requests.insert(rec.req, (ids[0], rec.comm));
                if let Some(place) = self.may_pay(rec.places[1], rec.bytes2) {
                    st.placed_recvs.insert(ids[0], (at, place, rec.bytes2));
                }
            }
            _ => {
                // Sendrecv_replace: the copy through the library's temporary buffer
                if rec.call == call::SENDRECV_REPLACE && rec.peer != PEER_NULL {
                    let copy = if self.opts.replace_copy.steps.is_empty() {
                        self.opts.local_copy.cost(rec.bytes)
                    } else {
                        self.opts.replace_copy.cost(rec.bytes)
                    };
                    if copy > 0 {
                        st.wait_step = None;
                        self.step(&[Op::calc(copy)], true)?;
                    }
                }
                // Sendrecv(_replace): both, then wait for both
                let mut ops = Vec::with_capacity(2);
                if rec.peer != PEER_NULL {
                    let (peer, tag) = self.peer_tag(st, rec.comm, rec.peer, rec.tag)?;
                    self.book_send(st, peer, tag, rec);
                    ops.push(Op::send(peer, rec.bytes, tag));
                }
                let (mut at, mut source) = (None, None);
                if rec.aux != PEER_NULL {
                    if rec.aux == PEER_ANY || rec.aux2 == TAG_ANY {
                        return st.err("a Sendrecv with a wildcard receive cannot be replayed (the trace lacks its actual source)");
                    }
                    let (peer, tag) = self.peer_tag(st, rec.comm, rec.aux, rec.aux2)?;
                    at = self.book_recv(st, peer, tag);
                    source = Some(peer);
                    ops.push(Op::recv(peer, rec.bytes2, tag));
                }
                let both = ops.len() == 2;
                if !ops.is_empty() {
                    self.step(&ops, true)?;
                }
                // both ways at once through the same cells: what the exchange took beyond
                // the model where the kernel measured it (loggp.exchange_excess)
                if both {
                    self.exchange_excess(st, rec.bytes.max(rec.bytes2), true, 1)?;
                }
                if let Some(source) = source {
                    let ps = self.footprint_ps(st, rec.bytes2, source);
                    self.charge_footprint(st, 1, ps)?;
                }
                self.charge_after(at, rec.places[1], rec.bytes2, both)?;
            }
        }
        Ok(())
    }

    /// A send on its channel, from a buffer at `place` (kept when copies are priced).
    fn book_send(&mut self, st: &RankState, peer: u32, tag: u32, rec: &Rec) {
        if let Some(b) = self.book.as_mut() {
            b.send((st.rank, peer, tag), rec.places[0], rec.written);
        }
    }

    /// A receive posted on its channel: its channel and index there (when copies are priced).
    fn book_recv(&mut self, st: &RankState, peer: u32, tag: u32) -> Option<(Channel, u32)> {
        let b = self.book.as_mut()?;
        let channel = (peer, st.rank, tag);
        Some((channel, b.receive(channel)))
    }

    /// The place of a receive buffer of `bytes` whose copy the model may charge.
    fn may_pay(&self, place: Option<u16>, bytes: u64) -> Option<u16> {
        self.book.as_ref()?;
        place.filter(|_| {
            self.opts.misaligned_copy.applies(bytes) || self.opts.written_send.applies(bytes)
        })
    }

    /// After a blocking receive (`at`: its channel and index; `exchange`: a Sendrecv that
    /// also sent): the operation that charges its copy, priced once the send it matched is
    /// known.
    fn charge_after(
        &mut self,
        at: Option<(Channel, u32)>,
        place: Option<u16>,
        bytes: u64,
        exchange: bool,
    ) -> Result<()> {
        let (Some((channel, index)), Some(place)) = (at, self.may_pay(place, bytes)) else {
            return Ok(());
        };
        let ids = self.step(&[Op::copy(0)], true)?;
        if let Some(b) = self.book.as_mut() {
            b.charge(Charge {
                channel,
                index,
                place,
                bytes,
                op: ids[0],
                exchange,
            });
        }
        Ok(())
    }

    /// What a receive of `bytes` from `source` costs beyond the model where the rank's
    /// buffers outgrow its caches (`loggp.copy_footprint`; from itself, its self path's).
    fn footprint_ps(&self, st: &RankState, bytes: u64, source: u32) -> u64 {
        self.opts
            .copy_footprint
            .cost(st.buffer_bytes, bytes, source == st.rank)
    }

    /// After `messages` receives (a blocking one, or the requests a Wait*/Test* completed):
    /// `ps` they cost beyond the model, as the library's time.
    fn charge_footprint(&mut self, st: &mut RankState, messages: u64, ps: u64) -> Result<()> {
        if ps > 0 {
            st.wait_step = None;
            self.step(&[Op::copy(ps)], true)?;
            self.footprint = (
                self.footprint.0 + messages,
                self.footprint.1.saturating_add(ps),
            );
        }
        Ok(())
    }

    /// After a Wait*/Test* step: the operations that charge the copies of the receives it
    /// completed.
    fn charge_waited(&mut self, st: &mut RankState) -> Result<()> {
        let (messages, ps) = std::mem::take(&mut st.footprint_waited);
        self.charge_footprint(st, messages, ps)?;
        // its receives were an exchange's when it completed a send to another rank too
        let sent = st.exchanged.iter().any(|e| e.2);
        for (bytes, pairs) in waited_exchanges(std::mem::take(&mut st.exchanged)) {
            self.exchange_excess(st, bytes, false, pairs)?;
        }
        if st.wait_charges.is_empty() {
            return Ok(());
        }
        st.wait_step = None;
        let charges = std::mem::take(&mut st.wait_charges);
        let ids = self.step(&vec![Op::copy(0); charges.len()], true)?;
        if let Some(b) = self.book.as_mut() {
            for (((channel, index), place, bytes), id) in charges.into_iter().zip(ids) {
                b.charge(Charge {
                    channel,
                    index,
                    place,
                    bytes,
                    op: id,
                    exchange: sent,
                });
            }
        }
        Ok(())
    }

    /// After an exchange of `bytes` each way: what it costs beyond the model, as the library's
    /// time, priced once the replay's S is known (Replay::price_exchanges): the rendezvous
    /// step when its messages are rendezvous ones, else the eager step (`eager_too`: a
    /// Sendrecv's; an exchange by Isend and Irecv pays none there: that excess is the
    /// Sendrecv call's own, and would add a tenth to the halo of 256 B). `pairs`: the
    /// exchanges the same wait completed with the same rank, this one among them (a burst's
    /// pairs share the burst's excess, eager or rendezvous).
    fn exchange_excess(
        &mut self,
        st: &mut RankState,
        bytes: u64,
        eager_too: bool,
        pairs: usize,
    ) -> Result<()> {
        let excess = &self.opts.exchange_excess;
        let eager = if eager_too {
            excess.cost(bytes, false)
        } else {
            excess.waited_cost(bytes, false, pairs)
        };
        let rendezvous = excess.waited_cost(bytes, true, pairs);
        if eager == 0 && rendezvous == 0 {
            return Ok(());
        }
        st.wait_step = None;
        let ids = self.step(&[Op::copy(0)], true)?;
        self.exchanges.push((ids[0], bytes, eager, rendezvous));
        Ok(())
    }

    /// A COMPLETE record: the open Wait*/Test* step waits for that request.
    fn complete(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        let Some(&(op, comm)) = st.requests.get(&rec.req) else {
            if self.shared.other.is_empty() {
                return st.err(format!("COMPLETE of unknown request {}", rec.req));
            }
            return Ok(()); // a request of a call the tracer does not follow
        };
        st.requests.remove(&rec.req);
        let o = self.ops[op as usize];
        let mut placed = st.placed_recvs.remove(&op);
        if rec.flags & REC_CANCELLED != 0 {
            self.ops[op as usize] = polling::cancelled(o);
            placed = None;
        } else if o.kind == OpKind::Recv && (o.peer == ANY || o.tag == ANY) {
            let (src, tag) = (rec.aux, rec.aux2);
            if src < 0 || tag < 0 {
                return st.err("a wildcard receive completed without its actual source and tag");
            }
            let (peer, tag) = self.peer_tag(st, comm, src, tag)?;
            let o = &mut self.ops[op as usize];
            (o.peer, o.tag) = (peer, tag);
            let at = self.book_recv(st, peer, tag);
            if let Some(p) = placed.as_mut() {
                p.0 = at;
            }
        }
        if let Some((Some(at), place, bytes)) = placed {
            st.wait_charges.push((at, place, bytes));
        }
        let o = self.ops[op as usize];
        let message = o.kind.is_send() || o.kind == OpKind::Recv;
        if rec.flags & REC_CANCELLED == 0 && message && o.peer != st.rank && o.peer != ANY {
            st.exchanged.push((o.peer, o.size, o.kind.is_send()));
        }
        if o.kind == OpKind::Recv && rec.flags & REC_CANCELLED == 0 {
            let ps = self.footprint_ps(st, o.size, o.peer);
            if ps > 0 {
                let (messages, sum) = st.footprint_waited;
                st.footprint_waited = (messages + 1, sum.saturating_add(ps));
            }
        }
        let step = match st.wait_step {
            Some(s) => s,
            None => {
                let s = self.push_step();
                st.wait_step = Some(s);
                s
            }
        };
        self.wait_for(step, op);
        Ok(())
    }

    fn collective(&mut self, st: &mut RankState, rec: &Rec) -> Result<()> {
        let &(_, name, generator, rooted) = COLLECTIVE_CALLS
            .iter()
            .find(|c| c.0 == rec.call)
            .expect("collective ids are in the table");
        let c = st.comm(rec.comm)?.clone();
        if c.inter {
            return st.err(format!(
                "{name} on an intercommunicator cannot be replayed (its two groups' roles are not modelled)"
            ));
        }
        if let Some(cm) = st.comms.get_mut(&rec.comm) {
            cm.collectives += 1;
        }
        let p = c.members.len() as u32;
        let kind = match rec.call {
            call::BCAST => Some(0),
            call::REDUCE => Some(1),
            call::BARRIER => Some(2),
            call::ALLREDUCE => Some(3),
            _ => None,
        };
        if let (Some(kind), Some(cm)) = (kind, st.comms.get_mut(&rec.comm)) {
            cm.counted += 1;
            cm.kinds[kind] += 1;
            let ps = self
                .opts
                .collective_start
                .cost(p, kind, cm.counted, cm.kinds[kind]);
            if ps > 0 && p > 1 {
                // the library sets the communicator up in this call, before its messages
                st.wait_step = None;
                self.step(&[Op::calc(ps)], true)?;
            }
        }
        if p == 1 {
            // a rooted scatter or gather on one rank copies the root's block from its send
            // buffer to its receive buffer (its cold bytes are charged by the caller)
            let copied = match rec.call {
                call::SCATTER | call::SCATTERV | call::GATHER | call::GATHERV => {
                    rec.bytes.min(rec.bytes2)
                }
                _ => 0,
            };
            let ps = self.opts.local_copy.cost(copied);
            if ps > 0 {
                st.wait_step = None;
                self.step(&[Op::calc(ps)], true)?;
            }
            return Ok(());
        }
        let root = if rooted {
            if rec.peer < 0 || rec.peer as u32 >= p {
                return st.err(format!(
                    "root {} is not a rank of the communicator",
                    rec.peer
                ));
            }
            rec.peer as u32
        } else {
            0
        };
        // n as the generators count it (docs/simulator.md)
        let n = match rec.call {
            call::BARRIER => 0,
            call::GATHER | call::GATHERV if c.me != root => rec.bytes.saturating_mul(p as u64),
            call::GATHER..=call::ALLGATHERV => rec.bytes2,
            call::SCATTERV if c.me != root => rec.bytes2.saturating_mul(p as u64),
            call::ALLTOALLV => rec.bytes.div_ceil(p as u64),
            _ => rec.bytes,
        };
        let sig = Signature { call: name, p, n };
        let given = self.opts.costs.get(&sig);
        let charged_cost = match (self.opts.collectives, given) {
            (
                CollectiveMode::Charged,
                Some(SignatureCost {
                    cost_ps: Some(c), ..
                }),
            ) => Some(*c),
            // listed without a cost: expanded, into its algorithm or the simulator's default
            (CollectiveMode::Charged, Some(_)) => None,
            (CollectiveMode::Charged, _) if self.opts.list_only => Some(0),
            (CollectiveMode::Charged, _) => {
                return st.err(format!(
                    "no cost for {name} p={p} n={n} (charged collectives need one per signature in --replay-costs)"
                ))
            }
            (CollectiveMode::Expanded, _) => None,
        };
        let key = (c.global, c.collectives);
        let tag = self.shared.tag(c.global, COLLECTIVE_TAG)?;
        if let Some(model_cost) = charged_cost {
            // T(n, p) is fitted from repeated calls whose temporary buffers are warm (up to
            // glibc's largest mmap threshold): add the first touch of this call's fresh ones
            // along the tree's slowest path
            let staged = match given.and_then(|g| g.algorithm.as_deref()) {
                Some(spec) => {
                    let coll = Collective::new(collectives::parse(spec)?, p, n, 0)?;
                    let ft = &self.opts.first_touch;
                    coll.tree_path_max(&|vr| ft.temp_cost_beyond_probe(coll.staged_bytes(vr)))
                }
                None => 0,
            };
            let cost = model_cost.saturating_add(staged);
            let next = self.shared.instances.len() as u32;
            let instance = *self.shared.instances.entry(key).or_insert(next);
            let bytes = &mut self.shared.instance_bytes;
            if bytes.len() <= instance as usize {
                bytes.resize(instance as usize + 1, 0);
            }
            bytes[instance as usize] = bytes[instance as usize].max(rec.bytes);
            let join = Op {
                kind: OpKind::Join,
                peer: instance,
                tag: p,
                size: cost,
                id: 0,
            };
            self.step(&[join], true)?;
            let used = self.signatures.entry(sig).or_insert(SignatureUse {
                calls: 0,
                mode: "charged",
                algorithm: None,
                cost_ps: Some(model_cost),
            });
            used.calls += u64::from(c.me == 0); // each call once, not once per member
            return Ok(());
        }
        let spec = given
            .and_then(|g| g.algorithm.clone())
            .unwrap_or_else(|| generator.to_string());
        let alg = collectives::parse(&spec)?;
        let mut coll = Collective::new(alg, p, n, self.opts.gamma).map_err(|e| {
            SimError::Input(format!(
                "{} record {}: {name} p={p} n={n}: {e}",
                st.file, st.index
            ))
        })?;
        coll.tag = tag;
        let used = self.signatures.entry(sig).or_insert(SignatureUse {
            calls: 0,
            mode: "expanded",
            algorithm: Some(coll.name()),
            cost_ps: None,
        });
        used.calls += u64::from(c.me == 0);
        let vr = (c.me + p - root) % p;
        // a temporary buffer faults in as data lands in it: gather's own block copied in
        // first, then every message received into it, each after its arrival
        let staged = coll.staged_bytes(vr);
        let touch = |bytes: u64| self.opts.first_touch.temp_cost(bytes, staged);
        if coll.alg == collectives::Algorithm::GatherBinomial {
            let ps = touch(staged.min(coll.n.div_ceil(p as u64)));
            if ps > 0 {
                self.step(&[Op::calc(ps)], true)?;
            }
        }
        let mut phase = Vec::new();
        for k in 0.. {
            phase.clear();
            if coll.phase(vr, k, &mut phase).is_none() {
                break;
            }
            if phase.is_empty() {
                continue;
            }
            let received: u64 = phase
                .iter()
                .filter(|op| op.kind == OpKind::Recv)
                .map(|op| op.size)
                .sum();
            for op in &mut phase {
                if op.kind != OpKind::Calc {
                    op.peer = c.members[((op.peer + root) % p) as usize];
                }
            }
            let ops = std::mem::take(&mut phase);
            self.step(&ops, true)?;
            phase = ops;
            let ps = touch(received);
            if staged > 0 && ps > 0 {
                self.step(&[Op::calc(ps)], true)?;
            }
        }
        Ok(())
    }
}

impl Replay {
    /// Reads the trace directory `dir` (rank-<r>.cctrace for every rank),
    /// each file streamed as it is replayed.
    pub fn load(dir: &Path, opts: &Options) -> Result<Replay> {
        let (shown, size) = files::rank_count(dir)?;
        Self::build(shown, size, opts, |rank| files::open(dir, rank))
    }

    /// The replay of a trace read earlier (`TraceFiles`), under `opts`.
    pub fn from_files(trace: &TraceFiles, opts: &Options) -> Result<Replay> {
        Self::build(trace.dir().to_string(), trace.ranks(), opts, |rank| {
            Ok(trace.rank(rank))
        })
    }

    fn build<R: Read>(
        shown: String,
        size: u32,
        opts: &Options,
        mut open: impl FnMut(u32) -> Result<RankFile<R>>,
    ) -> Result<Replay> {
        let mut b = Builder {
            opts,
            shared: Shared::default(),
            ops: Vec::new(),
            waiter: Vec::new(),
            steps: Vec::new(),
            waits: Vec::new(),
            signatures: BTreeMap::new(),
            ranks: size,
            calls: 0,
            book: (!opts.misaligned_copy.steps.steps.is_empty() || !opts.written_send.is_empty())
                .then(Book::default),
            all_to_alls: HashMap::new(),
            footprint: (0, 0),
            exchanges: Vec::new(),
        };
        let mut rank_steps = Vec::with_capacity(size as usize + 1);
        let mut measured = Vec::with_capacity(size as usize);
        for rank in 0..size {
            rank_steps.push(b.steps.len() as u32);
            measured.push(b.read_rank(open(rank)?, rank, size)?);
        }
        rank_steps.push(b.steps.len() as u32);
        b.push_step(); // sentinel
        let mut misaligned = (0u64, 0u64);
        for (op, blocks, ps) in settle_all_to_alls(&b.all_to_alls, &opts.misaligned_copy) {
            let o = &mut b.ops[op as usize];
            o.size = o.size.saturating_add(ps);
            misaligned = (misaligned.0 + blocks, misaligned.1.saturating_add(ps));
        }
        let mut written = (0u64, 0u64);
        if let Some(book) = b.book.take() {
            for (op, slow, dirty) in book.settle(&opts.misaligned_copy, &opts.written_send) {
                let o = &mut b.ops[op as usize];
                o.size = o.size.saturating_add(slow).saturating_add(dirty);
                if slow > 0 {
                    misaligned = (misaligned.0 + 1, misaligned.1.saturating_add(slow));
                }
                if dirty > 0 {
                    written = (written.0 + 1, written.1.saturating_add(dirty));
                }
            }
        }
        if !b.shared.other.is_empty() && !opts.other_as_compute && !opts.list_only {
            let names: Vec<String> = b
                .shared
                .other
                .iter()
                .map(|(&i, &n)| format!("{} ({n}x)", other_name(i)))
                .collect();
            return input(format!(
                "{shown}: the trace holds calls the replay cannot follow: {} (--other-as-compute replays them as computation)",
                names.join(", ")
            ));
        }
        let n = b.ops.len();
        let other_calls = b
            .shared
            .other
            .iter()
            .map(|(&i, &n)| (other_name(i), n))
            .collect();
        Ok(Replay {
            ranks: size,
            unfinished_ops: n as u64,
            unfinished_ranks: size as u64,
            done_flag: vec![false; n],
            ops: b.ops,
            waiter: b.waiter,
            steps: b.steps,
            waits: b.waits,
            current: rank_steps[..size as usize].to_vec(),
            outstanding: vec![0; size as usize],
            rank_steps,
            measured,
            signatures: b.signatures,
            mode: opts.collectives,
            other_calls,
            io_calls: extended::io_calls(&b.shared.io),
            calls: b.calls,
            misaligned,
            written,
            footprint: b.footprint,
            exchanges: b.exchanges,
            join_bytes: b.shared.instance_bytes,
            dir: shown,
        })
    }

    /// Prices each exchange's excess under a model whose largest eager message is
    /// `eager_max` bytes: the rendezvous step for an exchange of more, else the eager one.
    /// A replay built once serves LogGPS and LogGP (S infinite) alike.
    pub fn price_exchanges(&mut self, eager_max: u64) {
        for &(op, bytes, eager, rendezvous) in &self.exchanges {
            self.ops[op as usize].size = if bytes > eager_max { rendezvous } else { eager };
        }
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn op_range(&self, s: u32) -> std::ops::Range<usize> {
        self.steps[s as usize].first_op as usize..self.steps[s as usize + 1].first_op as usize
    }

    fn wait_range(&self, s: u32) -> std::ops::Range<usize> {
        self.steps[s as usize].first_wait as usize..self.steps[s as usize + 1].first_wait as usize
    }

    /// Begins the rank's current step, and the following ones while they
    /// have nothing to wait for.
    fn begin(&mut self, rank: u32, out: &mut Ready) {
        let r = rank as usize;
        loop {
            let s = self.current[r];
            if s == self.rank_steps[r + 1] {
                self.unfinished_ranks -= 1;
                return;
            }
            let ops = self.op_range(s);
            let pending = self
                .wait_range(s)
                .filter(|&w| !self.done_flag[self.waits[w] as usize])
                .count();
            self.outstanding[r] = (ops.len() + pending) as u32;
            out.extend(self.ops[ops].iter().map(|op| (rank, *op)));
            if self.outstanding[r] > 0 {
                return;
            }
            self.current[r] = s + 1;
        }
    }

    fn settle(&mut self, rank: u32, out: &mut Ready) {
        let r = rank as usize;
        self.outstanding[r] -= 1;
        if self.outstanding[r] == 0 {
            self.current[r] += 1;
            self.begin(rank, out);
        }
    }

    /// Writes the replay as GOAL text (expanded collectives only): an
    /// operation requires what its step waits for, and `irequires` the
    /// operations started before it since the last step that started any.
    pub fn write_goal<W: std::io::Write>(&self, unit_ps: u64, w: &mut W) -> std::io::Result<()> {
        writeln!(w, "num_ranks {}", self.ranks)?;
        for rank in 0..self.ranks as usize {
            writeln!(w, "\nrank {rank} {{")?;
            let first_op = self.steps[self.rank_steps[rank] as usize].first_op as u64;
            let label = |id: u64| id - first_op;
            // conditions since the last step that started operations
            let mut started: Vec<u64> = Vec::new();
            let mut done: Vec<u64> = Vec::new();
            for s in self.rank_steps[rank]..self.rank_steps[rank + 1] {
                let ops = self.op_range(s);
                if !ops.is_empty() {
                    for id in ops.clone() {
                        write_goal_op(w, label(id as u64), &self.ops[id], unit_ps)?;
                        for &d in &done {
                            writeln!(w, "l{} requires l{}", label(id as u64), label(d))?;
                        }
                        for &d in started.iter().filter(|d| !done.contains(d)) {
                            writeln!(w, "l{} irequires l{}", label(id as u64), label(d))?;
                        }
                    }
                    started.clear();
                    done.clear();
                    started.extend(ops.map(|i| i as u64));
                }
                done.extend(self.wait_range(s).map(|i| self.waits[i] as u64));
            }
            writeln!(w, "}}")?;
        }
        Ok(())
    }

    pub fn has_charged(&self) -> bool {
        self.ops.iter().any(|o| o.kind == OpKind::Join)
    }
}

impl Workload for Replay {
    fn ranks(&self) -> u32 {
        self.ranks
    }
    fn describe(&self) -> String {
        format!(
            "replay of {} ({} ranks, {} calls, {} collectives)",
            self.dir,
            self.ranks,
            self.calls,
            self.mode.name()
        )
    }
    fn start(&mut self, rank: u32, out: &mut Ready) {
        self.begin(rank, out);
    }
    fn started(&mut self, rank: u32, id: u32, out: &mut Ready) {
        let s = self.current[rank as usize];
        if self.op_range(s).contains(&(id as usize)) {
            self.settle(rank, out);
        }
    }
    fn join_bytes(&self, instance: u32) -> u64 {
        self.join_bytes.get(instance as usize).copied().unwrap_or(0)
    }
    fn done(&mut self, rank: u32, id: u32, out: &mut Ready) {
        self.done_flag[id as usize] = true;
        self.unfinished_ops -= 1;
        if self.waiter[id as usize] == self.current[rank as usize] {
            self.settle(rank, out);
        }
    }
    fn unfinished(&self) -> u64 {
        self.unfinished_ops + self.unfinished_ranks
    }
}
