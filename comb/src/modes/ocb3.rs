//! OCB3 (RFC 7253) with AES-128/192/256: authenticated encryption with associated data,
//! nonces of 1..=15 bytes, tags of 8..=16 bytes (validated before [`run`]).
//!
//! * Per key (cached with the key, [`Ocb3Key`]): `L_* = E(0)`, `L_$ = 2·L_*`,
//!   `L_i = 2^(i+1)·L_$` for `i < 64`, and the prefix table `C_j = L_ntz(1) ^ … ^ L_ntz(j)` for
//!   `j < 16` (the offset of block `i0 + j` is `Offset_i0 ^ C_j` whenever `i0` is a multiple of
//!   16, because `ntz` of `i0 + j` is `ntz(j)` for `j < 16`): every offset in a group of blocks
//!   is one xor from the group's base offset, and only the group's last block needs the
//!   variable `L_ntz(i0 + 16)` (resp. `+ 8`).
//! * Per job: `Ktop = E(Nonce[1..122] || 0^6)`, batched across all jobs of the call (one
//!   [`Kernels::encrypt_many`] per chunk of [`CHUNK`] jobs); `Offset_0` from `Stretch`.
//! * Whole blocks, of the message and (for `HASH(K, A)`) of the associated data, run on this
//!   file's wide kernels: AES-NI with 8 blocks in flight ([`bulk_ni`]), VAES with 16 blocks
//!   in flight, in 8 ymm registers ([`bulk_vaes`]) or, where the CPU has AVX-512F/BW, in 4
//!   zmm registers with the tail under byte masks ([`bulk_zmm`]; see [`Bulk`]). The offsets are
//!   computed in registers, the offset xor before the cipher is merged with the whitening
//!   key and the one after it into the last round key (`AESENCLAST(x, k ^ O) =
//!   AESENCLAST(x, k) ^ O`), and the checksum (or the AD sum) is accumulated in a register.
//!   One kernel call per job, also for short ones. Gathering the whitened blocks of short
//!   jobs (up to 15 blocks) from many jobs into one batched ECB call, the offsets xored in
//!   and out in passes of their own, measured slower on Zen 3 (TSC cycles/byte, batches of
//!   64, encryption and decryption, alternated builds): 64-byte messages 4.47-4.61 ->
//!   5.21-5.44, 200-byte 1.68-1.78 -> 2.54-2.67. The two passes over the blocks cost more
//!   than the kernel's latency they hide.
//! * Partial blocks: the pad `E(Offset_*)` of a partial last message block, and the
//!   encryption of a partial last AD block, run in the rounds of the kernel's last step of
//!   that message or AD (an xmm register beside the step's), not as a latency chain of their
//!   own nor as one more batched call. The tags `E(Checksum ^ Offset ^ L_$)` of all jobs are
//!   one batched call, in both directions (a decryption's checksum is complete once its pad
//!   is known, inside the job's kernel call).
//! * Decryption: OCB3's checksum is over the plaintext, so the tag can only be checked after
//!   decrypting. The plaintext is written, the tag compared in constant time
//!   ([`tag_matches`](crate::block::tag_matches)); on a mismatch the output bytes `[..len]`
//!   are zeroed before the job's result
//!   ([`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed)) is set, so no
//!   plaintext is left.
//!
//! OCB3 has no sequential chain: batch path ([`Path::Comb`]) and single path
//! ([`Path::Single`], one job per call) run the same code and give the same bytes; the batch
//! path gains from the batched per-job blocks (`Ktop`, tags) of many jobs.
//!
//! Secrets wiped after use: offsets, checksums, AD sums, pads, `Ktop`, tag blocks (all on the
//! stack of [`run_chunk`]), and the key table on drop.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::aes::ni::{load as ld, load_in, store as st, store_out};
use crate::aes::{AesKey, Derived, Kernels, RoundKeys};
use crate::block::{dbl, pad10, truncate, wipe, xor, xor_into, Block, IoPtrs, BLOCK};
use crate::cpu::{NiToken, VaesToken, VaesZmmToken};
use crate::modes::{finish_tag, format_nonce, Prepared, TagIo};
use crate::sched::exec::Path;
use crate::{JobResult, Op};
use zeroize::Zeroize;

/// Jobs per batched call of the per-job blocks: their state lives on the stack (no heap
/// allocation per call, which matters on the single path, one call per message).
const CHUNK: usize = 64;

/// Capacity of the arrays for calls of at most this many jobs (the single path has one).
const SMALL: usize = 8;

/// Number of `L_i` kept: `ntz(i)` of a block number below 2^64 is at most 63.
const L_COUNT: usize = 64;

/// The key-dependent values of OCB3 (RFC 7253 §4.1), derived once per key and cached with it
/// ([`Derived`], slot [`crate::aes::slot::OCB3`]); wiped on drop.
#[repr(C, align(32))]
pub(crate) struct Ocb3Key {
    /// `c[j] = L_ntz(1) ^ … ^ L_ntz(j)` for `j` in `0..16` (`c[0] = 0`), and `c[16] = c[15]`
    /// so that `c[2r + 1..2r + 3]` is one 32-byte load for every register `r < 8` of the
    /// VAES kernel.
    c: [Block; 17],
    /// `L_* = E(0^128)`.
    l_star: Block,
    /// `L_$ = double(L_*)`.
    l_dollar: Block,
    /// `L_i = double(L_{i-1})`, `L_0 = double(L_$)`.
    l: [Block; L_COUNT],
}

impl Derived for Ocb3Key {
    const SLOT: usize = crate::aes::slot::OCB3;

    fn derive(key: &AesKey) -> Ocb3Key {
        let mut t = Ocb3Key {
            c: [[0; BLOCK]; 17],
            l_star: [0; BLOCK],
            l_dollar: [0; BLOCK],
            l: [[0; BLOCK]; L_COUNT],
        };
        t.l_star = key.e_zero;
        t.l_dollar = dbl(&t.l_star);
        t.l[0] = dbl(&t.l_dollar);
        for i in 1..L_COUNT {
            t.l[i] = dbl(&t.l[i - 1]);
        }
        for j in 1..16 {
            t.c[j] = xor(&t.c[j - 1], &t.l[(j as u32).trailing_zeros() as usize]);
        }
        t.c[16] = t.c[15];
        t
    }
}

impl Drop for Ocb3Key {
    fn drop(&mut self) {
        self.c.zeroize();
        self.l_star.zeroize();
        self.l_dollar.zeroize();
        self.l.zeroize();
    }
}

