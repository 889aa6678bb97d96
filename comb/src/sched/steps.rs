//! The generic comb stepper: the comb scheduler for sequential modes whose step between two
//! cipher calls is more than an xor (CCM's CBC-MAC beside its CTR, CLOC/SILC's two chains,
//! JAMBU's 64-bit state, McOE-G's field multiplication, POET's hash chains).
//!
//! A mode describes one message as a [`StepLane`]: a number of *steps*, each of which hands
//! `WIDTH` blocks to the block cipher ([`StepLane::load`]) and takes the results back
//! ([`StepLane::store`]). The stepper plans the batch exactly as the CBC-style executor does
//! (papers/000 Algorithms 1 and 2: sort by step count, groups of `P`, windows of equal
//! progress) and in each step of a window sends the blocks of all the window's lanes to the
//! cipher in one call, so `P · WIDTH` independent blocks are in flight where one message
//! alone would have `WIDTH`. Keys are gathered once per group.
//!
//! The glue between cipher calls is the mode's plain Rust; the cipher call is the xmm
//! multi-key kernel ([`Kernels::encrypt_many`]), 8 blocks per call chunk, which fills the AES
//! unit of both backends' CPUs (latency 4, 2 per cycle on Zen 3) without the register
//! pressure of pairing lanes in ymm registers.

use super::exec::Path;
use super::plan::{group_windows, order_by_decreasing_length, MAX_LANES};
use crate::aes::{AesKey, Kernels};
use crate::block::{wipe, Block, SecretBlocks};

/// Most blocks one lane may hand to the cipher per step.
pub(crate) const MAX_WIDTH: usize = 4;

/// One message of a sequential mode, as the stepper drives it. `'k` is the lifetime of the
/// keys the lane encrypts under.
pub(crate) trait StepLane<'k> {
    /// Blocks per step, `1..=MAX_WIDTH`.
    const WIDTH: usize;
    /// Whether the step runs the inverse cipher (decryption chains, e.g. McOE-G's) rather
    /// than the forward one.
    const DECRYPT: bool = false;
    /// Steps this lane needs in all (its "length" for the planner; 0 is allowed).
    fn steps(&self) -> usize;
    /// The key of block `slot` (`0..WIDTH`) of every step of this lane.
    fn key(&self, slot: usize) -> &'k AesKey;
    /// The `WIDTH` cipher inputs of step `step` (steps come in order, `0..steps()`).
    fn load(&mut self, step: usize, inputs: &mut [Block]);
    /// The `WIDTH` cipher outputs of step `step`.
    fn store(&mut self, step: usize, outputs: &[Block]);
}

/// Runs every lane through all its steps: one lane at a time on `Path::Single` (a dependent
/// chain, the sequential baseline), comb-scheduled with `P = lanes` on `Path::Comb`.
///
/// The single path is inlined into its caller (one message per call, its per-step glue is
/// the sequential baseline's cost: left to LLVM it sometimes became a call, CLOC's
/// sequential encryption then 6% slower); the comb path is a call.
#[inline(always)]
pub(crate) fn run_steps<'k, L: StepLane<'k>>(k: Kernels, lanes: &mut [L], path: Path) {
    assert!((1..=MAX_WIDTH).contains(&L::WIDTH));
    match path {
        Path::Comb { lanes: p } if lanes.len() > 1 => run_comb(k, lanes, p.max(1)),
        _ => run_single(k, lanes),
    }
}

/// [`run_steps`] on `Path::Single`: each lane's steps in order, one lane after another.
#[inline(always)]
fn run_single<'k, L: StepLane<'k>>(k: Kernels, lanes: &mut [L]) {
    let w = L::WIDTH;
    let mut buf = [[0u8; 16]; MAX_WIDTH];
    for lane in lanes.iter_mut() {
        let keys: [&AesKey; MAX_WIDTH] = core::array::from_fn(|s| lane.key(s.min(w - 1)));
        for step in 0..lane.steps() {
            lane.load(step, &mut buf[..w]);
            crypt::<L>(k, &mut buf[..w], &keys[..w]);
            lane.store(step, &buf[..w]);
        }
    }
    buf.iter_mut().for_each(wipe);
}

