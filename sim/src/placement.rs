//! Where a message's buffers lie in their pages, and what a copy between them costs
//! (`loggp.misaligned_copy`, commchar.models.misaligned_copy).
//!
//! A processor's copy may slow down by the place of its destination relative to its
//! source within a page: on an AMD EPYC a destination 1 to 31 bytes ahead of its source
//! (modulo 4096) costs 3 to 7 times as much from 32 KiB, as the copy's loads alias its
//! own recent stores. The tracer records where each point-to-point buffer lay in its page
//! (the high bits of a record's size fields); the replay pairs each receive with the send
//! it matches, in MPI's order per (sender, receiver, communicator, tag), and charges the
//! receiver the model's excess at the message's size when the pair's distance is in the
//! model's slow class.

use crate::error::{input, Result};
use crate::first_touch::{loggp_entry, model_json, steps_from_entry, ByteSteps};
use crate::written_send::WrittenSend;
use serde_json::Value;
use std::collections::HashMap;

/// A page's span: places are addresses modulo this.
pub const PAGE_SPAN: u16 = 4096;
/// A size field's low bits hold the size, the bits above it the buffer's place.
pub const SIZE_BITS: u32 = 48;
pub const SIZE_MASK: u64 = (1 << SIZE_BITS) - 1;
/// Set in a recorded place.
const PAGE_KNOWN: u16 = 0x8000;

/// A size field split: (bytes, the buffer's place in its page if recorded). High bits
/// that are no place (PAGE_KNOWN | offset) are a corrupt size, left whole for the
/// reader's bounds to refuse.
pub fn split(field: u64) -> (u64, Option<u16>) {
    let high = (field >> SIZE_BITS) as u16;
    if high & PAGE_KNOWN == 0 || high & !(PAGE_KNOWN | (PAGE_SPAN - 1)) != 0 {
        return (field, None);
    }
    (field & SIZE_MASK, Some(high % PAGE_SPAN))
}

/// A send's size field also holds, in these bits above its place's 12, how much of its
/// buffer was written since its last send (`written_send::WrittenSend`).
pub const WRITTEN_SHIFT: u16 = 12;
pub const WRITTEN_MASK: u16 = 7;

/// A send's size field split: (bytes, its buffer's place if recorded, its WRITTEN code).
/// High bits that are no place with its WRITTEN bits are a corrupt size, left whole.
pub fn split_sent(field: u64) -> (u64, Option<u16>, u8) {
    let high = (field >> SIZE_BITS) as u16;
    let written = WRITTEN_MASK << WRITTEN_SHIFT;
    if high & PAGE_KNOWN == 0 || high & !(PAGE_KNOWN | written | (PAGE_SPAN - 1)) != 0 {
        return (field, None, 0);
    }
    (
        field & SIZE_MASK,
        Some(high % PAGE_SPAN),
        ((high & written) >> WRITTEN_SHIFT) as u8,
    )
}

/// What a message pays when its destination lies in the slow class relative to its source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MisalignedCopy {
    /// The excess per byte by size (the skew probe's sizes); empty: nothing is charged.
    pub steps: ByteSteps,
    /// The same of a message to oneself, which the library copies within one process
    /// (`misaligned_copy.self`); None: as `steps`.
    pub own: Option<ByteSteps>,
    /// The distances (destination ahead of source, modulo a page) that copy slowly...
    pub slow_ahead: (u16, u16),
    /// ...those of them that are no whole number of this many bytes (`line_bytes`: a
    /// processor that copies by the place in the cache line); None: all of them.
    pub line_bytes: Option<u16>,
}

