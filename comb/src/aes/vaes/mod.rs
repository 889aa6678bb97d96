//! VAES backend: AES rounds on ymm registers, two 128-bit lanes per register.
//!
//! The window kernel of the comb scheduler packs two messages per register (lanes `2r` and
//! `2r + 1` in register `r`), so `N` registers advance up to `2N` messages by one cipher call
//! per block. On AMD Zen 3 a 256-bit VAESENC has latency 4 and two issue per cycle, so eight
//! registers (16 messages) fill the AES unit, where the xmm kernel needs eight registers for
//! eight messages: twice the throughput for the same chain structure.
//!
//! Per-lane keys cannot be broadcast: each register needs its own pair of round keys. They are
//! assembled once per group of the plan ([`GroupKeys`]); a group's windows run ever shorter
//! prefixes of its lanes, so the pairs, and the assembled rows, stay valid for all of them.
//!
//! Every public function takes a [`VaesToken`](crate::cpu::VaesToken), the proof that the
//! CPU has AVX2 and VAES; that is what makes each call of a `#[target_feature]` function
//! below sound. Inside, register intrinsics are safe; the only `unsafe` left is memory
//! access through pointers, each with its justification.

mod quad;
mod wide;

pub(crate) use quad::{cfb_mac_quads, CFB_MAC_QUADS};

pub(crate) use wide::{
    crypt_many, ctr, ecb_then_cfb_decrypt, gcm_encrypt, parallel, YMM_STITCH_MIN,
};

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::lanes::output_is_next_chain;
use super::{AesKey, ChainLane, ChainRule};
use crate::block::{Block, BLOCK};
use core::marker::PhantomData;
use zeroize::Zeroize;

/// Row of [`PairKey`] holding the fold key `k_last ^ k_0`.
const FOLD: usize = 15;

/// The round keys `0..=14` and the fold key of two lanes, the low lane's in the low 128 bits
/// of each row: what one ymm register of the window kernel needs. Stored as 64-bit words so
/// that wiping it is 64 word writes, not 512 byte writes.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct PairKey([[u64; 4]; 16]);

/// Fills rows of `L` lanes' round keys side by side (`W = 2L` words a row; lane `j` in words
/// `2j, 2j + 1`, little-endian): round keys `0..=rounds` of `keys[0]`'s round count, and the
/// fold key in row [`FOLD`]. In place: no copy of key material on the stack.
fn fill_rows<const L: usize, const W: usize>(rows: &mut [[u64; W]; 16], keys: [&AesKey; L]) {
    const { assert!(W == 2 * L) };
    let mut set = |row: usize, blocks: [&[u8; 16]; L]| {
        for (j, b) in blocks.iter().enumerate() {
            rows[row][2 * j] = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            rows[row][2 * j + 1] = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        }
    };
    let rounds = keys[0].rounds.min(14);
    for r in 0..=rounds {
        set(r, keys.map(|k| &k.enc.0[r]));
    }
    set(FOLD, keys.map(|k| &k.fold));
}

impl PairKey {
    /// Fills the rows in place (no copy of key material on the stack).
    fn fill(&mut self, lo: &AesKey, hi: &AesKey) {
        fill_rows(&mut self.0, [lo, hi]);
    }

    /// Row `i` as a vector. Rows are 32 bytes in a 32-byte-aligned struct, so row `i` is
    /// 32-byte aligned; the words are little-endian, so the vector holds the key bytes in
    /// order.
    #[inline]
    #[target_feature(enable = "avx")]
    fn row(&self, i: usize) -> __m256i {
        let row = &self.0[i];
        // SAFETY: `row` is 32 readable, 32-byte-aligned bytes (see above).
        unsafe { _mm256_load_si256(row.as_ptr().cast()) }
    }
}

impl Zeroize for PairKey {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// [`PairKey`] for four lanes: what one zmm register of the zmm CFB+MAC kernel
/// ([`cfb_mac_quads`]) needs, a row a memory operand of its VAESENC (see that kernel for
/// what joining two pair rows at each use cost).
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(crate) struct QuadKey([[u64; 8]; 16]);

impl QuadKey {
    /// Fills the rows in place.
    fn fill(&mut self, keys: [&AesKey; 4]) {
        fill_rows(&mut self.0, keys);
    }

    /// Row `i` as a vector (64 bytes, 64-byte aligned, the lanes' key bytes in order).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn row(&self, i: usize) -> __m512i {
        let row = &self.0[i];
        // SAFETY: `row` is 64 readable, 64-byte-aligned bytes.
        unsafe { _mm512_load_si512(row.as_ptr().cast()) }
    }
}

impl Zeroize for QuadKey {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// Rows of several lanes' round keys side by side: [`PairKey`] (two lanes, a ymm register
/// of the window kernels) or [`QuadKey`] (four, a zmm register of [`cfb_mac_quads`]).
pub(crate) trait KeyRow: Default + Zeroize {
    /// Lanes a row.
    const LANES: usize;
    /// Rows a group of one key takes: one for the ymm kernels, which read the key as a row;
    /// none for [`cfb_mac_quads`], which broadcasts the key's own round keys.
    const SHARED_ROWS: usize;
    /// Fills the row from its lanes' keys (`keys.len() == LANES`).
    fn fill_lanes(&mut self, keys: &[&AesKey]);
}

impl KeyRow for PairKey {
    const LANES: usize = 2;
    const SHARED_ROWS: usize = 1;
    fn fill_lanes(&mut self, keys: &[&AesKey]) {
        self.fill(keys[0], keys[1]);
    }
}

impl KeyRow for QuadKey {
    const LANES: usize = 4;
    const SHARED_ROWS: usize = 0;
    fn fill_lanes(&mut self, keys: &[&AesKey]) {
        self.fill(core::array::from_fn(|j| keys[j]));
    }
}

/// The key rows of one group of the plan: for one key, [`KeyRow::SHARED_ROWS`] rows of it
/// (the shared-key fast path), else one row per register ([`KeyRow::LANES`] lanes a row;
/// slots past the last lane take the key of their row's first lane). Reused from group to
/// group: the rows only grow, are overwritten in place, and all of them are wiped on drop.
///
/// The rows live inline (up to [`MAX_GROUP_ROWS`]: 8 KiB of pairs; rows of four lanes use at
/// most half of that count): a vector of them was an aligned heap allocation and its free on
/// every batch call, with glibc's consolidation of its small free chunks on the way.
///
/// The lifetime is that of the keys: the shared row remembers which key it holds and is not
/// filled again for the next group under the same key (a borrowed key cannot be dropped, nor
/// another put at its address, while `'k` lasts, so an equal address is the same key).
pub(crate) struct GroupKeys<'k, R: KeyRow = PairKey> {
    rows: arrayvec::ArrayVec<R, MAX_GROUP_ROWS>,
    used: usize,
    shared: bool,
    /// The key whose rows `rows[0]` holds from a shared-key assignment, if it still does.
    shared_row: Option<&'k AesKey>,
}

