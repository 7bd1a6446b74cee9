//! The `commchar-sim` command line: parses flags into a configuration value,
//! builds the workload, runs the engine and prints the result (text or JSON).

use clap::{Arg, ArgAction, ArgMatches, Command};
use commchar_sim::batch::{self, Sources};
use commchar_sim::engine::{self, Breakdown, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{CallCost, Params, Rendezvous, RendezvousCopy, Unit};
use commchar_sim::transport::flow_level::FlowLevel;
use commchar_sim::transport::ideal::Ideal;
use commchar_sim::transport::reserved::Reserved;
use commchar_sim::transport::Net;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::jacobi::{Exchange, Jacobi};
use commchar_sim::workload::phased::{write_goal, PhaseSchedule, Phased};
use commchar_sim::workload::progress::Reported;
use commchar_sim::workload::replay::{self, CollectiveMode, Replay};
use commchar_sim::workload::Workload;
use commchar_sim::{topology, Result, SimError};
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

/// Largest number of CPU spans a trace keeps.
const TRACE_LIMIT: usize = 2_000_000;

fn cli() -> Command {
    let time = |name: &'static str, help: &'static str| {
        Arg::new(name)
            .long(name)
            .value_name("T")
            .help(help)
            .value_parser(clap::value_parser!(f64))
    };
    Command::new("commchar-sim")
        .about("Deterministic discrete-event simulation of message passing under LogGOPS")
        .arg(
            Arg::new("collective")
                .long("collective")
                .value_name("OP[:ALG]")
                .help("collective to simulate, e.g. allreduce:rabenseifner"),
        )
        .arg(
            Arg::new("goal")
                .long("goal")
                .value_name("FILE")
                .help("LogGOPSim GOAL text schedule to simulate"),
        )
        .arg(
            Arg::new("replay")
                .long("replay")
                .value_name("DIR")
                .help("replay a traced MPI program (a directory of rank-<r>.cctrace files)"),
        )
        .arg(
            Arg::new("collectives")
                .long("collectives")
                .value_name("MODE")
                .default_value("expanded")
                .value_parser(["charged", "expanded"])
                .help("replay: collectives charged as a whole (--replay-costs) or expanded into algorithms"),
        )
        .arg(
            Arg::new("replay-costs")
                .long("replay-costs")
                .value_name("FILE")
                .help("replay: JSON cost and algorithm per collective signature"),
        )
        .arg(
            Arg::new("compute-scale")
                .long("compute-scale")
                .value_name("X")
                .default_value("1")
                .value_parser(clap::value_parser!(f64))
                .help("replay: multiply computation by X (0.5: a CPU twice as fast)"),
        )
        .arg(
            Arg::new("other-as-compute")
                .long("other-as-compute")
                .action(ArgAction::SetTrue)
                .help("replay: treat MPI calls the replay cannot follow as computation"),
        )
        .arg(
            Arg::new("batch")
                .long("batch")
                .action(ArgAction::SetTrue)
                .help("answer many runs in one process: read one JSON array of flags per line on stdin, \
                       write one JSON result (or {\"error\", \"exit_code\"}) per line on stdout"),
        )
        .arg(
            Arg::new("progress")
                .long("progress")
                .action(ArgAction::SetTrue)
                .help("write 'progress DONE TOTAL SECONDS' lines to stderr about once a second"),
        )
        .arg(
            Arg::new("list-signatures")
                .long("list-signatures")
                .action(ArgAction::SetTrue)
                .help("replay: print the trace's collective signatures as JSON and exit"),
        )
        .arg(
            Arg::new("app")
                .long("app")
                .value_name("APP")
                .help("application to simulate: jacobi"),
        )
        .arg(
            Arg::new("list")
                .long("list")
                .action(ArgAction::SetTrue)
                .help("list the collective algorithms and exit"),
        )
        .arg(
            Arg::new("n")
                .long("n")
                .value_name("BYTES")
                .default_value("8")
                .value_parser(clap::value_parser!(u64))
                .help("message size of the collective (bytes)"),
        )
        .arg(
            Arg::new("p")
                .long("p")
                .value_name("P")
                .default_value("2")
                .value_parser(clap::value_parser!(u32))
                .help("number of ranks"),
        )
        .arg(
            Arg::new("unknowns")
                .long("unknowns")
                .value_name("N")
                .default_value("32")
                .value_parser(clap::value_parser!(u64))
                .help("jacobi: unknowns"),
        )
        .arg(
            Arg::new("iterations")
                .long("iterations")
                .value_name("I")
                .default_value("1")
                .value_parser(clap::value_parser!(u32))
                .help("jacobi: iterations"),
        )
        .arg(time(
            "op-cost",
            "jacobi: time of one arithmetic operation (default 1 unit)",
        ))
        .arg(
            Arg::new("exchange")
                .long("exchange")
                .value_name("METHOD")
                .default_value("butterfly")
                .help("jacobi: direct or butterfly"),
        )
        .arg(
            Arg::new("topology")
                .long("topology")
                .default_value("full")
                .help("full, hypercube[:D], torus:AxB[xC], fattree:K"),
        )
        .arg(
            Arg::new("congestion")
                .long("congestion")
                .default_value("off")
                .value_parser(["on", "off", "flow"])
                .help("on: links carry one message at a time per direction; flow: messages \
                       crossing a link share its bandwidth (max-min fair, needs G > 0)"),
        )
        .arg(
            Arg::new("links")
                .long("links")
                .default_value("full-duplex")
                .value_parser(["full-duplex", "half-duplex"])
                .help("half-duplex: a link carries one message at a time over both directions \
                       together (with --congestion on), or shares its bandwidth between them (flow)"),
        )
        .arg(
            Arg::new("routing")
                .long("routing")
                .default_value("cut-through")
                .value_parser(["cut-through", "store-and-forward"])
                .help("store-and-forward: each hop receives the whole message before sending it \
                       on; ranks on the way (hypercube, torus) spend o_r + o_s forwarding it"),
        )
        .arg(time("hop", "latency per network hop (default 0)"))
        .arg(time(
            "node-G",
            "flow level: a node's copy gap per byte (1 / B_node), shared by every message \
             between ranks of one node on top of its own G (default: the model's concurrency.G_node)",
        ))
        .arg(time(
            "node-c",
            "flow level: a node's cost per message between its ranks, taken of its copy \
             bandwidth (default: the model's concurrency.c_node, else 0)",
        ))
        .arg(
            Arg::new("ranks-per-node")
                .long("ranks-per-node")
                .value_name("R")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("flow level: ranks 0..R-1 share node 0, and so on (default: a replay's \
                       ranks share the nodes of their trace's hosts; otherwise each rank is alone)"),
        )
        .arg(
            Arg::new("unit")
                .long("unit")
                .default_value("ns")
                .value_parser(["ns", "us"])
                .help("unit of every time given or printed"),
        )
        .arg(time("L", "latency"))
        .arg(time("o", "overhead at sender and receiver"))
        .arg(time("o-s", "send overhead"))
        .arg(time("o-r", "receive overhead"))
        .arg(time("g", "gap between messages"))
        .arg(time("G", "gap per byte"))
        .arg(time("O", "overhead per byte"))
        .arg(
            Arg::new("S")
                .long("S")
                .value_name("BYTES")
                .value_parser(parse_eager_max)
                .help("longest eager message (LogGOPSim's S); longer ones use rendezvous; inf: every message eager (LogGP)"),
        )
        .arg(time("gamma", "computation per reduced byte (default 0)"))
        .arg(
            Arg::new("rendezvous")
                .long("rendezvous")
                .default_value("handshake")
                .value_parser(["handshake", "match"])
                .help("rendezvous sends finish at match + L (handshake) or at match (LogGOPSim)"),
        )
        .arg(
            Arg::new("rendezvous-copy")
                .long("rendezvous-copy")
                .value_parser(["both", "receiver"])
                .help("who pays O per byte of a rendezvous message: both ends (LogGOPSim; the default without a model) or the receiver alone (single-copy transports)"),
        )
        .arg(
            Arg::new("cold-start")
                .long("cold-start")
                .default_value("auto")
                .value_parser(["auto", "on", "off"])
                .help("charge each rank's first sends the model's cold start (loggp.cold_start): auto does for --replay, a program from its start, and not for generated schedules, which the kernel measures warm"),
        )
        .arg(
            Arg::new("noise")
                .long("noise")
                .default_value("auto")
                .value_parser(["auto", "on", "off"])
                .help("draw the node's detours (loggp.noise) where they hold a rank inside the library: auto does for --replay, whose traced computation holds its own, and not for generated schedules"),
        )
        .arg(
            Arg::new("posted-sends")
                .long("posted-sends")
                .default_value("blocking")
                .value_parser(["blocking", "measured"])
                .help("what an eager message a non-blocking call started costs its sender: a blocking send's o_s + (s-1)O, or the library's measured post (loggp.send_post) where that holds the copy and costs less"),
        )
        .arg(
            Arg::new("noise-seed")
                .long("noise-seed")
                .value_name("N")
                .default_value("1")
                .value_parser(clap::value_parser!(u64))
                .help("seed of the detours' draws: one seed replays to one answer; several give the expected time and its spread"),
        )
        .arg(
            Arg::new("model")
                .long("model")
                .value_name("FILE")
                .help("commchar model file whose loggp section sets the parameters"),
        )
        .arg(
            Arg::new("library")
                .long("library")
                .value_name("LIB")
                .help("library of the model file"),
        )
        .arg(
            Arg::new("call-costs")
                .long("call-costs")
                .default_value("on")
                .value_parser(["on", "off"])
                .help("apply the model's per-call collective costs (loggp.call_costs)"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("print the result as JSON"),
        )
        .arg(
            Arg::new("trace")
                .long("trace")
                .value_name("FILE")
                .help("write a Chrome trace-event timeline"),
        )
        .arg(
            Arg::new("emit-goal")
                .long("emit-goal")
                .value_name("FILE")
                .help("write the workload as GOAL text instead of simulating"),
        )
}

/// `--S`: bytes, or `inf` for no rendezvous at all.
fn parse_eager_max(text: &str) -> std::result::Result<u64, String> {
    match text {
        "inf" | "infinity" => Ok(u64::MAX),
        _ => text
            .parse::<u64>()
            .map_err(|_| format!("'{text}' is not a number of bytes or inf")),
    }
}

fn opt_f64(m: &ArgMatches, name: &str) -> Option<f64> {
    m.get_one::<f64>(name).copied()
}

fn build_params(m: &ArgMatches, unit: Unit, src: &mut Sources) -> Result<Params> {
    let mut p = match m.get_one::<String>("model") {
        Some(path) => src.params(path, m.get_one::<String>("library").map(String::as_str))?,
        None => {
            if m.get_one::<String>("library").is_some() {
                return Err(SimError::Usage("--library needs --model".into()));
            }
            let mut p = Params::default();
            // LogGOPSim's defaults are in ns
            if unit == Unit::Us {
                p = Params {
                    l: 2_500_000,
                    o_s: 1_500_000,
                    o_r: 1_500_000,
                    g: 1_000_000,
                    big_g: 6_000,
                    ..p
                };
            }
            p
        }
    };
    let flag = |name: &str| -> Result<Option<u64>> {
        opt_f64(m, name).map(|v| unit.to_ps(v, name)).transpose()
    };
    let set = |field: &mut u64, name: &str| -> Result<()> {
        if let Some(v) = flag(name)? {
            *field = v;
        }
        Ok(())
    };
    set(&mut p.l, "L")?;
    if flag("L")?.is_some() {
        // an L given explicitly is every message's, the regimes' own too
        p.override_cost(|c| c.l = None);
    }
    set(&mut p.g, "g")?;
    // per-message costs given explicitly override the model's regimes too
    if let Some(o) = flag("o")? {
        p.override_cost(|c| (c.o_s, c.o_r) = (o, o));
    }
    if let Some(v) = flag("o-s")? {
        p.override_cost(|c| c.o_s = v);
    }
    if let Some(v) = flag("o-r")? {
        p.override_cost(|c| c.o_r = v);
    }
    if let Some(v) = flag("G")? {
        p.override_cost(|c| c.big_g = v);
    }
    if let Some(v) = flag("O")? {
        p.override_cost(|c| c.big_o = v);
    }
    set(&mut p.gamma, "gamma")?;
    set(&mut p.hop, "hop")?;
    if let Some(&s) = m.get_one::<u64>("S") {
        p.eager_max = s;
    }
    p.rendezvous = match m.get_one::<String>("rendezvous").map(String::as_str) {
        Some("match") => Rendezvous::Match,
        _ => Rendezvous::Handshake,
    };
    if let Some(copy) = m.get_one::<String>("rendezvous-copy") {
        p.rendezvous_copy = RendezvousCopy::parse(copy).expect("checked by clap");
    }
    let replaying = m.get_one::<String>("replay").is_some();
    p.taken_in_calls = replaying;
    match m.get_one::<String>("cold-start").map(String::as_str) {
        Some("on") => {}
        Some("off") => p.cold_start = None,
        _ if !replaying => p.cold_start = None,
        _ => {}
    }
    match m.get_one::<String>("noise").map(String::as_str) {
        Some("on") => {}
        Some("off") => p.noise = None,
        _ if !replaying => p.noise = None,
        _ => {}
    }
    if let Some(nz) = p.noise.as_mut() {
        nz.seed = m.get_one::<u64>("noise-seed").copied().unwrap_or(1);
    }
    if m.get_one::<String>("posted-sends").map(String::as_str) != Some("measured") {
        p.send_post.clear();
    }
    Ok(p)
}

enum Built {
    Phased(Box<dyn PhasedAny>),
    Goal(GoalGraph),
    Replay(Box<Replay>),
}

/// A phased schedule that can be simulated or written as GOAL.
trait PhasedAny {
    fn simulate(&mut self, config: Config, progress: bool) -> Result<(Outcome, String)>;
    fn emit(&self, unit_ps: u64, w: &mut dyn Write) -> std::io::Result<()>;
}

struct PhasedBox<S: PhaseSchedule>(Option<S>);

impl<S: PhaseSchedule> PhasedAny for PhasedBox<S> {
    fn simulate(&mut self, config: Config, progress: bool) -> Result<(Outcome, String)> {
        let mut wl = Phased::new(self.0.take().expect("simulated once"));
        let desc = wl.describe();
        let outcome = if progress {
            // a schedule generated while it runs cannot say its size in advance
            engine::run(config, &mut Reported::new(&mut wl, None))?
        } else {
            engine::run(config, &mut wl)?
        };
        Ok((outcome, desc))
    }
    fn emit(&self, unit_ps: u64, mut w: &mut dyn Write) -> std::io::Result<()> {
        write_goal(self.0.as_ref().expect("not yet simulated"), unit_ps, &mut w)
    }
}

/// The model's per-call cost of the collective asked for (none without a model,
/// for other workloads, or with `--call-costs off`).
fn call_cost(m: &ArgMatches, src: &mut Sources) -> Result<CallCost> {
    let (Some(path), Some(spec)) = (
        m.get_one::<String>("model"),
        m.get_one::<String>("collective"),
    ) else {
        return Ok(CallCost::NONE);
    };
    if m.get_one::<String>("call-costs").map(String::as_str) == Some("off") {
        return Ok(CallCost::NONE);
    }
    let costs = src.call_costs(path, m.get_one::<String>("library").map(String::as_str))?;
    let op = spec.split(':').next().unwrap_or(spec);
    Ok(costs.lookup(op, *m.get_one::<u64>("n").expect("has default")))
}

fn build_workload(
    m: &ArgMatches,
    params: &Params,
    unit: Unit,
    call: CallCost,
    src: &mut Sources,
) -> Result<Built> {
    let chosen: Vec<&str> = ["collective", "goal", "app", "replay"]
        .into_iter()
        .filter(|k| m.get_one::<String>(k).is_some())
        .collect();
    if chosen.len() != 1 {
        return Err(SimError::Usage(
            "give exactly one of --collective, --goal, --app, --replay".into(),
        ));
    }
    if let Some(dir) = m.get_one::<String>("replay") {
        return Ok(Built::Replay(Box::new(load_replay(m, dir, params, src)?)));
    }
    for flag in ["replay-costs", "other-as-compute", "list-signatures"] {
        if m.value_source(flag) == Some(clap::parser::ValueSource::CommandLine) {
            return Err(SimError::Usage(format!("--{flag} needs --replay")));
        }
    }
    let p = *m.get_one::<u32>("p").expect("has default");
    let unit_ps = unit.to_ps(1.0, "unit")?;
    if let Some(spec) = m.get_one::<String>("collective") {
        let alg = collectives::parse(spec)?;
        let n = *m.get_one::<u64>("n").expect("has default");
        let c = Collective::new(alg, p, n, params.gamma)?.with_call_cost(call.first(n));
        return Ok(Built::Phased(Box::new(PhasedBox(Some(c)))));
    }
    if let Some(path) = m.get_one::<String>("goal") {
        let file = std::fs::File::open(path)
            .map_err(|e| SimError::Input(format!("cannot read GOAL file {path}: {e}")))?;
        let reader = std::io::BufReader::with_capacity(1 << 20, file);
        return Ok(Built::Goal(GoalGraph::parse_reader(reader, path, unit_ps)?));
    }
    let app = m.get_one::<String>("app").expect("one was chosen");
    if app != "jacobi" {
        return Err(SimError::Usage(format!(
            "unknown application '{app}' (use jacobi)"
        )));
    }
    let op_cost = unit.to_ps(opt_f64(m, "op-cost").unwrap_or(1.0), "op-cost")?;
    let ex = Exchange::parse(m.get_one::<String>("exchange").expect("has default"))?;
    let j = Jacobi::new(
        *m.get_one::<u64>("unknowns").expect("has default"),
        p,
        *m.get_one::<u32>("iterations").expect("has default"),
        op_cost,
        ex,
    )?;
    Ok(Built::Phased(Box::new(PhasedBox(Some(j)))))
}

fn load_replay(m: &ArgMatches, dir: &str, params: &Params, src: &mut Sources) -> Result<Replay> {
    let scale = *m.get_one::<f64>("compute-scale").expect("has default");
    if !scale.is_finite() || scale < 0.0 {
        return Err(SimError::Usage(format!(
            "--compute-scale {scale} is not a non-negative number"
        )));
    }
    let mode = CollectiveMode::parse(m.get_one::<String>("collectives").expect("has default"))?;
    let costs = match m.get_one::<String>("replay-costs") {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SimError::Input(format!("cannot read replay costs {path}: {e}")))?;
            replay::parse_costs(&text, path)?
        }
        None => Default::default(),
    };
    // what a replay charges beyond LogGP, each from the model's loggp section (none without one)
    let (model, library) = (
        m.get_one::<String>("model").map(String::as_str),
        m.get_one::<String>("library").map(String::as_str),
    );
    let opts = replay::Options {
        compute_scale: scale,
        other_as_compute: m.get_flag("other-as-compute"),
        collectives: mode,
        costs,
        gamma: params.gamma,
        list_only: m.get_flag("list-signatures"),
        local_copy: replay::LocalCopy::from_params(params),
        first_touch: from_model(model, |path| src.first_touch(path, library))?,
        replace_copy: from_model(model, |path| src.replace_copy(path, library))?,
        exchange_excess: from_model(model, |path| src.exchange_excess(path, library))?,
        misaligned_copy: from_model(model, |path| src.misaligned_copy(path, library))?,
        written_send: from_model(model, |path| src.written_send(path, library))?,
        copy_footprint: from_model(model, |path| src.copy_footprint(path, library))?,
        request_growth: from_model(model, |path| src.request_growth(path, library))?,
        collective_start: from_model(model, |path| src.collective_start(path, library))?,
    };
    let mut replay = src.replay(dir, &opts)?;
    replay.price_exchanges(params.eager_max);
    Ok(replay)
}

