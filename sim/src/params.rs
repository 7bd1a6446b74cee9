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

/// Who copies the bytes of a rendezvous message (an eager one is copied by both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RendezvousCopy {
    /// Sender and receiver each pay O per byte, as LogGOPSim charges every message.
    Both,
    /// Single copy: the receiver pulls the bytes from the sender's buffer (shared
    /// memory with CMA, RDMA get), so the sender's CPU pays no O per byte.
    Receiver,
}

impl RendezvousCopy {
    pub fn name(self) -> &'static str {
        match self {
            RendezvousCopy::Both => "both",
            RendezvousCopy::Receiver => "receiver",
        }
    }

    pub fn parse(text: &str) -> Option<RendezvousCopy> {
        match text {
            "both" => Some(RendezvousCopy::Both),
            "receiver" => Some(RendezvousCopy::Receiver),
            _ => None,
        }
    }
}

/// The per-message costs that may depend on the message size (PLogP-style).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgCost {
    pub o_s: u64,
    pub o_r: u64,
    pub big_g: u64,
    pub big_o: u64,
    /// The receiver's CPU per byte of an eager message whose bytes are already
    /// there (PLogP's o_r(m) slope, `loggp.regimes[].O_r`): such a message is
    /// taken in when its remaining stream is no longer than that copy, and
    /// costs the receiver o_r + (s-1)O_r. None: LogGOPSim's rule, o_r +
    /// max((s-1)O, (s-1)G) from its first byte.
    pub big_o_r: Option<u64>,
    /// The regime's own L (`loggp.regimes[].L`): the part of its one-way time
    /// that no CPU pays, so back-to-back messages overlap it. None: the global L.
    pub l: Option<u64>,
}

/// A program's first messages (commchar.models.coldstart, loggp.cold_start): of each
/// rank's first `messages` eager sends, those of more than `min_bytes` occupy its CPU
/// `o_s + O_s min(n, max_bytes)` longer before they leave, the first of them `first`
/// more, and of its first `messages` eager receives, those of more than `min_bytes`
/// `o_r + O_r min(n, max_bytes)` longer (MPICH over UCX: each element of the
/// shared-memory FIFO faults in on first use, beyond the part of it every process
/// touched at start, which a smaller message stays within; a rendezvous message
/// leaves its bytes in place and takes no element). A pair's first rendezvous message costs its receiver
/// `rendezvous_first` more when it arrives, the first the other way `rendezvous_reverse`
/// (MPICH over UCX sets up the pair's path for it), whatever `messages` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColdStart {
    pub messages: u32,
    pub o_s: u64,
    pub big_o_s: u64,
    pub o_r: u64,
    pub big_o_r: u64,
    pub first: u64,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub rendezvous_first: u64,
    pub rendezvous_reverse: u64,
}

impl ColdStart {
    /// Only a pair's first rendezvous messages cost more (no cold run of eager sends).
    pub fn rendezvous_only(rendezvous_first: u64, rendezvous_reverse: u64) -> ColdStart {
        ColdStart {
            messages: 0,
            o_s: 0,
            big_o_s: 0,
            o_r: 0,
            big_o_r: 0,
            first: 0,
            min_bytes: 0,
            max_bytes: 0,
            rendezvous_first,
            rendezvous_reverse,
        }
    }

    /// Whether an eager message of `size` bytes in the cold run pays: more than `min_bytes`.
    #[inline]
    pub fn pays(&self, size: u64) -> bool {
        size > self.min_bytes
    }

    /// The extra cost (ps) of one cold send of `size` bytes.
    #[inline]
    pub fn send(&self, size: u64) -> u64 {
        let n = size.min(self.max_bytes);
        self.o_s.saturating_add(n.saturating_mul(self.big_o_s))
    }

