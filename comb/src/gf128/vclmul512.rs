//! GCM's GHASH with VPCLMULQDQ on zmm registers: four blocks per instruction.
//!
//! The 8-block aggregated step is [`super::vclmul`]'s on registers twice as wide: the blocks
//! load as two zmm quadruples `[X0 | X1 | X2 | X3]`, `[X4 | … | X7]` (low lane first), are
//! multiplied lane-wise by `[K8 | K7 | K6 | K5]` and `[K4 | … | K1]` (one 64-byte load each:
//! `Powers::desc` is stored `K8` first), the unreduced products summed, the four lanes folded
//! into one xmm `Wide` and reduced once with the xmm code of [`super::clmul`].
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
//! The running state enters [`agg16`] through its first block, so each step's zmm products
//! and fold lie on the message's chain. I tried taking `s·H^16` out as an xmm product added
//! after the fold, which shortens that chain by the fold. On the Intel AVX-512 VM (stitched
//! GCM encryption, comb engine, three alternated pairs, TSC cycles/byte) it was slower:
//! 1456 B 0.219-0.221 -> 0.225-0.226, 4096 B 0.174-0.176 -> 0.179-0.181, and the realistic
//! mix unchanged (0.300-0.306 against 0.300-0.304). The kernel is bound by its uops, not by
//! this chain, and the extra product costs more than the shorter chain saves.
//!
//! What is left of a message after its sixteen-block steps, at most fifteen blocks with the
//! lengths block, is one more step under one reduction ([`tail`]).
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
use crate::block::{Block, BLOCK};

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

/// The bytes of a message's tail (at most [`super::TAIL_MAX`]), the way the stitched CTR
/// leaves its last step: block `j` in lane `j % 4` of register `j / 4`, zero past the end.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_tail(rest: &[u8]) -> [__m512i; 4] {
    let len = rest.len().min(super::TAIL_MAX);
    core::array::from_fn(|q| {
        let n = len.saturating_sub(64 * q).min(64);
        let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        // SAFETY: the mask selects bytes `64q..64q + n` of `rest`, all inside it (`64q + n
        // <= len`); masked-off bytes are not accessed and do not fault, so the pointer,
        // made with wrapping arithmetic, may point past `rest` when `n` is 0.
        unsafe { _mm512_maskz_loadu_epi8(mask, rest.as_ptr().wrapping_add(64 * q).cast()) }
    })
}

/// `(s ^ X_0)·H^n + X_1·H^(n-1) + … + X_(n-1)·H` with one reduction, for the `n <= 16`
/// blocks `X_j` in lane `j % 4` of `quads[j / 4]` (GCM blocks as stored, not yet
/// byte-reversed); with `lengths`, the block `X_(n-1)` is that block (its lane in `quads`
/// is zero). Lane `j` is multiplied by `K_(n-j)`: four consecutive powers from `K_16..K_1`
/// ([`Powers::desc16`]), lanes at and past `n` masked off (zero).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn tail_products<const KARA: bool>(
    pow: &Powers,
    s: __m128i,
    quads: &[__m512i; 4],
    n: usize,
    lengths: Option<__m128i>,
) -> __m128i {
    debug_assert!((1..=16).contains(&n));
    let n = n.clamp(1, 16);
    let rev = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    let (keys, kks) = pow.desc16();
    let mut w = Wide4::zero();
    for (q, &quad) in quads.iter().enumerate().take(n.div_ceil(4)) {
        let mut x = quad;
        if let Some(l) = lengths.filter(|_| q == (n - 1) / 4) {
            x = _mm512_mask_broadcast_i32x4(x, 0xf << (4 * ((n - 1) % 4)), l);
        }
        x = _mm512_shuffle_epi8(x, rev);
        if q == 0 {
            // `s` joins the first block, lane 0.
            x = _mm512_xor_si512(x, _mm512_zextsi128_si512(s));
        }
        // Lanes 4q.. take K_(n-4q).., elements 16 - n + 4q.. of `K_16..K_1`; those of
        // lanes at or past `n` are masked off.
        let live = (n - 4 * q).min(4);
        let mask = ((1u16 << (2 * live)) - 1) as u8;
        let at = 16 - n + 4 * q;
        // SAFETY: the unmasked elements are `at..at + live`, and `at + live <= 16`: inside
        // both sixteen-element arrays of `desc16`. Masked-off elements are not accessed.
        let (k, kk) = unsafe {
            (
                _mm512_maskz_loadu_epi64(mask, keys.wrapping_add(at).cast()),
                _mm512_maskz_loadu_epi64(mask, kks.wrapping_add(at).cast()),
            )
        };
        mul_acc4::<KARA>(&mut w, x, k, kk);
    }
    reduce4::<KARA>(w)
}

