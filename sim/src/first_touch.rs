//! Receives into never-touched memory (commchar.models.first_touch, `loggp.first_touch`):
//! the kernel faults in and zeroes each page of a receive buffer the program never wrote,
//! during the call. The tracer records, per receive, the bytes of its buffer in pages not
//! resident at the call (flag bit 2: the u64 at offset 48 of a blocking call, at offset 56
//! of an Irecv); the replay charges the receiving rank `per_byte` times them.

use crate::error::{input, Result};
use crate::params::size_steps;
use serde_json::Value;

/// Record flag: the cold-byte count is present.
pub const REC_COLD: u16 = 4;
/// glibc's default mmap threshold (M_MMAP_THRESHOLD): malloc serves a request of at
/// least this many bytes with fresh pages from mmap, which the kernel faults in and zeroes
/// on first touch; smaller ones reuse heap memory. glibc raises the threshold up to 32 MiB
/// after a mapped block is freed; the replay keeps the default.
pub const MMAP_THRESHOLD: u64 = 128 * 1024;
/// glibc's largest dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit): freeing a
/// mapped block of at most this size raises the threshold to it, so the repeated calls of a
/// probe take such a temporary buffer from warm heap memory after the first; a larger one
/// is mapped afresh, and faulted in, on every call, the probe's too.
pub const MMAP_THRESHOLD_MAX: u64 = 32 * 1024 * 1024;
// an Irecv's cold count sits in aux/aux2 (its req is its request)
use crate::trace_calls::IRECV;

/// A cost per byte that depends on the size (`steps`, else `fs_per_byte`): first touching
/// received bytes (`loggp.first_touch`), and the copy of MPI_Sendrecv_replace
/// (`loggp.replace_copy`, read by `steps_from_model`), fitted alike (models/excess.py).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByteSteps {
    /// Femtoseconds per cold byte (0: free), where no step applies.
    pub fs_per_byte: u64,
    /// (measured size, fs per byte), sizes increasing: `cold` bytes pay the step of the
    /// largest size <= cold (the first step's below it). Empty: `fs_per_byte`.
    pub steps: Vec<(u64, u64)>,
}

fn fs(us: f64, what: &str) -> Result<u64> {
    if !us.is_finite() || !(0.0..1.0e3).contains(&us) {
        return input(format!(
            "first_touch.{what} {us} is not a number of us per byte in [0, 1000)"
        ));
    }
    Ok((us * 1.0e9).round() as u64)
}

impl ByteSteps {
    /// From the model's `per_byte` (us per byte), without steps.
    pub fn from_us_per_byte(us: f64) -> Result<ByteSteps> {
        Ok(ByteSteps {
            fs_per_byte: fs(us, "per_byte")?,
            steps: Vec::new(),
        })
    }

    /// fs per byte for `cold` bytes.
    pub fn fs_per_byte_at(&self, cold: u64) -> u64 {
        match self.steps.partition_point(|&(n, _)| n <= cold) {
            0 => self.steps.first().map_or(self.fs_per_byte, |s| s.1),
            i => self.steps[i - 1].1,
        }
    }

    /// Whether a size at or below `bytes` was measured (nothing is known below the smallest).
    pub fn covers(&self, bytes: u64) -> bool {
        self.steps.first().is_some_and(|&(n, _)| n <= bytes)
    }

    /// ps a rank spends faulting in `cold` bytes.
    pub fn cost(&self, cold: u64) -> u64 {
        if cold == 0 {
            return 0;
        }
        ((cold as u128 * self.fs_per_byte_at(cold) as u128) / 1000).min(u64::MAX as u128) as u64
    }

    /// ps to fault in `bytes` of a temporary buffer of `size` bytes the library mallocs per
    /// call (the step of `size`): 0 below [`MMAP_THRESHOLD`], where malloc reuses heap pages.
    pub fn temp_cost(&self, bytes: u64, size: u64) -> u64 {
        if bytes == 0 || size < MMAP_THRESHOLD {
            return 0;
        }
        ((bytes as u128 * self.fs_per_byte_at(size) as u128) / 1000).min(u64::MAX as u128) as u64
    }