    /// The extra cost (ps) of one cold receive of `size` bytes.
    #[inline]
    pub fn receive(&self, size: u64) -> u64 {
        let n = size.min(self.max_bytes);
        self.o_r.saturating_add(n.saturating_mul(self.big_o_r))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regime {
    pub start: u64,
    pub cost: MsgCost,
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
    pub rendezvous_copy: RendezvousCopy,
    /// When a message that reaches a computing rank is taken in. false (LogGOPSim's
    /// rule): as soon as the rank's CPU is free, before what the rank does next. true
    /// (a traced program's replay): at the rank's next MPI call, after that call has
    /// started its own sends, as MPI libraries progress only inside calls and an
    /// MPI_Sendrecv posts its send before it polls for what arrived.
    pub taken_in_calls: bool,
    /// A program's first sends cost more (None: they do not, or a generated
    /// schedule, which is measured warm).
    pub cold_start: Option<ColdStart>,
    /// Size-dependent o_s, o_r, G, O (and O_r, L), sorted by `start`, the first starting at 0;
    /// empty: every message pays the global values above.
    pub regimes: Vec<Regime>,
    /// A message to oneself as measured (`loggp.self_message`): (bytes, ps of one
    /// call), sizes increasing; empty: the smallest messages' overheads and O.
    pub self_message: Vec<(u64, u64)>,
    /// What a non-blocking send costs its caller to post, as measured (`loggp.send_post`):
    /// (bytes, ps of one call), sizes increasing; empty: a blocking send's o_s + (s-1)O.
    pub send_post: Vec<(u64, u64)>,
    /// The node's detours a replay draws (`loggp.noise`; None: no noise, or a generated
    /// schedule, whose collectives the kernels measure with the noise in them).
    pub noise: Option<crate::noise::Noise>,
}

impl Params {
    /// The o_s, o_r, G, O a message of `size` bytes pays: a binary search of
    /// a small sorted table, no allocation (this is on the engine's hot path).
    #[inline]
    pub fn cost(&self, size: u64) -> MsgCost {
        if self.regimes.is_empty() {
            return self.cost_globals();
        }
        let after = self.regimes.partition_point(|r| r.start <= size);
        self.regimes[after.saturating_sub(1)].cost
    }

    /// The L a message of `size` bytes travels: its regime's own, else the global one.
    #[inline]
    pub fn latency(&self, size: u64) -> u64 {
        self.cost(size).l.unwrap_or(self.l)
    }

    /// What a message a rank sends to itself pays: the measured self path (half of
    /// one call's time to the send, half to the receive, interpolated between the
    /// measured sizes), else, the self path having no protocol switch (no rendezvous,
    /// no handshake), the smallest messages' overheads and the copy (O) of its size.
    #[inline]
    pub fn self_cost(&self, size: u64) -> MsgCost {
        if let Some(t) = self.self_time(size) {
            return MsgCost {
                o_s: t / 2,
                o_r: t - t / 2,
                big_g: 0,
                big_o: 0,
                big_o_r: None,
                l: None,
            };
        }
        MsgCost {
            big_o: self.cost(size).big_o,
            big_o_r: None,
            ..self.cost(0)
        }
    }

    /// ps of one message to oneself by the measured table (`interpolated`); None
    /// without a table.
    pub fn self_time(&self, size: u64) -> Option<u64> {
        interpolated(&self.self_message, size)
    }

    /// ps of posting a non-blocking send of `size` bytes by the measured table
    /// (`interpolated`); None without a table.
    #[inline]
    pub fn post_time(&self, size: u64) -> Option<u64> {
        interpolated(&self.send_post, size)
    }

    /// Applies a parameter given on the command line to the global value and
    /// every regime, so an explicit flag overrides the model everywhere.
    pub fn override_cost(&mut self, set: impl Fn(&mut MsgCost)) {
        let mut global = self.cost_globals();
        set(&mut global);
        (self.o_s, self.o_r, self.big_g, self.big_o) =
            (global.o_s, global.o_r, global.big_g, global.big_o);
        for r in &mut self.regimes {
            set(&mut r.cost);
        }
    }

    /// The smallest G of the model (global and every regime): a link's bandwidth
    /// under the flow-level network.
    pub fn fastest_gap_per_byte(&self) -> u64 {
        match self.regimes.iter().map(|r| r.cost.big_g).min() {
            Some(g) => g, // the regimes cover every size: the global G is not used
            None => self.big_g,
        }
    }

    fn cost_globals(&self) -> MsgCost {
        MsgCost {
            o_s: self.o_s,
            o_r: self.o_r,
            big_g: self.big_g,
            big_o: self.big_o,
            big_o_r: None,
            l: None,
        }
    }
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
            rendezvous_copy: RendezvousCopy::Both,
            taken_in_calls: false,
            cold_start: None,
            regimes: Vec::new(),
            self_message: Vec::new(),
            send_post: Vec::new(),
            noise: None,
        }
    }
}

