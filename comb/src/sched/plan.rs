//! The comb planner (papers/000, Algorithms 1 and 2): pure code, no intrinsics.
//!
//! Given the block counts of a batch and a parallelism degree `P`, [`plan`] sorts the
//! messages by decreasing length (indices only), cuts them into groups of `P`, and for each
//! group precomputes the *windows*: in window `w` the first `lanes` messages of the group all
//! advance `blocks` blocks. At each window boundary at least one message is exhausted, so the
//! lane counts strictly decrease and the executor makes one decision per window, none per
//! block.

/// Largest parallelism degree the planner accepts.
pub const MAX_LANES: usize = 32;

/// In this window, the first `lanes` messages of the group advance `blocks` blocks each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub lanes: usize,
    pub blocks: usize,
}

/// Up to `P` messages processed side by side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Range into [`Plan::order`]: the group's messages, longest first.
    pub members: core::ops::Range<usize>,
    /// Windows in processing order; `lanes` strictly decreasing, `blocks > 0`.
    pub windows: Vec<Window>,
}

/// A whole batch's schedule.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Plan {
    /// Message indices sorted by decreasing length (stable: ties keep input order).
    pub order: Vec<usize>,
    pub groups: Vec<Group>,
}

/// Algorithm 2, PrecomputeWindows: `sorted` must be non-increasing. Windows of zero blocks
/// (messages of length 0) are not emitted.
pub fn precompute_windows(sorted: &[usize]) -> Vec<Window> {
    debug_assert!(sorted.windows(2).all(|w| w[0] >= w[1]));
    let mut windows = Vec::new();
    let mut done = 0; // blocks every remaining lane has completed (q_last)
    let mut i = sorted.len();
    // Scan from the shortest message; each distinct length closes a window.
    while i > 0 {
        let q = sorted[i - 1];
        let mut j = i - 1;
        while j > 0 && sorted[j - 1] == q {
            j -= 1;
        }
        if q > done {
            windows.push(Window {
                lanes: i,
                blocks: q - done,
            });
            done = q;
        }
        i = j;
    }
    windows
}

/// Algorithm 1's planning part: sort, group by `p`, precompute each group's windows.
///
/// `p` is clamped to `1..=MAX_LANES`; `p = 1` gives the plain sequential order (one message at
/// a time, longest first).
pub fn plan(lengths: &[usize], p: usize) -> Plan {
    let p = p.clamp(1, MAX_LANES);
    // Sort indices (data never moves) by decreasing length, ties in input order: one
    // unstable sort of packed (complemented length, index) keys, which are all distinct, so
    // the order is the same as a stable sort's and no comparator closure is called.
    let mut keys: Vec<u128> = lengths
        .iter()
        .enumerate()
        .map(|(i, &l)| (u128::from(!(l as u64)) << 64) | i as u128)
        .collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys.iter().map(|&k| k as u64 as usize).collect();
    let mut groups = Vec::with_capacity(lengths.len().div_ceil(p));
    let mut sorted = Vec::with_capacity(p);
    let mut start = 0;
    while start < order.len() {
        let end = (start + p).min(order.len());
        sorted.clear();
        sorted.extend(order[start..end].iter().map(|&m| lengths[m]));
        groups.push(Group {
            members: start..end,
            windows: precompute_windows(&sorted),
        });
        start = end;
    }
    Plan { order, groups }
}

/// The blocks a plan processes, as `(message, block)` in execution order: window by window,
/// block by block, lane by lane. For tests and for explaining a schedule.
pub fn execution_order(plan: &Plan) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for g in &plan.groups {
        let members = &plan.order[g.members.clone()];
        let mut done = 0;
        for w in &g.windows {
            for b in 0..w.blocks {
                for &m in &members[..w.lanes] {
                    out.push((m, done + b));
                }
            }
            done += w.blocks;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn paper_figure_2() {
        // papers/000 Fig. 2: lengths (94, 5, 5, 5, 85, 94, 94), P = 7.
        let p = plan(&[94, 5, 5, 5, 85, 94, 94], 7);
        assert_eq!(p.order, vec![0, 5, 6, 4, 1, 2, 3]);
        assert_eq!(
            p.groups[0].windows,
            vec![
                Window { lanes: 7, blocks: 5 },
                Window { lanes: 4, blocks: 80 },
                Window { lanes: 3, blocks: 9 },
            ]
        );
    }

    #[test]
    fn empty_and_zero_batches() {
        assert_eq!(plan(&[], 8), Plan::default());
        let p = plan(&[0, 0, 0], 2);
        assert_eq!(p.groups.len(), 2);
        assert!(p.groups.iter().all(|g| g.windows.is_empty()));
        assert!(execution_order(&p).is_empty());
    }

    #[test]
    fn p_zero_and_huge_are_clamped() {
        assert_eq!(plan(&[3, 1], 0).groups.len(), 2);
        assert_eq!(plan(&[1; 40], 1000).groups[0].members, 0..MAX_LANES);
    }

    proptest! {
        #[test]
        fn every_block_once_and_in_order(
            lengths in proptest::collection::vec(0usize..50, 0..70),
            p in 1usize..=MAX_LANES,
        ) {
            let plan = plan(&lengths, p);
            // Sorted, a permutation, groups of at most p.
            let mut seen = plan.order.clone();
            seen.sort();
            prop_assert_eq!(seen, (0..lengths.len()).collect::<Vec<_>>());
            prop_assert!(plan.order.windows(2).all(|w| lengths[w[0]] >= lengths[w[1]]));
            for g in &plan.groups {
                prop_assert!(g.members.len() <= p && !g.members.is_empty());
                prop_assert!(g.windows.windows(2).all(|w| w[0].lanes > w[1].lanes));
                prop_assert!(g.windows.iter().all(|w| w.blocks > 0 && w.lanes <= g.members.len()));
            }
            // Each message's blocks appear exactly once, in increasing order.
            let mut next = vec![0usize; lengths.len()];
            for (m, b) in execution_order(&plan) {
                prop_assert_eq!(b, next[m]);
                next[m] += 1;
            }
            prop_assert_eq!(next, lengths.clone());
        }

        #[test]
        fn p_one_is_sequential(lengths in proptest::collection::vec(0usize..20, 0..30)) {
            let plan = plan(&lengths, 1);
            let mut expected = Vec::new();
            for &m in &plan.order {
                for b in 0..lengths[m] {
                    expected.push((m, b));
                }
            }
            prop_assert_eq!(execution_order(&plan), expected);
            prop_assert!(plan.groups.iter().all(|g| g.windows.len() <= 1));
        }
    }
}
