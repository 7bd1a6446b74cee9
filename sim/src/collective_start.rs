//! What a communicator's first collectives cost (`loggp.collective_start`,
//! commchar.models.collstart): a library can set a communicator up lazily, MPICH's
//! shared-memory collectives after a few Bcast, Reduce, Barrier and Allreduce calls
//! counted together. The replay charges the call of a listed count, before it, as
//! computation on each rank that makes it, from the row of the largest p measured
//! that is at most the communicator's size.

use serde_json::Value;

use crate::error::{input, Result};
use crate::first_touch::{loggp_entry, model_json};
use crate::params::us_steps;
use crate::per_p::{by_p_rows, row_for_ranks};
use crate::request_growth::listed_cost;

/// The collective kinds a library may count: Bcast, Reduce, Barrier, Allreduce.
pub const KINDS: [&str; 4] = ["bcast", "reduce", "barrier", "allreduce"];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    p: u32,
    /// The kinds share one count: `calls` by that count, else `kinds` by each one's own.
    shared: bool,
    calls: Vec<(u64, u64)>,
    kinds: [Vec<(u64, u64)>; 4],
}

/// The steps per p measured; empty: free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectiveStart {
    rows: Vec<Row>,
}

impl CollectiveStart {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// ps the call of kind `kind` (an index of KINDS) costs beyond a warm one, on a
    /// communicator of `p` ranks where it is the `shared`-th call of the four kinds and the
    /// `own`-th of its kind.
    pub fn cost(&self, p: u32, kind: usize, shared: u64, own: u64) -> u64 {
        let Some(row) = row_for_ranks(&self.rows, p, |r| r.p) else {
            return 0;
        };
        if row.shared {
            listed_cost(&row.calls, shared)
        } else {
            listed_cost(&row.kinds[kind], own)
        }
    }
}

/// `libraries.<lib>.loggp.collective_start.by_p` of a model file; free when the model has none.
pub fn from_model(text: &str, path: &str, library: Option<&str>) -> Result<CollectiveStart> {
    let doc = model_json(text, path)?;
    let Some(entry) = loggp_entry(&doc, library, "collective_start") else {
        return Ok(CollectiveStart::default());
    };
    let what = format!("{path}: loggp collective_start");
    let steps =
        |v: Option<&Value>, name: &str| us_steps(v, &format!("{what}.{name}"), "collective_start");
    let rows = by_p_rows(entry, &what)?;
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    for (p, row) in rows {
        let Some(shared) = row.get("shared").and_then(Value::as_bool) else {
            return input(format!("{what}: shared is not true or false"));
        };
        let kinds_entry = row.get("kinds");
        let mut kinds: [Vec<(u64, u64)>; 4] = Default::default();
        for (i, name) in KINDS.iter().enumerate() {
            kinds[i] = steps(kinds_entry.and_then(|k| k.get(*name)), name)?;
        }
        out.push(Row {
            p,
            shared,
            calls: steps(row.get("calls"), "calls")?,
            kinds,
        });
    }
    Ok(CollectiveStart { rows: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_count_charges_the_mixed_steps_and_a_kind_its_own() {
        let text = r#"{"libraries": {"m": {"loggp": {"collective_start": {"by_p": [
            {"p": 2, "shared": false, "calls": [], "kinds": {"bcast": [[1, 10.0]], "allreduce": [[2, 5.0]]}},
            {"p": 8, "shared": true, "calls": [[1, 20.0], [6, 300.0]], "kinds": {}}]}}}}}"#;
        let cs = from_model(text, "m.json", Some("m")).unwrap();
        assert_eq!(cs.cost(2, 0, 1, 1), 10_000_000);
        assert_eq!(cs.cost(4, 3, 1, 2), 5_000_000); // p = 4 takes the row of p = 2
        assert_eq!(cs.cost(4, 3, 2, 1), 0);
        assert_eq!(cs.cost(16, 3, 6, 1), 300_000_000);
        assert_eq!(cs.cost(16, 2, 5, 5), 0);
        assert_eq!(cs.cost(1, 0, 1, 1), 10_000_000); // below every p: the smallest
        assert!(from_model(
            r#"{"libraries": {"m": {"loggp": {}}}}"#,
            "m.json",
            Some("m")
        )
        .unwrap()
        .is_empty());
        let bad = r#"{"libraries": {"m": {"loggp": {"collective_start": {"by_p": [{"p": 2, "calls": []}]}}}}}"#;
        assert!(from_model(bad, "m.json", Some("m")).is_err());
    }
}
