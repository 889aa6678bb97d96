//! GCM's GHASH with VPCLMULQDQ on zmm registers: four blocks per instruction.
//!
//! The 8-block aggregated step is [`super::vclmul`]'s on registers twice as wide: the blocks
//! load as two zmm quadruples `[X0 | X1 | X2 | X3]`, `[X4 | … | X7]` (low lane first), are
//! multiplied lane-wise by `[K8 | K7 | K6 | K5]` and `[K4 | … | K1]` (one 64-byte load each:
//! `Powers::desc` is stored `K8` first), the unreduced products summed, the four lanes folded
//! into one xmm `Wide` and reduced once with the xmm code of [`super::clmul`]. The final group
//! of a message (at most eight blocks, the lengths block last) takes the same zmm step from
//! six blocks up ([`agg_last`]), else the xmm kernel.
//!
//! Where sixteen blocks lie whole in the input, they go as one step of four quadruples under
//! `K16..K9` (`Powers::desc_hi`) and `K8..K1`, with one fold and one reduction: a message's
//! chain then waits on half as many reductions. GHASH alone, 64 messages of 1456 bytes, two
//! side by side (TSC cycles/byte, fastest of 31 samples, Zen 4 VM): 0.205 with eight-block
//! steps, 0.171 with sixteen; one message at a time 0.271 and 0.189.
//!
//! Why a zmm path: measured on an AMD Zen 4 VM (a dependent-free loop of VPCLMULQDQ), one
//! instruction issues every ~2 core cycles whatever its width, so a zmm instruction does
//! four products in the time an xmm one does one and a ymm one two; GHASH on ymm was bound
//! by that multiplier throughput (5.3 core cycles/block), not by the chain's latency.
//!
//! Only GCM's stream ([`gcm_many`]) and the GHASH half of GCM's stitched encryption kernel
//! ([`GcmStitch`]) run on zmm; every other use of a key on this
//! backend (block-wise updates, the chain kernels) is [`super::vclmul`]'s, through
//! [`Vclmul512Token::ymm`].

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::clmul::{self, Wide};
use super::vclmul::VclmulToken;
use super::{GhashKey, MulVariant, Powers};
use crate::block::Block;

/// Proof that AVX-512F, AVX-512BW and VPCLMULQDQ (and, through [`VclmulToken`], the ymm and
/// xmm instructions) exist on this CPU. Zero-sized; only [`Vclmul512Token::get`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vclmul512Token(VclmulToken);

impl Vclmul512Token {
    /// Some token iff the CPU has AVX-512F, AVX-512BW, VPCLMULQDQ and everything
    /// [`VclmulToken`] needs.
    pub(crate) fn get() -> Option<Vclmul512Token> {
        let ymm = VclmulToken::get()?;
        let ok = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("vpclmulqdq");
        ok.then_some(Vclmul512Token(ymm))
    }

    /// The zmm instructions imply the ymm ones.
    pub(crate) fn ymm(self) -> VclmulToken {
        self.0
    }
}

/// Unreduced zmm sums, four lanes of [`Wide`].
#[derive(Clone, Copy)]
struct Wide4 {
    lo: __m512i,
    mid: __m512i,
    hi: __m512i,
}

impl Wide4 {
    /// All zero.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn zero() -> Wide4 {
        let z = _mm512_setzero_si512();
        Wide4 {
            lo: z,
            mid: z,
            hi: z,
        }
    }
}

/// Four consecutive GCM blocks as field elements (byte-reversed per lane), `b[0]` low.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_quad(b: &[Block; 4]) -> __m512i {
    let rev = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    // SAFETY: `b` is a reference to 64 readable bytes; loadu has no alignment requirement.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast()) };
    _mm512_shuffle_epi8(v, rev)
}

/// Four consecutive key powers (or Karatsuba middle operands), `k[0]` in the low lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_keys(k: &[u128; 4]) -> __m512i {
    // SAFETY: `k` is a reference to 64 readable bytes; loadu has no alignment requirement.
    unsafe { _mm512_loadu_si512(k.as_ptr().cast()) }
}

mul_acc_fn!(
    fn mul_acc4(Wide4, __m512i),
    "avx512f,vpclmulqdq",
    _mm512_clmulepi64_epi128,
    _mm512_xor_si512,
    _mm512_shuffle_epi32
);

