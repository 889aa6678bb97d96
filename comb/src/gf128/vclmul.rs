//! GHASH with VPCLMULQDQ on ymm registers: two blocks per instruction.
//!
//! The 8-block aggregated step loads the blocks as four ymm pairs `[X0 | X1] … [X6 | X7]`
//! (low lane first), multiplies them lane-wise by `[K8 | K7] … [K2 | K1]` (one 32-byte load
//! each, `Powers::desc` is stored `K8` first for exactly this), sums the unreduced products,
//! folds the two lanes into one xmm `Wide` and reduces once, with the xmm code of
//! [`super::clmul`]. A leftover group of four blocks takes one 4-block ymm step with
//! `[K4 | K3] [K2 | K1]`; up to three single blocks go through the xmm kernel. A GCM
//! message's final group (1 to 8 blocks, the lengths block last) is hashed on ymm too, its
//! blocks placed to meet whole pairs of powers ([`agg2_last`]), and where sixteen of its
//! blocks lie whole in the input they share one reduction, with `H^9..H^16` ([`agg2_16`]).
//! GCM's stitched encryption kernel hashes through [`GcmStitch`] on these products.
//!
//! Both multiplication variants exist here too (Karatsuba: 3 VPCLMULQDQ per pair plus a
//! shuffle for `x1 ^ x0`; schoolbook: 4), so the benchmark can compare them on ymm.
//!
//! Where the CPU has AVX-512, GCM's stream runs on zmm instead ([`super::vclmul512`]); every
//! other use of such a key (block-wise updates, the chain kernels) stays here.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::clmul::{self, ClmulToken, Wide};
use super::{aggregate, Aggregation, GhashKey, MulVariant, Powers};
use crate::block::{Block, BLOCK};

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

impl Wide2 {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn zero() -> Wide2 {
        let z = _mm256_setzero_si256();
        Wide2 {
            lo: z,
            mid: z,
            hi: z,
        }
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

/// Two GCM blocks in memory order as field elements: each lane byte-reversed.
#[inline]
#[target_feature(enable = "avx2")]
fn to_field2(v: __m256i) -> __m256i {
    let rev = _mm256_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, //
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    );
    _mm256_shuffle_epi8(v, rev)
}

/// Two consecutive GCM blocks as field elements, `b[0]` low.
#[inline]
#[target_feature(enable = "avx2")]
fn load_pair(b: &[Block; 2]) -> __m256i {
    // SAFETY: `b` is a reference to 32 readable bytes; loadu has no alignment requirement.
    to_field2(unsafe { _mm256_loadu_si256(b.as_ptr().cast()) })
}

/// Two consecutive key powers, `k[0]` in the low lane.
#[inline]
#[target_feature(enable = "avx2")]
fn load_keys(k: &[u128; 2]) -> __m256i {
    // SAFETY: `k` is a reference to 32 readable bytes; loadu has no alignment requirement.
    unsafe { _mm256_loadu_si256(k.as_ptr().cast()) }
}

mul_acc_fn!(
    fn mul_acc2(Wide2, __m256i),
    "avx2,vpclmulqdq",
    _mm256_clmulepi64_epi128,
    _mm256_xor_si256,
    _mm256_shuffle_epi32
);

/// Sum of the two lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn fold(v: __m256i) -> __m128i {
    _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
}

/// Accumulates `N` blocks as `N / 2` pairs under key pairs `desc`, `kk` (`N` powers each,
/// highest first), unreduced: `(s ^ X_0)·K_0 + … + X_{N-1}·K_{N-1}`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_pairs<const KARA: bool, const N: usize>(
    w: &mut Wide2,
    s: __m128i,
    blocks: &[Block; N],
    desc: &[u128],
    kk: &[u128],
) {
    let (pairs, _) = blocks.as_chunks::<2>();
    let (kp, _) = desc.as_chunks::<2>();
    let (kkp, _) = kk.as_chunks::<2>();
    for (i, (b, (k, kk))) in pairs.iter().zip(kp.iter().zip(kkp)).enumerate() {
        let mut x = load_pair(b);
        if i == 0 {
            x = xor(x, _mm256_set_m128i(_mm_setzero_si128(), s));
        }
        mul_acc2::<KARA>(w, x, load_keys(k), load_keys(kk));
    }
}

