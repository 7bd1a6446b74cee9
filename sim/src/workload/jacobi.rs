//! Jacobi's method as in the aggregation/broadcast experiment: N unknowns on
//! p processes (N/p rows each); per iteration each process updates its rows
//! (N multiplications and N-1 additions per row) and then every process gets
//! every new value, by the direct method (all-to-all sends) or the butterfly
//! (recursive doubling). p = 1 is the sequential program.

use super::phased::PhaseSchedule;
use super::Op;
use crate::error::{usage, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exchange {
    Direct,
    Butterfly,
}

impl Exchange {
    pub fn parse(text: &str) -> Result<Exchange> {
        match text {
            "direct" => Ok(Exchange::Direct),
            "butterfly" | "recursive_doubling" => Ok(Exchange::Butterfly),
            other => usage(format!(
                "unknown exchange '{other}' (use direct or butterfly)"
            )),
        }
    }
}

pub struct Jacobi {
    pub unknowns: u64,
    pub p: u32,
    pub iterations: u32,
    /// Time of one multiply-add operation (ps).
    pub op_cost: u64,
    pub exchange: Exchange,
    /// Bytes per unknown in a message.
    pub value_bytes: u64,
}

impl Jacobi {
    pub fn new(
        unknowns: u64,
        p: u32,
        iterations: u32,
        op_cost: u64,
        exchange: Exchange,
    ) -> Result<Jacobi> {
        if p > crate::workload::MAX_RANKS {
            return usage(format!(
                "at most {} ranks can be simulated",
                crate::workload::MAX_RANKS
            ));
        }
        if p == 0 || unknowns == 0 || !unknowns.is_multiple_of(p as u64) {
            return usage(format!(
                "jacobi needs N ({unknowns}) to be a positive multiple of p ({p})"
            ));
        }
        if exchange == Exchange::Butterfly && !p.is_power_of_two() {
            return usage(format!(
                "the butterfly exchange needs a power-of-two p, not {p}"
            ));
        }
        Ok(Jacobi {
            unknowns,
            p,
            iterations,
            op_cost,
            exchange,
            value_bytes: 8,
        })
    }

    fn rows(&self) -> u64 {
        self.unknowns / self.p as u64
    }

    fn exchange_phases(&self) -> u32 {
        match self.exchange {
            _ if self.p == 1 => 0,
            Exchange::Direct => 1,
            Exchange::Butterfly => self.p.trailing_zeros(),
        }
    }
}

impl PhaseSchedule for Jacobi {
    fn ranks(&self) -> u32 {
        self.p
    }

    fn describe(&self) -> String {
        let ex = match self.exchange {
            Exchange::Direct => "direct",
            Exchange::Butterfly => "butterfly",
        };
        format!(
            "jacobi N={} p={} iterations={} exchange={ex}",
            self.unknowns, self.p, self.iterations
        )
    }

    fn phase(&self, r: u32, k: u32, out: &mut Vec<Op>) -> Option<()> {
        let per_iter = 1 + self.exchange_phases();
        let (iter, step) = (k / per_iter, k % per_iter);
        if iter >= self.iterations {
            return None;
        }
        let block = self.rows() * self.value_bytes;
        if step == 0 {
            let ops = self.rows() * (2 * self.unknowns - 1);
            out.push(Op::calc(ops * self.op_cost));
            return Some(());
        }
        let p = self.p;
        match self.exchange {
            Exchange::Direct => {
                out.extend((1..p).map(|i| Op::send((r + i) % p, block, 0)));
                out.extend((1..p).map(|i| Op::recv((r + p - i) % p, block, 0)));
            }
            Exchange::Butterfly => {
                let i = step - 1;
                let partner = r ^ (1 << i);
                out.push(Op::send(partner, block << i, 0));
                out.push(Op::recv(partner, block << i, 0));
            }
        }
        Some(())
    }
}
