//! Collective algorithms as phased schedules (after MPICH's implementations,
//! Thakur, Rabenseifner and Gropp 2005), rooted at rank 0. Blocking steps are
//! one phase each; `linear`/`direct` variants post all their messages in one
//! phase, as isend/irecv + waitall do.
//!
//! Every algorithm runs at any rank count. Recursive doubling and halving
//! (allreduce, Rabenseifner, reduce_scatter) fold a rank count p that is not
//! a power of two as MPICH and Open MPI do: with p' the largest power of two
//! below p and r = p - p', the first 2r ranks pair up, each even one sends its
//! vector to the odd one above it (which reduces it) and waits; the p'
//! survivors run the power-of-two schedule; each odd survivor of a pair then
//! sends its partner the result. Recursive doubling allgather at such p is
//! Bruck's (Open MPI falls back to it; MPICH's selection picks it).

use super::phased::PhaseSchedule;
use super::Op;
use crate::error::{usage, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    BcastBinomial,
    BcastLinear,
    BcastScatterAllgather,
    ScatterBinomial,
    ScatterLinear,
    GatherBinomial,
    GatherLinear,
    GatherLinearSync,
    AllgatherDirect,
    AllgatherRecursiveDoubling,
    AllgatherRing,
    AllgatherBruck,
    AllreduceRecursiveDoubling,
    AllreduceRing,
    AllreduceRabenseifner,
    AllreduceReduceBcast,
    ReduceBinomial,
    ReduceScatterRecursiveHalving,
    ReduceScatterPairwise,
    AlltoallPairwise,
    AlltoallDirect,
    BarrierDissemination,
    ScanRecursiveDoubling,
    ScanLinear,
}

use Algorithm::*;

/// (name, default-variant flag, algorithm)
const TABLE: &[(&str, bool, Algorithm)] = &[
    ("bcast:binomial", true, BcastBinomial),
    ("bcast:linear", false, BcastLinear),
    ("bcast:scatter_allgather", false, BcastScatterAllgather),
    ("scatter:binomial", true, ScatterBinomial),
    ("scatter:linear", false, ScatterLinear),
    ("gather:binomial", true, GatherBinomial),
    ("gather:linear", false, GatherLinear),
    ("gather:linear_sync", false, GatherLinearSync),
    (
        "allgather:recursive_doubling",
        true,
        AllgatherRecursiveDoubling,
    ),
    ("allgather:direct", false, AllgatherDirect),
    ("allgather:ring", false, AllgatherRing),
    ("allgather:bruck", false, AllgatherBruck),
    (
        "allreduce:recursive_doubling",
        true,
        AllreduceRecursiveDoubling,
    ),
    ("allreduce:ring", false, AllreduceRing),
    ("allreduce:rabenseifner", false, AllreduceRabenseifner),
    ("allreduce:reduce_bcast", false, AllreduceReduceBcast),
    ("reduce:binomial", true, ReduceBinomial),
    (
        "reduce_scatter:recursive_halving",
        true,
        ReduceScatterRecursiveHalving,
    ),
    ("reduce_scatter:pairwise", false, ReduceScatterPairwise),
    ("alltoall:pairwise", true, AlltoallPairwise),
    ("alltoall:direct", false, AlltoallDirect),
    ("barrier:dissemination", true, BarrierDissemination),
    ("scan:recursive_doubling", true, ScanRecursiveDoubling),
    ("scan:linear", false, ScanLinear),
];

/// Every accepted `op:algorithm` name.
pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|t| t.0).collect()
}

fn aliases(variant: &str) -> &str {
    match variant {
        "butterfly" | "rd" | "recursive-doubling" => "recursive_doubling",
        "scatter+allgather" | "scatter-allgather" | "van_de_geijn" => "scatter_allgather",
        "recursive-halving" => "recursive_halving",
        other => other,
    }
}