/// `read` of the model file when one was given, else the section's default (nothing charged).
fn from_model<T: Default>(model: Option<&str>, read: impl FnOnce(&str) -> Result<T>) -> Result<T> {
    model.map_or_else(|| Ok(T::default()), read)
}

/// `--list-signatures`: the collective calls a replay would price.
fn signatures_json(r: &Replay) -> Value {
    json!({
        "format": "commchar-replay-signatures",
        "version": 1,
        "ranks": r.ranks(),
        "calls": r.calls,
        "signatures": r.signatures.iter().map(|(s, u)| json!({
            "call": s.call, "p": s.p, "n": s.n, "calls": u.calls,
        })).collect::<Vec<_>>(),
    })
}

fn breakdown_json(b: &Breakdown, u: &dyn Fn(u64) -> f64) -> Value {
    json!({
        "compute": u(b.compute),
        "communication": u(b.comm),
        "sync_wait": u(b.sync),
    })
}

/// Per rank: finish time, breakdown, and per phase (Pcontrol marks).
fn breakdown_section(o: &Outcome, u: &dyn Fn(u64) -> f64) -> Option<Value> {
    let per_rank = o.breakdown.as_ref()?;
    let mut marks: Vec<Vec<&engine::PhaseMark>> = vec![Vec::new(); per_rank.len()];
    for mk in &o.marks {
        marks[mk.rank as usize].push(mk);
    }
    let ranks = per_rank
        .iter()
        .enumerate()
        .map(|(r, b)| {
            let mut phases = Vec::new();
            let (mut start, mut before, mut level) = (0u64, Breakdown::default(), None);
            let ends = marks[r]
                .iter()
                .map(|mk| (mk.time, mk.so_far, Some(mk.level)))
                .chain(std::iter::once((o.finish[r], *b, None)));
            for (i, (end, so_far, next_level)) in ends.enumerate() {
                let mut v = breakdown_json(&so_far.minus(&before), u);
                v["phase"] = json!(i);
                v["level"] = json!(level);
                v["start"] = json!(u(start));
                v["time"] = json!(u(end - start));
                phases.push(v);
                (start, before, level) = (end, so_far, next_level);
            }
            let mut v = breakdown_json(b, u);
            v["rank"] = json!(r);
            v["finish"] = json!(u(o.finish[r]));
            v["phases"] = json!(phases);
            v
        })
        .collect::<Vec<_>>();
    Some(json!(ranks))
}

