//! `commchar-sim --batch`: one process answers every request as a process of its
//! own would, to the picosecond, failed requests included, and goes on serving.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const SIM: &str = env!("CARGO_BIN_EXE_commchar-sim");

/// The result of one run in a process of its own: its JSON, or the error line
/// and exit code the batch answer must repeat.
fn single(args: &[&str]) -> Value {
    let out = Command::new(SIM)
        .args(args)
        .arg("--json")
        .output()
        .expect("the simulator runs");
    if out.status.success() {
        return without_performance(serde_json::from_slice(&out.stdout).expect("JSON"));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().next().unwrap_or("");
    serde_json::json!({
        "error": line.trim_start_matches("commchar-sim: "),
        "exit_code": out.status.code().expect("an exit code"),
    })
}

fn without_performance(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("performance");
    }
    v
}

#[test]
fn a_batch_answers_as_single_runs_do() {
    let requests: Vec<Vec<&str>> = vec![
        vec!["--collective", "bcast:binomial", "--n", "8", "--p", "4"],
        vec![
            "--collective",
            "allreduce:rabenseifner",
            "--n",
            "1048576",
            "--p",
            "16",
            "--S",
            "65536",
        ],
        vec!["--collective", "bcast:nosuch"],
        vec![
            "--collective",
            "alltoall:pairwise",
            "--n",
            "4096",
            "--p",
            "9",
            "--topology",
            "torus:3x3",
            "--congestion",
            "on",
            "--hop",
            "50",
        ],
        vec![
            "--app",
            "jacobi",
            "--unknowns",
            "16",
            "--p",
            "4",
            "--iterations",
            "3",
        ],
        vec!["--goal", "/nonexistent/schedule.goal"],
        vec!["--collective", "bcast:binomial", "--n", "8", "--p", "4"],
    ];
    let mut child = Command::new(SIM)
        .arg("--batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the simulator runs");
    let mut stdin = child.stdin.take().expect("piped");
    for r in &requests {
        writeln!(stdin, "{}", serde_json::to_string(r).unwrap()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().expect("the batch ends");
    assert!(out.status.success());
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| without_performance(serde_json::from_str(l).expect("one JSON line")))
        .collect();
    assert_eq!(answers.len(), requests.len());
    for (r, a) in requests.iter().zip(&answers) {
        assert_eq!(a, &single(r), "{r:?}");
    }
    assert_eq!(answers[0], answers[6]);
    assert_eq!(answers[2]["exit_code"], 2);
    assert_eq!(answers[5]["exit_code"], 3);
}