/// Looks up `op[:algorithm]`; an operation alone means its default algorithm.
pub fn parse(spec: &str) -> Result<Algorithm> {
    let (op, variant) = match spec.split_once(':') {
        Some((o, v)) => (o, Some(aliases(v))),
        None => (spec, None),
    };
    for &(name, default, alg) in TABLE {
        let (o, v) = name.split_once(':').expect("table names are op:variant");
        if o == op && (variant == Some(v) || (variant.is_none() && default)) {
            return Ok(alg);
        }
    }
    usage(format!(
        "unknown collective '{spec}' (known: {})",
        names().join(", ")
    ))
}

fn entry(alg: Algorithm) -> &'static (&'static str, bool, Algorithm) {
    TABLE
        .iter()
        .find(|t| t.2 == alg)
        .expect("every algorithm is in the table")
}

/// A collective on `p` ranks: `n` bytes as MPI counts it (the whole vector;
/// for allgather, gather and scatter the whole gathered buffer; for alltoall
/// the block sent to each peer), `gamma` ps per reduced byte.
pub struct Collective {
    pub alg: Algorithm,
    pub p: u32,
    pub n: u64,
    pub gamma: u64,
    pub tag: u32,
    /// CPU time every rank spends in the call before its first message (ps):
    /// the library's per-call cost (`CallCost::fixed`); 0 leaves the bare schedule.
    pub call_cost: u64,
}

impl Collective {
    pub fn new(alg: Algorithm, p: u32, n: u64, gamma: u64) -> Result<Collective> {
        if p == 0 || p > crate::workload::MAX_RANKS {
            return usage(format!(
                "the rank count must be between 1 and {}",
                crate::workload::MAX_RANKS
            ));
        }
        Ok(Collective {
            alg,
            p,
            n,
            gamma,
            tag: 0,
            call_cost: 0,
        })
    }

    /// The same collective with `ps` of CPU time per rank at the start of the call.
    pub fn with_call_cost(self, ps: u64) -> Collective {
        Collective {
            call_cost: ps,
            ..self
        }
    }

    /// The operation's name (`allreduce` of `allreduce:ring`).
    pub fn op_name(&self) -> &'static str {
        self.name()
            .split(':')
            .next()
            .expect("table names are op:variant")
    }

    pub fn name(&self) -> &'static str {
        entry(self.alg).0
    }

    /// Bytes of one of p blocks (rounded up).
    fn block(&self) -> u64 {
        self.n.div_ceil(self.p as u64)
    }

    fn reduce_cost(&self, bytes: u64) -> Option<Op> {
        let ps = bytes.saturating_mul(self.gamma);
        (ps > 0).then(|| Op::calc(ps))
    }
}

fn lg(p: u32) -> u32 {
    // ceil(log2 p)
    32 - (p.max(1) - 1).leading_zeros()
}

fn lowbit(v: u32) -> u32 {
    v & v.wrapping_neg()
}

/// Children masks of virtual rank `vr` in a binomial tree over `p`, largest first.
fn top_child_mask(vr: u32, p: u32) -> u32 {
    if vr == 0 {
        if p <= 1 {
            0
        } else {
            1 << (lg(p) - 1)
        }
    } else {
        lowbit(vr) >> 1
    }
}

fn subtree(vr: u32, mask_of_vr: u32, p: u32) -> u64 {
    // ranks vr .. vr+mask_of_vr that exist
    mask_of_vr.min(p - vr) as u64
}

fn pof2_floor(p: u32) -> u32 {
    1 << (31 - p.max(1).leading_zeros())
}

/// A rank's part in a folded schedule (p not a power of two, r = p - p' extra ranks).
#[derive(Debug, Clone, Copy)]
enum Role {
    /// An even rank below 2r: hands its vector to the rank above and waits for the result.
    Out,
    /// An odd rank below 2r: reduces its partner's vector into its own, survives as `v`.
    Pair(u32),
    /// Any other rank: survives as `v` = rank - r.
    Rest(u32),
}

impl Collective {
    /// p', the largest power of two not above p: the ranks left after folding.
    fn survivors(&self) -> u32 {
        pof2_floor(self.p)
    }

