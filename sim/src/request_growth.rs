//! What a rank pays the first time it holds k requests at once (`loggp.request_growth`,
//! commchar.models.request_growth): a library keeps a few request objects ready and
//! allocates more when a program holds more, once per process. The replay charges a
//! non-blocking call that raises its rank's most requests held to a count the model
//! lists, before the call, as computation.

use crate::error::Result;
use crate::first_touch::{loggp_entry, model_json};
use crate::params::us_steps;

/// The counts of requests held whose first holding costs more, and what (ps).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestGrowth {
    /// (count, ps), counts increasing; empty: free.
    costs: Vec<(u64, u64)>,
}

impl RequestGrowth {
    /// From (count, ps) pairs, counts increasing.
    pub fn from_costs(costs: Vec<(u64, u64)>) -> RequestGrowth {
        RequestGrowth { costs }
    }

    /// ps the first holding of `count` requests costs (0 where the model lists none).
    pub fn cost_at(&self, count: u64) -> u64 {
        listed_cost(&self.costs, count)
    }

    pub fn is_empty(&self) -> bool {
        self.costs.is_empty()
    }
}

/// The ps listed for `count` in (count, ps) steps, counts increasing; 0 where none is.
pub(crate) fn listed_cost(steps: &[(u64, u64)], count: u64) -> u64 {
    steps
        .binary_search_by_key(&count, |&(k, _)| k)
        .map_or(0, |i| steps[i].1)
}

/// `libraries.<lib>.loggp.request_growth.counts` ([count, us], counts increasing) of a
/// model file; free when the model has none. `library` None: the only library with a
/// loggp section.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<RequestGrowth> {
    let doc = model_json(text, path)?;
    let Some(entry) = loggp_entry(&doc, library, "request_growth") else {
        return Ok(RequestGrowth::default());
    };
    let what = format!("{path}: loggp request_growth.counts");
    let costs = us_steps(entry.get("counts"), &what, "request_growth")?;
    Ok(RequestGrowth { costs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_the_model_lists_costs_what_it_says_and_others_nothing() {
        let text = r#"{"libraries": {"m": {"loggp": {"request_growth":
            {"counts": [[9, 1000.0], [321, 500.5]], "warm_us": 0.2}}}}}"#;
        let g = from_model(text, "m.json", Some("m")).unwrap();
        assert_eq!(g.cost_at(9), 1_000_000_000);
        assert_eq!(g.cost_at(321), 500_500_000);
        assert_eq!(g.cost_at(8), 0);
        assert_eq!(g.cost_at(10), 0);
        assert!(from_model(
            r#"{"libraries": {"m": {"loggp": {}}}}"#,
            "m.json",
            Some("m")
        )
        .unwrap()
        .is_empty());
        let bad = r#"{"libraries": {"m": {"loggp": {"request_growth": {"counts": [[9, 1.0], [9, 2.0]]}}}}}"#;
        assert!(from_model(bad, "m.json", Some("m")).is_err());
    }
}