    /// What a program's one call pays beyond a probe's repeated ones for a temporary buffer
    /// of `size` bytes faulted in whole: [`temp_cost`](Self::temp_cost) up to
    /// [`MMAP_THRESHOLD_MAX`], 0 above it (the probe mapped it afresh on every call too).
    pub fn temp_cost_beyond_probe(&self, size: u64) -> u64 {
        if size > MMAP_THRESHOLD_MAX {
            0
        } else {
            self.temp_cost(size, size)
        }
    }
}

/// The cold bytes a record carries (0 when it has no count).
pub fn cold_bytes(call: u16, flags: u16, req: u64, aux: i32, aux2: i32) -> u64 {
    if flags & REC_COLD == 0 {
        0
    } else if call == IRECV {
        (aux as u32 as u64) | ((aux2 as u32 as u64) << 32)
    } else {
        req
    }
}

/// `libraries.<lib>.loggp.first_touch` (or `loggp_partial.first_touch`) of a model file;
/// free when the model has none. `library` None: the only library with a loggp section.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<ByteSteps> {
    steps_from_model(text, path, library, "first_touch")
}

/// `libraries.<lib>.loggp.<key>` (or `loggp_partial.<key>`) of a model file: a cost per
/// byte by size in the shape of `first_touch` (models/excess.py; `replace_copy`, what
/// MPI_Sendrecv_replace costs beyond MPI_Sendrecv); free when the model has none.
pub fn steps_from_model(
    text: &str,
    path: &str,
    library: Option<&str>,
    key: &str,
) -> Result<ByteSteps> {
    let doc = model_json(text, path)?;
    match loggp_entry(&doc, library, key) {
        Some(s) => steps_from_entry(s, path, key),
        None => Ok(ByteSteps::default()),
    }
}

/// A model file's JSON.
pub(crate) fn model_json(text: &str, path: &str) -> Result<Value> {
    serde_json::from_str(text).or_else(|e| input(format!("{path}: not JSON: {e}")))
}

/// `libraries.<lib>.loggp.<key>` (or `loggp_partial.<key>`) of a model, if present and not
/// null; `library` None: the only library with a loggp section.
pub(crate) fn loggp_entry<'a>(
    doc: &'a Value,
    library: Option<&str>,
    key: &str,
) -> Option<&'a Value> {
    let libs = doc.get("libraries").and_then(Value::as_object)?;
    let lib = match library {
        Some(name) => libs.get(name),
        None => {
            let with: Vec<&Value> = libs.values().filter(|v| v.get("loggp").is_some()).collect();
            if with.len() == 1 {
                Some(with[0])
            } else {
                None
            }
        }
    };
    lib.and_then(|l| {
        ["loggp", "loggp_partial"]
            .iter()
            .find_map(|k| l.get(k).and_then(|s| s.get(key)))
    })
    .filter(|s| !s.is_null())
}

/// A cost per byte by size from its model entry (`per_byte`, `steps`).
pub(crate) fn steps_from_entry(s: &Value, path: &str, key: &str) -> Result<ByteSteps> {
    let bad = |e: crate::SimError| crate::SimError::Input(format!("{path}: loggp {e}"));
    let Some(us) = s.get("per_byte").and_then(Value::as_f64) else {
        return input(format!("{path}: loggp {key} has no per_byte (us per byte)"));
    };
    let mut ft = ByteSteps::from_us_per_byte(us).map_err(bad)?;
    let what = format!("{path}: loggp {key}.steps");
    for (n, us) in size_steps(s.get("steps"), &what, "us per byte")? {
        ft.steps.push((n, fs(us, "steps").map_err(bad)?));
    }
    Ok(ft)
}