impl<R: KeyRow> Default for GroupKeys<'_, R> {
    fn default() -> Self {
        GroupKeys {
            rows: arrayvec::ArrayVec::new(),
            used: 0,
            shared: false,
            shared_row: None,
        }
    }
}

/// Most rows a group needs: one per register of two lanes, for the planner's widest group.
pub(crate) const MAX_GROUP_ROWS: usize = crate::sched::plan::MAX_LANES.div_ceil(2);

impl<'k, R: KeyRow> GroupKeys<'k, R> {
    /// Assembles the rows for lanes with these keys, in lane order (all of one key size), at
    /// most [`MAX_LANES`](crate::sched::plan::MAX_LANES) of them.
    pub(crate) fn assign(&mut self, keys: impl ExactSizeIterator<Item = &'k AesKey> + Clone) {
        const { assert!(R::LANES <= 4) };
        let n = keys.len();
        assert!(
            n <= 2 * MAX_GROUP_ROWS,
            "a group has at most MAX_LANES lanes"
        );
        let mut all = keys.clone();
        let Some(first) = all.next() else {
            self.shared = true;
            self.used = 0;
            return;
        };
        self.shared = all.all(|k| core::ptr::eq(k, first));
        self.used = if self.shared {
            R::SHARED_ROWS
        } else {
            n.div_ceil(R::LANES)
        };
        while self.rows.len() < self.used {
            self.rows.push(R::default());
        }
        if self.shared {
            if self.used > 0 && !self.shared_row.is_some_and(|k| core::ptr::eq(k, first)) {
                self.rows[0].fill_lanes(&[first; 4][..R::LANES]);
                self.shared_row = Some(first);
            }
            return;
        }
        self.shared_row = None;
        let mut keys = keys;
        for row in &mut self.rows[..self.used] {
            let lo = keys.next().unwrap_or(first);
            let mut lanes = [lo; 4];
            for lane in &mut lanes[1..R::LANES] {
                // A slot past the last lane takes the row's first lane's key (an odd last
                // lane is paired with itself).
                *lane = keys.next().unwrap_or(lo);
            }
            row.fill_lanes(&lanes[..R::LANES]);
        }
    }

    pub(crate) fn shared(&self) -> bool {
        self.shared
    }

    /// Rows for the registers from `first` on: the shared rows, or the registers' own.
    pub(crate) fn rows_from(&self, first: usize) -> &[R] {
        if self.shared {
            &self.rows[..self.used]
        } else {
            &self.rows[first.min(self.used)..self.used]
        }
    }
}

impl<R: KeyRow> Drop for GroupKeys<'_, R> {
    fn drop(&mut self) {
        for row in &mut self.rows {
            row.zeroize();
        }
    }
}

impl<R: KeyRow> core::fmt::Debug for GroupKeys<'_, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never print key material.
        write!(f, "GroupKeys({} rows)", self.used)
    }
}

/// Rounds 1..rounds-1 (all VAESENC rounds) on the N registers of `x`, rounds outer,
/// registers inner: `middle_rounds!(N, SHARED; x, keys, rounds)`.
///
/// A macro, not a function: as an `#[inline]` function it was not inlined into every
/// instantiation of the window kernel (N = 4 was not), and the states then went through the
/// stack around a call every block (OFB, 8 lanes: 0.42 TSC cycles/byte where 6 lanes ran
/// 0.37).
macro_rules! middle_rounds {
    ($n:expr, $shared:expr; $x:expr, $keys:expr, $rounds:expr) => {{
        let x: &mut [__m256i; $n] = $x;
        let keys: &[PairKey] = $keys;
        if $shared {
            // The rows walked, not indexed by round: indexed, LLVM kept the loop's state in
            // registers it rotated with six moves every two rounds, some 60 uops a step
            // beside the 80 VAESENC of eight registers. Intel VM (AVX-512), `comb bench`,
            // comb engine, medians of five alternated pairs, TSC cycles/byte: at 1456 bytes
            // CBC 0.173 -> 0.169, OFB 0.166 -> 0.155, CMAC 0.174 -> 0.168, CCM 0.326 ->
            // 0.313; on the realistic mix OFB 0.265 -> 0.256, CCM 0.494 -> 0.482, CBC and
            // CMAC unchanged. The same change in the xmm kernel made ECB on the mix 5% slower
            // and in CLOC's and SILC's two-chain kernel changed nothing: not made there.
            for row in &keys[0].0[1..$rounds] {
                // SAFETY: a row is 32 readable, 32-byte-aligned bytes (`PairKey::row`).
                let k = unsafe { _mm256_load_si256(row.as_ptr().cast()) };
                for xj in x.iter_mut() {
                    *xj = _mm256_aesenc_epi128(*xj, k);
                }
            }
        } else {
            for r in 1..$rounds {
                for (j, xj) in x.iter_mut().enumerate() {
                    *xj = _mm256_aesenc_epi128(*xj, keys[j].row(r));
                }
            }
        }
    }};
}