impl MisalignedCopy {
    /// `libraries.<lib>.loggp.misaligned_copy` of a model file: its steps and its slow
    /// class (`slow_ahead`, else the probe's one distance, `skew_bytes`); none without it.
    pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<MisalignedCopy> {
        let doc = model_json(text, path)?;
        let Some(entry) = loggp_entry(&doc, library, "misaligned_copy") else {
            return Ok(MisalignedCopy::default());
        };
        let steps = steps_from_entry(entry, path, "misaligned_copy")?;
        let what = format!("{path}: loggp misaligned_copy");
        let distance = |v: Option<&Value>| match v.and_then(Value::as_u64) {
            Some(d) if (1..u64::from(PAGE_SPAN)).contains(&d) => Ok(d as u16),
            _ => input(format!(
                "{what}: slow_ahead and skew_bytes are distances of 1 to 4095 bytes"
            )),
        };
        let slow_ahead = match entry.get("slow_ahead") {
            Some(Value::Array(pair)) if pair.len() == 2 => {
                let (lo, hi) = (distance(pair.first())?, distance(pair.get(1))?);
                if lo > hi {
                    return input(format!("{what}: slow_ahead [{lo}, {hi}] is empty"));
                }
                (lo, hi)
            }
            Some(_) => return input(format!("{what}: slow_ahead is not [first, last]")),
            None => {
                let d = distance(entry.get("skew_bytes"))?;
                (d, d)
            }
        };
        let own = match entry.get("self") {
            Some(v) if !v.is_null() => Some(steps_from_entry(v, path, "misaligned_copy.self")?),
            _ => None,
        };
        let line_bytes = match entry.get("line_bytes") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(l) if (1..=u64::from(PAGE_SPAN)).contains(&l) => Some(l as u16),
                _ => {
                    return input(format!(
                        "{what}: line_bytes is not a size of 1 to 4096 bytes"
                    ))
                }
            },
        };
        Ok(MisalignedCopy {
            steps,
            own,
            slow_ahead,
            line_bytes,
        })
    }

    /// Whether a destination `ahead` bytes ahead of its source (modulo a page) copies slowly.
    #[inline]
    pub fn is_slow(&self, ahead: u16) -> bool {
        let (lo, hi) = self.slow_ahead;
        (lo..=hi).contains(&ahead) && self.line_bytes.is_none_or(|l| !ahead.is_multiple_of(l))
    }

    /// Whether anything may be charged to a message of `bytes`: the model measured a size
    /// at or below it (nothing is known below its smallest).
    pub fn applies(&self, bytes: u64) -> bool {
        self.steps.covers(bytes)
    }

    /// ps a receiver pays beyond an aligned copy for `bytes` sent from `source`'s place
    /// into `destination`'s; `own`: a message it sent itself.
    pub fn cost(&self, bytes: u64, source: u16, destination: u16, own: bool) -> u64 {
        let ahead = (destination + PAGE_SPAN - source % PAGE_SPAN) % PAGE_SPAN;
        if !self.is_slow(ahead) {
            return 0;
        }
        match &self.own {
            Some(steps) if own => {
                if steps.covers(bytes) {
                    steps.cost(bytes)
                } else {
                    0
                }
            }
            _ => self.slow(bytes),
        }
    }

    /// ps a copy of `bytes` whose destination lies `slow_ahead` of its source pays beyond
    /// an aligned one.
    pub fn slow(&self, bytes: u64) -> u64 {
        if self.applies(bytes) {
            self.steps.cost(bytes)
        } else {
            0
        }
    }
}

/// A message channel: (sender, receiver, the engine's tag of its communicator and tag).
pub type Channel = (u32, u32, u32);

/// A receive that may pay: its channel and place in it, its buffer's place, its size,
/// the operation that charges it, and whether it was an exchange's.
#[derive(Debug, Clone, Copy)]
pub struct Charge {
    pub channel: Channel,
    pub index: u32,
    pub place: u16,
    pub bytes: u64,
    pub op: u32,
    /// Completed with a send of the receiver's own to another rank (`WrittenSend::cost`).
    pub exchange: bool,
}

/// The sends and receives of a trace in matching order, to pair them once all are read.
#[derive(Debug, Default)]
pub struct Book {
    /// Per channel: each send's buffer place (NO_PLACE where not recorded) and WRITTEN
    /// code, in order.
    sends: HashMap<Channel, Vec<(u16, u8)>>,
    /// Per channel: how many receives were posted on it so far.
    receives: HashMap<Channel, u32>,
    charges: Vec<Charge>,
}

const NO_PLACE: u16 = u16::MAX;

impl Book {
    /// A send on `channel`, from a buffer at `place` of which the program wrote what
    /// `written` says since its last send.
    pub fn send(&mut self, channel: Channel, place: Option<u16>, written: u8) {
        self.sends
            .entry(channel)
            .or_default()
            .push((place.unwrap_or(NO_PLACE), written));
    }

    /// A receive posted on `channel`: its index among the channel's receives.
    pub fn receive(&mut self, channel: Channel) -> u32 {
        let next = self.receives.entry(channel).or_insert(0);
        *next += 1;
        *next - 1
    }

    /// A receive to price once the send it matched is known.
    pub fn charge(&mut self, charge: Charge) {
        self.charges.push(charge);
    }