/// `(s ^ X_0)·H^n + X_1·H^(n-1) + … + L·H` for `X_0..` the blocks of a message's tail,
/// `rest` bytes (at most [`super::TAIL_MAX`], the last block zero-padded) as [`load_tail`]
/// leaves them in `quads`, and `L` its lengths block: a stitched message's final step
/// ([`GcmStitch::finish`]), in place of a final group of eight and a smaller one, each
/// reduced. Up to fifteen blocks and the lengths block take one step and one reduction; a
/// tail of sixteen blocks takes a second, one-block product for the lengths block.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn tail<const KARA: bool>(
    pow: &Powers,
    s: __m128i,
    quads: &[__m512i; 4],
    rest: usize,
    lengths: __m128i,
) -> __m128i {
    debug_assert!(rest <= super::TAIL_MAX);
    let blocks = rest.div_ceil(BLOCK);
    if blocks < 16 {
        tail_products::<KARA>(pow, s, quads, blocks + 1, Some(lengths))
    } else {
        let s = tail_products::<KARA>(pow, s, quads, 16, None);
        let mut l = [0; BLOCK];
        // SAFETY: `l` is 16 writable bytes; storeu has no alignment requirement.
        unsafe { _mm_storeu_si128(l.as_mut_ptr().cast(), lengths) };
        clmul::agg_n::<KARA>(pow, s, core::slice::from_ref(&l))
    }
}

/// The lengths block `l` in a register, as stored (not byte-reversed), made from its two
/// halves rather than loaded: [`super::StitchState::tail`] builds it on the stack as two
/// 8-byte stores, and a 16-byte load of them cannot be forwarded from the store buffer;
/// it waited for both stores to reach L1, which on batches of 64-byte messages was a
/// quarter of [`tail`]'s samples.
#[inline]
#[target_feature(enable = "sse2")]
fn lengths_reg(l: &Block) -> __m128i {
    let v = u128::from_le_bytes(*l);
    _mm_set_epi64x((v >> 64) as u64 as i64, v as u64 as i64)
}

/// `GHASH_H(A || 0^v)` from the zero state, the state a GCM message's ciphertext is hashed
/// from: whole sixteen-block groups of `A` by [`agg16`], the rest (at most [`super::TAIL_MAX`]
/// bytes, the last block zero-padded) by one masked load and one [`tail_products`], so `A` of
/// up to 255 bytes costs one pass of products and one reduction.
///
/// GCM used [`GhashKey::ghash_update`] here, the block-wise update shared by every backend:
/// two calls for an `A` with a partial block (its whole blocks, then the padded one), each
/// with its own reduction. With 13 bytes of `A` per message (a TLS 1.2 record's), that took
/// 11% of GCM encryption's samples on the realistic mix.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn ad_state<const KARA: bool>(pow: &Powers, ad: &[u8]) -> __m128i {
    if ad.is_empty() {
        _mm_setzero_si128()
    } else {
        hash_ad::<KARA>(pow, ad)
    }
}

/// [`ad_state`] of a non-empty `A`. Not inlined: inlined into the stitched encryption kernel
/// it made GCM encryption without associated data 2-3% slower (realistic mix, core
/// cycles/byte, alternated builds).
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn hash_ad<const KARA: bool>(pow: &Powers, ad: &[u8]) -> __m128i {
    let (groups, rest) = ad.as_chunks::<{ 16 * BLOCK }>();
    let mut s = _mm_setzero_si128();
    for g in groups {
        let (blocks, _) = g.as_chunks::<BLOCK>();
        let (halves, _) = blocks.as_chunks::<8>();
        s = agg16::<KARA>(pow, s, &halves[0], &halves[1]);
    }
    if !rest.is_empty() {
        s = tail_products::<KARA>(pow, s, &load_tail(rest), rest.len().div_ceil(BLOCK), None);
    }
    s
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
    /// The ciphertext's whole sixteen-block groups go through [`agg16`] (one reduction each),
    /// in order, from the state of the hashed `A`; the rest (under 256 bytes) and the lengths
    /// block through [`tail`], from the output ([`GcmStitch::finish`]) or from the CTR's
    /// registers ([`GcmStitch::finish_quads`]). The result is [`super::gcm_stream_one`]'s.
    Vclmul512Token,
    "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3",
    agg8: |pow: &Powers, s, g: &[Block; 8]| agg8::<KARA>(pow, s, g),
    agg16: |pow: &Powers, s, a: &[Block; 8], b: &[Block; 8]| agg16::<KARA>(pow, s, a, b),
    agg_n: |pow: &Powers, s, g: &[Block]| clmul::agg_n::<KARA>(pow, s, g),
    tail: |pow: &Powers, s, rest: &[u8], lengths: &Block| {
        tail::<KARA>(pow, s, &load_tail(rest), rest.len(), lengths_reg(lengths))
    },
}

