//! What a message costs when its sender just wrote its buffer (`loggp.written_send`,
//! commchar.models.written_send).
//!
//! The copy that moves a message (the receiver's single copy, or the library's) pulls the
//! lines of the send buffer; lines the sender's core holds modified since it wrote them
//! come from that core, not from a shared cache, and a message whose sender rewrote its
//! buffer costs more than the same message sent again unchanged (what a benchmark's loop
//! and the kernel's other probes time). The kernel's `written` probe measures a ping-pong
//! whose ranks dirty the first and last words of their send buffers (`ends`) or every
//! line (`whole`) before each send, beside one that writes nothing; the tracer records per
//! send how much of its buffer changed since its last send from it (the WRITTEN bits of
//! its size field, `placement::split_sent`), and the replay charges each receive the
//! excess of the send it matched: `ends` for a buffer whose ends alone changed, and
//! between `ends` and `whole` by the share of the words between them that changed. A
//! message received in an exchange (a Sendrecv, or a Wait* that also completed a send to
//! another rank) pays what a loop of exchanges whose ranks write their ends paid beyond
//! the same loop clean (`exchange_ends`) in place of `ends` where the model has it and it
//! is less: the two ranks' pulls overlap, and Open MPI's exchanges of 4 KiB pay nothing
//! for their ends where one message pays 0.3 us; the probe's exchanges of 32 KiB paid
//! about twice one message's excess with both libraries, which the programs' exchanges do
//! not pay (docs/models.md).

use crate::error::Result;
use crate::first_touch::{loggp_entry, model_json, steps_from_entry, ByteSteps};

/// The WRITTEN code of a send whose first or last 8 bytes alone changed.
pub const WRITTEN_ENDS: u8 = 1;
/// The WRITTEN code of a send whose every sampled word changed.
pub const WRITTEN_WHOLE: u8 = 7;

/// The excess of a message whose sender wrote its ends, and its whole buffer, by size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenSend {
    /// Per measured size, the excess per byte of a message whose ends were written: a
    /// message pays its step's whole excess (the lines are two, whatever the size).
    pub ends: ByteSteps,
    /// Per measured size, the excess per byte of a message whose every line was written.
    pub whole: ByteSteps,
    /// Per measured size, the excess per byte of an exchange whose ranks wrote their ends;
    /// empty: an exchange's message pays as one alone.
    pub exchange_ends: ByteSteps,
}

impl WrittenSend {
    /// `libraries.<lib>.loggp.written_send` of a model file (`ends` and `whole`, each in
    /// the shape of models/excess.py); nothing charged without it, or without a variant.
    pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<WrittenSend> {
        let doc = model_json(text, path)?;
        let Some(entry) = loggp_entry(&doc, library, "written_send") else {
            return Ok(WrittenSend::default());
        };
        let variant = |name: &str| match entry.get(name) {
            Some(v) if !v.is_null() => steps_from_entry(v, path, &format!("written_send.{name}")),
            _ => Ok(ByteSteps::default()),
        };
        Ok(WrittenSend {
            ends: variant("ends")?,
            whole: variant("whole")?,
            exchange_ends: variant("exchange_ends")?,
        })
    }

    /// Whether nothing is ever charged (`exchange_ends` only ever lowers `ends`).
    pub fn is_empty(&self) -> bool {
        self.ends.steps.is_empty() && self.whole.steps.is_empty()
    }

    /// Whether anything may be charged to a message of `bytes`: the model measured a size
    /// at or below it (nothing is known below its smallest).
    pub fn applies(&self, bytes: u64) -> bool {
        [&self.ends, &self.whole].iter().any(|s| s.covers(bytes))
    }

