//! The comb executor: walks a [`Plan`](super::plan::Plan) and calls the lane kernel
//! instantiated for each window's lane count, once per window.

use super::plan::plan;
use crate::aes::ni::{chain_window, ChainLane, ChainRule, Lanes};
use crate::cpu::NiToken;

/// How the blocks of a set of messages are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// One message at a time, each a single dependent chain: our best single-message code.
    Single,
    /// The comb scheduler with parallelism degree `lanes` (1..=32).
    Comb { lanes: usize },
}

/// Widest kernel call. The xmm kernel keeps one state register per lane live across the
/// rounds; with 16 xmm registers, 13 or more lanes spill (measured: 16 lanes ran at 1.4x the
/// cycles/byte of 12 on 2 KiB messages), so wider windows run as several narrower calls of
/// near-equal size (16 lanes: 8 + 8), each of which still fills the AES unit (L·T = 6).
pub(crate) const MAX_KERNEL_LANES: usize = 12;

/// Anything that carries a chain lane: the modes' validated jobs, or bare lanes.
pub(crate) trait HasLane<'a> {
    fn lane(&self) -> &ChainLane<'a>;
    fn lane_mut(&mut self) -> &mut ChainLane<'a>;
}

impl<'a> HasLane<'a> for ChainLane<'a> {
    fn lane(&self) -> &ChainLane<'a> {
        self
    }
    fn lane_mut(&mut self) -> &mut ChainLane<'a> {
        self
    }
}

/// Runs the whole-block body of a chained mode over the lanes of `items` (any order, any mix
/// of key sizes). On return every lane's `chain` holds the chaining value after its last
/// block.
pub(crate) fn run_chain<'a, R: ChainRule, L: HasLane<'a>>(t: NiToken, items: &mut [L], path: Path) {
    // A batch of one has nothing to interleave: skip planning (its allocations are most of
    // the fixed cost of a call).
    let path = if items.len() <= 1 { Path::Single } else { path };
    match path {
        Path::Single => {
            for item in items.iter_mut() {
                let lane = item.lane_mut();
                let blocks = lane.blocks;
                run_window::<R>(t, core::slice::from_mut(lane), 0, blocks);
            }
        }
        Path::Comb { lanes: p } => {
            let rounds0 = items.first().map_or(0, |i| i.lane().key.rounds);
            if items.iter().all(|i| i.lane().key.rounds == rounds0) {
                run_comb::<R, L>(t, items, p);
            } else {
                // Lanes of one kernel call run in lockstep, so they need the same round count:
                // schedule each key size on its own.
                for rounds in [10, 12, 14] {
                    let idx: Vec<usize> = (0..items.len())
                        .filter(|&i| items[i].lane().key.rounds == rounds)
                        .collect();
                    let mut part = Lanes(idx.iter().map(|&i| *items[i].lane()).collect());
                    run_comb::<R, ChainLane<'a>>(t, &mut part, p);
                    for (&i, l) in idx.iter().zip(part.iter()) {
                        items[i].lane_mut().chain = l.chain;
                    }
                }
            }
        }
    }
}

/// Algorithm 1 over lanes of one key size.
fn run_comb<'a, R: ChainRule, L: HasLane<'a>>(t: NiToken, items: &mut [L], p: usize) {
    let lengths: Vec<usize> = items.iter().map(|i| i.lane().blocks).collect();
    let plan = plan(&lengths, p);
    let mut group = Lanes(Vec::with_capacity(p));
    for g in &plan.groups {
        let members = plan.members(g);
        group.clear();
        group.extend(members.iter().map(|&m| *items[m].lane()));
        let mut done = 0;
        for w in plan.windows_of(g) {
            run_window::<R>(t, &mut group[..w.lanes], done, w.blocks);
            done += w.blocks;
        }
        for (&m, l) in members.iter().zip(group.iter()) {
            items[m].lane_mut().chain = l.chain;
        }
    }
}

/// One window: `lanes` (all of one key size) advance `count` blocks from block `start`.
/// Chooses the kernel for the lane count here, once; more than `MAX_KERNEL_LANES` lanes run
/// as several calls.
fn run_window<R: ChainRule>(_t: NiToken, lanes: &mut [ChainLane<'_>], start: usize, count: usize) {
    // The kernel's contract, checked once per window (lanes, not blocks): no lane is asked
    // for blocks it does not have.
    assert!(lanes.iter().all(|l| start + count <= l.blocks));
    // Lanes run in lockstep: one round count (run_chain partitions by key size). A mismatch
    // would give wrong output, not an out-of-bounds access (round keys are 15-entry arrays).
    debug_assert!(lanes.iter().all(|l| l.key.rounds == lanes[0].key.rounds));
    if count == 0 {
        return;
    }
    let calls = lanes.len().div_ceil(MAX_KERNEL_LANES);
    for chunk in lanes.chunks_mut(lanes.len().div_ceil(calls.max(1)).max(1)) {
        let shared = chunk.iter().all(|l| core::ptr::eq(l.key, chunk[0].key));
        macro_rules! call {
            ($($n:literal)*) => {
                match chunk.len() {
                    $($n => {
                        let arr: &mut [ChainLane<'_>; $n] =
                            chunk.try_into().unwrap_or_else(|_| unreachable!());
                        // SAFETY: the token proves AES-NI; every lane has start + count
                        // blocks (asserted above) and one round count (run_chain partitions
                        // by key size); `shared` was checked on this very chunk.
                        unsafe {
                            if shared {
                                chain_window::<R, $n, true>(arr, start, count)
                            } else {
                                chain_window::<R, $n, false>(arr, start, count)
                            }
                        }
                    })*
                    _ => unreachable!("chunks of 1..=MAX_KERNEL_LANES lanes"),
                }
            };
        }
        call!(1 2 3 4 5 6 7 8 9 10 11 12);
    }
}