/// A measured (bytes, ps) table at `size`: linear between the two measured sizes around
/// it, along the nearest segment outside them (never below 0); None when empty.
fn interpolated(t: &[(u64, u64)], size: u64) -> Option<u64> {
    let first = *t.first()?;
    if t.len() == 1 {
        return Some(first.1);
    }
    let i = t.partition_point(|&(n, _)| n <= size).clamp(1, t.len() - 1);
    let ((n0, t0), (n1, t1)) = (t[i - 1], t[i]);
    let slope = (t1 as f64 - t0 as f64) / (n1 - n0) as f64;
    let at = t0 as f64 + slope * (size as f64 - n0 as f64);
    Some(at.max(0.0).round() as u64)
}

/// The format name and version this reader accepts (commchar.modelfile.schema's
/// FORMAT and VERSION; tests/fixtures/modelfiles holds the files both must judge alike).
pub const MODEL_FORMAT: &str = "commchar-model";
pub const MODEL_VERSION: u64 = 1;

/// The parsed model file, its header checked as the Python schema checks it
/// (format, version, units, provenance, a non-empty libraries object).
fn parse_model(text: &str, path: &str) -> Result<Value> {
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return input(format!("{path}: not valid JSON ({e})")),
    };
    if doc.get("format").and_then(Value::as_str) != Some(MODEL_FORMAT) {
        return input(format!(
            "{path}: not a commchar model file (format is not '{MODEL_FORMAT}')"
        ));
    }
    if doc.get("version").and_then(Value::as_u64) != Some(MODEL_VERSION) {
        return input(format!(
            "{path}: this reader reads model-file version {MODEL_VERSION}, found {}",
            doc.get("version").unwrap_or(&Value::Null)
        ));
    }
    if let Some(units) = doc.get("units") {
        let Some(units) = units.as_object() else {
            return input(format!("{path}: units is not an object"));
        };
        let time = units.get("time").map_or(Some("us"), Value::as_str);
        let size = units.get("size").map_or(Some("B"), Value::as_str);
        if time != Some("us") || size != Some("B") {
            return input(format!("{path}: times must be in us and sizes in B"));
        }
    }
    if doc.get("provenance").is_some_and(|v| !v.is_object()) {
        return input(format!("{path}: provenance is not an object"));
    }
    Ok(doc)
}

/// A size in bytes: a non-negative whole JSON number (`1024` or `1024.0`, as Python writes either).
fn whole_bytes(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|x| x.fract() == 0.0 && (0.0..1.8e19).contains(x))
            .map(|x| x as u64)
    })
}

/// An operation key as the schema spells it: `op` or `op:variant`, each `[a-z][a-z0-9_]*`.
fn is_op_key(key: &str, variant_allowed: bool) -> bool {
    let name = |part: &str| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    match key.split_once(':') {
        None => name(key),
        Some((op, variant)) => variant_allowed && name(op) && name(variant),
    }
}

