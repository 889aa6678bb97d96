//! Overlap detection between the memory regions of a batch, before any Rust slice exists.
//!
//! Every job contributes up to five regions (input, output, IV, AD, tag), each readable or
//! writable. Two regions *conflict* when they share at least one byte and at least one of them
//! is written; every job owning a region of a conflicting pair gets `COMB_ERR_OVERLAP`. An
//! in-place job (`in == out`) contributes one writable region for its buffer, so `dst == src`
//! never conflicts with itself; a partial overlap of `in` and `out` does.
//!
//! Two steps: [`any_conflict`], run on every batch, only answers whether there is a conflict
//! (sort the written regions, then find each read region's neighbour among them);
//! [`conflicting_jobs`], run only when there is one, names every job involved. For the
//! latter: two non-empty half-open intervals intersect exactly when one's start lies inside
//! the other; with the regions sorted by start, the partners of each region are a contiguous
//! index range found by binary search, and marking a range costs O(1) with a difference
//! array. Both are O(n log n) in the number of regions, whatever the (possibly adversarial)
//! layout.

/// One memory region `[start, end)` of job `job` (addresses as integers; empty regions are
/// ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) job: usize,
    pub(crate) writable: bool,
}

/// Whether any two regions conflict: the fast check run on every batch. The written regions
/// are sorted by start and swept for overlaps among themselves; once they are known to be
/// disjoint their ends are sorted too, so each read-only region needs the first written
/// region ending after its start: a forward sweep while the read regions come in increasing
/// order, a binary search for one that does not. O((W + R) log W) for W written and R read
/// regions, O(W log W + R) when the read regions are in order; `scratch` holds the written
/// `(start, end)` pairs.
pub(crate) fn any_conflict(regions: &[Region], scratch: &mut Vec<(usize, usize)>) -> bool {
    scratch.clear();
    scratch.extend(
        regions
            .iter()
            .filter(|r| r.writable && r.start < r.end)
            .map(|r| (r.start, r.end)),
    );
    if scratch.is_empty() {
        return false;
    }
    // By start alone: two written regions that overlap make some pair adjacent in this order
    // overlap (equal starts included), and once the regions are disjoint their ends are in
    // order too.
    scratch.sort_unstable_by_key(|w| w.0);
    if scratch.windows(2).any(|w| w[1].0 < w[0].1) {
        return true;
    }
    // Each read region's partner is the first written region ending after its start. Read
    // regions in increasing order (jobs laid out in memory order, as IVs and AD usually are)
    // move that index forward by a few predictable steps; a region out of order, or one that
    // is still ahead after `WALK` steps, takes a binary search (so an adversarial order costs
    // O(log W) per region, never a walk over all of them).
    const WALK: usize = 8;
    let (mut i, mut prev) = (0, 0);
    for r in regions.iter().filter(|r| !r.writable && r.start < r.end) {
        let ahead = |w: &(usize, usize)| w.1 <= r.start;
        if r.start < prev {
            i = scratch.partition_point(ahead);
        } else {
            let mut steps = 0;
            while i < scratch.len() && ahead(&scratch[i]) {
                i += 1;
                steps += 1;
                if steps == WALK {
                    i += scratch[i..].partition_point(ahead);
                    break;
                }
            }
        }
        prev = r.start;
        if i < scratch.len() && scratch[i].0 < r.end {
            return true;
        }
    }
    false
}

