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

use super::{aggregate, Aggregation, MulVariant, Powers};
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
pub(super) fn bswap(v: __m128i) -> __m128i {
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

/// `acc += x ⊗ k`, unreduced. `kk` is `k1 ^ k0` in the low qword (Karatsuba only).
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn mul_acc<const KARA: bool>(acc: &mut Wide, x: __m128i, k: __m128i, kk: __m128i) {
    acc.lo = xor(acc.lo, _mm_clmulepi64_si128::<0x00>(x, k));
    acc.hi = xor(acc.hi, _mm_clmulepi64_si128::<0x11>(x, k));
    if KARA {
        let xs = xor(x, _mm_shuffle_epi32::<0x4e>(x));
        acc.mid = xor(acc.mid, _mm_clmulepi64_si128::<0x00>(xs, kk));
    } else {
        let m = xor(
            _mm_clmulepi64_si128::<0x01>(x, k),
            _mm_clmulepi64_si128::<0x10>(x, k),
        );
        acc.mid = xor(acc.mid, m);
    }
}

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
fn gcm_impl<const KARA: bool>(pow: &Powers, out: &mut Block, ad: &[u8], ct: &[u8]) {
    let s = super::gcm_stream(
        _mm_setzero_si128(),
        ad,
        ct,
        |s, c| agg::<KARA, 8>(pow, s, c),
        |s, c| agg_n::<KARA>(pow, s, c),
    );
    store_block(out, s);
}

/// GCM's GHASH of `ad` and `ct` with the lengths block, in one pass, into `out`.
pub(super) fn gcm(
    _t: ClmulToken,
    v: MulVariant,
    pow: &Powers,
    out: &mut Block,
    ad: &[u8],
    ct: &[u8],
) {
    // SAFETY: the token proves PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_impl::<true>(pow, out, ad, ct),
            MulVariant::Schoolbook => gcm_impl::<false>(pow, out, ad, ct),
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

#[target_feature(enable = "pclmulqdq,sse2")]
fn powers_impl(k1: u128) -> [u128; 8] {
    let kv = load_u128(&k1);
    let zero = _mm_setzero_si128();
    let mut desc = [k1; 8];
    let mut k = kv;
    for slot in desc.iter_mut().rev().skip(1) {
        let mut w = Wide::zero();
        mul_acc::<false>(&mut w, k, kv, zero);
        k = finish::<false>(w);
        *slot = store_u128(k);
    }
    desc
}

/// `K_1..K_8` from `K_1` in `Powers::desc` order (`K_8` first).
pub(super) fn powers(_t: ClmulToken, k1: u128) -> [u128; 8] {
    // SAFETY: the token proves PCLMULQDQ and SSE2 are present.
    unsafe { powers_impl(k1) }
}