/// `Offset_0 = Stretch[1 + bottom..128 + bottom]` with `Stretch = Ktop || (Ktop[1..64] xor
/// Ktop[9..72])` (RFC 7253 §4.2). `bottom` (< 64) comes from the public nonce.
///
/// On the three 64-bit words of `Stretch`: each word of the offset is a funnel shift of two
/// neighbours (a double-word shift) instead of a `u128` shift, which costs a compare and
/// conditional moves (once per message).
fn stretch(ktop: &Block, bottom: u32) -> Block {
    debug_assert!(bottom < 64);
    let k = u128::from_be_bytes(*ktop);
    let (w0, w1) = ((k >> 64) as u64, k as u64);
    let w2 = w0 ^ ((w0 << 8) | (w1 >> 56));
    // The 64 bits from bit `bottom` of `a || b`. `b >> 1 >> (63 - bottom)` is `b >> (64 -
    // bottom)` without the overflowing shift by 64 when `bottom` is 0.
    let funnel = |a: u64, b: u64| (a << bottom) | ((b >> 1) >> (63 - bottom));
    ((u128::from(funnel(w0, w1)) << 64) | u128::from(funnel(w1, w2))).to_be_bytes()
}

/// Kernel modes: OCB encryption, OCB decryption, and `HASH(K, A)` over whole AD blocks.
const ENC: u8 = 0;
const DEC: u8 = 1;
const HASH: u8 = 2;

/// Runs `MODE` over the first `blocks` whole blocks of `io`, numbered `1..=blocks`, starting
/// from `*offset` (`Offset_0`): `*offset` becomes `Offset_blocks` and the checksum of the
/// plaintext blocks (`ENC`, `DEC`) or the sum of the cipher outputs (`HASH`) is xored into
/// `*sum`. `ENC`/`DEC` write `C_i` resp. `P_i` to the output; in place is allowed.
///
/// `last`: the block after them, partial. When given, `*offset` goes on to `Offset_* =
/// Offset_blocks ^ L_*` and `last` becomes `E(last ^ Offset_*)` under the encryption schedule
/// (in every mode): with a zero block, the pad of a partial message block; with the padded
/// AD block `A_* || 1 || 0*`, its term of `HASH(K, A)`. It runs in the rounds of the last
/// step (the tail, or a step of its own), not as one more per-message latency chain.
// Eight arguments: the three blocks it updates live in the caller's per-job arrays (offset,
// checksum) or on its stack (the partial block), so bundling them would only add copies.
#[allow(clippy::too_many_arguments)]
fn bulk<const MODE: u8>(
    k: Bulk,
    t: &Ocb3Key,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    last: Option<&mut Block>,
    offset: &mut Block,
    sum: &mut Block,
) {
    if blocks == 0 && last.is_none() {
        return;
    }
    assert!(BLOCK * blocks <= io.len);
    if MODE != HASH {
        assert!(!io.dst.is_null() && BLOCK * blocks <= io.out_cap);
    }
    match k {
        // SAFETY: the token proves AES-NI/SSE2; the assertions give the kernel's bounds.
        Bulk::Ni(_) => unsafe { bulk_ni::<MODE>(t, key, io, blocks, last, offset, sum) },
        // SAFETY: the token proves AVX2, VAES and AES-NI; bounds as above.
        Bulk::Vaes(_) => unsafe { bulk_vaes::<MODE>(t, key, io, blocks, last, offset, sum) },
        // SAFETY: the token proves AVX2, VAES, AES-NI and AVX-512F/BW; bounds as above.
        Bulk::Zmm(_) => unsafe { bulk_zmm::<MODE>(t, key, io, blocks, last, offset, sum) },
    }
}

/// The wide kernel a call's jobs run on, chosen once per batch call from its backend.
#[derive(Clone, Copy, Debug)]
enum Bulk {
    /// [`bulk_ni`].
    Ni(NiToken),
    /// [`bulk_vaes`].
    Vaes(VaesToken),
    /// [`bulk_zmm`], where the CPU has AVX-512F/BW. It replaced the ymm kernel compiled for
    /// AVX-512VL (32 registers, VPTERNLOGQ; itself 6% faster than [`bulk_vaes`] on Zen 4).
    /// Against that, `comb bench` on Zen 4, alternated builds, TSC cycles/byte: the realistic
    /// mix 0.313-0.318 -> 0.308-0.310 encrypting, 0.318-0.325 -> 0.313-0.319 decrypting;
    /// 1440-byte messages 0.191-0.200 -> 0.183-0.185 and 0.194-0.201 -> 0.189-0.191. The
    /// AES work is the same (a zmm VAESENC issues once per cycle, a ymm one twice); the
    /// loads, xors, stores and the tail's half-register handling are fewer.
    Zmm(VaesZmmToken),
}

impl Bulk {
    /// The kernel for backend `k`: on VAES the zmm kernel where the CPU has AVX-512F/BW,
    /// else the ymm one.
    fn of(k: Kernels) -> Bulk {
        match k {
            Kernels::Ni(t) => Bulk::Ni(t),
            Kernels::Vaes256(t) => VaesZmmToken::with(t).map_or(Bulk::Vaes(t), Bulk::Zmm),
        }
    }
}

/// `ntz(n)`, the index of the `L` that block number `n` (>= 1) adds to the offset: below 64
/// for any non-zero `usize`. Block numbers are public (message lengths), so the table index
/// leaks nothing.
#[inline(always)]
fn ntz(n: usize) -> usize {
    (n.trailing_zeros() as usize).min(L_COUNT - 1)
}

// ---------------------------------------------------------------------------------------
// AES-NI (xmm) kernel: 8 blocks in flight

