//! What a simultaneous exchange costs beyond the model (`loggp.exchange_excess`,
//! commchar.models.receive_copy): two ranks sending and receiving at once through the
//! same shared cells take longer than the model's X(n) at small eager sizes, which a
//! ping-pong does not show, and a rendezvous exchange may take longer than the
//! rendezvous rule. Per size measured, the exchange's time less the model's (0 where the
//! model was fitted to it); the replay charges each MPI_Sendrecv and MPI_Sendrecv_replace
//! that both sends and receives the excess of its size, linear between the measured
//! sizes, the smallest's below them, and nothing above the largest (one the probe did not
//! send). Messages exchanged by one wait, two or more each way with one rank (a halo's
//! burst), pay what the kernel's burst of two each way took beyond the model's own two
//! (`burst` at rendezvous sizes, `burst_eager` at eager ones), shared among the pairs: a
//! burst pays its excess once, not once a pair. An eager exchange of one pair by one wait
//! pays nothing (the eager steps are the Sendrecv call's own).

use crate::error::Result;
use crate::first_touch::{loggp_entry, model_json};
use crate::params::us_steps;

/// (bytes, ps per exchange), sizes increasing; empty: free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExchangeExcess {
    /// Eager sizes: what the exchange took beyond X(n).
    steps: Vec<(u64, u64)>,
    /// Rendezvous sizes: what it took beyond the rendezvous rule.
    rendezvous: Vec<(u64, u64)>,
    /// Rendezvous sizes: what two messages each way that one wait completed took beyond
    /// the model's two (empty: each pair of a burst pays `rendezvous`).
    burst: Vec<(u64, u64)>,
    /// Eager sizes: the same (empty: a burst pays nothing, as a single pair).
    burst_eager: Vec<(u64, u64)>,
}

impl ExchangeExcess {
    /// From measured (bytes, ps) steps of eager and of rendezvous sizes, sizes increasing.
    pub fn from_steps(steps: Vec<(u64, u64)>, rendezvous: Vec<(u64, u64)>) -> ExchangeExcess {
        ExchangeExcess {
            steps,
            rendezvous,
            burst: Vec::new(),
            burst_eager: Vec::new(),
        }
    }

    /// The same with a burst's steps: (bytes, ps per two messages each way), at rendezvous
    /// sizes and at eager ones.
    pub fn with_burst(
        self,
        burst: Vec<(u64, u64)>,
        burst_eager: Vec<(u64, u64)>,
    ) -> ExchangeExcess {
        ExchangeExcess {
            burst,
            burst_eager,
            ..self
        }
    }

    /// ps one of `pairs` exchanges of `bytes` each way that one wait completed with one rank
    /// costs beyond the model, its messages rendezvous ones under the replay's model or
    /// eager: where there are two or more and the burst of that kind was measured, half its
    /// step (the burst measured being two); else a single rendezvous exchange's step, and
    /// nothing for an eager one (the eager steps are the Sendrecv call's own).
    pub fn waited_cost(&self, bytes: u64, rendezvous: bool, pairs: usize) -> u64 {
        let burst = if rendezvous {
            &self.burst
        } else {
            &self.burst_eager
        };
        if pairs >= 2 && !burst.is_empty() {
            interpolated(burst, bytes) / 2
        } else if rendezvous {
            self.cost(bytes, true)
        } else {
            0
        }
    }

    /// ps an exchange of `bytes` each way costs beyond the model, its messages eager under
    /// the replay's model (`rendezvous` false) or rendezvous ones.
    pub fn cost(&self, bytes: u64, rendezvous: bool) -> u64 {
        interpolated(
            if rendezvous {
                &self.rendezvous
            } else {
                &self.steps
            },
            bytes,
        )
    }
}

/// The step at `bytes`: linear between sizes, the smallest's below them, 0 above the largest.
fn interpolated(steps: &[(u64, u64)], bytes: u64) -> u64 {
    let (Some(&(n0, t0)), Some(&(last, _))) = (steps.first(), steps.last()) else {
        return 0;
    };
    if bytes > last {
        return 0;
    }
    if bytes <= n0 {
        return t0;
    }
    let i = steps.partition_point(|&(n, _)| n <= bytes);
    let ((a, ta), (b, tb)) = (steps[i - 1], steps[i.min(steps.len() - 1)]);
    if b == a {
        return ta;
    }
    let at = ta as f64 + (tb as f64 - ta as f64) * (bytes - a) as f64 / (b - a) as f64;
    at.max(0.0).round() as u64
}