/// The two lanes of `w` folded and reduced.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn reduce2<const KARA: bool>(w: Wide2) -> __m128i {
    clmul::finish::<KARA>(Wide {
        lo: fold(w.lo),
        mid: fold(w.mid),
        hi: fold(w.hi),
    })
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
    let mut w = Wide2::zero();
    mul_pairs::<KARA, N>(&mut w, s, blocks, &pow.desc[8 - N..], &pow.kk[8 - N..]);
    reduce2::<KARA>(w)
}

/// Sixteen blocks, `a` then `b`, one reduction: `(s ^ A_0)·H^16 + … + A_7·H^9 + B_0·H^8 +
/// … + B_7·H`, for GCM's stream where sixteen blocks lie whole in the input. Half the folds
/// and reductions of two [`agg2`] steps, and half the dependent chain per block (a group's
/// reduction feeds the next group's first product). On Zen 3 that chain, not the multiplier,
/// bounded the eight-block steps: 16 KiB messages hashed at about 46 core cycles per group
/// of eight against 24 for its twelve VPCLMULQDQ, and four streams side by side instead of
/// two changed nothing (the reduction chains did not overlap).
///
/// Measured on the Zen 3 VM (`comb bench`, comb engine, alternated builds, pinned, TSC
/// cycles/byte), GCM encryption: 16 KiB 0.437-0.448 -> 0.389-0.393, 1440 bytes 0.537-0.549
/// -> 0.483-0.502, the realistic mix 0.796-0.817 -> 0.765-0.781 (decryption alike); 64
/// bytes (which never take this step) unchanged. Not inlined: inlined into the stream loop,
/// it made 64-byte GCM encryption 8-10% slower (3.09-3.15 -> 3.33-3.42), the CTR kernel
/// called from the same loop losing time, a code-size effect.
#[inline(never)]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn agg2_16<const KARA: bool>(pow: &Powers, s: __m128i, a: &[Block; 8], b: &[Block; 8]) -> __m128i {
    let mut w = Wide2::zero();
    mul_pairs::<KARA, 8>(&mut w, s, a, &pow.desc_hi, &pow.kk_hi);
    mul_pairs::<KARA, 8>(&mut w, _mm_setzero_si128(), b, &pow.desc, &pow.kk);
    reduce2::<KARA>(w)
}

/// A message's final group of `n = 1..=8` blocks (the lengths block last), one reduction:
/// `(s ^ X_0)·H^n + X_1·H^(n-1) + … + X_(n-1)·H`. The blocks sit as the last `n` of eight
/// lanes after `8 - n` zero lanes (which add nothing), so that each pair meets a whole pair
/// of powers (`[K8 | K7] … [K2 | K1]`): half of [`clmul::agg_n`]'s VPCLMULQDQ, which on
/// Zen 3 issue one per two cycles whether xmm or ymm (measured: 2.0 core cycles each, both
/// widths). The lanes come from [`clmul::group_lane`]'s 16-byte loads.
///
/// Measured on the Zen 3 VM against `agg_n` (`comb bench`, comb engine, alternated builds,
/// TSC cycles/byte): GCM decryption of the realistic mix 0.737-0.748 -> 0.712-0.736, of
/// 48-byte messages 3.82-4.10 -> 3.63-3.69; encryption within 1%. Unlike zmm's
/// [`super::vclmul512`] there is no size below which the xmm kernel won: with it for
/// final groups under five blocks, 48-byte messages (four) ran at 3.77-3.84.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn agg2_last<const KARA: bool>(pow: &Powers, s: __m128i, blocks: &[Block]) -> __m128i {
    let n = blocks.len();
    debug_assert!((1..=8).contains(&n));
    let pad = 8 - n.min(8);
    let (kp, _) = pow.desc.as_chunks::<2>();
    let (kkp, _) = pow.kk.as_chunks::<2>();
    let mut w = Wide2::zero();
    // Pairs wholly in the zero lanes contribute nothing: start at the first block's.
    for q in pad / 2..4 {
        let lane = |l: usize| clmul::group_lane(blocks, pad, 2 * q + l);
        let mut x = to_field2(_mm256_inserti128_si256::<1>(
            _mm256_castsi128_si256(lane(0)),
            lane(1),
        ));
        if q == pad / 2 {
            // `s` joins the first block, in lane `pad % 2`.
            let first = if pad.is_multiple_of(2) {
                _mm256_set_m128i(_mm_setzero_si128(), s)
            } else {
                _mm256_set_m128i(s, _mm_setzero_si128())
            };
            x = xor(x, first);
        }
        mul_acc2::<KARA>(&mut w, x, load_keys(&kp[q]), load_keys(&kkp[q]));
    }
    reduce2::<KARA>(w)
}