/// `ni_step!(N, MODE; rk, rounds, io, i, a, z, cv, acc, extra)`: the `N` blocks `i..i + N`
/// in flight. Block `i + j`'s offset is `base ^ cv(j)`; `a = base ^ k_0` and `z = base ^
/// k_last` (`k` the schedule of the mode: `rk`), so the cipher input is `in ^ a ^ cv(j)` and
/// the last round key `z ^ cv(j)` adds the offset to the output (`HASH`: `z = k_last`, the
/// bare cipher output is summed). `acc` accumulates the
/// plaintext (`ENC`: input, `DEC`: output) or the cipher output (`HASH`).
///
/// `extra = (on, xp, enc)`: when `on`, one more block runs in the same rounds, `xp` (the
/// block xor its offset) through the encryption schedule `enc` whatever `MODE`: the partial
/// last block's pad or AD block (see [`bulk`]) shares the tail's latency instead of adding
/// its own.
///
/// Use only inside a `#[target_feature(enable = "aes,sse2")]` function, with blocks
/// `i..i + N` inside the input and (unless `HASH`) the non-null output, `rounds <= 14`.
/// A macro so that the states stay in registers (see `aes/ni.rs` on LLVM not inlining).
macro_rules! ni_step {
    ($n:expr, $mode:expr; $rk:expr, $rounds:expr, $io:expr, $i:expr, $a:expr, $z:expr, $cv:expr, $acc:expr, $extra:expr) => {{
        const N: usize = $n;
        let rk: &RoundKeys = $rk;
        let rounds: usize = $rounds;
        let io: &IoPtrs<'_> = $io;
        let i: usize = $i;
        let (a, z): (__m128i, __m128i) = ($a, $z);
        let acc: &mut __m128i = $acc;
        let (on, xp, enc): (bool, &mut __m128i, &RoundKeys) = $extra;
        if on {
            *xp = _mm_xor_si128(*xp, ld(&enc.0[0]));
        }
        let mut x = [_mm_setzero_si128(); N];
        for (j, xj) in x.iter_mut().enumerate() {
            // SAFETY: block i + j is inside the input (caller).
            let p = unsafe { load_in(io, i + j) };
            if $mode == ENC {
                *acc = _mm_xor_si128(*acc, p);
            }
            *xj = _mm_xor_si128(p, _mm_xor_si128(a, $cv(j)));
        }
        for r in 1..rounds {
            let kr = ld(&rk.0[r]);
            for xj in x.iter_mut() {
                *xj = if $mode == DEC {
                    _mm_aesdec_si128(*xj, kr)
                } else {
                    _mm_aesenc_si128(*xj, kr)
                };
            }
            if on {
                *xp = _mm_aesenc_si128(*xp, ld(&enc.0[r]));
            }
        }
        if on {
            *xp = _mm_aesenclast_si128(*xp, ld(&enc.0[rounds]));
        }
        for (j, xj) in x.iter().enumerate() {
            // HASH sums the bare cipher outputs: no offset in the last round key.
            let kl = if $mode == HASH {
                z
            } else {
                _mm_xor_si128(z, $cv(j))
            };
            let y = if $mode == DEC {
                _mm_aesdeclast_si128(*xj, kl)
            } else {
                _mm_aesenclast_si128(*xj, kl)
            };
            if $mode == HASH {
                *acc = _mm_xor_si128(*acc, y);
            } else {
                // SAFETY: block i + j is inside the non-null output (caller).
                unsafe { store_out(io, i + j, y) };
                if $mode == DEC {
                    *acc = _mm_xor_si128(*acc, y);
                }
            }
        }
    }};
}

/// The offset after a kernel's tail, `base ^ C_rest` (then `^ L_*` when there is a partial
/// block `last`), and `last` xored with it (zero without one): what the tail step
/// enciphers beside its blocks (see `bulk`). Shared by the xmm, ymm and zmm kernels.
#[inline]
#[target_feature(enable = "sse2")]
fn tail_offset(
    t: &Ocb3Key,
    base: __m128i,
    rest: usize,
    last: Option<&Block>,
) -> (__m128i, __m128i) {
    let end = _mm_xor_si128(base, ld(&t.c[rest]));
    match last {
        Some(b) => {
            let end = _mm_xor_si128(end, ld(&t.l_star));
            (end, _mm_xor_si128(ld(b), end))
        }
        None => (end, _mm_setzero_si128()),
    }
}

/// A kernel's results: the enciphered partial block `xp` into `last`, the offset `end`
/// into `offset`, and `folded` (its sum or checksum, folded to one block) xored into `sum`.
#[inline]
#[target_feature(enable = "sse2")]
fn store_results(
    last: Option<&mut Block>,
    xp: __m128i,
    offset: &mut Block,
    end: __m128i,
    sum: &mut Block,
    folded: __m128i,
) {
    if let Some(b) = last {
        st(b, xp);
    }
    st(offset, end);
    st(sum, _mm_xor_si128(ld(sum), folded));
}

/// # Safety
/// The CPU has AES-NI and SSE2; `16 * blocks <= io.len` and, unless `HASH`, `io.dst` is
/// non-null and `16 * blocks <= io.out_cap`.
#[target_feature(enable = "aes,sse2")]
unsafe fn bulk_ni<const MODE: u8>(
    t: &Ocb3Key,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    last: Option<&mut Block>,
    offset: &mut Block,
    sum: &mut Block,
) {
    const W: usize = 8;
    let rk = if MODE == DEC { &key.dec } else { &key.enc };
    let rounds = key.rounds.min(14);
    let (k0, kl) = (ld(&rk.0[0]), ld(&rk.0[rounds]));
    let mut base = ld(offset);
    // The last round key with the offset folded in (HASH: without).
    let last_key = |b: __m128i| {
        if MODE == HASH {
            kl
        } else {
            _mm_xor_si128(b, kl)
        }
    };
    let mut acc = _mm_setzero_si128();
    let c = |j: usize| ld(&t.c[j]);
    let mut i = 0;
    // Bounds of every step: blocks i..i + N, all below `blocks` (checked by the caller).
    while i + W <= blocks {
        // The group's last block, number i + 8: Offset = base ^ C_7 ^ L_ntz(i + 8).
        let last = _mm_xor_si128(c(W - 1), ld(&t.l[ntz(i + W)]));
        let cv = |j: usize| if j == W - 1 { last } else { c(j + 1) };
        let (a, z) = (_mm_xor_si128(base, k0), last_key(base));
        let mut none = _mm_setzero_si128();
        ni_step!(W, MODE; rk, rounds, io, i, a, z, cv, &mut acc, (false, &mut none, &key.enc));
        base = _mm_xor_si128(base, last);
        i += W;
    }
    let rest = blocks - i; // 0..8
    let cv = |j: usize| c(j + 1);
    let (a, z) = (_mm_xor_si128(base, k0), last_key(base));
    let on = last.is_some();
    let (end, mut xp) = tail_offset(t, base, rest, last.as_deref());
    macro_rules! tail {
        ($($n:literal)*) => {
            match rest {
                // Nothing after the last whole step.
                0 if !on => {}
                $($n => ni_step!($n, MODE; rk, rounds, io, i, a, z, cv, &mut acc, (on, &mut xp, &key.enc)),)*
                _ => {}
            }
        };
    }
    tail!(0 1 2 3 4 5 6 7);
    store_results(last, xp, offset, end, sum, acc);
}

// ---------------------------------------------------------------------------------------
// VAES (ymm) kernel: 8 registers of 2 blocks = 16 blocks in flight

/// Round key `r` (r < 15) in both halves: a VBROADCASTI128 from memory, a plain load.
#[inline]
#[target_feature(enable = "avx,avx2")]
fn rk2(k: &RoundKeys, r: usize) -> __m256i {
    _mm256_broadcastsi128_si256(ld(&k.0[r]))
}

