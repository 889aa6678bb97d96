//! GHASH with PCLMULQDQ on xmm registers, in the two multiplication variants of
//! papers/000 §6.3.
//!
//! * [`MulVariant::Karatsuba`], the "classical" method of Intel's white paper: three
//!   PCLMULQDQ per 128 × 128 product (`a0·b0`, `a1·b1`, `(a0^a1)·(b0^b1)`), and the reduction
//!   by shifts and XORs only.
//! * [`MulVariant::Schoolbook`], Gueron's "Haswell-optimized" method: four PCLMULQDQ per
//!   product (`a0·b0`, `a1·b1`, `a0·b1`, `a1·b0`: fewer XORs and shuffles, no dependency on
//!   the `(a0^a1)` pre-step), and the reduction by two more PCLMULQDQ with the constant
//!   `0xC2 << 56` (two folds of 64 bits).
//!
//! Both variants use the same key powers (see the `gf128` module docs): H is pre-multiplied
//! by the reflected `x` at key setup, so neither multiplication shifts its 255-bit product
//! left by one bit as the white paper does; the two reductions compute the same linear map
//! (`T · y^-128 mod P*`) and agree bit for bit, which the tests check.
//!
//! Aggregated reduction (Jankowski–Laurent): `N` products with `H^N..H^1` are summed
//! unreduced and reduced once, `N ∈ {1, 4, 8}`. For Karatsuba the middle terms of the keys,
//! `k1 ^ k0`, are precomputed (`Powers::kk`).
//!
//! Every function with `#[target_feature]` is private or takes a [`ClmulToken`]; the token
//! proves the features exist, so calling them is sound. The only other `unsafe` is pointer
//! loads and stores of references (always valid, no alignment requirement).

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{aggregate, Aggregation, GhashKey, MulVariant, Powers};
use crate::block::Block;

/// Proof that PCLMULQDQ, SSE2 and SSSE3 exist on this CPU. Zero-sized; only
/// [`ClmulToken::get`] makes one, after runtime detection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClmulToken(());

impl ClmulToken {
    /// Some token iff the CPU has PCLMULQDQ, SSE2 and SSSE3 (std caches CPUID).
    pub(crate) fn get() -> Option<ClmulToken> {
        let ok = std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse2")
            && std::is_x86_feature_detected!("ssse3");
        ok.then_some(ClmulToken(()))
    }
}

// ---------------------------------------------------------------------------------------
// loads, stores, byte order

/// Byte reversal: a GCM block as loaded (byte 0 in the low lane byte) becomes the integer
/// `u128::from_be_bytes(block)`, the bit-reflected field element the kernels work on.
#[inline]
#[target_feature(enable = "sse2,ssse3")]
pub(crate) fn bswap(v: __m128i) -> __m128i {
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    _mm_shuffle_epi8(v, rev)
}

/// A GCM block as a field element (see [`bswap`]).
#[inline]
#[target_feature(enable = "sse2,ssse3")]
pub(super) fn load_block(b: &Block) -> __m128i {
    // SAFETY: `b` is a reference to 16 readable bytes; loadu has no alignment requirement.
    bswap(unsafe { _mm_loadu_si128(b.as_ptr().cast()) })
}

/// Lane `i` (0..8) of a message's final group of `n = blocks.len()` blocks placed as the
/// last `n` of eight lanes after `pad = 8 - n` zero lanes, as the ymm and zmm final-group
/// kernels place them: block `i - pad` in memory order, or zero before the first. A 16-byte
/// load: the group is often in the caller's buffer, just written block by block, and a
/// wider load over several pending stores is not forwarded.
#[inline]
#[target_feature(enable = "sse2")]
pub(super) fn group_lane(blocks: &[Block], pad: usize, i: usize) -> __m128i {
    match i.checked_sub(pad) {
        // SAFETY: a reference to 16 readable bytes; loadu has no alignment requirement.
        Some(j) => unsafe { _mm_loadu_si128(blocks[j].as_ptr().cast()) },
        None => _mm_setzero_si128(),
    }
}