gcm_stitch! {
    /// GCM's GHASH of one message's ciphertext as a stitched GCM encryption kernel of
    /// [`crate::aes`] (CTR on ymm VAES) writes it: [`super::vclmul512::GcmStitch`] on ymm, the
    /// sixteen-block groups through [`agg2_16`].
    VclmulToken,
    "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3",
    agg8: |pow: &Powers, s, g: &[Block; 8]| agg2::<KARA, 8>(pow, s, g),
    agg16: |pow: &Powers, s, a: &[Block; 8], b: &[Block; 8]| agg2_16::<KARA>(pow, s, a, b),
    agg_n: |pow: &Powers, s, g: &[Block]| agg2_last::<KARA>(pow, s, g),
}

impl<'k, const KARA: bool> GcmStitch<'k, KARA> {
    /// The hash of a message with associated data `ad`, under `key`'s powers: `A` (padded)
    /// hashed first by the block-wise update.
    #[inline]
    #[target_feature(enable = "sse2,ssse3")]
    pub(crate) fn after_ad(key: super::WideGhash<'k, VclmulToken>, ad: &[u8]) -> Self {
        let v = if KARA {
            MulVariant::Karatsuba
        } else {
            MulVariant::Schoolbook
        };
        let mut s = [0u8; BLOCK];
        super::update_padded(ad, Aggregation::Eight, |blocks, agg| {
            update(key.token, v, key.pow, &mut s, blocks, agg)
        });
        let state = super::StitchState::new(clmul::load_block(&s));
        crate::block::wipe(&mut s);
        GcmStitch {
            pow: key.pow,
            state,
        }
    }
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
fn gcm_many_impl<'a, const KARA: bool>(
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    super::gcm_stream_wide_many::<_, true>(
        _mm_setzero_si128(),
        keys.len().min(outs.len()),
        data,
        |i, s, c| agg2::<KARA, 8>(&keys[i].pow, s, c),
        |i, s, a, b| agg2_16::<KARA>(&keys[i].pow, s, a, b),
        |i, s, c| agg2_last::<KARA>(&keys[i].pow, s, c),
        |i, s| clmul::store_block(&mut outs[i], s),
    );
}

/// [`GhashKey::gcm_ghash_many`] on this backend (every key's, variant `v`).
pub(super) fn gcm_many<'a>(
    _t: VclmulToken,
    v: MulVariant,
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    // SAFETY: the token proves AVX2, VPCLMULQDQ, PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_many_impl::<true>(keys, data, outs),
            MulVariant::Schoolbook => gcm_many_impl::<false>(keys, data, outs),
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

// ---------------------------------------------------------------------------------------
// Chains of products by H, two per ymm register (POET v1's hashes)
//
// A single dependent chain gains nothing from ymm (it waits on one product's latency); these
// are for the throughput-bound patterns, where one VPCLMULQDQ doing two products halves the
// multiplier's work per block: independent products (`each`) and several chains side by
// side (`lanes`, two chains per register).

/// Lane-wise `(hi·y^128 + lo)·y^-128 mod P*` by shifts: [`clmul`]'s `reduce_shift` in each
/// 128-bit lane (every shift used works per lane or per 64-bit element).
#[inline]
#[target_feature(enable = "avx2")]
fn reduce_shift2(lo: __m256i, hi: __m256i) -> __m256i {
    let times_c = |v: __m256i| {
        xor(
            xor(_mm256_slli_epi64::<63>(v), _mm256_slli_epi64::<62>(v)),
            _mm256_slli_epi64::<57>(v),
        )
    };
    let d = xor(lo, _mm256_slli_si256::<8>(times_c(lo)));
    let right = xor(
        xor(_mm256_srli_epi64::<1>(d), _mm256_srli_epi64::<2>(d)),
        _mm256_srli_epi64::<7>(d),
    );
    let carry = _mm256_srli_si256::<8>(times_c(d));
    xor(xor(hi, d), xor(right, carry))
}

/// Lane-wise Gueron reduction (two VPCLMULQDQ by `0xC2 << 56`), as [`clmul`]'s.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn reduce_clmul2(lo: __m256i, hi: __m256i) -> __m256i {
    let c = 0xC200_0000_0000_0000u64 as i64;
    let c = _mm256_set_epi64x(0, c, 0, c);
    let t = _mm256_clmulepi64_epi128::<0x00>(lo, c);
    let v = xor(_mm256_shuffle_epi32::<0x4e>(lo), t);
    let t = _mm256_clmulepi64_epi128::<0x00>(v, c);
    let v = xor(_mm256_shuffle_epi32::<0x4e>(v), t);
    xor(hi, v)
}