/// What the schema requires of the library the simulator reads besides its loggp
/// section: an object with an `operations` object under well-formed keys, not empty
/// unless the library has a loggp section
/// (their segments and expressions are checked by commchar before the simulator runs).
fn check_library(lib: &Value, path: &str, name: &str) -> Result<()> {
    let Some(lib) = lib.as_object() else {
        return input(format!("{path}: library '{name}' is not an object"));
    };
    if lib.get("version").is_some_and(|v| !v.is_string()) {
        return input(format!("{path}: version of '{name}' is not a string"));
    }
    // a library may be its loggp section alone (a run of the rndv probe only)
    let has_loggp = ["loggp", "loggp_partial"]
        .iter()
        .any(|k| lib.get(*k).is_some_and(|v| !v.is_null()));
    match lib.get("operations").and_then(Value::as_object) {
        Some(ops) if !ops.is_empty() || has_loggp => {
            match ops.keys().find(|k| !is_op_key(k, true)) {
                Some(bad) => input(format!("{path}: bad operation key '{bad}' in '{name}'")),
                None => Ok(()),
            }
        }
        _ => input(format!(
            "{path}: library '{name}' has no operations (and no loggp section)"
        )),
    }
}

/// The library section to use: the one named, else the only one with a loggp section.
fn library_section<'a>(
    doc: &'a Value,
    path: &str,
    library: Option<&str>,
) -> Result<(String, &'a Value)> {
    let libs = match doc.get("libraries").and_then(Value::as_object) {
        Some(l) if !l.is_empty() => l,
        _ => return input(format!("{path}: model has no libraries")),
    };
    match library {
        Some(name) => match libs.get(name) {
            Some(l) => check_library(l, path, name).map(|()| (name.to_string(), l)),
            None => {
                let known: Vec<&str> = libs.keys().map(String::as_str).collect();
                input(format!(
                    "{path}: no library '{name}' (has: {})",
                    known.join(", ")
                ))
            }
        },
        None => {
            let with_loggp: Vec<(&String, &Value)> = libs
                .iter()
                .filter(|(_, v)| v.get("loggp").is_some())
                .collect();
            match with_loggp.as_slice() {
                [(n, v)] => check_library(v, path, n).map(|()| (n.to_string(), *v)),
                [] => input(format!("{path}: no library has a loggp section")),
                _ => {
                    let names: Vec<&str> = with_loggp.iter().map(|(n, _)| n.as_str()).collect();
                    usage(format!(
                        "{path}: several libraries have loggp parameters ({}); choose one with --library",
                        names.join(", ")
                    ))
                }
            }
        }
    }
}

/// Reads `libraries.<lib>.loggp` of a commchar model file (times in us).
/// The model's S is the shortest rendezvous message, so eager_max = S - 1.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<Params> {
    let doc = parse_model(text, path)?;
    let (name, lib) = library_section(&doc, path, library)?;
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
    num("s", false)?; // the eager limit: read by commchar, checked here as the schema does
    let mut p = Params {
        l: us.to_ps(num("L", true)?.unwrap_or(0.0), "L")?,
        o_s: us.to_ps(num("o_s", true)?.unwrap_or(0.0), "o_s")?,
        o_r: us.to_ps(num("o_r", true)?.unwrap_or(0.0), "o_r")?,
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
    p.rendezvous_copy = match loggp.get("rendezvous_copy") {
        None | Some(Value::Null) => RendezvousCopy::Both,
        Some(v) => match v.as_str().and_then(RendezvousCopy::parse) {
            Some(copy) => copy,
            None => {
                return input(format!(
                    "{path}: loggp rendezvous_copy of '{name}' is not 'both' or 'receiver'"
                ))
            }
        },
    };
    p.regimes = regimes_from_model(loggp.get("regimes"), path, &name, &p)?;
    p.cold_start = cold_start_from_model(loggp.get("cold_start"), path, &name)?;
    p.self_message = call_means_from_model(loggp.get("self_message"), path, &name, "self_message")?;
    p.send_post = call_means_from_model(loggp.get("send_post"), path, &name, "send_post")?;
    let noise = crate::noise::from_entry(loggp.get("noise"), path, 1)?;
    p.noise = (!noise.is_empty()).then_some(noise);
    Ok(p)
}