    /// ps the receiver of `bytes` pays beyond an unwritten message when the send it matched
    /// carried WRITTEN code `written` (0: nothing seen; 1: the ends; 2 to 7: the ends and
    /// (code - 2) fifths of the rest); `exchange`: the receive completed with a send of its
    /// own to another rank, whose ends cost `exchange_ends` where it covers `bytes` and is
    /// less than `ends`.
    pub fn cost(&self, bytes: u64, written: u8, exchange: bool) -> u64 {
        if written == 0 || !self.applies(bytes) {
            return 0;
        }
        let ends = step_excess(&self.ends, bytes);
        let paid = if exchange && self.exchange_ends.covers(bytes) {
            step_excess(&self.exchange_ends, bytes).min(ends)
        } else {
            ends
        };
        if written <= WRITTEN_ENDS {
            return paid;
        }
        let whole = if self.whole.covers(bytes) {
            self.whole.cost(bytes)
        } else {
            0
        };
        // the lines beyond the ends, as one message pays them
        let share = u64::from(written.min(WRITTEN_WHOLE) - WRITTEN_ENDS - 1);
        paid + whole.saturating_sub(ends) * share / u64::from(WRITTEN_WHOLE - WRITTEN_ENDS - 1)
    }
}

/// ps of the step that covers `bytes` (the largest measured size at or below it), whole:
/// its excess per byte times its own size; 0 below the smallest.
fn step_excess(steps: &ByteSteps, bytes: u64) -> u64 {
    match steps.steps.partition_point(|&(n, _)| n <= bytes) {
        0 => 0,
        i => {
            let (n, fs) = steps.steps[i - 1];
            ((u128::from(n) * u128::from(fs)) / 1000).min(u128::from(u64::MAX)) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WrittenSend {
        WrittenSend {
            // 0.3072 us at 4 KiB, 0.196608 us at 32 KiB
            ends: ByteSteps {
                fs_per_byte: 0,
                steps: vec![(4096, 75_000), (32768, 6_000)],
            },
            // 100 fs a byte from 4 KiB, 90 from 32 KiB
            whole: ByteSteps {
                fs_per_byte: 0,
                steps: vec![(4096, 100_000), (32768, 90_000)],
            },
            exchange_ends: ByteSteps::default(),
        }
    }

    impl WrittenSend {
        fn cost_one(&self, bytes: u64, written: u8) -> u64 {
            self.cost(bytes, written, false)
        }
    }

    #[test]
    fn an_unwritten_or_unseen_send_pays_nothing() {
        assert_eq!(model().cost(32768, 0, false), 0);
        assert_eq!(WrittenSend::default().cost(32768, WRITTEN_WHOLE, true), 0);
    }

    #[test]
    fn written_ends_pay_their_steps_excess_whatever_the_size() {
        let m = model();
        assert_eq!(m.cost_one(4096, WRITTEN_ENDS), 307_200);
        assert_eq!(m.cost_one(16384, WRITTEN_ENDS), 307_200); // the 4 KiB step, not per byte
        assert_eq!(m.cost_one(32768, WRITTEN_ENDS), 196_608);
        assert_eq!(m.cost_one(2048, WRITTEN_ENDS), 0); // below the probe's sizes
    }

    #[test]
    fn a_buffer_written_in_part_pays_between_its_ends_and_its_whole() {
        let m = model();
        let (ends, whole) = (
            m.cost_one(32768, WRITTEN_ENDS),
            m.cost_one(32768, WRITTEN_WHOLE),
        );
        assert_eq!(whole, 32768 * 90);
        assert_eq!(m.cost_one(32768, 2), ends);
        assert_eq!(m.cost_one(32768, 4), ends + (whole - ends) * 2 / 5);
        assert!(m.cost_one(32768, 6) < whole);
    }

    #[test]
    fn an_exchanges_message_pays_the_exchanges_ends_up_to_one_messages_and_the_rest_as_one() {
        let mut m = model();
        // without the exchange's probe, as one message
        assert_eq!(m.cost(32768, WRITTEN_ENDS, true), 196_608);
        m.exchange_ends = ByteSteps {
            fs_per_byte: 0,
            steps: vec![(32768, 1_000)], // 0.032768 us at 32 KiB
        };
        assert_eq!(m.cost(32768, WRITTEN_ENDS, true), 32_768);
        assert_eq!(m.cost(32768, WRITTEN_ENDS, false), 196_608);
        let whole = 32768 * 90;
        assert_eq!(m.cost(32768, WRITTEN_WHOLE, true), 32_768 + whole - 196_608);
        // below the exchange's smallest size it pays as one message
        assert_eq!(m.cost(4096, WRITTEN_ENDS, true), 307_200);
        // never more than one message alone
        m.exchange_ends.steps = vec![(32768, 100_000)];
        assert_eq!(m.cost(32768, WRITTEN_ENDS, true), 196_608);
    }
}