/// `(c[2r + 1], c[2r + 2])` for `r < 8` (see [`Ocb3Key::c`]).
#[inline]
#[target_feature(enable = "avx")]
fn c_pair(t: &Ocb3Key, r: usize) -> __m256i {
    let r = r.min(7);
    let p = t.c[2 * r + 1..2 * r + 3].as_ptr();
    // SAFETY: `p` points at 2 consecutive blocks of `t.c` (2r + 2 <= 16), 32 readable bytes.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// Input blocks `i` and `i + 1`. Caller guarantees `16 * (i + 2) <= io.len`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn load2(io: &IoPtrs<'_>, i: usize) -> __m256i {
    debug_assert!(BLOCK * (i + 2) <= io.len);
    // SAFETY: by the caller's guarantee the 32 bytes are inside the readable input.
    unsafe { _mm256_loadu_si256(io.src.add(BLOCK * i).cast()) }
}

/// Input block `i` in the low half, zeros in the high half. Caller guarantees `16 * (i + 1)
/// <= io.len`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn load1(io: &IoPtrs<'_>, i: usize) -> __m256i {
    debug_assert!(BLOCK * (i + 1) <= io.len);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the readable input.
    let v = unsafe { _mm_loadu_si128(io.src.add(BLOCK * i).cast()) };
    _mm256_set_m128i(_mm_setzero_si128(), v)
}

/// Writes output blocks `i` and `i + 1`. Caller guarantees a non-null `dst` and
/// `16 * (i + 2) <= io.out_cap`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store2(io: &IoPtrs<'_>, i: usize, v: __m256i) {
    debug_assert!(!io.dst.is_null() && BLOCK * (i + 2) <= io.out_cap);
    // SAFETY: by the caller's guarantee the 32 bytes are inside the writable output.
    unsafe { _mm256_storeu_si256(io.dst.add(BLOCK * i).cast(), v) }
}

/// Writes output block `i` from the low half of `v`. Caller guarantees a non-null `dst` and
/// `16 * (i + 1) <= io.out_cap`.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn store1(io: &IoPtrs<'_>, i: usize, v: __m256i) {
    debug_assert!(!io.dst.is_null() && BLOCK * (i + 1) <= io.out_cap);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the writable output.
    unsafe { _mm_storeu_si128(io.dst.add(BLOCK * i).cast(), _mm256_castsi256_si128(v)) }
}

/// `vaes_step!(N, MODE; rk, rounds, io, i, odd, a, z, cv, acc, extra)`: the `2N` (`2N - 1` if
/// `odd`) blocks from block `i` in `N` registers, register `j` holding blocks `i + 2j`
/// (low half) and `i + 2j + 1` (high half; with `odd` the last register's high half is
/// unused: its input is zero, its output neither stored nor accumulated). Offsets as in
/// [`ni_step!`]: `a`, `z` are the broadcast base offset xor the first / last round key,
/// `cv(j)` register `j`'s pair of offset differences; `extra` as in [`ni_step!`] (an xmm
/// register beside the step's ymm ones).
///
/// Use only inside a `#[target_feature(enable = "avx,avx2,vaes,aes")]` function with the
/// blocks inside the input and (unless `HASH`) the non-null output, `rounds <= 14`.
macro_rules! vaes_step {
    ($n:expr, $mode:expr; $rk:expr, $rounds:expr, $io:expr, $i:expr, $odd:expr, $a:expr, $z:expr, $cv:expr, $acc:expr, $extra:expr) => {{
        const N: usize = $n;
        let rk: &RoundKeys = $rk;
        let rounds: usize = $rounds;
        let io: &IoPtrs<'_> = $io;
        let i: usize = $i;
        let odd: bool = $odd;
        let (a, z): (__m256i, __m256i) = ($a, $z);
        let acc: &mut __m256i = $acc;
        let (on, xp, enc): (bool, &mut __m128i, &RoundKeys) = $extra;
        if on {
            *xp = _mm_xor_si128(*xp, ld(&enc.0[0]));
        }
        let half = |j: usize| odd && j + 1 == N;
        let mut x = [_mm256_setzero_si256(); N];
        for (j, xj) in x.iter_mut().enumerate() {
            // SAFETY: block i + 2j (and i + 2j + 1 unless half) is inside the input (caller).
            let p = unsafe {
                if half(j) {
                    load1(io, i + 2 * j)
                } else {
                    load2(io, i + 2 * j)
                }
            };
            if $mode == ENC {
                // A half register's high half is zero: nothing enters the checksum.
                *acc = _mm256_xor_si256(*acc, p);
            }
            *xj = _mm256_xor_si256(p, _mm256_xor_si256(a, $cv(j)));
        }
        for r in 1..rounds {
            let kr = rk2(rk, r);
            for xj in x.iter_mut() {
                *xj = if $mode == DEC {
                    _mm256_aesdec_epi128(*xj, kr)
                } else {
                    _mm256_aesenc_epi128(*xj, kr)
                };
            }
            if on {
                *xp = _mm_aesenc_si128(*xp, ld(&enc.0[r]));
            }
        }
        if on {
            *xp = _mm_aesenclast_si128(*xp, ld(&enc.0[rounds]));
        }
        for (j, xj) in x.iter().enumerate() {
            // HASH sums the bare cipher outputs: no offset in the last round key.
            let kl = if $mode == HASH {
                z
            } else {
                _mm256_xor_si256(z, $cv(j))
            };
            let mut y = if $mode == DEC {
                _mm256_aesdeclast_epi128(*xj, kl)
            } else {
                _mm256_aesenclast_epi128(*xj, kl)
            };
            if half(j) {
                // The unused high half must not enter the sum or checksum.
                y = _mm256_blend_epi32::<0x0F>(_mm256_setzero_si256(), y);
            }
            if $mode != HASH {
                // SAFETY: the block(s) are inside the non-null output (caller).
                unsafe {
                    if half(j) {
                        store1(io, i + 2 * j, y)
                    } else {
                        store2(io, i + 2 * j, y)
                    }
                }
            }
            if $mode != ENC {
                *acc = _mm256_xor_si256(*acc, y);
            }
        }
    }};
}

