//! GHASH with VPCLMULQDQ on ymm registers: two blocks per instruction.
//!
//! The 8-block aggregated step loads the blocks as four ymm pairs `[X0 | X1] … [X6 | X7]`
//! (low lane first), multiplies them lane-wise by `[K8 | K7] … [K2 | K1]` (one 32-byte load
//! each, `Powers::desc` is stored `K8` first for exactly this), sums the unreduced products,
//! folds the two lanes into one xmm `Wide` and reduces once, with the xmm code of
//! [`super::clmul`]. A leftover group of four blocks takes one 4-block ymm step with
//! `[K4 | K3] [K2 | K1]`; up to three single blocks go through the xmm kernel.
//!
//! Both multiplication variants exist here too (Karatsuba: 3 VPCLMULQDQ per pair plus a
//! shuffle for `x1 ^ x0`; schoolbook: 4), so the benchmark can compare them on ymm.
//!
//! This CPU family (AMD Zen 3) has VPCLMULQDQ on ymm but no AVX-512: there is no zmm path.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::clmul::{self, ClmulToken, Wide};
use super::{aggregate, Aggregation, MulVariant, Powers};
use crate::block::Block;

/// Proof that AVX2 and VPCLMULQDQ (and, through [`ClmulToken`], PCLMULQDQ, SSE2 and SSSE3)
/// exist on this CPU. Zero-sized; only [`VclmulToken::get`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VclmulToken(ClmulToken);

impl VclmulToken {
    /// Some token iff the CPU has AVX2, VPCLMULQDQ and everything [`ClmulToken`] needs.
    pub(crate) fn get() -> Option<VclmulToken> {
        let xmm = ClmulToken::get()?;
        let ok =
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("vpclmulqdq");
        ok.then_some(VclmulToken(xmm))
    }

    /// The ymm instructions imply the xmm ones.
    pub(crate) fn clmul(self) -> ClmulToken {
        self.0
    }
}

/// Unreduced ymm sums, two lanes of [`Wide`].
#[derive(Clone, Copy)]
struct Wide2 {
    lo: __m256i,
    mid: __m256i,
    hi: __m256i,
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

/// Two consecutive GCM blocks as field elements (byte-reversed per lane), `b[0]` low.
#[inline]
#[target_feature(enable = "avx2")]
fn load_pair(b: &[Block; 2]) -> __m256i {
    let rev = _mm256_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, //
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    );
    // SAFETY: `b` is a reference to 32 readable bytes; loadu has no alignment requirement.
    let v = unsafe { _mm256_loadu_si256(b.as_ptr().cast()) };
    _mm256_shuffle_epi8(v, rev)
}

/// Two consecutive key powers, `k[0]` in the low lane.
#[inline]
#[target_feature(enable = "avx2")]
fn load_keys(k: &[u128; 2]) -> __m256i {
    // SAFETY: `k` is a reference to 32 readable bytes; loadu has no alignment requirement.
    unsafe { _mm256_loadu_si256(k.as_ptr().cast()) }
}

/// `acc += x ⊗ k` lane-wise, unreduced (`kk`: Karatsuba middle keys).
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_acc2<const KARA: bool>(acc: &mut Wide2, x: __m256i, k: __m256i, kk: __m256i) {
    acc.lo = xor(acc.lo, _mm256_clmulepi64_epi128::<0x00>(x, k));
    acc.hi = xor(acc.hi, _mm256_clmulepi64_epi128::<0x11>(x, k));
    if KARA {
        let xs = xor(x, _mm256_shuffle_epi32::<0x4e>(x));
        acc.mid = xor(acc.mid, _mm256_clmulepi64_epi128::<0x00>(xs, kk));
    } else {
        let m = xor(
            _mm256_clmulepi64_epi128::<0x01>(x, k),
            _mm256_clmulepi64_epi128::<0x10>(x, k),
        );
        acc.mid = xor(acc.mid, m);
    }
}

/// Sum of the two lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn fold(v: __m256i) -> __m128i {
    _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
}

/// `N` blocks as `N / 2` pairs, one reduction, with key pairs `desc[8 - N..]` —
/// `(s ^ X_0)·H^N + … + X_{N-1}·H`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn agg2<const KARA: bool, const N: usize>(
    pow: &Powers,
    s: __m128i,
    blocks: &[Block; N],
) -> __m128i {
    const { assert!(N >= 2 && N <= 8 && N.is_multiple_of(2)) };
    let z = _mm256_setzero_si256();
    let mut w = Wide2 {
        lo: z,
        mid: z,
        hi: z,
    };
    let (pairs, _) = blocks.as_chunks::<2>();
    let (kp, _) = pow.desc[8 - N..].as_chunks::<2>();
    let (kkp, _) = pow.kk[8 - N..].as_chunks::<2>();
    for (i, (b, (k, kk))) in pairs.iter().zip(kp.iter().zip(kkp)).enumerate() {
        let mut x = load_pair(b);
        if i == 0 {
            x = xor(x, _mm256_set_m128i(_mm_setzero_si128(), s));
        }
        mul_acc2::<KARA>(&mut w, x, load_keys(k), load_keys(kk));
    }
    clmul::finish::<KARA>(Wide {
        lo: fold(w.lo),
        mid: fold(w.mid),
        hi: fold(w.hi),
    })
}

#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn update_impl<const KARA: bool>(
    pow: &Powers,
    state: &mut Block,
    blocks: &[Block],
    agg_by: Aggregation,
) {
    let s = aggregate(
        clmul::load_block(state),
        blocks,
        agg_by,
        |s, c| agg2::<KARA, 8>(pow, s, c),
        |s, c| agg2::<KARA, 4>(pow, s, c),
        |s, c| clmul::agg::<KARA, 1>(pow, s, c),
    );
    clmul::store_block(state, s);
}

#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn gcm_impl<const KARA: bool>(pow: &Powers, out: &mut Block, ad: &[u8], ct: &[u8]) {
    // Groups of 8 on ymm; the one final group of at most 8 blocks (the message's last whole
    // blocks, its padded tail and the lengths block) on xmm.
    let s = super::gcm_stream(
        _mm_setzero_si128(),
        ad,
        ct,
        |s, c| agg2::<KARA, 8>(pow, s, c),
        |s, c| clmul::agg_n::<KARA>(pow, s, c),
    );
    clmul::store_block(out, s);
}

/// GCM's GHASH of `ad` and `ct` with the lengths block, in one pass, into `out`.
pub(super) fn gcm(
    _t: VclmulToken,
    v: MulVariant,
    pow: &Powers,
    out: &mut Block,
    ad: &[u8],
    ct: &[u8],
) {
    // SAFETY: the token proves AVX2, VPCLMULQDQ, PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_impl::<true>(pow, out, ad, ct),
            MulVariant::Schoolbook => gcm_impl::<false>(pow, out, ad, ct),
        }
    }
}

/// GHASH over whole blocks, `agg_by` blocks per reduction, multiplication variant `v`.
pub(super) fn update(
    _t: VclmulToken,
    v: MulVariant,
    pow: &Powers,
    state: &mut Block,
    blocks: &[Block],
    agg_by: Aggregation,
) {
    // SAFETY: the token proves AVX2, VPCLMULQDQ, PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => update_impl::<true>(pow, state, blocks, agg_by),
            MulVariant::Schoolbook => update_impl::<false>(pow, state, blocks, agg_by),
        }
    }
}
