//! The comb planner (papers/000, Algorithms 1 and 2): pure code, no intrinsics.
//!
//! Given the block counts of a batch and a parallelism degree `P`, [`plan`] sorts the
//! messages by decreasing length (indices only), cuts them into groups of `P`, and for each
//! group precomputes the *windows*: in window `w` the first `lanes` messages of the group all
//! advance `blocks` blocks. At each window boundary at least one message is exhausted, so the
//! lane counts strictly decrease and the executor makes one decision per window, none per
//! block.
//!
//! The executors walk the same schedule without building a [`Plan`]: the sorted order (a
//! crate-internal `Order`, on the stack for batches of up to 64 messages) cut into groups,
//! and each group's windows computed as they are run (`group_windows`). A `Plan` took six
//! heap allocations per call; without them a call of 64 CBC jobs took 4% fewer cycles on a
//! Zen 3 VM (in-process loop, TSC ticks per call, best of 20 averages, 8 alternated runs):
//! empty messages 4794-4921 against 5008-5077, 64-byte messages 5940-6308 against 6239-6487.

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

/// The windows of one group of `count` messages, computed as they are walked (Algorithm 2
/// without its array): `len(i)` is the length of the group's `i`-th member, non-increasing
/// in `i`. Windows of zero blocks are skipped.
pub(crate) fn group_windows<F: Fn(usize) -> usize>(count: usize, len: F) -> GroupWindows<F> {
    GroupWindows {
        len,
        live: count,
        done: 0,
    }
}

/// The iterator of [`group_windows`].
pub(crate) struct GroupWindows<F> {
    len: F,
    /// Members `0..live` have not ended yet.
    live: usize,
    /// Blocks every live member has completed (`q_last` of Algorithm 2).
    done: usize,
}

impl<F: Fn(usize) -> usize> Iterator for GroupWindows<F> {
    type Item = Window;

    fn next(&mut self) -> Option<Window> {
        // Scan from the shortest live member; each distinct length closes a window.
        while self.live > 0 {
            let lanes = self.live;
            let q = (self.len)(lanes - 1);
            while self.live > 0 && (self.len)(self.live - 1) == q {
                self.live -= 1;
            }
            if q > self.done {
                let blocks = q - self.done;
                self.done = q;
                return Some(Window { lanes, blocks });
            }
        }
        None
    }
}

/// Batches of up to this many messages are ordered without a heap allocation ([`Order`]).
pub(crate) const SMALL_BATCH: usize = 64;

/// Small batches whose lengths are all below this are ordered by [`rank_by_comparison`]: its
/// 16-bit keys hold the length above the 6 bits of an index below [`SMALL_BATCH`], and stay
/// below 2^15 (signed 16-bit compares, which every x86-64 has).
const RANKING_LIMIT: usize = 1 << 9;

/// A batch's message indices by decreasing length, ties in input order
/// ([`order_by_decreasing_length`]); dereferences to the indices.
pub(crate) struct Order {
    small: [usize; SMALL_BATCH],
    big: Vec<usize>,
    n: usize,
}

impl Order {
    /// The groups of the comb schedule with parallelism degree `p` (clamped to
    /// `1..=MAX_LANES`): consecutive runs of `p` indices, the last one shorter.
    pub(crate) fn groups(&self, p: usize) -> core::slice::Chunks<'_, usize> {
        self.chunks(p.clamp(1, MAX_LANES))
    }
}

impl core::ops::Deref for Order {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        if self.n <= SMALL_BATCH {
            &self.small[..self.n]
        } else {
            &self.big
        }
    }
}

/// The indices `0..n` sorted by decreasing `len(i)`, ties in input order; on the stack for
/// `n <= SMALL_BATCH`.
pub(crate) fn order_by_decreasing_length(n: usize, len: impl Fn(usize) -> usize) -> Order {
    let mut order = Order {
        small: [0; SMALL_BATCH],
        big: Vec::new(),
        n,
    };
    if n <= SMALL_BATCH {
        sort_by_decreasing_length(&len, &mut order.small[..n]);
    } else {
        order.big = vec![0; n];
        sort_by_decreasing_length(&len, &mut order.big);
    }
    order
}