/// Reads `libraries.<lib>.concurrency.G_node` (us per byte; models/concurrency.py): the
/// node's copy gap, 1 / B_node, in picoseconds per byte, kept fractional (a gap of
/// 2.5e-5 us/B is 25 ps/B, and 1.7e-5 would round by 6%). None when the library has no
/// such section.
pub fn node_gap_from_model(text: &str, path: &str, library: Option<&str>) -> Result<Option<f64>> {
    let doc = parse_model(text, path)?;
    let (name, lib) = library_section(&doc, path, library)?;
    match lib.get("concurrency") {
        None | Some(Value::Null) => Ok(None),
        Some(section) => match section.get("G_node").and_then(Value::as_f64) {
            Some(g) if g.is_finite() && g > 0.0 => Ok(Some(g * Unit::Us.picos())),
            _ => input(format!(
                "{path}: concurrency.G_node of '{name}' is not a positive number"
            )),
        },
    }
}

/// Reads `libraries.<lib>.concurrency.c_node` (us; models/concurrency.py): the
/// node's cost per message, in picoseconds; 0 when the library has no such
/// section or the section no c_node.
pub fn node_cost_from_model(text: &str, path: &str, library: Option<&str>) -> Result<f64> {
    let doc = parse_model(text, path)?;
    let (name, lib) = library_section(&doc, path, library)?;
    match lib.get("concurrency").and_then(|c| c.get("c_node")) {
        None | Some(Value::Null) => Ok(0.0),
        Some(v) => match v.as_f64() {
            Some(c) if c.is_finite() && c >= 0.0 => Ok(c * Unit::Us.picos()),
            _ => input(format!(
                "{path}: concurrency.c_node of '{name}' is not a non-negative number"
            )),
        },
    }
}

/// Reads `loggp.cold_start` (`messages`, `o_s`, `o_r` in us, `O_s`, `O_r` in us/B, `max_bytes`;
/// the receiver's two optional, default 0), checked as
/// the Python schema checks it; `messages` 0 or no section: None.
/// `loggp.<entry>.steps` ([bytes, us of one call], sizes increasing; `self_message`,
/// `send_post`) in ps; empty when the model has none.
fn call_means_from_model(
    section: Option<&Value>,
    path: &str,
    name: &str,
    entry: &str,
) -> Result<Vec<(u64, u64)>> {
    let what = format!("{path}: loggp {entry}.steps of '{name}'");
    us_steps(section.and_then(|s| s.get("steps")), &what, entry)
}

/// A model's list of `[n, us]` steps (`what` names it in messages, `name` the quantity) in
/// picoseconds, n increasing: absent or null is empty.
pub(crate) fn us_steps(steps: Option<&Value>, what: &str, name: &str) -> Result<Vec<(u64, u64)>> {
    size_steps(steps, what, "us")?
        .into_iter()
        .map(|(n, us)| Ok((n, Unit::Us.to_ps(us, name)?)))
        .collect()
}

/// A model's list of `[bytes, value]` steps (`what` names it in messages, `unit` the
/// value's), sizes increasing: absent or null is empty.
pub(crate) fn size_steps(steps: Option<&Value>, what: &str, unit: &str) -> Result<Vec<(u64, f64)>> {
    let steps = match steps {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(steps)) => steps,
        Some(_) => return input(format!("{what} is not a list")),
    };
    let mut out: Vec<(u64, f64)> = Vec::with_capacity(steps.len());
    for step in steps {
        let pair = step.as_array().filter(|a| a.len() == 2);
        let (Some(n), Some(value)) = (
            pair.and_then(|a| a[0].as_u64()),
            pair.and_then(|a| a[1].as_f64()),
        ) else {
            return input(format!("{what} holds {step}, not [bytes, {unit}]"));
        };
        if out.last().is_some_and(|&(last, _)| last >= n) {
            return input(format!("{what}: sizes do not increase"));
        }
        out.push((n, value));
    }
    Ok(out)
}

