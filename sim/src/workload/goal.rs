//! LogGOPSim's GOAL text schedules: parsing into a dependency graph, and the
//! graph as a workload (`requires`: start after the other completes;
//! `irequires`: start after the other has started).

use super::{Op, OpKind, Ready, Workload};
use crate::error::{input, Result};
use crate::fxhash::FxHashMap;
use crate::matching::ANY;
use std::io::BufRead;

pub struct GoalGraph {
    ranks: u32,
    ops: Vec<GoalOp>,
    /// Per rank, its operations: ids first..last (a rank block is contiguous).
    range_of: Vec<(u32, u32)>,
    /// Dependents of each operation (CSR: `deps[dep_start[i]..dep_start[i+1]]`),
    /// `ON_START` set for those released when it starts (`irequires`).
    /// Dependencies never leave a rank block, so the graph is built block by
    /// block and never held as a list of pairs.
    dep_start: Vec<u32>,
    deps: Vec<u32>,
    waiting: Vec<u32>,
    unfinished: u64,
}

/// An operation in 16 bytes: size (bytes or ps) with the kind in its top
/// bits, peer, tag. Its id is its index.
#[derive(Debug, Clone, Copy)]
struct GoalOp {
    size_kind: u64,
    peer: u32,
    tag: u32,
}

const KIND_SHIFT: u32 = 62;
const SIZE_MASK: u64 = (1 << KIND_SHIFT) - 1;
/// Marks a dependent released when its prerequisite starts.
const ON_START: u32 = 1 << 31;
/// Most operations a schedule may have (ids leave room for `ON_START`).
const MAX_OPS: usize = (ON_START - 1) as usize;

impl GoalOp {
    fn pack(op: &Op) -> GoalOp {
        GoalOp {
            size_kind: op.size | (Self::code(op.kind) << KIND_SHIFT),
            peer: op.peer,
            tag: op.tag,
        }
    }
    /// GOAL has three kinds of operation: two bits hold them.
    fn code(kind: OpKind) -> u64 {
        match kind {
            OpKind::Send => 1,
            OpKind::Recv => 2,
            _ => 3,
        }
    }
    fn unpack(&self, id: u32) -> Op {
        let kind = match self.size_kind >> KIND_SHIFT {
            1 => OpKind::Send,
            2 => OpKind::Recv,
            _ => OpKind::Calc,
        };
        Op {
            kind,
            peer: self.peer,
            tag: self.tag,
            size: self.size_kind & SIZE_MASK,
            id,
        }
    }
}

struct Lexer<'a> {
    path: &'a str,
    line: usize,
}

impl Lexer<'_> {
    fn err<T>(&self, msg: impl std::fmt::Display) -> Result<T> {
        input(format!("{}:{}: {msg}", self.path, self.line))
    }
}

/// Removes comments from one line; `in_block` carries an open `/* */` across lines.
fn strip_comments<'a>(mut line: &'a str, in_block: &mut bool, out: &mut Vec<&'a str>) {
    out.clear();
    if !*in_block && !line.as_bytes().contains(&b'/') {
        // most lines have no comment: skip the substring searches
        out.push(line);
        return;
    }
    loop {
        if *in_block {
            match line.find("*/") {
                Some(i) => {
                    line = &line[i + 2..];
                    *in_block = false;
                }
                None => return,
            }
        }
        let line_comment = line.find("//");
        let block = line.find("/*");
        match (line_comment, block) {
            (Some(l), Some(b)) if l < b => {
                out.push(&line[..l]);
                return;
            }
            (Some(l), None) => {
                out.push(&line[..l]);
                return;
            }
            (_, Some(b)) => {
                out.push(&line[..b]);
                line = &line[b + 2..];
                *in_block = true;
            }
            (None, None) => {
                out.push(line);
                return;
            }
        }
    }
}

