//! The `commchar-sim` command line: parses flags into a configuration value,
//! builds the workload, runs the engine and prints the result (text or JSON).

use clap::{Arg, ArgAction, ArgMatches, Command};
use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{self, Params, Rendezvous, Unit};
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::jacobi::{Exchange, Jacobi};
use commchar_sim::workload::phased::{write_goal, PhaseSchedule, Phased};
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
                .value_parser(["on", "off"])
                .help("links carry one message at a time per direction"),
        )
        .arg(time("hop", "latency per network hop (default 0)"))
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
                .value_parser(clap::value_parser!(u64))
                .help("longest eager message (LogGOPSim's S); longer ones use rendezvous"),
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

fn opt_f64(m: &ArgMatches, name: &str) -> Option<f64> {
    m.get_one::<f64>(name).copied()
}

fn build_params(m: &ArgMatches, unit: Unit) -> Result<Params> {
    let mut p = match m.get_one::<String>("model") {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SimError::Input(format!("cannot read model {path}: {e}")))?;
            params::from_model(
                &text,
                path,
                m.get_one::<String>("library").map(String::as_str),
            )?
        }
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
    Ok(p)
}

enum Built {
    Phased(Box<dyn PhasedAny>),
    Goal(GoalGraph),
}

/// A phased schedule that can be simulated or written as GOAL.
trait PhasedAny {
    fn simulate(&mut self, config: Config) -> Result<(Outcome, String)>;
    fn emit(&self, unit_ps: u64, w: &mut dyn Write) -> std::io::Result<()>;
}

struct PhasedBox<S: PhaseSchedule>(Option<S>);

impl<S: PhaseSchedule> PhasedAny for PhasedBox<S> {
    fn simulate(&mut self, config: Config) -> Result<(Outcome, String)> {
        let mut wl = Phased::new(self.0.take().expect("simulated once"));
        let desc = wl.describe();
        Ok((engine::run(config, &mut wl)?, desc))
    }
    fn emit(&self, unit_ps: u64, mut w: &mut dyn Write) -> std::io::Result<()> {
        write_goal(self.0.as_ref().expect("not yet simulated"), unit_ps, &mut w)
    }
}

fn build_workload(m: &ArgMatches, params: &Params, unit: Unit) -> Result<Built> {
    let chosen: Vec<&str> = ["collective", "goal", "app"]
        .into_iter()
        .filter(|k| m.get_one::<String>(k).is_some())
        .collect();
    if chosen.len() != 1 {
        return Err(SimError::Usage(
            "give exactly one of --collective, --goal, --app".into(),
        ));
    }
    let p = *m.get_one::<u32>("p").expect("has default");
    let unit_ps = unit.to_ps(1.0, "unit")?;
    if let Some(spec) = m.get_one::<String>("collective") {
        let alg = collectives::parse(spec)?;
        let n = *m.get_one::<u64>("n").expect("has default");
        let c = Collective::new(alg, p, n, params.gamma)?;
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
    congestion: bool,
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
        "congestion": congestion,
        "unit": unit.name(),
        "params": {
            "L": u(p.l), "o_s": u(p.o_s), "o_r": u(p.o_r), "g": u(p.g), "G": u(p.big_g), "O": u(p.big_o),
            "S": p.eager_max, "gamma": u(p.gamma), "hop": u(p.hop),
            "regimes": p.regimes.iter().map(|r| json!({
                "n_min": r.start, "o_s": u(r.cost.o_s), "o_r": u(r.cost.o_r),
                "G": u(r.cost.big_g), "O": u(r.cost.big_o),
            })).collect::<Vec<_>>(),
            "rendezvous": match p.rendezvous { Rendezvous::Match => "match", Rendezvous::Handshake => "handshake" },
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
        if v["congestion"] == true { "on" } else { "off" }
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

fn run(m: &ArgMatches) -> Result<()> {
    if m.get_flag("list") {
        for name in collectives::names() {
            println!("{name}");
        }
        return Ok(());
    }
    let unit = Unit::parse(m.get_one::<String>("unit").expect("has default"))?;
    let params = build_params(m, unit)?;
    // wall time and events per second include reading the workload (a GOAL file)
    let t0 = Instant::now();
    let built = build_workload(m, &params, unit)?;
    if let Some(path) = m.get_one::<String>("emit-goal") {
        let Built::Phased(sched) = &built else {
            return Err(SimError::Usage(
                "--emit-goal needs --collective or --app".into(),
            ));
        };
        let unit_ps = unit.to_ps(1.0, "unit")?;
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            sched.emit(unit_ps, &mut w)?;
            w.flush()
        };
        return write().map_err(|e| SimError::Input(format!("cannot write {path}: {e}")));
    }
    let ranks = match &built {
        Built::Phased(_) => *m.get_one::<u32>("p").expect("has default"),
        Built::Goal(g) => g.ranks(),
    };
    let topo_spec = m.get_one::<String>("topology").expect("has default");
    let topo = topology::parse(topo_spec, ranks)?;
    let topo_name = topo.name();
    let congestion = m.get_one::<String>("congestion").map(String::as_str) == Some("on");
    let trace_path = m.get_one::<String>("trace");
    let config = Config {
        network: Network::new(topo, params.hop, congestion),
        params: params.clone(),
        trace_limit: trace_path.map(|_| TRACE_LIMIT),
    };
    let (outcome, desc) = match built {
        Built::Phased(mut s) => s.simulate(config)?,
        Built::Goal(mut g) => {
            let d = g.describe();
            (engine::run(config, &mut g)?, d)
        }
    };
    let wall = t0.elapsed().as_secs_f64();
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
    let v = result_json(&outcome, &desc, &topo_name, congestion, &params, unit, wall);
    if m.get_flag("json") {
        println!("{v}");
    } else {
        print_text(&v);
    }
    Ok(())
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
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            eprintln!("commchar-sim: {first}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&matches) {
        eprintln!("commchar-sim: {e}");
        std::process::exit(e.exit_code());
    }
}
