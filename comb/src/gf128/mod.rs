//! GF(2^128) arithmetic: GHASH for GCM (and later POET/Julius-style hashes), doubling and
//! tripling for OCB3/OTR/COPA-style masks.
//!
//! # GHASH
//!
//! [`GhashKey`] holds the hash key H = E_K(0^128) as the powers H^1..H^8 and hashes whole
//! 16-byte blocks: for each block X_i, `state = (state ^ X_i) · H` in the field of SP 800-38D
//! (bit-reflected, polynomial `x^128 + x^7 + x^2 + x + 1`). Backends:
//!
//! * `Vclmul512` — GCM's stream with VPCLMULQDQ on zmm (four blocks per instruction,
//!   AVX-512F/BW), everything else as `Vclmul`;
//! * `Vclmul` — VPCLMULQDQ on ymm (two blocks per instruction, AVX2), 8-block aggregated;
//! * `Clmul` — PCLMULQDQ on xmm;
//! * `Soft` — portable and constant-time (64-bit integer multiplies with holes, no tables).
//!
//! The hardware ones come in the two multiplication variants of papers/000 §6.3
//! ([`MulVariant`]). [`GhashKey::new`] picks the best the CPU has once, at key creation
//! ([`GhashBackend::best`]); [`GhashKey::with_backend`] forces one (tests, benchmarks).
//!
//! Blocks are hashed `N` at a time with one reduction per group (aggregated reduction,
//! Jankowski–Laurent): `(s ^ X_0)·H^N + X_1·H^(N-1) + … + X_(N-1)·H`, `N = 8` by default,
//! then one group of 4 if at least 4 blocks remain, then block by block ([`Aggregation`]).
//!
//! ## Representation (all backends agree on it)
//!
//! A block `X` is held as the integer `R(X) = u128::from_be_bytes(X)` (a byte swap of the
//! little-endian register load): integer bit `127 - i` is the coefficient of `x^i`, the
//! bit-reflected polynomial. Carry-less multiplication of reflected operands gives the
//! reflected product one bit short (`R(a)·R(b) = y^127·R(ab)` in `GF(2)[y]/P*`, `P*` the
//! reciprocal polynomial `y^128 + y^127 + y^126 + y^121 + 1`). The key stores
//! `K_i = R(H^i)·y mod P*` (H "times x" once, at setup), and every reduction is the
//! Montgomery-style division `T ↦ T·y^-128 mod P*`, so `reduce(R(X) ⊗ K_i) = R(X·H^i)`
//! exactly: no 1-bit shift of each product as in Intel's white paper, and sums of products
//! (aggregation) reduce once because the reduction is linear.
//!
//! # Doubling and tripling
//!
//! [`dbl()`], [`tpl`] and the MSB-test variants [`dbl_sar`], [`dbl_mulbit`] (and xmm forms on
//! x86) use the big-endian convention of OCB3 and CMAC (byte 0 most significant,
//! `x^128 = x^7 + x^2 + x + 1`), not GHASH's reflected one. Papers/000 §6.5 measures ways to
//! test the MSB before the conditional reduction, all with a branch; every variant here turns
//! the MSB into a mask instead (negation, arithmetic shift, multiplication by the bit, or on
//! xmm `psrad`/`pcmpgtd` of the top dword), so none depends on the secret value for timing.
//! [`dbl()`] is the crate's CMAC doubling ([`crate::block::dbl`]), reused.

pub(crate) mod bitrev;
mod dbl;
mod soft;

/// `$name(acc, x, k, kk)`: `acc += x ⊗ k` lane-wise, unreduced, for one register width.
/// The xmm, ymm and zmm backends run the same arithmetic on 1, 2 and 4 lanes, with that
/// width's carry-less multiply, xor and dword shuffle; this writes it once. `kk` holds the
/// Karatsuba middle operands (`k1 ^ k0` in each lane's low qword), read only with `KARA`.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
macro_rules! mul_acc_fn {
    ($vis:vis fn $name:ident($wide:ty, $v:ty), $feat:literal, $clmul:ident, $xor:ident, $shuffle:ident) => {
        /// `acc += x ⊗ k` lane-wise, unreduced (see `mul_acc_fn!` in `gf128`).
        #[inline]
        #[target_feature(enable = $feat)]
        $vis fn $name<const KARA: bool>(acc: &mut $wide, x: $v, k: $v, kk: $v) {
            acc.lo = $xor(acc.lo, $clmul::<0x00>(x, k));
            acc.hi = $xor(acc.hi, $clmul::<0x11>(x, k));
            if KARA {
                let xs = $xor(x, $shuffle::<0x4e>(x));
                acc.mid = $xor(acc.mid, $clmul::<0x00>(xs, kk));
            } else {
                let m = $xor($clmul::<0x01>(x, k), $clmul::<0x10>(x, k));
                acc.mid = $xor(acc.mid, m);
            }
        }
    };
}

/// A wide backend's `GcmStitch`: GCM's GHASH of one message's ciphertext as a stitched
/// encryption kernel of [`crate::aes`] writes it, on [`StitchState`] with the backend's
/// products. `$token` is the backend's proof of features, `$features` the features its
/// products need; `$agg8(pow, s, group)`, `$agg16(pow, s, a, b)` (sixteen blocks, one
/// reduction) and `$agg_n(pow, s, blocks)` (a message's final group) its products, as
/// closures (they may name the struct's `KARA`); and optionally `$tail(pow, s, rest,
/// lengths)`, the whole rest of a message after its hashed groups and its lengths block
/// under one reduction (see [`StitchState::tail`]), which `finish` then takes where it can.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
macro_rules! gcm_stitch {
    (
        $(#[$doc:meta])*
        $token:ty, $features:literal,
        agg8: $agg8:expr, agg16: $agg16:expr, agg_n: $agg_n:expr
        $(, tail: $tail:expr)? $(,)?
    ) => {
        $(#[$doc])*
        pub(crate) struct GcmStitch<'k, const KARA: bool> {
            pow: &'k Powers,
            state: super::StitchState<__m128i>,
        }

        impl<const KARA: bool> GcmStitch<'_, KARA> {
            /// [`super::StitchState::absorb`] with this backend's sixteen-block product.
            ///
            /// # Safety
            /// As [`super::StitchState::absorb`].
            #[inline]
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn absorb(&mut self, ct: *const u8, ready: usize) {
                let (pow, agg16) = (self.pow, $agg16);
                // SAFETY: the caller's contract is this function's.
                unsafe { self.state.absorb(ct, ready, |s, a, b| agg16(pow, s, a, b)) }
            }

            /// `S` of the message into `out` ([`super::StitchState::finish`]).
            #[inline]
            #[target_feature(enable = $features)]
            pub(crate) fn finish(self, ct: &[u8], ad_len: usize, out: &mut Block) {
                let pow = self.pow;
                $(
                    let tail = $tail;
                    let s = self.state.tail(ct, ad_len, |s, rest, lengths| {
                        tail(pow, s, rest, lengths)
                    });
                    if let Some(s) = s {
                        return clmul::store_block(out, s);
                    }
                )?
                let (agg8, agg16, agg_n) = ($agg8, $agg16, $agg_n);
                let s = self.state.finish(
                    ct,
                    ad_len,
                    |s, g| agg8(pow, s, g),
                    |s, a, b| agg16(pow, s, a, b),
                    |s, g| agg_n(pow, s, g),
                );
                clmul::store_block(out, s);
            }
        }
    };
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod clmul;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod vclmul;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod vclmul512;

pub use dbl::{dbl, dbl_mulbit, dbl_sar, tpl};
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub use dbl::{dbl_xmm_cmp, dbl_xmm_sar};

use crate::block::{load_short, Block, IoPtrs, BLOCK};
use crate::Error;
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// How a 128 × 128-bit carry-less product is computed (papers/000 §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulVariant {
    /// The "classical" method (Intel white paper): Karatsuba with 3 PCLMULQDQ per product,
    /// reduction by shifts and XORs.
    Karatsuba,
    /// The "Haswell-optimized" method (Gueron): 4 PCLMULQDQ per product (schoolbook),
    /// reduction by 2 more PCLMULQDQ. Fewer other instructions; better when the multiplier
    /// has throughput to spare.
    Schoolbook,
}

/// A GHASH implementation. Not every CPU runs every one: see [`GhashBackend::is_supported`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GhashBackend {
    /// Portable, constant-time, no special instructions.
    Soft,
    /// PCLMULQDQ on xmm registers (needs PCLMULQDQ, SSE2, SSSE3).
    Clmul(MulVariant),
    /// VPCLMULQDQ on ymm registers, two blocks per instruction (needs AVX2 and VPCLMULQDQ
    /// as well as everything `Clmul` needs).
    Vclmul(MulVariant),
    /// GCM's GHASH stream with VPCLMULQDQ on zmm registers, four blocks per instruction
    /// (needs AVX-512F and AVX-512BW as well as everything `Vclmul` needs); every other use
    /// of the key as `Vclmul`.
    Vclmul512(MulVariant),
}

impl GhashBackend {
    /// Every backend, in order of preference (best first).
    ///
    /// The order is measured. On an AMD Zen 4 VM, GHASH alone over 64 messages of 1456
    /// bytes as GCM hashes a batch (two messages side by side), TSC cycles/byte: zmm
    /// schoolbook 0.198, zmm Karatsuba 0.208, ymm Karatsuba 0.229, ymm schoolbook 0.256
    /// (one message at a time the two ymm variants were 0.247 and 0.235, and the zmm ones
    /// slower than ymm: a single chain waits on its reductions); xmm Karatsuba 0.32. On
    /// that CPU one VPCLMULQDQ issues about every 2 core cycles whatever its width, so the
    /// wider register wins once the chain's latency is hidden. Earlier, on a Zen 3 (no
    /// AVX-512), both ymm variants ≈ 0.09 ns/byte one message at a time; xmm Karatsuba
    /// ≈ 0.13 ns/byte against schoolbook ≈ 0.17; `Soft` ≈ 4 ns/byte.
    pub const ALL: &'static [GhashBackend] = &[
        GhashBackend::Vclmul512(MulVariant::Schoolbook),
        GhashBackend::Vclmul512(MulVariant::Karatsuba),
        GhashBackend::Vclmul(MulVariant::Karatsuba),
        GhashBackend::Vclmul(MulVariant::Schoolbook),
        GhashBackend::Clmul(MulVariant::Karatsuba),
        GhashBackend::Clmul(MulVariant::Schoolbook),
        GhashBackend::Soft,
    ];

    /// A short name for printing (`"vclmul-schoolbook"`, `"clmul-karatsuba"`, `"soft"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            GhashBackend::Soft => "soft",
            GhashBackend::Clmul(MulVariant::Karatsuba) => "clmul-karatsuba",
            GhashBackend::Clmul(MulVariant::Schoolbook) => "clmul-schoolbook",
            GhashBackend::Vclmul(MulVariant::Karatsuba) => "vclmul-karatsuba",
            GhashBackend::Vclmul(MulVariant::Schoolbook) => "vclmul-schoolbook",
            GhashBackend::Vclmul512(MulVariant::Karatsuba) => "vclmul512-karatsuba",
            GhashBackend::Vclmul512(MulVariant::Schoolbook) => "vclmul512-schoolbook",
        }
    }

    /// Whether this CPU can run the backend (runtime detection; std caches CPUID).
    pub fn is_supported(self) -> bool {
        Kernel::get(self).is_some()
    }

    /// The first supported backend of [`GhashBackend::ALL`]; `Soft` if nothing else runs.
    pub fn best() -> GhashBackend {
        GhashBackend::ALL
            .iter()
            .copied()
            .find(|b| b.is_supported())
            .unwrap_or(GhashBackend::Soft)
    }
}