/// Stores a field element as a GCM block.
#[inline]
#[target_feature(enable = "sse2,ssse3")]
pub(super) fn store_block(b: &mut Block, v: __m128i) {
    // SAFETY: `b` is a reference to 16 writable bytes; storeu has no alignment requirement.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), bswap(v)) }
}

/// A key power (`u128`, little-endian in memory, so lane bit i = integer bit i).
#[inline]
#[target_feature(enable = "sse2")]
pub(super) fn load_u128(k: &u128) -> __m128i {
    // SAFETY: `k` is a reference to 16 readable bytes; loadu has no alignment requirement.
    unsafe { _mm_loadu_si128((k as *const u128).cast()) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn store_u128(v: __m128i) -> u128 {
    let mut out = 0u128;
    // SAFETY: `out` is 16 writable bytes; storeu has no alignment requirement.
    unsafe { _mm_storeu_si128((&mut out as *mut u128).cast(), v) };
    out
}

#[inline]
#[target_feature(enable = "sse2")]
fn xor(a: __m128i, b: __m128i) -> __m128i {
    _mm_xor_si128(a, b)
}

// ---------------------------------------------------------------------------------------
// multiplication and reduction

/// An unreduced sum of 256-bit products: `hi·y^128 + mid·y^64 + lo`, each 128 bits.
/// For Karatsuba, `mid` holds the sum of the `(a0^a1)·(b0^b1)` terms until [`finish`].
#[derive(Clone, Copy)]
pub(super) struct Wide {
    pub(super) lo: __m128i,
    pub(super) mid: __m128i,
    pub(super) hi: __m128i,
}

impl Wide {
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn zero() -> Wide {
        let z = _mm_setzero_si128();
        Wide {
            lo: z,
            mid: z,
            hi: z,
        }
    }
}

mul_acc_fn!(
    pub(super) fn mul_acc(Wide, __m128i),
    "pclmulqdq,sse2",
    _mm_clmulepi64_si128,
    _mm_xor_si128,
    _mm_shuffle_epi32
);

/// Folds the middle term and reduces with the variant's reduction.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn finish<const KARA: bool>(w: Wide) -> __m128i {
    let mid = if KARA {
        xor(w.mid, xor(w.lo, w.hi))
    } else {
        w.mid
    };
    let lo = xor(w.lo, _mm_slli_si128::<8>(mid));
    let hi = xor(w.hi, _mm_srli_si128::<8>(mid));
    if KARA {
        reduce_shift(lo, hi)
    } else {
        reduce_clmul(lo, hi)
    }
}

/// `(hi·y^128 + lo) · y^-128 mod P*` with shifts (Intel's classical reduction, in 64-bit
/// lanes). With `lo = [x1 : x0]`: the first fold adds `x0·(y^57+y^62+y^63)` at `y^64`
/// (giving `x1'`) and `x0` at `y^128`; the second adds `x1'·(y^57+y^62+y^63)` and `x1'` at
/// `y^128`, i.e. `hi ^= [x1' : x0] ^ ([x1' : x0] >> {1, 2, 7})` as a 128-bit shift.
#[inline]
#[target_feature(enable = "sse2")]
fn reduce_shift(lo: __m128i, hi: __m128i) -> __m128i {
    let d = xor(lo, _mm_slli_si128::<8>(times_c(lo)));
    let right = xor(
        xor(_mm_srli_epi64::<1>(d), _mm_srli_epi64::<2>(d)),
        _mm_srli_epi64::<7>(d),
    );
    let carry = _mm_srli_si128::<8>(times_c(d));
    xor(xor(hi, d), xor(right, carry))
}

/// Per 64-bit lane, the low half of `v·(y^57 + y^62 + y^63)`.
#[inline]
#[target_feature(enable = "sse2")]
fn times_c(v: __m128i) -> __m128i {
    xor(
        xor(_mm_slli_epi64::<63>(v), _mm_slli_epi64::<62>(v)),
        _mm_slli_epi64::<57>(v),
    )
}

/// The same map with two PCLMULQDQ by `c = 0xC2 << 56` (Gueron): `x0·c` is
/// `x0·(y^57+y^62+y^63)`; swapping the halves of `lo` puts `x1` where it is folded next and
/// `x0` where it joins `hi`.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
fn reduce_clmul(lo: __m128i, hi: __m128i) -> __m128i {
    let c = _mm_set_epi64x(0, 0xC200_0000_0000_0000u64 as i64);
    let t = _mm_clmulepi64_si128::<0x00>(lo, c);
    let v = xor(_mm_shuffle_epi32::<0x4e>(lo), t);
    let t = _mm_clmulepi64_si128::<0x00>(v, c);
    let v = xor(_mm_shuffle_epi32::<0x4e>(v), t);
    xor(hi, v)
}

/// `N` blocks, one reduction: `(s ^ X_0)·H^N + X_1·H^(N-1) + … + X_{N-1}·H`.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
pub(super) fn agg<const KARA: bool, const N: usize>(
    pow: &Powers,
    s: __m128i,
    blocks: &[Block; N],
) -> __m128i {
    const { assert!(N >= 1 && N <= 8) };
    agg_n::<KARA>(pow, s, blocks)
}

/// [`agg`] for `1..=8` blocks counted at run time.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
pub(super) fn agg_n<const KARA: bool>(pow: &Powers, s: __m128i, blocks: &[Block]) -> __m128i {
    let n = blocks.len();
    debug_assert!((1..=8).contains(&n));
    let mut w = Wide::zero();
    let keys = pow.desc[8 - n..].iter().zip(&pow.kk[8 - n..]);
    for (i, (b, (k, kk))) in blocks.iter().zip(keys).enumerate() {
        let mut x = load_block(b);
        if i == 0 {
            x = xor(x, s);
        }
        mul_acc::<KARA>(&mut w, x, load_u128(k), load_u128(kk));
    }
    finish::<KARA>(w)
}

#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
fn gcm_many_impl<'a, const KARA: bool>(
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    super::gcm_stream_many(
        _mm_setzero_si128(),
        keys.len().min(outs.len()),
        data,
        |i, s, c| agg::<KARA, 8>(&keys[i].pow, s, c),
        |i, s, c| agg_n::<KARA>(&keys[i].pow, s, c),
        |i, s| store_block(&mut outs[i], s),
    );
}