/// [`run_steps`] on `Path::Comb` with `p` lanes.
#[inline(never)]
fn run_comb<'k, L: StepLane<'k>>(k: Kernels, lanes: &mut [L], p: usize) {
    let w = L::WIDTH;
    let order = order_by_decreasing_length(lanes.len(), |i| lanes[i].steps());
    // Cipher inputs and outputs of the lanes' steps: wiped when dropped, whichever way the
    // function is left.
    let mut blocks = SecretBlocks(vec![[0u8; 16]; p * w]);
    let mut keys: Vec<&'k AesKey> = Vec::with_capacity(p * w);
    for members in order.groups(p) {
        keys.clear();
        for &m in members {
            keys.extend((0..w).map(|s| lanes[m].key(s)));
        }
        let mut done = 0;
        // The members' step counts, read before the lanes are driven (mutably).
        let steps: [usize; MAX_LANES] =
            core::array::from_fn(|i| members.get(i).map_or(0, |&m| lanes[m].steps()));
        for win in group_windows(members.len(), |i| steps[i]) {
            // (Splitting a window into two halves that alternate, so one half's glue runs
            // while the cipher works on the other's blocks, measured no faster on JAMBU at
            // 16 lanes and slower at 8: the out-of-order core already overlaps them.)
            let n = win.lanes * w;
            for step in done..done + win.blocks {
                load_all(lanes, &members[..win.lanes], step, &mut blocks[..n]);
                crypt::<L>(k, &mut blocks[..n], &keys[..n]);
                store_all(lanes, &members[..win.lanes], step, &blocks[..n]);
            }
            done += win.blocks;
        }
    }
}

/// The inputs of `step` for `members` into `blocks` (`WIDTH` blocks per member).
#[inline(always)]
fn load_all<'k, L: StepLane<'k>>(
    lanes: &mut [L],
    members: &[usize],
    step: usize,
    blocks: &mut [Block],
) {
    for (b, &m) in blocks.chunks_exact_mut(L::WIDTH).zip(members) {
        lanes[m].load(step, b);
    }
}

/// The outputs of `step` from `blocks` to `members`.
#[inline(always)]
fn store_all<'k, L: StepLane<'k>>(
    lanes: &mut [L],
    members: &[usize],
    step: usize,
    blocks: &[Block],
) {
    for (b, &m) in blocks.chunks_exact(L::WIDTH).zip(members) {
        lanes[m].store(step, b);
    }
}

#[inline(always)]
fn crypt<'k, L: StepLane<'k>>(k: Kernels, blocks: &mut [Block], keys: &[&AesKey]) {
    if L::DECRYPT {
        k.decrypt_many(blocks, keys);
    } else {
        k.encrypt_many(blocks, keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::Backend;

    /// A toy chain of width 2 (slot 0: `x = E(x ^ i)`, slot 1: `y = E(y) ^ x`), so each step
    /// depends on the previous one in both slots.
    struct Toy<'k> {
        key: &'k AesKey,
        n: usize,
        x: Block,
        y: Block,
    }

    impl<'k> StepLane<'k> for Toy<'k> {
        const WIDTH: usize = 2;
        fn steps(&self) -> usize {
            self.n
        }
        fn key(&self, _slot: usize) -> &'k AesKey {
            self.key
        }
        fn load(&mut self, step: usize, inputs: &mut [Block]) {
            inputs[0] = self.x;
            inputs[0][0] ^= step as u8;
            inputs[1] = self.y;
        }
        fn store(&mut self, _step: usize, outputs: &[Block]) {
            self.x = outputs[0];
            self.y = outputs[1];
            for (a, b) in self.y.iter_mut().zip(&self.x) {
                *a ^= b;
            }
        }
    }

    #[test]
    fn comb_equals_single_for_every_lane_count() {
        let Ok(k16) = AesKey::new(&[1; 16]) else {
            return; // no AES-NI
        };
        let k32 = AesKey::new(&[2; 32]).expect("key");
        for backend in Backend::supported(&crate::cpu::CpuFeatures::detect()) {
            let kern = Kernels::new(backend).expect("supported");
            let make = || -> Vec<Toy<'_>> {
                (0..23)
                    .map(|i| Toy {
                        key: if i % 3 == 0 { &k32 } else { &k16 },
                        n: (i * 7) % 11,
                        x: [i as u8; 16],
                        y: [0x55; 16],
                    })
                    .collect()
            };
            let mut single = make();
            run_steps(kern, &mut single, Path::Single);
            for p in 1..=32 {
                let mut comb = make();
                run_steps(kern, &mut comb, Path::Comb { lanes: p });
                for (a, b) in single.iter().zip(&comb) {
                    assert_eq!((a.x, a.y), (b.x, b.y), "{backend:?} P={p}");
                }
            }
            // The chain really ran: a lane with steps changed its state.
            assert_ne!(single[1].x, [1u8; 16]);
        }
    }
}