impl fmt::Display for GhashBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many blocks share one reduction in [`GhashKey::ghash_update_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Aggregation {
    /// Block by block: one multiplication and one reduction per block.
    One,
    /// Groups of 4 blocks with H^4..H^1, then block by block.
    Four,
    /// Groups of 8 blocks with H^8..H^1, then at most one group of 4, then block by block.
    #[default]
    Eight,
}

/// The schedule of [`Aggregation`], shared by every backend: hashes `blocks` into the state
/// `s` in groups of 8 (`Eight`), then of 4 (`Eight`: at most one; `Four`: all), then one by
/// one. `agg8`, `agg4` and `agg1` each hash one group with one reduction (a backend's kernel
/// is generic over the group size: `|s, c| agg::<8>(pow, s, c)`, and so on).
///
/// Always inlined, so that each backend's loops are its own code: the closures, defined in
/// a `#[target_feature]` function, inherit its features and inline into it.
#[inline(always)]
fn aggregate<S>(
    mut s: S,
    blocks: &[Block],
    agg_by: Aggregation,
    agg8: impl Fn(S, &[Block; 8]) -> S,
    agg4: impl Fn(S, &[Block; 4]) -> S,
    agg1: impl Fn(S, &[Block; 1]) -> S,
) -> S {
    let mut rest = blocks;
    if agg_by == Aggregation::Eight {
        let (eights, r) = rest.as_chunks::<8>();
        for c in eights {
            s = agg8(s, c);
        }
        rest = r;
    }
    if agg_by != Aggregation::One {
        let (fours, r) = rest.as_chunks::<4>();
        for c in fours {
            s = agg4(s, c);
        }
        rest = r;
    }
    for b in rest {
        s = agg1(s, core::array::from_ref(b));
    }
    s
}

/// GCM's lengths block `[len(A)]_64 || [len(C)]_64` of a message whose `A` and `C` are
/// `ad_len` and `ct_len` bytes long (lengths in bits modulo 2^64).
#[inline(always)]
fn lengths_block(ad_len: usize, ct_len: usize) -> Block {
    let bits = |len: usize| u128::from((len as u64).wrapping_mul(8));
    ((bits(ad_len) << 64) | bits(ct_len)).to_be_bytes()
}

/// GCM's block stream `A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64` of one message,
/// handed out as groups of eight blocks (straight from the inputs where the stream is
/// aligned to them, else assembled in the caller's `pending` buffer), then one final group of
/// `1..=8` blocks ending with the lengths block. Lengths are in bits modulo 2^64.
///
/// A cursor rather than a loop, so that several messages' streams can be hashed side by
/// side ([`gcm_stream_many`]); small (the buffer is the caller's), so that a lane is
/// restarted by assigning a few words.
#[derive(Clone, Copy)]
struct GcmBlocks<'a> {
    /// What is left of `A` and of `C`; `part` indexes the one being read (2: both done).
    parts: [&'a [u8]; 2],
    part: usize,
    /// Blocks gathered in `pending` so far (a group that straddles a partial block or the
    /// `A`/`C` boundary, or the final group).
    n: usize,
    lengths: Block,
    /// Whether the stream is long enough for [`GcmBlocks::next_pair`] to find a pair. A
    /// flag set once, because the pair check itself, made on every step of a short message,
    /// measured 5% slower GHASH on a batch of 64-byte messages and 25% one at a time.
    long: bool,
}

impl<'a> GcmBlocks<'a> {
    #[inline(always)]
    fn new(ad: &'a [u8], ct: &'a [u8]) -> GcmBlocks<'a> {
        GcmBlocks::resume(ad, ct, ad.len(), ct.len())
    }

    /// The stream of `ad || ct` closed by the lengths block of a message whose `A` and `C`
    /// are `ad_len` and `ct_len` bytes long: for the part of a message not yet hashed, when
    /// `ad` and `ct` are what is left of them (a whole number of blocks consumed from each).
    #[inline(always)]
    fn resume(ad: &'a [u8], ct: &'a [u8], ad_len: usize, ct_len: usize) -> GcmBlocks<'a> {
        GcmBlocks {
            parts: [ad, ct],
            part: 0,
            n: 0,
            lengths: lengths_block(ad_len, ct_len),
            long: ad.len() >= 16 * BLOCK || ct.len() >= 16 * BLOCK,
        }
    }

    /// The next group of eight blocks, or `None` when only the final group is left
    /// ([`GcmBlocks::last_group`]). `pending` must be the same buffer on every call.
    #[inline(always)]
    fn next_group<'p>(&mut self, pending: &'p mut [Block; 8]) -> Option<&'p [Block; 8]>
    where
        'a: 'p,
    {
        while self.part < 2 {
            let data = self.parts[self.part];
            let (blocks, _) = data.as_chunks::<BLOCK>();
            if self.n == 0 {
                if let Some(group) = blocks.first_chunk::<8>() {
                    self.parts[self.part] = &data[8 * BLOCK..];
                    return Some(group);
                }
            }
            if data.is_empty() {
                self.part += 1;
                continue;
            }
            let n = self.n.min(7);
            if blocks.is_empty() {
                // The partial last block, zero-padded.
                pending[n] = load_short(data);
                self.n = n + 1;
                self.parts[self.part] = &[];
            } else {
                let take = (8 - n).min(blocks.len());
                pending[n..n + take].copy_from_slice(&blocks[..take]);
                self.n = n + take;
                self.parts[self.part] = &data[take * BLOCK..];
            }
            if self.n == 8 {
                self.n = 0;
                return Some(pending);
            }
        }
        None
    }

    /// The next sixteen blocks where they lie whole in the input being read and nothing is
    /// gathered in `pending` (the common case of a long message), else `None` (and nothing
    /// consumed): two groups of [`GcmBlocks::next_group`] for the price of one check.
    #[inline(always)]
    fn next_pair(&mut self) -> Option<(&'a [Block; 8], &'a [Block; 8])> {
        if !self.long {
            return None;
        }
        let data = *self.parts.get(self.part)?;
        let (blocks, _) = data.as_chunks::<BLOCK>();
        match blocks.first_chunk::<16>() {
            Some(pair) if self.n == 0 => {
                self.parts[self.part] = &data[16 * BLOCK..];
                let ([a, b], _) = pair.as_chunks::<8>() else {
                    unreachable!("sixteen blocks are two groups of eight")
                };
                Some((a, b))
            }
            _ => None,
        }
    }

    /// The final `1..=8` blocks, the lengths block last. Only after [`GcmBlocks::next_group`]
    /// returned `None`, with the same buffer.
    #[inline(always)]
    fn last_group<'p>(&self, pending: &'p mut [Block; 8]) -> &'p [Block] {
        debug_assert!(self.part == 2 && self.n < 8);
        let n = self.n.min(7);
        pending[n] = self.lengths;
        &pending[..=n]
    }
}

/// One step of a message's GHASH stream from state `s`: with `WIDE`, the next sixteen
/// blocks through `agg16` (one reduction) where they lie whole in the input
/// ([`GcmBlocks::next_pair`]); else the next group of eight through `agg8`. `None` when
/// only the final group is left ([`GcmBlocks::last_group`]). `pending` must be the same
/// buffer on every step of a stream.
#[inline(always)]
fn stream_step<S, const WIDE: bool>(
    c: &mut GcmBlocks<'_>,
    pending: &mut [Block; 8],
    s: S,
    agg8: impl Fn(S, &[Block; 8]) -> S,
    agg16: impl Fn(S, &[Block; 8], &[Block; 8]) -> S,
) -> Option<S> {
    if WIDE {
        if let Some((a, b)) = c.next_pair() {
            return Some(agg16(s, a, b));
        }
    }
    c.next_group(pending).map(|g| agg8(s, g))
}

/// The rest of one message's GHASH stream `c` from state `s`, one chain: its groups (with
/// `WIDE`, sixteen blocks under one reduction where they lie whole) and its final group.
#[inline(always)]
fn gcm_stream_one<S: Copy, const WIDE: bool>(
    mut c: GcmBlocks<'_>,
    mut s: S,
    agg8: impl Fn(S, &[Block; 8]) -> S,
    agg16: impl Fn(S, &[Block; 8], &[Block; 8]) -> S,
    agg_n: impl Fn(S, &[Block]) -> S,
) -> S {
    let mut pending = [[0u8; BLOCK]; 8];
    while let Some(next) = stream_step::<S, WIDE>(&mut c, &mut pending, s, &agg8, &agg16) {
        s = next;
    }
    s = agg_n(s, c.last_group(&mut pending));
    for b in &mut pending {
        crate::block::wipe(b);
    }
    s
}

/// Messages whose GHASH streams [`gcm_stream_many`] advances side by side. One stream's
/// groups form a dependent chain (each reduction feeds the next group's first product);
/// independent chains interleaved keep the multiplier busy while each waits on its
/// reduction. Measured on the Zen 4 VM (GHASH alone, 64 messages of 1456 bytes, zmm
/// schoolbook, TSC cycles/byte): one lane 0.262, two 0.198; four and six were no faster
/// than two (ymm Karatsuba: 0.249, 0.229, 0.228, 0.228). Two lanes as two sets of locals
/// rather than arrays were slower (GCM decryption 0.427 against 0.394).
const GCM_LANES: usize = 2;

/// [`gcm_stream_wide_many`] with groups of eight blocks only.
#[inline(always)]
fn gcm_stream_many<'a, S: Copy>(
    zero: S,
    count: usize,
    stream: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    agg8: impl Fn(usize, S, &[Block; 8]) -> S,
    agg_n: impl Fn(usize, S, &[Block]) -> S,
    done: impl FnMut(usize, S),
) {
    let agg16 = |i, s, a: &[Block; 8], b: &[Block; 8]| agg8(i, agg8(i, s, a), b);
    gcm_stream_wide_many::<S, false>(zero, count, stream, &agg8, agg16, agg_n, done);
}

