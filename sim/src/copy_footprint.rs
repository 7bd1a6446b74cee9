//! What a received byte costs once a rank's message buffers outgrow its caches
//! (`loggp.copy_footprint`, commchar.models.copy_footprint): per probe size n, c_n(F), the
//! cost per byte of a copy of n bytes beyond the one-pair exchange's when a rank's
//! buffers span F bytes, measured by the kernel's exchange cycling through many pairs of
//! buffers (0 at 2n, the one pair's own). The tracer records each rank's footprint (the
//! trace header's buffer_bytes: the bytes of the distinct message buffers it used); the
//! replay charges every message of s bytes the rank receives c_s(F) s: c linear in log2 F
//! between a size's steps (nothing below its first, the last one's above them), and
//! linear in log2 s between the two sizes measured around s (the nearest one's beyond
//! them). Nothing where the trace does not say. A message a rank sends itself is charged
//! the curves of the probe's self variants (`self_by_size`) where the model has them,
//! the others' where it does not.

use crate::error::{input, Result};
use crate::first_touch::{loggp_entry, model_json};
use crate::params::size_steps;
use serde_json::Value;

/// Per probe size (n, [(footprint bytes, ps per byte)]), sizes and footprints increasing.
type Curves = Vec<(u64, Vec<(u64, f64)>)>;

/// The curves of messages between ranks and of messages to oneself; empty: free (self
/// messages without their own: the others').
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CopyFootprint {
    by_size: Curves,
    self_by_size: Curves,
}

/// A size's curve at `footprint`: 0 below its first step, the last's above them, linear
/// in log2 between.
fn at(steps: &[(u64, f64)], footprint: u64) -> f64 {
    let (Some(&(f0, e0)), Some(&(last, e_last))) = (steps.first(), steps.last()) else {
        return 0.0;
    };
    if footprint < f0 {
        return 0.0;
    }
    if footprint >= last {
        return e_last;
    }
    if footprint == f0 {
        return e0;
    }
    let i = steps.partition_point(|&(f, _)| f <= footprint);
    let ((a, ea), (b, eb)) = (steps[i - 1], steps[i]);
    let x =
        ((footprint as f64).log2() - (a as f64).log2()) / ((b as f64).log2() - (a as f64).log2());
    ea + (eb - ea) * x
}

/// ps per byte of a message of `bytes` at `footprint`: the sizes' curves linear in log2
/// between the two around `bytes`, the nearest one's beyond them.
fn per_byte(by_size: &Curves, footprint: u64, bytes: u64) -> f64 {
    let i = by_size.partition_point(|&(n, _)| n <= bytes);
    if i == 0 {
        return at(&by_size[0].1, footprint);
    }
    if i == by_size.len() {
        return at(&by_size[i - 1].1, footprint);
    }
    let ((a, sa), (b, sb)) = (&by_size[i - 1], &by_size[i]);
    let x =
        ((bytes as f64).log2() - (*a as f64).log2()) / ((*b as f64).log2() - (*a as f64).log2());
    at(sa, footprint) + (at(sb, footprint) - at(sa, footprint)) * x
}

impl CopyFootprint {
    /// From per-size steps: (n, [(footprint bytes, ps per byte)]), increasing, between
    /// ranks and (empty: the same) to oneself.
    pub fn from_sizes(by_size: Curves, self_by_size: Curves) -> CopyFootprint {
        CopyFootprint {
            by_size,
            self_by_size,
        }
    }

    /// Whether nothing is ever charged.
    pub fn is_empty(&self) -> bool {
        self.by_size.is_empty()
    }

    /// ps a message of `bytes` costs beyond the model at a rank whose buffers span
    /// `footprint` bytes (0: unknown, nothing), sent by the rank to itself or not.
    pub fn cost(&self, footprint: u64, bytes: u64, to_self: bool) -> u64 {
        let curves = if to_self && !self.self_by_size.is_empty() {
            &self.self_by_size
        } else {
            &self.by_size
        };
        if footprint == 0 || bytes == 0 || curves.is_empty() {
            return 0;
        }
        (per_byte(curves, footprint, bytes).max(0.0) * bytes as f64)
            .min(1.8e19)
            .round() as u64
    }
}

/// One list of curves ([{n, steps: [[footprint bytes, us per byte]]}], increasing).
fn curves(sizes: Option<&Value>, what: &str) -> Result<Curves> {
    let Some(sizes) = sizes.and_then(Value::as_array) else {
        return input(format!("{what} is not a list"));
    };
    let mut by_size: Curves = Vec::with_capacity(sizes.len());
    for size in sizes {
        let Some(n) = size.get("n").and_then(Value::as_u64) else {
            return input(format!("{what} holds {size}, not {{n, steps}}"));
        };
        if by_size.last().is_some_and(|&(last, _)| last >= n) {
            return input(format!("{what}: sizes do not increase"));
        }
        let mut steps = Vec::new();
        for (footprint, us) in size_steps(size.get("steps"), what, "us per byte")? {
            if !(us.is_finite() && (0.0..1e3).contains(&us)) {
                return input(format!("{what}: {us} us per byte is not a cost"));
            }
            steps.push((footprint, us * 1e6));
        }
        by_size.push((n, steps));
    }
    Ok(by_size)
}

