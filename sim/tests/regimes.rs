//! Size-dependent (PLogP-style) costs: a regime table changes exactly the
//! o_s, o_r, G, O (and O_r, and L) a message pays, by its size, and nothing else.

mod common;
use commchar_sim::params::{from_model, MsgCost, Params, Regime};
use common::{params, run_goal, run_with, NS};

const L: u64 = 2500;

fn regime(start: u64, o_s: u64, o_r: u64, g: u64, o: u64) -> Regime {
    Regime {
        start,
        cost: MsgCost {
            o_s: o_s * NS,
            o_r: o_r * NS,
            big_g: g * NS,
            big_o: o * NS,
            big_o_r: None,
            l: None,
        },
    }
}

/// Small messages (< 1 KiB): o_s=100, o_r=200, G=3; from 1 KiB: o_s=700, o_r=900, G=40, O=50.
fn table() -> Params {
    Params {
        regimes: vec![regime(0, 100, 200, 3, 0), regime(1024, 700, 900, 40, 50)],
        ..params(0)
    }
}

#[test]
fn one_message_pays_its_regime_costs() {
    // bcast:binomial on 2 ranks is one message: o_s + L + o_r + (s-1)max(G, O)
    for (s, expect) in [
        (1u64, 100 + L + 200),
        (1023, 100 + L + 200 + 1022 * 3),
        (1024, 700 + L + 900 + 1023 * 50),
        (65536, 700 + L + 900 + 65535 * 50),
    ] {
        let got = run_with("bcast:binomial", 2, s, table(), "full", false).makespan();
        assert_eq!(got, expect * NS, "s={s}");
    }
}

#[test]
fn no_regimes_means_the_global_costs() {
    let s = 4096;
    let got = run_with("bcast:binomial", 2, s, params(0), "full", false).makespan();
    assert_eq!(got, (1500 + L + 1500 + (s - 1) * 6) * NS);
}

#[test]
fn lookup_picks_the_regime_by_size() {
    let p = table();
    assert_eq!(p.cost(0).o_s, 100 * NS);
    assert_eq!(p.cost(1023).big_g, 3 * NS);
    assert_eq!(p.cost(1024).o_r, 900 * NS);
    assert_eq!(p.cost(u64::MAX).big_o, 50 * NS);
}

/// The one operation a model file must hold at least (the schema refuses a library without).
const PINGPONG: &str = r#"{"pingpong:send": {"kind": "p2p", "segments": [{"n_min": 0, "n_max": null, "t_s": 1, "t_b": 0.001}]}}"#;

fn model(regimes: &str) -> String {
    format!(
        r#"{{"format": "commchar-model", "version": 1, "libraries": {{"x": {{"operations": {PINGPONG}, "loggp": {{
        "L": 1, "o_s": 2, "o_r": 3, "g": 0.5, "G": 0.001, "O": 0.0005, "S": 65536,
        "regimes": {regimes}}}}}}}}}"#
    )
}

#[test]
fn model_regimes_fill_gaps_by_the_nearest_bound() {
    let text = model(
        r#"[{"n_min": 0, "n_max": 16, "o_s": 0.1, "o_r": 0.2, "G": 0.01},
            {"n_min": 32, "n_max": 2048, "o_s": 0.3, "o_r": 0.4, "G": 0.002, "O": 0.001, "O_r": 0.0005},
            {"n_min": 4096, "n_max": null, "o_s": 0.5, "o_r": 0.6, "G": 0.0001}]"#,
    );
    let p = from_model(&text, "m.json", None).unwrap();
    assert_eq!(p.regimes.len(), 3);
    // 24 is as near 16 as 32: the lower regime; 25 is nearer 32
    assert_eq!(p.cost(24).o_s, 100_000);
    assert_eq!(p.cost(25).o_s, 300_000);
    assert_eq!(p.cost(3072).o_s, 300_000);
    assert_eq!(p.cost(3073).o_s, 500_000);
    // O absent in a regime: the global O
    assert_eq!(p.cost(8).big_o, 500);
    assert_eq!(p.cost(100).big_o, 1_000);
    assert_eq!(p.cost(1 << 30).big_g, 100);
    // O_r where given, else none (LogGOPSim's receiver)
    assert_eq!(p.cost(100).big_o_r, Some(500));
    assert_eq!((p.cost(8).big_o_r, p.cost(1 << 30).big_o_r), (None, None));
}