/// The GHASH streams of `count` messages, up to [`GCM_LANES`] at a time, from state `zero`:
/// `stream(i)` gives message `i`'s `(A, C)`; `agg8(i, s, group)`, `agg16(i, s, a, b)` (two
/// groups under one reduction, used only with `WIDE`) and `agg_n(i, s, blocks)` hash under
/// message `i`'s key; `done(i, s)` receives its final state. A lane whose message is
/// finished takes the next one, so lanes stay full until the last messages.
#[inline(always)]
fn gcm_stream_wide_many<'a, S: Copy, const WIDE: bool>(
    zero: S,
    count: usize,
    stream: impl Fn(usize) -> (&'a [u8], &'a [u8]),
    agg8: impl Fn(usize, S, &[Block; 8]) -> S,
    agg16: impl Fn(usize, S, &[Block; 8], &[Block; 8]) -> S,
    agg_n: impl Fn(usize, S, &[Block]) -> S,
    mut done: impl FnMut(usize, S),
) {
    let step = |i: usize, c: &mut GcmBlocks<'a>, pending: &mut [Block; 8], s: S| {
        stream_step::<S, WIDE>(
            c,
            pending,
            s,
            |s, g| agg8(i, s, g),
            |s, a, b| agg16(i, s, a, b),
        )
    };
    if count == 1 {
        // Nothing to interleave: one chain, without the lanes' set-up.
        let (ad, ct) = stream(0);
        let s = gcm_stream_one::<S, WIDE>(
            GcmBlocks::new(ad, ct),
            zero,
            |s, g| agg8(0, s, g),
            |s, a, b| agg16(0, s, a, b),
            |s, g| agg_n(0, s, g),
        );
        return done(0, s);
    }
    const L: usize = GCM_LANES;
    let mut pending = [[[0u8; BLOCK]; 8]; L];
    let mut cursor = [GcmBlocks::new(&[], &[]); L];
    let mut msg = [0usize; L];
    let mut state = [zero; L];
    let mut live = [false; L];
    let mut next = 0;
    for l in 0..L.min(count) {
        let (ad, ct) = stream(l);
        (cursor[l], msg[l], live[l]) = (GcmBlocks::new(ad, ct), l, true);
        next = l + 1;
    }
    while live.iter().any(|&x| x) {
        for l in 0..L {
            if !live[l] {
                continue;
            }
            match step(msg[l], &mut cursor[l], &mut pending[l], state[l]) {
                Some(s) => state[l] = s,
                None => {
                    done(
                        msg[l],
                        agg_n(msg[l], state[l], cursor[l].last_group(&mut pending[l])),
                    );
                    if next < count {
                        let (ad, ct) = stream(next);
                        (cursor[l], msg[l], state[l]) = (GcmBlocks::new(ad, ct), next, zero);
                        next += 1;
                    } else {
                        live[l] = false;
                    }
                }
            }
        }
    }
    for b in pending.iter_mut().flatten() {
        crate::block::wipe(b);
    }
}

/// A GHASH key on a wide backend: its powers, its product variant, and `T`, the proof that
/// the CPU has the backend's features (ymm: [`vclmul::VclmulToken`], AVX2, VPCLMULQDQ,
/// PCLMULQDQ and SSSE3; zmm: [`vclmul512::Vclmul512Token`], also AVX-512F and AVX-512BW).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[derive(Clone, Copy)]
pub(crate) struct WideGhash<'k, T> {
    token: T,
    karatsuba: bool,
    pow: &'k Powers,
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl<T: Copy> WideGhash<'_, T> {
    /// The proof of the CPU's features.
    pub(crate) fn token(self) -> T {
        self.token
    }

    /// Whether products are Karatsuba's (three multiplications) or schoolbook (four).
    pub(crate) fn karatsuba(self) -> bool {
        self.karatsuba
    }
}