    /// r = p - p', the ranks folded into a partner.
    fn extra(&self) -> u32 {
        self.p - self.survivors()
    }

    fn role(&self, r: u32) -> Role {
        let rem = self.extra();
        if r >= 2 * rem {
            Role::Rest(r - rem)
        } else if r.is_multiple_of(2) {
            Role::Out
        } else {
            Role::Pair(r / 2)
        }
    }

    /// The rank of survivor `v`.
    fn survivor(&self, v: u32) -> u32 {
        let rem = self.extra();
        if v < rem {
            2 * v + 1
        } else {
            v + rem
        }
    }

    /// Blocks owned by survivors `first` .. `first + len`: one each, two for a
    /// survivor of a pair (v < r).
    fn blocks_of(&self, first: u32, len: u32) -> u64 {
        let paired = self.extra().saturating_sub(first).min(len);
        (len + paired) as u64
    }

    /// Phase `k` of rank `r` in a folded schedule: the n-byte vector folded in,
    /// `len` phases of `inner` among the survivors (peers given as survivors),
    /// then `back` bytes of result handed to the folded rank. With p a power of
    /// two every rank survives as itself and only `inner` runs.
    fn folded(
        &self,
        r: u32,
        k: u32,
        back: u64,
        len: u32,
        out: &mut Vec<Op>,
        inner: impl Fn(u32, u32, &mut Vec<Op>),
    ) -> Option<()> {
        let t = self.tag;
        let (v, j) = match self.role(r) {
            Role::Out => {
                match k {
                    0 => out.push(Op::send(r + 1, self.n, t)),
                    1 => out.push(Op::recv(r + 1, back, t)),
                    _ => return None,
                }
                return Some(());
            }
            Role::Pair(v) => match k {
                0 => {
                    out.push(Op::recv(r - 1, self.n, t));
                    return Some(());
                }
                1 => {
                    if let Some(op) = self.reduce_cost(self.n) {
                        out.push(op);
                    }
                    return Some(());
                }
                _ if k - 2 == len => {
                    out.push(Op::send(r - 1, back, t));
                    return Some(());
                }
                _ => (v, k - 2),
            },
            Role::Rest(v) => (v, k),
        };
        if j >= len {
            return None;
        }
        let first = out.len();
        inner(v, j, out);
        if self.extra() > 0 {
            for op in &mut out[first..] {
                if op.kind != super::OpKind::Calc {
                    op.peer = self.survivor(op.peer);
                }
            }
        }
        Some(())
    }
}

impl Collective {
    /// Bytes virtual rank `vr` stages in a temporary buffer the library allocates per call:
    /// binomial scatter and gather keep a whole subtree's blocks at every inner rank (one
    /// with children, not the root): scatter receives them there and forwards sub-blocks
    /// (MPICH's MPIR_Scatter_intra_binomial, Open MPI's scatter_intra_binomial), gather
    /// copies its own block there and receives its children's after it. 0 elsewhere.
    pub fn staged_bytes(&self, vr: u32) -> u64 {
        let p = self.p;
        if vr == 0 || vr >= p || !matches!(self.alg, ScatterBinomial | GatherBinomial) {
            return 0;
        }
        let sub = subtree(vr, lowbit(vr), p);
        if sub > 1 {
            self.block().saturating_mul(sub)
        } else {
            0
        }
    }

    /// What per-rank delays `cost` (each rank's, paid while it receives) add to a
    /// tree-shaped call's end: a parent sends to its children one after another, largest
    /// subtree first, and a child slow to receive holds up the sends after its own, so
    /// the k-th child's data arrives after the delays of its first k siblings (itself
    /// included) and the parent's own arrival; the largest such sum down to any leaf.
    pub fn tree_path_max(&self, cost: &impl Fn(u32) -> u64) -> u64 {
        self.path_from(0, cost)
    }

