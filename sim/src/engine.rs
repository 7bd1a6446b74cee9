//! The discrete-event engine: one loop over a (time, sequence) queue, one
//! handler per event kind, the LogGOPS formulas written where they apply.
//!
//! Per rank it keeps when the CPU (o, O, computation), the NIC's send side
//! (g, G) and the NIC's receive side are next free. A ready operation waits
//! until its resources are free (it is put back with its sequence number, so
//! same-time order is creation order).

use crate::error::{Result, SimError};
use crate::matching::{Entry, Matcher};
use crate::network::Network;
use crate::params::{Params, Rendezvous};
use crate::queue::{EventQueue, MAX_EVENTS};
use crate::workload::{OpKind, Ready, Workload};

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
}

/// A waiting event's data.
#[derive(Debug, Clone, Copy)]
struct Pending {
    size: u64,
    rank: u32,
    peer: u32,
    tag: u32,
    id: u32,
}

impl Kind {
    fn from_u8(k: u8) -> Kind {
        match k {
            0 => Kind::Send,
            1 => Kind::Recv,
            2 => Kind::Calc,
            3 => Kind::Msg,
            4 => Kind::Ack,
            _ => unreachable!("only engine kinds are queued"),
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

/// How to run: cost parameters, network, and whether to keep a timeline.
pub struct Config {
    pub params: Params,
    pub network: Network,
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

struct Engine<'a, W: Workload> {
    p: Params,
    net: Network,
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
}

/// Most ranks a run may have.
pub const MAX_RANKS: u32 = 1 << 28;

/// Simulates `workload` to completion.
pub fn run<W: Workload>(config: Config, workload: &mut W) -> Result<Outcome> {
    if workload.ranks() > MAX_RANKS {
        return Err(SimError::Usage(format!(
            "at most {MAX_RANKS} ranks can be simulated, not {}",
            workload.ranks()
        )));
    }
    let n = workload.ranks() as usize;
    let mut e = Engine {
        p: config.params,
        net: config.network,
        wl: workload,
        queue: EventQueue::new(),
        free: vec![Free::default(); n],
        matcher: Matcher::new(n as u32),
        ready: Vec::new(),
        messages: 0,
        rendezvous: 0,
        peak_queue: 0,
        trace: config.trace_limit.map(|_| Vec::new()),
        trace_limit: config.trace_limit.unwrap_or(0),
    };
    for rank in 0..n as u32 {
        e.wl.start(rank, &mut e.ready);
        e.flush_ready()?;
    }
    e.main_loop()?;
    e.finish()
}

impl<W: Workload> Engine<'_, W> {
    fn main_loop(&mut self) -> Result<()> {
        while let Some(event) = self.queue.pop() {
            let (t, ev) = (event.time, event.data);
            let kept = match Kind::from_u8(event.kind()) {
                Kind::Calc => self.on_calc(t, &ev),
                Kind::Send => self.on_send(t, &ev),
                Kind::Recv => self.on_recv(t, &ev),
                Kind::Msg => self.on_msg(t, &ev),
                Kind::Ack => self.on_ack(t, &ev),
            }?;
            if let Some(later) = kept {
                self.queue.push(later, event.seq(), event.kind(), ev);
            }
            if !self.ready.is_empty() {
                self.flush_ready()?;
            }
        }
        Ok(())
    }

    fn schedule(&mut self, time: u64, kind: Kind, ev: Pending) -> Result<()> {
        let Some(seq) = self.queue.next_seq() else {
            return Err(SimError::Usage(format!(
                "the run needs more than {MAX_EVENTS} events"
            )));
        };
        self.queue.push(time, seq, kind as u8, ev);
        self.peak_queue = self.peak_queue.max(self.queue.len());
        Ok(())
    }

    /// Queues newly ready operations, per rank sends before receives before
    /// computation (a stable sort, so equal kinds keep the workload's order).
    fn flush_ready(&mut self) -> Result<()> {
        let mut ready = std::mem::take(&mut self.ready);
        if ready.len() > 1 {
            ready.sort_by_key(|(rank, op)| (*rank, op.kind));
        }
        for &(rank, op) in &ready {
            let r = rank as usize;
            let time = match op.kind {
                OpKind::Send => self.free[r].o.max(self.free[r].gs),
                OpKind::Recv | OpKind::Calc => self.free[r].o,
            };
            let kind = match op.kind {
                OpKind::Send => Kind::Send,
                OpKind::Recv => Kind::Recv,
                OpKind::Calc => Kind::Calc,
            };
            self.schedule(
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

    /// Computation: occupies the CPU for its length.
    fn on_calc(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let r = ev.rank as usize;
        if self.free[r].o > t {
            return Ok(Some(self.free[r].o));
        }
        self.free[r].o = t + ev.size;
        self.record(t, ev, SpanKind::Calc, 0);
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        self.wl.done(ev.rank, ev.id, &mut self.ready);
        Ok(None)
    }

    /// A send at t: CPU busy until t+o+(s-1)O, NIC until t+g+(s-1)G, first
    /// byte at the receiver at t+o+L (plus the network's hops and queueing).
    fn on_send(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let (r, p) = (ev.rank as usize, &self.p);
        let busy = self.free[r].o.max(self.free[r].gs);
        if busy > t {
            return Ok(Some(busy));
        }
        let s1 = ev.size.saturating_sub(1);
        let c = p.cost(ev.size);
        // saturating: a run that long has no meaningful answer, but must not wrap
        self.free[r].o = t
            .saturating_add(c.o_s)
            .saturating_add(s1.saturating_mul(c.big_o));
        self.free[r].gs = t
            .saturating_add(p.g)
            .saturating_add(s1.saturating_mul(c.big_g));
        let depart = t.saturating_add(c.o_s);
        let transit = self
            .net
            .transit(ev.rank, ev.peer, t, depart, s1.saturating_mul(c.big_g));
        let arrive = depart.saturating_add(p.l).saturating_add(transit);
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
        self.schedule(arrive, Kind::Msg, msg)?;
        if ev.size <= self.p.eager_max {
            self.wl.done(ev.rank, ev.id, &mut self.ready);
        } else {
            self.rendezvous += 1;
        }
        Ok(None)
    }

    /// A rendezvous send is matched at time t on the receiver.
    fn release_sender(&mut self, t: u64, sender: u32, send_id: u32) -> Result<()> {
        match self.p.rendezvous {
            Rendezvous::Match => {
                self.sender_free(t, sender, send_id);
                Ok(())
            }
            Rendezvous::Handshake => {
                let ack = Pending {
                    size: 0,
                    rank: sender,
                    peer: 0,
                    tag: 0,
                    id: send_id,
                };
                self.schedule(t.saturating_add(self.p.l), Kind::Ack, ack)
            }
        }
    }

    fn sender_free(&mut self, t: u64, sender: u32, send_id: u32) {
        let s = sender as usize;
        self.free[s].o = self.free[s].o.max(t);
        self.free[s].gs = self.free[s].gs.max(t);
        self.wl.done(sender, send_id, &mut self.ready);
    }

    fn on_ack(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        self.sender_free(t, ev.rank, ev.id);
        Ok(None)
    }

    /// A posted receive: takes the oldest matching unexpected message, or waits.
    fn on_recv(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        self.wl.started(ev.rank, ev.id, &mut self.ready);
        match self.matcher.match_unexpected(ev.rank, ev.peer, ev.tag) {
            Some(msg) => {
                if msg.size > self.p.eager_max {
                    self.release_sender(t, msg.src, msg.aux)?;
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
    /// t + o + max((s-1)O, (s-1)G); then it matches a receive or waits as unexpected.
    fn on_msg(&mut self, t: u64, ev: &Pending) -> Result<Option<u64>> {
        let (r, p) = (ev.rank as usize, &self.p);
        let busy = self.free[r].o.max(self.free[r].gr);
        if busy > t {
            return Ok(Some(busy));
        }
        let s1 = ev.size.saturating_sub(1);
        let c = p.cost(ev.size);
        let per_byte = s1.saturating_mul(c.big_o).max(s1.saturating_mul(c.big_g));
        self.free[r].o = t.saturating_add(c.o_r).saturating_add(per_byte);
        self.free[r].gr = t
            .saturating_add(p.g)
            .saturating_add(s1.saturating_mul(c.big_g));
        self.record(t, ev, SpanKind::Recv, ev.peer);
        match self.matcher.match_posted(ev.rank, ev.peer, ev.tag) {
            Some(recv) => {
                if ev.size > self.p.eager_max {
                    self.release_sender(t, ev.peer, ev.id)?;
                }
                self.wl.done(ev.rank, recv.id, &mut self.ready);
            }
            None => {
                let e = Entry {
                    src: ev.peer,
                    tag: ev.tag,
                    size: ev.size,
                    id: 0,
                    aux: ev.id,
                };
                self.matcher.add_unexpected(ev.rank, e);
            }
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
        })
    }
}