fn cold_start_from_model(
    section: Option<&Value>,
    path: &str,
    name: &str,
) -> Result<Option<ColdStart>> {
    let cs = match section {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(cs)) => cs,
        Some(_) => {
            return input(format!(
                "{path}: loggp cold_start of '{name}' is not an object"
            ))
        }
    };
    let messages = match cs.get("messages").and_then(Value::as_u64) {
        Some(m) => m,
        None => {
            return input(format!(
                "{path}: loggp cold_start.messages of '{name}' is not a whole number >= 0"
            ))
        }
    };
    let number = |key: &str, required: bool| -> Result<f64> {
        match cs.get(key) {
            None | Some(Value::Null) if !required => Ok(0.0),
            v => match v.and_then(Value::as_f64) {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => input(format!(
                    "{path}: loggp cold_start.{key} of '{name}' is not a non-negative number"
                )),
            },
        }
    };
    let whole = |key: &str, required: bool| -> Result<u64> {
        let x = number(key, required)?;
        if x.fract() != 0.0 {
            return input(format!(
                "{path}: loggp cold_start.{key} of '{name}' is not a whole number of bytes"
            ));
        }
        Ok(x as u64)
    };
    let rendezvous_first = Unit::Us.to_ps(
        number("rendezvous_first_us", false)?,
        "cold_start.rendezvous_first_us",
    )?;
    let rendezvous_reverse = Unit::Us.to_ps(
        number("rendezvous_reverse_us", false)?,
        "cold_start.rendezvous_reverse_us",
    )?;
    if messages == 0 {
        if rendezvous_first == 0 && rendezvous_reverse == 0 {
            return Ok(None);
        }
        return Ok(Some(ColdStart::rendezvous_only(
            rendezvous_first,
            rendezvous_reverse,
        )));
    }
    let max_bytes = whole("max_bytes", true)?;
    let min_bytes = whole("min_bytes", false)?;
    Ok(Some(ColdStart {
        messages: u32::try_from(messages).unwrap_or(u32::MAX),
        o_s: Unit::Us.to_ps(number("o_s", true)?, "cold_start.o_s")?,
        big_o_s: Unit::Us.to_ps(number("O_s", true)?, "cold_start.O_s")?,
        o_r: Unit::Us.to_ps(number("o_r", false)?, "cold_start.o_r")?,
        big_o_r: Unit::Us.to_ps(number("O_r", false)?, "cold_start.O_r")?,
        first: Unit::Us.to_ps(number("first_us", false)?, "cold_start.first_us")?,
        min_bytes,
        max_bytes,
        rendezvous_first,
        rendezvous_reverse,
    }))
}

/// Reads `loggp.regimes` (`n_min`, `n_max`, `o_s`, `o_r`, `G`, optional `O`, `O_r` and `L`; us and
/// us/B). Entries must be sorted by n and disjoint. A size in a gap between two
/// regimes takes the one with the nearest bound (ties: the lower), sizes below
/// the first take the first: the model file's rule for segments. So the table
/// is stored as contiguous starts.
fn regimes_from_model(
    value: Option<&Value>,
    path: &str,
    name: &str,
    global: &Params,
) -> Result<Vec<Regime>> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return input(format!("{path}: loggp.regimes of '{name}' is not a list")),
    };
    let mut out: Vec<Regime> = Vec::with_capacity(list.len());
    let mut prev_max: Option<u64> = None;
    for (i, entry) in list.iter().enumerate() {
        let at = format!("{path}: loggp.regimes[{i}] of '{name}'");
        let Some(obj) = entry.as_object() else {
            return input(format!("{at} is not an object"));
        };
        let num = |key: &str| -> Result<Option<f64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => match v.as_f64() {
                    Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                    _ => input(format!("{at}: {key} is not a non-negative number")),
                },
            }
        };
        let size = |key: &str| -> Result<Option<u64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => match whole_bytes(v) {
                    Some(x) => Ok(Some(x)),
                    None => input(format!("{at}: {key} is not a whole number of bytes")),
                },
            }
        };
        let Some(n_min) = size("n_min")? else {
            return input(format!("{at} lacks n_min"));
        };
        let n_max = size("n_max")?;
        if n_max.is_some_and(|m| m < n_min) {
            return input(format!("{at}: n_max is below n_min"));
        }
        if n_max.is_none() && i + 1 < list.len() {
            return input(format!("{at}: only the last regime may have n_max null"));
        }
        let us = Unit::Us;
        let need = |key: &str| -> Result<u64> {
            match num(key)? {
                Some(x) => us.to_ps(x, key),
                None => input(format!("{at} lacks {key}")),
            }
        };
        let cost = MsgCost {
            o_s: need("o_s")?,
            o_r: need("o_r")?,
            big_g: need("G")?,
            big_o: match num("O")? {
                Some(x) => us.to_ps(x, "O")?,
                None => global.big_o,
            },
            big_o_r: num("O_r")?.map(|x| us.to_ps(x, "O_r")).transpose()?,
            l: num("L")?.map(|x| us.to_ps(x, "L")).transpose()?,
        };
        let start = match prev_max {
            None => 0,
            Some(pm) if n_min <= pm => {
                return input(format!("{at}: regimes must be sorted by n and disjoint"))
            }
            // the first size nearer to this regime's n_min than to pm
            Some(pm) => (pm + n_min) / 2 + 1,
        };
        out.push(Regime { start, cost });
        prev_max = Some(n_max.unwrap_or(u64::MAX));
    }
    Ok(out)
}