/// Sum of the four lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn fold(v: __m512i) -> __m128i {
    let h = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v));
    _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h))
}

/// `w += X_j ⊗ K_j` lane-wise, unreduced, over the blocks of `quads` and their key powers
/// `keys` (Karatsuba middles `kks`), in `Powers::desc` order; `s` is added to the first block.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_quads<const KARA: bool>(
    w: &mut Wide4,
    s: __m128i,
    quads: &[[Block; 4]],
    keys: &[u128],
    kks: &[u128],
) {
    let (kq, _) = keys.as_chunks::<4>();
    let (kkq, _) = kks.as_chunks::<4>();
    for (j, ((q, k), kk)) in quads.iter().zip(kq).zip(kkq).enumerate() {
        let mut x = load_quad(q);
        if j == 0 {
            x = _mm512_xor_si512(x, _mm512_zextsi128_si512(s));
        }
        mul_acc4::<KARA>(w, x, load_keys(k), load_keys(kk));
    }
}

/// The folded and reduced sum.
#[inline]
#[target_feature(enable = "avx512f,avx2,pclmulqdq,sse2")]
fn reduce4<const KARA: bool>(w: Wide4) -> __m128i {
    clmul::finish::<KARA>(Wide {
        lo: fold(w.lo),
        mid: fold(w.mid),
        hi: fold(w.hi),
    })
}

/// Eight blocks, one reduction: `(s ^ X_0)·H^8 + X_1·H^7 + … + X_7·H`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn agg8<const KARA: bool>(pow: &Powers, s: __m128i, blocks: &[Block; 8]) -> __m128i {
    let (quads, _) = blocks.as_chunks::<4>();
    let mut w = Wide4::zero();
    mul_quads::<KARA>(&mut w, s, quads, &pow.desc, &pow.kk);
    reduce4::<KARA>(w)
}

/// Sixteen blocks, `a` then `b`, one reduction: `(s ^ A_0)·H^16 + … + A_7·H^9 + B_0·H^8 +
/// … + B_7·H`. Half the reductions and folds of two [`agg8`] (see the module docs).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn agg16<const KARA: bool>(pow: &Powers, s: __m128i, a: &[Block; 8], b: &[Block; 8]) -> __m128i {
    let (qa, _) = a.as_chunks::<4>();
    let (qb, _) = b.as_chunks::<4>();
    let mut w = Wide4::zero();
    mul_quads::<KARA>(&mut w, s, qa, &pow.desc_hi, &pow.kk_hi);
    mul_quads::<KARA>(&mut w, _mm_setzero_si128(), qb, &pow.desc, &pow.kk);
    reduce4::<KARA>(w)
}

/// The fewest blocks of a final group that [`agg_last`] hashes on zmm; smaller groups take
/// [`clmul::agg_n`]. Measured (GCM, TSC cycles/byte): in an in-process loop over 64
/// messages (fastest of 41), the zmm kernel for every size was 2-12% faster for final
/// groups of 6-8 blocks, even at 5 and slower at 1-4 (the
/// lane assembly and the fold lengthen the chain at the end of a message, where the xmm
/// products would issue in the shadow of other work). With this threshold, `comb bench`
/// (alternated builds, both directions): 100-byte messages 2.05-2.15 -> 1.90-1.96,
/// 200 bytes 1.11-1.24 -> 1.08-1.12, the realistic mix 0.6-1% faster. Not used after
/// the stitched encryption ([`GcmStitch::finish`]): there it made 1424-1496-byte messages
/// 3-7% slower, at 1440 bytes even where it fell back to the xmm kernel.
const ZMM_LAST_MIN: usize = 6;

