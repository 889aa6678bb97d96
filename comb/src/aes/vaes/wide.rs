//! VAES (ymm) wide kernels for the parallel modes: two consecutive blocks of one message per
//! register.
//!
//! The ymm counterparts of [`crate::aes::ni::parallel`] and [`crate::aes::ni::ctr`], with the
//! same results bit for bit. On AMD Zen 3 a 256-bit VAESENC/VAESDEC has latency 4 and two
//! issue per cycle, so 8 independent registers (16 blocks) are in flight per step of the main
//! loop: twice the blocks per round of the xmm kernel's 8 registers. A shorter rest (< 16
//! blocks) runs as one step of 1..=8 registers, the last register half used when the count is
//! odd, so no block is ever processed on its own in a loop.
//!
//! Rounds loop outer, registers inner, so the 8 chains interleave; each round key is
//! broadcast to both 128-bit halves once per round of a step, straight from the key
//! ([`WideKeys`]: a broadcast from memory is a plain load). The 16-block step and the rounds
//! are macros, so the main loops keep every state in a register (checked with `objdump -d`:
//! no call and no state spill in the loops).
//!
//! The functions below the two entry points are `#[target_feature]` functions; each entry
//! point takes a [`VaesToken`], the proof that AVX, AVX2, VAES and AES-NI exist, which is what
//! makes calling them sound. Inside them the register intrinsics are safe; the only `unsafe`
//! left is memory access through [`IoPtrs`], each with its justification.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::aes::lanes::{dispatch_parallel, dispatch_width, CBC_DEC, CFB_DEC, ECB_DEC, ECB_ENC};

/// [`parallel_rows`]'s own mode beside the four of [`crate::aes::lanes`]: ECB, then CFB
/// decryption of its output under a second key ([`ecb_then_cfb_decrypt`]).
const ECB_CFB: u8 = 4;
use crate::aes::{AesKey, CounterWidth, Parallel, RoundKeys};
use crate::block::{Block, IoPtrs, BLOCK};
use crate::cpu::{VaesToken, VaesZmmToken};
use crate::gf128::vclmul::{self, VclmulToken};
use crate::gf128::vclmul512::{self, Vclmul512Token};
use crate::gf128::{StitchGhash, WideGhash};

/// Registers per step of the main loops: latency 4 x two VAES per cycle.
const REGS: usize = 8;
/// Blocks per step of the main loops.
const STEP: usize = 2 * REGS;

// ---------------------------------------------------------------------------------------
// round keys, loads and stores

/// One round-key schedule (encryption, or equivalent-inverse decryption) as ymm rows: row `r`
/// is round key `r` broadcast to both halves.
///
/// The broadcast is done where the row is used, straight from the key: a VBROADCASTI128 from
/// memory is a plain load on Zen 3 (no shuffle µop), as cheap as loading a pre-broadcast row.
/// Measured against assembling the 15 broadcast rows in a local array once per call (and
/// wiping that stack copy of key material on return): ECB decryption of 1440-byte messages
/// 0.214 against 0.237 core cycles/byte, 16-byte messages 98 against 120 cycles each. We make
/// no copy of key material, so there is nothing of ours to wipe (LLVM may still hoist the
/// broadcasts out of a loop and spill them, as it may spill xmm round keys: not ours to
/// control).
///
/// `PAIRED`: the halves have different schedules (`lo` for the low half, `hi` for the high
/// one), for [`crypt_many`]'s independent blocks whose keys alternate: each row is then one
/// load and one insert from the two keys, still no copy of key material.
#[derive(Clone, Copy)]
struct WideKeys<'k, const PAIRED: bool = false> {
    lo: &'k RoundKeys,
    hi: &'k RoundKeys,
}

impl<'k> WideKeys<'k> {
    /// Both halves under one schedule.
    fn one(k: &'k RoundKeys) -> Self {
        WideKeys { lo: k, hi: k }
    }
}

impl<const PAIRED: bool> WideKeys<'_, PAIRED> {
    /// Row `r` (`r < 15`). `RoundKeys` is `align(16)` with 16-byte rows, so every row is
    /// 16-byte aligned.
    #[inline]
    #[target_feature(enable = "avx,avx2")]
    fn row(self, r: usize) -> __m256i {
        let lo = &self.lo.0[r];
        // SAFETY: `lo` is 16 readable, 16-byte-aligned bytes (see above).
        let lo = unsafe { _mm_load_si128(lo.as_ptr().cast()) };
        if PAIRED {
            let hi = &self.hi.0[r];
            // SAFETY: as for `lo`.
            let hi = unsafe { _mm_load_si128(hi.as_ptr().cast()) };
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        } else {
            _mm256_broadcastsi128_si256(lo)
        }
    }
}

/// Runs the AES rounds on every register of a `[__m256i; N]` array:
/// `aes_regs!(x, keys, rounds, round_fn, last_fn)` with VAESENC/VAESENCLAST or
/// VAESDEC/VAESDECLAST (the key must be the matching schedule). `rounds` must be `<= 14`.
///
/// A macro, not a function: in this codebase LLVM declined to inline such a rounds function
/// into the wide loops, and the blocks then went through the stack around a call (10–20% on
/// the xmm kernels). Expanded in place, the N states stay in registers.
macro_rules! aes_regs {
    ($x:expr, $keys:expr, $rounds:expr, $round:ident, $last:ident) => {{
        let x = $x; // &mut [__m256i; N]
        let k = $keys; // WideKeys
        let rounds: usize = $rounds;
        let k0 = k.row(0);
        for xj in x.iter_mut() {
            *xj = _mm256_xor_si256(*xj, k0);
        }
        for r in 1..rounds {
            let kr = k.row(r);
            for xj in x.iter_mut() {
                *xj = $round(*xj, kr);
            }
        }
        let kl = k.row(rounds);
        for xj in x.iter_mut() {
            *xj = $last(*xj, kl);
        }
    }};
}

/// Input blocks `i` and `i + 1` (low and high half). Caller guarantees
/// `16 * (i + 2) <= io.len`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn load2(io: &IoPtrs<'_>, i: usize) -> __m256i {
    debug_assert!(BLOCK * (i + 2) <= io.len);
    // SAFETY: by the caller's guarantee the 32 bytes are inside the readable input.
    unsafe { _mm256_loadu_si256(io.src.add(BLOCK * i).cast()) }
}

/// Input block `i` in both halves (the half-used last register of an odd count; the high
/// half then also serves as "the last input block" for the chaining modes). Caller
/// guarantees `16 * (i + 1) <= io.len`.
#[inline]
#[target_feature(enable = "avx,avx2")]
unsafe fn load1(io: &IoPtrs<'_>, i: usize) -> __m256i {
    debug_assert!(BLOCK * (i + 1) <= io.len);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the readable input.
    let v = unsafe { _mm_loadu_si128(io.src.add(BLOCK * i).cast()) };
    _mm256_broadcastsi128_si256(v)
}

/// Writes output blocks `i` and `i + 1`. Caller guarantees `16 * (i + 2) <= io.out_cap` and
/// a non-null `dst`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store2(io: &IoPtrs<'_>, i: usize, v: __m256i) {
    debug_assert!(!io.dst.is_null() && BLOCK * (i + 2) <= io.out_cap);
    // SAFETY: by the caller's guarantee the 32 bytes are inside the writable output.
    unsafe { _mm256_storeu_si256(io.dst.add(BLOCK * i).cast(), v) }
}

/// Writes output block `i` from the low half of `v`. Caller guarantees
/// `16 * (i + 1) <= io.out_cap` and a non-null `dst`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store1(io: &IoPtrs<'_>, i: usize, v: __m256i) {
    debug_assert!(!io.dst.is_null() && BLOCK * (i + 1) <= io.out_cap);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the writable output.
    unsafe { _mm_storeu_si128(io.dst.add(BLOCK * i).cast(), _mm256_castsi256_si128(v)) }
}

// ---------------------------------------------------------------------------------------
// parallel modes

/// Runs a parallel mode over the first `blocks` whole blocks of `io`, with `iv` as the
/// chaining value before block 0 (CBC/CFB decryption); returns the last input block (`iv`
/// when `blocks == 0`). Same contract and results as [`crate::aes::ni::parallel`], in place
/// included.
pub(crate) fn parallel(
    _t: VaesToken,
    mode: Parallel,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    assert!(BLOCK * blocks <= io.len && BLOCK * blocks <= io.out_cap && !io.dst.is_null());
    // SAFETY: the token proves AVX2, VAES and AES-NI; the assertion gives the kernel's bounds.
    unsafe { dispatch_parallel!(mode, parallel_vaes(key, io, blocks, iv)) }
}