/// [`GhashKey::gcm_ghash_many`] on this backend (every key's, variant `v`).
pub(super) fn gcm_many<'a>(
    _t: ClmulToken,
    v: MulVariant,
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_many_impl::<true>(keys, data, outs),
            MulVariant::Schoolbook => gcm_many_impl::<false>(keys, data, outs),
        }
    }
}

#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
fn update_impl<const KARA: bool>(
    pow: &Powers,
    state: &mut Block,
    blocks: &[Block],
    agg_by: Aggregation,
) {
    let s = aggregate(
        load_block(state),
        blocks,
        agg_by,
        |s, c| agg::<KARA, 8>(pow, s, c),
        |s, c| agg::<KARA, 4>(pow, s, c),
        |s, c| agg::<KARA, 1>(pow, s, c),
    );
    store_block(state, s);
}

/// GHASH over whole blocks, `agg_by` blocks per reduction, multiplication variant `v`.
pub(super) fn update(
    _t: ClmulToken,
    v: MulVariant,
    pow: &Powers,
    state: &mut Block,
    blocks: &[Block],
    agg_by: Aggregation,
) {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => update_impl::<true>(pow, state, blocks, agg_by),
            MulVariant::Schoolbook => update_impl::<false>(pow, state, blocks, agg_by),
        }
    }
}