/// Writes the indices `0..order.len()` into `order`, sorted by decreasing `len(i)`, ties in
/// input order. Up to [`SMALL_BATCH`] lengths all below [`RANKING_LIMIT`]: [`rank_by_comparison`].
/// Otherwise one unstable sort of packed (complemented length, index) keys: all keys are
/// distinct, so the result equals a stable sort's, without a comparator closure. 64-bit keys
/// when they fit (the index takes just the bits `order.len()` needs), on the stack for up to
/// `SMALL_BATCH` of them; else 128-bit.
fn sort_by_decreasing_length(len: impl Fn(usize) -> usize, order: &mut [usize]) {
    let n = order.len();
    // Already in order (equal lengths above all: fixed-size records, CCM's one-block
    // prefixes of jobs without AD): the identity, without sorting.
    if (1..n).all(|i| len(i - 1) >= len(i)) {
        order.iter_mut().enumerate().for_each(|(i, o)| *o = i);
        return;
    }
    // Short lengths (packets in blocks), few messages: each message's position is the number
    // of messages ahead of it, counted by comparing packed (length, reversed index) keys all
    // against all, which the compiler turns into 16-bit vector compares, with no
    // data-dependent branch (a comparison sort mispredicts about every other comparison) and
    // no store-to-load chain (a counting sort's `count[len] += 1` waits on its own stores
    // when lengths repeat, as packet lengths do). Intel VM, realistic mix, against the
    // counting sort (alternated builds): CBC 0.253-0.260 -> 0.245-0.253 TSC cycles/byte, the
    // sort's own `perf` samples 94-115 -> 89-102; CFB and CMAC unchanged.
    let max = if n <= SMALL_BATCH {
        (0..n).map(&len).max().unwrap_or(0)
    } else {
        usize::MAX
    };
    if max < RANKING_LIMIT {
        rank_by_comparison(&len, order);
        return;
    }
    // n >= 2 here (shorter inputs are in order), so the index takes `idx_bits` >= 1 bits and
    // the length the other `len_bits`, if it fits in them.
    let idx_bits = usize::BITS - (n - 1).leading_zeros();
    let len_bits = 64 - idx_bits;
    if idx_bits < 64 && (0..n).all(|i| (len(i) as u64) >> len_bits == 0) {
        let mask = (1u64 << len_bits) - 1;
        let mut small = [0u64; SMALL_BATCH];
        let mut big = Vec::new();
        let keys: &mut [u64] = if n <= SMALL_BATCH {
            &mut small[..n]
        } else {
            big.resize(n, 0);
            &mut big
        };
        for (i, k) in keys.iter_mut().enumerate() {
            *k = ((!(len(i) as u64) & mask) << idx_bits) | i as u64;
        }
        keys.sort_unstable();
        for (o, k) in order.iter_mut().zip(keys.iter()) {
            *o = (k & ((1 << idx_bits) - 1)) as usize;
        }
    } else {
        let mut keys: Vec<u128> = (0..n)
            .map(|i| (u128::from(!(len(i) as u64)) << 64) | i as u128)
            .collect();
        keys.sort_unstable();
        for (o, k) in order.iter_mut().zip(&keys) {
            *o = *k as u64 as usize;
        }
    }
}

/// [`sort_by_decreasing_length`] for up to [`SMALL_BATCH`] lengths below [`RANKING_LIMIT`]:
/// message `j`'s position is the number of messages whose key `len << 6 | (63 - index)` is
/// greater than its own. Keys are distinct, so the positions are a permutation, and a longer
/// message, or an equally long one earlier in the input, comes first: the stable order.
fn rank_by_comparison(len: impl Fn(usize) -> usize, order: &mut [usize]) {
    const KEYS: usize = SMALL_BATCH;
    let n = order.len();
    debug_assert!(n <= KEYS);
    let mut keys = [0i16; KEYS];
    for (i, k) in keys[..n].iter_mut().enumerate() {
        debug_assert!(len(i) < RANKING_LIMIT);
        *k = ((len(i) << 6) | (KEYS - 1 - i)) as i16;
    }
    let ahead = count_ahead(&keys, n);
    for (j, &a) in ahead[..n].iter().enumerate() {
        order[usize::from(a)] = j;
    }
}

/// For each slot `j` of `keys`, how many of the first `n` keys are greater than `keys[j]`.
/// The slots past `n` are counted too (a fixed trip count the compiler vectorises) but never
/// read. With AVX2 the compares are 16 keys wide instead of SSE2's 8: on the realistic mix
/// (CBC, alternated builds, three pairs) the sort's perf samples fell from 75-81 to 47-61 of
/// the comb engine's ~1570.
fn count_ahead(keys: &[i16; SMALL_BATCH], n: usize) -> [u16; SMALL_BATCH] {
    #[inline(always)]
    fn count(keys: &[i16; SMALL_BATCH], n: usize) -> [u16; SMALL_BATCH] {
        let mut ahead = [0u16; SMALL_BATCH];
        for &k in &keys[..n] {
            for (a, &kj) in ahead.iter_mut().zip(keys) {
                *a += u16::from(k > kj);
            }
        }
        ahead
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        #[target_feature(enable = "avx2")]
        fn count_avx2(keys: &[i16; SMALL_BATCH], n: usize) -> [u16; SMALL_BATCH] {
            count(keys, n)
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above), count_avx2's only requirement.
            return unsafe { count_avx2(keys, n) };
        }
    }
    count(keys, n)
}