/// The ymm VAES kernel: 8 registers of 2 blocks = 16 blocks in flight.
///
/// # Safety
/// The CPU has AVX2, VAES and AES-NI;
/// `16 * blocks <= io.len` and, unless `HASH`, `io.dst` is non-null and
/// `16 * blocks <= io.out_cap`.
#[target_feature(enable = "avx,avx2,vaes,aes")]
unsafe fn bulk_vaes<const MODE: u8>(
    t: &Ocb3Key,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    last: Option<&mut Block>,
    offset: &mut Block,
    sum: &mut Block,
) {
    const REGS: usize = 8;
    const W: usize = 2 * REGS;
    let rk = if MODE == DEC { &key.dec } else { &key.enc };
    let rounds = key.rounds.min(14);
    let (k0, kl) = (rk2(rk, 0), rk2(rk, rounds));
    let mut base = ld(offset);
    // The last round key with the offset folded in (HASH: without).
    let last_key = |b: __m256i| {
        if MODE == HASH {
            kl
        } else {
            _mm256_xor_si256(b, kl)
        }
    };
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    // Bounds of every step: blocks i..i + 2N (- 1 if odd), all below `blocks` (caller).
    while i + W <= blocks {
        // Block i + 16 (the last register's high half): base ^ C_15 ^ L_ntz(i + 16); the
        // table's pair for register 7 is (C_15, C_15), so xor L_ntz into its high half.
        let lz = ld(&t.l[ntz(i + W)]);
        let corr = _mm256_set_m128i(lz, _mm_setzero_si128());
        let cv = |j: usize| {
            if j == REGS - 1 {
                _mm256_xor_si256(c_pair(t, j), corr)
            } else {
                c_pair(t, j)
            }
        };
        let b2 = _mm256_broadcastsi128_si256(base);
        let (a, z) = (_mm256_xor_si256(b2, k0), last_key(b2));
        let mut none = _mm_setzero_si128();
        let extra = (false, &mut none, &key.enc);
        vaes_step!(REGS, MODE; rk, rounds, io, i, false, a, z, cv, &mut acc, extra);
        base = _mm_xor_si128(base, _mm_xor_si128(ld(&t.c[15]), lz));
        i += W;
    }
    let rest = blocks - i; // 0..16
    let odd = rest % 2 == 1;
    let cv = |j: usize| c_pair(t, j);
    let b2 = _mm256_broadcastsi128_si256(base);
    let (a, z) = (_mm256_xor_si256(b2, k0), last_key(b2));
    let on = last.is_some();
    let (end, mut xp) = tail_offset(t, base, rest, last.as_deref());
    // The tail: `rest.div_ceil(2)` registers (arms written out, not made by a nested
    // macro, which a `macro_rules!` body cannot hold with its own repetitions).
    // The extra xmm register (see `ni_step!`), moved into the one arm that runs.
    let x = (on, &mut xp, &key.enc);
    match rest.div_ceil(2) {
        // Nothing after the last whole step.
        0 if !on => {}
        0 => vaes_step!(0, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        1 => vaes_step!(1, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        2 => vaes_step!(2, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        3 => vaes_step!(3, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        4 => vaes_step!(4, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        5 => vaes_step!(5, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        6 => vaes_step!(6, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        7 => vaes_step!(7, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        8 => vaes_step!(8, MODE; rk, rounds, io, i, odd, a, z, cv, &mut acc, x),
        _ => {}
    }
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    store_results(last, xp, offset, end, sum, folded);
}

// ---------------------------------------------------------------------------------------
// zmm kernel: 4 registers of 4 blocks

/// `(c[4r + 1], .., c[4r + 4])` for `r < 4` (see [`Ocb3Key::c`]: `c[16] = c[15]`).
#[inline]
#[target_feature(enable = "avx512f")]
fn c_quad(t: &Ocb3Key, r: usize) -> __m512i {
    let r = r.min(3);
    let p = t.c[4 * r + 1..4 * r + 5].as_ptr();
    // SAFETY: `p` points at 4 consecutive blocks of `t.c` (4r + 4 <= 16), 64 readable bytes.
    unsafe { _mm512_loadu_si512(p.cast()) }
}

/// Round key `r` (r < 15) in all four lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn rk4(k: &RoundKeys, r: usize) -> __m512i {
    _mm512_broadcast_i32x4(ld(&k.0[r]))
}

/// `zmm_step!(N, MODE; rk, rounds, io, i, bytes, a, z, cv, acc, extra)`: the blocks from
/// block `i` in `N` zmm registers, register `j` holding blocks `i + 4j .. i + 4j + 4`: all
/// of them (`bytes` None) or those among the first `bytes` bytes (a multiple of 16; the
/// other lanes load zero, store nothing and add nothing to `acc`). Offsets, `a`, `z`, `acc`
/// and `extra` as in [`vaes_step!`], `cv(j)` register `j`'s four offset differences.
///
/// Use only inside a `#[target_feature(enable = "avx,avx2,vaes,aes,avx512f,avx512bw")]`
/// function with the blocks inside the input and (unless `HASH`) the non-null output,
/// `rounds <= 14`.
macro_rules! zmm_step {
    ($n:expr, $mode:expr; $rk:expr, $rounds:expr, $io:expr, $i:expr, $bytes:expr, $a:expr, $z:expr, $cv:expr, $acc:expr, $extra:expr) => {{
        const N: usize = $n;
        let rk: &RoundKeys = $rk;
        let rounds: usize = $rounds;
        let io: &IoPtrs<'_> = $io;
        let i: usize = $i;
        let bytes: Option<usize> = $bytes;
        let (a, z): (__m512i, __m512i) = ($a, $z);
        let acc: &mut __m512i = $acc;
        let (on, xp, enc): (bool, &mut __m128i, &RoundKeys) = $extra;
        if on {
            *xp = _mm_xor_si128(*xp, ld(&enc.0[0]));
        }
        // Register j's byte mask (all ones without `bytes`) and the same as a qword mask.
        let masks = |j: usize| -> (u64, u8) {
            match bytes {
                None => (u64::MAX, 0xFF),
                Some(b) => {
                    let blocks = (b / BLOCK).saturating_sub(4 * j).min(4);
                    if blocks == 4 {
                        (u64::MAX, 0xFF)
                    } else {
                        ((1u64 << (16 * blocks)) - 1, (1u8 << (2 * blocks)) - 1)
                    }
                }
            }
        };
        let mut x = [_mm512_setzero_si512(); N];
        for (j, xj) in x.iter_mut().enumerate() {
            let at = BLOCK * (i + 4 * j);
            // SAFETY: the (unmasked) blocks are inside the input (caller); masked-off bytes
            // are not read and do not fault. A masked register may start past the input's
            // end: its address by `wrapping_add`, where `add` would be undefined.
            let p = unsafe {
                match bytes {
                    None => _mm512_loadu_si512(io.src.add(at).cast()),
                    Some(_) => _mm512_maskz_loadu_epi8(masks(j).0, io.src.wrapping_add(at).cast()),
                }
            };
            if $mode == ENC {
                // Masked-off lanes are zero: nothing enters the checksum.
                *acc = _mm512_xor_si512(*acc, p);
            }
            *xj = _mm512_ternarylogic_epi64::<0x96>(p, a, $cv(j));
        }
        for r in 1..rounds {
            let kr = rk4(rk, r);
            for xj in x.iter_mut() {
                *xj = if $mode == DEC {
                    _mm512_aesdec_epi128(*xj, kr)
                } else {
                    _mm512_aesenc_epi128(*xj, kr)
                };
            }
            if on {
                *xp = _mm_aesenc_si128(*xp, ld(&enc.0[r]));
            }
        }
        if on {
            *xp = _mm_aesenclast_si128(*xp, ld(&enc.0[rounds]));
        }
        for (j, xj) in x.iter().enumerate() {
            // HASH sums the bare cipher outputs: no offset in the last round key.
            let kl = if $mode == HASH {
                z
            } else {
                _mm512_xor_si512(z, $cv(j))
            };
            let y = if $mode == DEC {
                _mm512_aesdeclast_epi128(*xj, kl)
            } else {
                _mm512_aesenclast_epi128(*xj, kl)
            };
            let (bm, qm) = masks(j);
            if $mode != HASH {
                let at = BLOCK * (i + 4 * j);
                // SAFETY: the (unmasked) blocks are inside the non-null output (caller);
                // masked-off bytes are not written (the address by `wrapping_add`, as above).
                unsafe {
                    match bytes {
                        None => _mm512_storeu_si512(io.dst.add(at).cast(), y),
                        Some(_) => _mm512_mask_storeu_epi8(io.dst.wrapping_add(at).cast(), bm, y),
                    }
                }
            }
            if $mode != ENC {
                // The masked-off lanes' outputs must not enter the sum or checksum.
                *acc = _mm512_xor_si512(*acc, _mm512_maskz_mov_epi64(qm, y));
            }
        }
    }};
}

/// The zmm kernel: [`bulk_vaes`]'s algorithm with 16-block steps in four zmm registers, and
/// the 0..=15 blocks after the last whole step in one step of as many registers as they
/// need, under byte masks.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW, AVX2, VAES and AES-NI; `16 * blocks <= io.len` and,
/// unless `HASH`, `io.dst` is non-null and `16 * blocks <= io.out_cap`.
#[target_feature(enable = "avx,avx2,vaes,aes,avx512f,avx512bw")]
unsafe fn bulk_zmm<const MODE: u8>(
    t: &Ocb3Key,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    last: Option<&mut Block>,
    offset: &mut Block,
    sum: &mut Block,
) {
    const REGS: usize = 4;
    const W: usize = 4 * REGS;
    let rk = if MODE == DEC { &key.dec } else { &key.enc };
    let rounds = key.rounds.min(14);
    let (k0, kl) = (rk4(rk, 0), rk4(rk, rounds));
    let mut base = ld(offset);
    // The last round key with the offset folded in (HASH: without).
    let last_key = |b: __m512i| {
        if MODE == HASH {
            kl
        } else {
            _mm512_xor_si512(b, kl)
        }
    };
    let mut acc = _mm512_setzero_si512();
    let mut i = 0;
    // Bounds of every whole step: blocks i..i + 16, all below `blocks` (caller).
    while i + W <= blocks {
        // Block i + 16 (the last register's last lane): base ^ C_15 ^ L_ntz(i + 16); the
        // table's quadruple for register 3 ends in C_15, so xor L_ntz into that lane.
        let lz = ld(&t.l[ntz(i + W)]);
        let corr = _mm512_maskz_broadcast_i32x4(0xF000, lz);
        let cv = |j: usize| {
            if j == REGS - 1 {
                _mm512_xor_si512(c_quad(t, j), corr)
            } else {
                c_quad(t, j)
            }
        };
        let b4 = _mm512_broadcast_i32x4(base);
        let (a, z) = (_mm512_xor_si512(b4, k0), last_key(b4));
        let mut none = _mm_setzero_si128();
        let extra = (false, &mut none, &key.enc);
        zmm_step!(REGS, MODE; rk, rounds, io, i, None, a, z, cv, &mut acc, extra);
        base = _mm_xor_si128(base, _mm_xor_si128(ld(&t.c[15]), lz));
        i += W;
    }
    let rest = blocks - i; // 0..16
    let cv = |j: usize| c_quad(t, j);
    let b4 = _mm512_broadcast_i32x4(base);
    let (a, z) = (_mm512_xor_si512(b4, k0), last_key(b4));
    let on = last.is_some();
    let (end, mut xp) = tail_offset(t, base, rest, last.as_deref());
    let x = (on, &mut xp, &key.enc);
    let bytes = Some(BLOCK * rest);
    match rest.div_ceil(4) {
        // Nothing after the last whole step.
        0 if !on => {}
        0 => zmm_step!(0, MODE; rk, rounds, io, i, bytes, a, z, cv, &mut acc, x),
        1 => zmm_step!(1, MODE; rk, rounds, io, i, bytes, a, z, cv, &mut acc, x),
        2 => zmm_step!(2, MODE; rk, rounds, io, i, bytes, a, z, cv, &mut acc, x),
        3 => zmm_step!(3, MODE; rk, rounds, io, i, bytes, a, z, cv, &mut acc, x),
        4 => zmm_step!(4, MODE; rk, rounds, io, i, bytes, a, z, cv, &mut acc, x),
        _ => {}
    }
    let half = _mm256_xor_si256(
        _mm512_castsi512_si256(acc),
        _mm512_extracti64x4_epi64::<1>(acc),
    );
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(half),
        _mm256_extracti128_si256::<1>(half),
    );
    store_results(last, xp, offset, end, sum, folded);
}

// ---------------------------------------------------------------------------------------
// the mode

/// Runs OCB3 `op` over validated jobs (key, nonce and tag lengths and directions, output room
/// already checked), writing `results[job.index]`. Both paths run the same code; the single
/// path calls with one job at a time.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    _path: Path,
) {
    for chunk in jobs.chunks_mut(CHUNK) {
        // The per-job state lives in stack arrays sized by the chunk's capacity: a small
        // call (the single path: one job) does not clear and carry 64 jobs' worth.
        if chunk.len() <= SMALL {
            run_chunk::<SMALL>(k, chunk, results, op);
        } else {
            run_chunk::<CHUNK>(k, chunk, results, op);
        }
    }
}

/// One chunk of at most `C` jobs.
fn run_chunk<const C: usize>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
) {
    let n = jobs.len().min(C);
    let jobs = &mut jobs[..n];
    let Some(first_key) = jobs.first().map(|j| j.lane.key) else {
        return;
    };
    let first_tab: &Ocb3Key = first_key.derived::<Ocb3Key>();
    let b = Bulk::of(k);

    // Per job: key, table; Offset (Ktop first, the tag's cipher input last), checksum, AD
    // sum.
    let mut keys: [&AesKey; C] = [first_key; C];
    let mut tabs: [&Ocb3Key; C] = [first_tab; C];
    let mut off = [[0u8; BLOCK]; C];
    let mut check = [[0u8; BLOCK]; C];
    let mut sum = [[0u8; BLOCK]; C];
    // The pads of the partial last blocks, wiped once used.
    let mut pads = [[0u8; BLOCK]; C];
    let mut bottom = [0u32; C];
    for (j, job) in jobs.iter().enumerate() {
        let key = job.lane.key;
        keys[j] = key;
        if j > 0 && !core::ptr::eq(key, keys[j - 1]) {
            tabs[j] = key.derived::<Ocb3Key>();
        } else if j > 0 {
            tabs[j] = tabs[j - 1];
        }
        let tag_len = match &job.tag {
            TagIo::Out(t) => t.len(),
            TagIo::In(t) => t.len(),
            TagIo::None => 0,
        };
        let nb = format_nonce(job.nonce, tag_len);
        bottom[j] = (nb & 63) as u32;
        off[j] = (nb & !63).to_be_bytes();
    }

    // Ktop of every job in one batched call, then Offset_0.
    k.encrypt_many(&mut off[..n], &keys[..n]);
    // Offset_0 replaces Ktop in place: Ktop is never copied to a second stack slot.
    for (o, &b) in off.iter_mut().zip(&bottom).take(n) {
        *o = stretch(o, b);
    }

    // Every message and every AD on the wide kernels, each partial last block's pad in the
    // rounds of its kernel's last step; then, in a pass of their own, the partial blocks;
    // then the tag's cipher input.
    for (j, job) in jobs.iter().enumerate() {
        let (key, tab) = (keys[j], tabs[j]);
        let io = job.lane.io;
        let full = io.len / BLOCK;
        let last = (io.len % BLOCK != 0).then_some(&mut pads[j]);
        match op {
            Op::Encrypt => bulk::<ENC>(b, tab, key, &io, full, last, &mut off[j], &mut check[j]),
            Op::Decrypt => bulk::<DEC>(b, tab, key, &io, full, last, &mut off[j], &mut check[j]),
        }
        if !job.ad.is_empty() {
            let ad = IoPtrs::read_only(job.ad);
            let (afull, arest) = (ad.len / BLOCK, ad.len % BLOCK);
            // A_* || 1 || 0*, which the kernel replaces with its cipher output.
            let mut a = pad10(&ad.read_from(BLOCK * afull), arest);
            let last = (arest != 0).then_some(&mut a);
            let mut aoff = [0u8; BLOCK];
            bulk::<HASH>(b, tab, key, &ad, afull, last, &mut aoff, &mut sum[j]);
            if arest != 0 {
                xor_into(&mut sum[j], &a);
            }
            wipe(&mut a);
            wipe(&mut aoff);
        }
    }
    // The partial blocks, after every job's kernel. Read right after its kernel call, a pad
    // waited there for the kernel's last rounds, and (presumably) that code between one
    // job's kernel and the next also kept the next kernel's rounds from starting under the
    // previous one's: this pass measured 1.5% faster on the realistic mix, 3-5% on 64-byte
    // messages (Zen 3).
    for (j, job) in jobs.iter().enumerate() {
        let io = job.lane.io;
        let rest = io.len % BLOCK;
        if rest != 0 {
            // The output's tail is the input's xor the pad; `xor_tail` hands back the input's
            // bytes as they were (in place, the same memory): P_*, or C_* whose P_* = C_* ^
            // Pad[..rest]. Then Checksum_* = Checksum_m ^ (P_* || 1 || 0*).
            let pad = &mut pads[j];
            let mut p = io.xor_tail(pad);
            if op == Op::Decrypt {
                p = xor(&p, &truncate(pad, rest));
            }
            p = pad10(&p, rest);
            xor_into(&mut check[j], &p);
            wipe(&mut p);
            wipe(pad);
        }
    }
    // Tag = E(Checksum ^ Offset ^ L_$) ^ HASH(K, A). A pass of its own, after every job's
    // kernel: read right after its kernel call, a job's checksum waited there for the
    // kernel. Together with `pad10` on a constant block (block.rs) measured 2-3% faster
    // OCB3 on a realistic mix (4% in an in-process loop); either change alone measured
    // nothing.
    for ((o, c), tab) in off.iter_mut().zip(check.iter_mut()).zip(&tabs).take(n) {
        xor_into(o, &xor(c, &tab.l_dollar));
        wipe(c);
    }
    k.encrypt_many(&mut off[..n], &keys[..n]);

    for (j, job) in jobs.iter_mut().enumerate() {
        let mut t = xor(&off[j], &sum[j]);
        let len = job.lane.io.len;
        finish_tag(job, &t, &mut results[job.index], len);
        wipe(&mut t);
        wipe(&mut off[j]);
        wipe(&mut sum[j]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::test_bytes as bytes;
    use crate::cpu::{NiToken, VaesToken};

    /// Every wide kernel this CPU can run.
    fn kernels() -> Vec<Bulk> {
        let mut v = Vec::new();
        if let Some(t) = NiToken::get() {
            v.push(Bulk::Ni(t));
        }
        if let Some(t) = VaesToken::get() {
            v.push(Bulk::Vaes(t));
            v.extend(VaesZmmToken::with(t).map(Bulk::Zmm));
        }
        v
    }

    /// RFC 7253's loops block by block with the raw block cipher: returns (output, final
    /// offset, checksum or sum).
    fn reference(mode: u8, key: &AesKey, input: &[u8], offset0: &Block) -> (Vec<u8>, Block, Block) {
        let t = Ocb3Key::derive(key);
        let mut off = *offset0;
        let mut acc = [0u8; 16];
        let mut out = Vec::new();
        for (i, chunk) in input.chunks_exact(16).enumerate() {
            let b: Block = chunk.try_into().unwrap();
            // L_ntz(i) from repeated doubling, independent of the table.
            let mut l = dbl(&dbl(&t.l_star));
            for _ in 0..(i + 1).trailing_zeros() {
                l = dbl(&l);
            }
            off = xor(&off, &l);
            let mut x = xor(&b, &off);
            match mode {
                DEC => key.decrypt_block(&mut x),
                _ => key.encrypt_block(&mut x),
            }
            let y = xor(&x, &off);
            match mode {
                ENC => {
                    acc = xor(&acc, &b);
                    out.extend_from_slice(&y);
                }
                DEC => {
                    acc = xor(&acc, &y);
                    out.extend_from_slice(&y);
                }
                _ => acc = xor(&acc, &x),
            }
        }
        (out, off, acc)
    }

    #[test]
    fn prefix_table_is_the_running_xor_of_l_ntz() {
        let Ok(key) = AesKey::new(&bytes(1, 16)) else {
            return;
        };
        let t = Ocb3Key::derive(&key);
        let mut o = [0u8; 16];
        for j in 1..16usize {
            o = xor(&o, &t.l[j.trailing_zeros() as usize]);
            assert_eq!(t.c[j], o, "C_{j}");
        }
        assert_eq!(t.c[16], t.c[15]);
        assert_eq!(t.c[0], [0; 16]);
        // C_j is the combination of L_b over the bits b of gray(j) = j ^ (j >> 1).
        for j in 1..16usize {
            let g = j ^ (j >> 1);
            let mut x = [0u8; 16];
            for b in 0..4 {
                if g >> b & 1 == 1 {
                    x = xor(&x, &t.l[b]);
                }
            }
            assert_eq!(t.c[j], x, "gray {j}");
        }
        assert_eq!(t.l_dollar, key.cmac_k1, "L_$ = 2·E(0) = CMAC K1");
    }

    /// The stretch against a bit-by-bit reading of RFC 7253 §4.2 for every bottom.
    #[test]
    fn stretch_matches_the_bitwise_definition() {
        let ktop: Block = bytes(7, 16).try_into().unwrap();
        let bit = |s: &[u8], i: usize| (s[i / 8] >> (7 - i % 8)) & 1;
        let mut st = ktop.to_vec();
        for i in 0..8 {
            st.push(ktop[i] ^ ktop[i + 1]);
        }
        for bottom in 0..64u32 {
            let got = stretch(&ktop, bottom);
            let mut want = [0u8; 16];
            for i in 0..128 {
                want[i / 8] |= bit(&st, i + bottom as usize) << (7 - i % 8);
            }
            assert_eq!(got, want, "bottom {bottom}");
        }
    }

    #[test]
    fn format_nonce_layout() {
        // RFC 7253 Appendix A sample: TAGLEN 128, N = BBAA99887766554433221100.
        let n = [
            0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00,
        ];
        let b = format_nonce(&n, 16).to_be_bytes();
        assert_eq!(b[..4], [0, 0, 0, 1]);
        assert_eq!(b[4..], n);
        // TAGLEN 96: 96 = 0b1100000 in the top 7 bits.
        let b = format_nonce(&n, 12).to_be_bytes();
        assert_eq!(b[0], 0b1100_0000);
        let b = format_nonce(&[0x42], 8).to_be_bytes();
        assert_eq!(b[0], 64 << 1);
        assert_eq!(b[14..], [0x01, 0x42]);
        let b = format_nonce(&[0xff; 15], 16).to_be_bytes();
        assert_eq!(b[0], 0x01);
        assert_eq!(b[1..], [0xff; 15]);
    }

    /// The wide kernels of every backend against the block-by-block reference, every mode,
    /// every key size, block counts crossing every group and tail size (and a block number
    /// with a large ntz), out of place and in place, from a random offset.
    #[test]
    fn kernels_match_the_reference() {
        for k in kernels() {
            for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
                let key = AesKey::new(&bytes(ki as u64 + 3, klen)).unwrap();
                let t = key.derived::<Ocb3Key>();
                let o0: Block = bytes(99 + ki as u64, 16).try_into().unwrap();
                for blocks in (0..=50).chain([63, 64, 65, 127, 128, 129, 1024, 1031]) {
                    let input = bytes(blocks as u64 * 7 + ki as u64, 16 * blocks + 5);
                    for mode in [ENC, DEC, HASH] {
                        let (want, want_off, want_acc) =
                            reference(mode, &key, &input[..16 * blocks], &o0);
                        let what = format!("{k:?} key {klen} blocks {blocks} mode {mode}");
                        // Without and with a partial block after the whole ones, which
                        // must come back as E(x ^ Offset_*) whatever the mode, and change
                        // nothing else but the final offset.
                        for with_last in [false, true] {
                            let what = format!("{what}, last {with_last}");
                            let x0: Block = bytes(blocks as u64 + 500, 16).try_into().unwrap();
                            let mut x = x0;
                            let last = with_last.then_some(&mut x);
                            let mut out = vec![0xEEu8; input.len() + 3];
                            let (mut off, mut acc) = (o0, [0u8; 16]);
                            let io = if mode == HASH {
                                IoPtrs::read_only(&input)
                            } else {
                                IoPtrs::copy(&input, &mut out)
                            };
                            match mode {
                                ENC => {
                                    bulk::<ENC>(k, t, &key, &io, blocks, last, &mut off, &mut acc)
                                }
                                DEC => {
                                    bulk::<DEC>(k, t, &key, &io, blocks, last, &mut off, &mut acc)
                                }
                                _ => {
                                    bulk::<HASH>(k, t, &key, &io, blocks, last, &mut off, &mut acc)
                                }
                            }
                            if with_last {
                                let star = xor(&want_off, &t.l_star);
                                assert_eq!(off, star, "{what}: Offset_*");
                                let mut e = xor(&x0, &star);
                                key.encrypt_block(&mut e);
                                assert_eq!(x, e, "{what}: last block");
                            } else {
                                assert_eq!(off, want_off, "{what}: offset");
                                assert_eq!(x, x0, "{what}: last block untouched");
                            }
                            assert_eq!(acc, want_acc, "{what}: sum");
                            if mode == HASH {
                                assert!(out.iter().all(|&b| b == 0xEE), "{what}");
                            } else {
                                assert_eq!(&out[..16 * blocks], &want[..], "{what}");
                                assert!(out[16 * blocks..].iter().all(|&b| b == 0xEE), "{what}");
                            }
                        }
                        if mode == HASH {
                            continue;
                        }
                        let mut buf = input.clone();
                        let len = buf.len();
                        let (mut off, mut acc) = (o0, [0u8; 16]);
                        let io = IoPtrs::in_place(&mut buf, len);
                        match mode {
                            ENC => bulk::<ENC>(k, t, &key, &io, blocks, None, &mut off, &mut acc),
                            _ => bulk::<DEC>(k, t, &key, &io, blocks, None, &mut off, &mut acc),
                        }
                        assert_eq!((off, acc), (want_off, want_acc), "{what} in place");
                        assert_eq!(&buf[..16 * blocks], &want[..], "{what} in place");
                        assert_eq!(&buf[16 * blocks..], &input[16 * blocks..], "{what}");
                    }
                }
            }
        }
    }

    /// The `ntz` helper at small and large block numbers (the kernels' group ends at block
    /// numbers with up to 10 trailing zeros are covered above, 1024 blocks).
    #[test]
    fn ntz_of_block_numbers() {
        assert_eq!(ntz(1), 0);
        assert_eq!(ntz(16), 4);
        assert_eq!(ntz(1 << 40), 40);
        assert_eq!(ntz(1usize << 63), 63);
    }
}
