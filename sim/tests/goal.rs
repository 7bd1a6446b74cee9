//! GOAL parsing and GOAL schedules in the engine.

mod common;
use commchar_sim::engine::{self, Config};
use commchar_sim::network::Network;
use commchar_sim::topology;
use commchar_sim::transport::Net;
use commchar_sim::workload::collectives::{self, Collective};
use commchar_sim::workload::goal::GoalGraph;
use commchar_sim::workload::phased::{write_goal, Phased};
use commchar_sim::SimError;
use common::{params, run_goal, NS};

fn simulate(text: &str) -> Result<commchar_sim::engine::Outcome, SimError> {
    run_goal(text, params(0))
}

#[test]
fn parses_the_reference_example() {
    let text = "num_ranks 4\nrank 0 {\n  l1: send 1024b to 1 tag 0\n  l2: recv 1024b from 3 tag 0\n  l3: calc 500\n  l2 requires l1\n}\n\
                rank 1 {\nl1: recv 1024b from 0 tag 0\nl2: send 1024b to 2 tag 0 // forward\nl2 requires l1\n}\n\
                rank 2 {\n/* relay */ l1: recv 1024b from 1 tag 0\nl2: send 1024b to 3 tag 0\nl2 requires l1\n}\n\
                rank 3 {\nl1: recv 1024b from -1 tag -1\nl2: send 1024b to 0 tag 0 cpu 0 nic 0\nl2 requires l1\n}\n";
    let g = GoalGraph::parse(text, "x", NS).unwrap();
    assert_eq!(g.len(), 9);
    let out = simulate(text).unwrap();
    let hop = 2 * 1500 + 2500 + 1023 * 6;
    assert_eq!(out.makespan(), 4 * hop * NS);
}

#[test]
fn irequires_starts_with_the_other() {
    // b may start once a has started: both sends leave back to back
    let text =
        "num_ranks 2\nrank 0 {\na: send 1b to 1 tag 0\nb: send 1b to 1 tag 1\nb irequires a\n}\n\
                rank 1 {\nx: recv 1b from 0 tag 0\ny: recv 1b from 0 tag 1\n}\n";
    let out = simulate(text).unwrap();
    // second send at max(o, g) = 1500; its message is received after the first's o
    assert_eq!(out.finish[1], (1500 + 1500 + 2500 + 1500) * NS);
}

#[test]
fn bad_input_is_an_error_with_a_line_number() {
    let cases = [
        ("rank 0 {\n}\n", "before 'num_ranks'"),
        (
            "num_ranks 2\nrank 0 {\nl1: send 10 to 1\n}\n",
            "test.goal:3: size '10'",
        ),
        ("num_ranks 2\nrank 0 {\nl1: send 10b to 5\n}\n", "peer '5'"),
        (
            "num_ranks 2\nrank 0 {\nl1 requires l2\n}\n",
            "undefined label",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5 cpu 1\n}\n",
            "only one CPU",
        ),
        ("num_ranks 2\nrank 0 {\nl1: calc 5\n", "not closed"),
        ("num_ranks 2\nrank 3 {\n}\n", "not below num_ranks"),
        ("num_ranks 2\nrank 0 {\nl1: jump 5\n}\n", "cannot parse"),
    ];
    for (text, want) in cases {
        let err = GoalGraph::parse(text, "test.goal", NS)
            .err()
            .expect(text)
            .to_string();
        assert!(err.contains(want), "{err:?} lacks {want:?}");
        assert!(!err.contains('\n'));
    }
}

#[test]
fn an_unmatched_receive_is_reported_as_deadlock() {
    let text = "num_ranks 2\nrank 0 {\n}\nrank 1 {\nr: recv 8b from 0 tag 0\n}\n";
    match simulate(text) {
        Err(SimError::Deadlock(m)) => assert!(m.contains("1 receives wait"), "{m}"),
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn emitted_goal_runs_to_the_same_makespan() {
    for spec in collectives::names() {
        let p = if spec.contains("rabenseifner") || spec.contains("recursive") {
            8
        } else {
            7
        };
        let alg = collectives::parse(spec).unwrap();
        let c = Collective::new(alg, p, 3000, 2 * NS).unwrap();
        let mut text = Vec::new();
        write_goal(&c, NS, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let mut prm = params(2);
        prm.eager_max = 1000; // some rendezvous too
        let mut g = GoalGraph::parse(&text, spec, NS).unwrap();
        let run = |w: &mut dyn FnMut(Config) -> u64| {
            let net = Net::ideal(Network::new(topology::parse("full", p).unwrap(), 0));
            w(Config {
                params: prm.clone(),
                network: net,
                trace_limit: None,
            })
        };
        let from_goal = run(&mut |cfg| engine::run(cfg, &mut g).unwrap().makespan());
        let mut ph = Phased::new(Collective::new(alg, p, 3000, 2 * NS).unwrap());
        let generated = run(&mut |cfg| engine::run(cfg, &mut ph).unwrap().makespan());
        assert_eq!(from_goal, generated, "{spec}");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn makespan_both_ways(spec: &str, p: u32, n: u64, eager_max: u64) -> (u64, u64) {
        let alg = collectives::parse(spec).unwrap();
        let mut prm = params(1);
        prm.eager_max = eager_max;
        let mut text = Vec::new();
        write_goal(&Collective::new(alg, p, n, NS).unwrap(), NS, &mut text).unwrap();
        let mut g = GoalGraph::parse(std::str::from_utf8(&text).unwrap(), spec, NS).unwrap();
        let net = || Net::ideal(Network::new(topology::parse("full", p).unwrap(), 0));
        let a = engine::run(
            Config {
                params: prm.clone(),
                network: net(),
                trace_limit: None,
            },
            &mut g,
        )
        .unwrap();
        let mut ph = Phased::new(Collective::new(alg, p, n, NS).unwrap());
        let b = engine::run(
            Config {
                params: prm,
                network: net(),
                trace_limit: None,
            },
            &mut ph,
        )
        .unwrap();
        (a.makespan(), b.makespan())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn a_schedule_and_its_goal_text_agree(
            spec in prop::sample::select(collectives::names()),
            k in 0u32..5, extra in 0u32..7, n in 0u64..200_000, eager_max in 0u64..100_000,
        ) {
            let p = (1 << k) + extra;
            let (from_goal, generated) = makespan_both_ways(spec, p, n, eager_max);
            prop_assert_eq!(from_goal, generated);
        }
    }
}