/// The two lanes of a register: where they read and write, and whether the high lane is real
/// (an odd lane count leaves the last register's high half a shadow of its low lane: computed
/// from valid memory under a valid key, never stored).
///
/// Only the four pointers the steps use, not the lanes' [`IoPtrs`](crate::block::IoPtrs):
/// with those (72 bytes a pair) the kernels' pair arrays were built and updated through
/// 32-byte stores reloaded as one 64-byte copy, a failed store forward per register (5% of the
/// CFB+MAC kernel's `perf` samples at 512 bytes went to the one after a high lane's end
/// alone).
#[derive(Clone, Copy)]
struct Pair<'a> {
    lo_src: *const u8,
    lo_dst: *mut u8,
    hi_src: *const u8,
    hi_dst: *mut u8,
    hi_live: bool,
    _life: PhantomData<&'a mut [u8]>,
}

impl<'a> Pair<'a> {
    /// Registers `0..N` of `lanes` (at least one): lanes `2r` and `2r + 1`, an odd count's
    /// last register a shadow of its low lane. (Registers past the lanes, which the CFB+MAC
    /// kernels' fixed arrays have and never run, read the last lane.)
    // Always inlined: as a call it returned the array through memory (4.6% of CFB's samples).
    #[inline(always)]
    fn of_lanes<const N: usize>(lanes: &[ChainLane<'a>]) -> [Pair<'a>; N] {
        let n = lanes.len();
        core::array::from_fn(|r| {
            let (lo, hi) = (
                &lanes[(2 * r).min(n - 1)].io,
                &lanes[(2 * r + 1).min(n - 1)].io,
            );
            Pair {
                lo_src: lo.src,
                lo_dst: lo.dst,
                hi_src: hi.src,
                hi_dst: hi.dst,
                hi_live: 2 * r + 1 < n,
                _life: PhantomData,
            }
        })
    }

    /// Makes the high lane a shadow of the low one (the high lane has ended), in place.
    #[inline(always)]
    fn drop_hi(&mut self) {
        self.hi_src = self.lo_src;
        self.hi_dst = self.lo_dst;
        self.hi_live = false;
    }

    /// Block `i` of both lanes. Caller guarantees `16 * (i + 1)` is within both inputs.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn load(&self, i: usize) -> __m256i {
        // SAFETY: by the caller's guarantee both 16-byte reads are inside the inputs.
        unsafe {
            _mm256_loadu2_m128i(
                self.hi_src.add(BLOCK * i).cast(),
                self.lo_src.add(BLOCK * i).cast(),
            )
        }
    }

    /// Block `i` of both lanes under a byte mask (bit `j` of `mask`: byte `j` of the register,
    /// the low lane's in bits 0..16), masked-off bytes zero and not read. Caller guarantees
    /// the unmasked bytes of block `i` are within the inputs, and AVX-512BW and AVX-512VL.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw")]
    unsafe fn load_masked(&self, i: usize, mask: u32) -> __m256i {
        // SAFETY: masked-off bytes are neither read nor can they fault; the others are inside
        // the inputs (caller). The addresses are formed with `wrapping_add`: a lane with no
        // bytes left may point past its buffer, where `add` would be undefined.
        unsafe {
            let lo = _mm_maskz_loadu_epi8(mask as u16, self.lo_src.wrapping_add(BLOCK * i).cast());
            let hi = _mm_maskz_loadu_epi8(
                (mask >> 16) as u16,
                self.hi_src.wrapping_add(BLOCK * i).cast(),
            );
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    }

    /// [`Pair::store`] under a byte mask as [`Pair::load_masked`]'s: no masked-off byte is
    /// written. Caller guarantees as for the load, for the outputs.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw")]
    unsafe fn store_masked(&self, i: usize, v: __m256i, mask: u32) {
        // SAFETY: masked-off bytes are not written; the others are inside the outputs
        // (addresses by `wrapping_add`, as in `load_masked`).
        unsafe {
            _mm_mask_storeu_epi8(
                self.lo_dst.wrapping_add(BLOCK * i).cast(),
                mask as u16,
                _mm256_castsi256_si128(v),
            );
            if self.hi_live {
                _mm_mask_storeu_epi8(
                    self.hi_dst.wrapping_add(BLOCK * i).cast(),
                    (mask >> 16) as u16,
                    _mm256_extracti128_si256::<1>(v),
                );
            }
        }
    }

    /// Writes block `i` of the low lane, and of the high lane if it is real. Caller guarantees
    /// `16 * (i + 1)` is within both outputs and the outputs are non-null.
    ///
    /// The high half's store (`vextracti128` to memory) is a real cost of the chain kernel:
    /// with it left out (a wrong-output experiment) CBC at 2048 B ran 13% faster on Zen 3
    /// (0.184-0.191 against 0.214-0.219 TSC cycles/byte, in-process loop). Neither way around
    /// it paid: a `vpmaskmovd` store of the upper half ran 2.4x slower, and the pair
    /// stored whole into a stack slot, its upper half reloaded and stored from
    /// there, ran 8% slower (reloaded at once) and 16-24% slower (one step later). Loading
    /// the pair as a broadcast and a blend instead of `vinserti128` changed nothing.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn store(&self, i: usize, v: __m256i) {
        // SAFETY: by the caller's guarantee both 16-byte writes are inside the outputs.
        unsafe {
            if self.hi_live {
                _mm256_storeu2_m128i(
                    self.hi_dst.add(BLOCK * i).cast(),
                    self.lo_dst.add(BLOCK * i).cast(),
                    v,
                );
            } else {
                _mm_storeu_si128(self.lo_dst.add(BLOCK * i).cast(), _mm256_castsi256_si128(v));
            }
        }
    }
}

