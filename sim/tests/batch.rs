//! `commchar-sim --batch`: one process answers every request as a process of its
//! own would, to the picosecond, failed requests included, and goes on serving;
//! it reads a trace's files once for all the requests that replay it.

mod common;
use commchar_sim::trace_calls as call;
use common::R;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
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

/// A two-rank trace: rank 0 sends 1 KiB to rank 1, then both call a barrier.
fn write_trace(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let end = 1000 + 20_000;
    for rank in 0..2 {
        let first = if rank == 0 {
            R {
                call: call::SEND,
                peer: 1,
                bytes: 1024,
                ..R::default()
            }
        } else {
            R {
                call: call::RECV,
                peer: 0,
                bytes2: 1024,
                aux: 0,
                ..R::default()
            }
        };
        let barrier = R {
            call: call::BARRIER,
            peer: -1,
            ..R::default()
        };
        let mut bytes = common::rank_header(rank, 2, 1000, end, 2, b"host");
        bytes.extend_from_slice(&common::record(first, 2000, 12_000));
        bytes.extend_from_slice(&common::record(barrier, 13_000, 19_000));
        std::fs::write(dir.join(format!("rank-{rank}.cctrace")), bytes).unwrap();
    }
}

/// A trace directory removed when the test ends, pass or fail.
struct TraceDir(PathBuf);

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One request line answered by a running batch process.
fn ask(stdin: &mut impl Write, stdout: &mut impl BufRead, args: &[&str]) -> Value {
    writeln!(stdin, "{}", serde_json::to_string(args).unwrap()).unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).expect("an answer line");
    without_performance(serde_json::from_str(&line).expect("one JSON line"))
}

#[test]
fn a_batch_reads_a_trace_once_for_its_signatures_and_its_replays() {
    let dir = TraceDir(std::env::temp_dir().join(format!("commchar-batch-{}", std::process::id())));
    write_trace(&dir.0);
    let trace = dir.0.to_str().unwrap().to_string();
    let listed = ["--replay", &trace, "--unit", "us", "--list-signatures"];
    let priced = [
        "--replay",
        &trace,
        "--unit",
        "us",
        "--collectives",
        "expanded",
    ];
    let (want_listed, want_priced) = (single(&listed), single(&priced));
    assert!(
        want_priced["makespan"].as_f64().unwrap() > 0.0,
        "{want_priced}"
    );
    let mut child = Command::new(SIM)
        .arg("--batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the simulator runs");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
    assert_eq!(ask(&mut stdin, &mut stdout, &listed), want_listed);
    // the files are gone: the replays that follow take the trace the listing read
    std::fs::remove_dir_all(&dir.0).unwrap();
    assert_eq!(ask(&mut stdin, &mut stdout, &priced), want_priced);
    let eager = ask(
        &mut stdin,
        &mut stdout,
        &[&priced[..], &["--S", "inf"]].concat(),
    );
    assert_eq!(eager["replay"], want_priced["replay"]);
    // the replay to run was built: the bytes are let go, and other options read the files again
    let scaled = ask(
        &mut stdin,
        &mut stdout,
        &[&priced[..], &["--compute-scale", "2"]].concat(),
    );
    assert_eq!(scaled["exit_code"], 3, "{scaled}");
    drop(stdin);
    assert!(child.wait().expect("the batch ends").success());
    // a process of its own reads the files, which are gone
    assert_eq!(single(&priced)["exit_code"], 3);
}