/// Refuses a rank block whose dependencies form a cycle, naming it: no
/// operation of a cycle can ever start, which would otherwise surface only as
/// a generic deadlock after the run. Dependencies never leave a block, so a
/// block is checked alone (`first` is its first operation's id).
fn name_cycle(
    path: &str,
    rank: u32,
    first: u32,
    block_deps: &[(u32, u32)],
    labels: &FxHashMap<String, u32>,
) -> Result<()> {
    if block_deps.is_empty() {
        return Ok(());
    }
    let local: Vec<(u32, u32, bool)> = block_deps
        .iter()
        .map(|&(op, pre)| (op - first, (pre & !ON_START) - first, pre & ON_START != 0))
        .collect();
    let n = local
        .iter()
        .map(|&(op, pre, _)| op.max(pre) as usize + 1)
        .max()
        .unwrap_or(0);
    let Some(cycle) = super::cycle::find(n, &local) else {
        return Ok(());
    };
    let name = |&id: &u32| {
        let global = id + first;
        match labels.iter().find(|(_, &v)| v == global) {
            Some((label, _)) => format!("{label} (rank {rank})"),
            None => format!("unlabelled operation {global} (rank {rank})"),
        }
    };
    let named: Vec<String> = cycle.iter().chain(&cycle[..1]).map(name).collect();
    input(format!(
        "{path}: dependency cycle, no operation of it can ever start: {}",
        named.join(" requires ")
    ))
}

const MAX_TOKENS: usize = 24;

impl GoalGraph {
    /// Parses GOAL text; calc times are in units of `unit_ps` picoseconds.
    pub fn parse(text: &str, path: &str, unit_ps: u64) -> Result<GoalGraph> {
        Self::parse_reader(text.as_bytes(), path, unit_ps)
    }