/// What the chain adds to the cipher output of block `i` to make the next cipher input,
/// before whitening: `p_i` if the chain xors data, `^ p_{i+1}` if the input does.
///
/// # Safety
/// Block `i` (and `i + 1` for input-xoring rules) lies within both lanes' inputs.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn next_input<R: ChainRule>(pair: &Pair<'_>, i: usize) -> __m256i {
    let mut d = _mm256_setzero_si256();
    if R::CHAIN_XORS_DATA {
        // SAFETY: block i is within the inputs (caller).
        d = unsafe { pair.load(i) };
    }
    if R::INPUT_XORS_DATA {
        // SAFETY: block i + 1 is within the inputs (caller).
        d = _mm256_xor_si256(d, unsafe { pair.load(i + 1) });
    }
    d
}

/// Whether [`chain_window`] ends each step with a plain last round instead of the fold: for
/// rules whose output is the cipher output and whose next input is that output xor data (CBC
/// encryption), once the window has more registers than the AES unit needs to hide its
/// latency. The fold makes the output cost two xors after the last round (`x ^ k_0 ^ d`); the
/// plain round stores its result as it is and whitens the next input with one xor of `d ^
/// k_0`, which does not wait for the chain. That adds an xor's cycle to each block's chain,
/// which wide windows hide. Intel VM, realistic mix, alternated builds: CBC 0.247-0.248 ->
/// 0.237-0.241 TSC cycles/byte (three pairs), `perf` samples of the comb engine 1716-1722 ->
/// 1644-1665; at 2048 bytes unchanged; thresholds of 4 or 8 registers within noise of 7. The
/// same in the xmm kernel (`COMB_BACKEND=ni`, P = 8) made CBC on the mix 5% slower (samples
/// 2421-2514 -> 2531-2742), so that kernel folds at every width.
const fn unfolded_last_round<R: ChainRule, const N: usize>() -> bool {
    R::WRITES_OUTPUT && R::INPUT_XORS_DATA && !R::CHAIN_XORS_DATA && !R::OUTPUT_XORS_DATA && N >= 7
}

