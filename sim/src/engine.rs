//! The discrete-event engine: one loop over a (time, sequence) queue, one
//! handler per event kind, the LogGOPS formulas written where they apply.
//!
//! Per rank it keeps when the CPU (o, O, computation), the NIC's send side
//! (g, G) and the NIC's receive side are next free. A ready operation waits
//! until its resources are free (it is put back with its sequence number, so
//! same-time order is creation order).
//!
//! The network is a `NetModel` (transport/): the engine hands it each message
//! sent and, when it asks for them, the receivers' copies, and passes it the
//! events of its own kinds; the model is chosen once per run (`run_with`).
//!
//! `run_accounted` also splits each rank's time into computation,
//! communication and synchronization wait (docs/simulator.md, "Breakdown").

use crate::cold_start::ColdState;
use crate::error::{Result, SimError};
use crate::fxhash::FxHashMap;
use crate::matching::{Entry, Matcher};
use crate::noise::Detours;
use crate::params::{MsgCost, Params, Rendezvous, RendezvousCopy};
use crate::queue::{EventQueue, MAX_EVENTS};
use crate::transport::{
    forward_cost, Driver, Host, Net, NetModel, Pending, ReceiverCopy, FIRST_NET_KIND, NO_RECV,
};
use crate::workload::{OpKind, Ready, Workload, LIBRARY_WORK};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    Send,
    Recv,
    Calc,
    /// A message's first byte reaches the receiver.
    Msg,
    /// The receiver's clear-to-send reaches a rendezvous sender.
    Ack,
    /// A member reaches a collective charged as a whole.
    Join,
    /// A phase boundary.
    Mark,
    SendSync,
    SendLocal,
    MsgSync,
    MsgLocal,
    /// A send a non-blocking call started (`OpKind::SendPosted`).
    SendPosted,
    /// One of the network's own events (`NetModel::on_event`).
    Net = FIRST_NET_KIND,
}

/// How a message's sender completes: by its size against S, always at the
/// match (synchronous send), or always after its overhead (buffered send).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    BySize = 0,
    Sync = 1,
    Local = 2,
}

impl Proto {
    fn from_code(c: u32) -> Proto {
        match c {
            1 => Proto::Sync,
            2 => Proto::Local,
            _ => Proto::BySize,
        }
    }
}

/// The event of a message's arrival, by how its sender completes.
fn msg_kind(proto: Proto) -> Kind {
    match proto {
        Proto::BySize => Kind::Msg,
        Proto::Sync => Kind::MsgSync,
        Proto::Local => Kind::MsgLocal,
    }
}

impl Kind {
    fn from_u8(k: u8) -> Kind {
        match k {
            0 => Kind::Send,
            1 => Kind::Recv,
            2 => Kind::Calc,
            3 => Kind::Msg,
            4 => Kind::Ack,
            5 => Kind::Join,
            6 => Kind::Mark,
            7 => Kind::SendSync,
            8 => Kind::SendLocal,
            9 => Kind::MsgSync,
            10 => Kind::MsgLocal,
            11 => Kind::SendPosted,
            _ => Kind::Net,
        }
    }
}

/// What the CPU of a rank was doing, for the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Send,
    Recv,
    Calc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub rank: u32,
    pub start: u64,
    pub end: u64,
    pub kind: SpanKind,
    pub peer: u32,
    pub size: u64,
}

/// One rank's time split three ways (ps); the parts sum to its finish time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// CPU busy in computation.
    pub compute: u64,
    /// CPU busy in message overheads and charged collectives, idle while a
    /// message was in flight, a send waited for the NIC, or a rendezvous
    /// handshake travelled.
    pub comm: u64,
    /// Idle because a partner was late: a receive waiting for a send not yet
    /// started, a rendezvous sender waiting for a receive not yet posted, a
    /// collective member waiting for the last to arrive.
    pub sync: u64,
}

impl Breakdown {
    pub fn total(&self) -> u64 {
        self.compute + self.comm + self.sync
    }

    pub fn minus(&self, earlier: &Breakdown) -> Breakdown {
        Breakdown {
            compute: self.compute - earlier.compute,
            comm: self.comm - earlier.comm,
            sync: self.sync - earlier.sync,
        }
    }
}

/// A rank reached a phase boundary (`OpKind::Mark`) at `time`, with its
/// breakdown up to then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseMark {
    pub rank: u32,
    pub level: u32,
    pub time: u64,
    pub so_far: Breakdown,
}