    /// Parses a GOAL schedule line by line (the file is never held whole).
    pub fn parse_reader<R: BufRead>(mut reader: R, path: &str, unit_ps: u64) -> Result<GoalGraph> {
        let mut lx = Lexer { path, line: 0 };
        let mut num_ranks: Option<u32> = None;
        let mut current: Option<u32> = None;
        let mut labels: FxHashMap<String, u32> = FxHashMap::default();
        let mut seen_rank: Vec<bool> = Vec::new();
        let mut g = GoalGraph {
            ranks: 0,
            ops: Vec::new(),
            range_of: Vec::new(),
            dep_start: vec![0],
            deps: Vec::new(),
            waiting: Vec::new(),
            unfinished: 0,
        };
        // the current block's dependencies: (operation, prerequisite | ON_START)
        let mut block_deps: Vec<(u32, u32)> = Vec::new();
        let mut buf = String::new();
        let mut in_block = false;
        loop {
            buf.clear();
            match reader.read_line(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return input(format!("{path}: cannot read ({e})")),
            }
            lx.line += 1;
            let mut pieces: Vec<&str> = Vec::with_capacity(2);
            strip_comments(&buf, &mut in_block, &mut pieces);
            let mut store: [&str; MAX_TOKENS] = [""; MAX_TOKENS];
            let mut count = 0;
            for tok in pieces.iter().flat_map(|piece| piece.split_whitespace()) {
                if count == MAX_TOKENS {
                    return lx.err("line too long");
                }
                store[count] = tok;
                count += 1;
            }
            let toks = &store[..count];
            if toks.is_empty() {
                continue;
            }
            let num = |s: &str, what: &str| -> Result<u64> {
                match s.parse::<u64>() {
                    Ok(v) => Ok(v),
                    Err(_) => lx.err(format!("{what} '{s}' is not a non-negative integer")),
                }
            };
            match toks {
                ["num_ranks", n] => {
                    let n = num(n, "num_ranks")?;
                    let most = crate::workload::MAX_RANKS as u64;
                    if n == 0 || n > most {
                        return lx.err(format!("num_ranks must be between 1 and {most}"));
                    }
                    num_ranks = Some(n as u32);
                    seen_rank = vec![false; n as usize];
                    g.range_of = vec![(0, 0); n as usize];
                }
                ["rank", r, "{"] => {
                    let Some(nr) = num_ranks else {
                        return lx.err("'rank' before 'num_ranks'");
                    };
                    if current.is_some() {
                        return lx.err("'rank' inside another rank's block");
                    }
                    let r = num(r, "rank")?;
                    if r >= nr as u64 {
                        return lx.err(format!("rank {r} is not below num_ranks {nr}"));
                    }
                    if seen_rank[r as usize] {
                        return lx.err(format!("rank {r} appears twice"));
                    }
                    seen_rank[r as usize] = true;
                    current = Some(r as u32);
                    labels.clear();
                    let first = g.ops.len() as u32;
                    g.range_of[r as usize] = (first, first);
                }
                ["}"] => {
                    let Some(rank) = current.take() else {
                        return lx.err("'}' outside a rank block");
                    };
                    g.range_of[rank as usize].1 = g.ops.len() as u32;
                    name_cycle(
                        path,
                        rank,
                        g.range_of[rank as usize].0,
                        &block_deps,
                        &labels,
                    )?;
                    if g.add_block(rank, &mut block_deps).is_err() {
                        return lx.err("too many dependencies");
                    }
                }
                [a, dep @ ("requires" | "irequires"), b] => {
                    if current.is_none() {
                        return lx.err("dependency outside a rank block");
                    }
                    let get = |l: &str| match labels.get(l) {
                        Some(&i) => Ok(i),
                        None => lx.err(format!("undefined label '{l}'")),
                    };
                    let (op, pre) = (get(a)?, get(b)?);
                    g.waiting[op as usize] += 1;
                    let flag = if *dep == "irequires" { ON_START } else { 0 };
                    block_deps.push((op, pre | flag));
                }
                _ => {
                    let Some(rank) = current else {
                        return lx.err(format!("unexpected '{}'", toks.join(" ")));
                    };
                    let (label, body) = match toks[0].strip_suffix(':') {
                        Some(l) => (Some(l), &toks[1..]),
                        None => (None, toks),
                    };
                    let nr = num_ranks.expect("a rank block implies num_ranks");
                    let op = Self::parse_op(body, &lx, nr, unit_ps)?;
                    let id = g.ops.len() as u32;
                    if g.ops.len() >= MAX_OPS {
                        return lx.err(format!("more than {MAX_OPS} operations"));
                    }
                    if op.size > SIZE_MASK {
                        return lx.err(format!("size or time {} is too large", op.size));
                    }
                    g.ops.push(GoalOp::pack(&op));
                    g.waiting.push(0);
                    if let Some(l) = label {
                        if labels.insert(l.to_string(), id).is_some() {
                            return lx.err(format!("label '{l}' defined twice in rank {rank}"));
                        }
                    }
                }
            }
        }
        let Some(ranks) = num_ranks else {
            return input(format!("{path}: no num_ranks line"));
        };
        if current.is_some() {
            return input(format!("{path}: a rank block is not closed with '}}'"));
        }
        g.ranks = ranks;
        g.unfinished = g.ops.len() as u64;
        g.ops.shrink_to_fit();
        g.waiting.shrink_to_fit();
        g.dep_start.shrink_to_fit();
        g.deps.shrink_to_fit();
        Ok(g)
    }

