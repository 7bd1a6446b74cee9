//! Finding a dependency cycle in a schedule, so it can be named instead of
//! surfacing as a generic deadlock after the run.

/// A cycle among `n` operations linked by `deps` (`(op, prerequisite, _)`), as
/// the operations along it (each one requires the next, the last the first);
/// None when the dependencies form no cycle. O(n + deps), no recursion.
pub fn find(n: usize, deps: &[(u32, u32, bool)]) -> Option<Vec<u32>> {
    let mut indegree = vec![0u32; n];
    let mut first = vec![0usize; n + 1];
    for &(op, pre, _) in deps {
        indegree[op as usize] += 1;
        first[pre as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    // dependents of each prerequisite (CSR), and one prerequisite per operation
    let mut fill = first.clone();
    let mut dependents = vec![0u32; deps.len()];
    for &(op, pre, _) in deps {
        dependents[fill[pre as usize]] = op;
        fill[pre as usize] += 1;
    }
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    while let Some(op) = ready.pop() {
        for &next in &dependents[first[op as usize]..first[op as usize + 1]] {
            indegree[next as usize] -= 1;
            if indegree[next as usize] == 0 {
                ready.push(next);
            }
        }
    }
    // Every operation left still waits for a prerequisite that is also left:
    // following prerequisites from any of them must come back to one already seen.
    let mut blocked_by = vec![u32::MAX; n];
    for &(op, pre, _) in deps {
        if indegree[op as usize] > 0 && indegree[pre as usize] > 0 {
            blocked_by[op as usize] = pre;
        }
    }
    let start = (0..n).find(|&i| indegree[i] > 0)?;
    let mut seen = vec![usize::MAX; n];
    let mut path = Vec::new();
    let mut at = start;
    while seen[at] == usize::MAX {
        seen[at] = path.len();
        path.push(at as u32);
        at = blocked_by[at] as usize;
    }
    Some(path.split_off(seen[at]))
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn a_chain_has_no_cycle() {
        assert_eq!(find(3, &[(1, 0, false), (2, 1, true)]), None);
    }

    #[test]
    fn a_cycle_is_found_even_behind_a_chain() {
        let deps = [(0, 3, false), (1, 0, false), (2, 1, false), (1, 2, true)];
        let mut cycle = find(4, &deps).expect("a cycle");
        cycle.sort_unstable();
        assert_eq!(cycle, vec![1, 2]);
    }
}