/// `parallel_step!(N, MODE; keys, rounds, (inner, inner_rounds), io, i, odd, prev)`: one step
/// of a parallel mode (`inner`: the second layer's keys, read by `ECB_CFB` only) on
/// the `2N` (`2N - 1` if `odd`) consecutive blocks from block `i`. Register `j` holds blocks
/// `i + 2j` (low half) and `i + 2j + 1` (high half; with `odd`, the last register holds its
/// one block in both halves). `prev` has the input block before block `i` in its high half;
/// the step evaluates to the same for the block after it (the register holding the step's
/// last input block).
///
/// Every input block, the ones the chaining modes xor in included, is loaded before the first
/// store, and the previous step's last block comes in `prev`, never from memory: in place
/// (`src == dst`) is safe.
///
/// Use only inside a `#[target_feature(enable = "avx,avx2,vaes,aes")]` function (the CPU has
/// AVX2, VAES and AES-NI), with blocks `i..i + 2N` (`- 1` if `odd`) inside the input and the
/// non-null output, `keys` the decryption schedule for ECB/CBC decryption and else the
/// encryption schedule, and `rounds <= 14`.
///
/// A macro for the reason given at [`aes_regs!`]: as an `#[inline]` function, the 16-block
/// step was not inlined into the main loop of two of the four modes (a call per step, `prev`
/// returned through memory).
macro_rules! parallel_step {
    ($n:expr, $mode:ident; $keys:expr, $rounds:expr, $inner:expr, $io:expr, $i:expr, $odd:expr, $prev:expr) => {{
        const N: usize = $n;
        let keys = $keys; // WideKeys
        let rounds: usize = $rounds;
        let (inner, inner_rounds): (WideKeys<'_>, usize) = $inner;
        let io: &IoPtrs<'_> = $io;
        let i: usize = $i;
        let odd: bool = $odd;
        let prev: __m256i = $prev;
        let half = |j: usize| odd && j + 1 == N;
        let mut c = [_mm256_setzero_si256(); N];
        for (j, cj) in c.iter_mut().enumerate() {
            // SAFETY: block i + 2j (and i + 2j + 1 unless half) is inside the input (caller).
            *cj = unsafe {
                if half(j) {
                    load1(io, i + 2 * j)
                } else {
                    load2(io, i + 2 * j)
                }
            };
        }
        // The input blocks before register j's: (c_{2j-1}, c_{2j}) = (high half of register
        // j - 1, or of `prev`; low half of register j).
        let before = |j: usize| {
            let p = if j == 0 { prev } else { c[j - 1] };
            _mm256_permute2x128_si256::<0x21>(p, c[j])
        };
        let mut x = c;
        match $mode {
            ECB_ENC => aes_regs!(
                &mut x,
                keys,
                rounds,
                _mm256_aesenc_epi128,
                _mm256_aesenclast_epi128
            ),
            ECB_DEC => aes_regs!(
                &mut x,
                keys,
                rounds,
                _mm256_aesdec_epi128,
                _mm256_aesdeclast_epi128
            ),
            CBC_DEC => {
                aes_regs!(
                    &mut x,
                    keys,
                    rounds,
                    _mm256_aesdec_epi128,
                    _mm256_aesdeclast_epi128
                );
                for (j, xj) in x.iter_mut().enumerate() {
                    *xj = _mm256_xor_si256(*xj, before(j));
                }
            }
            CFB_DEC => {
                // out_j = E(c_{j-1}) ^ c_j.
                for (j, xj) in x.iter_mut().enumerate() {
                    *xj = before(j);
                }
                aes_regs!(
                    &mut x,
                    keys,
                    rounds,
                    _mm256_aesenc_epi128,
                    _mm256_aesenclast_epi128
                );
                for (xj, cj) in x.iter_mut().zip(&c) {
                    *xj = _mm256_xor_si256(*xj, *cj);
                }
            }
            _ => {
                // ECB_CFB: Y_j = E(c_j), then CFB decryption of the Ys under `inner`:
                // out_j = E_inner(Y_{j-1}) ^ Y_j, `prev` holding the Y before the step. The
                // step's value is then its last Y, the chaining value of the second layer.
                aes_regs!(
                    &mut x,
                    keys,
                    rounds,
                    _mm256_aesenc_epi128,
                    _mm256_aesenclast_epi128
                );
                c = x;
                let mut z: [__m256i; N] = core::array::from_fn(|j| {
                    let p = if j == 0 { prev } else { c[j - 1] };
                    _mm256_permute2x128_si256::<0x21>(p, c[j])
                });
                aes_regs!(
                    &mut z,
                    inner,
                    inner_rounds,
                    _mm256_aesenc_epi128,
                    _mm256_aesenclast_epi128
                );
                for (xj, zj) in x.iter_mut().zip(&z) {
                    *xj = _mm256_xor_si256(*xj, *zj);
                }
            }
        }
        for (j, xj) in x.iter().enumerate() {
            // SAFETY: as for the loads, inside the non-null output (caller).
            unsafe {
                if half(j) {
                    store1(io, i + 2 * j, *xj)
                } else {
                    store2(io, i + 2 * j, *xj)
                }
            }
        }
        c[N - 1]
    }};
}

/// # Safety
/// The CPU has AVX2, VAES and AES-NI; `16 * blocks <= io.len`, `16 * blocks <= io.out_cap`
/// and `io.dst` is non-null.
#[target_feature(enable = "avx,avx2,vaes,aes")]
unsafe fn parallel_vaes<const MODE: u8>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    let decrypts = MODE == ECB_DEC || MODE == CBC_DEC;
    let keys = WideKeys::one(if decrypts { &key.dec } else { &key.enc });
    // SAFETY: the caller's guarantees, passed on.
    // (`inner` is used by ECB_CFB only.)
    unsafe {
        parallel_rows::<MODE, false>(
            keys,
            key.rounds,
            (WideKeys::one(&key.enc), 0),
            io,
            blocks,
            iv,
        )
    }
}

/// [`parallel_vaes`] with the round-key rows given: one schedule, or (`PAIRED`) a schedule
/// per half, which only ECB can use (the chaining modes' blocks cross halves); `inner` is the
/// second layer's schedule and rounds for `ECB_CFB` (ignored by the other modes).
///
/// # Safety
/// As for [`parallel_vaes`]; `keys` is the schedule `MODE` needs (decryption for ECB/CBC
/// decryption).
#[inline]
#[target_feature(enable = "avx,avx2,vaes,aes")]
unsafe fn parallel_rows<const MODE: u8, const PAIRED: bool>(
    keys: WideKeys<'_, PAIRED>,
    rounds: usize,
    inner: (WideKeys<'_>, usize),
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    debug_assert!(!PAIRED || MODE == ECB_ENC || MODE == ECB_DEC);
    debug_assert!(MODE <= ECB_CFB);
    let rounds = rounds.min(14);
    // The previous input block lives in the high half (see [`parallel_step!`]).
    // SAFETY: `iv` is a reference to 16 readable bytes.
    let mut prev = _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(iv.as_ptr().cast()) });
    let mut i = 0;
    // Bounds of every step: it touches blocks i..i + 2N (- 1 if odd), all below `blocks`,
    // which the caller checked against input and output.
    while i + STEP <= blocks {
        prev = parallel_step!(REGS, MODE; keys, rounds, inner, io, i, false, prev);
        i += STEP;
    }
    let rest = blocks - i; // 0..=15
    let odd = rest % 2 == 1;
    macro_rules! tail {
        ($($n:literal)*) => {
            match rest.div_ceil(2) {
                0 => prev,
                $($n => parallel_step!($n, MODE; keys, rounds, inner, io, i, odd, prev),)*
                _ => parallel_step!(8, MODE; keys, rounds, inner, io, i, odd, prev),
            }
        };
    }
    prev = tail!(1 2 3 4 5 6 7);
    let mut last = [0u8; BLOCK];
    // SAFETY: `last` is 16 writable bytes.
    unsafe {
        _mm_storeu_si128(
            last.as_mut_ptr().cast(),
            _mm256_extracti128_si256::<1>(prev),
        )
    };
    last
}

