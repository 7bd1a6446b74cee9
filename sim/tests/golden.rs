//! Same input, same output: repeated runs and a stored golden result.

mod common;
use common::{params, run_with};

fn fingerprint(spec: &str, p: u32, topo: &str, congestion: bool) -> String {
    let mut prm = params(1);
    prm.hop = 100 * common::NS;
    prm.eager_max = 4096;
    let out = run_with(spec, p, 10_000, prm, topo, congestion);
    let sum: u128 = out.finish.iter().map(|&f| f as u128).sum();
    format!(
        "{spec} {topo} {congestion}: makespan={} sum={} events={} messages={}",
        out.makespan(),
        sum,
        out.events,
        out.messages
    )
}

const CASES: &[(&str, u32, &str, bool)] = &[
    ("allreduce:rabenseifner", 64, "hypercube", true),
    ("alltoall:direct", 27, "torus:3x3x3", true),
    ("bcast:scatter_allgather", 16, "fattree:4", true),
    ("allgather:bruck", 12, "torus:4x3", false),
];

#[test]
fn repeated_runs_are_identical() {
    for &(spec, p, topo, cong) in CASES {
        let a = fingerprint(spec, p, topo, cong);
        let b = fingerprint(spec, p, topo, cong);
        assert_eq!(a, b);
        let out1 = run_with(spec, p, 10_000, params(1), topo, cong);
        let out2 = run_with(spec, p, 10_000, params(1), topo, cong);
        assert_eq!(out1, out2);
    }
}

#[test]
fn results_match_the_golden_file() {
    let got: Vec<String> = CASES
        .iter()
        .map(|&(s, p, t, c)| fingerprint(s, p, t, c))
        .collect();
    let want = include_str!("golden/results.txt");
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(got, want);
}

/// The binary run twice in two processes gives the same result: a second run in
/// one process would share whatever process-wide state (hash seeds, allocation
/// order) the first saw, and could not catch output that depends on it.
#[test]
fn two_processes_give_identical_output() {
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_commchar-sim"))
            .args([
                "--collective",
                "alltoall:direct",
                "--p",
                "27",
                "--n",
                "4096",
                "--topology",
                "torus:3x3x3",
                "--congestion",
                "on",
                "--json",
            ])
            .output()
            .expect("the simulator runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON result");
        // wall-clock time and memory are the machine's, not the simulation's
        doc.as_object_mut().expect("object").remove("performance");
        doc
    };
    let (a, b) = (run(), run());
    assert!(a.get("makespan").is_some());
    assert_eq!(a, b);
}