/// `bad[j]` is true when a region of job `j` conflicts with another region (of any job,
/// including `j` itself). `job` indices must be below `n_jobs`. The slow path, run only when
/// [`any_conflict`] found one: it names every job involved.
pub(crate) fn conflicting_jobs(regions: &[Region], n_jobs: usize) -> Vec<bool> {
    let mut bad = vec![false; n_jobs];
    // All non-empty regions sorted by start, and the writable ones (still sorted by start).
    let mut all: Vec<Region> = regions
        .iter()
        .copied()
        .filter(|r| r.start < r.end)
        .collect();
    all.sort_unstable_by_key(|r| r.start);
    let writable: Vec<usize> = (0..all.len()).filter(|&i| all[i].writable).collect();
    if writable.is_empty() {
        return bad;
    }
    // Position of each region of `all` in `writable` (usize::MAX: read-only).
    let mut pos_w = vec![usize::MAX; all.len()];
    for (p, &i) in writable.iter().enumerate() {
        pos_w[i] = p;
    }
    let mut diff_w = vec![0isize; writable.len() + 1];
    let mut diff_a = vec![0isize; all.len() + 1];

    for (i, r) in all.iter().enumerate() {
        // Direction 1: writable regions that start inside `r` (r itself among them if it is
        // writable).
        let lo = writable.partition_point(|&k| all[k].start < r.start);
        let hi = writable.partition_point(|&k| all[k].start < r.end);
        let own = usize::from(pos_w[i] != usize::MAX);
        if hi - lo > own {
            bad[r.job] = true;
            diff_w[lo] += 1;
            diff_w[hi] -= 1;
            if own == 1 {
                diff_w[pos_w[i]] -= 1;
                diff_w[pos_w[i] + 1] += 1;
            }
        }
        // Direction 2: regions of any kind that start inside a writable `r` (r itself is one).
        if r.writable {
            let lo = all.partition_point(|k| k.start < r.start);
            let hi = all.partition_point(|k| k.start < r.end);
            if hi - lo > 1 {
                bad[r.job] = true;
                diff_a[lo] += 1;
                diff_a[hi] -= 1;
                diff_a[i] -= 1;
                diff_a[i + 1] += 1;
            }
        }
    }
    let mut run = 0isize;
    for (p, &i) in writable.iter().enumerate() {
        run += diff_w[p];
        if run > 0 {
            bad[all[i].job] = true;
        }
    }
    run = 0;
    for (i, r) in all.iter().enumerate() {
        run += diff_a[i];
        if run > 0 {
            bad[r.job] = true;
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(regions: &[Region], n_jobs: usize) -> Vec<bool> {
        let mut bad = vec![false; n_jobs];
        for (i, a) in regions.iter().enumerate() {
            for (j, b) in regions.iter().enumerate() {
                let meet = a.start < a.end
                    && b.start < b.end
                    && a.start < b.end
                    && b.start < a.end
                    && (a.writable || b.writable);
                if i != j && meet {
                    bad[a.job] = true;
                    bad[b.job] = true;
                }
            }
        }
        bad
    }

    /// A small deterministic generator (xorshift64*), so the test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
    }

    #[test]
    fn matches_brute_force_on_random_layouts() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for round in 0..3000 {
            let n_jobs = 1 + rng.below(8);
            let n_regions = rng.below(14);
            let span = 4 + rng.below(60) as u64;
            let regions: Vec<Region> = (0..n_regions)
                .map(|_| {
                    let start = rng.below(span);
                    let len = rng.below(12);
                    Region {
                        start,
                        end: start + len,
                        job: rng.below(n_jobs as u64),
                        writable: rng.below(3) == 0,
                    }
                })
                .collect();
            let want = brute_force(&regions, n_jobs);
            assert_eq!(
                conflicting_jobs(&regions, n_jobs),
                want,
                "round {round}: {regions:?}"
            );
            assert_eq!(
                any_conflict(&regions, &mut Vec::new()),
                want.iter().any(|&b| b),
                "round {round}: {regions:?}"
            );
        }
    }

    /// Larger layouts for `any_conflict`'s sweep: many written regions, read regions in
    /// increasing order (long forward walks), in random order (searches) or alternating far
    /// and near, with and without a conflict.
    #[test]
    fn any_conflict_matches_brute_force_on_large_layouts() {
        let mut rng = Rng(0x0dd_ba11_cafe_f00d);
        for round in 0..600 {
            let n_jobs = 64;
            // Disjoint written regions at random gaps, so most rounds have no conflict among
            // them; reads land anywhere.
            let mut regions = Vec::new();
            let mut at = 0u64;
            for job in 0..(1 + rng.below(100)) {
                at += rng.below(40) as u64;
                let len = 1 + rng.below(30) as u64;
                regions.push(Region {
                    start: at as usize,
                    end: (at + len) as usize,
                    job: job % n_jobs,
                    writable: true,
                });
                at += len;
            }
            let span = at + 10;
            let mut reads: Vec<Region> = (0..rng.below(100))
                .map(|job| {
                    let start = rng.below(span);
                    // Mostly short reads, which fit in the gaps.
                    let len = if rng.below(8) == 0 {
                        rng.below(40)
                    } else {
                        rng.below(3)
                    };
                    Region {
                        start,
                        end: start + len,
                        job: job % n_jobs,
                        writable: false,
                    }
                })
                .collect();
            match round % 3 {
                0 => reads.sort_by_key(|r| r.start),
                1 => {
                    reads.sort_by_key(|r| r.start);
                    let (lo, hi) = reads.split_at(reads.len() / 2);
                    reads = hi.iter().zip(lo).flat_map(|(a, b)| [*a, *b]).collect();
                }
                _ => {}
            }
            regions.extend(reads);
            let want = brute_force(&regions, n_jobs).iter().any(|&b| b);
            assert_eq!(
                any_conflict(&regions, &mut Vec::new()),
                want,
                "round {round}: {regions:?}"
            );
        }
    }

    #[test]
    fn shared_read_only_regions_never_conflict() {
        // Many jobs reading one IV: no writes, no conflict.
        let regions: Vec<Region> = (0..1000)
            .map(|job| Region {
                start: 100,
                end: 116,
                job,
                writable: false,
            })
            .collect();
        assert!(conflicting_jobs(&regions, 1000).iter().all(|&b| !b));
        assert!(!any_conflict(&regions, &mut Vec::new()));
    }

    #[test]
    fn adjacent_regions_do_not_conflict_and_one_byte_does() {
        let r = |start, end, job, writable| Region {
            start,
            end,
            job,
            writable,
        };
        assert_eq!(
            conflicting_jobs(&[r(0, 16, 0, false), r(16, 32, 0, true)], 1),
            vec![false]
        );
        assert_eq!(
            conflicting_jobs(&[r(0, 17, 0, false), r(16, 32, 1, true)], 2),
            vec![true, true]
        );
        // Empty regions are ignored wherever they point.
        assert_eq!(
            conflicting_jobs(&[r(8, 8, 0, true), r(0, 32, 1, true)], 2),
            vec![false, false]
        );
    }
}