/// ECB under `outer` then CFB decryption under `inner` over the result, in place over the
/// first `blocks` whole blocks of `io`: `Y_i = E_outer(x_i)`, `out_i = Y_i ⊕ E_inner(Y_{i-1})`,
/// `Y_{-1} = iv`; returns the last `Y` (`iv` when `blocks == 0`). The same bytes as
/// [`parallel`] with `EcbEncrypt` then with `CfbDecrypt`, in one pass: both layers of a step
/// run in registers (POET's middle layer and its bottom hash on encryption).
pub(crate) fn ecb_then_cfb_decrypt(
    _t: VaesToken,
    outer: &AesKey,
    inner: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    assert!(BLOCK * blocks <= io.len && BLOCK * blocks <= io.out_cap && !io.dst.is_null());
    let second = (WideKeys::one(&inner.enc), inner.rounds.min(14));
    // SAFETY: the token proves AVX2, VAES and AES-NI; the assertion gives the kernel's bounds;
    // both layers encrypt, with the encryption schedules.
    unsafe {
        parallel_rows::<ECB_CFB, false>(
            WideKeys::one(&outer.enc),
            outer.rounds,
            second,
            io,
            blocks,
            iv,
        )
    }
}

/// Independent blocks under per-block keys (`dec`: the inverse cipher), the batched
/// initialisation and finalisation steps of the modes, when the keys repeat with period two:
/// `keys[i]` is `keys[0]` for even `i` and `keys[1]` for odd `i` (one key for the whole
/// batch, or two alternating, as in POET's tail calls), all of one size. Then block pairs
/// `2j, 2j + 1` are one register with the pair's schedules in its halves, and the blocks run
/// through the wide ECB kernel: 16 per step against the xmm multi-key kernel's 8, no per-block
/// key gathering. Returns `false`, having done nothing, for any other key pattern (the xmm
/// kernel then takes the call).
pub(crate) fn crypt_many(_t: VaesToken, blocks: &mut [Block], keys: &[&AesKey], dec: bool) -> bool {
    assert_eq!(blocks.len(), keys.len());
    let Some(&a) = keys.first() else {
        return true;
    };
    let b = keys.get(1).copied().unwrap_or(a);
    let periodic = a.rounds == b.rounds
        && keys
            .iter()
            .enumerate()
            .all(|(i, k)| core::ptr::eq(*k, if i % 2 == 0 { a } else { b }));
    if !periodic {
        return false;
    }
    let n = blocks.len();
    let io = IoPtrs::in_place(blocks.as_flattened_mut(), BLOCK * n);
    let zero = [0u8; BLOCK];
    let (sa, sb) = if dec {
        (&a.dec, &b.dec)
    } else {
        (&a.enc, &b.enc)
    };
    // The ECB kernel in `$mode` with rows `$keys` (`$paired`: a schedule per half).
    macro_rules! ecb {
        ($mode:ident, $paired:literal, $keys:expr) => {
            // SAFETY: the token proves AVX2, VAES and AES-NI; `io` covers exactly the `n`
            // blocks, in place, readable and writable; the schedules match the direction.
            unsafe {
                parallel_rows::<$mode, $paired>(
                    $keys,
                    a.rounds,
                    (WideKeys::one(sa), 0),
                    &io,
                    n,
                    &zero,
                )
            }
        };
    }
    let pair = WideKeys::<true> { lo: sa, hi: sb };
    match (dec, core::ptr::eq(a, b)) {
        (false, true) => ecb!(ECB_ENC, false, WideKeys::one(sa)),
        (true, true) => ecb!(ECB_DEC, false, WideKeys::one(sa)),
        (false, false) => ecb!(ECB_ENC, true, pair),
        (true, false) => ecb!(ECB_DEC, true, pair),
    };
    true
}

// ---------------------------------------------------------------------------------------
// CTR

/// CTR keystream xor over the whole message (partial last block included), counter blocks
/// `ctr + i` as 128-bit big-endian integers wrapping mod 2^128 (`Full128`), or with only the
/// last 32 bits counting, wrapping mod 2^32 (`Low32`, GCM's `inc32`). Same contract and
/// results as [`crate::aes::ni::ctr`].
pub(crate) fn ctr(t: VaesToken, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block, width: CounterWidth) {
    match VaesZmmToken::with(t) {
        Some(z) => ctr_zmm(z, key, io, ctr, width),
        None => ctr_ymm(t, key, io, ctr, width),
    }
}

/// [`ctr`] on ymm registers.
fn ctr_ymm(_t: VaesToken, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block, width: CounterWidth) {
    assert!(io.len <= io.out_cap && !io.dst.is_null());
    // SAFETY: the token proves AVX2, VAES and AES-NI; bounds asserted above.
    unsafe { dispatch_width!(width, ctr_vaes(key, io, ctr)) }
}

/// [`ctr`] on zmm registers.
fn ctr_zmm(_z: VaesZmmToken, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block, width: CounterWidth) {
    assert!(io.len <= io.out_cap && !io.dst.is_null());
    // SAFETY: the token proves AVX-512F, AVX-512BW, AVX2, VAES and AES-NI; bounds asserted
    // above.
    unsafe { dispatch_width!(width, ctr_zmm_vaes(key, io, ctr)) }
}

/// Block offset `o` for both halves of a register of byte-reversed counters: into each
/// half's low 64-bit word, or (`LOW32`) its low 32-bit word only, `o` reduced mod 2^32.
#[inline]
#[target_feature(enable = "avx,avx2")]
fn ctr_offset2<const LOW32: bool>(o: usize) -> __m256i {
    if LOW32 {
        let o = o as u32 as i32;
        _mm256_set_epi32(0, 0, 0, o, 0, 0, 0, o)
    } else {
        let o = o as i64;
        _mm256_set_epi64x(0, o, 0, o)
    }
}

/// `a + b` on the counter words: 64-bit lanes, or (`LOW32`) 32-bit lanes, so that a low word
/// wraps mod 2^32 without a carry into the fixed 96 bits. (`b` is a [`ctr_offset2`].)
#[inline]
#[target_feature(enable = "avx,avx2")]
fn ctr_add2<const LOW32: bool>(a: __m256i, b: __m256i) -> __m256i {
    if LOW32 {
        _mm256_add_epi32(a, b)
    } else {
        _mm256_add_epi64(a, b)
    }
}

/// `ctr_step!(keys, rounds, io, i, x, stored)`: encrypts the counter registers `x` (a
/// `[__m256i; N]` with the counters of blocks `i + 2j`, `i + 2j + 1` in register `j`) and
/// xors the keystream into the first `stored` of those blocks; evaluates to the last
/// register's keystream (for the partial block, if any). Each register's blocks are loaded
/// right before they are stored, which in place reads every block before it is overwritten.
///
/// Use only inside a `#[target_feature(enable = "avx,avx2,vaes,aes")]` function (the CPU has
/// AVX2, VAES and AES-NI), with `stored <= 2N`, blocks `i..i + stored` inside the input and
/// the non-null output, `keys` the encryption schedule and `rounds <= 14`. A macro for the
/// reason given at [`aes_regs!`].
macro_rules! ctr_step {
    ($keys:expr, $rounds:expr, $io:expr, $i:expr, $x:expr, $stored:expr) => {{
        let io: &IoPtrs<'_> = $io;
        let i: usize = $i;
        let stored: usize = $stored;
        let mut x = $x;
        aes_regs!(
            &mut x,
            $keys,
            $rounds,
            _mm256_aesenc_epi128,
            _mm256_aesenclast_epi128
        );
        for (j, xj) in x.iter().enumerate() {
            let b = i + 2 * j;
            // SAFETY: only blocks below i + stored are touched (bounds above).
            unsafe {
                if 2 * j + 2 <= stored {
                    store2(io, b, _mm256_xor_si256(*xj, load2(io, b)));
                } else if 2 * j + 1 == stored {
                    store1(io, b, _mm256_xor_si256(*xj, load1(io, b)));
                }
            }
        }
        x[x.len() - 1]
    }};
}

/// # Safety
/// The CPU has AVX2, VAES and AES-NI; `io.len <= io.out_cap` and `io.dst` is non-null.
#[target_feature(enable = "avx,avx2,vaes,aes")]
unsafe fn ctr_vaes<const LOW32: bool>(key: &AesKey, io: &IoPtrs<'_>, ctr: &Block) {
    // SAFETY: the caller's contract is this function's.
    unsafe { ctr_vaes_then::<LOW32>(key, io, ctr, |_, _| {}) }
}