/// `out` in `Powers::desc` order from `K_m` and `K_1`: `out[last] = K_(m+1)`, then
/// `K_(m+2)`, ... towards `out[0]`.
#[target_feature(enable = "pclmulqdq,sse2")]
fn powers_impl(km: u128, k1: u128, out: &mut [u128]) {
    let kv = load_u128(&k1);
    let zero = _mm_setzero_si128();
    let mut k = load_u128(&km);
    for slot in out.iter_mut().rev() {
        let mut w = Wide::zero();
        mul_acc::<false>(&mut w, k, kv, zero);
        k = finish::<false>(w);
        *slot = store_u128(k);
    }
}

/// `K_1..K_8` from `K_1` in `Powers::desc` order (`K_8` first).
pub(super) fn powers(_t: ClmulToken, k1: u128) -> [u128; 8] {
    let mut desc = [k1; 8];
    // SAFETY: the token proves PCLMULQDQ and SSE2 are present.
    unsafe { powers_impl(k1, k1, &mut desc[..7]) };
    desc
}

/// `K_9..K_16` from `desc` (`K_8..K_1`), in the same order (`K_16` first).
pub(super) fn powers_hi(_t: ClmulToken, desc: &[u128; 8]) -> [u128; 8] {
    let mut hi = [0; 8];
    // SAFETY: the token proves PCLMULQDQ and SSE2 are present.
    unsafe { powers_impl(desc[0], desc[7], &mut hi) };
    hi
}

// ---------------------------------------------------------------------------------------
// Chains of products by H (POET v1's hashes)
//
// These work straight on the caller's memory through raw pointers, since their callers'
// input and output are either the same buffer (in place) or two distinct ones, which safe
// slices cannot express. Each keeps its running value in an xmm register for the whole loop:
// no per-block call, no kernel match, no block returned in two GPRs and reloaded as 16 bytes
// (the store-forwarding stall of `GhashKey::mul_h` in a loop).

/// `x · H` for `K_1 = k` (`kk` its Karatsuba middle operand), reduced.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(crate) fn mul1<const KARA: bool>(x: __m128i, k: __m128i, kk: __m128i) -> __m128i {
    let mut w = Wide::zero();
    mul_acc::<KARA>(&mut w, x, k, kk);
    finish::<KARA>(w)
}

/// `x · H^e` (`e` public): products by `K_8 = H^8`, then one by `K_(e mod 8)`, each
/// reduced; `x` and the result as GCM blocks. (`K_9..K_16` exist only for the zmm backend.)
pub(crate) fn mul_pow(_t: ClmulToken, pow: &Powers, x: &Block, e: usize) -> Block {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3.
    unsafe { mul_pow_impl(pow, x, e) }
}

#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
fn mul_pow_impl(pow: &Powers, x: &Block, e: usize) -> Block {
    // `K_j` and its Karatsuba middle, 1 <= j <= 8 (`desc` holds K_8..K_1).
    let k = |j: usize| (load_u128(&pow.desc[8 - j]), load_u128(&pow.kk[8 - j]));
    let mut v = load_block(x);
    let (k8, kk8) = k(8);
    let mut left = e;
    while left >= 8 {
        v = mul1::<false>(v, k8, kk8);
        left -= 8;
    }
    if left > 0 {
        let (kj, kkj) = k(left);
        v = mul1::<false>(v, kj, kkj);
    }
    let mut out = [0u8; 16];
    store_block(&mut out, v);
    out
}

/// A block at `p` (unaligned) as a field element.
///
/// # Safety
/// `p` must be readable for 16 bytes.
#[inline]
#[target_feature(enable = "sse2,ssse3")]
pub(super) unsafe fn load_at(p: *const u8) -> __m128i {
    // SAFETY: the caller guarantees 16 readable bytes; loadu has no alignment requirement.
    bswap(unsafe { _mm_loadu_si128(p.cast()) })
}

