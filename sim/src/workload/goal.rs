//! LogGOPSim's GOAL text schedules: parsing into a dependency graph, and the
//! graph as a workload (`requires`: start after the other completes;
//! `irequires`: start after the other has started).

use super::{Op, OpKind, Ready, Workload};
use crate::error::{input, Result};
use crate::matching::ANY;
use std::collections::HashMap;
use std::io::BufRead;

pub struct GoalGraph {
    ranks: u32,
    rank_of: Vec<u32>,
    ops: Vec<Op>,
    /// Dependents released when an op completes / starts (CSR).
    done_start: Vec<u32>,
    done_list: Vec<u32>,
    started_start: Vec<u32>,
    started_list: Vec<u32>,
    waiting: Vec<u32>,
    roots_by_rank: Vec<Vec<u32>>,
    unfinished: u64,
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
        let mut labels: HashMap<String, u32> = HashMap::new();
        let mut names: HashMap<u32, String> = HashMap::new(); // labels by operation, to name a cycle
        let mut seen_rank: Vec<bool> = Vec::new();
        let mut rank_of = Vec::new();
        let mut ops: Vec<Op> = Vec::new();
        let mut deps: Vec<(u32, u32, bool)> = Vec::new(); // (op, prerequisite, on start)
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
                    let most = crate::engine::MAX_RANKS as u64;
                    if n == 0 || n > most {
                        return lx.err(format!("num_ranks must be between 1 and {most}"));
                    }
                    num_ranks = Some(n as u32);
                    seen_rank = vec![false; n as usize];
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
                }
                ["}"] => {
                    if current.take().is_none() {
                        return lx.err("'}' outside a rank block");
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
                    deps.push((get(a)?, get(b)?, *dep == "irequires"));
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
                    let id = ops.len() as u32;
                    if ops.len() >= u32::MAX as usize - 1 {
                        return lx.err("too many operations");
                    }
                    ops.push(Op { id, ..op });
                    rank_of.push(rank);
                    if let Some(l) = label {
                        if labels.insert(l.to_string(), id).is_some() {
                            return lx.err(format!("label '{l}' defined twice in rank {rank}"));
                        }
                        names.insert(id, l.to_string());
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
        if let Some(cycle) = super::cycle::find(ops.len(), &deps) {
            let name = |&id: &u32| match names.get(&id) {
                Some(label) => format!("{label} (rank {})", rank_of[id as usize]),
                None => format!("unlabelled operation {id} (rank {})", rank_of[id as usize]),
            };
            let named: Vec<String> = cycle.iter().chain(&cycle[..1]).map(name).collect();
            return input(format!(
                "{path}: dependency cycle, no operation of it can ever start: {}",
                named.join(" requires ")
            ));
        }
        Ok(Self::build(ranks, rank_of, ops, &deps))
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

    fn build(ranks: u32, rank_of: Vec<u32>, ops: Vec<Op>, deps: &[(u32, u32, bool)]) -> GoalGraph {
        let n = ops.len();
        let mut waiting = vec![0u32; n];
        let mut done_cnt = vec![0u32; n + 1];
        let mut start_cnt = vec![0u32; n + 1];
        for &(op, pre, on_start) in deps {
            waiting[op as usize] += 1;
            if on_start {
                start_cnt[pre as usize + 1] += 1;
            } else {
                done_cnt[pre as usize + 1] += 1;
            }
        }
        for i in 0..n {
            done_cnt[i + 1] += done_cnt[i];
            start_cnt[i + 1] += start_cnt[i];
        }
        let mut done_list = vec![0u32; deps.iter().filter(|d| !d.2).count()];
        let mut started_list = vec![0u32; deps.len() - done_list.len()];
        let (mut dfill, mut sfill) = (done_cnt.clone(), start_cnt.clone());
        for &(op, pre, on_start) in deps {
            let (fill, list) = if on_start {
                (&mut sfill, &mut started_list)
            } else {
                (&mut dfill, &mut done_list)
            };
            list[fill[pre as usize] as usize] = op;
            fill[pre as usize] += 1;
        }
        let mut roots_by_rank = vec![Vec::new(); ranks as usize];
        for (i, &w) in waiting.iter().enumerate() {
            if w == 0 {
                roots_by_rank[rank_of[i] as usize].push(i as u32);
            }
        }
        GoalGraph {
            ranks,
            rank_of,
            unfinished: n as u64,
            ops,
            done_start: done_cnt,
            done_list,
            started_start: start_cnt,
            started_list,
            waiting,
            roots_by_rank,
        }
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn release(&mut self, list_of: bool, id: u32, out: &mut Ready) {
        let (start, list) = if list_of {
            (&self.started_start, &self.started_list)
        } else {
            (&self.done_start, &self.done_list)
        };
        for &d in &list[start[id as usize] as usize..start[id as usize + 1] as usize] {
            let w = &mut self.waiting[d as usize];
            *w -= 1;
            if *w == 0 {
                out.push((self.rank_of[d as usize], self.ops[d as usize]));
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
        for &i in &self.roots_by_rank[rank as usize] {
            out.push((rank, self.ops[i as usize]));
        }
    }
    fn started(&mut self, _rank: u32, id: u32, out: &mut Ready) {
        self.release(true, id, out);
    }
    fn done(&mut self, _rank: u32, id: u32, out: &mut Ready) {
        self.unfinished -= 1;
        self.release(false, id, out);
    }
    fn unfinished(&self) -> u64 {
        self.unfinished
    }
}