/// Advances `lanes` (`2N - 1` or `2N` of them) by `count >= 1` blocks each, from block
/// `start`: the ymm counterpart of [`super::ni::chain_window`], with the same folding of the
/// chaining xor and the next whitening into the last round (but see [`unfolded_last_round`]).
///
/// # Safety
/// `lanes.len()` is `2N - 1` or `2N`; for every lane `start + count <= lane.blocks`; every
/// lane's key has the same number of rounds as `lanes[0]`'s; `keys` holds the rows of these
/// registers (`keys[r]` for lanes `2r`, `2r + 1`), or with `SHARED` one row whose key every
/// lane uses.
#[target_feature(enable = "avx2,vaes,aes")]
pub(crate) unsafe fn chain_window<R: ChainRule, const N: usize, const SHARED: bool>(
    lanes: &mut [ChainLane<'_>],
    keys: &[PairKey],
    start: usize,
    count: usize,
) {
    let n = lanes.len();
    debug_assert!(count >= 1 && (n == 2 * N || n + 1 == 2 * N));
    debug_assert!(keys.len() >= if SHARED { 1 } else { N });
    debug_assert!(lanes.iter().all(|l| start + count <= l.blocks));
    let rounds = lanes[0].key.rounds.min(14);
    let pairs: [Pair<'_>; N] = Pair::of_lanes(lanes);
    let key = |r: usize| if SHARED { &keys[0] } else { &keys[r] };
    let zero = _mm256_setzero_si256();

    // SAFETY (all loads/stores below): block indices are in start..start+count, within every
    // lane's `blocks`, so inside its input and (for writing rules) its output; the shadow
    // high half of an odd last register reads its low lane's blocks.
    let mut x: [__m256i; N] = core::array::from_fn(|r| {
        let hi = (2 * r + 1).min(n - 1);
        // SAFETY: each chain is 16 readable bytes.
        let c = unsafe {
            _mm256_loadu2_m128i(
                lanes[hi].chain.as_ptr().cast(),
                lanes[2 * r].chain.as_ptr().cast(),
            )
        };
        let d = if R::INPUT_XORS_DATA {
            unsafe { pairs[r].load(start) }
        } else {
            zero
        };
        _mm256_xor_si256(_mm256_xor_si256(c, d), key(r).row(0))
    });

    let end = start + count - 1;
    for i in start..end {
        // Opaque to the optimiser, so every address is `base + 16 * i`, one index register:
        // otherwise loop strength reduction turns the 4N lane pointers into as many induction
        // variables, which spill and cost a read-modify-write each per block.
        let i = core::hint::black_box(i);
        // What each register's last round folds in, loaded before this step's stores. Loaded
        // right where it is used, after the other registers' output stores, it measured
        // slower (CBC at 2048 B: 0.227-0.234 against 0.215-0.218 TSC cycles/byte; CMAC on the
        // realistic mix 0.420-0.427 against 0.410-0.413), presumably because the load waited
        // on those stores and the delay reached the chain through the fold's key operand.
        let dd: [__m256i; N] = core::array::from_fn(|r| unsafe { next_input::<R>(&pairs[r], i) });
        middle_rounds!(N, SHARED; &mut x, keys, rounds);
        for r in 0..N {
            let pair = &pairs[r];
            let d = dd[r];
            if unfolded_last_round::<R, N>() {
                let y = _mm256_aesenclast_epi128(x[r], key(r).row(rounds));
                // SAFETY: block i is within the outputs (see above).
                unsafe { pair.store(i, y) };
                x[r] = _mm256_xor_si256(y, _mm256_xor_si256(d, key(r).row(0)));
                continue;
            }
            x[r] = _mm256_aesenclast_epi128(x[r], _mm256_xor_si256(key(r).row(FOLD), d));
            if R::WRITES_OUTPUT {
                // The last round gave y ^ k_0 ^ d, y being the cipher output.
                let out = if output_is_next_chain::<R>() {
                    // y ^ p_i with d = p_i (CFB): x ^ k_0, without reloading p_i. On the
                    // Intel VM (AVX-512; `comb bench`, comb engine, alternated builds, TSC
                    // cycles/byte) CFB encryption at 1456 bytes ran 0.184-0.191 with the
                    // reload and 0.158-0.160 without (three pairs); on the realistic mix
                    // 0.283-0.296 against 0.264-0.279 (six pairs).
                    _mm256_xor_si256(x[r], key(r).row(0))
                } else {
                    let y = _mm256_xor_si256(x[r], _mm256_xor_si256(key(r).row(0), d));
                    if R::OUTPUT_XORS_DATA {
                        _mm256_xor_si256(y, unsafe { pair.load(i) })
                    } else {
                        y
                    }
                };
                unsafe { pair.store(i, out) };
            }
        }
    }

    // Last block of the window: plain last round, then the chaining values.
    middle_rounds!(N, SHARED; &mut x, keys, rounds);
    for r in 0..N {
        let y = _mm256_aesenclast_epi128(x[r], key(r).row(rounds));
        let p = if R::CHAIN_XORS_DATA || R::OUTPUT_XORS_DATA {
            unsafe { pairs[r].load(end) }
        } else {
            zero
        };
        if R::WRITES_OUTPUT {
            let out = if R::OUTPUT_XORS_DATA {
                _mm256_xor_si256(y, p)
            } else {
                y
            };
            unsafe { pairs[r].store(end, out) };
        }
        let c = if R::CHAIN_XORS_DATA {
            _mm256_xor_si256(y, p)
        } else {
            y
        };
        let (lo, hi) = lanes[2 * r..].split_at_mut(1);
        // SAFETY: each chain is 16 writable bytes; the shadow half is not stored.
        unsafe {
            _mm_storeu_si128(lo[0].chain.as_mut_ptr().cast(), _mm256_castsi256_si128(c));
            if let Some(h) = hi.first_mut() {
                _mm_storeu_si128(
                    h.chain.as_mut_ptr().cast(),
                    _mm256_extracti128_si256::<1>(c),
                );
            }
        }
    }
}

/// Registers (lane pairs) of one [`cfb_mac_lanes`] call: 8 ymm states (a CFB and a MAC state
/// per register), what AVX2's 16 ymm registers hold beside the round keys and data.
pub(crate) const CFB_MAC_REGISTERS: usize = 4;

/// Registers of one [`cfb_mac_lanes_vl`] call: 16 lanes, 16 ymm states, which AVX-512VL's 32
/// ymm registers hold. Intel AVX-512 VM (Rocket Lake), CLOC, comb engine, P = 16, alternated
/// builds, CLOC's time over ECB's in the same run: at 4096 bytes 2.54-2.58 -> 2.14-2.22 and at
/// 1456 bytes 2.60-2.65 -> 2.33-2.37 against two calls of [`CFB_MAC_REGISTERS`] (three
/// alternated runs each); the same 8-register calls compiled for AVX2 alone spill and ran at
/// 3.01-3.25.
pub(crate) const CFB_MAC_REGISTERS_VL: usize = 8;

/// Widest register array of the CFB+MAC kernels (the larger of the two limits above; at most
/// the 8 widths `by_width!` has).
const CFB_MAC_ARRAY: usize = if CFB_MAC_REGISTERS > CFB_MAC_REGISTERS_VL {
    CFB_MAC_REGISTERS
} else {
    CFB_MAC_REGISTERS_VL
};
const _: () = assert!(CFB_MAC_ARRAY <= 8);

/// `by_width!(w, max; K => expr)`: `expr` with the constant `K` equal to the run-time `w`, for
/// `w` in `1..=max` (`max <= 8`): how a kernel picks the instantiation for its live width.
macro_rules! by_width {
    ($w:expr, $max:expr; $k:ident => $e:expr) => {
        by_width!(@arms $w, $max; $k => $e; 1 2 3 4 5 6 7 8)
    };
    (@arms $w:expr, $max:expr; $k:ident => $e:expr; $($n:literal)*) => {
        match $w {
            $($n if $n <= $max => {
                const $k: usize = $n;
                $e
            })*
            _ => unreachable!("widths 1..=max"),
        }
    };
}

/// The first `K` entries of a kernel's register array.
#[inline(always)]
fn head<T, const K: usize>(x: &mut [T; CFB_MAC_ARRAY]) -> &mut [T; K] {
    x.first_chunk_mut::<K>().expect("K <= CFB_MAC_ARRAY")
}

/// Defines a CFB+MAC kernel (see [`cfb_mac_lanes`]) compiled for `$features`, running at most
/// `$max` registers, and with `$tails` the partial last blocks too (byte-masked loads and
/// stores: AVX-512BW): one body for the AVX2 kernel and the AVX-512 one. With `DEC`
/// (decryption's pass of CLOC and SILC) the input is the ciphertext: the output is the
/// keystream `E(X_i)`, and both chains take the loaded `C_i` (`X_{i+1} = fix1(C_i)`, the MAC
/// over `C_i` zero beyond the message), so they are the encryption's chains without a
/// plaintext ever made.
macro_rules! cfb_mac_kernel {
    ($(#[$attr:meta])* $name:ident, $features:literal, $max:expr, $tails:expr) => {
        $(#[$attr])*
        #[target_feature(enable = $features)]
        pub(crate) unsafe fn $name<const SHARED: bool, const DEC: bool>(
            lanes: &mut [ChainLane<'_>],
            macs: &mut [Block],
            keys: &[PairKey],
        ) {
            /// Steps `from..to` on registers `0..K` (their states `a`, CFB, and `b`, MAC,
            /// whitened): each step loads every register's message blocks, runs both chains'
            /// rounds and stores the ciphertext of the live lanes. With `masked` (a kernel
            /// with tails), the last step's loads and stores are under `masks` (per register,
            /// as [`Pair::load_masked`]), and its MAC takes the ciphertext zero beyond them.
            /// (That step as a call of its own, the states through memory between the two,
            /// measured the same: realistic mix and 40-100-byte messages, alternated runs.)
            ///
            /// # Safety
            /// The kernel's features; blocks `from..to` (the last one's unmasked bytes) lie
            /// inside every register's inputs and, for the lanes it stores, outputs; `keys` as
            /// for the kernel.
            #[inline]
            #[target_feature(enable = $features)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn steps<const K: usize, const SHARED: bool, const DEC: bool>(
                pairs: &[Pair<'_>; K],
                keys: &[PairKey],
                rounds: usize,
                a: &mut [__m256i; K],
                b: &mut [__m256i; K],
                masks: &[u32; K],
                from: usize,
                to: usize,
                masked: bool,
            ) {
                let key = |r: usize| if SHARED { &keys[0] } else { &keys[r] };
                let fix = fix1_bits();
                for i in from..to {
                    // Opaque to the optimiser, as in `chain_window`: one index register for
                    // all lanes.
                    let i = core::hint::black_box(i);
                    let masked = $tails && masked && i + 1 == to;
                    // The message blocks, loaded before this step's stores (see
                    // `chain_window`). SAFETY (loads and stores): the caller's guarantee.
                    let ps: [__m256i; K] = core::array::from_fn(|r| unsafe {
                        if masked {
                            pairs[r].load_masked(i, masks[r])
                        } else {
                            pairs[r].load(i)
                        }
                    });
                    for rd in 1..rounds {
                        for r in 0..K {
                            let k = key(r).row(rd);
                            a[r] = _mm256_aesenc_epi128(a[r], k);
                            b[r] = _mm256_aesenc_epi128(b[r], k);
                        }
                    }
                    for r in 0..K {
                        // The ciphertext `C` straight out of the last round (the data
                        // folded into its key), the MAC's `T ^ k_0` out of the fold key: no
                        // whitening to undo before the store, one vector operation fewer per
                        // register and step than whitened outputs (Intel AVX-512 VM, CLOC/ECB,
                        // alternated runs, medians: realistic mix 2.80 -> 2.74, 1456 bytes
                        // 2.41 -> 2.34, 4096 bytes 2.29 -> 2.22; the AVX2 kernel, forced,
                        // 1456 bytes 2.65 -> 2.53, the mix unchanged).
                        // With `DEC` the input is the ciphertext: the step's output is the
                        // keystream `E(X_i)` alone, and the chains take the loaded `C_i`.
                        let last = if DEC {
                            key(r).row(rounds)
                        } else {
                            _mm256_xor_si256(key(r).row(rounds), ps[r])
                        };
                        let mut c = _mm256_aesenclast_epi128(a[r], last);
                        let t = _mm256_aesenclast_epi128(b[r], key(r).row(FOLD));
                        if masked {
                            // The ciphertext, zero beyond the message: what the MAC takes.
                            // SAFETY: only the kernel with tails masks, and it has
                            // AVX-512BW and AVX-512VL.
                            if !DEC {
                                c = unsafe { zero_masked(masks[r], c) };
                            }
                            unsafe { pairs[r].store_masked(i, c, masks[r]) };
                        } else {
                            unsafe { pairs[r].store(i, c) };
                        }
                        // The ciphertext block, zero beyond the message (`DEC`: as loaded).
                        let c = if DEC { ps[r] } else { c };
                        b[r] = _mm256_xor_si256(t, c);
                        // `fix1(C) ^ k_0`. (As one `vpternlogd` in the AVX-512 kernel it ran
                        // 17% slower at 1456 bytes: Intel AVX-512 VM, CLOC/ECB 2.34 -> 2.74.)
                        a[r] = _mm256_xor_si256(_mm256_or_si256(c, fix), key(r).row(0));
                    }
                }
            }

            const MAX: usize = $max;
            const TAILS: bool = $tails;
            const { assert!(MAX <= CFB_MAC_ARRAY) };
            // A lane's steps: its whole blocks, and with tails its partial last one.
            let steps_of = |l: &ChainLane<'_>| {
                if TAILS {
                    l.io.len.div_ceil(BLOCK)
                } else {
                    l.blocks
                }
            };
            let n = lanes.len();
            debug_assert!((1..=2 * MAX).contains(&n) && macs.len() == n);
            debug_assert!(keys.len() >= if SHARED { 1 } else { n.div_ceil(2) });
            debug_assert!(lanes.windows(2).all(|w| steps_of(&w[0]) >= steps_of(&w[1])));
            debug_assert!(!TAILS || lanes.iter().all(|l| l.blocks == l.io.len / BLOCK));
            let rounds = lanes[0].key.rounds.min(14);
            let mut pairs: [Pair<'_>; CFB_MAC_ARRAY] = Pair::of_lanes(lanes);
            let key = |r: usize| if SHARED { &keys[0] } else { &keys[r] };
            // Register r's two lanes' values (the shadow high half of an odd last register
            // copies its low lane), whitened; registers past the lanes are never run.
            let lane = |j: usize| j.min(n - 1);
            let regs = n.div_ceil(2);
            let state = |r: usize, of: &dyn Fn(usize) -> Block| {
                if r < regs {
                    let v = load_pair(&of(lane(2 * r)), &of(lane(2 * r + 1)));
                    _mm256_xor_si256(v, key(r).row(0))
                } else {
                    _mm256_setzero_si256()
                }
            };
            let mut a: [__m256i; CFB_MAC_ARRAY] =
                core::array::from_fn(|r| state(r, &|j| lanes[j].chain));
            let mut b: [__m256i; CFB_MAC_ARRAY] = core::array::from_fn(|r| state(r, &|j| macs[j]));

            // Lanes `0..live` have blocks left; the ended ones are a suffix (non-increasing
            // lengths), so the live registers are a prefix.
            let mut live = n;
            let mut i = 0;
            loop {
                // The lanes that end here: their states out. A high lane's half becomes a
                // shadow of its low lane; a low lane takes its register out of the steps.
                while live > 0 && steps_of(&lanes[live - 1]) <= i {
                    live -= 1;
                    let (r, high) = (live / 2, live % 2 == 1);
                    let k0 = key(r).row(0);
                    let (chain, mac) = (_mm256_xor_si256(a[r], k0), _mm256_xor_si256(b[r], k0));
                    let (chain, mac) = if high {
                        pairs[r].drop_hi();
                        (
                            _mm256_extracti128_si256::<1>(chain),
                            _mm256_extracti128_si256::<1>(mac),
                        )
                    } else {
                        (_mm256_castsi256_si128(chain), _mm256_castsi256_si128(mac))
                    };
                    // SAFETY: each is 16 writable bytes.
                    unsafe {
                        _mm_storeu_si128(lanes[live].chain.as_mut_ptr().cast(), chain);
                        _mm_storeu_si128(macs[live].as_mut_ptr().cast(), mac);
                    }
                }
                if live == 0 {
                    break;
                }
                let end = steps_of(&lanes[live - 1]);
                // With tails: the lanes that end at `end` with a partial block take their
                // last step (`end - 1`) under byte masks, every other lane's block of that
                // step whole (lanes that run on have whole blocks there; a shadow half takes
                // its low lane's mask).
                let (mut masks, masked) = if TAILS {
                    let (m, masked) = tail_masks::<2, CFB_MAC_ARRAY>(lanes, live, end, |r, _| {
                        pairs[r].hi_live
                    });
                    (m.map(|m| m as u32), masked)
                } else {
                    ([u32::MAX; CFB_MAC_ARRAY], false)
                };
                // SAFETY: every live register's lanes (a shadow half reads its low lane, never
                // stored) have whole blocks up to `end`, or with `masked` up to `end - 1` and
                // the unmasked bytes of block `end - 1`; the kernel's features are this
                // function's.
                by_width!(live.div_ceil(2), MAX; K => unsafe {
                    steps::<K, SHARED, DEC>(
                        head(&mut pairs),
                        keys,
                        rounds,
                        head(&mut a),
                        head(&mut b),
                        head(&mut masks),
                        i,
                        end,
                        masked,
                    )
                });
                i = end;
            }
        }
    };
}

cfb_mac_kernel!(
    /// The ymm counterpart of [`super::ni::cfb_mac_window`] (CLOC's and SILC's encryption, the
    /// CFB chain and the MAC over its ciphertext of every lane), at most
    /// [`CFB_MAC_REGISTERS`] registers: lanes `2r` and `2r + 1` share register pair `r`, one
    /// register for their CFB chains and one for their MAC chains, both under the pair's key
    /// rows: each register pair keeps four independent blocks in flight.
    ///
    /// Unlike [`chain_window`], the lanes need not be equally long: every lane runs from block
    /// 0 to its own end (`blocks`), its final chain and MAC state written as it ends, inside
    /// this one call. A high lane that has ended becomes a shadow of its register's low lane
    /// (computed, never stored); a register whose lanes have both ended leaves the steps (the
    /// live registers are a prefix: the call runs on with an instantiation one register
    /// narrower). What the call saves is a kernel call (the states in and out, the dispatch)
    /// at every distinct length, which windows of equal progress make.
    ///
    /// Measured on Zen 3 against windows (the comb engine, alternated builds, TSC cycles/byte),
    /// when an ended register still ran as a shadow of lane 0. What the windows cost first:
    /// the realistic mix with each group's 16 lengths set to their mean (the same bytes, one
    /// window per group) ran CLOC at 0.925-0.937 against 1.06-1.08 (two pairs; ECB 0.347-0.352
    /// against 0.354-0.365), about 12% for the windows and unequal tails. These calls take
    /// back about a third of it. On the realistic mix, over twelve pairs of runs (31 samples
    /// each), CLOC's time over ECB's in the same run: median 2.95 -> 2.82, lower in 10 of the
    /// 12 pairs (SILC 2.92 -> 2.81, 10 of 12), CLOC's median 1.034 -> 0.992; as committed 2.85
    /// -> 2.74, lower in 7 of 8 pairs. At 1456 bytes, where every window is whole: CLOC 0.596
    /// -> 0.586, SILC 0.596 -> 0.566 (medians of six pairs; ECB, whose code did not change,
    /// 0.234 -> 0.221 in the same runs: code layout moves these by a few percent either way).
    ///
    /// # Safety
    /// AVX2 and VAES; `lanes.len() == macs.len()` is `1..=2 * CFB_MAC_REGISTERS`; lanes are in
    /// order of non-increasing `blocks` (each lane's blocks inside its input and output, as
    /// [`ChainLane`] promises); every lane's key has the same number of rounds as
    /// `lanes[0]`'s; `keys` holds the rows of these registers (`keys[r]` for lanes `2r`, `2r +
    /// 1`), or with `SHARED` one row whose key every lane uses.
    cfb_mac_lanes,
    "avx2,vaes,aes",
    CFB_MAC_REGISTERS,
    false
);

cfb_mac_kernel!(
    /// [`cfb_mac_lanes`] compiled with AVX-512VL, whose 32 ymm registers hold the states of
    /// [`CFB_MAC_REGISTERS_VL`] registers (16 lanes) without spilling, and with each lane's
    /// partial last block (`io.len % 16` bytes past its `blocks`) as its last step: its
    /// loads and stores under AVX-512BW byte masks (no byte past the message touched), the
    /// MAC taking `C_m` zero beyond them, so the lane ends with `T_{m-1} ^ C_m` (its chain
    /// then unspecified), as the separate batched pass over the tails leaves it. Where some
    /// lanes end on a partial block, that step runs under masks; the others are as in
    /// [`cfb_mac_lanes`]. Against that pass (Intel AVX-512 VM, comb engine, five alternated
    /// runs, CLOC's time over ECB's in the same run, medians): the realistic mix 2.81 -> 2.77
    /// (SILC 2.96 -> 2.88), messages of 40-100 bytes (four runs) 3.58 -> 3.42 (SILC 3.95 ->
    /// 3.77). A timing-only build without the pass had put its cost at 34-46 TSC cycles per
    /// message of the mix.
    ///
    /// # Safety
    /// As [`cfb_mac_lanes`], with AVX-512F, AVX-512VL and AVX-512BW, up to `2 *
    /// CFB_MAC_REGISTERS_VL` lanes, each lane's `io.len` bytes (not only its `blocks`) inside
    /// its input and output, and the lanes in order of non-increasing `io.len.div_ceil(16)`
    /// (and of non-increasing `blocks`).
    cfb_mac_lanes_vl,
    "avx2,vaes,aes,avx512f,avx512vl,avx512bw",
    CFB_MAC_REGISTERS_VL,
    true
);

/// `v` with the bytes outside `mask` zeroed.
///
/// # Safety
/// AVX-512BW and AVX-512VL.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw")]
unsafe fn zero_masked(mask: u32, v: __m256i) -> __m256i {
    _mm256_maskz_mov_epi8(mask, v)
}

/// The byte masks of step `end - 1` (the last) of lanes `0..live`, for a CFB+MAC kernel with
/// `PER` lanes per register (bits `16s..16s + 16` of register `r`'s mask for lane `PER·r +
/// s`): a lane that ends at `end` on a partial block keeps its message's bytes, every other
/// lane all 16 (lanes that run on have whole blocks there), and a shadow slot (`slot_live(r,
/// s)` false) its register's slot 0's, whose memory it reads. Lanes are in order of
/// non-increasing `io.len.div_ceil(16)`. Also whether any lane is partial there.
#[inline(always)]
fn tail_masks<const PER: usize, const R: usize>(
    lanes: &[ChainLane<'_>],
    live: usize,
    end: usize,
    slot_live: impl Fn(usize, usize) -> bool,
) -> ([u64; R], bool) {
    let mut masks = [u64::MAX; R];
    let mut masked = false;
    for (j, l) in lanes[..live].iter().enumerate().rev() {
        if l.io.len.div_ceil(BLOCK) != end {
            break;
        }
        let tail = l.io.len % BLOCK;
        if tail != 0 {
            let (r, s) = (j / PER, j % PER);
            masks[r] &= !(0xffff << (16 * s)) | (((1u64 << tail) - 1) << (16 * s));
            masked = true;
        }
    }
    for (r, m) in masks.iter_mut().enumerate() {
        for s in 1..PER {
            if !slot_live(r, s) {
                *m = (*m & !(0xffff << (16 * s))) | ((*m & 0xffff) << (16 * s));
            }
        }
    }
    (masks, masked)
}

/// The bit `fix1` sets, in both lanes of a register.
#[inline]
#[target_feature(enable = "avx")]
fn fix1_bits() -> __m256i {
    let b = super::lanes::FIX1_BIT;
    _mm256_set_epi32(0, 0, 0, b, 0, 0, 0, b)
}

/// Two blocks as one register, `lo` in the low 128 bits.
#[inline]
#[target_feature(enable = "avx")]
fn load_pair(lo: &Block, hi: &Block) -> __m256i {
    // SAFETY: both are references to 16 readable bytes; the loads are unaligned.
    unsafe { _mm256_loadu2_m128i(hi.as_ptr().cast(), lo.as_ptr().cast()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows the kernels read (rounds `0..=rounds` and the folded last round) of `row`.
    fn used(row: &PairKey, rounds: usize) -> Vec<[u64; 4]> {
        (0..=rounds).chain([FOLD]).map(|i| row.0[i]).collect()
    }

    /// Those rows of a fresh fill for the pair `(lo, hi)`.
    fn filled(lo: &AesKey, hi: &AesKey) -> Vec<[u64; 4]> {
        let mut row = PairKey::default();
        row.fill(lo, hi);
        used(&row, lo.rounds)
    }

    /// Reused from group to group, the rows always hold the current group's keys: the shared
    /// row is kept only for the same key, and refilled after per-lane rows overwrote it.
    #[test]
    fn group_keys_follow_every_assignment() {
        let a = AesKey::new(&[1; 16]).unwrap();
        let b = AesKey::new(&[2; 16]).unwrap();
        let c = AesKey::new(&[3; 32]).unwrap();
        let mut keys = GroupKeys::default();
        let groups: [&[&AesKey]; 8] = [
            &[&a, &a, &a],
            &[&a, &a],
            &[&b, &b, &b, &b],
            &[&a, &a],
            &[&b, &a, &b],
            &[&a, &a],
            &[&c],
            &[&a],
        ];
        for group in groups {
            keys.assign(group.iter().copied());
            let shared = group.iter().all(|k| core::ptr::eq(*k, group[0]));
            assert_eq!(keys.shared(), shared);
            let rows = keys.rows_from(0);
            if shared {
                assert_eq!(rows.len(), 1);
                assert_eq!(used(&rows[0], group[0].rounds), filled(group[0], group[0]));
            } else {
                assert_eq!(rows.len(), group.len().div_ceil(2));
                for (r, row) in rows.iter().enumerate() {
                    let lo = group[2 * r];
                    let hi = group.get(2 * r + 1).copied().unwrap_or(lo);
                    assert_eq!(used(row, lo.rounds), filled(lo, hi));
                }
            }
        }
    }
}