/// Stores a field element as a block at `p` (unaligned).
///
/// # Safety
/// `p` must be writable for 16 bytes.
#[inline]
#[target_feature(enable = "sse2,ssse3")]
pub(super) unsafe fn store_at(p: *mut u8, v: __m128i) {
    // SAFETY: the caller guarantees 16 writable bytes; storeu has no alignment requirement.
    unsafe { _mm_storeu_si128(p.cast(), bswap(v)) }
}

/// `K_1` and its Karatsuba middle operand.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn k1(pow: &Powers) -> (__m128i, __m128i) {
    (load_u128(&pow.desc[7]), load_u128(&pow.kk[7]))
}

/// The chain `x ← x·H ⊕ M_i` over `n` blocks, `M_i` read at `src + 16i`, each `x` written at
/// `dst + 16i`.
///
/// # Safety
/// `src` readable and `dst` writable for `16·n` bytes; the two are equal or do not overlap.
#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
unsafe fn chain_impl<const KARA: bool>(
    pow: &Powers,
    x: &mut Block,
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    let (k, kk) = k1(pow);
    let mut v = load_block(x);
    for i in 0..n {
        // SAFETY: block i lies in the caller's ranges; in place, block i is read before it
        // is written and never read again.
        unsafe {
            let m = load_at(src.add(16 * i));
            v = xor(mul1::<KARA>(v, k, kk), m);
            store_at(dst.add(16 * i), v);
        }
    }
    store_block(x, v);
}

/// The chain of [`chain_impl`], `x ← x·H ⊕ M_i`, with the multiplication variant `v`.
///
/// # Safety
/// `src` readable and `dst` writable for `16·n` bytes; the two are equal or do not overlap.
pub(super) unsafe fn chain(
    _t: ClmulToken,
    v: MulVariant,
    pow: &Powers,
    x: &mut Block,
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3; the ranges are the caller's.
    unsafe {
        match v {
            MulVariant::Karatsuba => chain_impl::<true>(pow, x, src, dst, n),
            MulVariant::Schoolbook => chain_impl::<false>(pow, x, src, dst, n),
        }
    }
}

/// `N` chains side by side, one block of each per iteration: lane `j` runs
/// `x_j ← x_j·H_j ⊕ M_{j,i}` with its own key, reading at `src[j] + 16i`, writing at
/// `dst[j] + 16i`. The `N` multiply-reduce sequences are independent, so the multiplier
/// works on all of them at once instead of waiting out one product's latency per block.
///
/// # Safety
/// For every lane, `src[j]` readable and `dst[j]` writable for `16·n` bytes, equal or not
/// overlapping; no lane's output overlaps another lane's input or output.
#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
unsafe fn lanes_impl<const KARA: bool, const N: usize>(
    pows: [&Powers; N],
    xs: [&mut Block; N],
    src: [*const u8; N],
    dst: [*mut u8; N],
    n: usize,
) {
    let mut v: [__m128i; N] = core::array::from_fn(|j| load_block(xs[j]));
    let keys: [(__m128i, __m128i); N] = core::array::from_fn(|j| k1(pows[j]));
    for i in 0..n {
        for j in 0..N {
            // SAFETY: block i of lane j lies in the caller's ranges (see `chain_impl`).
            unsafe {
                let m = load_at(src[j].add(16 * i));
                v[j] = xor(mul1::<KARA>(v[j], keys[j].0, keys[j].1), m);
                store_at(dst[j].add(16 * i), v[j]);
            }
        }
    }
    for (x, v) in xs.into_iter().zip(v) {
        store_block(x, v);
    }
}

/// Most chains [`lanes`] runs in one loop (the kernel exists for `1..=8`; see
/// `super::CHAIN_LANES` for how many the callers use).
pub(super) const MAX_LANES: usize = 8;