/// A message's final group of `n = 1..=8` blocks (the lengths block last), one reduction:
/// `(s ^ X_0)·H^n + X_1·H^(n-1) + … + X_(n-1)·H`. With at least [`ZMM_LAST_MIN`] blocks on
/// zmm: the blocks sit as the last `n` of eight lanes after `8 - n` zero lanes (which add
/// nothing), so that each quadruple meets a whole quadruple of powers (`K8..K5`, `K4..K1`),
/// and a quarter of [`clmul::agg_n`]'s VPCLMULQDQ are issued (one per four products; a zmm
/// one issues as fast as an xmm one on Zen 4). The lanes come from [`clmul::group_lane`]'s
/// 16-byte loads.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn agg_last<const KARA: bool>(pow: &Powers, s: __m128i, blocks: &[Block]) -> __m128i {
    let n = blocks.len();
    debug_assert!((1..=8).contains(&n));
    if n < ZMM_LAST_MIN {
        return clmul::agg_n::<KARA>(pow, s, blocks);
    }
    let pad = 8 - n.min(8);
    let rev = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    let (kq, _) = pow.desc.as_chunks::<4>();
    let (kkq, _) = pow.kk.as_chunks::<4>();
    let mut w = Wide4::zero();
    // Quadruples wholly in the zero lanes contribute nothing: start at the first block's.
    for q in pad / 4..2 {
        let lane = |l: usize| clmul::group_lane(blocks, pad, 4 * q + l);
        let lo = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lane(0)), lane(1));
        let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lane(2)), lane(3));
        let mut x =
            _mm512_shuffle_epi8(_mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi), rev);
        if q == pad / 4 {
            // `s` joins the first block, in lane `pad % 4`.
            let first = 0xfu16 << (4 * (pad % 4));
            x = _mm512_xor_si512(x, _mm512_maskz_broadcast_i32x4(first, s));
        }
        mul_acc4::<KARA>(&mut w, x, load_keys(&kq[q]), load_keys(&kkq[q]));
    }
    reduce4::<KARA>(w)
}

gcm_stitch! {
    /// GCM's GHASH of one message whose ciphertext another kernel is writing: the GCM
    /// encryption kernel of [`crate::aes`] (CTR on VAES) calls [`GcmStitch::absorb`] between its
    /// steps with the ciphertext written so far, and [`GcmStitch::finish`] hashes what is left.
    ///
    /// What this gains, measured on the Zen 4 VM: not the multiplier hidden under the AES
    /// rounds (VAESENC and VPCLMULQDQ share its two FP pipes: ten ymm VAESENC and two zmm
    /// VPCLMULQDQ take 8.5 core cycles against 5 and 4 alone), but the rest of each unit's
    /// work (loads, byte swaps, xors, the folds and the reduction chain) overlapped with the
    /// other's, and the ciphertext hashed from L1 right after it is written. GCM encryption,
    /// TSC cycles/byte, `comb bench` medians: 16 KiB messages 0.281 -> 0.259, 2048 bytes 0.333
    /// -> 0.322, 1440 bytes within 1% (an in-process loop, best of 41, showed 0.349 -> 0.328
    /// there; the difference is not understood). Hashing the
    /// group a step wrote between the rounds of the next one, by hand, was slower (0.30 at
    /// 16 KiB) than leaving the overlap to the out-of-order core.
    ///
    /// The state is that of [`super::gcm_stream_one`]: the ciphertext's whole sixteen-block
    /// groups go through [`agg16`] (one reduction each), in order, from the state of the hashed
    /// `A`; the rest, the lengths block last, through the same stream as every other message.
    Vclmul512Token,
    "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3",
    agg8: |pow: &Powers, s, g: &[Block; 8]| agg8::<KARA>(pow, s, g),
    agg16: |pow: &Powers, s, a: &[Block; 8], b: &[Block; 8]| agg16::<KARA>(pow, s, a, b),
    agg_n: |pow: &Powers, s, g: &[Block]| clmul::agg_n::<KARA>(pow, s, g),
}

#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn gcm_many_impl<'a, const KARA: bool>(
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    super::gcm_stream_wide_many::<_, true>(
        _mm_setzero_si128(),
        keys.len().min(outs.len()),
        data,
        |i, s, c| agg8::<KARA>(&keys[i].pow, s, c),
        |i, s, a, b| agg16::<KARA>(&keys[i].pow, s, a, b),
        |i, s, c| agg_last::<KARA>(&keys[i].pow, s, c),
        |i, s| clmul::store_block(&mut outs[i], s),
    );
}

/// [`GhashKey::gcm_ghash_many`] on this backend (every key's, variant `v`).
pub(super) fn gcm_many<'a>(
    _t: Vclmul512Token,
    v: MulVariant,
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    // SAFETY: the token proves AVX-512F, AVX-512BW, VPCLMULQDQ, AVX2, PCLMULQDQ, SSE2 and
    // SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_many_impl::<true>(keys, data, outs),
            MulVariant::Schoolbook => gcm_many_impl::<false>(keys, data, outs),
        }
    }
}