/// [`ctr_vaes`], calling `written(w, last)` as [`ctr_zmm_then`] does: after each 16-block
/// step of the fast path with `w` the whole blocks written so far and `last` false, and once
/// at the end with every whole block and `last` true.
///
/// # Safety
/// As [`ctr_vaes`].
#[inline]
#[target_feature(enable = "avx,avx2,vaes,aes")]
unsafe fn ctr_vaes_then<const LOW32: bool>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    ctr: &Block,
    mut written: impl FnMut(usize, bool),
) {
    let rounds = key.rounds.min(14);
    let keys = WideKeys::one(&key.enc);
    let c0 = u128::from_be_bytes(*ctr);
    // Byte reversal within each half turns the little-endian u128 lanes into big-endian
    // counter blocks.
    #[rustfmt::skip]
    let bswap = _mm256_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    );
    let full = io.len / BLOCK;
    let blocks = full + usize::from(!io.len.is_multiple_of(BLOCK));
    // Fast path: when the low 64 bits do not wrap within this message, a register of two
    // counters is one 64-bit vector add and a shuffle; else full 128-bit adds per block. A
    // 32-bit counter never carries out of its word: always the fast path, with 32-bit adds.
    let no_carry = LOW32 || (c0 as u64 as u128) + (blocks as u128) <= 1 << 64;
    let (hi, lo) = ((c0 >> 64) as u64 as i64, c0 as u64);
    // Counters of blocks 0 (low half) and 1 (high half) on the fast path. (A shadow high
    // half past the message may wrap its low word; it is never used.)
    let lo1 = if LOW32 {
        (lo & !0xffff_ffff) | u64::from((lo as u32).wrapping_add(1))
    } else {
        lo.wrapping_add(1)
    };
    let base = _mm256_set_epi64x(hi, lo1 as i64, hi, lo as i64);
    // Counters of blocks b and b + 1.
    let pair = |b: usize| {
        if no_carry {
            let off = ctr_offset2::<LOW32>(b);
            _mm256_shuffle_epi8(ctr_add2::<LOW32>(base, off), bswap)
        } else {
            let v0 = c0.wrapping_add(b as u128);
            let v1 = v0.wrapping_add(1);
            let v = _mm256_set_epi64x(
                (v1 >> 64) as i64,
                v1 as u64 as i64,
                (v0 >> 64) as i64,
                v0 as u64 as i64,
            );
            _mm256_shuffle_epi8(v, bswap)
        }
    };
    let mut i = 0;
    // Bounds of every step: it reads and writes only the full blocks among i..i + 2N (the
    // first `stored`, all below `full`), which lie inside the input, and len <= out_cap was
    // checked by the caller.
    if no_carry {
        // Per step: one vector add for the base, then an add and a shuffle per register.
        let offsets: [__m256i; REGS] = core::array::from_fn(|j| ctr_offset2::<LOW32>(2 * j));
        let advance = ctr_offset2::<LOW32>(STEP);
        let mut cur = base;
        while i + STEP <= full {
            let mut x = [_mm256_setzero_si256(); REGS];
            for (xj, oj) in x.iter_mut().zip(&offsets) {
                *xj = _mm256_shuffle_epi8(ctr_add2::<LOW32>(cur, *oj), bswap);
            }
            ctr_step!(keys, rounds, io, i, x, STEP);
            cur = ctr_add2::<LOW32>(cur, advance);
            i += STEP;
            written(i, false);
        }
    } else {
        while i + STEP <= full {
            let x: [__m256i; REGS] = core::array::from_fn(|j| pair(i + 2 * j));
            ctr_step!(keys, rounds, io, i, x, STEP);
            i += STEP;
        }
    }
    // 0..=16 blocks left, the last possibly partial: one step of rest/2 registers (rounded
    // up) writes the full ones; the partial block's keystream is kept for `xor_tail`.
    let rest = blocks - i;
    if rest == 0 {
        return written(full, true);
    }
    let stored = full - i;
    macro_rules! tail {
        ($($n:literal)*) => {
            match rest.div_ceil(2) {
                $($n => {
                    let x: [__m256i; $n] = core::array::from_fn(|j| pair(i + 2 * j));
                    ctr_step!(keys, rounds, io, i, x, stored)
                })*
                _ => {
                    let x: [__m256i; 8] = core::array::from_fn(|j| pair(i + 2 * j));
                    ctr_step!(keys, rounds, io, i, x, stored)
                }
            }
        };
    }
    let last = tail!(1 2 3 4 5 6 7);
    if stored < rest {
        // The partial block is block i + rest - 1: the high half of the last register when
        // `rest` is even, else the low half.
        let v = if rest.is_multiple_of(2) {
            _mm256_extracti128_si256::<1>(last)
        } else {
            _mm256_castsi256_si128(last)
        };
        let mut ks = [0u8; BLOCK];
        // SAFETY: `ks` is 16 writable bytes.
        unsafe { _mm_storeu_si128(ks.as_mut_ptr().cast(), v) };
        io.xor_tail(&ks);
        crate::block::wipe(&mut ks);
    }
    written(full, true);
}

/// # Safety
/// As [`ctr_vaes`]; the CPU also has AVX-512F and AVX-512BW.
#[target_feature(enable = "avx,avx2,vaes,aes,avx512f,avx512bw")]
unsafe fn ctr_zmm_vaes<const LOW32: bool>(key: &AesKey, io: &IoPtrs<'_>, ctr: &Block) {
    // SAFETY: the caller's contract is this function's.
    unsafe { ctr_zmm_then::<LOW32>(key, io, ctr, |_, _| {}) };
}