/// Algorithm 1's planning part: sort, group by `p`, precompute each group's windows.
///
/// `p` is clamped to `1..=MAX_LANES`; `p = 1` gives the plain sequential order (one message at
/// a time, longest first).
pub fn plan(lengths: &[usize], p: usize) -> Plan {
    let order = order_by_decreasing_length(lengths.len(), |i| lengths[i]);
    let mut groups = Vec::with_capacity(lengths.len().div_ceil(p.clamp(1, MAX_LANES)));
    let mut windows = Vec::with_capacity(lengths.len());
    let mut start = 0;
    for chunk in order.groups(p) {
        let first = windows.len();
        windows.extend(group_windows(chunk.len(), |i| lengths[chunk[i]]));
        groups.push(Group {
            members: start..start + chunk.len(),
            windows: first..windows.len(),
        });
        start += chunk.len();
    }
    Plan {
        order: order.to_vec(),
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
            mut lengths in prop_oneof![
                proptest::collection::vec(0usize..8, 0..150),
                proptest::collection::vec(0usize..600, 0..70),
                proptest::collection::vec(
                    prop_oneof![
                        0usize..4,
                        (56u32..60, 0usize..5).prop_map(|(k, d)| (1usize << k) + d - 2),
                    ],
                    0..150,
                ),
                proptest::collection::vec(any::<usize>(), 0..150),
            ],
            presort in 0u8..3,
        ) {
            // Inputs already in order (descending, or all equal) take the identity shortcut;
            // lengths below 512 in up to 64 messages the ranking by comparison (0..600 and
            // 0..70 straddle both limits); the others the
            // packed-key sort: 64-bit keys on the stack (up to SMALL_BATCH
            // messages) or on the heap, or 128-bit keys when a length needs more bits than
            // the index leaves (lengths near 2^56..2^59 straddle that limit, 64 bits less
            // the index's 5 to 8, for batches of 17 to 149 messages).
            // All must give the stable sort's order, through `plan` and without it.
            match presort {
                0 => {}
                1 => lengths.sort_by(|a, b| b.cmp(a)),
                _ => lengths.iter_mut().for_each(|l| *l = 5),
            }
            let mut expected: Vec<usize> = (0..lengths.len()).collect();
            expected.sort_by_key(|&i| core::cmp::Reverse(lengths[i]));
            let order = order_by_decreasing_length(lengths.len(), |i| lengths[i]);
            prop_assert_eq!(&order[..], &expected[..]);
            prop_assert_eq!(plan(&lengths, 4).order, expected);
        }

        #[test]
        fn groups_and_windows_without_a_plan_are_the_plans(
            lengths in proptest::collection::vec(0usize..40, 0..100),
            p in 0usize..40,
        ) {
            // What the executors walk (Order::groups, group_windows) is what `plan` lays out,
            // and each group's windows are those of the definition: one per distinct nonzero
            // length q of the group, ascending, over the members at least q long, advancing
            // them from the previous such length to q.
            let plan = plan(&lengths, p);
            let order = order_by_decreasing_length(lengths.len(), |i| lengths[i]);
            let groups: Vec<&[usize]> = order.groups(p).collect();
            prop_assert_eq!(groups.len(), plan.groups.len());
            for (members, g) in groups.iter().zip(&plan.groups) {
                prop_assert_eq!(*members, plan.members(g));
                let windows: Vec<Window> =
                    group_windows(members.len(), |i| lengths[members[i]]).collect();
                prop_assert_eq!(&windows[..], plan.windows_of(g));
                let mut qs: Vec<usize> = members.iter().map(|&m| lengths[m]).filter(|&q| q > 0).collect();
                qs.sort();
                qs.dedup();
                let expected: Vec<Window> = qs
                    .iter()
                    .enumerate()
                    .map(|(k, &q)| Window {
                        lanes: members.iter().filter(|&&m| lengths[m] >= q).count(),
                        blocks: q - if k == 0 { 0 } else { qs[k - 1] },
                    })
                    .collect();
                prop_assert_eq!(windows, expected);
            }
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
