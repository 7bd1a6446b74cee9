//! A model section measured at several rank counts (`by_p`: `loggp.noise`,
//! `loggp.collective_start`): reading its rows, and choosing the row a run of p ranks
//! takes.

use serde_json::Value;

use crate::error::{input, Result};

/// A model section's `by_p` rows (`what` names the section in messages): each row's p,
/// a whole number of ranks, increasing, with the row.
pub(crate) fn by_p_rows<'a>(entry: &'a Value, what: &str) -> Result<Vec<(u32, &'a Value)>> {
    let Some(rows) = entry.get("by_p").and_then(Value::as_array) else {
        return input(format!("{what}: by_p is not a list"));
    };
    let mut out: Vec<(u32, &Value)> = Vec::with_capacity(rows.len());
    for row in rows {
        let p = row.get("p").and_then(Value::as_u64).filter(|&p| p >= 1);
        let Some(p) = p.and_then(|p| u32::try_from(p).ok()) else {
            return input(format!("{what}: a p that is not a whole number of ranks"));
        };
        if out.last().is_some_and(|&(q, _)| q >= p) {
            return input(format!("{what}: p not increasing"));
        }
        out.push((p, row));
    }
    Ok(out)
}

/// Of rows measured at several rank counts, sorted by p, the one of the largest p at most
/// `ranks` (the smallest p's when every one is larger); None when there are none.
pub(crate) fn row_for_ranks<T>(rows: &[T], ranks: u32, p_of: impl Fn(&T) -> u32) -> Option<&T> {
    rows.iter()
        .rev()
        .find(|r| p_of(r) <= ranks)
        .or(rows.first())
}