    fn parse_op(body: &[&str], lx: &Lexer, ranks: u32, unit_ps: u64) -> Result<Op> {
        let bytes = |s: &str| match s.strip_suffix('b').map(str::parse::<u64>) {
            Some(Ok(v)) => Ok(v),
            _ => lx.err(format!("size '{s}' is not <integer>b")),
        };
        let peer = |s: &str, wildcard: bool| -> Result<u32> {
            if wildcard && s == "-1" {
                return Ok(ANY);
            }
            match s.parse::<u32>() {
                Ok(v) if v < ranks => Ok(v),
                _ => lx.err(format!("peer '{s}' is not a rank below {ranks}")),
            }
        };
        let (mut op, rest) = match body {
            ["send", size, "to", to, rest @ ..] => {
                (Op::send(peer(to, false)?, bytes(size)?, 0), rest)
            }
            ["recv", size, "from", from, rest @ ..] => {
                (Op::recv(peer(from, true)?, bytes(size)?, 0), rest)
            }
            ["calc", t, rest @ ..] => match t.parse::<u64>() {
                Ok(v) => match v.checked_mul(unit_ps) {
                    Some(ps) => (Op::calc(ps), rest),
                    None => return lx.err(format!("calc {v} is too long")),
                },
                Err(_) => return lx.err(format!("calc time '{t}' is not a non-negative integer")),
            },
            _ => return lx.err(format!("cannot parse '{}'", body.join(" "))),
        };
        let mut i = 0;
        while i < rest.len() {
            let value = rest.get(i + 1).copied();
            match (rest[i], value) {
                ("tag", Some(t)) if op.kind != OpKind::Calc => {
                    op.tag = match (t, op.kind) {
                        ("-1", OpKind::Recv) => ANY,
                        _ => match t.parse::<u32>() {
                            Ok(v) if v != ANY => v,
                            _ => return lx.err(format!("tag '{t}' is not a non-negative integer")),
                        },
                    }
                }
                ("cpu" | "nic", Some(v)) => {
                    if v != "0" {
                        return lx.err(format!(
                            "{} {v}: only one CPU and one NIC per rank are simulated",
                            rest[i]
                        ));
                    }
                }
                (word, _) => return lx.err(format!("unexpected '{word}'")),
            }
            i += 2;
        }
        Ok(op)
    }

    /// Appends the dependents lists of the operations of the block that just
    /// closed (ids from `dep_start.len() - 1` on); `Err` when the lists
    /// outgrow 32-bit offsets.
    fn add_block(
        &mut self,
        rank: u32,
        block_deps: &mut Vec<(u32, u32)>,
    ) -> std::result::Result<(), ()> {
        let (first, last) = self.range_of[rank as usize];
        debug_assert_eq!(first as usize + 1, self.dep_start.len());
        let base = self.deps.len();
        if base + block_deps.len() > u32::MAX as usize {
            return Err(());
        }
        // counting sort of the block's pairs by prerequisite, keeping their order
        let mut count = vec![0u32; (last - first) as usize + 1];
        for &(_, pre) in block_deps.iter() {
            count[((pre & !ON_START) - first) as usize + 1] += 1;
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        self.deps.resize(base + block_deps.len(), 0);
        for &(op, pre) in block_deps.iter() {
            let slot = &mut count[((pre & !ON_START) - first) as usize];
            self.deps[base + *slot as usize] = op | (pre & ON_START);
            *slot += 1;
        }
        // after the fill, count[i] is where operation first + i's list ends
        self.dep_start.extend(
            count[..(last - first) as usize]
                .iter()
                .map(|&c| base as u32 + c),
        );
        block_deps.clear();
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Counts down the dependents of `id` released by its start (`on_start`)
    /// or its completion, and hands over those left with nothing to wait for.
    fn release(&mut self, on_start: bool, rank: u32, id: u32, out: &mut Ready) {
        let (from, to) = (
            self.dep_start[id as usize] as usize,
            self.dep_start[id as usize + 1] as usize,
        );
        for &d in &self.deps[from..to] {
            if (d & ON_START != 0) != on_start {
                continue;
            }
            let d = d & !ON_START;
            let w = &mut self.waiting[d as usize];
            *w -= 1;
            if *w == 0 {
                out.push((rank, self.ops[d as usize].unpack(d)));
            }
        }
    }
}

impl Workload for GoalGraph {
    fn ranks(&self) -> u32 {
        self.ranks
    }
    fn describe(&self) -> String {
        format!(
            "GOAL schedule, {} ranks, {} operations",
            self.ranks,
            self.ops.len()
        )
    }
    fn start(&mut self, rank: u32, out: &mut Ready) {
        let (first, last) = self.range_of[rank as usize];
        for i in first..last {
            if self.waiting[i as usize] == 0 {
                out.push((rank, self.ops[i as usize].unpack(i)));
            }
        }
    }
    fn started(&mut self, rank: u32, id: u32, out: &mut Ready) {
        self.release(true, rank, id, out);
    }
    fn done(&mut self, rank: u32, id: u32, out: &mut Ready) {
        self.unfinished -= 1;
        self.release(false, rank, id, out);
    }
    fn unfinished(&self) -> u64 {
        self.unfinished
    }
}