/// What GCM's stitched encryption kernel hashes with ([`GhashKey::stitch`]): the key's
/// GHASH on ymm ([`vclmul::GcmStitch`]) or on zmm ([`vclmul512::GcmStitch`]).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[derive(Clone, Copy)]
pub(crate) enum StitchGhash<'k> {
    Ymm(WideGhash<'k, vclmul::VclmulToken>),
    Zmm(WideGhash<'k, vclmul512::Vclmul512Token>),
}

/// The most bytes of `C` that [`StitchState::tail`] hashes with the lengths block: less
/// than one sixteen-block step, all that is left after [`StitchState::absorb`] has hashed
/// every whole group.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) const TAIL_MAX: usize = 16 * BLOCK - 1;

/// GCM's GHASH of one message's ciphertext, hashed as a stitched encryption kernel writes
/// it: the state of [`gcm_stream_one`] after the whole sixteen-block groups of `C` hashed
/// so far, in order, from the state of the hashed `A`. The backends' `GcmStitch` give the
/// products.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[derive(Clone, Copy)]
pub(crate) struct StitchState<S> {
    s: S,
    /// Whole blocks of `C` hashed so far (a multiple of 16).
    hashed: usize,
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl<S: Copy> StitchState<S> {
    /// From `s`, the state after the padded `A`.
    #[inline(always)]
    pub(crate) fn new(s: S) -> Self {
        StitchState { s, hashed: 0 }
    }

    /// Hashes the whole sixteen-block groups of `C` among its first `ready` blocks that
    /// are not hashed yet, each through `agg16` (one reduction).
    ///
    /// # Safety
    /// `ct` is the start of `C`, and its first `ready` blocks are readable, written, and not
    /// written while this runs.
    #[inline(always)]
    pub(crate) unsafe fn absorb(
        &mut self,
        ct: *const u8,
        ready: usize,
        agg16: impl Fn(S, &[Block; 8], &[Block; 8]) -> S,
    ) {
        while self.hashed + 16 <= ready {
            // SAFETY: blocks hashed..hashed + 16 lie below `ready` (the loop condition), so
            // by the contract they are readable and stay unchanged while these views live;
            // `[Block; 8]` has alignment 1.
            let (a, b) = unsafe {
                let p = ct.add(self.hashed * BLOCK).cast::<[Block; 8]>();
                (&*p, &*p.add(1))
            };
            self.s = agg16(self.s, a, b);
            self.hashed += 16;
        }
    }

    /// `S` of the message by a backend's tail, `tail(s, rest, lengths)`: `rest` the bytes of
    /// `ct` (all of `C`, `ad_len` the length of `A`) after the groups [`StitchState::absorb`]
    /// hashed, and `lengths` the lengths block. `None` (nothing hashed) when `rest` is more
    /// than [`TAIL_MAX`] bytes (a whole group not absorbed).
    #[inline(always)]
    pub(crate) fn tail(
        self,
        ct: &[u8],
        ad_len: usize,
        tail: impl Fn(S, &[u8], &Block) -> S,
    ) -> Option<S> {
        let rest = ct.get(self.hashed * BLOCK..).unwrap_or_default();
        (rest.len() <= TAIL_MAX).then(|| tail(self.s, rest, &lengths_block(ad_len, ct.len())))
    }

    /// `S` of the message: the rest of `ct` (all of `C`, `ad_len` the length of `A`) after
    /// the groups [`StitchState::absorb`] hashed, then the lengths block, with the products
    /// of [`gcm_stream_one`].
    #[inline(always)]
    pub(crate) fn finish(
        self,
        ct: &[u8],
        ad_len: usize,
        agg8: impl Fn(S, &[Block; 8]) -> S,
        agg16: impl Fn(S, &[Block; 8], &[Block; 8]) -> S,
        agg_n: impl Fn(S, &[Block]) -> S,
    ) -> S {
        let rest = ct.get(self.hashed * BLOCK..).unwrap_or_default();
        let c = GcmBlocks::resume(&[], rest, ad_len, ct.len());
        gcm_stream_one::<_, true>(c, self.s, agg8, agg16, agg_n)
    }
}

/// The selected kernel, with the proof that the CPU runs it.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    Soft,
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Clmul(clmul::ClmulToken, MulVariant),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Vclmul(vclmul::VclmulToken, MulVariant),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Vclmul512(vclmul512::Vclmul512Token, MulVariant),
}

impl Kernel {
    /// The kernel for `b`, if the CPU runs it.
    fn get(b: GhashBackend) -> Option<Kernel> {
        match b {
            GhashBackend::Soft => Some(Kernel::Soft),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            GhashBackend::Clmul(v) => clmul::ClmulToken::get().map(|t| Kernel::Clmul(t, v)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            GhashBackend::Vclmul(v) => vclmul::VclmulToken::get().map(|t| Kernel::Vclmul(t, v)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            GhashBackend::Vclmul512(v) => {
                vclmul512::Vclmul512Token::get().map(|t| Kernel::Vclmul512(t, v))
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            _ => None,
        }
    }

    fn backend(self) -> GhashBackend {
        match self {
            Kernel::Soft => GhashBackend::Soft,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Clmul(_, v) => GhashBackend::Clmul(v),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(_, v) => GhashBackend::Vclmul(v),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(_, v) => GhashBackend::Vclmul512(v),
        }
    }
}

/// Hands `data` to a block-wise GHASH update as whole blocks: its whole blocks with `agg`
/// blocks per reduction, then a partial last block zero-padded (GCM's padding of `A` and `C`),
/// alone.
fn update_padded(data: &[u8], agg: Aggregation, mut update: impl FnMut(&[Block], Aggregation)) {
    let (blocks, tail) = data.as_chunks::<BLOCK>();
    update(blocks, agg);
    if !tail.is_empty() {
        let mut last = [0u8; BLOCK];
        for (d, s) in last.iter_mut().zip(tail) {
            *d = *s;
        }
        update(core::slice::from_ref(&last), Aggregation::One);
        crate::block::wipe(&mut last);
    }
}

/// The key powers, in the representation of the module docs.
///
/// `desc[8 - i] = K_i = R(H^i)·y mod P*` (`K_8` first, so that `[K_8 | K_7]`, `[K_6 | K_5]`,
/// ... are 32-byte loads for the ymm kernel); `kk[j]` holds `hi64(desc[j]) ^ lo64(desc[j])`
/// in both halves, the Karatsuba middle operand. `desc_hi` and `kk_hi` are the same for
/// `K_16..K_9` (`K_16` first), made only for the ymm and zmm kernels (zeros otherwise),
/// whose sixteen-block steps use them. `desc_hi` lies right before `desc` and `kk_hi` right
/// before `kk`, so that `K_16..K_1` and their middles are each one array in memory
/// ([`Powers::desc16`]).
#[derive(Clone)]
#[repr(C, align(32))]
pub(crate) struct Powers {
    pub(crate) desc_hi: [u128; 8],
    pub(crate) desc: [u128; 8],
    pub(crate) kk_hi: [u128; 8],
    pub(crate) kk: [u128; 8],
}

const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(Powers, desc) == offset_of!(Powers, desc_hi) + 128);
    assert!(offset_of!(Powers, kk) == offset_of!(Powers, kk_hi) + 128);
};

impl Powers {
    /// Pointers to `K_16..K_1` and to their Karatsuba middles, sixteen `u128` each (the
    /// fields `desc_hi, desc` and `kk_hi, kk`, adjacent by the layout asserted above), valid
    /// for reads while `self` is borrowed.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub(crate) fn desc16(&self) -> (*const u128, *const u128) {
        let base: *const Powers = self;
        // The pointers derive from the whole struct, so they may read across both fields.
        let at = |offset: usize| base.cast::<u8>().wrapping_add(offset).cast::<u128>();
        (
            at(core::mem::offset_of!(Powers, desc_hi)),
            at(core::mem::offset_of!(Powers, kk_hi)),
        )
    }
}

/// A GHASH key: H = E_K(0^128) as the powers H^1..H^8 (..H^16 on the ymm and zmm
/// backends), and the backend chosen for it.
///
/// Immutable once made, so it can be shared between threads; the powers are overwritten with
/// zeros on drop.
///
/// ```
/// use comb::gf128::GhashKey;
///
/// // GCM spec test case 2: H = E_0(0), C = 0388dace..., no AAD.
/// let h = 0x66e94bd4ef8a2c3b884cfa59ca342b2eu128.to_be_bytes();
/// let c = 0x0388dace60b6a392f328c2b971b2fe78u128.to_be_bytes();
/// let key = GhashKey::new(&h);
/// assert_eq!(
///     key.gcm_ghash(&[], &c),
///     0xf38cbb1ad69223dcc3457ae5b6b0f885u128.to_be_bytes()
/// );
/// ```
#[derive(Clone)]
pub struct GhashKey {
    pow: Powers,
    kernel: Kernel,
}

impl GhashKey {
    /// The key for hash subkey `h` (= E_K(0^128)) with the best backend of this CPU.
    pub fn new(h: &Block) -> GhashKey {
        let kernel = Kernel::get(GhashBackend::best()).unwrap_or(Kernel::Soft);
        GhashKey::build(h, kernel)
    }

    /// The key with a forced backend.
    ///
    /// Errors: [`Error::Unsupported`] if this CPU lacks the backend's instructions.
    pub fn with_backend(h: &Block, backend: GhashBackend) -> Result<GhashKey, Error> {
        let kernel = Kernel::get(backend).ok_or(Error::Unsupported(
            "GHASH backend needs PCLMULQDQ (clmul) or AVX2 and VPCLMULQDQ (vclmul)",
        ))?;
        Ok(GhashKey::build(h, kernel))
    }

    fn build(h: &Block, kernel: Kernel) -> GhashKey {
        let mut k1 = soft::mulx(u128::from_be_bytes(*h));
        let desc = match kernel {
            Kernel::Soft => soft::powers(k1),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Clmul(t, _) => clmul::powers(t, k1),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(t, _) => clmul::powers(t.clmul(), k1),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(t, _) => clmul::powers(t.ymm().clmul(), k1),
        };
        k1.zeroize();
        let desc_hi = match kernel {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(t, _) => clmul::powers_hi(t.clmul(), &desc),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(t, _) => clmul::powers_hi(t.ymm().clmul(), &desc),
            _ => [0; 8],
        };
        let mut pow = Powers {
            desc,
            kk: [0; 8],
            desc_hi,
            kk_hi: [0; 8],
        };
        let middles = pow.kk.iter_mut().zip(&pow.desc);
        for (kk, k) in middles.chain(pow.kk_hi.iter_mut().zip(&pow.desc_hi)) {
            let m = u128::from((k ^ (k >> 64)) as u64);
            *kk = (m << 64) | m;
        }
        GhashKey { pow, kernel }
    }

    /// The backend this key's hashing runs on.
    pub fn backend(&self) -> GhashBackend {
        self.kernel.backend()
    }

    /// Hashes `data` into `state`: `state = (state ^ X_i) · H` for each 16-byte block `X_i`,
    /// eight blocks per reduction.
    ///
    /// `data` should be whole blocks: the caller pads. A trailing partial block (the last
    /// `data.len() % 16` bytes) is zero-padded to 16 bytes, which is exactly GCM's padding of
    /// A and C, so `ghash_update(s, aad)` then `ghash_update(s, ct)` is right for any lengths;
    /// but streaming one message in pieces works only if every piece but the last is a
    /// multiple of 16 bytes.
    pub fn ghash_update(&self, state: &mut Block, data: &[u8]) {
        self.ghash_update_with(state, data, Aggregation::Eight);
    }

    /// [`GhashKey::ghash_update`] with a chosen number of blocks per reduction (all give the
    /// same result; for benchmarks and tests).
    pub fn ghash_update_with(&self, state: &mut Block, data: &[u8], agg: Aggregation) {
        update_padded(data, agg, |blocks, agg| {
            self.update_blocks(state, blocks, agg)
        });
    }

    /// Hashes whole blocks into `state`.
    pub fn ghash_blocks(&self, state: &mut Block, blocks: &[Block], agg: Aggregation) {
        self.update_blocks(state, blocks, agg);
    }

    fn update_blocks(&self, state: &mut Block, blocks: &[Block], agg: Aggregation) {
        match self.kernel {
            Kernel::Soft => soft::update(&self.pow, state, blocks, agg),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Clmul(t, v) => clmul::update(t, v, &self.pow, state, blocks, agg),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(t, v) => vclmul::update(t, v, &self.pow, state, blocks, agg),
            // Block-wise updates stay on ymm (only GCM's stream has a zmm kernel).
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(t, v) => vclmul::update(t.ymm(), v, &self.pow, state, blocks, agg),
        }
    }

    /// `GHASH_H(A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64)` of SP 800-38D §7.1
    /// step 5: the value GCM encrypts with E_K(J_0) to make the tag. Lengths are in bits,
    /// modulo 2^64 (GCM itself limits A and C far below that).
    ///
    /// One pass over the block stream `A || 0^v || C || 0^u || lengths`: groups of eight
    /// blocks (sixteen on the zmm backend) read straight from the inputs, and one final
    /// group of at most eight (the last whole blocks, the padded partial blocks and the
    /// lengths block) with a single reduction, so a short packet costs one or two reductions
    /// in all.
    pub fn gcm_ghash(&self, aad: &[u8], ct: &[u8]) -> Block {
        let mut s = [0u8; BLOCK];
        self.gcm_ghash_into(&mut s, aad, ct);
        s
    }

    /// [`GhashKey::gcm_ghash`] into `out`. The form the library uses: a block returned by
    /// value comes back in two 64-bit registers and is stored as two halves, and the caller's
    /// next 16-byte load of it stalls store forwarding (measured ~15% of GCM on 64-byte
    /// packets); the kernels store it here with one 16-byte store.
    pub fn gcm_ghash_into(&self, out: &mut Block, aad: &[u8], ct: &[u8]) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let one = core::slice::from_mut;
        match self.kernel {
            Kernel::Soft => soft::gcm(&self.pow, out, aad, ct),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Clmul(t, v) => clmul::gcm_many(t, v, &[self], |_| (aad, ct), one(out)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(t, v) => vclmul::gcm_many(t, v, &[self], |_| (aad, ct), one(out)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(t, v) => vclmul512::gcm_many(t, v, &[self], |_| (aad, ct), one(out)),
        }
    }

    /// [`GhashKey::gcm_ghash_into`] for many messages, each under its own key: `outs[i]`
    /// becomes the GHASH of message `i`, whose key is `keys[i]` and whose `(A, C)` is
    /// `data(i)` (`keys` and `outs` of one length).
    ///
    /// The messages' hashes run side by side, a lane whose message is done taking the next:
    /// one message's groups form a dependent chain through each group's reduction, and
    /// independent chains hide that latency. `data(i)` is called exactly once per message,
    /// in order, just before its hash starts, so it may first produce `C` (GCM encryption
    /// runs CTR there: the ciphertext is hashed while it is still in L1). Runs of messages
    /// whose keys share a backend go together; every result equals
    /// [`GhashKey::gcm_ghash_into`]'s.
    pub(crate) fn gcm_ghash_many<'a>(
        keys: &[&'a GhashKey],
        data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
        outs: &mut [Block],
    ) {
        debug_assert_eq!(keys.len(), outs.len());
        let count = keys.len().min(outs.len());
        let mut at = 0;
        while at < count {
            let kernel = keys[at].kernel;
            let end = at
                + keys[at..count]
                    .iter()
                    .take_while(|k| k.kernel.backend() == kernel.backend())
                    .count();
            let (keys, outs) = (&keys[at..end], &mut outs[at..end]);
            let data = |i: usize| data(at + i);
            match kernel {
                Kernel::Soft => {
                    for (i, (k, out)) in keys.iter().zip(outs.iter_mut()).enumerate() {
                        let (ad, ct) = data(i);
                        soft::gcm(&k.pow, out, ad, ct);
                    }
                }
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Clmul(t, v) => clmul::gcm_many(t, v, keys, data, outs),
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Vclmul(t, v) => vclmul::gcm_many(t, v, keys, data, outs),
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Vclmul512(t, v) => vclmul512::gcm_many(t, v, keys, data, outs),
            }
            at = end;
        }
    }

    /// [`GhashKey::gcm_ghash_many`], then `then(i, &mut outs[i])` for every message `i`,
    /// in order. On the zmm backend each message's `then` runs right after its hash and
    /// before the next message's: GCM decryption verifies and decrypts there, so that its
    /// CTR overlaps the next message's hash (see [`vclmul512`]'s `gcm_each_impl`). Elsewhere
    /// the hashes run side by side first, then every `then`. Either way the slices `data(i)`
    /// gave are no longer read once `then(i)` is called, so `then` may write their memory.
    pub(crate) fn gcm_ghash_each<'a>(
        keys: &[&'a GhashKey],
        data: impl Fn(usize) -> (&'a [u8], &'a [u8]),
        outs: &mut [Block],
        mut then: impl FnMut(usize, &mut Block),
    ) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(&&GhashKey {
            kernel: Kernel::Vclmul512(t, v),
            ..
        }) = keys.first()
        {
            if keys
                .iter()
                .all(|k| matches!(k.kernel, Kernel::Vclmul512(_, w) if w == v))
            {
                return vclmul512::gcm_each(t, v, keys, data, outs, then);
            }
        }
        Self::gcm_ghash_many(keys, data, outs);
        for (i, out) in outs.iter_mut().enumerate() {
            then(i, out);
        }
    }

    /// This key's GHASH on ymm or zmm, if that is its backend: what GCM's stitched
    /// encryption kernel hashes with.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub(crate) fn stitch(&self) -> Option<StitchGhash<'_>> {
        fn wide<T>(token: T, v: MulVariant, pow: &Powers) -> WideGhash<'_, T> {
            WideGhash {
                token,
                karatsuba: v == MulVariant::Karatsuba,
                pow,
            }
        }
        match self.kernel {
            Kernel::Vclmul(t, v) => Some(StitchGhash::Ymm(wide(t, v, &self.pow))),
            Kernel::Vclmul512(t, v) => Some(StitchGhash::Zmm(wide(t, v, &self.pow))),
            _ => None,
        }
    }

    /// `x · H` in the GCM field.
    pub fn mul_h(&self, x: &Block) -> Block {
        let mut s = *x;
        self.update_blocks(&mut s, &[[0; BLOCK]], Aggregation::One);
        s
    }

    /// `x · H^e` for a public `e`: on the PCLMULQDQ backends products by `H^8` and one by
    /// `H^(e mod 8)` ([`clmul::mul_pow`]), else `e` products by `H`.
    pub(crate) fn mul_h_pow(&self, x: &Block, e: usize) -> Block {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some((t, pow)) = self.clmul_parts() {
            return clmul::mul_pow(t, pow, x, e);
        }
        let mut s = *x;
        for _ in 0..e {
            s = self.mul_h(&s);
        }
        s
    }

    /// For a mode's own kernel that fuses products by `H` with other work (McOE-G's tweak
    /// masks between AES rounds): the PCLMULQDQ token and the powers (`clmul::k1` gives the
    /// operands of `clmul::mul1`), if this key runs on a PCLMULQDQ backend. All backends
    /// compute the same products, so the kernel may use either multiplication variant.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub(crate) fn clmul_parts(&self) -> Option<(clmul::ClmulToken, &Powers)> {
        match self.kernel {
            Kernel::Soft => None,
            Kernel::Clmul(t, _) => Some((t, &self.pow)),
            Kernel::Vclmul(t, _) => Some((t.clmul(), &self.pow)),
            Kernel::Vclmul512(t, _) => Some((t.ymm().clmul(), &self.pow)),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Chains of products by H (POET v1's field hash)

/// The multiplication variant of each chain kernel on the PCLMULQDQ backends, picked per
/// pattern rather than taken from the key (whose variant is GHASH's choice): all variants
/// give the same bits, only the speed differs. Measured on the development CPU (AMD EPYC,
/// Zen 3 class; a timing loop over the kernels, ns per block, noisy shared machine; `comb
/// bench --paper` now measures the chains by the benchmark's method, papers/000 Fig. 5):
///
/// * one dependent chain (latency-bound): schoolbook 6.9, Karatsuba 7.0-7.1. Papers/000 §6.4
///   found Karatsuba better here; on this CPU the schoolbook's two-PCLMULQDQ reduction is not
///   slower than the shift reduction, so the schoolbook, narrowly.
/// * interleaved chains and independent products (throughput-bound): on ymm the schoolbook
///   clearly (8 lanes 1.86 against 2.63; independent products 1.89 against 2.40), as §6.4
///   says; on xmm both ≈ 3.8 (Karatsuba within 2%, inside the noise).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const CHAIN_VARIANT: MulVariant = MulVariant::Schoolbook;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const LANES_VARIANT: MulVariant = MulVariant::Schoolbook;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const EACH_VARIANT: MulVariant = MulVariant::Schoolbook;

/// Chains [`mul_chains`] advances in one loop on the PCLMULQDQ backends; more lanes are split
/// into near-equal loops of at most this many. Measured (schoolbook, ns per block per lane):
/// xmm saturates from 3-4 lanes (≈ 3.8); ymm, two lanes per register, from 6 (1.85; 4 lanes
/// 2.07, 8 lanes 1.86).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const CHAIN_LANES: usize = 8;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const _: () = assert!(
    CHAIN_LANES >= 1 && CHAIN_LANES <= clmul::MAX_LANES && CHAIN_LANES <= vclmul::MAX_LANES
);

/// The input and output of blocks `[from, from + blocks)` of `io`, bounds-checked: the raw
/// ranges the chain kernels read and write.
fn chain_ptrs(io: &IoPtrs<'_>, from: usize, blocks: usize) -> (*const u8, *mut u8) {
    let end = from
        .checked_add(blocks)
        .and_then(|b| b.checked_mul(BLOCK))
        .expect("block range overflows");
    assert!(!io.dst.is_null() && end <= io.len && end <= io.out_cap);
    // SAFETY: `16·from <= end <= len, out_cap`: the offsets stay inside the input and output.
    unsafe { (io.src.add(BLOCK * from), io.dst.add(BLOCK * from)) }
}

/// One message's chain for [`mul_chains`]: `x ← x·H ⊕ M_i` with `H` of `key`, over the
/// input blocks of `io`, each `x` written to the output block of the same index.
pub(crate) struct MulLane<'a> {
    pub(crate) key: &'a GhashKey,
    /// The running value: the chain's value before block `from`, then after the last block.
    pub(crate) x: Block,
    pub(crate) io: IoPtrs<'a>,
}