/// [`ctr_vaes`] on zmm: four registers of four counter blocks per 16-block step, and the
/// last 1..=16 blocks (the last possibly partial) in one step of as many registers as they
/// need, loaded and stored under byte masks, so the partial block needs no pass of its own.
///
/// `written(w, last)` is called with `w`, the number of whole blocks written so far (blocks
/// `0..w` of the output are final): after each 16-block step with `last` false, and once at
/// the end, after the partial block, with `w` = every whole block and `last` true. The
/// caller inlines this into a function of more features, so that `written` (GCM's GHASH of
/// the ciphertext written so far, [`gcm_encrypt`]) issues right behind the next step's
/// rounds.
///
/// Returns the output of the last step, the bytes after the whole 16-block steps, as they
/// were stored: block `j` of the step in lane `j % 4` of register `j / 4`, zero past the end
/// (all zero when nothing is left after the whole steps); GCM hashes them from there. `None`
/// where the 64-bit fallback ran instead.
///
/// Against the ymm kernel (alternated builds, `comb bench --alg aes-gcm --op encrypt`,
/// stitched GCM, TSC cycles/byte): 1024 B 0.395-0.400 -> 0.358-0.361, 1440 B 0.356-0.357 ->
/// 0.331-0.333, 2048 B 0.325 -> 0.297-0.298, realistic mix 0.532 -> 0.506-0.511. Half the
/// instructions for the same AES work: a zmm VAESENC issues once per cycle, a ymm one twice,
/// but the counter adds, shuffles, loads, xors and stores are halved, and the GHASH's zmm
/// loads now read whole zmm stores.
///
/// Steps of eight registers (32 blocks, the GHASH one or two groups behind) measured slower
/// for the stitched GCM (16 KiB 0.248 -> 0.259, 1440 B 0.33 -> 0.36-0.38) and no faster for
/// CTR (256 B 0.31 -> 0.33).
///
/// Each step broadcasts its round keys again (one VBROADCASTI32X4 per round). Broadcasting
/// them once per message into a stack array of zmm rows made the stitched GCM faster on
/// long messages (16 KiB 0.248 -> 0.234, 4096 B 0.270 -> 0.256 TSC cycles/byte) and no
/// faster on 512..1456 B or the realistic mix; but that array is a copy of the key
/// schedule, and overwriting it with zeros before returning (15 zmm stores) made 512 B and
/// 1440 B 12-13% slower (0.48 -> 0.55, 0.33 -> 0.37). Holding the keys in registers (round count
/// as a const, rounds unrolled, a function per key size) spilled some to the stack for
/// 192/256-bit keys and moved LLVM's inlining of the GCM code around it: 512..768 B up to
/// 5% slower. Byte-wise adds to big-endian counters (one shuffle per step instead of four)
/// changed nothing at 16 KiB.
///
/// A 64-bit counter (`!LOW32`) whose low word would carry within the message takes
/// [`ctr_vaes`]'s full 128-bit path, and `written` only its final call. (The stitched GCM,
/// the one caller with a `written` of its own, counts in 32 bits.)
///
/// # Safety
/// As [`ctr_vaes`]; the CPU also has AVX-512F and AVX-512BW.
#[inline]
#[target_feature(enable = "avx,avx2,vaes,aes,avx512f,avx512bw")]
unsafe fn ctr_zmm_then<const LOW32: bool>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    ctr: &Block,
    mut written: impl FnMut(usize, bool),
) -> Option<[__m512i; 4]> {
    let full = io.len / BLOCK;
    let blocks = io.len.div_ceil(BLOCK);
    let c0 = u128::from_be_bytes(*ctr);
    if !LOW32 && (c0 as u64 as u128) + (blocks as u128) > 1 << 64 {
        // SAFETY: the caller's contract is `ctr_vaes`'s.
        unsafe { ctr_vaes::<LOW32>(key, io, ctr) };
        written(full, true);
        return None;
    }
    let rounds = key.rounds.min(14);
    // Every lane holds the counter as a little-endian u128; block offsets go into its low
    // 32-bit word (wrapping mod 2^32, GCM's inc32) or its low 64-bit word (which does not
    // carry within the message: checked above; a lane past the message's end may wrap, and
    // is never stored). A byte reversal per lane gives the big-endian counter block.
    let (hi, lo) = ((c0 >> 64) as u64 as i64, c0 as u64 as i64);
    let base = _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
    // Offsets `o + d.0 .. o + d.3` in lanes 0..4, into the counter word.
    let offset = |o: usize, d: [usize; 4]| {
        if LOW32 {
            let w = |k: usize| (o + d[k]) as u32 as i32;
            _mm512_set_epi32(0, 0, 0, w(3), 0, 0, 0, w(2), 0, 0, 0, w(1), 0, 0, 0, w(0))
        } else {
            let w = |k: usize| (o + d[k]) as i64;
            _mm512_set_epi64(0, w(3), 0, w(2), 0, w(1), 0, w(0))
        }
    };
    let add = |a: __m512i, b: __m512i| {
        if LOW32 {
            _mm512_add_epi32(a, b)
        } else {
            _mm512_add_epi64(a, b)
        }
    };
    #[rustfmt::skip]
    let bswap = _mm512_set_epi32(
        0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f,
        0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f,
        0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f,
        0x0001_0203, 0x0405_0607, 0x0809_0a0b, 0x0c0d_0e0f,
    );
    // Register j of a step: blocks 4j..4j + 4 after the step's first; a step advances 16.
    let offsets: [__m512i; 4] = core::array::from_fn(|j| offset(4 * j, [0, 1, 2, 3]));
    let advance = offset(STEP, [0; 4]);
    let row = |r: usize| {
        // SAFETY: `RoundKeys` rows are 16 readable, 16-byte-aligned bytes (r < 15).
        _mm512_broadcast_i32x4(unsafe { _mm_load_si128(key.enc.0[r].as_ptr().cast()) })
    };
    // One step: the counters of blocks i.. in $n registers, encrypted, xored into the input
    // from block i on and stored: 64 bytes per register, or under a mask the first `bytes`.
    macro_rules! step {
        ($n:literal, $cur:expr, $i:expr, $bytes:expr) => {{
            let (cur, i, bytes): (__m512i, usize, Option<usize>) = ($cur, $i, $bytes);
            let mut x: [__m512i; $n] =
                core::array::from_fn(|j| _mm512_shuffle_epi8(add(cur, offsets[j]), bswap));
            let k0 = row(0);
            for xj in x.iter_mut() {
                *xj = _mm512_xor_si512(*xj, k0);
            }
            for r in 1..rounds {
                let kr = row(r);
                for xj in x.iter_mut() {
                    *xj = _mm512_aesenc_epi128(*xj, kr);
                }
            }
            let kl = row(rounds);
            // The output registers, zero past `bytes` (what `ctr_zmm_then` returns).
            let mut out = [_mm512_setzero_si512(); $n];
            for (j, (xj, o)) in x.iter().zip(out.iter_mut()).enumerate() {
                let y = _mm512_aesenclast_epi128(*xj, kl);
                let at = BLOCK * i + 64 * j;
                // SAFETY: a whole step touches blocks i..i + 16, all below `full`, inside
                // the input and (len <= out_cap, checked by the caller) the output; a masked
                // one only the bytes below `len` (masked-off bytes are neither read nor
                // written and do not fault).
                unsafe {
                    let (src, dst) = (io.src.add(at), io.dst.add(at));
                    match bytes {
                        None => {
                            let d = _mm512_loadu_si512(src.cast());
                            *o = _mm512_xor_si512(y, d);
                            _mm512_storeu_si512(dst.cast(), *o);
                        }
                        Some(b) => {
                            let n = b.saturating_sub(64 * j).min(64);
                            let m = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
                            let d = _mm512_maskz_loadu_epi8(m, src.cast());
                            // Zeroed past the end for GCM's hash; stored as zeroed (the
                            // same bytes under the mask): storing the unzeroed value and
                            // zeroing apart measured 1-2% slower for both CTR and GCM.
                            *o = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(y, d));
                            _mm512_mask_storeu_epi8(dst.cast(), m, *o);
                        }
                    }
                }
            }
            out
        }};
    }
    let mut cur = base;
    let mut i = 0;
    while i + STEP <= full {
        step!(4, cur, i, None);
        cur = add(cur, advance);
        i += STEP;
        written(i, false);
    }
    // 0..=16 blocks left (< 256 bytes), the last possibly partial.
    let rest = io.len - BLOCK * i;
    let z = _mm512_setzero_si512();
    let last = match rest.div_ceil(64) {
        0 => [z; 4],
        1 => {
            let [a] = step!(1, cur, i, Some(rest));
            [a, z, z, z]
        }
        2 => {
            let [a, b] = step!(2, cur, i, Some(rest));
            [a, b, z, z]
        }
        3 => {
            let [a, b, c] = step!(3, cur, i, Some(rest));
            [a, b, c, z]
        }
        _ => step!(4, cur, i, Some(rest)),
    };
    written(full, true);
    Some(last)
}

// ---------------------------------------------------------------------------------------
// GCM

/// GCM encryption of one message: the CTR kernel with a 32-bit counter from `ctr` (=
/// inc32(J0)) and the GHASH of the ciphertext stitched between its steps, on zmm where the
/// key's GHASH runs there ([`ctr_zmm_then`], [`vclmul512::GcmStitch`]), else on ymm
/// ([`ctr_vaes_then`], [`vclmul::GcmStitch`]): each 16-block group is hashed one step after
/// it is written, so that its work overlaps the rounds of the next step and its loads read
/// stores that have left the store buffer. Hashing each group right after its own step
/// measured slower with the ymm CTR and the zmm GHASH (a zmm load over two ymm stores in
/// flight is not forwarded; 16 KiB 0.30-0.33 TSC cycles/byte against 0.26) and with the zmm
/// CTR too (16 KiB 0.31 against 0.25, 1440 B 0.39 against 0.33); on ymm alone, no faster.
/// `s` is the hash of the padded `A` (`ad_len` bytes) on entry, `S` on return.
///
/// On ymm (the Zen 3 VM: VAES and VPCLMULQDQ without AVX-512) against CTR and then the
/// hash, two messages side by side (`comb bench`, comb engine, alternated builds, pinned,
/// TSC cycles/byte, encryption): 512 B 0.693-0.694 -> 0.660-0.663, 1440 B 0.485-0.489 ->
/// 0.461-0.468, 2048 B 0.439-0.450 -> 0.431-0.432, 16 KiB 0.381-0.389 -> 0.371-0.379, the
/// realistic mix 0.735-0.749 -> 0.714-0.735. The hash is most of the time there (at 16 KiB
/// GCM 0.37-0.39 against CTR alone 0.15-0.16), and stitching hides little of it. Stitching
/// from 256 bytes instead of 512 was no faster on the mix: on ymm, messages shorter than
/// [`YMM_STITCH_MIN`] are not stitched.
///
/// On zmm every message is: its last bytes and the lengths block take one step and one
/// reduction ([`vclmul512::GcmStitch`]'s tail), and against CTR and then the hash, two
/// messages side by side, the stitched kernel was faster at every length measured on the
/// Intel AVX-512 VM (TSC cycles/byte, alternated builds): 64 B 1.63 -> 1.52-1.55, 100 B 1.21
/// -> 0.99-1.02, 160 B 0.80 -> 0.71-0.72, 300 B 0.57 -> 0.45.
pub(crate) fn gcm_encrypt(
    _t: VaesToken,
    g: StitchGhash<'_>,
    key: &AesKey,
    io: &IoPtrs<'_>,
    ctr: &Block,
    ad: &[u8],
    s: &mut Block,
) {
    assert!(io.len <= io.out_cap && !io.dst.is_null());
    // SAFETY (all four calls): the VaesToken proves AVX, AVX2, VAES and AES-NI; the token
    // each key carries proves AVX2, VPCLMULQDQ, PCLMULQDQ, SSE2 and SSSE3, and for zmm
    // AVX-512F and AVX-512BW; bounds asserted above.
    match g {
        StitchGhash::Zmm(z) => {
            let _proof: Vclmul512Token = z.token();
            unsafe {
                if z.karatsuba() {
                    gcm_encrypt_zmm::<true>(z, key, io, ctr, ad, s)
                } else {
                    gcm_encrypt_zmm::<false>(z, key, io, ctr, ad, s)
                }
            }
        }
        StitchGhash::Ymm(y) => {
            let _proof: VclmulToken = y.token();
            unsafe {
                if y.karatsuba() {
                    gcm_encrypt_ymm::<true>(y, key, io, ctr, ad, s)
                } else {
                    gcm_encrypt_ymm::<false>(y, key, io, ctr, ad, s)
                }
            }
        }
    }
}