/// `libraries.<lib>.loggp.copy_footprint.by_size` and `self_by_size` (optional) of a model
/// file; free when the model has none.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<CopyFootprint> {
    let doc = model_json(text, path)?;
    let Some(entry) = loggp_entry(&doc, library, "copy_footprint") else {
        return Ok(CopyFootprint::default());
    };
    let by_size = curves(
        entry.get("by_size"),
        &format!("{path}: loggp copy_footprint.by_size"),
    )?;
    let self_by_size = match entry.get("self_by_size") {
        None | Some(Value::Null) => Vec::new(),
        found => curves(found, &format!("{path}: loggp copy_footprint.self_by_size"))?,
    };
    Ok(CopyFootprint::from_sizes(by_size, self_by_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn curves() -> CopyFootprint {
        CopyFootprint::from_sizes(
            vec![
                (
                    64 * KIB,
                    vec![(128 * KIB, 0.0), (512 * KIB, 2.0), (2 * MIB, 10.0)],
                ),
                (
                    256 * KIB,
                    vec![(512 * KIB, 0.0), (2 * MIB, 6.0), (8 * MIB, 20.0)],
                ),
            ],
            Vec::new(),
        )
    }

    #[test]
    fn a_sizes_curve_log_linear_in_the_footprint_and_between_sizes() {
        let c = curves();
        // at a probe size: its own curve; nothing within the message's own buffers
        assert_eq!(c.cost(2 * MIB, 256 * KIB, false), 6 * 256 * KIB);
        assert_eq!(c.cost(4 * MIB, 256 * KIB, false), 13 * 256 * KIB);
        assert_eq!(c.cost(512 * KIB, 256 * KIB, false), 0);
        assert_eq!(c.cost(64 * MIB, 256 * KIB, false), 20 * 256 * KIB);
        // halfway (in log2) between 64 and 256 KiB: halfway between the curves
        assert_eq!(c.cost(2 * MIB, 128 * KIB, false), 8 * 128 * KIB);
        // beyond the sizes measured: the nearest one's curve
        assert_eq!(c.cost(2 * MIB, 32 * KIB, false), 10 * 32 * KIB);
        assert_eq!(c.cost(2 * MIB, MIB, false), 6 * MIB);
        assert_eq!(c.cost(64 * KIB, 32 * KIB, false), 0);
        // a trace that does not say, or a model without the key
        assert_eq!(c.cost(0, 256 * KIB, false), 0);
        assert_eq!(CopyFootprint::default().cost(2 * MIB, 256 * KIB, false), 0);
    }

    #[test]
    fn a_message_to_oneself_pays_the_self_curves_where_the_model_has_them() {
        let without = curves();
        // no self curves: a self message pays what one between ranks does
        assert_eq!(without.cost(2 * MIB, 256 * KIB, true), 6 * 256 * KIB);
        let with = CopyFootprint::from_sizes(
            without.by_size.clone(),
            vec![(256 * KIB, vec![(512 * KIB, 0.0), (2 * MIB, 2.0)])],
        );
        assert_eq!(with.cost(2 * MIB, 256 * KIB, true), 2 * 256 * KIB);
        assert_eq!(with.cost(2 * MIB, 256 * KIB, false), 6 * 256 * KIB);
        assert_eq!(with.cost(512 * KIB, 256 * KIB, true), 0);
    }

    #[test]
    fn read_from_a_model_and_refused_when_malformed() {
        let model = |by_size: &str| {
            format!(
                r#"{{"libraries": {{"mpich": {{"loggp": {{"copy_footprint": {{"by_size": {by_size}}}}}}}}}}}"#
            )
        };
        let c = from_model(
            &model(r#"[{"n": 262144, "steps": [[524288, 0.0], [2097152, 6e-06]]}]"#),
            "m.json",
            None,
        )
        .unwrap();
        assert_eq!(c.cost(2 * MIB, 256 * KIB, false), 6 * 256 * KIB);
        assert_eq!(c.cost(2 * MIB, 256 * KIB, true), 6 * 256 * KIB);
        let with_self = format!(
            r#"{{"libraries": {{"mpich": {{"loggp": {{"copy_footprint": {{"by_size": {}, "self_by_size": {}}}}}}}}}}}"#,
            r#"[{"n": 262144, "steps": [[524288, 0.0], [2097152, 6e-06]]}]"#,
            r#"[{"n": 262144, "steps": [[524288, 0.0], [2097152, 2e-06]]}]"#
        );
        let c = from_model(&with_self, "m.json", None).unwrap();
        assert_eq!(c.cost(2 * MIB, 256 * KIB, true), 2 * 256 * KIB);
        let bad_self = with_self.replace(
            r#"[{"n": 262144, "steps": [[524288, 0.0], [2097152, 2e-06]]}]"#,
            r#"{"n": 1}"#,
        );
        assert!(from_model(&bad_self, "m.json", None).is_err());
        for bad in [
            r#"{"n": 1}"#,
            r#"[{"steps": [[8, 0.0]]}]"#,
            r#"[{"n": 8, "steps": [[8, 0.0], [4, 1e-6]]}]"#,
            r#"[{"n": 8, "steps": [[8, -1e-6]]}]"#,
            r#"[{"n": 8, "steps": [[8, 0.0]]}, {"n": 4, "steps": [[8, 0.0]]}]"#,
        ] {
            assert!(from_model(&model(bad), "m.json", None).is_err(), "{bad}");
        }
        let none = r#"{"libraries": {"mpich": {"loggp": {}}}}"#;
        assert!(from_model(none, "m.json", None).unwrap().is_empty());
    }
}
