//! Batch mode: one simulator process answers many requests.
//!
//! `commchar-sim --batch` reads requests from stdin, one per line, each a JSON
//! array of the flags a single run takes (`["--collective", "bcast:binomial",
//! "--n", "8"]`), and writes one JSON line per request to stdout as soon as it
//! is answered: the result a single run prints with `--json`, or
//! `{"error": MESSAGE, "exit_code": CODE}` with the message and exit code the
//! single run would have given. A failed request leaves the process serving.
//!
//! [`Sources`] is what the requests of one process share: each model file is
//! read and parsed once per library; the files of a trace directory whose
//! signatures were listed are kept (`TraceFiles`) until the replay to run is
//! built from them, so that listing a trace's signatures and replaying it
//! priced read it once; and a replay built with
//! the same trace directory and options as the request before it is copied
//! instead of built again (a replay under LogGPS and then under LogGP differs
//! only in the engine's parameters). The files are taken to stay unchanged
//! while the process runs.

use crate::collective_start::{self, CollectiveStart};
use crate::copy_footprint::{self, CopyFootprint};
use crate::exchange_excess::{self, ExchangeExcess};
use crate::first_touch::{self, ByteSteps};
use crate::params::{self, CallCosts, Params};
use crate::placement::MisalignedCopy;
use crate::request_growth::{self, RequestGrowth};
use crate::workload::replay::{Options, Replay, TraceFiles};
use crate::written_send::WrittenSend;
use crate::{Result, SimError};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::rc::Rc;

type Key = (String, Option<String>);

/// Model files, read once for every request of a process, and in batch mode
/// a copy of the last replay (a single run keeps none: it would double the
/// replay's memory for nothing).
#[derive(Default)]
pub struct Sources {
    keep_replay: bool,
    texts: HashMap<String, Rc<str>>,
    params: HashMap<Key, Params>,
    call_costs: HashMap<Key, CallCosts>,
    first_touch: HashMap<Key, ByteSteps>,
    replace_copy: HashMap<Key, ByteSteps>,
    exchange_excess: HashMap<Key, ExchangeExcess>,
    copy_footprint: HashMap<Key, CopyFootprint>,
    request_growth: HashMap<Key, RequestGrowth>,
    collective_start: HashMap<Key, CollectiveStart>,
    misaligned_copy: HashMap<Key, MisalignedCopy>,
    written_send: HashMap<Key, WrittenSend>,
    node_gap: HashMap<Key, Option<f64>>,
    node_cost: HashMap<Key, f64>,
    replay: Option<(String, Options, Replay)>,
    /// In batch mode, the files of the last trace read, until a replay to run
    /// is built from them (a listing of signatures keeps them).
    trace: Option<(String, TraceFiles)>,
}

/// `read` of the model file at `path` for `library`: its text read once per process
/// (`texts`), the section parsed once per (path, library) (`map`).
fn section<T: Clone>(
    texts: &mut HashMap<String, Rc<str>>,
    map: &mut HashMap<Key, T>,
    path: &str,
    library: Option<&str>,
    read: impl FnOnce(&str, &str, Option<&str>) -> Result<T>,
) -> Result<T> {
    let key = (path.to_string(), library.map(str::to_string));
    if let Some(v) = map.get(&key) {
        return Ok(v.clone());
    }
    let text = model_text(texts, path)?;
    let v = read(&text, path, library)?;
    map.insert(key, v.clone());
    Ok(v)
}

/// The text of the model file at `path`, read once.
fn model_text(texts: &mut HashMap<String, Rc<str>>, path: &str) -> Result<Rc<str>> {
    if let Some(t) = texts.get(path) {
        return Ok(t.clone());
    }
    let text: Rc<str> = std::fs::read_to_string(path)
        .map_err(|e| SimError::Input(format!("cannot read model {path}: {e}")))?
        .into();
    texts.insert(path.to_string(), text.clone());
    Ok(text)
}

impl Sources {
    /// The sources of a batch process: the last replay is kept for the next request.
    pub fn for_batch() -> Sources {
        Sources {
            keep_replay: true,
            ..Sources::default()
        }
    }

    /// The text of the model file at `path`.
    pub fn model_text(&mut self, path: &str) -> Result<Rc<str>> {
        model_text(&mut self.texts, path)
    }

    /// The model's parameters (`params::from_model`).
    pub fn params(&mut self, path: &str, library: Option<&str>) -> Result<Params> {
        section(
            &mut self.texts,
            &mut self.params,
            path,
            library,
            params::from_model,
        )
    }

    /// The model's per-call collective costs (`params::call_costs_from_model`).
    pub fn call_costs(&mut self, path: &str, library: Option<&str>) -> Result<CallCosts> {
        section(
            &mut self.texts,
            &mut self.call_costs,
            path,
            library,
            params::call_costs_from_model,
        )
    }

    /// The model's first-touch costs (`first_touch::from_model`).
    pub fn first_touch(&mut self, path: &str, library: Option<&str>) -> Result<ByteSteps> {
        section(
            &mut self.texts,
            &mut self.first_touch,
            path,
            library,
            first_touch::from_model,
        )
    }

    /// What a rank pays the first time it holds k requests (`loggp.request_growth`).
    pub fn request_growth(&mut self, path: &str, library: Option<&str>) -> Result<RequestGrowth> {
        section(
            &mut self.texts,
            &mut self.request_growth,
            path,
            library,
            request_growth::from_model,
        )
    }

    /// What a communicator's first collectives cost (`loggp.collective_start`).
    pub fn collective_start(
        &mut self,
        path: &str,
        library: Option<&str>,
    ) -> Result<CollectiveStart> {
        section(
            &mut self.texts,
            &mut self.collective_start,
            path,
            library,
            collective_start::from_model,
        )
    }