/// [`lanes_impl`] for `1..=MAX_LANES` lanes counted at run time.
///
/// # Safety
/// As [`lanes_impl`], for every lane.
pub(super) unsafe fn lanes(
    _t: ClmulToken,
    v: MulVariant,
    pows: &[&Powers],
    xs: &mut [Block],
    src: &[*const u8],
    dst: &[*mut u8],
    n: usize,
) {
    assert!(pows.len() == xs.len() && src.len() == xs.len() && dst.len() == xs.len());
    /// Instantiates the kernel for `N` lanes and the variant.
    ///
    /// # Safety
    /// As [`lanes_impl`]; the slices hold exactly `N` lanes.
    #[inline(always)]
    unsafe fn go<const N: usize>(
        kara: bool,
        pows: &[&Powers],
        xs: &mut [Block],
        src: &[*const u8],
        dst: &[*mut u8],
        n: usize,
    ) {
        let pows: [&Powers; N] = core::array::from_fn(|j| pows[j]);
        let src: [*const u8; N] = core::array::from_fn(|j| src[j]);
        let dst: [*mut u8; N] = core::array::from_fn(|j| dst[j]);
        let Ok(xs) = <&mut [Block; N]>::try_from(xs) else {
            unreachable!("N lanes")
        };
        let xs: [&mut Block; N] = xs.each_mut();
        // SAFETY: the token (checked by the caller of `go`) proves the features; the ranges
        // are the caller's.
        unsafe {
            if kara {
                lanes_impl::<true, N>(pows, xs, src, dst, n);
            } else {
                lanes_impl::<false, N>(pows, xs, src, dst, n);
            }
        }
    }
    let kara = v == MulVariant::Karatsuba;
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3; the ranges are the caller's.
    unsafe {
        match xs.len() {
            0 => {}
            1 => go::<1>(kara, pows, xs, src, dst, n),
            2 => go::<2>(kara, pows, xs, src, dst, n),
            3 => go::<3>(kara, pows, xs, src, dst, n),
            4 => go::<4>(kara, pows, xs, src, dst, n),
            5 => go::<5>(kara, pows, xs, src, dst, n),
            6 => go::<6>(kara, pows, xs, src, dst, n),
            7 => go::<7>(kara, pows, xs, src, dst, n),
            8 => go::<8>(kara, pows, xs, src, dst, n),
            _ => unreachable!("at most MAX_LANES lanes"),
        }
    }
}

/// In place, `B_i ← B_i ⊕ B_{i-1}·H` with the old `B_{i-1}`, `B_{-1} = iv`: independent
/// products, so the loop is bound by the multiplier's throughput, not its latency.
#[target_feature(enable = "pclmulqdq,sse2,ssse3")]
fn each_impl<const KARA: bool>(pow: &Powers, iv: &Block, blocks: &mut [Block]) {
    let (k, kk) = k1(pow);
    let mut prev = load_block(iv);
    // Four blocks per iteration: four products issued back to back.
    let (quads, rest) = blocks.as_chunks_mut::<4>();
    for q in quads {
        let c: [__m128i; 4] = core::array::from_fn(|i| load_block(&q[i]));
        let p = [prev, c[0], c[1], c[2]];
        for i in 0..4 {
            store_block(&mut q[i], xor(c[i], mul1::<KARA>(p[i], k, kk)));
        }
        prev = c[3];
    }
    for b in rest {
        let c = load_block(b);
        store_block(b, xor(c, mul1::<KARA>(prev, k, kk)));
        prev = c;
    }
}

/// [`each_impl`] with the multiplication variant `v`.
pub(super) fn each(_t: ClmulToken, v: MulVariant, pow: &Powers, iv: &Block, blocks: &mut [Block]) {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => each_impl::<true>(pow, iv, blocks),
            MulVariant::Schoolbook => each_impl::<false>(pow, iv, blocks),
        }
    }
}
