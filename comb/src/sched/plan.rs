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
    /// Range into [`Plan::windows`]: the group's windows in processing order; `lanes`
    /// strictly decreasing, `blocks > 0`.
    pub windows: core::ops::Range<usize>,
}

/// A whole batch's schedule.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Plan {
    /// Message indices sorted by decreasing length (ties keep input order).
    pub order: Vec<usize>,
    pub groups: Vec<Group>,
    /// All groups' windows, one after another (one allocation for the whole plan).
    pub windows: Vec<Window>,
}

impl Plan {
    /// The messages of group `g`, longest first.
    pub fn members(&self, g: &Group) -> &[usize] {
        &self.order[g.members.clone()]
    }

    /// The windows of group `g`, in processing order.
    pub fn windows_of(&self, g: &Group) -> &[Window] {
        &self.windows[g.windows.clone()]
    }
}

/// Algorithm 2, PrecomputeWindows: appends the windows of one group to `out`. `sorted` must
/// be non-increasing. Windows of zero blocks (messages of length 0) are not emitted.
pub fn precompute_windows(sorted: &[usize], out: &mut Vec<Window>) {
    debug_assert!(sorted.windows(2).all(|w| w[0] >= w[1]));
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
            out.push(Window {
                lanes: i,
                blocks: q - done,
            });
            done = q;
        }
        i = j;
    }
}

/// Message indices by decreasing length, ties in input order. One unstable sort of packed
/// (complemented length, index) keys: all keys are distinct, so the result equals a stable
/// sort's, without a comparator closure. 64-bit keys when they fit (the common case), else
/// 128-bit.
fn sort_by_decreasing_length(lengths: &[usize]) -> Vec<usize> {
    const IDX_BITS: u32 = 20;
    // Already in order (equal lengths above all: fixed-size records, CCM's one-block
    // prefixes of jobs without AD): the identity, without sorting.
    if lengths.windows(2).all(|w| w[0] >= w[1]) {
        return (0..lengths.len()).collect();
    }
    let small = lengths.len() <= 1 << IDX_BITS
        && lengths.iter().all(|&l| (l as u64) < 1 << (64 - IDX_BITS));
    if small {
        let mask = (1u64 << (64 - IDX_BITS)) - 1;
        let mut keys: Vec<u64> = lengths
            .iter()
            .enumerate()
            .map(|(i, &l)| ((!(l as u64) & mask) << IDX_BITS) | i as u64)
            .collect();
        keys.sort_unstable();
        keys.iter()
            .map(|&k| (k & ((1 << IDX_BITS) - 1)) as usize)
            .collect()
    } else {
        let mut keys: Vec<u128> = lengths
            .iter()
            .enumerate()
            .map(|(i, &l)| (u128::from(!(l as u64)) << 64) | i as u128)
            .collect();
        keys.sort_unstable();
        keys.iter().map(|&k| k as u64 as usize).collect()
    }
}

/// Algorithm 1's planning part: sort, group by `p`, precompute each group's windows.
///
/// `p` is clamped to `1..=MAX_LANES`; `p = 1` gives the plain sequential order (one message at
/// a time, longest first).
pub fn plan(lengths: &[usize], p: usize) -> Plan {
    let p = p.clamp(1, MAX_LANES);
    let order = sort_by_decreasing_length(lengths);
    let n_groups = lengths.len().div_ceil(p);
    let mut groups = Vec::with_capacity(n_groups);
    let mut windows = Vec::with_capacity(lengths.len());
    let mut sorted = Vec::with_capacity(p);
    for (k, chunk) in order.chunks(p).enumerate() {
        sorted.clear();
        sorted.extend(chunk.iter().map(|&m| lengths[m]));
        let first = windows.len();
        precompute_windows(&sorted, &mut windows);
        groups.push(Group {
            members: k * p..k * p + chunk.len(),
            windows: first..windows.len(),
        });
    }
    Plan {
        order,
        groups,
        windows,
    }
}

/// The blocks a plan processes, as `(message, block)` in execution order: window by window,
/// block by block, lane by lane. For tests and for explaining a schedule.
pub fn execution_order(plan: &Plan) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for g in &plan.groups {
        let members = plan.members(g);
        let mut done = 0;
        for w in plan.windows_of(g) {
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
            p.windows_of(&p.groups[0]),
            [
                Window {
                    lanes: 7,
                    blocks: 5
                },
                Window {
                    lanes: 4,
                    blocks: 80
                },
                Window {
                    lanes: 3,
                    blocks: 9
                },
            ]
        );
        // Ties keep input order in the 128-bit key path too.
        let big = plan(&[usize::MAX, 3, usize::MAX], 2);
        assert_eq!(big.order, vec![0, 2, 1]);
    }

    #[test]
    fn empty_and_zero_batches() {
        assert_eq!(plan(&[], 8), Plan::default());
        let p = plan(&[0, 0, 0], 2);
        assert_eq!(p.groups.len(), 2);
        assert!(p.windows.is_empty());
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
                let ws = plan.windows_of(g);
                prop_assert!(ws.windows(2).all(|w| w[0].lanes > w[1].lanes));
                prop_assert!(ws.iter().all(|w| w.blocks > 0 && w.lanes <= g.members.len()));
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
        fn order_is_the_stable_sort_by_decreasing_length(
            mut lengths in proptest::collection::vec(0usize..8, 0..70),
            presort in 0u8..3,
        ) {
            // Inputs already in order (descending, or all equal) take the identity shortcut;
            // the others the packed-key sort. Both must give the stable sort's order.
            match presort {
                0 => {}
                1 => lengths.sort_by(|a, b| b.cmp(a)),
                _ => lengths.iter_mut().for_each(|l| *l = 5),
            }
            let mut expected: Vec<usize> = (0..lengths.len()).collect();
            expected.sort_by_key(|&i| core::cmp::Reverse(lengths[i]));
            prop_assert_eq!(plan(&lengths, 4).order, expected);
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
            prop_assert!(plan.groups.iter().all(|g| plan.windows_of(g).len() <= 1));
        }
    }
}