/// Advances every lane's chain over its blocks `[from, from + blocks)`, all lanes together:
/// on the PCLMULQDQ backends up to [`CHAIN_LANES`] lanes per loop, one block of each lane per
/// iteration, so that many independent multiply-reduce sequences overlap (the comb idea for
/// the field multiplier). Lanes may have different keys; their buffers must be distinct.
pub(crate) fn mul_chains(lanes: &mut [MulLane<'_>], from: usize, blocks: usize) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let variant = LANES_VARIANT;
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let variant = MulVariant::Schoolbook;
    mul_chains_with(lanes, from, blocks, variant);
}

/// [`mul_chains`] with the products of the interleaved PCLMULQDQ kernels computed by
/// `variant` (the other paths keep their own; every variant gives the same bits).
fn mul_chains_with(lanes: &mut [MulLane<'_>], from: usize, blocks: usize, variant: MulVariant) {
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let _ = variant;
    if blocks == 0 || lanes.is_empty() {
        return;
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let token = |k: &GhashKey| match k.kernel {
            Kernel::Clmul(t, _) => Some(t),
            Kernel::Vclmul(t, _) => Some(t.clmul()),
            Kernel::Vclmul512(t, _) => Some(t.ymm().clmul()),
            Kernel::Soft => None,
        };
        let hw = lanes.iter().all(|l| token(l.key).is_some());
        // Two chains per ymm register when every lane's backend has VPCLMULQDQ.
        let wide = match lanes[0].key.kernel {
            Kernel::Vclmul(t, _) => Some(t),
            Kernel::Vclmul512(t, _) => Some(t.ymm()),
            _ => None,
        }
        .filter(|_| {
            lanes
                .iter()
                .all(|l| matches!(l.key.kernel, Kernel::Vclmul(..) | Kernel::Vclmul512(..)))
        });
        if let Some(t) = token(lanes[0].key).filter(|_| hw) {
            let loops = lanes.len().div_ceil(CHAIN_LANES);
            let (q, r) = (lanes.len() / loops, lanes.len() % loops);
            let mut at = 0;
            for c in 0..loops {
                let n = q + usize::from(c < r);
                let part = &mut lanes[at..at + n];
                at += n;
                let mut pows: [&Powers; CHAIN_LANES] = [&part[0].key.pow; CHAIN_LANES];
                let mut xs = [[0u8; BLOCK]; CHAIN_LANES];
                let mut src = [core::ptr::null::<u8>(); CHAIN_LANES];
                let mut dst = [core::ptr::null_mut::<u8>(); CHAIN_LANES];
                for (j, l) in part.iter().enumerate() {
                    pows[j] = &l.key.pow;
                    xs[j] = l.x;
                    (src[j], dst[j]) = chain_ptrs(&l.io, from, blocks);
                }
                // SAFETY: each lane's ranges were bounds-checked by `chain_ptrs`; a lane's
                // input and output are one buffer or two distinct ones (`IoPtrs`), and lanes
                // are distinct messages.
                unsafe {
                    let (p, x, s, d) = (&pows[..n], &mut xs[..n], &src[..n], &dst[..n]);
                    match wide {
                        Some(w) => vclmul::lanes(w, variant, p, x, s, d, blocks),
                        None => clmul::lanes(t, variant, p, x, s, d, blocks),
                    }
                }
                for (l, x) in part.iter_mut().zip(&mut xs) {
                    l.x = *x;
                }
                xs.iter_mut().for_each(crate::block::wipe);
            }
            return;
        }
    }
    // The portable backend (or a mix of backends): one lane after another.
    for l in lanes.iter_mut() {
        l.key.mul_chain(&mut l.x, &l.io, from, blocks);
    }
}

/// One chain of [`mul_chains_in_place`].
pub struct MulChain<'a> {
    /// `H`, and the backend and [`MulVariant`] its products run on.
    pub key: &'a GhashKey,
    /// The chain's value before the first block on entry, after the last one on return.
    pub x: Block,
    /// The chain's input blocks, each replaced by the chain's value after it.
    pub blocks: &'a mut [Block],
}

/// Horner chains of products by `H`, side by side and in place: for each chain, over its
/// blocks in order, `x ← x·H ⊕ B`, and the block `B` replaced by the new `x`. Chains of this
/// shape, one product and one reduction per block with nothing to aggregate, make the field
/// hashes of COBRA, POET and McOE-G (papers/000 §6.4).
///
/// The chains advance together, one block of each per step, up to eight of them per loop on
/// the PCLMULQDQ backends (two per ymm register where the key is on `Vclmul`/`Vclmul512`), so
/// the products of different chains overlap in the multiplier, where one chain alone waits
/// out each product's latency: papers/000 Fig. 5 compares the two multiplication variants in
/// exactly these two settings, and `comb bench --paper` measures them so. Chains of
/// different lengths run together while they all have blocks left, the longer ones' rest
/// after. The products use the first chain's key's [`MulVariant`] (every variant and backend
/// gives the same bits; they differ only in speed).
///
/// ```
/// use comb::gf128::{gf_mul, mul_chains_in_place, GhashKey, MulChain};
/// let h = [0x42u8; 16];
/// let key = GhashKey::new(&h);
/// let (mut a, mut b) = ([[1u8; 16]; 3], [[2u8; 16]; 5]);
/// let mut chains = [
///     MulChain { key: &key, x: [7; 16], blocks: &mut a },
///     MulChain { key: &key, x: [9; 16], blocks: &mut b },
/// ];
/// mul_chains_in_place(&mut chains);
/// // The first chain by hand: x <- x·H ^ B, three times.
/// let mut x = [7u8; 16];
/// for _ in 0..3 {
///     x = gf_mul(&x, &h);
///     x.iter_mut().for_each(|v| *v ^= 1);
/// }
/// assert_eq!(chains[0].x, x);
/// assert_eq!(a[2], x);
/// ```
pub fn mul_chains_in_place(chains: &mut [MulChain<'_>]) {
    let Some(first) = chains.first() else { return };
    let variant = match first.key.backend() {
        GhashBackend::Clmul(v) | GhashBackend::Vclmul(v) | GhashBackend::Vclmul512(v) => v,
        GhashBackend::Soft => MulVariant::Schoolbook,
    };
    for group in chains.chunks_mut(CHAIN_GROUP) {
        // Steps of equal progress over the chains that still have blocks (the comb schedule
        // without the sort: a group is at most eight chains).
        let mut done = 0;
        loop {
            let mut lanes = arrayvec::ArrayVec::<MulLane<'_>, CHAIN_GROUP>::new();
            let mut step = usize::MAX;
            for c in group.iter_mut().filter(|c| c.blocks.len() > done) {
                step = step.min(c.blocks.len() - done);
                let len = BLOCK * c.blocks.len();
                lanes.push(MulLane {
                    key: c.key,
                    x: c.x,
                    io: IoPtrs::in_place(c.blocks.as_flattened_mut(), len),
                });
            }
            if lanes.is_empty() {
                break;
            }
            mul_chains_with(&mut lanes, done, step, variant);
            let mut xs = [[0u8; BLOCK]; CHAIN_GROUP];
            for (x, l) in xs.iter_mut().zip(lanes.iter_mut()) {
                *x = l.x;
                crate::block::wipe(&mut l.x);
            }
            drop(lanes);
            for (c, x) in group.iter_mut().filter(|c| c.blocks.len() > done).zip(&xs) {
                c.x = *x;
            }
            xs.iter_mut().for_each(crate::block::wipe);
            done += step;
        }
    }
}

/// The key's backend and the number of blocks; not the chain's value or its blocks.
impl fmt::Debug for MulChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MulChain")
            .field("key", self.key)
            .field("blocks", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

/// Chains [`mul_chains_in_place`] schedules together: one loop of the interleaved kernels.
const CHAIN_GROUP: usize = 8;

impl GhashKey {
    /// The chain `x ← x·H ⊕ M_i` over the input blocks `[from, from + blocks)` of `io`, each
    /// `x` written to the output block of the same index: a Horner chain with every
    /// intermediate value kept. One call per message: `x` stays in a register throughout.
    pub(crate) fn mul_chain(&self, x: &mut Block, io: &IoPtrs<'_>, from: usize, blocks: usize) {
        if blocks == 0 {
            return;
        }
        let (src, dst) = chain_ptrs(io, from, blocks);
        // SAFETY: the ranges were bounds-checked by `chain_ptrs`; input and output are one
        // buffer or two distinct ones (`IoPtrs`).
        unsafe {
            match self.kernel {
                Kernel::Soft => soft::chain(&self.pow, x, src, dst, blocks),
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Clmul(t, _) => {
                    clmul::chain(t, CHAIN_VARIANT, &self.pow, x, src, dst, blocks)
                }
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Vclmul(t, _) => {
                    // One chain gains nothing from ymm: the xmm kernel.
                    clmul::chain(t.clmul(), CHAIN_VARIANT, &self.pow, x, src, dst, blocks)
                }
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Kernel::Vclmul512(t, _) => {
                    let t = t.ymm().clmul();
                    clmul::chain(t, CHAIN_VARIANT, &self.pow, x, src, dst, blocks)
                }
            }
        }
    }

    /// In place, `B_i ← B_i ⊕ B_{i-1}·H` with the old value of `B_{i-1}` and `B_{-1} = iv`:
    /// independent products (POET's unchaining hash), several in flight at once.
    pub(crate) fn mul_each(&self, iv: &Block, blocks: &mut [Block]) {
        match self.kernel {
            Kernel::Soft => soft::each(&self.pow, iv, blocks),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Clmul(t, _) => clmul::each(t, EACH_VARIANT, &self.pow, iv, blocks),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul(t, _) => vclmul::each(t, EACH_VARIANT, &self.pow, iv, blocks),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kernel::Vclmul512(t, _) => vclmul::each(t.ymm(), EACH_VARIANT, &self.pow, iv, blocks),
        }
    }
}

/// `a · b` in the GCM field (SP 800-38D §6.3, bit-reflected), portable and constant-time.
/// For one-off products; repeated products with one operand go faster through
/// [`GhashKey::mul_h`].
pub fn gf_mul(a: &Block, b: &Block) -> Block {
    soft::mont(u128::from_be_bytes(*a), soft::mulx(u128::from_be_bytes(*b))).to_be_bytes()
}

impl Drop for GhashKey {
    fn drop(&mut self) {
        self.pow.desc.zeroize();
        self.pow.kk.zeroize();
        self.pow.desc_hi.zeroize();
        self.pow.kk_hi.zeroize();
    }
}

impl ZeroizeOnDrop for GhashKey {}

impl fmt::Debug for GhashKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GhashKey")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ghash::universal_hash::UniversalHash;

    /// SP 800-38D §6.3 Algorithm 1, bit by bit (test only: branches on data).
    fn mul_ref(x: &Block, y: &Block) -> Block {
        let x = u128::from_be_bytes(*x);
        let mut v = u128::from_be_bytes(*y);
        let mut z = 0u128;
        for i in 0..128 {
            if (x >> (127 - i)) & 1 == 1 {
                z ^= v;
            }
            v = if v & 1 == 1 {
                (v >> 1) ^ (0xE1 << 120)
            } else {
                v >> 1
            };
        }
        z.to_be_bytes()
    }

    fn ghash_ref(h: &Block, state: &Block, data: &[u8]) -> Block {
        let mut s = *state;
        for chunk in data.chunks(16) {
            let mut x = [0u8; 16];
            x[..chunk.len()].copy_from_slice(chunk);
            let y: Block = core::array::from_fn(|i| s[i] ^ x[i]);
            s = mul_ref(&y, h);
        }
        s
    }

    fn ghash_oracle(h: &Block, data: &[u8]) -> Block {
        let mut g = ghash::GHash::new(&(*h).into());
        g.update_padded(data);
        g.finalize().into()
    }

    /// GCM's `S = GHASH(A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64)` by the `ghash`
    /// crate.
    fn gcm_ghash_oracle(h: &Block, a: &[u8], c: &[u8]) -> Block {
        let mut g = ghash::GHash::new(&(*h).into());
        g.update_padded(a);
        g.update_padded(c);
        let lens = ((a.len() as u128 * 8) << 64) | (c.len() as u128 * 8);
        g.update(&[lens.to_be_bytes().into()]);
        g.finalize().into()
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn hex16(s: &str) -> Block {
        hex(s).try_into().unwrap()
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn block(&mut self) -> Block {
            (u128::from(self.next()) << 64 | u128::from(self.next())).to_be_bytes()
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    /// Every backend this CPU runs.
    fn keys(h: &Block) -> Vec<GhashKey> {
        GhashBackend::ALL
            .iter()
            .filter_map(|&b| GhashKey::with_backend(h, b).ok())
            .collect()
    }

    const AGGS: [Aggregation; 3] = [Aggregation::One, Aggregation::Four, Aggregation::Eight];

    /// `data` hashed into the state `init` with `agg`.
    fn hashed(k: &GhashKey, init: Block, data: &[u8], agg: Aggregation) -> Block {
        let mut s = init;
        k.ghash_update_with(&mut s, data, agg);
        s
    }

    #[test]
    fn reference_multiply_matches_spec_products() {
        // McGrew–Viega test case 2 X1 = C1·H, test case 3 X1, test case 4 X1 = A1·H.
        let h2 = hex16("66e94bd4ef8a2c3b884cfa59ca342b2e");
        let h3 = hex16("b83b533708bf535d0aa6e52980d53b78");
        let cases = [
            (
                "0388dace60b6a392f328c2b971b2fe78",
                h2,
                "5e2ec746917062882c85b0685353deb7",
            ),
            (
                "42831ec2217774244b7221b784d0d49c",
                h3,
                "59ed3f2bb1a0aaa07c9f56c6a504647b",
            ),
            (
                "feedfacedeadbeeffeedfacedeadbeef",
                h3,
                "ed56aaf8a72d67049fdb9228edba1322",
            ),
        ];
        for (x, h, want) in cases {
            assert_eq!(mul_ref(&hex16(x), &h), hex16(want));
            assert_eq!(gf_mul(&hex16(x), &h), hex16(want));
            for k in keys(&h) {
                assert_eq!(k.mul_h(&hex16(x)), hex16(want), "{:?}", k.backend());
            }
        }
        // The field's one is the block 80 00 .. 00.
        let mut one = [0u8; 16];
        one[0] = 0x80;
        assert_eq!(gf_mul(&one, &h3), h3);
        assert_eq!(gf_mul(&h3, &one), h3);
    }

    /// The GCM spec's GHASH intermediate values X_i (after each block) and GHASH(H, A, C).
    #[test]
    fn gcm_spec_test_cases_2_to_4() {
        struct Case {
            h: &'static str,
            a: &'static str,
            c: &'static str,
            xs: &'static [&'static str],
            ghash: &'static str,
        }
        let c3 = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
                  21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985";
        let cases = [
            Case {
                h: "66e94bd4ef8a2c3b884cfa59ca342b2e",
                a: "",
                c: "0388dace60b6a392f328c2b971b2fe78",
                xs: &["5e2ec746917062882c85b0685353deb7"],
                ghash: "f38cbb1ad69223dcc3457ae5b6b0f885",
            },
            Case {
                h: "b83b533708bf535d0aa6e52980d53b78",
                a: "",
                c: c3,
                xs: &[
                    "59ed3f2bb1a0aaa07c9f56c6a504647b",
                    "b714c9048389afd9f9bc5c1d4378e052",
                    "47400c6577b1ee8d8f40b2721e86ff10",
                    "4796cf49464704b5dd91f159bb1b7f95",
                ],
                ghash: "7f1b32b81b820d02614f8895ac1d4eac",
            },
            Case {
                h: "b83b533708bf535d0aa6e52980d53b78",
                a: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                c: &c3[..120],
                xs: &[
                    "ed56aaf8a72d67049fdb9228edba1322",
                    "cd47221ccef0554ee4bb044c88150352",
                    "54f5e1b2b5a8f9525c23924751a3ca51",
                    "324f585c6ffc1359ab371565d6c45f93",
                    "ca7dd446af4aa70cc3c0cd5abba6aa1c",
                    "1590df9b2eb6768289e57d56274c8570",
                ],
                ghash: "698e57f70e6ecc7fd9463b7260a9ae5f",
            },
        ];
        for case in &cases {
            let h = hex16(case.h);
            let (a, c) = (hex(case.a), hex(case.c));
            // The padded blocks of A then C, one at a time.
            let mut blocks: Vec<Block> = Vec::new();
            for part in [&a, &c] {
                for chunk in part.chunks(16) {
                    let mut b = [0u8; 16];
                    b[..chunk.len()].copy_from_slice(chunk);
                    blocks.push(b);
                }
            }
            assert_eq!(blocks.len(), case.xs.len());
            for k in keys(&h) {
                let mut s = [0u8; 16];
                for (b, x) in blocks.iter().zip(case.xs) {
                    k.ghash_update(&mut s, b);
                    assert_eq!(s, hex16(x), "{:?}", k.backend());
                }
                assert_eq!(k.gcm_ghash(&a, &c), hex16(case.ghash), "{:?}", k.backend());
                for agg in AGGS {
                    let mut s = [0u8; 16];
                    k.ghash_blocks(&mut s, &blocks, agg);
                    assert_eq!(&s, &hex16(case.xs[case.xs.len() - 1]), "{agg:?}");
                }
            }
            let mut lens = [0u8; 16];
            lens[..8].copy_from_slice(&(a.len() as u64 * 8).to_be_bytes());
            lens[8..].copy_from_slice(&(c.len() as u64 * 8).to_be_bytes());
            let flat: Vec<u8> = blocks.iter().flatten().copied().chain(lens).collect();
            assert_eq!(ghash_oracle(&h, &flat), hex16(case.ghash));
        }
    }

    /// All backends, both variants, all aggregations, against the RustCrypto oracle and the
    /// bit-serial reference, for 0..=300 blocks (every remainder class of 8 and 4).
    #[test]
    fn backends_agree_with_oracle_on_random_lengths() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let backends: Vec<GhashBackend> = keys(&[1; 16]).iter().map(|k| k.backend()).collect();
        assert!(backends.contains(&GhashBackend::Soft));
        for n in 0..=300usize {
            let h = rng.block();
            let data = rng.bytes(16 * n);
            let want = ghash_oracle(&h, &data);
            if n <= 40 || n % 7 == 0 {
                assert_eq!(ghash_ref(&h, &[0; 16], &data), want, "n={n}");
            }
            let init = rng.block();
            let want_init = ghash_ref(&h, &init, &data);
            for k in keys(&h) {
                for agg in AGGS {
                    let s = hashed(&k, [0; 16], &data, agg);
                    assert_eq!(s, want, "n={n} {:?} {agg:?}", k.backend());
                    if n % 5 == 0 {
                        let s = hashed(&k, init, &data, agg);
                        assert_eq!(s, want_init, "n={n} {:?} {agg:?} init", k.backend());
                    }
                }
            }
        }
    }

    #[test]
    fn aggregated_paths_match_block_by_block() {
        let mut rng = Rng(0xDEAD_BEEF_1234_5678);
        for _ in 0..20 {
            let h = rng.block();
            for k in keys(&h) {
                for n in [1usize, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 64, 67] {
                    let data = rng.bytes(16 * n);
                    let init = rng.block();
                    let one = data
                        .chunks(16)
                        .fold(init, |s, b| hashed(&k, s, b, Aggregation::One));
                    for agg in [Aggregation::Four, Aggregation::Eight] {
                        let s = hashed(&k, init, &data, agg);
                        assert_eq!(s, one, "n={n} {:?} {agg:?}", k.backend());
                    }
                }
            }
        }
    }

    #[test]
    fn streaming_at_block_boundaries_and_partial_tail() {
        let mut rng = Rng(77);
        let h = rng.block();
        let data = rng.bytes(16 * 37 + 5);
        let want = ghash_oracle(&h, &data);
        for k in keys(&h) {
            for cut in [0usize, 1, 7, 8, 13, 36, 37] {
                let mut s = [0u8; 16];
                k.ghash_update(&mut s, &data[..16 * cut]);
                k.ghash_update(&mut s, &data[16 * cut..]);
                assert_eq!(s, want, "cut={cut} {:?}", k.backend());
            }
            // A partial-only input is one zero-padded block.
            let mut s = [0u8; 16];
            k.ghash_update(&mut s, &data[..5]);
            assert_eq!(s, ghash_oracle(&h, &data[..5]));
        }
    }

    #[test]
    fn gcm_ghash_matches_oracle_for_odd_lengths() {
        let mut rng = Rng(4242);
        // Around the sixteen-block steps of the zmm kernel too: streams just under, at and
        // over 256 bytes, pairs in A, in C, and across the A/C boundary after a partial block.
        let cases = [
            (0, 0),
            (1, 0),
            (0, 1),
            (20, 60),
            (17, 129),
            (100, 1000),
            (0, 255),
            (0, 256),
            (0, 257),
            (256, 0),
            (255, 1),
            (16, 512),
            (300, 700),
            (13, 4101),
            (4096, 496),
        ];
        for (alen, clen) in cases {
            let h = rng.block();
            let (a, c) = (rng.bytes(alen), rng.bytes(clen));
            let want = gcm_ghash_oracle(&h, &a, &c);
            for k in keys(&h) {
                assert_eq!(k.gcm_ghash(&a, &c), want, "{:?}", k.backend());
            }
        }
    }

    /// Every length of `C` up to two sixteen-block steps and a partial third, so every size
    /// of the zmm tail (whole and partial last blocks, with and without a fallback for more
    /// than fifteen blocks) behind 0, 1 and 2 steps, with several lengths of `A`.
    #[test]
    fn gcm_ghash_matches_oracle_for_every_short_length() {
        let mut rng = Rng(4343);
        let h = rng.block();
        let ks = keys(&h);
        let c = rng.bytes(16 * 40);
        for (n, clen) in (0..=c.len()).enumerate() {
            let a = rng.bytes([0, 13, 16, 33][n % 4]);
            let want = gcm_ghash_oracle(&h, &a, &c[..clen]);
            for k in &ks {
                let got = k.gcm_ghash(&a, &c[..clen]);
                assert_eq!(got, want, "{:?} A {} C {clen}", k.backend(), a.len());
            }
        }
    }

    /// Every size of a message's final group (1..=8 blocks, the lengths block last), after
    /// no group, one group of eight and one of sixteen, with whole and partial last blocks
    /// and the A/C boundary inside the group: each backend's single and many-message GHASH
    /// equal the `ghash` crate's.
    #[test]
    fn every_final_group_size_matches_oracle() {
        let mut rng = Rng(9090);
        let h = rng.block();
        let ks = keys(&h);
        for before in [0usize, 8, 16] {
            for n in 1..=8usize {
                // `n - 1` data blocks in the final group: whole, or the last one partial,
                // or split between A and C.
                let data = 16 * (before + n - 1);
                for (alen, clen) in [
                    (0, data),
                    (0, data.saturating_sub(5)),
                    (data / 2 + 3, data / 2 - data / 2 % 16),
                ] {
                    let (a, c) = (rng.bytes(alen), rng.bytes(clen));
                    let want = gcm_ghash_oracle(&h, &a, &c);
                    for k in &ks {
                        assert_eq!(
                            k.gcm_ghash(&a, &c),
                            want,
                            "{alen}+{clen}, {:?}",
                            k.backend()
                        );
                        // Two messages, so that the many-message path interleaves lanes.
                        let mut outs = [[0u8; 16]; 2];
                        GhashKey::gcm_ghash_many(&[k, k], |_| (&a[..], &c[..]), &mut outs);
                        assert_eq!(outs, [want; 2], "{alen}+{clen}, {:?}", k.backend());
                    }
                }
            }
        }
    }

    /// The interleaved many-message GHASH equals one message at a time, on every backend and
    /// for a mix of backends and keys in one call: lengths of AD and ciphertext around the
    /// group and block boundaries, message counts below, at and above the lane count, and
    /// `data` called exactly once per message, in order.
    #[test]
    fn gcm_ghash_many_matches_one_at_a_time() {
        let mut rng = Rng(777);
        let lens = [
            0usize, 1, 15, 16, 17, 100, 127, 128, 129, 143, 255, 256, 257, 511, 1456,
        ];
        let per_h: Vec<Vec<GhashKey>> = (0..3).map(|_| keys(&rng.block())).collect();
        for count in [0usize, 1, 2, 3, 5, 9, 40] {
            let msgs: Vec<(Vec<u8>, Vec<u8>)> = (0..count)
                .map(|i| {
                    let a = lens[(i * 7 + count) % lens.len()] % 300;
                    let c = lens[(i * 5 + 3 * count) % lens.len()];
                    (rng.bytes(a), rng.bytes(c))
                })
                .collect();
            // Each backend for all messages, then keys and backends mixed.
            let mut sets: Vec<Vec<&GhashKey>> = per_h[0].iter().map(|k| vec![k; count]).collect();
            sets.push(
                (0..count)
                    .map(|i| {
                        let ks = &per_h[i % 3];
                        &ks[(i / 3) % ks.len()]
                    })
                    .collect(),
            );
            for ks in sets {
                let calls = core::cell::RefCell::new(Vec::new());
                let mut outs = vec![[0xEEu8; 16]; count];
                GhashKey::gcm_ghash_many(
                    &ks,
                    |i| {
                        calls.borrow_mut().push(i);
                        (&msgs[i].0[..], &msgs[i].1[..])
                    },
                    &mut outs,
                );
                assert_eq!(*calls.borrow(), (0..count).collect::<Vec<_>>());
                for (i, ((a, c), k)) in msgs.iter().zip(&ks).enumerate() {
                    let want = k.gcm_ghash(a, c);
                    assert_eq!(outs[i], want, "count {count}, msg {i}, {:?}", k.backend());
                }

                // gcm_ghash_each: the same hashes, and `then` once per message, in order,
                // after that message's hash is final (on zmm before the next one starts).
                let events = core::cell::RefCell::new(Vec::new());
                let mut each = vec![[0xEEu8; 16]; count];
                GhashKey::gcm_ghash_each(
                    &ks,
                    |i| {
                        events.borrow_mut().push((i, None));
                        (&msgs[i].0[..], &msgs[i].1[..])
                    },
                    &mut each,
                    |i, s| events.borrow_mut().push((i, Some(*s))),
                );
                assert_eq!(each, outs, "count {count}");
                let events = events.into_inner();
                let thens: Vec<(usize, Block)> =
                    events.iter().filter_map(|&(i, s)| Some((i, s?))).collect();
                assert_eq!(thens, outs.iter().copied().enumerate().collect::<Vec<_>>());
                if ks.iter().all(|k| k.backend() == ks[0].backend())
                    && matches!(
                        ks.first().map(|k| k.backend()),
                        Some(GhashBackend::Vclmul512(_))
                    )
                {
                    let order: Vec<_> = (0..count).flat_map(|i| [(i, false), (i, true)]).collect();
                    let got: Vec<_> = events.iter().map(|&(i, s)| (i, s.is_some())).collect();
                    assert_eq!(got, order, "zmm: each message's then before the next hash");
                }
            }
        }
    }

    #[test]
    fn backend_selection() {
        let h = [7u8; 16];
        let best = GhashBackend::best();
        assert!(best.is_supported());
        assert_eq!(GhashKey::new(&h).backend(), best);
        assert!(GhashKey::with_backend(&h, GhashBackend::Soft).is_ok());
        for &b in GhashBackend::ALL {
            assert_eq!(GhashKey::with_backend(&h, b).is_ok(), b.is_supported());
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("vpclmulqdq") {
            let zmm = std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw");
            if zmm {
                assert!(matches!(best, GhashBackend::Vclmul512(_)));
            } else {
                assert!(matches!(best, GhashBackend::Vclmul(_)));
            }
        }
        let shown = format!("{:?}", GhashKey::new(&h));
        assert!(shown.starts_with("GhashKey") && !shown.contains("desc"));
    }

    /// `n` blocks of the chain `x ← x·H ⊕ M_i` by repeated `mul_h` (the reference).
    fn chain_ref(k: &GhashKey, x: &Block, m: &[Block]) -> (Block, Vec<Block>) {
        let mut x = *x;
        let out = m
            .iter()
            .map(|b| {
                x = xor16(&k.mul_h(&x), b);
                x
            })
            .collect();
        (x, out)
    }

    fn xor16(a: &Block, b: &Block) -> Block {
        core::array::from_fn(|i| a[i] ^ b[i])
    }

    fn flat(b: &[Block]) -> Vec<u8> {
        b.iter().flatten().copied().collect()
    }

    #[test]
    fn mul_h_matches_gf_mul_on_every_backend() {
        let mut rng = Rng(5);
        for _ in 0..50 {
            let (h, x) = (rng.block(), rng.block());
            for k in keys(&h) {
                assert_eq!(k.mul_h(&x), gf_mul(&x, &h), "{:?}", k.backend());
            }
        }
    }

    /// `mul_h_pow` against repeated `gf_mul` by `H`, on every backend, for exponents
    /// 0..=50 (whole `H^8` steps with and without a remainder).
    #[test]
    fn mul_h_pow_matches_repeated_products() {
        let mut rng = Rng(17);
        let h = rng.block();
        let x = rng.block();
        let mut want = x;
        for e in 0..=50usize {
            for k in keys(&h) {
                assert_eq!(k.mul_h_pow(&x, e), want, "e={e} {:?}", k.backend());
            }
            want = gf_mul(&want, &h);
        }
    }

    /// `mul_chain` from block `from` for `n` blocks, in place and out of place, against
    /// repeated `mul_h`; bytes outside the range untouched.
    #[test]
    fn mul_chain_matches_repeated_mul_h() {
        let mut rng = Rng(11);
        for n in 0..=20usize {
            let h = rng.block();
            let x0 = rng.block();
            let m: Vec<Block> = (0..n + 2).map(|_| rng.block()).collect();
            let from = 1;
            let (want_x, want) = chain_ref(&keys(&h)[0], &x0, &m[from..from + n]);
            for k in keys(&h) {
                let input = flat(&m);
                let mut expect = input.clone();
                expect[16 * from..16 * (from + n)].copy_from_slice(&flat(&want));
                // In place.
                let mut buf = input.clone();
                let mut x = x0;
                let len = buf.len();
                k.mul_chain(&mut x, &IoPtrs::in_place(&mut buf, len), from, n);
                assert_eq!((x, &buf), (want_x, &expect), "n={n} {:?}", k.backend());
                // Out of place: output outside the range keeps its filler.
                let mut out = vec![0xA5u8; input.len()];
                let mut x = x0;
                k.mul_chain(&mut x, &IoPtrs::copy(&input, &mut out), from, n);
                assert_eq!(x, want_x);
                assert_eq!(&out[16 * from..16 * (from + n)], &flat(&want)[..]);
                assert!(out[..16 * from].iter().all(|&b| b == 0xA5));
                assert!(out[16 * (from + n)..].iter().all(|&b| b == 0xA5));
            }
        }
    }

    /// `mul_chains` over 1..=19 lanes (one loop and split ones), each lane its own key and
    /// buffer, against each lane's chain by `mul_h`; and lanes of mixed backends.
    #[test]
    fn mul_chains_match_repeated_mul_h() {
        let mut rng = Rng(12);
        let backends: Vec<GhashBackend> = keys(&[1; 16]).iter().map(|k| k.backend()).collect();
        for lanes in 1..=19usize {
            for (bi, &b) in backends.iter().chain([&GhashBackend::Soft]).enumerate() {
                // The last round mixes the backends lane by lane.
                let mixed = bi == backends.len();
                let n = 1 + lanes % 5;
                let hs: Vec<Block> = (0..lanes).map(|_| rng.block()).collect();
                let ks: Vec<GhashKey> = hs
                    .iter()
                    .enumerate()
                    .map(|(j, h)| {
                        let b = if mixed {
                            backends[j % backends.len()]
                        } else {
                            b
                        };
                        GhashKey::with_backend(h, b).unwrap()
                    })
                    .collect();
                let x0: Vec<Block> = (0..lanes).map(|_| rng.block()).collect();
                let ms: Vec<Vec<Block>> = (0..lanes)
                    .map(|_| (0..n + 1).map(|_| rng.block()).collect())
                    .collect();
                let mut bufs: Vec<Vec<u8>> = ms.iter().map(|m| flat(m)).collect();
                let mut outs: Vec<Vec<u8>> = ms.iter().map(|m| vec![0; 16 * m.len()]).collect();
                let mut ls: Vec<MulLane<'_>> = Vec::new();
                for (j, (buf, out)) in bufs.iter_mut().zip(outs.iter_mut()).enumerate() {
                    // Odd lanes out of place.
                    let io = if j % 2 == 0 {
                        let len = buf.len();
                        IoPtrs::in_place(buf, len)
                    } else {
                        IoPtrs::copy(buf, out)
                    };
                    ls.push(MulLane {
                        key: &ks[j],
                        x: x0[j],
                        io,
                    });
                }
                // Block 0 then blocks 1..=n, as two windows.
                mul_chains(&mut ls, 0, 1);
                mul_chains(&mut ls, 1, n);
                let got_x: Vec<Block> = ls.iter().map(|l| l.x).collect();
                drop(ls);
                for j in 0..lanes {
                    let (want_x, want) = chain_ref(&ks[j], &x0[j], &ms[j]);
                    let got = if j % 2 == 0 { &bufs[j] } else { &outs[j] };
                    assert_eq!(got_x[j], want_x, "lanes={lanes} j={j} {b:?} mixed={mixed}");
                    assert_eq!(got, &flat(&want), "lanes={lanes} j={j} {b:?}");
                }
            }
        }
    }

    /// The public chains against `gf_mul` block by block: every backend and variant, 0..=11
    /// chains (more than one loop's eight), unequal lengths (empty ones included), one key
    /// shared or one per chain.
    #[test]
    fn mul_chains_in_place_matches_gf_mul() {
        let mut rng = Rng(0x5eed_c4a1);
        let backends = GhashBackend::ALL
            .iter()
            .copied()
            .filter(|b| b.is_supported());
        for b in backends {
            for n in 0..=11usize {
                for shared in [false, true] {
                    let hs: Vec<Block> = (0..n).map(|_| rng.block()).collect();
                    let hs: Vec<Block> = if shared {
                        vec![hs.first().copied().unwrap_or_default(); n]
                    } else {
                        hs
                    };
                    let ks: Vec<GhashKey> = hs
                        .iter()
                        .map(|h| GhashKey::with_backend(h, b).unwrap())
                        .collect();
                    let x0: Vec<Block> = (0..n).map(|_| rng.block()).collect();
                    let ms: Vec<Vec<Block>> = (0..n)
                        .map(|j| {
                            let len = if j == 2 { 0 } else { rng.next() as usize % 40 };
                            (0..len).map(|_| rng.block()).collect()
                        })
                        .collect();
                    let mut bufs = ms.clone();
                    let mut chains: Vec<MulChain<'_>> = ks
                        .iter()
                        .zip(&x0)
                        .zip(bufs.iter_mut())
                        .map(|((key, &x), blocks)| MulChain { key, x, blocks })
                        .collect();
                    mul_chains_in_place(&mut chains);
                    let got_x: Vec<Block> = chains.iter().map(|c| c.x).collect();
                    drop(chains);
                    for j in 0..n {
                        let mut x = x0[j];
                        let want: Vec<Block> = ms[j]
                            .iter()
                            .map(|m| {
                                x = xor16(&gf_mul(&x, &hs[j]), m);
                                x
                            })
                            .collect();
                        assert_eq!(bufs[j], want, "{b:?} n={n} shared={shared} chain {j}");
                        assert_eq!(got_x[j], x, "{b:?} n={n} shared={shared} chain {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn mul_each_matches_mul_h() {
        let mut rng = Rng(13);
        for n in 0..=21usize {
            let (h, iv) = (rng.block(), rng.block());
            let m: Vec<Block> = (0..n).map(|_| rng.block()).collect();
            let k0 = GhashKey::with_backend(&h, GhashBackend::Soft).unwrap();
            let want: Vec<Block> = (0..n)
                .map(|i| xor16(&m[i], &k0.mul_h(if i == 0 { &iv } else { &m[i - 1] })))
                .collect();
            for k in keys(&h) {
                let mut b = m.clone();
                k.mul_each(&iv, &mut b);
                assert_eq!(b, want, "n={n} {:?}", k.backend());
            }
        }
    }

    /// Both multiplication variants of the xmm chain kernels (the dispatch uses one each).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[test]
    fn chain_kernels_agree_in_both_variants() {
        let Some(t) = clmul::ClmulToken::get() else {
            return;
        };
        let mut rng = Rng(14);
        for v in [MulVariant::Karatsuba, MulVariant::Schoolbook] {
            for lanes in 1..=clmul::MAX_LANES {
                let n = 9;
                let ks: Vec<GhashKey> = (0..lanes)
                    .map(|_| GhashKey::with_backend(&rng.block(), GhashBackend::Clmul(v)).unwrap())
                    .collect();
                let x0: Vec<Block> = (0..lanes).map(|_| rng.block()).collect();
                let ms: Vec<Vec<Block>> = (0..lanes)
                    .map(|_| (0..n).map(|_| rng.block()).collect())
                    .collect();
                let mut bufs: Vec<Vec<u8>> = ms.iter().map(|m| flat(m)).collect();
                let pows: Vec<&Powers> = ks.iter().map(|k| &k.pow).collect();
                let mut xs = x0.clone();
                let src: Vec<*const u8> = bufs.iter().map(|b| b.as_ptr()).collect();
                let dst: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
                // SAFETY: each buffer is 16·n bytes, in place, distinct per lane.
                unsafe { clmul::lanes(t, v, &pows, &mut xs, &src, &dst, n) };
                let wide = vclmul::VclmulToken::get().map(|w| {
                    let mut wbufs: Vec<Vec<u8>> = ms.iter().map(|m| flat(m)).collect();
                    let mut wxs = x0.clone();
                    let src: Vec<*const u8> = wbufs.iter().map(|b| b.as_ptr()).collect();
                    let dst: Vec<*mut u8> = wbufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
                    // SAFETY: as above.
                    unsafe { vclmul::lanes(w, v, &pows, &mut wxs, &src, &dst, n) };
                    (w, wxs, wbufs)
                });
                for j in 0..lanes {
                    let (want_x, want) = chain_ref(&ks[j], &x0[j], &ms[j]);
                    assert_eq!((xs[j], &bufs[j]), (want_x, &flat(&want)), "{v:?} {lanes}");
                    if let Some((_, wxs, wbufs)) = &wide {
                        assert_eq!((wxs[j], &wbufs[j]), (want_x, &flat(&want)), "ymm {v:?}");
                    }
                    let mut x = x0[j];
                    let mut buf = flat(&ms[j]);
                    let p = buf.as_mut_ptr();
                    // SAFETY: 16·n bytes, in place.
                    unsafe { clmul::chain(t, v, &ks[j].pow, &mut x, p, p, n) };
                    assert_eq!((x, &buf), (want_x, &flat(&want)), "{v:?}");
                    let mut b = ms[j].clone();
                    clmul::each(t, v, &ks[j].pow, &x0[j], &mut b);
                    let want_each: Vec<Block> = (0..n)
                        .map(|i| {
                            let prev = if i == 0 { &x0[j] } else { &ms[j][i - 1] };
                            xor16(&ms[j][i], &ks[j].mul_h(prev))
                        })
                        .collect();
                    assert_eq!(b, want_each, "{v:?}");
                    if let Some((w, _, _)) = &wide {
                        // Lengths 0..=9: every remainder of the ymm kernel's groups of 4.
                        for len in 0..=n {
                            let mut b = ms[j][..len].to_vec();
                            vclmul::each(*w, v, &ks[j].pow, &x0[j], &mut b);
                            assert_eq!(b, want_each[..len], "ymm {v:?} {len}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gf_mul_matches_reference() {
        let mut rng = Rng(99);
        for _ in 0..300 {
            let (a, b) = (rng.block(), rng.block());
            assert_eq!(gf_mul(&a, &b), mul_ref(&a, &b));
        }
        let all = [0xff; 16];
        assert_eq!(gf_mul(&all, &all), mul_ref(&all, &all));
    }
}