    fn path_from(&self, vr: u32, cost: &impl Fn(u32) -> u64) -> u64 {
        let mut mask = top_child_mask(vr, self.p);
        let (mut sent, mut worst) = (0u64, 0u64);
        while mask > 0 {
            if vr + mask < self.p {
                let child = vr + mask;
                sent = sent.saturating_add(cost(child));
                worst = worst.max(sent.saturating_add(self.path_from(child, cost)));
            }
            mask >>= 1;
        }
        worst
    }
}

impl Collective {
    /// Binomial broadcast phases: receive from the parent, then send to children, largest subtree first.
    fn binomial_down(
        &self,
        r: u32,
        k: u32,
        size_of: impl Fn(u32) -> u64,
        recv_size: u64,
        out: &mut Vec<Op>,
    ) -> Option<()> {
        let t = self.tag;
        if k == 0 {
            if r != 0 {
                out.push(Op::recv(r - lowbit(r), recv_size, t));
            }
            return Some(());
        }
        let mask = top_child_mask(r, self.p) >> (k - 1);
        if mask == 0 {
            return None;
        }
        if r + mask < self.p {
            out.push(Op::send(r + mask, size_of(r + mask), t));
        }
        Some(())
    }

    /// Binomial gather/reduce phases: receive from children, smallest first, then send to the parent.
    fn binomial_up(
        &self,
        r: u32,
        k: u32,
        reduce: bool,
        size_of: impl Fn(u32) -> u64,
        out: &mut Vec<Op>,
    ) -> Option<()> {
        let t = self.tag;
        let top = top_child_mask(r, self.p);
        let children = if top == 0 {
            0
        } else {
            top.trailing_zeros() + 1
        };
        let steps_per_child = if reduce { 2 } else { 1 };
        let child_phases = children * steps_per_child;
        if k < child_phases {
            let mask = 1 << (k / steps_per_child);
            if r + mask < self.p {
                if k.is_multiple_of(steps_per_child) {
                    out.push(Op::recv(r + mask, size_of(r + mask), t));
                } else if let Some(c) = self.reduce_cost(self.n) {
                    out.push(c);
                }
            }
            return Some(());
        }
        if k == child_phases && r != 0 {
            out.push(Op::send(r - lowbit(r), size_of(r), t));
            return Some(());
        }
        None
    }

    fn exchange(&self, out: &mut Vec<Op>, to: u32, from: u32, bytes: u64) {
        out.push(Op::send(to, bytes, self.tag));
        out.push(Op::recv(from, bytes, self.tag));
    }

    fn ring_step(&self, r: u32, out: &mut Vec<Op>, bytes: u64) {
        let p = self.p;
        self.exchange(out, (r + 1) % p, (r + p - 1) % p, bytes);
    }
}

impl PhaseSchedule for Collective {
    fn ranks(&self) -> u32 {
        self.p
    }

    fn describe(&self) -> String {
        format!("{} n={} p={}", self.name(), self.n, self.p)
    }

    fn phase(&self, r: u32, k: u32, out: &mut Vec<Op>) -> Option<()> {
        if self.call_cost > 0 {
            // phase 0 is the library's per-call cost; the algorithm follows
            if k == 0 {
                out.push(Op::calc(self.call_cost));
                return Some(());
            }
            return self.algorithm_phase(r, k - 1, out);
        }
        self.algorithm_phase(r, k, out)
    }
}