fn replay_json(r: &Replay, scale: f64, unit: Unit) -> Value {
    let ns = |t: u64| t as f64 * 1000.0 / unit.picos();
    json!({
        "collectives": r.mode.name(),
        "calls": r.calls,
        "compute_scale": scale,
        "other_as_compute": r.other_calls.iter().map(|(n, c)| json!({"call": n, "count": c})).collect::<Vec<_>>(),
        "io_as_compute": r.io_calls.iter().map(|(n, c)| json!({"call": n, "count": c})).collect::<Vec<_>>(),
        "misaligned_copies": json!({"messages": r.misaligned.0, "time": unit.from_ps(r.misaligned.1)}),
        "footprint_copies": json!({"messages": r.footprint.0, "time": unit.from_ps(r.footprint.1)}),
        "written_sends": json!({"messages": r.written.0, "time": unit.from_ps(r.written.1)}),
        "signatures": r.signatures.iter().map(|(s, u)| json!({
            "call": s.call, "p": s.p, "n": s.n, "calls": u.calls, "mode": u.mode,
            "algorithm": u.algorithm, "cost": u.cost_ps.map(|c| unit.from_ps(c)),
        })).collect::<Vec<_>>(),
        "measured": r.measured.iter().enumerate().map(|(rank, m)| {
            let mut bounds: Vec<(Option<i32>, u64)> = vec![(None, 0)];
            bounds.extend(m.marks.iter().map(|&(l, t)| (Some(l), t)));
            let phases = bounds.iter().enumerate().map(|(i, &(level, start))| {
                let end = bounds.get(i + 1).map_or(m.wall_ns, |b| b.1);
                json!({"phase": i, "level": level, "start": ns(start), "time": ns(end.saturating_sub(start))})
            }).collect::<Vec<_>>();
            json!({"rank": rank, "wall": ns(m.wall_ns), "host": m.host, "library": m.library,
                   "buffer_bytes": m.buffer_bytes, "phases": phases})
        }).collect::<Vec<_>>(),
    })
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn result_json(
    o: &Outcome,
    desc: &str,
    topo: &str,
    congestion: &str,
    p: &Params,
    unit: Unit,
    wall: f64,
) -> Value {
    let u = |ps: u64| unit.from_ps(ps);
    let n = o.finish.len().max(1) as f64;
    let mean = o.finish.iter().map(|&f| f as f64).sum::<f64>() / n;
    let argmax = o
        .finish
        .iter()
        .enumerate()
        .max_by_key(|(i, &f)| (f, std::cmp::Reverse(*i)))
        .map(|(i, _)| i);
    let mut sorted = o.finish.clone();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    json!({
        "format": "commchar-sim-result",
        "version": 1,
        "workload": desc,
        "ranks": o.ranks,
        "topology": topo,
        "congestion": congestion != "off",
        "congestion_model": match congestion { "on" => "links", "flow" => "flow", _ => "none" },
        "unit": unit.name(),
        "params": {
            "L": u(p.l), "o_s": u(p.o_s), "o_r": u(p.o_r), "g": u(p.g), "G": u(p.big_g), "O": u(p.big_o),
            "S": p.eager_max, "gamma": u(p.gamma), "hop": u(p.hop),
            "regimes": p.regimes.iter().map(|r| json!({
                "n_min": r.start, "o_s": u(r.cost.o_s), "o_r": u(r.cost.o_r),
                "G": u(r.cost.big_g), "O": u(r.cost.big_o), "O_r": r.cost.big_o_r.map(u), "L": r.cost.l.map(u),
            })).collect::<Vec<_>>(),
            "rendezvous": match p.rendezvous { Rendezvous::Match => "match", Rendezvous::Handshake => "handshake" },
            "rendezvous_copy": p.rendezvous_copy.name(),
            "arrivals": if p.taken_in_calls { "at the next call" } else { "when the CPU is free" },
            "cold_start": p.cold_start.map(|cs| json!({
                "messages": cs.messages, "o_s": u(cs.o_s), "O_s": u(cs.big_o_s),
                "o_r": u(cs.o_r), "O_r": u(cs.big_o_r), "first_us": u(cs.first),
                "min_bytes": cs.min_bytes, "max_bytes": cs.max_bytes,
                "rendezvous_first_us": u(cs.rendezvous_first), "rendezvous_reverse_us": u(cs.rendezvous_reverse),
            })),
            "noise": p.noise.as_ref().and_then(|nz| nz.summary_for(o.ranks)).map(|(from_p, measured, drawn)| json!({
                "seed": p.noise.as_ref().map_or(0, |nz| nz.seed), "measured_p": from_p,
                "measured_fraction": measured, "fraction": drawn, "held_ranks": commchar_sim::noise::HELD_BY_COSTS,
            })),
        },
        "makespan": u(o.makespan()),
        "makespan_ps": o.makespan(),
        "finish": {
            "min": u(sorted.first().copied().unwrap_or(0)),
            "median": u(median),
            "mean": mean / unit.picos(),
            "max": u(o.makespan()),
            "last_rank": argmax,
        },
        "events": o.events,
        "messages": o.messages,
        "rendezvous_messages": o.rendezvous,
        "peak_queue": o.peak_queue,
        "performance": {
            "wall_s": wall,
            "events_per_s": if wall > 0.0 { o.events as f64 / wall } else { 0.0 },
            "peak_rss_bytes": peak_rss_bytes(),
        },
    })
}

fn print_text(v: &Value) {
    let f = |x: &Value| x.as_f64().unwrap_or(0.0);
    let unit = v["unit"].as_str().unwrap_or("");
    println!("workload      {}", v["workload"].as_str().unwrap_or(""));
    println!(
        "topology      {} (congestion {})",
        v["topology"].as_str().unwrap_or(""),
        match v["congestion_model"].as_str() {
            Some("links") => "on",
            Some("flow") => "flow level",
            _ => "off",
        }
    );
    println!("makespan      {:.3} {unit}", f(&v["makespan"]));
    let fin = &v["finish"];
    println!(
        "rank finish   min {:.3}  median {:.3}  mean {:.3}  max {:.3} {unit} (last: rank {})",
        f(&fin["min"]),
        f(&fin["median"]),
        f(&fin["mean"]),
        f(&fin["max"]),
        fin["last_rank"]
    );
    println!(
        "events        {} ({} messages, {} rendezvous)",
        v["events"], v["messages"], v["rendezvous_messages"]
    );
    if let Some(ranks) = v["breakdown"].as_array() {
        println!("rank          finish  computation  communication  sync wait ({unit})");
        for b in ranks.iter().take(32) {
            println!(
                "{:>4}  {:>14.3} {:>12.3} {:>14.3} {:>10.3}",
                b["rank"],
                f(&b["finish"]),
                f(&b["compute"]),
                f(&b["communication"]),
                f(&b["sync_wait"])
            );
        }
        if ranks.len() > 32 {
            println!("      ({} more ranks in --json)", ranks.len() - 32);
        }
    }
    let perf = &v["performance"];
    println!(
        "wall time     {:.3} s ({:.2} M events/s)",
        f(&perf["wall_s"]),
        f(&perf["events_per_s"]) / 1e6
    );
    if let Some(b) = perf["peak_rss_bytes"].as_u64() {
        println!("peak memory   {:.1} MiB", b as f64 / 1048576.0);
    }
}

/// The node's shared copy bandwidth for a flow-level network: its gap in ps per
/// byte (`--node-G`, else the model's concurrency section) and each rank's node
/// (`--ranks-per-node`, else a replay's hosts). None when either is missing, or
/// when the gap comes from the model and the network is not flow-level; flags
/// asking for it there are refused.
fn node_resource(
    m: &ArgMatches,
    built: &Built,
    ranks: u32,
    congestion: &str,
    unit: Unit,
    src: &mut Sources,
) -> Result<Option<(f64, f64, Vec<u32>)>> {
    let given = |flag: &str| m.value_source(flag) == Some(clap::parser::ValueSource::CommandLine);
    let explicit = given("node-G") || given("ranks-per-node") || given("node-c");
    if explicit && congestion != "flow" {
        return Err(SimError::Usage(
            "--node-G, --node-c and --ranks-per-node charge a node's shared bandwidth at the flow level: add --congestion flow"
                .into(),
        ));
    }
    let model = m.get_one::<String>("model");
    if let Some(path) = model {
        src.model_text(path)?;
    }
    let library = m.get_one::<String>("library").map(String::as_str);
    let cost = match opt_f64(m, "node-c") {
        Some(c) if c.is_finite() && c >= 0.0 => c * unit.picos(),
        Some(c) => {
            return Err(SimError::Usage(format!(
                "--node-c {c} is not a non-negative time"
            )))
        }
        None => match model {
            Some(path) => src.node_cost(path, library)?,
            None => 0.0,
        },
    };
    let gap = match opt_f64(m, "node-G") {
        Some(g) if g.is_finite() && g > 0.0 => Some(g * unit.picos()),
        Some(g) => {
            return Err(SimError::Usage(format!(
                "--node-G {g} is not a positive time per byte"
            )))
        }
        None => match model {
            Some(path) => src.node_gap(path, library)?,
            None => None,
        },
    };
    let node_of: Option<Vec<u32>> = match (m.get_one::<u32>("ranks-per-node"), built) {
        (Some(&per), _) => Some((0..ranks).map(|r| r / per).collect()),
        (None, Built::Replay(r)) => {
            let mut seen: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
            Some(
                r.measured
                    .iter()
                    .map(|x| {
                        let next = seen.len() as u32;
                        *seen.entry(x.host.as_str()).or_insert(next)
                    })
                    .collect(),
            )
        }
        (None, _) => None,
    };
    match (gap, node_of) {
        (Some(gap), Some(of)) if congestion == "flow" => Ok(Some((gap, cost, of))),
        (None, _) if given("ranks-per-node") => Err(SimError::Usage(
            "--ranks-per-node needs a node's copy gap: --node-G, or a model with a concurrency section"
                .into(),
        )),
        _ => Ok(None),
    }
}

/// The result's `params.node`: the node's gap and bandwidth, and how ranks sit on nodes.
fn node_json(gap: f64, cost: f64, of: &[u32], unit: Unit) -> Value {
    let nodes = of.iter().copied().max().map_or(0, |n| n as u64 + 1);
    let mut count = vec![0u32; nodes as usize];
    of.iter().for_each(|&n| count[n as usize] += 1);
    let shared = count.iter().filter(|&&c| c > 1).count();
    let most = count.iter().copied().max().unwrap_or(0);
    json!({
        "G_node": gap / unit.picos(),
        "c_node": cost / unit.picos(),
        "B_node_bytes_per_us": 1e6 / gap,
        "nodes": nodes,
        "shared_nodes": shared,
        "most_ranks_on_a_node": most,
    })
}

/// What one run gives: printed by a single run, one JSON line in batch mode.
enum Answer {
    /// `--list`: the collective algorithms.
    Names(Vec<&'static str>),
    /// `--list-signatures`: always JSON.
    Signatures(Value),
    /// `--emit-goal`: the file written.
    Written(String),
    /// A simulation's result, printed as text unless `--json`.
    Result(Value),
}

impl Answer {
    fn print(self, json: bool) {
        match self {
            Answer::Names(names) => names.iter().for_each(|n| println!("{n}")),
            Answer::Signatures(v) => println!("{v}"),
            Answer::Written(_) => {}
            Answer::Result(v) if json => println!("{v}"),
            Answer::Result(v) => print_text(&v),
        }
    }

    fn into_json(self) -> Value {
        match self {
            Answer::Names(names) => json!(names),
            Answer::Signatures(v) | Answer::Result(v) => v,
            Answer::Written(path) => json!({"written": path}),
        }
    }
}

fn run(m: &ArgMatches, src: &mut Sources) -> Result<Answer> {
    if m.get_flag("list") {
        return Ok(Answer::Names(collectives::names()));
    }
    let unit = Unit::parse(m.get_one::<String>("unit").expect("has default"))?;
    let call = call_cost(m, src)?;
    let params = build_params(m, unit, src)?.scaled(call.scale);
    // wall time and events per second include reading the workload (a GOAL file, a trace)
    let t0 = Instant::now();
    let built = build_workload(m, &params, unit, call, src)?;
    if let (Built::Replay(r), true) = (&built, m.get_flag("list-signatures")) {
        return Ok(Answer::Signatures(signatures_json(r)));
    }
    if let Some(path) = m.get_one::<String>("emit-goal") {
        let unit_ps = unit.to_ps(1.0, "unit")?;
        let write = |emit: &dyn Fn(&mut dyn Write) -> std::io::Result<()>| {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            emit(&mut w)?;
            w.flush()
        };
        let written = match &built {
            Built::Phased(sched) => write(&|w| sched.emit(unit_ps, w)),
            Built::Replay(r) if !r.has_charged() => write(&|mut w| r.write_goal(unit_ps, &mut w)),
            Built::Replay(_) => {
                return Err(SimError::Usage(
                    "--emit-goal writes a replay with --collectives expanded only".into(),
                ))
            }
            Built::Goal(_) => {
                return Err(SimError::Usage(
                    "--emit-goal needs --collective, --app or --replay".into(),
                ))
            }
        };
        written.map_err(|e| SimError::Input(format!("cannot write {path}: {e}")))?;
        return Ok(Answer::Written(path.clone()));
    }
    let ranks = match &built {
        Built::Phased(_) => *m.get_one::<u32>("p").expect("has default"),
        Built::Goal(g) => g.ranks(),
        Built::Replay(r) => r.ranks(),
    };
    let topo_spec = m.get_one::<String>("topology").expect("has default");
    let topo = topology::parse(topo_spec, ranks)?;
    let topo_name = topo.name();
    let congestion = m
        .get_one::<String>("congestion")
        .expect("has default")
        .as_str();
    let node_plan = node_resource(m, &built, ranks, congestion, unit, src)?;
    let half_duplex = m
        .get_one::<String>("links")
        .is_some_and(|l| l == "half-duplex");
    let store_forward = m
        .get_one::<String>("routing")
        .is_some_and(|r| r == "store-and-forward");
    let wires = Network::new(topo, params.hop).with_links(half_duplex, store_forward);
    let (network, node): (Net, _) = match congestion {
        // a link moves bytes as fast as the fastest message does alone; with G = 0
        // only a node's copy bandwidth is left to share
        "flow" if params.fastest_gap_per_byte() == 0 && node_plan.is_none() => {
            return Err(SimError::Usage(
                "--congestion flow needs G > 0 (from the model or --G): with G = 0 links have no bandwidth to share".into(),
            ))
        }
        "flow" => {
            let flows = FlowLevel::new(wires, params.fastest_gap_per_byte());
            match node_plan {
                Some((gap, cost, of)) => {
                    let desc = node_json(gap, cost, &of, unit);
                    (flows.with_node_resource(of, gap, cost).into(), Some(desc))
                }
                None => (flows.into(), None),
            }
        }
        "on" => (Reserved::new(wires).into(), None),
        _ => (Ideal::new(wires).into(), None),
    };
    let trace_path = m.get_one::<String>("trace");
    let config = Config {
        network,
        params: params.clone(),
        trace_limit: trace_path.map(|_| TRACE_LIMIT),
    };
    let mut replayed = None;
    let progress = m.get_flag("progress");
    let (outcome, desc) = match built {
        Built::Phased(mut s) => s.simulate(config, progress)?,
        Built::Goal(mut g) => {
            let d = g.describe();
            let o = if progress {
                let total = g.unfinished();
                engine::run(config, &mut Reported::new(&mut g, Some(total)))?
            } else {
                engine::run(config, &mut g)?
            };
            (o, d)
        }
        Built::Replay(mut r) => {
            let d = r.describe();
            let o = if progress {
                let total = r.unfinished();
                engine::run_accounted(config, &mut Reported::new(r.as_mut(), Some(total)))?
            } else {
                engine::run_accounted(config, r.as_mut())?
            };
            replayed = Some(r);
            (o, d)
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    if outcome.finish.contains(&u64::MAX) {
        // Costs saturate instead of wrapping: a time that reached the end of the range is no result.
        return Err(SimError::Usage(format!(
            "the run's times exceed what the simulator can represent ({:.0} days): \
             use smaller sizes or parameters",
            u64::MAX as f64 / 1e12 / 86400.0
        )));
    }
    if let (Some(path), Some(spans)) = (trace_path, outcome.trace.as_ref()) {
        if spans.len() >= TRACE_LIMIT {
            return Err(SimError::Usage(format!(
                "the run is too large to trace (more than {TRACE_LIMIT} spans)"
            )));
        }
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            commchar_sim::trace::write_chrome(spans, &mut w)?;
            w.flush()
        };
        write().map_err(|e| SimError::Input(format!("cannot write trace {path}: {e}")))?;
    }
    let mut v = result_json(&outcome, &desc, &topo_name, congestion, &params, unit, wall);
    v["params"]["call_cost"] = json!({"fixed": unit.from_ps(call.fixed),
        "per_byte": call.per_byte * unit.from_ps(1), "scale": call.scale});
    if let Some(node) = node {
        v["params"]["node"] = node;
    }
    if half_duplex {
        v["links"] = json!("half-duplex");
    }
    if store_forward {
        v["routing"] = json!("store-and-forward");
    }
    let u = |ps: u64| unit.from_ps(ps);
    if let Some(b) = breakdown_section(&outcome, &u) {
        v["breakdown"] = b;
    }
    if let Some(r) = &replayed {
        let scale = *m.get_one::<f64>("compute-scale").expect("has default");
        v["replay"] = replay_json(r, scale, unit);
    }
    Ok(Answer::Result(v))
}

/// The message of a command line clap refused: its first line.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    text.lines()
        .next()
        .unwrap_or("bad arguments")
        .trim_start_matches("error: ")
        .to_string()
}

/// One batch request: the flags of one run, answered as that run's JSON.
fn answer(args: Vec<String>, src: &mut Sources) -> Result<Value> {
    let argv = std::iter::once("commchar-sim".to_string()).chain(args);
    let m = cli()
        .try_get_matches_from(argv)
        .map_err(|e| SimError::Usage(clap_message(&e)))?;
    for flag in ["batch", "progress"] {
        if m.value_source(flag) == Some(clap::parser::ValueSource::CommandLine) {
            return Err(SimError::Usage(format!(
                "--{flag} is not a batch request's flag"
            )));
        }
    }
    Ok(run(&m, src)?.into_json())
}

/// `--batch`: every other flag comes with the requests.
fn serve(m: &ArgMatches) -> Result<()> {
    let given = m
        .ids()
        .filter(|id| id.as_str() != "batch")
        .find(|id| m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine));
    if let Some(id) = given {
        return Err(SimError::Usage(format!(
            "--batch takes every flag from its requests on stdin, not --{id}"
        )));
    }
    let mut src = Sources::for_batch();
    let stdin = std::io::stdin().lock();
    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    batch::serve(stdin, stdout, |args| answer(args, &mut src))
        .map_err(|e| SimError::Input(format!("batch: {e}")))
}

fn main() {
    let matches = match cli().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                std::process::exit(0);
            }
            eprintln!("commchar-sim: {}", clap_message(&e));
            std::process::exit(2);
        }
    };
    let done = if matches.get_flag("batch") {
        serve(&matches)
    } else {
        run(&matches, &mut Sources::default()).map(|a| a.print(matches.get_flag("json")))
    };
    if let Err(e) = done {
        eprintln!("commchar-sim: {e}");
        std::process::exit(e.exit_code());
    }
}