#[test]
fn bad_regimes_are_input_errors() {
    for (regimes, says) in [
        (r#"{}"#, "not a list"),
        (
            r#"[{"n_max": 1, "o_s": 1, "o_r": 1, "G": 1}]"#,
            "lacks n_min",
        ),
        (
            r#"[{"n_min": 0, "n_max": 9, "o_r": 1, "G": 1}]"#,
            "lacks o_s",
        ),
        (
            r#"[{"n_min": 0, "n_max": 9, "o_s": -1, "o_r": 1, "G": 1}]"#,
            "non-negative",
        ),
        (
            r#"[{"n_min": 0, "n_max": 9, "o_s": 1, "o_r": 1, "G": 1, "O_r": -1}]"#,
            "O_r is not a non-negative number",
        ),
        (
            r#"[{"n_min": 0, "n_max": 9, "o_s": 1, "o_r": 1, "G": 1},
                {"n_min": 5, "n_max": null, "o_s": 1, "o_r": 1, "G": 1}]"#,
            "sorted",
        ),
        (
            r#"[{"n_min": 0, "n_max": null, "o_s": 1, "o_r": 1, "G": 1},
                {"n_min": 50, "n_max": 60, "o_s": 1, "o_r": 1, "G": 1}]"#,
            "only the last",
        ),
    ] {
        let err = from_model(&model(regimes), "m.json", None).unwrap_err();
        assert!(err.to_string().contains(says), "{regimes}: {err}");
    }
}

#[test]
fn an_explicit_flag_overrides_every_regime() {
    let mut p = table();
    p.override_cost(|c| c.big_g = 9 * NS);
    assert_eq!(p.big_g, 9 * NS);
    assert!(p.regimes.iter().all(|r| r.cost.big_g == 9 * NS));
    assert_eq!(p.cost(2000).o_s, 700 * NS, "other costs kept");
}

#[test]
fn the_model_says_who_copies_a_rendezvous_message() {
    use commchar_sim::params::RendezvousCopy;
    let with = |copy: &str| {
        model("[]").replace(
            r#""S": 65536"#,
            &format!(r#""S": 65536, "rendezvous_copy": {copy}"#),
        )
    };
    let read = |text: String| from_model(&text, "m.json", None);
    assert_eq!(
        read(model("[]")).unwrap().rendezvous_copy,
        RendezvousCopy::Both
    );
    assert_eq!(
        read(with(r#""receiver""#)).unwrap().rendezvous_copy,
        RendezvousCopy::Receiver
    );
    assert_eq!(
        read(with(r#""both""#)).unwrap().rendezvous_copy,
        RendezvousCopy::Both
    );
    for bad in [r#""sender""#, "1"] {
        let err = read(with(bad)).unwrap_err().to_string();
        assert!(err.contains("rendezvous_copy"), "{bad}: {err}");
    }
}

/// Rank 0 sends two 1-byte messages back to back to rank 1 (the second starts with
/// the first): when rank 1 has taken both in.
fn two_messages_back_to_back(p: Params) -> u64 {
    let text =
        "num_ranks 2\nrank 0 {\na: send 1b to 1 tag 0\nb: send 1b to 1 tag 1\nb irequires a\n}\n\
                rank 1 {\nx: recv 1b from 0 tag 0\ny: recv 1b from 0 tag 1\n}\n";
    run_goal(text, p).unwrap().finish[1]
}

#[test]
fn a_regimes_own_latency_is_crossed_once_by_messages_sent_back_to_back() {
    // one message costs o_s + L + o_r either way: 100 + 3500 + 200 with the regime's L,
    // 600 + 2500 + 700 with the same time split into the overheads under the global L
    let own = Params {
        regimes: vec![Regime {
            start: 0,
            cost: MsgCost {
                l: Some(3500 * NS),
                ..regime(0, 100, 200, 0, 0).cost
            },
        }],
        g: 0,
        ..params(0)
    };
    let split = Params {
        regimes: vec![regime(0, 600, 700, 0, 0)],
        g: 0,
        ..params(0)
    };
    assert_eq!(own.latency(1), 3500 * NS);
    assert_eq!(split.latency(1), L * NS);
    let single = |p: Params| run_with("bcast:binomial", 2, 1, p, "full", false).makespan();
    assert_eq!(single(own.clone()), (100 + 3500 + 200) * NS);
    assert_eq!(single(split.clone()), (600 + 2500 + 700) * NS);
    // two: the second arrives o_s after the first and is taken in once the first is,
    // o_s + L + 2 o_r; the overheads that stand in for latency are paid twice
    assert_eq!(two_messages_back_to_back(own), (100 + 3500 + 2 * 200) * NS);
    assert_eq!(
        two_messages_back_to_back(split),
        (600 + 2500 + 2 * 700) * NS
    );
}

#[test]
fn a_model_regime_may_carry_its_own_latency() {
    let text = model(
        r#"[{"n_min": 0, "n_max": 256, "o_s": 0.1, "o_r": 0.2, "G": 0.01, "L": 2.5},
            {"n_min": 257, "n_max": null, "o_s": 0.5, "o_r": 0.6, "G": 0.0001}]"#,
    );
    let p = from_model(&text, "m.json", None).unwrap();
    assert_eq!((p.latency(256), p.latency(257)), (2_500_000, 1_000_000));
    let bad = model(r#"[{"n_min": 0, "n_max": null, "o_s": 0.1, "o_r": 0.2, "G": 0.01, "L": -1}]"#);
    let err = from_model(&bad, "m.json", None).unwrap_err().to_string();
    assert!(err.contains("L is not a non-negative number"), "{err}");
}