impl Collective {
    fn algorithm_phase(&self, r: u32, k: u32, out: &mut Vec<Op>) -> Option<()> {
        let (p, n, c) = (self.p, self.n, self.block());
        let t = self.tag;
        let lgp = lg(p);
        let sub = |vr: u32| subtree(vr, if vr == 0 { p } else { lowbit(vr) }, p);
        match self.alg {
            BcastBinomial => self.binomial_down(r, k, |_| n, n, out),
            BcastLinear | ScatterLinear => {
                let bytes = if self.alg == BcastLinear { n } else { c };
                (k == 0).then(|| {
                    if r == 0 {
                        out.extend((1..p).map(|d| Op::send(d, bytes, t)));
                    } else {
                        out.push(Op::recv(0, bytes, t));
                    }
                })
            }
            GatherLinear => (k == 0).then(|| {
                if r == 0 {
                    out.extend((1..p).map(|s| Op::recv(s, c, t)));
                } else {
                    out.push(Op::send(0, c, t));
                }
            }),
            GatherLinearSync => {
                // Open MPI's linear_sync gather: the root asks each rank in turn with a
                // zero-byte message and waits for its block; each rank then sends its
                // block and an (empty, unsegmented) second segment, collected at the end
                if r == 0 {
                    if k + 1 < p {
                        let from = k + 1;
                        out.push(Op::recv(from, c, t));
                        out.push(Op::send(from, 0, t));
                        Some(())
                    } else if k + 1 == p {
                        out.extend((1..p).map(|s| Op::recv(s, 0, t)));
                        Some(())
                    } else {
                        None
                    }
                } else {
                    match k {
                        0 => out.push(Op::recv(0, 0, t)),
                        1 => out.push(Op::send(0, c, t)),
                        2 => out.push(Op::send(0, 0, t)),
                        _ => return None,
                    }
                    Some(())
                }
            }
            ScatterBinomial => self.binomial_down(r, k, |child| c * sub(child), c * sub(r), out),
            BcastScatterAllgather => {
                let scatter_phases = 1 + lg(p);
                if k < scatter_phases {
                    let _ = self.binomial_down(r, k, |child| c * sub(child), c * sub(r), out);
                    Some(())
                } else if k < scatter_phases + p - 1 {
                    self.ring_step(r, out, c);
                    Some(())
                } else {
                    None
                }
            }
            GatherBinomial => self.binomial_up(r, k, false, |vr| c * sub(vr), out),
            ReduceBinomial => self.binomial_up(r, k, true, |_| n, out),
            AllgatherDirect | AlltoallDirect => {
                let bytes = if self.alg == AllgatherDirect { c } else { n };
                (k == 0).then(|| {
                    out.extend((1..p).map(|i| Op::send((r + i) % p, bytes, t)));
                    out.extend((1..p).map(|i| Op::recv((r + p - i) % p, bytes, t)));
                })
            }
            AllgatherRecursiveDoubling if p.is_power_of_two() => (k < lgp).then(|| {
                let partner = r ^ (1 << k);
                self.exchange(out, partner, partner, c << k);
            }),
            AllgatherRing => (k + 1 < p).then(|| self.ring_step(r, out, c)),
            AllgatherBruck | AllgatherRecursiveDoubling => (k < lgp).then(|| {
                let d = 1u32 << k;
                let blocks = d.min(p - d) as u64;
                self.exchange(out, (r + p - d % p) % p, (r + d) % p, c * blocks);
            }),
            AllreduceRecursiveDoubling => {
                let lgq = self.survivors().trailing_zeros();
                self.folded(r, k, n, 2 * lgq, out, |v, j, out| {
                    if j.is_multiple_of(2) {
                        let partner = v ^ (1 << (j / 2));
                        self.exchange(out, partner, partner, n);
                    } else if let Some(op) = self.reduce_cost(n) {
                        out.push(op);
                    }
                })
            }
            AllreduceRing => {
                let steps = p - 1;
                if k < 2 * steps {
                    // reduce-scatter step then its reduction
                    if k.is_multiple_of(2) {
                        self.ring_step(r, out, c);
                    } else if let Some(op) = self.reduce_cost(c) {
                        out.push(op);
                    }
                    Some(())
                } else if k < 3 * steps {
                    self.ring_step(r, out, c);
                    Some(())
                } else {
                    None
                }
            }
            AllreduceRabenseifner => {
                let lgq = self.survivors().trailing_zeros();
                self.folded(r, k, n, 3 * lgq, out, |v, j, out| {
                    if j < 2 * lgq {
                        // reduce-scatter by recursive halving: step i exchanges n/2^(i+1) with v ^ 2^i
                        let i = j / 2;
                        let bytes = n >> (i + 1);
                        if j.is_multiple_of(2) {
                            let partner = v ^ (1 << i);
                            self.exchange(out, partner, partner, bytes);
                        } else if let Some(op) = self.reduce_cost(bytes) {
                            out.push(op);
                        }
                    } else {
                        // allgather by recursive doubling, masks descending, sizes growing
                        let i = lgq - 1 - (j - 2 * lgq);
                        let partner = v ^ (1 << i);
                        self.exchange(out, partner, partner, n >> (i + 1));
                    }
                })
            }
            ReduceScatterRecursiveHalving => {
                let lgq = self.survivors().trailing_zeros();
                self.folded(r, k, c, 2 * lgq, out, |v, j, out| {
                    let i = j / 2;
                    // on 2^k ranks step i exchanges n/2^(i+1) with v ^ 2^i; folded, the
                    // survivors halve as the libraries do, masks descending, each keeping
                    // the half of the vector that holds its own blocks (two for a pair's)
                    let (partner, sent, kept) = if self.extra() == 0 {
                        (v ^ (1 << i), n >> (i + 1), n >> (i + 1))
                    } else {
                        let mask = self.survivors() >> (i + 1);
                        let half = |u: u32| c * self.blocks_of(u & !(mask - 1), mask);
                        (v ^ mask, half(v ^ mask), half(v))
                    };
                    if j.is_multiple_of(2) {
                        out.push(Op::send(partner, sent, t));
                        out.push(Op::recv(partner, kept, t));
                    } else if let Some(op) = self.reduce_cost(kept) {
                        out.push(op);
                    }
                })
            }
            ReduceScatterPairwise => (k < 2 * (p - 1)).then(|| {
                // MPICH's pairwise exchange: step i sends rank r + i its block and
                // receives, then reduces, rank r - i's contribution to r's block
                if k.is_multiple_of(2) {
                    let i = k / 2 + 1;
                    self.exchange(out, (r + i) % p, (r + p - i) % p, c);
                } else if let Some(op) = self.reduce_cost(c) {
                    out.push(op);
                }
            }),
            AllreduceReduceBcast => {
                // a binomial reduce to rank 0, then a binomial bcast of the result (Open MPI's
                // nonoverlapping; the shape of MPICH's shared-memory gather/release). Every
                // rank spends 2 lg p + 1 phases in the reduce, idle ones empty.
                let reduce_phases = 2 * lgp + 1;
                if k < reduce_phases {
                    let _ = self.binomial_up(r, k, true, |_| n, out);
                    Some(())
                } else {
                    self.binomial_down(r, k - reduce_phases, |_| n, n, out)
                }
            }
            AlltoallPairwise => (k + 1 < p).then(|| {
                let i = k + 1;
                self.exchange(out, (r + i) % p, (r + p - i) % p, n);
            }),
            BarrierDissemination => (k < lgp).then(|| {
                let d = (1u32 << k) % p;
                self.exchange(out, (r + d) % p, (r + p - d) % p, 1);
            }),
            ScanLinear => {
                // Open MPI's coll/basic scan: a chain; rank r receives the prefix of
                // ranks below it, adds its own and forwards the result
                let (receives, forwards) = (r > 0, r + 1 < p);
                match k {
                    0 if receives => out.push(Op::recv(r - 1, n, t)),
                    1 if receives => {
                        if let Some(op) = self.reduce_cost(n) {
                            out.push(op);
                        }
                    }
                    2 if forwards => out.push(Op::send(r + 1, n, t)),
                    0..=2 => {}
                    _ => return None,
                }
                Some(())
            }
            ScanRecursiveDoubling => (k < 2 * lgp).then(|| {
                let partner = r ^ (1 << (k / 2));
                if partner < p {
                    if k.is_multiple_of(2) {
                        self.exchange(out, partner, partner, n);
                    } else if let Some(op) = self.reduce_cost(n) {
                        out.push(op);
                    }
                }
            }),
        }
    }
}