    /// Each charged receive's excess, by the send it matched: (op, ps of a misaligned
    /// copy, ps of a written send buffer) for those that pay.
    pub fn settle(
        &self,
        misaligned: &MisalignedCopy,
        written: &WrittenSend,
    ) -> Vec<(u32, u64, u64)> {
        self.charges
            .iter()
            .filter_map(|c| {
                let (source, code) = *self.sends.get(&c.channel)?.get(c.index as usize)?;
                let slow = if source == NO_PLACE {
                    0
                } else {
                    misaligned.cost(c.bytes, source, c.place, c.channel.0 == c.channel.1)
                };
                // a message to oneself is copied by the core that wrote it
                let dirty = if c.channel.0 == c.channel.1 {
                    0
                } else {
                    written.cost(c.bytes, code, c.exchange)
                };
                (slow > 0 || dirty > 0).then_some((c.op, slow, dirty))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> MisalignedCopy {
        MisalignedCopy {
            steps: ByteSteps {
                fs_per_byte: 0,
                // 1 ps per byte from 4 KiB
                steps: vec![(4096, 1000)],
            },
            own: None,
            slow_ahead: (1, 31),
            line_bytes: None,
        }
    }

    #[test]
    fn a_size_field_holds_the_size_and_the_place() {
        let field = 32768u64 | (u64::from(PAGE_KNOWN | 48) << SIZE_BITS);
        assert_eq!(split(field), (32768, Some(48)));
        assert_eq!(split(32768), (32768, None));
        // not a place: the corrupt size stays whole
        assert_eq!(split(1 << 56), (1 << 56, None));
    }

    #[test]
    fn only_the_slow_distances_pay_from_the_smallest_measured_size() {
        let m = model();
        assert_eq!(m.cost(32768, 16, 32, false), 32768); // 16 ahead
        assert_eq!(m.cost(32768, 16, 47, false), 32768); // 31 ahead
        assert_eq!(m.cost(32768, 16, 48, false), 0); // 32 ahead
        assert_eq!(m.cost(32768, 32, 16, false), 0); // behind
        assert_eq!(m.cost(32768, 16, 16, false), 0); // aligned
        assert_eq!(m.cost(32768, 4090, 4, false), 32768); // 10 ahead across the page's end
        assert_eq!(m.cost(2048, 16, 32, false), 0); // below the probe's sizes
                                                    // a message to oneself pays as one between two ranks, unless its own was measured
        assert_eq!(m.cost(32768, 16, 32, true), 32768);
        let mut own = m.clone();
        own.own = Some(ByteSteps {
            fs_per_byte: 0,
            steps: vec![(32768, 0)],
        });
        assert_eq!(own.cost(32768, 16, 32, true), 0);
        assert_eq!(own.cost(32768, 16, 32, false), 32768);
        assert_eq!(own.cost(4096, 16, 32, true), 0); // below its own probe's sizes
    }

    #[test]
    fn a_class_by_the_line_charges_every_place_in_it_but_whole_lines() {
        let m = MisalignedCopy {
            slow_ahead: (1, 255),
            line_bytes: Some(64),
            ..model()
        };
        assert_eq!(m.cost(32768, 16, 32, false), 32768); // 16 ahead
        assert_eq!(m.cost(32768, 16, 96, false), 32768); // 80 ahead: the next line, same place
        assert_eq!(m.cost(32768, 560, 608, false), 32768); // 48 ahead
        assert_eq!(m.cost(32768, 16, 80, false), 0); // a whole line ahead
        assert_eq!(m.cost(32768, 16, 16 + 256 + 16, false), 0); // beyond the class
        assert_eq!(m.cost(32768, 592, 576, false), 0); // behind
        assert!(m.is_slow(255) && !m.is_slow(192) && !m.is_slow(0));
        // the page's class is the AMD EPYC's, where 80 ahead is fast
        assert_eq!(model().cost(32768, 16, 96, false), 0);
    }

    /// A receive of 32 KiB on `channel` into a buffer at `place`, charged to `op`.
    fn received(b: &mut Book, channel: Channel, place: u16, op: u32) {
        let index = b.receive(channel);
        b.charge(Charge {
            channel,
            index,
            place,
            bytes: 32768,
            op,
            exchange: false,
        });
    }

    #[test]
    fn receives_meet_the_sends_they_match_in_order() {
        let mut b = Book::default();
        let ch = (0, 1, 7);
        b.send(ch, Some(16), 0);
        b.send(ch, Some(32), 0);
        b.send(ch, None, 0);
        for op in 0..3 {
            received(&mut b, ch, 32, op);
        }
        let other = (1, 0, 7);
        received(&mut b, other, 32, 9); // no send on this channel
        assert_eq!(
            b.settle(&model(), &WrittenSend::default()),
            vec![(0, 32768, 0)]
        );
    }

    #[test]
    fn a_send_field_holds_its_written_code_beside_its_place() {
        let field = 32768u64 | (u64::from(PAGE_KNOWN | (7 << WRITTEN_SHIFT) | 48) << SIZE_BITS);
        assert_eq!(split_sent(field), (32768, Some(48), 7));
        // a receive's field takes no written bits: the whole field is a corrupt size
        assert_eq!(split(field), (field, None));
        assert_eq!(split_sent(32768), (32768, None, 0));
    }

    #[test]
    fn a_receive_pays_for_the_written_buffer_of_the_send_it_matched() {
        let written = WrittenSend {
            ends: ByteSteps {
                fs_per_byte: 0,
                steps: vec![(4096, 1000)],
            },
            whole: ByteSteps {
                fs_per_byte: 0,
                steps: vec![(4096, 2000)],
            },
            exchange_ends: ByteSteps::default(),
        };
        let mut b = Book::default();
        let ch = (0, 1, 7);
        b.send(ch, Some(16), 0);
        b.send(ch, None, 1);
        b.send(ch, Some(16), 7);
        for op in 0..3 {
            received(&mut b, ch, 32, op);
        }
        // the third is also 16 bytes ahead: misaligned
        let mine = (1, 1, 7); // a message to oneself: its writer's core copies it
        b.send(mine, None, 7);
        received(&mut b, mine, 16, 3);
        assert_eq!(
            b.settle(&model(), &written),
            vec![(0, 32768, 0), (1, 0, 4096), (2, 32768, 65536)]
        );
    }
}
