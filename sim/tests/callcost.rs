//! Per-call collective costs (model file `loggp.call_costs`): read from the
//! model, looked up by operation and size, and applied as CPU time before the
//! first message plus a scale on every cost of the call. Absent, nothing changes.

mod common;
use commchar_sim::engine::{self, Config, Outcome};
use commchar_sim::network::Network;
use commchar_sim::params::{call_costs_from_model, CallCost, Params};
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::phased::Phased;
use common::{params, run_with, NS};

fn run_collective(c: Collective, params: Params) -> Outcome {
    let net = Net::ideal(Network::new(
        topology::parse("full", c.p).expect("topology"),
        0,
    ));
    let mut wl = Phased::new(c);
    let config = Config {
        params,
        network: net,
        trace_limit: None,
    };
    engine::run(config, &mut wl).expect("run completes")
}

/// The one operation a model file must hold at least (the schema refuses a library without).
const PINGPONG: &str = r#"{"pingpong:send": {"kind": "p2p", "segments": [{"n_min": 0, "n_max": null, "t_s": 1, "t_b": 0.001}]}}"#;

fn model(call_costs: &str) -> String {
    format!(
        r#"{{"format": "commchar-model", "version": 1, "libraries": {{"lib": {{"operations": {PINGPONG},
        "loggp": {{"L": 1.0, "o_s": 0.5, "o_r": 0.5, "g": 0.1, "G": 0.001{call_costs}}}}}}}}}"#
    )
}

const TABLE: &str = r#", "call_costs": {"p": 2, "ops": {
    "allreduce": [{"n_min": 8, "n_max": 1024, "fixed": 0.25, "scale": 2.0},
                  {"n_min": 4096, "n_max": null, "fixed": 3.0, "scale": 0.5}],
    "bcast": [{"n_min": 1, "n_max": null, "fixed": 0.0, "scale": 1.5}],
    "scan": [{"n_min": 8, "n_max": null, "fixed": 0.5, "per_byte": 0.0005, "scale": 1.0}]}}"#;

#[test]
fn lookup_follows_the_regime_rule() {
    let costs = call_costs_from_model(&model(TABLE), "m.json", Some("lib")).expect("valid");
    let at = |op: &str, n: u64| costs.lookup(op, n);
    assert_eq!(at("allreduce", 0).fixed, 250_000);
    assert_eq!(at("allreduce", 1024).scale, 2.0);
    // a gap takes the nearer bound: 2560 is the midpoint of 1024 and 4096, ties go low
    assert_eq!(at("allreduce", 2560).scale, 2.0);
    assert_eq!(at("allreduce", 2561).scale, 0.5);
    assert_eq!(at("allreduce", 1 << 30).fixed, 3_000_000);
    assert_eq!(at("bcast", 7).scale, 1.5);
    assert_eq!(at("alltoall", 64), CallCost::NONE);
    // a per-byte cost grows the CPU time before the first message with the vector
    assert_eq!(at("scan", 4096).first(4096), 500_000 + 2_048_000);
    assert_eq!(at("allreduce", 4096).first(4096), 3_000_000);
}

#[test]
fn absent_call_costs_change_nothing() {
    let costs = call_costs_from_model(&model(""), "m.json", Some("lib")).expect("valid");
    assert!(costs.is_empty());
    assert_eq!(costs.lookup("allreduce", 64), CallCost::NONE);
    let p = params(3);
    assert_eq!(p.scaled(1.0), p);
}

#[test]
fn bad_tables_are_input_errors() {
    for bad in [
        r#", "call_costs": {"ops": {"bcast": []}}"#,
        r#", "call_costs": {"ops": {"bcast": [{"n_min": 0, "n_max": null, "fixed": -1, "scale": 1}]}}"#,
        r#", "call_costs": {"ops": {"bcast": [{"n_min": 0, "n_max": null, "fixed": 1}]}}"#,
        r#", "call_costs": {"ops": {"bcast": [{"n_min": 0, "fixed": 1, "scale": 1}, {"n_min": 9, "n_max": null, "fixed": 1, "scale": 1}]}}"#,
        r#", "call_costs": {"ops": {"bcast": [{"n_min": 8, "n_max": 16, "fixed": 1, "scale": 1}, {"n_min": 16, "n_max": null, "fixed": 1, "scale": 1}]}}"#,
        r#", "call_costs": {"p": 2}"#,
        r#", "call_costs": {"ops": {"scan": [{"n_min": 0, "n_max": null, "fixed": 1, "per_byte": -0.1, "scale": 1}]}}"#,
    ] {
        let err = call_costs_from_model(&model(bad), "m.json", Some("lib")).unwrap_err();
        assert_eq!(err.exit_code(), 3, "{bad}: {err}");
    }
}

#[test]
fn fixed_cost_comes_first_and_scale_multiplies_the_call() {
    let (n, p) = (4096u64, 4u32);
    for spec in [
        "allreduce:recursive_doubling",
        "bcast:binomial",
        "alltoall:pairwise",
    ] {
        let bare = run_with(spec, p, n, params(2), "full", false).makespan();
        let scaled = run_with(spec, p, n, params(2).scaled(2.5), "full", false).makespan();
        assert_eq!(
            scaled,
            bare * 5 / 2,
            "{spec}: every cost is linear in the scale"
        );
        let alg = collectives::parse(spec).expect("known");
        let c = Collective::new(alg, p, n, 2 * NS)
            .expect("valid")
            .with_call_cost(700 * NS);
        let with_call = run_collective(c, params(2)).makespan();
        assert_eq!(
            with_call,
            bare + 700 * NS,
            "{spec}: a fixed cost on every rank delays all"
        );
    }
}