/// How to run: cost parameters, network, and whether to keep a timeline.
pub struct Config {
    pub params: Params,
    pub network: Net,
    pub trace_limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ranks: u32,
    /// Per rank, when its CPU finished its last operation (ps).
    pub finish: Vec<u64>,
    /// Events created (operations and messages; re-queued waits not counted).
    pub events: u64,
    pub messages: u64,
    pub rendezvous: u64,
    pub peak_queue: usize,
    pub trace: Option<Vec<Span>>,
    /// Per rank (`run_accounted` only).
    pub breakdown: Option<Vec<Breakdown>>,
    /// Phase boundaries in the order reached (`run_accounted` only).
    pub marks: Vec<PhaseMark>,
}

impl Outcome {
    pub fn makespan(&self) -> u64 {
        self.finish.iter().copied().max().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Free {
    o: u64,
    gs: u64,
    gr: u64,
}

/// Busy CPU time counts as computation or communication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    Compute,
    Comm,
}

/// The breakdown's bookkeeping, kept only by `run_accounted`.
struct Accounts {
    per_rank: Vec<Breakdown>,
    /// Per send operation id: when the send started and when its message
    /// reached the receiver (NOT_YET until then).
    msg_time: Vec<[u64; 2]>,
    marks: Vec<PhaseMark>,
}

impl Accounts {
    fn slot(&mut self, id: u32) -> &mut [u64; 2] {
        let i = id as usize;
        if i >= self.msg_time.len() {
            self.msg_time
                .resize((i + 1).next_power_of_two(), [0, NOT_YET]);
        }
        &mut self.msg_time[i]
    }
}

const NOT_YET: u64 = u64::MAX;

impl Accounts {
    /// How long after its message arrived a rendezvous send was matched at t.
    fn late_match(&mut self, t: u64, send_id: u32) -> u64 {
        let arrived = self.slot(send_id)[1];
        t.saturating_sub(arrived)
    }
}

/// A collective charged as a whole, while its members arrive.
#[derive(Default)]
struct JoinState {
    last: u64,
    cost: u64,
    waiting: Vec<(u32, u32)>,
}

/// The engine: its own state, and the network model, apart so that each can
/// be handed the other.
struct Engine<'a, W: Workload, N: NetModel> {
    core: Core<'a, W>,
    net: N,
}

/// Everything of a run but the network: CPUs, NICs, matching, the workload.
struct Core<'a, W: Workload> {
    p: Params,
    wl: &'a mut W,
    queue: EventQueue<Pending>,
    /// Per rank: when the CPU, the NIC's send side and its receive side are
    /// next free (one record, so a rank's state is one cache line).
    free: Vec<Free>,
    matcher: Matcher,
    ready: Ready,
    messages: u64,
    rendezvous: u64,
    peak_queue: usize,
    trace: Option<Vec<Span>>,
    trace_limit: usize,
    acct: Option<Box<Accounts>>,
    /// Charged collectives some member has reached, by instance.
    joins: FxHashMap<u32, JoinState>,
    /// What each rank still owes the model's cold start.
    cold: ColdState,
    /// Messages the network holds whose arrivals are not queued yet.
    held: usize,
    /// Per rank: when its latest computation, or the library's work that closes a call,
    /// ends: until then a message that arrives waits for the rank's next call (empty
    /// unless `taken_in_calls`).
    outside_calls: Vec<u64>,
    /// The node's detours, drawn per rank (a replay under a model with noise).
    detours: Option<Detours>,
}

/// How many events ahead the rank records are prefetched.
const PREFETCH_AHEAD: usize = 6;

pub use crate::workload::MAX_RANKS;

/// Simulates `workload` to completion.
pub fn run<W: Workload>(config: Config, workload: &mut W) -> Result<Outcome> {
    run_with(config, workload, false)
}

/// Simulates `workload` and splits each rank's time into computation,
/// communication and synchronization wait. The workload's operation ids must
/// be unique across ranks (they index the message bookkeeping).
pub fn run_accounted<W: Workload>(config: Config, workload: &mut W) -> Result<Outcome> {
    run_with(config, workload, true)
}

fn run_with<W: Workload>(config: Config, workload: &mut W, accounted: bool) -> Result<Outcome> {
    if workload.ranks() > MAX_RANKS {
        return Err(SimError::Usage(format!(
            "at most {MAX_RANKS} ranks can be simulated, not {}",
            workload.ranks()
        )));
    }
    let n = workload.ranks() as usize;
    let cold = ColdState::new(config.params.cold_start, n);
    let outside_calls = if config.params.taken_in_calls {
        vec![0; n]
    } else {
        Vec::new()
    };
    let detours = config
        .params
        .noise
        .as_ref()
        .and_then(|nz| Detours::new(nz, n));
    let core = Core {
        p: config.params,
        wl: workload,
        queue: EventQueue::new(),
        free: crate::bigmem::filled(n, Free::default()),
        matcher: Matcher::new(n as u32),
        ready: Vec::new(),
        messages: 0,
        rendezvous: 0,
        peak_queue: 0,
        trace: config.trace_limit.map(|_| Vec::new()),
        trace_limit: config.trace_limit.unwrap_or(0),
        acct: accounted.then(|| {
            Box::new(Accounts {
                per_rank: vec![Breakdown::default(); n],
                msg_time: Vec::new(),
                marks: Vec::new(),
            })
        }),
        joins: FxHashMap::default(),
        cold,
        held: 0,
        outside_calls,
        detours,
    };
    // the engine is compiled for each network model
    config.network.drive(core)
}