/// What one call of a collective costs beyond its messages, for calls of at
/// least `start` bytes: `fixed` ps plus `per_byte` ps per byte of CPU time on
/// every rank before its first message, and every cost of the call's messages and reductions scaled by
/// `scale` (a library's collective may move data cheaper or dearer than its
/// point-to-point messages). Fitted by `commchar fit` (loggp.call_costs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallCost {
    pub start: u64,
    pub fixed: u64,
    pub per_byte: f64,
    pub scale: f64,
}

impl CallCost {
    /// A call that costs exactly its messages.
    pub const NONE: CallCost = CallCost {
        start: 0,
        fixed: 0,
        per_byte: 0.0,
        scale: 1.0,
    };

    /// The CPU time (ps) every rank spends in a call of `n` bytes before its first message.
    pub fn first(&self, n: u64) -> u64 {
        self.fixed
            .saturating_add((self.per_byte * n as f64).round().min(u64::MAX as f64) as u64)
    }
}

/// Per-operation call costs, looked up by operation name and size.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallCosts {
    ops: Vec<(String, Vec<CallCost>)>,
}

impl CallCosts {
    /// The cost of one call of `op` (`allreduce`, `bcast`, ...) on `n` bytes;
    /// `CallCost::NONE` when the model has none for `op`.
    pub fn lookup(&self, op: &str, n: u64) -> CallCost {
        match self.ops.iter().find(|(name, _)| name == op) {
            Some((_, table)) => {
                let after = table.partition_point(|c| c.start <= n);
                table[after.saturating_sub(1)]
            }
            None => CallCost::NONE,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Operation names with their tables, for reporting.
    pub fn ops(&self) -> impl Iterator<Item = (&str, &[CallCost])> {
        self.ops.iter().map(|(n, t)| (n.as_str(), t.as_slice()))
    }
}

impl Params {
    /// Every time cost (latency, overheads, gaps, reduction, hops) times `factor`;
    /// S and the rendezvous rule unchanged.
    pub fn scaled(&self, factor: f64) -> Params {
        if factor == 1.0 {
            return self.clone();
        }
        let s = |v: u64| (v as f64 * factor).round() as u64;
        let cost = |c: MsgCost| MsgCost {
            o_s: s(c.o_s),
            o_r: s(c.o_r),
            big_g: s(c.big_g),
            big_o: s(c.big_o),
            big_o_r: c.big_o_r.map(s),
            l: c.l.map(s),
        };
        Params {
            l: s(self.l),
            o_s: s(self.o_s),
            o_r: s(self.o_r),
            g: s(self.g),
            big_g: s(self.big_g),
            big_o: s(self.big_o),
            gamma: s(self.gamma),
            hop: s(self.hop),
            regimes: self
                .regimes
                .iter()
                .map(|r| Regime {
                    start: r.start,
                    cost: cost(r.cost),
                })
                .collect(),
            self_message: self.self_message.iter().map(|&(n, t)| (n, s(t))).collect(),
            send_post: self.send_post.iter().map(|&(n, t)| (n, s(t))).collect(),
            ..self.clone()
        }
    }
}

/// Reads `libraries.<lib>.loggp.call_costs.ops` (`{op: [{n_min, n_max, fixed, per_byte,
/// scale}]}`, fixed in us, per_byte in us/B and optional); empty when the model has none (older model files).
/// Tables follow the regimes' rule: sorted by n and disjoint, a size in a gap
/// takes the regime with the nearest bound (ties: the lower).
pub fn call_costs_from_model(text: &str, path: &str, library: Option<&str>) -> Result<CallCosts> {
    let doc = parse_model(text, path)?;
    let (name, lib) = library_section(&doc, path, library)?;
    let ops = match lib.get("loggp").and_then(|l| l.get("call_costs")) {
        None | Some(Value::Null) => return Ok(CallCosts::default()),
        Some(section) => match section.get("ops") {
            Some(Value::Object(ops)) => ops,
            _ => {
                return input(format!(
                    "{path}: loggp.call_costs of '{name}' lacks an 'ops' object"
                ))
            }
        },
    };
    let section = lib["loggp"]["call_costs"].as_object();
    if let Some(p) = section.and_then(|s| s.get("p")) {
        if !p.as_f64().is_some_and(|p| p.is_finite() && p >= 1.0) {
            return input(format!(
                "{path}: loggp.call_costs.p of '{name}' is not a number >= 1"
            ));
        }
    }
    let mut out = CallCosts::default();
    for (op, list) in ops {
        let at = format!("{path}: loggp.call_costs.ops.{op} of '{name}'");
        if !is_op_key(op, false) {
            return input(format!(
                "{at}: expected an operation name without a variant"
            ));
        }
        let Some(list) = list.as_array().filter(|l| !l.is_empty()) else {
            return input(format!("{at} is not a non-empty list"));
        };
        let mut table: Vec<CallCost> = Vec::with_capacity(list.len());
        let mut prev_max: Option<u64> = None;
        for (i, entry) in list.iter().enumerate() {
            let at = format!("{at}[{i}]");
            let field = |key: &str| -> Result<f64> {
                match entry.get(key).and_then(Value::as_f64) {
                    Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
                    _ => input(format!("{at}: {key} is not a non-negative number")),
                }
            };
            let n_min = match entry.get("n_min").and_then(whole_bytes) {
                Some(v) => v,
                None => return input(format!("{at}: n_min is not a whole number of bytes")),
            };
            let n_max = match entry.get("n_max") {
                None | Some(Value::Null) if i + 1 == list.len() => None,
                None | Some(Value::Null) => {
                    return input(format!("{at}: only the last entry may have n_max null"))
                }
                Some(v) => match whole_bytes(v) {
                    Some(m) if m >= n_min => Some(m),
                    _ => return input(format!("{at}: n_max is not a size >= n_min")),
                },
            };
            let start = match prev_max {
                None => 0,
                Some(pm) if n_min <= pm => {
                    return input(format!("{at}: entries must be sorted by n and disjoint"))
                }
                Some(pm) => (pm + n_min) / 2 + 1,
            };
            let per_byte = match entry.get("per_byte") {
                None | Some(Value::Null) => 0.0,
                Some(_) => field("per_byte")? * Unit::Us.to_ps(1.0, "per_byte")? as f64,
            };
            table.push(CallCost {
                start,
                fixed: Unit::Us.to_ps(field("fixed")?, "fixed")?,
                per_byte,
                scale: field("scale")?,
            });
            prev_max = Some(n_max.unwrap_or(u64::MAX));
        }
        out.ops.push((op.clone(), table));
    }
    Ok(out)
}
