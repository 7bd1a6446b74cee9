//! What each rank still owes the model's cold start (`loggp.cold_start`, params.rs
//! `ColdStart`) while a replay runs: its eager sends and receives left in the cold run,
//! and the pairs of ranks whose first rendezvous message has arrived. The engine asks
//! it what a send, a receive or a charged collective's messages cost beyond warm ones.

use crate::fxhash::FxHashSet;
use crate::params::ColdStart;

/// A replay's cold-start state; without a model cold start every answer is 0.
#[derive(Debug, Default)]
pub struct ColdState {
    model: Option<ColdStart>,
    /// Per rank: cold sends and receives left (empty without a cold start).
    sends: Vec<u32>,
    receives: Vec<u32>,
    /// Per rank: whether a send has paid the rank's first (`first`).
    first_paid: Vec<bool>,
    /// Pairs (sender << 32 | receiver) whose first rendezvous message has arrived.
    rendezvous_pairs: FxHashSet<u64>,
}

/// Counts one of `left[r]` if any is left.
#[inline]
fn take(left: &mut [u32], r: usize) -> bool {
    match left.get_mut(r) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

impl ColdState {
    pub fn new(model: Option<ColdStart>, ranks: usize) -> ColdState {
        let left = model.map_or_else(Vec::new, |cs| vec![cs.messages; ranks]);
        ColdState {
            model,
            receives: left.clone(),
            first_paid: vec![false; left.len()],
            sends: left,
            rendezvous_pairs: FxHashSet::default(),
        }
    }

    /// ps rank r's send of `size` bytes costs beyond a warm one (counting it): a cold
    /// send's, and `first` more for the rank's first that pays. An eager send of at most
    /// `min_bytes` takes its cell of the run and pays nothing (the part of a cell it
    /// touches every process touched at start): MPICH's Jacobi at p = 2 ran its last cold
    /// loop at its 32nd iteration, 64 sends of an all-gather of 512 B and an all-reduce of
    /// 8 B each; a rendezvous send neither pays nor counts.
    #[inline]
    pub fn send(&mut self, r: usize, size: u64, rendezvous: bool) -> u64 {
        let Some(cs) = self.model.filter(|_| !rendezvous) else {
            return 0;
        };
        if !take(&mut self.sends, r) || !cs.pays(size) {
            return 0;
        }
        let first = match self.first_paid.get_mut(r) {
            Some(paid) if !*paid => {
                *paid = true;
                cs.first
            }
            _ => 0,
        };
        cs.send(size).saturating_add(first)
    }

    /// ps rank r's receive of `size` bytes costs beyond a warm one (counting it; an eager
    /// receive of at most `min_bytes` counts and pays nothing, as a send).
    #[inline]
    pub fn receive(&mut self, r: usize, size: u64, rendezvous: bool) -> u64 {
        match self.model.filter(|_| !rendezvous) {
            Some(cs) if take(&mut self.receives, r) && cs.pays(size) => cs.receive(size),
            _ => 0,
        }
    }

    /// ps the arrival of a rendezvous message from `from` at `to` costs its receiver:
    /// the pair's first, or the first the other way round.
    pub fn rendezvous(&mut self, from: u32, to: u32) -> u64 {
        let Some(cs) = self.model else {
            return 0;
        };
        let (from, to) = (u64::from(from), u64::from(to));
        if !self.rendezvous_pairs.insert(from << 32 | to) {
            return 0;
        }
        if self.rendezvous_pairs.contains(&(to << 32 | from)) {
            cs.rendezvous_reverse
        } else {
            cs.rendezvous_first
        }
    }

    /// ps a charged collective of `bytes` a message costs beyond warm, its costliest member's:
    /// each member's `rounds` sends and receives and, when they are rendezvous, the first
    /// message of each pair the rounds join (the members in rank order, partners 2^k apart,
    /// as recursive doubling pairs them).
    pub fn collective(
        &mut self,
        members: &mut [u32],
        bytes: u64,
        rendezvous: bool,
        rounds: u32,
    ) -> u64 {
        if rendezvous {
            members.sort_unstable();
        }
        let mut most = 0;
        for (i, &rank) in members.iter().enumerate() {
            let mut own = 0u64;
            for k in 0..rounds {
                own = own
                    .saturating_add(self.send(rank as usize, bytes, rendezvous))
                    .saturating_add(self.receive(rank as usize, bytes, rendezvous));
                if let Some(&partner) = members.get(i ^ (1usize << k)).filter(|_| rendezvous) {
                    own = own.saturating_add(self.rendezvous(partner, rank));
                }
            }
            most = most.max(own);
        }
        most
    }
}