/// GCM's GHASH of one message, `A` ([`ad_state`]), then the whole sixteen-block groups of `C`
/// and its tail as the stitched encryption hashes its ciphertext ([`GcmStitch`]).
impl<'k, const KARA: bool> GcmStitch<'k, KARA> {
    /// The hash of a message with associated data `ad`, under `key`'s powers: `A` hashed
    /// first ([`ad_state`]).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
    pub(crate) fn after_ad(key: super::WideGhash<'k, Vclmul512Token>, ad: &[u8]) -> Self {
        GcmStitch {
            pow: key.pow,
            state: super::StitchState::new(ad_state::<KARA>(key.pow, ad)),
        }
    }

    /// `S` of the message into `out`, as [`GcmStitch::finish`], but with the tail of `ct`
    /// (all of `C`; `ad_len` the length of `A`) taken from `quads`, the stitched CTR's last
    /// step as [`load_tail`] would load it, rather than from memory.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
    pub(crate) fn finish_quads(
        self,
        quads: &[__m512i; 4],
        ct: &[u8],
        ad_len: usize,
        out: &mut Block,
    ) {
        let pow = self.pow;
        let s = self.state.tail(ct, ad_len, |s, rest, lengths| {
            tail::<KARA>(pow, s, quads, rest.len(), lengths_reg(lengths))
        });
        match s {
            Some(s) => clmul::store_block(out, s),
            None => self.finish(ct, ad_len, out),
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn gcm_one<const KARA: bool>(key: &GhashKey, ad: &[u8], ct: &[u8], out: &mut Block) {
    let mut h = GcmStitch::<KARA> {
        pow: &key.pow,
        state: super::StitchState::new(ad_state::<KARA>(&key.pow, ad)),
    };
    // SAFETY: `ct` is a slice, so its `len / 16` whole blocks are readable, and they are
    // not written while this runs (it is borrowed shared).
    unsafe { h.absorb(ct.as_ptr(), ct.len() / BLOCK) };
    h.finish(ct, ad.len(), out);
}

/// [`GhashKey::gcm_ghash_each`] on this backend: each message's hash ([`gcm_one`]), then its
/// `then`; with a `then` that does nothing, [`GhashKey::gcm_ghash_many`] too.
///
/// The messages go one at a time, unlike the xmm and ymm backends' two side by side
/// ([`super::gcm_stream_wide_many`]): with the tail's single reduction, one message at a time
/// was faster on the Intel AVX-512 VM (GCM decryption's hashes alone, TSC cycles/byte, the
/// same build: the realistic mix 0.352-0.368 -> 0.325-0.329, 64-byte messages 1.76 -> 1.71,
/// 256 bytes 0.573 -> 0.536, 1456 bytes 0.267 -> 0.261). GCM decryption, whose `then`
/// verifies and runs the message's CTR, against every
/// hash first and then every CTR (comb bench, alternated builds, the Intel AVX-512 VM,
/// six pairs): the realistic mix 0.526-0.555 -> 0.503-0.516 core cycles/byte, 1456 B
/// 0.249-0.251 -> 0.242-0.249 and 256 B 0.575-0.598 -> 0.560-0.575 TSC cycles/byte, but
/// 64 B 1.84-1.93 -> 1.86-1.98.
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,avx2,pclmulqdq,sse2,ssse3")]
fn gcm_each_impl<'a, const KARA: bool>(
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
    mut then: impl FnMut(usize, &mut Block),
) {
    for (i, (key, out)) in keys.iter().zip(outs.iter_mut()).enumerate() {
        let (ad, ct) = data(i);
        gcm_one::<KARA>(key, ad, ct, out);
        then(i, out);
    }
}

/// [`gcm_each_impl`] for keys of this backend, variant `v`.
pub(super) fn gcm_each<'a>(
    _t: Vclmul512Token,
    v: MulVariant,
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
    then: impl FnMut(usize, &mut Block),
) {
    // SAFETY: the token proves AVX-512F, AVX-512BW, VPCLMULQDQ, AVX2, PCLMULQDQ, SSE2 and
    // SSSE3 are present.
    unsafe {
        match v {
            MulVariant::Karatsuba => gcm_each_impl::<true>(keys, data, outs, then),
            MulVariant::Schoolbook => gcm_each_impl::<false>(keys, data, outs, then),
        }
    }
}

/// [`GhashKey::gcm_ghash_many`] on this backend (every key's, variant `v`).
pub(super) fn gcm_many<'a>(
    t: Vclmul512Token,
    v: MulVariant,
    keys: &[&'a GhashKey],
    data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    outs: &mut [Block],
) {
    gcm_each(t, v, keys, data, outs, |_, _| {});
}