impl<W: Workload> Driver for Core<'_, W> {
    type Output = Result<Outcome>;

    fn drive<N: NetModel>(self, net: N) -> Result<Outcome> {
        let n = self.free.len() as u32;
        let mut e = Engine { core: self, net };
        for rank in 0..n {
            e.core.wl.start(rank, &mut e.core.ready);
            e.core.flush_ready()?;
        }
        e.main_loop()?;
        e.core.finish()
    }
}

impl<W: Workload, N: NetModel> Engine<'_, W, N> {
    fn main_loop(&mut self) -> Result<()> {
        let (core, net) = (&mut self.core, &mut self.net);
        loop {
            net.flush(core);
            let Some(event) = core.queue.pop() else {
                break;
            };
            // events due together touch ranks scattered over memory: the
            // records of the one handled a few places later are asked for now
            if let Some(ahead) = core.queue.peek_due(PREFETCH_AHEAD) {
                let rank = ahead.data.rank;
                if let Some(f) = core.free.get(rank as usize) {
                    crate::prefetch::prefetch(f);
                }
                core.matcher.prefetch(rank);
                core.wl.prefetch(rank);
            }
            let (t, ev) = (event.time, event.data);
            let kept = match Kind::from_u8(event.kind()) {
                Kind::Calc => core.on_calc(t, &ev),
                Kind::Send => core.on_send(net, t, &ev, Proto::BySize, false),
                Kind::Recv => core.on_recv(net, t, &ev),
                Kind::Msg => core.on_msg(net, t, &ev, Proto::BySize),
                Kind::Ack => core.on_ack(t, &ev),
                Kind::Join => core.on_join(t, &ev),
                Kind::Mark => core.on_mark(t, &ev),
                Kind::SendSync => core.on_send(net, t, &ev, Proto::Sync, false),
                Kind::SendLocal => core.on_send(net, t, &ev, Proto::Local, false),
                Kind::SendPosted => core.on_send(net, t, &ev, Proto::BySize, true),
                Kind::MsgSync => core.on_msg(net, t, &ev, Proto::Sync),
                Kind::MsgLocal => core.on_msg(net, t, &ev, Proto::Local),
                Kind::Net => net.on_event(core, event.kind(), t, &ev),
            }?;
            if let Some(later) = kept {
                core.queue.push(later, event.seq(), event.kind(), ev);
            }
            if !core.ready.is_empty() {
                core.flush_ready()?;
            }
        }
        Ok(())
    }
}

impl<W: Workload> Host for Core<'_, W> {
    #[inline(always)]
    fn params(&self) -> &Params {
        &self.p
    }

    #[inline(always)]
    fn schedule(&mut self, time: u64, kind: u8, ev: Pending) -> Result<()> {
        let seq = self.next_seq()?;
        self.queue.push(time, seq, kind, ev);
        self.note_queued();
        Ok(())
    }

    #[inline(always)]
    fn next_seq(&mut self) -> Result<u64> {
        self.queue
            .next_seq()
            .ok_or_else(|| SimError::Usage(format!("the run needs more than {MAX_EVENTS} events")))
    }

    #[inline(always)]
    fn next_time(&mut self) -> Option<u64> {
        self.queue.next_time()
    }

    #[inline(always)]
    fn queue_at(&mut self, time: u64, seq: u64, kind: u8, ev: Pending) {
        self.queue.push(time, seq, kind, ev);
    }

    #[inline(always)]
    fn held(&mut self, n: usize, note: bool) {
        self.held = n;
        if note {
            self.note_queued();
        }
    }

    fn forward_at(&mut self, t: u64, ev: &Pending) -> std::result::Result<u64, u64> {
        let n = ev.rank as usize;
        match self.free.get(n).map(|f| f.o) {
            Some(o) if o > t => Err(o),
            Some(_) => {
                if let Some(end) = self.taken(n, t) {
                    return Err(end);
                }
                let end = t.saturating_add(forward_cost(&self.p, ev.size));
                self.cpu_until(n, t, end, Busy::Comm, 0);
                self.record(t, ev, SpanKind::Send, ev.peer);
                Ok(end)
            }
            None => Ok(t),
        }
    }

    /// The receiver's CPU is held to the copy's end (sharing made the copy
    /// longer than alone), the receive is done and a pulled message's
    /// sender released.
    fn copy_done(&mut self, t: u64, m: ReceiverCopy) -> Result<()> {
        let done = t.max(m.until);
        let r = m.rank as usize;
        if self.free[r].o < done {
            self.cpu_until(r, self.free[r].o, done, Busy::Comm, 0);
        }
        if m.pull {
            self.release_sender(t, done, m.rank, m.peer, m.send, m.late)?;
        }
        if m.recv != NO_RECV {
            self.wl.done(m.rank, m.recv, &mut self.ready);
        }
        Ok(())
    }
}