    /// What MPI_Sendrecv_replace costs beyond MPI_Sendrecv (`loggp.replace_copy`).
    pub fn replace_copy(&mut self, path: &str, library: Option<&str>) -> Result<ByteSteps> {
        section(
            &mut self.texts,
            &mut self.replace_copy,
            path,
            library,
            |text, path, library| {
                first_touch::steps_from_model(text, path, library, "replace_copy")
            },
        )
    }

    /// What a simultaneous exchange costs beyond the model (`loggp.exchange_excess`).
    pub fn exchange_excess(&mut self, path: &str, library: Option<&str>) -> Result<ExchangeExcess> {
        section(
            &mut self.texts,
            &mut self.exchange_excess,
            path,
            library,
            exchange_excess::from_model,
        )
    }

    /// What a received byte costs once a rank's buffers outgrow its caches (`loggp.copy_footprint`).
    pub fn copy_footprint(&mut self, path: &str, library: Option<&str>) -> Result<CopyFootprint> {
        section(
            &mut self.texts,
            &mut self.copy_footprint,
            path,
            library,
            copy_footprint::from_model,
        )
    }

    /// What a misaligned copy costs (`loggp.misaligned_copy`, `placement::MisalignedCopy`).
    pub fn misaligned_copy(&mut self, path: &str, library: Option<&str>) -> Result<MisalignedCopy> {
        section(
            &mut self.texts,
            &mut self.misaligned_copy,
            path,
            library,
            MisalignedCopy::from_model,
        )
    }

    /// What a written send buffer costs (`loggp.written_send`, `written_send::WrittenSend`).
    pub fn written_send(&mut self, path: &str, library: Option<&str>) -> Result<WrittenSend> {
        section(
            &mut self.texts,
            &mut self.written_send,
            path,
            library,
            WrittenSend::from_model,
        )
    }

    /// The node's copy gap of the model's concurrency section (`params::node_gap_from_model`).
    pub fn node_gap(&mut self, path: &str, library: Option<&str>) -> Result<Option<f64>> {
        section(
            &mut self.texts,
            &mut self.node_gap,
            path,
            library,
            params::node_gap_from_model,
        )
    }

    /// The node's cost per message of the model's concurrency section (`params::node_cost_from_model`).
    pub fn node_cost(&mut self, path: &str, library: Option<&str>) -> Result<f64> {
        section(
            &mut self.texts,
            &mut self.node_cost,
            path,
            library,
            params::node_cost_from_model,
        )
    }

    /// The replay of the trace directory `dir` under `opts`: in batch mode a copy
    /// of the last one when it had the same directory and options, else read
    /// from the trace.
    pub fn replay(&mut self, dir: &str, opts: &Options) -> Result<Replay> {
        if let Some((d, o, r)) = &self.replay {
            if d == dir && o == opts {
                return Ok(r.clone());
            }
        }
        self.replay = None; // its memory is free before the next one is read
        if !self.keep_replay {
            return Replay::load(Path::new(dir), opts);
        }
        if self.trace.as_ref().is_none_or(|(d, _)| d != dir) {
            self.trace = None;
            self.trace = Some((dir.to_string(), TraceFiles::read(Path::new(dir))?));
        }
        let (_, files) = self.trace.as_ref().expect("read above");
        let r = Replay::from_files(files, opts)?;
        if !opts.list_only {
            // the schedule to run is built: its copy serves the requests that
            // follow, and the files' bytes need not be held beside it
            self.trace = None;
        }
        self.replay = Some((dir.to_string(), opts.clone(), r.clone()));
        Ok(r)
    }
}

/// A request line's flags: a JSON array of strings.
fn request_args(line: &str) -> Result<Vec<String>> {
    let bad = || {
        SimError::Usage(
            "a batch request is a JSON array of the flags of one run, e.g. [\"--collective\", \"bcast\"]"
                .into(),
        )
    };
    let value: Value = serde_json::from_str(line).map_err(|_| bad())?;
    value
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|a| a.as_str().map(str::to_string).ok_or_else(bad))
        .collect()
}

/// The answer line of a failed request.
pub fn error_json(e: &SimError) -> Value {
    json!({"error": e.to_string(), "exit_code": e.exit_code()})
}

/// Answers every request line of `input` on `output`, one JSON line each, in
/// order; blank lines are skipped. Stops at the end of `input`, or with an
/// error when `output` cannot be written.
pub fn serve<R: BufRead, W: Write>(
    input: R,
    mut output: W,
    mut answer: impl FnMut(Vec<String>) -> Result<Value>,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match request_args(&line).and_then(&mut answer) {
            Ok(v) => v,
            Err(e) => error_json(&e),
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(input: &str) -> Vec<Value> {
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, |args| match args.first() {
            Some(a) if a == "fail" => Err(SimError::Input("no such file".into())),
            _ => Ok(json!(args)),
        })
        .unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn one_answer_per_request_in_order() {
        let got = answers("[\"a\", \"b\"]\n\n[\"fail\"]\n[]\n");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], json!(["a", "b"]));
        assert_eq!(got[1], json!({"error": "no such file", "exit_code": 3}));
        assert_eq!(got[2], json!([]));
    }

    #[test]
    fn a_malformed_request_is_a_usage_error() {
        for line in ["{\"n\": 1}", "[1, 2]", "not json"] {
            let got = answers(line);
            assert_eq!(got[0]["exit_code"], 2, "{line}");
        }
    }

    #[test]
    fn a_missing_model_says_which() {
        let mut s = Sources::default();
        let e = s.params("/nonexistent/model.json", None).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("/nonexistent/model.json"));
    }
}