/// Two products `[x0·H0 | x1·H1]`, reduced, for keys `k = [K0 | K1]`, `kk` their Karatsuba
/// middle operands.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
pub(crate) fn mul2<const KARA: bool>(x: __m256i, k: __m256i, kk: __m256i) -> __m256i {
    let z = _mm256_setzero_si256();
    let mut w = Wide2 {
        lo: z,
        mid: z,
        hi: z,
    };
    mul_acc2::<KARA>(&mut w, x, k, kk);
    let mid = if KARA {
        xor(w.mid, xor(w.lo, w.hi))
    } else {
        w.mid
    };
    let lo = xor(w.lo, _mm256_slli_si256::<8>(mid));
    let hi = xor(w.hi, _mm256_srli_si256::<8>(mid));
    if KARA {
        reduce_shift2(lo, hi)
    } else {
        reduce_clmul2(lo, hi)
    }
}

/// Per-lane byte reversal (a GCM block to a field element and back).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn bswap2(v: __m256i) -> __m256i {
    let rev = _mm256_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, //
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    );
    _mm256_shuffle_epi8(v, rev)
}

/// Stores two field elements as two consecutive GCM blocks.
#[inline]
#[target_feature(enable = "avx2")]
fn store_pair(b: &mut [Block; 2], v: __m256i) {
    // SAFETY: `b` is a reference to 32 writable bytes; storeu has no alignment requirement.
    unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), bswap2(v)) }
}

/// `[K_1 | K_1]` and its Karatsuba middle operand, both lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn k1_both(pow: &Powers) -> (__m256i, __m256i) {
    let (k, kk) = clmul::k1(pow);
    (
        _mm256_broadcastsi128_si256(k),
        _mm256_broadcastsi128_si256(kk),
    )
}

/// In place, `B_i ← B_i ⊕ B_{i-1}·H` with the old `B_{i-1}`, `B_{-1} = iv`: four blocks per
/// iteration as two ymm pairs, two products per instruction; the last 0..=3 blocks on xmm.
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
fn each_impl<const KARA: bool>(pow: &Powers, iv: &Block, blocks: &mut [Block]) {
    let (k, kk) = k1_both(pow);
    let mut prev = clmul::load_block(iv);
    let (quads, rest) = blocks.as_chunks_mut::<4>();
    for q in quads.iter_mut() {
        let (pairs, _) = q.as_chunks_mut::<2>();
        let c0 = load_pair(&pairs[0]);
        let c1 = load_pair(&pairs[1]);
        // The multiplicands: [prev | B0] and [B1 | B2].
        let p0 =
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(prev), _mm256_castsi256_si128(c0));
        let p1 = _mm256_permute2x128_si256::<0x21>(c0, c1);
        prev = _mm256_extracti128_si256::<1>(c1);
        store_pair(&mut pairs[0], xor(c0, mul2::<KARA>(p0, k, kk)));
        store_pair(&mut pairs[1], xor(c1, mul2::<KARA>(p1, k, kk)));
    }
    let (k, kk) = clmul::k1(pow);
    for b in rest {
        let c = clmul::load_block(b);
        clmul::store_block(b, _mm_xor_si128(c, clmul::mul1::<KARA>(prev, k, kk)));
        prev = c;
    }
}

/// [`each_impl`] with the multiplication variant `v`.
pub(super) fn each(_t: VclmulToken, v: MulVariant, pow: &Powers, iv: &Block, blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2, VPCLMULQDQ, PCLMULQDQ, SSE2 and SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => each_impl::<true>(pow, iv, blocks),
            MulVariant::Schoolbook => each_impl::<false>(pow, iv, blocks),
        }
    }
}