/// The shortest message that [`gcm_encrypt`] stitches where the GHASH runs on ymm.
pub(crate) const YMM_STITCH_MIN: usize = 512;

/// The body of both stitched kernels: `$ctr_then` (the CTR kernel with a `written`
/// callback) over the message, and `$hash` (a `GcmStitch`) taking each sixteen-block group
/// one step after it is written (after the next step's rounds are issued, where its loads
/// find the stores committed), the rest at the end.
macro_rules! stitched_gcm {
    (
        $hash:expr, $ctr_then:ident, $key:expr, $io:expr, $ctr:expr,
        |$h:ident, $last:ident, $c:ident| $finish:expr
    ) => {{
        let io: &IoPtrs<'_> = $io;
        let mut hash = $hash;
        let ct = io.dst.cast_const();
        let absorb = |w: usize, last: bool| {
            let ready = if last { w } else { w.saturating_sub(STEP) };
            // SAFETY: the CTR kernel passes `w` once blocks 0..w of the output are final,
            // and the output is not written below block w afterwards; `ready <= w`.
            unsafe { hash.absorb(ct, ready) }
        };
        // SAFETY: the caller's contract is the CTR kernel's.
        let $last = unsafe { $ctr_then::<true>($key, io, $ctr, absorb) };
        // SAFETY: the CTR wrote all `io.len` bytes of the output (`len <= out_cap`,
        // non-null); nothing writes it while this view lives.
        let $c = unsafe { core::slice::from_raw_parts(ct, io.len) };
        let $h = hash;
        $finish
    }};
}

/// # Safety
/// The CPU has AVX, AVX2, VAES, AES-NI, AVX-512F, AVX-512BW, VPCLMULQDQ, PCLMULQDQ and SSSE3;
/// `io.len <= io.out_cap` and `io.dst` is non-null.
#[target_feature(enable = "avx,avx2,vaes,aes,avx512f,avx512bw,vpclmulqdq,pclmulqdq,sse2,ssse3")]
unsafe fn gcm_encrypt_zmm<const KARA: bool>(
    g: WideGhash<'_, Vclmul512Token>,
    key: &AesKey,
    io: &IoPtrs<'_>,
    ctr: &Block,
    ad: &[u8],
    s: &mut Block,
) {
    let ad_len = ad.len();
    let hash = vclmul512::GcmStitch::<KARA>::after_ad(g, ad);
    stitched_gcm!(hash, ctr_zmm_then, key, io, ctr, |h, last, c| match last {
        // The tail's bytes straight from the CTR's last step: loaded back from the output
        // under a byte mask, they waited for the masked stores to reach the cache (a masked
        // load is not forwarded from a store in flight).
        Some(quads) => h.finish_quads(&quads, c, ad_len, s),
        None => h.finish(c, ad_len, s),
    });
}