impl<W: Workload> Core<'_, W> {
    #[inline(always)]
    fn schedule_kind(&mut self, time: u64, kind: Kind, ev: Pending) -> Result<()> {
        Host::schedule(self, time, kind as u8, ev)
    }

    /// Queues `ev` at `time` after every other event due then, whenever created.
    fn schedule_late(&mut self, time: u64, kind: Kind, ev: Pending) -> Result<()> {
        let seq = self.queue.late_seq().ok_or_else(|| {
            SimError::Usage(format!("the run needs more than {MAX_EVENTS} events"))
        })?;
        self.queue.push(time, seq, kind as u8, ev);
        self.note_queued();
        Ok(())
    }

    /// Keeps the largest number of events waiting, messages the network holds
    /// back among them (as if they were queued when sent).
    #[inline(always)]
    fn note_queued(&mut self) {
        self.peak_queue = self.peak_queue.max(self.queue.len() + self.held);
    }

    /// Queues newly ready operations, per rank sends before receives before
    /// computation (a stable sort, so equal kinds keep the workload's order).
    fn flush_ready(&mut self) -> Result<()> {
        let mut ready = std::mem::take(&mut self.ready);
        if ready.len() > 1 {
            ready.sort_by_key(|(rank, op)| (*rank, op.kind.order()));
        }
        for &(rank, op) in &ready {
            let r = rank as usize;
            let time = if op.kind.is_send() {
                self.free[r].o.max(self.free[r].gs)
            } else {
                self.free[r].o
            };
            let kind = match op.kind {
                OpKind::Send => Kind::Send,
                OpKind::SendSync => Kind::SendSync,
                OpKind::SendLocal => Kind::SendLocal,
                OpKind::SendPosted => Kind::SendPosted,
                OpKind::Recv => Kind::Recv,
                OpKind::Calc => Kind::Calc,
                OpKind::Join => Kind::Join,
                OpKind::Mark => Kind::Mark,
            };
            self.schedule_kind(
                time,
                kind,
                Pending {
                    size: op.size,
                    rank,
                    peer: op.peer,
                    tag: op.tag,
                    id: op.id,
                },
            )?;
        }
        ready.clear();
        self.ready = ready;
        Ok(())
    }

    /// Records, when tracing, that `ev.rank`'s CPU was busy from t until it is next free.
    fn record(&mut self, t: u64, ev: &Pending, kind: SpanKind, peer: u32) {
        if let Some(trace) = self.trace.as_mut() {
            if trace.len() < self.trace_limit {
                trace.push(Span {
                    rank: ev.rank,
                    start: t,
                    end: self.free[ev.rank as usize].o,
                    kind,
                    peer,
                    size: ev.size,
                });
            }
        }
    }

    /// The end of a detour that holds rank `r`'s CPU at `t`, if one does (noise.rs).
    #[inline]
    fn taken(&mut self, r: usize, t: u64) -> Option<u64> {
        self.detours.as_mut().and_then(|d| d.taken_until(r, t))
    }

    /// Moves rank `r`'s CPU free time to `end`: idle from its previous free
    /// time to `start` (of which up to `late` is synchronization wait, the rest
    /// communication), then busy until `end`. Every change of a CPU's free
    /// time goes through here, so a rank's breakdown sums to its finish time.
    #[inline]
    fn cpu_until(&mut self, r: usize, start: u64, end: u64, busy: Busy, late: u64) {
        if let Some(a) = self.acct.as_mut() {
            let prev = self.free[r].o;
            let b = &mut a.per_rank[r];
            let idle = start.saturating_sub(prev);
            let sync = late.min(idle);
            b.sync += sync;
            b.comm += idle - sync;
            let work = end.saturating_sub(start.max(prev));
            match busy {
                Busy::Compute => b.compute += work,
                Busy::Comm => b.comm += work,
            }
        }
        self.free[r].o = end;
    }

    /// Computation (or the library's own work, counted as communication): occupies the
    /// CPU for its length.
    fn on_calc(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        if self.free[r].o > t {
            return Ok(Some(self.free[r].o));
        }
        if let Some(end) = self.taken(r, t) {
            return Ok(Some(end));
        }
        let busy = if ev.tag == LIBRARY_WORK {
            Busy::Comm
        } else {
            Busy::Compute
        };
        self.cpu_until(r, t, t + ev.size, busy, 0);
        if busy == Busy::Compute {
            if let Some(d) = self.detours.as_mut() {
                d.skip_until(r, t + ev.size); // the traced computation's time holds them
            }
        }
        // the library's own work closes a call whose messages are in: it polls for no
        // more, so one arriving meanwhile waits for the next call, as during a computation
        if let Some(until) = self.outside_calls.get_mut(r) {
            *until = t + ev.size;
        }
        self.record(t, ev, SpanKind::Calc, 0);
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        self.wl.done(ev.rank, ev.id, &mut self.ready);
        Ok(None)
    }

    /// Whether a message of `size` bytes sent by `proto` completes at its match.
    #[inline]
    fn rendezvous_of(&self, size: u64, proto: Proto) -> bool {
        match proto {
            Proto::BySize => size > self.p.eager_max,
            Proto::Sync => true,
            Proto::Local => false,
        }
    }

    /// What a receiver's CPU spends pulling a single-copy rendezvous message
    /// of `size` bytes: (s-1) max(O, G).
    fn pull_bytes(&self, size: u64) -> u64 {
        let s1 = size.saturating_sub(1);
        let c = self.p.cost(size);
        s1.saturating_mul(c.big_o).max(s1.saturating_mul(c.big_g))
    }

    /// A send at t: CPU busy until t+o+(s-1)O, NIC until t+g+(s-1)G, first
    /// byte at the receiver at t+o+L (plus the network's hops and queueing).
    ///
    /// A message to oneself takes the library's self path (MPICH's ch4 self
    /// send, Open MPI's `self` BTL): no network and no NIC, so it is there at
    /// t+o, eager whatever its size (a synchronous send still completes at the
    /// match), and its bytes are copied once, by the receive (`on_msg`).
    ///
    /// An eager message to another rank that a non-blocking call started (`posted`)
    /// keeps its CPU busy for the library's measured post instead (`Params::post_time`),
    /// o_s being what is left of it after the copy, (s-1)O, where the post holds that
    /// copy and costs less than the blocking send (MPI_Send is a post and the progress
    /// that completes it). A shorter post leaves the bytes to the calls that complete
    /// the request (MPICH's Isend of 16 KiB and more posts in 0.16 to 0.29 us), which the
    /// blocking cost stands for.
    fn on_send<N: NetModel>(
        &mut self,
        net: &mut N,
        t: u64,
        ev: &Pending,
        proto: Proto,
        posted: bool,
    ) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        let to_self = ev.peer == ev.rank;
        let busy = if to_self {
            self.free[r].o
        } else {
            self.free[r].o.max(self.free[r].gs)
        };
        if busy > t {
            return Ok(Some(busy));
        }
        if let Some(end) = self.taken(r, t) {
            return Ok(Some(end));
        }
        let p = &self.p;
        let proto = match proto {
            Proto::BySize if to_self => Proto::Local,
            other => other,
        };
        let s1 = ev.size.saturating_sub(1);
        let mut c = if to_self {
            p.self_cost(ev.size)
        } else {
            p.cost(ev.size)
        };
        let rendezvous = self.rendezvous_of(ev.size, proto);
        // the sender copies, unless the receiver pulls the bytes or it sends to itself
        let pulled = rendezvous && p.rendezvous_copy == RendezvousCopy::Receiver;
        let copies = !(to_self || pulled);
        let per_byte = if copies {
            s1.saturating_mul(c.big_o)
        } else {
            0
        };
        if posted && !to_self && !rendezvous {
            if let Some(post) = p.post_time(ev.size).filter(|&post| post >= per_byte) {
                c.o_s = c.o_s.min(post - per_byte);
            }
        }
        c.o_s = c.o_s.saturating_add(self.cold.send(r, ev.size, rendezvous));
        // saturating: a run that long has no meaningful answer, but must not wrap
        let cpu_end = t.saturating_add(c.o_s).saturating_add(per_byte);
        if !to_self {
            // a message its receiver pulls leaves as a request to send: the sender's
            // next message waits the gap g, not the bytes (the puller streams those)
            let streamed = if pulled {
                0
            } else {
                s1.saturating_mul(c.big_g)
            };
            self.free[r].gs = t.saturating_add(p.g).saturating_add(streamed);
        }
        let depart = t.saturating_add(c.o_s);
        self.cpu_until(r, t, cpu_end, Busy::Comm, 0);
        if let Some(a) = self.acct.as_mut() {
            *a.slot(ev.id) = [t, NOT_YET];
        }
        self.record(t, ev, SpanKind::Send, ev.peer);
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        let msg = Pending {
            size: ev.size,
            rank: ev.peer,
            peer: ev.rank,
            tag: ev.tag,
            id: ev.id,
        };
        self.messages += 1;
        let kind = msg_kind(proto);
        // a network that times copies moves the bytes when the receiver copies them
        if to_self {
            self.schedule_kind(depart, kind, msg)?;
        } else {
            let serialization = s1.saturating_mul(c.big_g);
            let depart = depart.saturating_add(Self::held_back(net, &c, s1, rendezvous));
            net.send(self, t, depart, kind as u8, msg, serialization)?;
        }
        if rendezvous {
            self.rendezvous += 1;
        } else {
            self.wl.done(ev.rank, ev.id, &mut self.ready);
        }
        Ok(None)
    }

    /// The receiver's own copy per byte (O_r) a message between two ranks is charged
    /// by: an eager one whose size regime has it, on a network that does not time
    /// copies as flows; None: LogGOPSim's receiver. The send (`held_back`) and the
    /// receive (`on_msg`) ask the same question here.
    #[inline]
    fn own_copy<N: NetModel>(net: &N, c: &MsgCost, rendezvous: bool) -> Option<u64> {
        c.big_o_r.filter(|_| !rendezvous && !net.times_copies())
    }

    /// How much later than its first byte a message with O_r (`own_copy`) is taken
    /// in: the part of its stream, (s-1) max(O, G), that outlasts that copy,
    /// (s-1)O_r. A receiver free at its first byte then ends at the same time as by
    /// LogGOPSim's rule; one still busy (sending its own message of an exchange)
    /// copies bytes that are there.
    #[inline]
    fn held_back<N: NetModel>(net: &N, c: &MsgCost, s1: u64, rendezvous: bool) -> u64 {
        Self::own_copy(net, c, rendezvous).map_or(0, |o_r| {
            s1.saturating_mul(c.big_o.max(c.big_g))
                .saturating_sub(s1.saturating_mul(o_r))
        })
    }

    /// A rendezvous send is done with on the receiver at time t (matched, or
    /// its bytes pulled: then t is later than now), `late` after its message
    /// was there (the receive was posted late).
    /// A sender that is the receiver hears of the match at once: no L.
    #[allow(clippy::too_many_arguments)]
    fn release_sender(
        &mut self,
        now: u64,
        t: u64,
        receiver: u32,
        sender: u32,
        send_id: u32,
        late: u64,
    ) -> Result<()> {
        let at = match self.p.rendezvous {
            Rendezvous::Handshake if sender != receiver => t.saturating_add(self.p.l),
            _ if t <= now => {
                self.sender_free(t, sender, send_id, late);
                return Ok(());
            }
            _ => t,
        };
        let ack = Pending {
            size: late,
            rank: sender,
            peer: 0,
            tag: 0,
            id: send_id,
        };
        self.schedule_kind(at, Kind::Ack, ack)
    }

    fn sender_free(&mut self, t: u64, sender: u32, send_id: u32, late: u64) {
        let s = sender as usize;
        let end = self.free[s].o.max(t);
        self.cpu_until(s, t, end, Busy::Comm, late);
        self.free[s].gs = self.free[s].gs.max(t);
        self.wl.done(sender, send_id, &mut self.ready);
    }

    fn on_ack(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        self.sender_free(t, ev.rank, ev.id, ev.size);
        Ok(None)
    }

    /// A member reaches a charged collective (`peer`: instance, `tag`: member
    /// count, `size`: cost); the last to arrive releases all at t + cost.
    fn on_join(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        if self.free[r].o > t {
            return Ok(Some(self.free[r].o));
        }
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        let join = self.joins.entry(ev.peer).or_default();
        join.last = join.last.max(t);
        join.cost = join.cost.max(ev.size);
        join.waiting.push((ev.rank, ev.id));
        if join.waiting.len() < ev.tag as usize {
            return Ok(None);
        }
        let join = self.joins.remove(&ev.peer).expect("just inserted");
        let (last, mut cost) = (join.last, join.cost);
        if self.p.cold_start.is_some() {
            // T(n, p) was measured warm: each member's messages of the call (ceil(log2 p)
            // each way, as every member hears from all in that many rounds) may still find
            // cold cells or a pair's first rendezvous, and the slowest member holds up the
            // rest (cold_start.rs)
            let bytes = self.wl.join_bytes(ev.peer);
            let rounds = ev.tag.max(2).next_power_of_two().trailing_zeros();
            let rendezvous = bytes > self.p.eager_max;
            let mut members: Vec<u32> = join.waiting.iter().map(|&(rank, _)| rank).collect();
            let extra = self
                .cold
                .collective(&mut members, bytes, rendezvous, rounds);
            cost = cost.saturating_add(extra);
        }
        for (rank, id) in join.waiting {
            let r = rank as usize;
            let start = self.free[r].o.max(last);
            self.cpu_until(r, start, start.saturating_add(cost), Busy::Comm, u64::MAX);
            self.wl.done(rank, id, &mut self.ready);
        }
        Ok(None)
    }

    /// A phase boundary: notes the rank's time and breakdown so far.
    fn on_mark(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        if self.free[r].o > t {
            return Ok(Some(self.free[r].o));
        }
        self.cpu_until(r, t, t, Busy::Comm, 0);
        if let Some(a) = self.acct.as_mut() {
            a.marks.push(PhaseMark {
                rank: ev.rank,
                level: ev.tag,
                time: t,
                so_far: a.per_rank[r],
            });
        }
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        self.wl.done(ev.rank, ev.id, &mut self.ready);
        Ok(None)
    }

    /// A posted receive: takes the oldest matching unexpected message, or waits.
    fn on_recv<N: NetModel>(&mut self, net: &mut N, t: u64, ev: &Pending) -> Result<Option<u64>> {
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        match self.matcher.match_unexpected(ev.rank, ev.peer, ev.tag) {
            Some(msg) => {
                // an unexpected message's `id` holds its protocol
                if self.rendezvous_of(msg.size, Proto::from_code(msg.id)) {
                    let late = match self.acct.as_mut() {
                        Some(a) => a.late_match(t, msg.aux),
                        None => 0,
                    };
                    // a pulled message is copied now, by this rank, from the sender's buffer
                    let pulled = if self.p.rendezvous_copy == RendezvousCopy::Receiver
                        && msg.src != ev.rank
                    {
                        let r = ev.rank as usize;
                        let start = self.free[r].o.max(t);
                        let end = start.saturating_add(self.pull_bytes(msg.size));
                        self.cpu_until(r, start, end, Busy::Comm, 0);
                        let s1 = msg.size.saturating_sub(1);
                        if net.times_copies() && s1 > 0 {
                            // the sender is released, and the receive done, when the copy ends
                            let copy = ReceiverCopy {
                                rank: ev.rank,
                                peer: msg.src,
                                send: msg.aux,
                                recv: ev.id,
                                pull: true,
                                late,
                                until: end,
                            };
                            return net.copy(self, t, start, s1, copy).map(|_| None);
                        }
                        end
                    } else {
                        t
                    };
                    self.release_sender(t, pulled, ev.rank, msg.src, msg.aux, late)?;
                }
                self.wl.done(ev.rank, ev.id, &mut self.ready);
            }
            None => {
                let e = Entry {
                    src: ev.peer,
                    tag: ev.tag,
                    size: ev.size,
                    id: ev.id,
                    aux: 0,
                };
                self.matcher.post(ev.rank, e);
            }
        }
        Ok(None)
    }

    /// A message's first byte at t: the CPU is busy until
    /// t + o + max((s-1)O, (s-1)G) (t + o + (s-1)O_r for an eager message with
    /// O_r, taken in that much later); then it matches a receive or waits as unexpected.
    /// A message to oneself never used the NIC: t + o + (s-1)O, never pulled.
    fn on_msg<N: NetModel>(
        &mut self,
        net: &mut N,
        t: u64,
        ev: &Pending,
        proto: Proto,
    ) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        if let Some(a) = self.acct.as_mut() {
            let slot = a.slot(ev.id);
            slot[1] = slot[1].min(t); // the first visit is the arrival
        }
        let from_self = ev.peer == ev.rank;
        let busy = if from_self {
            self.free[r].o
        } else {
            self.free[r].o.max(self.free[r].gr)
        };
        if busy > t {
            if self.outside_calls.get(r) == Some(&busy) {
                // the rank computes or closes a call: its library sees the message at its
                // next call, after every event due when that ends, those it makes then
                // included (a computation of no length that follows does not let it in)
                self.schedule_late(busy, msg_kind(proto), *ev)?;
                return Ok(None);
            }
            return Ok(Some(busy));
        }
        if let Some(end) = self.taken(r, t) {
            return Ok(Some(end));
        }
        let p = &self.p;
        let s1 = ev.size.saturating_sub(1);
        let mut c = if from_self {
            p.self_cost(ev.size)
        } else {
            p.cost(ev.size)
        };
        let rendezvous = self.rendezvous_of(ev.size, proto);
        if rendezvous && !from_self {
            c.o_r = c.o_r.saturating_add(self.cold.rendezvous(ev.peer, ev.rank));
        }
        c.o_r = c
            .o_r
            .saturating_add(self.cold.receive(r, ev.size, rendezvous));
        let streamed = if from_self {
            0
        } else {
            s1.saturating_mul(c.big_g)
        };
        // the receiver idled since before the send started: the sender was late
        let late = match self.acct.as_mut() {
            Some(a) => a.slot(ev.id)[0].saturating_sub(self.free[r].o),
            None => 0,
        };
        let per_byte = match Self::own_copy(net, &c, rendezvous) {
            // held back by the sender (`held_back`) until the rest is no longer than this
            Some(o_r) if !from_self => s1.saturating_mul(o_r),
            _ => s1.saturating_mul(c.big_o).max(streamed),
        };
        // Single copy (the receiver pulls the bytes from the sender's buffer, as
        // UCX's get_zcopy and Open MPI's CMA get do): what arrives is the
        // request to send; the bytes are copied once it is matched, and only
        // then may the sender reuse its buffer (the library's ack or FIN).
        let pull = rendezvous && !from_self && p.rendezvous_copy == RendezvousCopy::Receiver;
        let posted = self.matcher.match_posted(ev.rank, ev.peer, ev.tag);
        let copied = if pull && posted.is_none() {
            0
        } else {
            per_byte
        };
        let end = t.saturating_add(c.o_r).saturating_add(copied);
        if !from_self {
            self.free[r].gr = t.saturating_add(self.p.g).saturating_add(streamed);
        }
        self.cpu_until(r, t, end, Busy::Comm, late);
        self.record(t, ev, SpanKind::Recv, ev.peer);
        // a network that times copies: the bytes copied now are its to time,
        // from the first byte's arrival, as long alone as the CPU's time for
        // them; the receive is done, and a pulled message's sender released,
        // when the copy ends
        if net.times_copies() && s1 > 0 && (posted.is_some() || !pull) {
            let late = match (self.acct.as_mut(), pull) {
                (Some(a), true) => a.late_match(t, ev.id),
                _ => 0,
            };
            let copy = ReceiverCopy {
                rank: ev.rank,
                peer: ev.peer,
                send: ev.id,
                recv: posted.map_or(NO_RECV, |recv| recv.id),
                pull,
                late,
                until: end,
            };
            net.copy(self, t, t, s1, copy)?;
            match posted {
                Some(_) if rendezvous && !pull => {
                    let late = match self.acct.as_mut() {
                        Some(a) => a.late_match(t, ev.id),
                        None => 0,
                    };
                    self.release_sender(t, t, ev.rank, ev.peer, ev.id, late)?;
                }
                Some(_) => {}
                None => self.matcher.add_unexpected(ev.rank, unexpected(ev, proto)),
            }
            return Ok(None);
        }
        match posted {
            Some(recv) => {
                if rendezvous {
                    // matched now, later than it arrived if the receiver's CPU was busy
                    let late = match self.acct.as_mut() {
                        Some(a) => a.late_match(t, ev.id),
                        None => 0,
                    };
                    let at = if pull { end } else { t };
                    self.release_sender(t, at, ev.rank, ev.peer, ev.id, late)?;
                }
                self.wl.done(ev.rank, recv.id, &mut self.ready);
            }
            None => self.matcher.add_unexpected(ev.rank, unexpected(ev, proto)),
        }
        Ok(None)
    }

    fn finish(self) -> Result<Outcome> {
        let left = self.wl.unfinished();
        if left > 0 {
            return Err(SimError::Deadlock(format!(
                "{left} operations never completed ({} receives wait for a message, {} messages were never received)",
                self.matcher.posted_len(),
                self.matcher.unexpected_len()
            )));
        }
        Ok(Outcome {
            ranks: self.free.len() as u32,
            finish: self.free.iter().map(|f| f.o).collect(),
            events: self.queue.created(),
            messages: self.messages,
            rendezvous: self.rendezvous,
            peak_queue: self.peak_queue,
            trace: self.trace,
            breakdown: self.acct.as_ref().map(|a| a.per_rank.clone()),
            marks: self.acct.map(|a| a.marks).unwrap_or_default(),
        })
    }
}

/// An arrived message no receive was posted for, as the matcher keeps it: its `id`
/// holds the protocol and `aux` the sender's operation id.
fn unexpected(ev: &Pending, proto: Proto) -> Entry {
    Entry {
        src: ev.peer,
        tag: ev.tag,
        size: ev.size,
        id: proto as u32,
        aux: ev.id,
    }
}