/// `2·PAIRS + ODD` chains, two per ymm register (and, if `ODD`, the last one on xmm in the
/// same loop), one block of each per iteration: lane `j` runs `x_j ← x_j·H_j ⊕ M_{j,i}`,
/// reading at `src[j] + 16i`, writing at `dst[j] + 16i`.
///
/// # Safety
/// As `clmul::lanes_impl`: for every lane, `src[j]` readable and `dst[j]` writable for `16·n`
/// bytes, equal or not overlapping; no lane's output overlaps another lane's data.
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse2,ssse3")]
unsafe fn lanes_impl<const KARA: bool, const PAIRS: usize, const ODD: bool>(
    pows: &[&Powers],
    xs: &mut [Block],
    src: &[*const u8],
    dst: &[*mut u8],
    n: usize,
) {
    let lanes = 2 * PAIRS + usize::from(ODD);
    assert!(pows.len() == lanes && xs.len() == lanes);
    assert!(src.len() == lanes && dst.len() == lanes);
    let last = lanes - 1;
    let join = |a: __m128i, b: __m128i| _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b);
    let mut v: [__m256i; PAIRS] = core::array::from_fn(|p| {
        join(
            clmul::load_block(&xs[2 * p]),
            clmul::load_block(&xs[2 * p + 1]),
        )
    });
    let keys: [(__m256i, __m256i); PAIRS] = core::array::from_fn(|p| {
        let (k0, kk0) = clmul::k1(pows[2 * p]);
        let (k1, kk1) = clmul::k1(pows[2 * p + 1]);
        (join(k0, k1), join(kk0, kk1))
    });
    let s: [[*const u8; 2]; PAIRS] = core::array::from_fn(|p| [src[2 * p], src[2 * p + 1]]);
    let d: [[*mut u8; 2]; PAIRS] = core::array::from_fn(|p| [dst[2 * p], dst[2 * p + 1]]);
    // The odd lane (unused unless `ODD`).
    let mut vo = clmul::load_block(&xs[last]);
    let (ko, kko) = clmul::k1(pows[last]);
    let (so, dso) = (src[last], dst[last]);
    for i in 0..n {
        for p in 0..PAIRS {
            // SAFETY: block i of both lanes lies in the caller's ranges; in place, it is read
            // before it is written and never read again.
            unsafe {
                let raw = join(
                    _mm_loadu_si128(s[p][0].add(16 * i).cast()),
                    _mm_loadu_si128(s[p][1].add(16 * i).cast()),
                );
                v[p] = xor(mul2::<KARA>(v[p], keys[p].0, keys[p].1), bswap2(raw));
                let out = bswap2(v[p]);
                _mm_storeu_si128(d[p][0].add(16 * i).cast(), _mm256_castsi256_si128(out));
                _mm_storeu_si128(
                    d[p][1].add(16 * i).cast(),
                    _mm256_extracti128_si256::<1>(out),
                );
            }
        }
        if ODD {
            // SAFETY: as above, for the odd lane.
            unsafe {
                let m = clmul::load_at(so.add(16 * i));
                vo = _mm_xor_si128(clmul::mul1::<KARA>(vo, ko, kko), m);
                clmul::store_at(dso.add(16 * i), vo);
            }
        }
    }
    for (p, v) in v.iter().enumerate() {
        clmul::store_block(&mut xs[2 * p], _mm256_castsi256_si128(*v));
        clmul::store_block(&mut xs[2 * p + 1], _mm256_extracti128_si256::<1>(*v));
    }
    if ODD {
        clmul::store_block(&mut xs[last], vo);
    }
}

/// Most chains [`lanes`] runs in one loop (four ymm registers of two).
pub(super) const MAX_LANES: usize = 8;

/// `1..=MAX_LANES` chains side by side ([`lanes_impl`]), counted at run time.
///
/// # Safety
/// As [`lanes_impl`], for every lane.
pub(super) unsafe fn lanes(
    _t: VclmulToken,
    v: MulVariant,
    pows: &[&Powers],
    xs: &mut [Block],
    src: &[*const u8],
    dst: &[*mut u8],
    n: usize,
) {
    let kara = v == MulVariant::Karatsuba;
    // SAFETY: the token proves the features; the ranges are the caller's.
    unsafe {
        macro_rules! go {
            ($p:literal, $odd:literal) => {
                if kara {
                    lanes_impl::<true, $p, $odd>(pows, xs, src, dst, n)
                } else {
                    lanes_impl::<false, $p, $odd>(pows, xs, src, dst, n)
                }
            };
        }
        match xs.len() {
            0 => {}
            1 => go!(0, true),
            2 => go!(1, false),
            3 => go!(1, true),
            4 => go!(2, false),
            5 => go!(2, true),
            6 => go!(3, false),
            7 => go!(3, true),
            8 => go!(4, false),
            _ => unreachable!("at most MAX_LANES lanes"),
        }
    }
}