/// # Safety
/// The CPU has AVX, AVX2, VAES, AES-NI, VPCLMULQDQ, PCLMULQDQ and SSSE3; `io.len <=
/// io.out_cap` and `io.dst` is non-null.
#[target_feature(enable = "avx,avx2,vaes,aes,vpclmulqdq,pclmulqdq,sse2,ssse3")]
unsafe fn gcm_encrypt_ymm<const KARA: bool>(
    g: WideGhash<'_, VclmulToken>,
    key: &AesKey,
    io: &IoPtrs<'_>,
    ctr: &Block,
    ad: &[u8],
    s: &mut Block,
) {
    let hash = vclmul::GcmStitch::<KARA>::after_ad(g, ad);
    stitched_gcm!(hash, ctr_vaes_then, key, io, ctr, |h, _last, c| h.finish(
        c,
        ad.len(),
        s
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::ni;

    use crate::block::test_bytes as bytes;

    const MODES: [Parallel; 4] = [
        Parallel::EcbEncrypt,
        Parallel::EcbDecrypt,
        Parallel::CbcDecrypt,
        Parallel::CfbDecrypt,
    ];

    fn block_counts() -> impl Iterator<Item = usize> {
        (0..=40).chain([47, 48, 49, 100, 257])
    }

    /// `ecb_then_cfb_decrypt`: the bytes of the xmm ECB pass then the xmm CFB-decryption
    /// pass, and their last `Y`, at every count and key size; nothing past the blocks written.
    #[test]
    fn ecb_then_cfb_matches_two_ni_passes() {
        let Some(t) = VaesToken::get() else { return };
        let Some(nt) = crate::cpu::NiToken::get() else {
            return;
        };
        for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
            let outer = AesKey::new(&bytes(70 + ki as u64, klen)).unwrap();
            let inner = AesKey::new(&bytes(80 + ki as u64, 48 - klen)).unwrap();
            for n in block_counts() {
                let input = bytes(n as u64 + 300, BLOCK * (n + 1));
                let iv: Block = bytes(n as u64 + 400, BLOCK).try_into().unwrap();
                let mut got = input.clone();
                let got_y = {
                    let io = IoPtrs::in_place(&mut got, BLOCK * n);
                    ecb_then_cfb_decrypt(t, &outer, &inner, &io, n, &iv)
                };
                let mut want = input.clone();
                let want_y = {
                    let io = IoPtrs::in_place(&mut want, BLOCK * n);
                    ni::parallel(nt, Parallel::EcbEncrypt, &outer, &io, n, &[0; BLOCK]);
                    ni::parallel(nt, Parallel::CfbDecrypt, &inner, &io, n, &iv)
                };
                assert_eq!(got, want, "key {klen}, {n} blocks");
                assert_eq!(got_y, want_y, "key {klen}, {n} blocks: last Y");
            }
        }
    }

    /// `crypt_many`: for keys with period two (one key, two alternating, of each size) it
    /// takes the call and gives the one-block cipher's results in both directions, at every
    /// count; for other patterns (three keys, a period broken at the end, mixed sizes) it
    /// declines and leaves the blocks untouched.
    #[test]
    fn crypt_many_matches_block_cipher_or_declines() {
        let Some(t) = VaesToken::get() else { return };
        let keys: Vec<AesKey> = [16usize, 16, 24, 24, 32, 32, 16]
            .iter()
            .enumerate()
            .map(|(i, &l)| AesKey::new(&bytes(50 + i as u64, l)).unwrap())
            .collect();
        for (a, b) in [(0, 0), (0, 1), (2, 3), (4, 5), (5, 5)] {
            for n in block_counts() {
                let ks: Vec<&AesKey> = (0..n)
                    .map(|i| &keys[if i % 2 == 0 { a } else { b }])
                    .collect();
                let input: Vec<Block> = bytes(n as u64 + 7, BLOCK * n)
                    .as_chunks::<BLOCK>()
                    .0
                    .to_vec();
                for dec in [false, true] {
                    let mut got = input.clone();
                    assert!(crypt_many(t, &mut got, &ks, dec));
                    for (i, (g, x)) in got.iter().zip(&input).enumerate() {
                        let mut want = *x;
                        if dec {
                            ks[i].decrypt_block(&mut want);
                        } else {
                            ks[i].encrypt_block(&mut want);
                        }
                        assert_eq!(*g, want, "keys ({a}, {b}), n {n}, block {i}, dec {dec}");
                    }
                }
            }
        }
        // Patterns it must leave to the xmm kernel.
        let n = 9;
        let input: Vec<Block> = bytes(3, BLOCK * n).as_chunks::<BLOCK>().0.to_vec();
        let three: Vec<&AesKey> = (0..n).map(|i| &keys[i % 3]).collect();
        let mut broken: Vec<&AesKey> = (0..n).map(|i| &keys[i % 2]).collect();
        broken[n - 1] = &keys[6]; // the period broken by the last block
        let sizes: Vec<&AesKey> = (0..n)
            .map(|i| &keys[if i % 2 == 0 { 0 } else { 2 }])
            .collect();
        for ks in [three, broken, sizes] {
            let mut got = input.clone();
            assert!(!crypt_many(t, &mut got, &ks, false));
            assert_eq!(got, input);
        }
    }

    /// Every parallel mode, key size and block count: the ymm kernel writes exactly what the
    /// xmm kernel writes (no byte past the blocks touched) and returns the same chaining
    /// value, out of place and in place. The input is one block longer than `blocks` and the
    /// output has spare room, so over-reads/over-writes would show.
    #[test]
    fn parallel_matches_ni() {
        let Some(t) = VaesToken::get() else { return };
        for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
            let key = AesKey::new(&bytes(ki as u64 + 1, klen)).unwrap();
            for mode in MODES {
                for n in block_counts() {
                    let seed = 1000 * ki as u64 + n as u64;
                    let input = bytes(seed, BLOCK * (n + 1));
                    let iv: Block = bytes(seed ^ 0xABCD, BLOCK).try_into().unwrap();
                    let mut want = vec![0xEEu8; BLOCK * (n + 2)];
                    let want_last =
                        ni::parallel(t.ni(), mode, &key, &IoPtrs::copy(&input, &mut want), n, &iv);
                    let mut got = vec![0xEEu8; BLOCK * (n + 2)];
                    let got_last = parallel(t, mode, &key, &IoPtrs::copy(&input, &mut got), n, &iv);
                    assert_eq!(got, want, "{mode:?} key {klen} blocks {n} copy");
                    assert_eq!(got_last, want_last, "{mode:?} key {klen} blocks {n} copy");
                    let expect_last: Block = if n == 0 {
                        iv
                    } else {
                        input[BLOCK * (n - 1)..BLOCK * n].try_into().unwrap()
                    };
                    assert_eq!(got_last, expect_last, "{mode:?} key {klen} blocks {n}");

                    let mut buf = input.clone();
                    let len = buf.len();
                    let in_last = parallel(t, mode, &key, &IoPtrs::in_place(&mut buf, len), n, &iv);
                    assert_eq!(
                        &buf[..BLOCK * n],
                        &want[..BLOCK * n],
                        "{mode:?} key {klen} blocks {n} in place"
                    );
                    assert_eq!(&buf[BLOCK * n..], &input[BLOCK * n..]);
                    assert_eq!(
                        in_last, want_last,
                        "{mode:?} key {klen} blocks {n} in place"
                    );
                }
            }
        }
    }

    /// Splitting a message at any block boundary and chaining the returned value into the
    /// second call gives the one-call result (the value returned is the right carry).
    #[test]
    fn parallel_chains_across_calls() {
        let Some(t) = VaesToken::get() else { return };
        let key = AesKey::new(&bytes(9, 16)).unwrap();
        let n = 37;
        let input = bytes(77, BLOCK * n);
        let iv: Block = bytes(78, BLOCK).try_into().unwrap();
        for mode in MODES {
            let mut whole = vec![0u8; BLOCK * n];
            parallel(t, mode, &key, &IoPtrs::copy(&input, &mut whole), n, &iv);
            for split in 0..=n {
                let mut buf = input.clone();
                let (a, b) = buf.split_at_mut(BLOCK * split);
                let mid = parallel(
                    t,
                    mode,
                    &key,
                    &IoPtrs::in_place(a, BLOCK * split),
                    split,
                    &iv,
                );
                let rest = n - split;
                parallel(
                    t,
                    mode,
                    &key,
                    &IoPtrs::in_place(b, BLOCK * rest),
                    rest,
                    &mid,
                );
                assert_eq!(buf, whole, "{mode:?} split {split}");
            }
        }
    }

    /// A CTR kernel of this backend: key, io, initial counter block, counter width.
    type CtrKernel = Box<dyn Fn(&AesKey, &IoPtrs<'_>, &Block, CounterWidth)>;

    /// The ymm CTR kernel, and the zmm one where the CPU has AVX-512F/BW (which [`ctr`]
    /// then picks): both stay tested on a machine that runs only one of them in production.
    fn ctr_kernels(t: VaesToken) -> Vec<(&'static str, CtrKernel)> {
        let mut v: Vec<(&'static str, CtrKernel)> =
            vec![("ymm", Box::new(move |k, io, c, w| ctr_ymm(t, k, io, c, w)))];
        if let Some(z) = VaesZmmToken::with(t) {
            v.push(("zmm", Box::new(move |k, io, c, w| ctr_zmm(z, k, io, c, w))));
        }
        v
    }

    /// CTR, each kernel of [`ctr_kernels`], against the xmm kernel for one counter, every byte
    /// length in `lens`, every key size, out of place (with spare output room) and in place.
    fn check_ctr(t: VaesToken, ctr0: &Block, lens: impl Iterator<Item = usize> + Clone) {
        check_ctr_width(t, ctr0, lens, CounterWidth::Full128);
    }

    /// [`check_ctr`] for one counter width; every few lengths also against the block-by-block
    /// reference.
    fn check_ctr_width(
        t: VaesToken,
        ctr0: &Block,
        lens: impl Iterator<Item = usize> + Clone,
        width: CounterWidth,
    ) {
        for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
            let key = AesKey::new(&bytes(ki as u64 + 11, klen)).unwrap();
            for len in lens.clone() {
                let input = bytes(len as u64 + 31 * ki as u64, len);
                let mut want = vec![0xEEu8; len + 17];
                ni::ctr(t.ni(), &key, &IoPtrs::copy(&input, &mut want), ctr0, width);
                if len % 7 == 0 || len > 16 * 41 {
                    let reference = crate::aes::ctr_reference(&key, &input, ctr0, width);
                    assert_eq!(&want[..len], &reference[..], "xmm {width:?} len {len}");
                }
                for (name, kernel) in ctr_kernels(t) {
                    let what = format!("{name} {width:?} key {klen} len {len} ctr {ctr0:02x?}");
                    let mut got = vec![0xEEu8; len + 17];
                    kernel(&key, &IoPtrs::copy(&input, &mut got), ctr0, width);
                    assert_eq!(got, want, "{what} copy");

                    let mut buf = input.clone();
                    buf.extend_from_slice(&[0x5A; 7]);
                    kernel(&key, &IoPtrs::in_place(&mut buf, len), ctr0, width);
                    assert_eq!(&buf[..len], &want[..len], "{what} in place");
                    assert_eq!(&buf[len..], &[0x5A; 7], "{what} in place");
                }
            }
        }
    }

    /// GCM's 32-bit counter: the low word starts a few blocks before 2^32 (the wrap falls in
    /// the 16-block main loop, in the tail step, at a register's high half, or at the very
    /// first block), the 96 fixed bits are all ones so a carry out of the word would show.
    /// Against the xmm kernel and the block-by-block reference.
    #[test]
    fn ctr_low32_wraps_mod_2_32() {
        let Some(t) = VaesToken::get() else { return };
        for low in [
            0xffff_fffeu32,
            0xffff_ffff,
            0xffff_fff0,
            0xffff_ffe1,
            0xffff_ff00,
            0,
        ] {
            let mut c = [0xffu8; 16];
            c[12..].copy_from_slice(&low.to_be_bytes());
            check_ctr_width(t, &c, ctr_lengths(), CounterWidth::Low32);
            // Other fixed bits: random, and all zeros.
            let mut c: Block = bytes(u64::from(low), BLOCK).try_into().unwrap();
            c[12..].copy_from_slice(&low.to_be_bytes());
            check_ctr_width(
                t,
                &c,
                [0usize, 1, 31, 32, 33, 255, 513].into_iter(),
                CounterWidth::Low32,
            );
            let mut c = [0u8; 16];
            c[12..].copy_from_slice(&low.to_be_bytes());
            check_ctr_width(t, &c, [100usize, 4113].into_iter(), CounterWidth::Low32);
        }
        // Known answer of the wrap itself: block 1 after low word ffffffff uses low word 0
        // with the 96 fixed bits unchanged (a 128-bit counter would carry into them).
        let key = AesKey::new(&bytes(3, 16)).unwrap();
        let mut c = [0xabu8; 16];
        c[12..].copy_from_slice(&[0xff; 4]);
        let mut out = [0u8; 32];
        ctr(
            t,
            &key,
            &IoPtrs::copy(&[0u8; 32], &mut out),
            &c,
            CounterWidth::Low32,
        );
        let mut e0 = c;
        key.encrypt_block(&mut e0);
        let mut e1 = [0xabu8; 16];
        e1[12..].copy_from_slice(&[0; 4]);
        key.encrypt_block(&mut e1);
        assert_eq!(out[..16], e0);
        assert_eq!(out[16..], e1);
    }

    fn ctr_lengths() -> impl Iterator<Item = usize> + Clone {
        // Every byte length up to 40 blocks and a bit, plus larger whole and partial ones.
        (0..=16 * 41 + 3).chain([1440, 1600, 4111, 4112, 4113])
    }

    /// The stitched GCM kernels (ymm and zmm GHASH, each where the CPU has it) against the
    /// xmm CTR and the xmm GHASH of (A, C), for both product variants, every key size, A of
    /// 0, 5 and 32 bytes, lengths around every step boundary, copy and in place, and a
    /// 32-bit counter that wraps inside a message; nothing past the message written.
    #[test]
    fn gcm_encrypt_matches_ctr_then_ghash() {
        use crate::gf128::{GhashBackend, GhashKey, MulVariant};
        let Some(t) = VaesToken::get() else { return };
        // Every length up to three sixteen-block steps and a partial fourth (so every size
        // of the zmm tail, whole and partial, behind 0-3 steps), then longer ones.
        let lens = (0..=16 * 50 + 3).chain([1440, 4096, 4111, 4112, 4113]);
        let wide = [
            GhashBackend::Vclmul512(MulVariant::Schoolbook),
            GhashBackend::Vclmul512(MulVariant::Karatsuba),
            GhashBackend::Vclmul(MulVariant::Schoolbook),
            GhashBackend::Vclmul(MulVariant::Karatsuba),
        ];
        for backend in wide {
            let v = match backend {
                GhashBackend::Vclmul512(v) | GhashBackend::Vclmul(v) => v,
                _ => unreachable!(),
            };
            for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
                let key = AesKey::new(&bytes(ki as u64 + 51, klen)).unwrap();
                let h: Block = bytes(ki as u64 + 61, BLOCK).try_into().unwrap();
                let Ok(g) = GhashKey::with_backend(&h, backend) else {
                    continue; // no AVX-512 / VPCLMULQDQ
                };
                let z = g.stitch().unwrap();
                let xmm = GhashKey::with_backend(&h, GhashBackend::Clmul(v)).unwrap();
                for (n, len) in lens.clone().enumerate() {
                    let ad = bytes(len as u64 + 3, [0, 5, 32][n % 3]);
                    // Every third message's counter wraps mod 2^32 after 7 blocks.
                    let mut c0: Block = bytes(len as u64 + 7, BLOCK).try_into().unwrap();
                    if n % 3 == 1 {
                        c0[12..].copy_from_slice(&(u32::MAX - 6).to_be_bytes());
                    }
                    let input = bytes(len as u64 + 9, len);
                    let mut want = vec![0xEEu8; len + 17];
                    let io = IoPtrs::copy(&input, &mut want);
                    ni::ctr(t.ni(), &key, &io, &c0, CounterWidth::Low32);
                    let s_want = xmm.gcm_ghash(&ad, &want[..len]);
                    let what = format!("{backend:?} key {klen} len {len} ad {}", ad.len());

                    let mut got = vec![0xEEu8; len + 17];
                    // `s` is output only: a stale value there must not matter.
                    let mut s = [0xA5u8; BLOCK];
                    let io = IoPtrs::copy(&input, &mut got);
                    gcm_encrypt(t, z, &key, &io, &c0, &ad, &mut s);
                    assert_eq!((&got, s), (&want, s_want), "{what} copy");

                    let mut buf = input.clone();
                    buf.extend_from_slice(&[0x5A; 7]);
                    let mut s = [0x5Au8; BLOCK];
                    gcm_encrypt(
                        t,
                        z,
                        &key,
                        &IoPtrs::in_place(&mut buf, len),
                        &c0,
                        &ad,
                        &mut s,
                    );
                    assert_eq!((&buf[..len], s), (&want[..len], s_want), "{what} in place");
                    assert_eq!(&buf[len..], &[0x5A; 7], "{what} in place");
                }
            }
        }
    }

    #[test]
    fn ctr_matches_ni() {
        let Some(t) = VaesToken::get() else { return };
        let c: Block = bytes(5, BLOCK).try_into().unwrap();
        check_ctr(t, &c, ctr_lengths());
    }

    /// Low 64 bits at 2^64 - 3: the carry into the high word happens inside the message (the
    /// full 128-bit add path), and at 2^64 - 300 inside a later main-loop step.
    #[test]
    fn ctr_carries_into_the_high_word() {
        let Some(t) = VaesToken::get() else { return };
        for low in [u64::MAX - 2, u64::MAX - 299, u64::MAX - 16, u64::MAX] {
            let c = ((0x0123_4567_89AB_CDEFu128 << 64) | u128::from(low)).to_be_bytes();
            check_ctr(t, &c, ctr_lengths());
        }
        // Exactly reaching 2^64 at the end stays on the fast path.
        let c = (u128::from(u64::MAX - 15)).to_be_bytes();
        check_ctr(t, &c, [256usize, 255, 240].into_iter());
    }

    /// All 128 bits at 2^128 - 2: the counter wraps to zero inside the message.
    #[test]
    fn ctr_wraps_mod_2_128() {
        let Some(t) = VaesToken::get() else { return };
        let c = (u128::MAX - 1).to_be_bytes();
        check_ctr(t, &c, ctr_lengths());
    }

    /// Known answers independent of the xmm kernel: SP 800-38A F.5.1 (CTR-AES128) and F.2.2
    /// (CBC-AES128 decryption).
    #[test]
    fn sp800_38a_vectors() {
        let Some(t) = VaesToken::get() else { return };
        let key = AesKey::new(&hex("2b7e151628aed2a6abf7158809cf4f3c")).unwrap();
        let c: Block = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff").try_into().unwrap();
        let pt = hex(concat!(
            "6bc1bee22e409f96e93d7e117393172a",
            "ae2d8a571e03ac9c9eb76fac45af8e51",
            "30c81c46a35ce411e5fbc1191a0a52ef",
            "f69f2445df4f9b17ad2b417be66c3710"
        ));
        let ct = hex(concat!(
            "874d6191b620e3261bef6864990db6ce",
            "9806f66b7970fdff8617187bb9fffdff",
            "5ae4df3edbd5d35e5b4f09020db03eab",
            "1e031dda2fbe03d1792170a0f3009cee"
        ));
        let mut out = vec![0u8; pt.len()];
        ctr(
            t,
            &key,
            &IoPtrs::copy(&pt, &mut out),
            &c,
            CounterWidth::Full128,
        );
        assert_eq!(out, ct);
        // F.2.2 (CBC-AES128 decryption), in place.
        let iv: Block = hex("000102030405060708090a0b0c0d0e0f").try_into().unwrap();
        let mut buf = hex(concat!(
            "7649abac8119b246cee98e9b12e9197d",
            "5086cb9b507219ee95db113a917678b2",
            "73bed6b8e3c1743b7116e69e22229516",
            "3ff1caa1681fac09120eca307586e1a7"
        ));
        let last = parallel(
            t,
            Parallel::CbcDecrypt,
            &key,
            &IoPtrs::in_place(&mut buf, 64),
            4,
            &iv,
        );
        assert_eq!(buf, pt);
        assert_eq!(last.to_vec(), hex("3ff1caa1681fac09120eca307586e1a7"));
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
