//! LogGOPS cost parameters, held in integer picoseconds so that per-byte costs
//! measured in microseconds (G = 0.00008 us/B) stay exact.

use crate::error::{input, usage, Result};
use serde_json::Value;

/// Picoseconds per unit of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ns,
    Us,
}

impl Unit {
    pub fn parse(text: &str) -> Result<Unit> {
        match text {
            "ns" => Ok(Unit::Ns),
            "us" => Ok(Unit::Us),
            other => usage(format!("unknown time unit '{other}' (use us or ns)")),
        }
    }

    pub fn picos(self) -> f64 {
        match self {
            Unit::Ns => 1e3,
            Unit::Us => 1e6,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
        }
    }

    /// Converts a value in this unit to whole picoseconds, refusing negatives and overflow.
    pub fn to_ps(self, value: f64, what: &str) -> Result<u64> {
        let ps = value * self.picos();
        if !ps.is_finite() || !(0.0..=1.8e19).contains(&ps) {
            return usage(format!(
                "{what} = {value} {} is not a non-negative time",
                self.name()
            ));
        }
        Ok(ps.round() as u64)
    }

    pub fn from_ps(self, ps: u64) -> f64 {
        ps as f64 / self.picos()
    }
}

/// What happens to a send longer than S.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendezvous {
    /// As LogGOPSim: the send completes when the receiver matches it.
    Match,
    /// The receiver's clear-to-send reply travels back: completion at match + L.
    Handshake,
}

/// LogGOPS parameters (times in ps, per-byte costs in ps/B).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub l: u64,
    pub o_s: u64,
    pub o_r: u64,
    pub g: u64,
    pub big_g: u64,
    pub big_o: u64,
    /// Longest message sent eagerly (bytes); longer ones use rendezvous.
    pub eager_max: u64,
    /// Computation cost per byte of a reduction (ps/B).
    pub gamma: u64,
    /// Extra latency per network hop (ps).
    pub hop: u64,
    pub rendezvous: Rendezvous,
}

impl Default for Params {
    /// LogGOPSim's defaults: L=2500, o=1500, g=1000, G=6, O=0 ns, S=65535 B.
    fn default() -> Self {
        Params {
            l: 2_500_000,
            o_s: 1_500_000,
            o_r: 1_500_000,
            g: 1_000_000,
            big_g: 6_000,
            big_o: 0,
            eager_max: 65_535,
            gamma: 0,
            hop: 0,
            rendezvous: Rendezvous::Handshake,
        }
    }
}

/// Reads `libraries.<lib>.loggp` of a commchar model file (times in us).
/// The model's S is the shortest rendezvous message, so eager_max = S - 1.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<Params> {
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return input(format!("{path}: not valid JSON ({e})")),
    };
    if doc.get("format").and_then(Value::as_str) != Some("commchar-model") {
        return input(format!(
            "{path}: not a commchar model file (format is not 'commchar-model')"
        ));
    }
    let libs = match doc.get("libraries").and_then(Value::as_object) {
        Some(l) if !l.is_empty() => l,
        _ => return input(format!("{path}: model has no libraries")),
    };
    let (name, lib) = match library {
        Some(name) => match libs.get(name) {
            Some(l) => (name.to_string(), l),
            None => {
                let known: Vec<&str> = libs.keys().map(String::as_str).collect();
                return input(format!(
                    "{path}: no library '{name}' (has: {})",
                    known.join(", ")
                ));
            }
        },
        None => {
            let with_loggp: Vec<(&String, &Value)> = libs
                .iter()
                .filter(|(_, v)| v.get("loggp").is_some())
                .collect();
            match with_loggp.as_slice() {
                [(n, v)] => (n.to_string(), *v),
                [] => return input(format!("{path}: no library has a loggp section")),
                _ => {
                    let names: Vec<&str> = with_loggp.iter().map(|(n, _)| n.as_str()).collect();
                    return usage(format!(
                        "{path}: several libraries have loggp parameters ({}); choose one with --library",
                        names.join(", ")
                    ));
                }
            }
        }
    };
    let loggp = match lib.get("loggp").and_then(Value::as_object) {
        Some(l) => l,
        None => return input(format!("{path}: library '{name}' has no loggp section")),
    };
    let num = |key: &str, required: bool| -> Result<Option<f64>> {
        match loggp.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            None | Some(Value::Null) => input(format!("{path}: loggp of '{name}' lacks {key}")),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => input(format!(
                    "{path}: loggp {key} of '{name}' is not a non-negative number"
                )),
            },
        }
    };
    let us = Unit::Us;
    let o_s = num("o_s", false)?.or(num("o", false)?);
    let o_r = num("o_r", false)?.or(o_s);
    let (o_s, o_r) = match (o_s, o_r) {
        (Some(s), Some(r)) => (s, r),
        _ => return input(format!("{path}: loggp of '{name}' lacks o_s/o_r")),
    };
    let mut p = Params {
        l: us.to_ps(num("L", true)?.unwrap_or(0.0), "L")?,
        o_s: us.to_ps(o_s, "o_s")?,
        o_r: us.to_ps(o_r, "o_r")?,
        g: us.to_ps(num("g", true)?.unwrap_or(0.0), "g")?,
        big_g: us.to_ps(num("G", true)?.unwrap_or(0.0), "G")?,
        big_o: us.to_ps(num("O", false)?.unwrap_or(0.0), "O")?,
        ..Params::default()
    };
    p.eager_max = match num("S", false)? {
        Some(s) if s >= 1.0 => s as u64 - 1,
        Some(_) => 0,
        None => u64::MAX,
    };
    Ok(p)
}