/// `libraries.<lib>.loggp.exchange_excess.steps`, `.rendezvous`, `.burst` and `.burst_eager`
/// ([bytes, us], sizes increasing) of a model file; free when the model has none.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<ExchangeExcess> {
    let doc = model_json(text, path)?;
    let Some(entry) = loggp_entry(&doc, library, "exchange_excess") else {
        return Ok(ExchangeExcess::default());
    };
    let what = format!("{path}: loggp exchange_excess.steps");
    let optional = |key: &str| match entry.get(key) {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        some => us_steps(
            some,
            &format!("{path}: loggp exchange_excess.{key}"),
            "exchange_excess",
        ),
    };
    Ok(ExchangeExcess {
        steps: us_steps(entry.get("steps"), &what, "exchange_excess")?,
        rendezvous: optional("rendezvous")?,
        burst: optional("burst")?,
        burst_eager: optional("burst_eager")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_between_sizes_flat_below_and_free_above() {
        let e = ExchangeExcess::from_steps(
            vec![(1, 30_000), (256, 30_000), (512, 10_000)],
            vec![(4096, 500_000), (32768, 100_000)],
        );
        assert_eq!(e.cost(0, false), 30_000);
        assert_eq!(e.cost(100, false), 30_000);
        assert_eq!(e.cost(384, false), 20_000);
        assert_eq!(e.cost(512, false), 10_000);
        assert_eq!(e.cost(513, false), 0);
        assert_eq!(ExchangeExcess::default().cost(64, false), 0);
        // a rendezvous message takes the rendezvous steps, an eager one never does
        assert_eq!(e.cost(1024, true), 500_000);
        assert_eq!(e.cost(18432, true), 300_000);
        assert_eq!(e.cost(65536, true), 0);
        assert_eq!(e.cost(4096, false), 0);
    }

    #[test]
    fn a_burst_shares_its_excess_among_its_pairs() {
        let single = ExchangeExcess::from_steps(vec![], vec![(4096, 700_000), (32768, 1_000_000)]);
        // no burst measured: every pair pays a single exchange's excess
        assert_eq!(single.waited_cost(4096, true, 2), 700_000);
        let e = single.with_burst(
            vec![(4096, 740_000), (32768, 1_070_000)],
            vec![(256, 80_000)],
        );
        assert_eq!(e.waited_cost(4096, true, 1), 700_000);
        assert_eq!(e.waited_cost(4096, true, 2), 370_000);
        assert_eq!(e.waited_cost(4096, true, 4), 370_000);
        assert_eq!(e.waited_cost(65536, true, 2), 0);
        // eager: a burst shares the eager burst's excess, a single pair pays nothing
        assert_eq!(e.waited_cost(256, false, 2), 40_000);
        assert_eq!(e.waited_cost(256, false, 1), 0);
        assert_eq!(e.waited_cost(1024, false, 2), 0);
    }

    #[test]
    fn read_from_a_model_and_refused_when_malformed() {
        let model = |steps: &str| {
            format!(
                r#"{{"libraries": {{"mpich": {{"loggp": {{"exchange_excess": {{"steps": {steps}}}}}}}}}}}"#
            )
        };
        let e = from_model(&model("[[1, 0.03], [8192, 0.0]]"), "m.json", None).unwrap();
        assert_eq!(e.cost(1, false), 30_000);
        assert_eq!(e.cost(8192, false), 0);
        assert_eq!(e.cost(16384, true), 0);
        let both = r#"{"libraries": {"mpich": {"loggp": {"exchange_excess": {"steps": [[1, 0.03]], "rendezvous": [[16384, 0.2]]}}}}}"#;
        assert_eq!(
            from_model(both, "m.json", None).unwrap().cost(16384, true),
            200_000
        );
        let burst = r#"{"libraries": {"mpich": {"loggp": {"exchange_excess": {"steps": [[1, 0.03]], "rendezvous": [[16384, 0.2]], "burst": [[16384, 0.1]]}}}}}"#;
        let e = from_model(burst, "m.json", None).unwrap();
        assert_eq!(e.waited_cost(16384, true, 2), 50_000);
        assert_eq!(e.waited_cost(16384, true, 1), 200_000);
        let bad = r#"{"libraries": {"mpich": {"loggp": {"exchange_excess": {"steps": [], "burst": [[8, -1]]}}}}}"#;
        assert!(from_model(bad, "m.json", None).is_err());
        let bad = r#"{"libraries": {"mpich": {"loggp": {"exchange_excess": {"steps": [], "rendezvous": [[8, -1]]}}}}}"#;
        assert!(from_model(bad, "m.json", None).is_err());
        assert!(from_model(&model("[[8, 0.03], [4, 0.01]]"), "m.json", None).is_err());
        assert!(from_model(&model("[[8, -1]]"), "m.json", None).is_err());
        let none = r#"{"libraries": {"mpich": {"loggp": {}}}}"#;
        assert_eq!(
            from_model(none, "m.json", None).unwrap(),
            ExchangeExcess::default()
        );
    }
}
