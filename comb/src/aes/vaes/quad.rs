//! CLOC's and SILC's CFB+MAC step on zmm registers, four lanes per register: the
//! counterpart of [`super::cfb_mac_lanes_vl`] for CPUs whose VAES runs a zmm register at the
//! rate of a ymm one ([`crate::cpu::zmm_aes_full_rate`]).
//!
//! On AMD Zen 5 (family 26) a 512-bit VAESENC issues twice per cycle, as a 256-bit one
//! does, with latency 4 (a loop of twelve independent VAESENC issued at 0.35 TSC ticks, 0.47
//! core cycles, per instruction on xmm, ymm and zmm alike): four blocks per instruction
//! where ymm has two. Sixteen lanes are 32 chains (each lane a CFB and a MAC chain), eight
//! zmm registers, exactly the 2 × 4 in flight that fill the unit; on ymm they are sixteen
//! registers, twice the instructions for the same blocks. On Intel a zmm VAESENC issues once
//! per cycle (the same blocks per cycle as ymm) and on Zen 4 it runs as two halves; there
//! the ymm kernel, measured on Intel, stays: this one was measured only on Zen 5.
//!
//! Lanes of one key take its round keys broadcast; lanes of several keys take the group's
//! rows of four keys ([`QuadKey`], assembled once per group by
//! [`GroupKeys`](super::GroupKeys)), a row a memory operand of both chains' VAESENC. Until
//! stop 75 they took the ymm kernels' rows of two keys, joined into a zmm row at each use: a
//! load and an insert per register and round, and the insert shares the AES units' pipes.
//! Measured against that (a throw-away patch of the benchmark giving message `i` of each
//! batch key `i mod 16`; comb engine, batches of 64, encryption, TSC cycles/byte, alternated
//! runs): CLOC on the realistic mix 0.459-0.461 -> 0.365-0.370, SILC 0.463-0.467 ->
//! 0.368-0.378 (two quiet pairs); CLOC at 64, 1456 and 8192 bytes 1.92, 0.313 and 0.257 ->
//! 1.85, 0.220 and 0.174 (one quiet pair; three pairs in a busy spell gave ratios 0.86-0.96,
//! 0.66-0.74 and 0.61-0.69). With one key, unchanged: CLOC 0.312-0.319 and SILC 0.317-0.324
//! on the mix either way.
//!
//! Measured on that Zen 5 VM (`comb bench`, comb engine, batches of 64, alternated runs
//! against the build before, time over ECB's in the same run):
//! * One key: CLOC encryption on the realistic mix 2.45-2.60 -> 2.14-2.23 (three pairs),
//!   1456-byte messages 2.18-2.20 -> 1.61-1.62, but 64-byte messages 2.55-2.61 -> 2.70-2.76;
//!   decryption's keystream pass on the mix 2.91-2.99 -> 2.41-2.47 (two pairs), 1456 bytes
//!   2.58-2.60 -> 1.93-1.94, 64 bytes 3.07-3.09 -> 2.99-3.04. The 64-byte loss is not this
//!   kernel's: in one build, groups of messages of at most 96 bytes sent back to the ymm
//!   kernel ran no faster (core cycles per message at 32, 64 and 96 bytes 130-132, 140-142
//!   and 151-153 against 130, 136 and 143 here; the quiet two of three alternated runs).
//! * A key per job (a throw-away patch of the benchmark giving each of the 64 jobs its own
//!   key; the realistic mix, three pairs): CLOC encryption 2.48-2.52 -> 2.37-2.49, decryption
//!   2.68-2.86 -> 2.40-2.50; SILC encryption 2.52-2.54 -> 2.39-2.50, decryption 2.69-2.84 ->
//!   2.47-2.60.
//!
//! The first version took the loaded blocks from a closure LLVM kept out of line, and the
//! states through references it stored back every step: no faster than ymm on the mix.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use core::marker::PhantomData;

use super::{QuadKey, FOLD};
use crate::aes::lanes::FIX1_BIT;
use crate::aes::{AesKey, ChainLane};
use crate::block::{Block, BLOCK};
use crate::cpu::VaesZmmToken;

/// Registers of one [`cfb_mac_quads`] call: 16 lanes, eight zmm states (a CFB and a MAC
/// register per four lanes), the 2 × 4 in flight that fill Zen 5's AES units. Six (24 lanes,
/// P = 24) ran no faster than four on the realistic mix (P = 16 0.352, P = 20 0.354, P = 24
/// 0.357 TSC cycles/byte, one run).
pub(crate) const CFB_MAC_QUADS: usize = 4;

/// The four lanes of a register: where they read and write, and which are real. A slot
/// past the lanes, or whose lane has ended, is a shadow of slot 0 (its pointers): computed
/// from valid memory, never stored. A register runs only while its slot 0 is live.
#[derive(Clone, Copy)]
struct Quad<'a> {
    src: [*const u8; 4],
    dst: [*mut u8; 4],
    live: [bool; 4],
    _life: PhantomData<&'a mut [u8]>,
}

/// The lane whose memory slot `s` of register `r` reads at the start, of `n` lanes: lane
/// `4r + s`, or for a slot past the lanes (a shadow) the register's first lane, the last lane
/// for a register past them all (never run).
#[inline(always)]
fn slot_lane(n: usize, r: usize, s: usize) -> usize {
    let j = 4 * r + s;
    if j < n {
        j
    } else {
        (4 * r).min(n - 1)
    }
}

impl<'a> Quad<'a> {
    /// Registers `0..N` of `lanes` (at least one lane): lanes `4r..4r + 4`, slots past the
    /// lanes shadows of the register's first lane. (Registers past the lanes, which the
    /// kernel's fixed arrays have and never run, read the last lane.)
    #[inline(always)]
    fn of_lanes<const N: usize>(lanes: &[ChainLane<'a>]) -> [Quad<'a>; N] {
        let n = lanes.len();
        core::array::from_fn(|r| {
            let slot = |s: usize| slot_lane(n, r, s);
            Quad {
                src: core::array::from_fn(|s| lanes[slot(s)].io.src),
                dst: core::array::from_fn(|s| lanes[slot(s)].io.dst),
                live: core::array::from_fn(|s| 4 * r + s < n),
                _life: PhantomData,
            }
        })
    }

    /// Makes slot `s` (its lane has ended) a shadow of slot 0, in place.
    #[inline(always)]
    fn drop_slot(&mut self, s: usize) {
        self.src[s] = self.src[0];
        self.dst[s] = self.dst[0];
        self.live[s] = false;
    }

    /// Block `i` of the four slots. Caller guarantees `16 * (i + 1)` is within every slot's
    /// input.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(&self, i: usize) -> __m512i {
        let at = |s: usize| self.src[s].wrapping_add(BLOCK * i).cast::<__m128i>();
        // SAFETY: by the caller's guarantee each 16-byte read is inside its input.
        unsafe {
            let v = _mm512_castsi128_si512(_mm_loadu_si128(at(0)));
            let v = _mm512_inserti32x4::<1>(v, _mm_loadu_si128(at(1)));
            let v = _mm512_inserti32x4::<2>(v, _mm_loadu_si128(at(2)));
            _mm512_inserti32x4::<3>(v, _mm_loadu_si128(at(3)))
        }
    }

    /// Block `i` of the four slots under a byte mask (bits `16s..16s + 16` of `mask`: slot
    /// `s`'s bytes), masked-off bytes zero and not read. Caller guarantees the unmasked bytes
    /// are within the inputs.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw")]
    unsafe fn load_masked(&self, i: usize, mask: u64) -> __m512i {
        let at = |s: usize| self.src[s].wrapping_add(BLOCK * i).cast::<__m128i>();
        let m = |s: usize| (mask >> (16 * s)) as u16;
        // SAFETY: masked-off bytes are neither read nor can they fault; the others are inside
        // the inputs (caller).
        unsafe {
            let v = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(m(0), at(0).cast()));
            let v = _mm512_inserti32x4::<1>(v, _mm_maskz_loadu_epi8(m(1), at(1).cast()));
            let v = _mm512_inserti32x4::<2>(v, _mm_maskz_loadu_epi8(m(2), at(2).cast()));
            _mm512_inserti32x4::<3>(v, _mm_maskz_loadu_epi8(m(3), at(3).cast()))
        }
    }

    /// Writes block `i` of every live slot (slot 0 always is). Caller guarantees `16 * (i +
    /// 1)` is within those outputs.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(&self, i: usize, v: __m512i) {
        let at = |s: usize| self.dst[s].wrapping_add(BLOCK * i).cast::<__m128i>();
        // SAFETY: by the caller's guarantee each 16-byte write of a live slot is inside its
        // output; shadows are not written.
        unsafe {
            _mm_storeu_si128(at(0), _mm512_castsi512_si128(v));
            if self.live[1] {
                _mm_storeu_si128(at(1), _mm512_extracti32x4_epi32::<1>(v));
            }
            if self.live[2] {
                _mm_storeu_si128(at(2), _mm512_extracti32x4_epi32::<2>(v));
            }
            if self.live[3] {
                _mm_storeu_si128(at(3), _mm512_extracti32x4_epi32::<3>(v));
            }
        }
    }

    /// [`Quad::store`] under a byte mask as [`Quad::load_masked`]'s: no masked-off byte is
    /// written. Caller guarantees as for the load, for the outputs.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw")]
    unsafe fn store_masked(&self, i: usize, v: __m512i, mask: u64) {
        let at = |s: usize| self.dst[s].wrapping_add(BLOCK * i).cast::<i8>();
        let m = |s: usize| (mask >> (16 * s)) as u16;
        // SAFETY: masked-off bytes are not written; the unmasked bytes of live slots are
        // inside the outputs (caller); shadows are not written.
        unsafe {
            _mm_mask_storeu_epi8(at(0), m(0), _mm512_castsi512_si128(v));
            if self.live[1] {
                _mm_mask_storeu_epi8(at(1), m(1), _mm512_extracti32x4_epi32::<1>(v));
            }
            if self.live[2] {
                _mm_mask_storeu_epi8(at(2), m(2), _mm512_extracti32x4_epi32::<2>(v));
            }
            if self.live[3] {
                _mm_mask_storeu_epi8(at(3), m(3), _mm512_extracti32x4_epi32::<3>(v));
            }
        }
    }
}

/// A 16-byte round key in all four lanes of a zmm register.
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(k: &[u8; 16]) -> __m512i {
    // SAFETY: `k` is 16 readable bytes; the load is unaligned.
    _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(k.as_ptr().cast()) })
}

/// The round keys of a call: one key for every lane (`SHARED`: its rows broadcast), or the
/// group's per-lane rows, four lanes a row ([`QuadKey`]): register `r` takes row `r`.
#[derive(Clone, Copy)]
struct QuadKeys<'a> {
    key: &'a AesKey,
    rows: &'a [QuadKey],
}

impl QuadKeys<'_> {
    /// Row `i` (round key `i`, or [`FOLD`]) of register `r`'s four lanes. Without `SHARED`,
    /// `rows` holds every live register's.
    #[inline]
    #[target_feature(enable = "avx2,avx512f")]
    fn row<const SHARED: bool>(&self, r: usize, i: usize) -> __m512i {
        if SHARED {
            broadcast(if i == FOLD {
                &self.key.fold
            } else {
                &self.key.enc.0[i]
            })
        } else {
            self.rows[r].row(i)
        }
    }
}

/// Lane `s` (0..4) of `v`.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_of(v: __m512i, s: usize) -> __m128i {
    match s {
        0 => _mm512_castsi512_si128(v),
        1 => _mm512_extracti32x4_epi32::<1>(v),
        2 => _mm512_extracti32x4_epi32::<2>(v),
        _ => _mm512_extracti32x4_epi32::<3>(v),
    }
}

/// Four blocks as one register, `b[0]` in the low 128 bits.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_quad(b: [&Block; 4]) -> __m512i {
    // SAFETY: each is a reference to 16 readable bytes; the loads are unaligned.
    unsafe {
        let v = _mm512_castsi128_si512(_mm_loadu_si128(b[0].as_ptr().cast()));
        let v = _mm512_inserti32x4::<1>(v, _mm_loadu_si128(b[1].as_ptr().cast()));
        let v = _mm512_inserti32x4::<2>(v, _mm_loadu_si128(b[2].as_ptr().cast()));
        _mm512_inserti32x4::<3>(v, _mm_loadu_si128(b[3].as_ptr().cast()))
    }
}

/// Steps `from..to` on registers `0..K` (`a`: CFB states, `b`: MAC states, both whitened),
/// as the steps of [`super::cfb_mac_lanes_vl`]: load every register's message blocks, run
/// both chains' rounds, store the ciphertext (`DEC`: the keystream) of the live slots; with
/// `masked`, the last step's loads and stores under `masks` and its MAC over the ciphertext
/// zero beyond them.
///
/// # Safety
/// AVX-512F, VL and BW, VAES and AES-NI; blocks `from..to` (the last one's unmasked bytes)
/// lie inside every slot's input and, for the live slots, output.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,avx512f,avx512vl,avx512bw")]
#[allow(clippy::too_many_arguments)]
unsafe fn steps<const K: usize, const SHARED: bool, const DEC: bool>(
    quads: &[Quad<'_>; K],
    keys: QuadKeys<'_>,
    rounds: usize,
    a: &mut [__m512i; K],
    b: &mut [__m512i; K],
    masks: &[u64; K],
    from: usize,
    to: usize,
    masked: bool,
) {
    let fix = _mm512_set_epi32(
        0, 0, 0, FIX1_BIT, 0, 0, 0, FIX1_BIT, 0, 0, 0, FIX1_BIT, 0, 0, 0, FIX1_BIT,
    );
    // The states in locals for the loop (through the references, LLVM kept them in memory
    // and stored them back every step).
    let (mut av, mut bv) = (*a, *b);
    for i in from..to {
        // Opaque to the optimiser, as in the ymm kernels: one index register for all lanes.
        let i = core::hint::black_box(i);
        let masked = masked && i + 1 == to;
        // The message blocks, loaded before this step's stores. SAFETY (loads and stores):
        // the caller's guarantee.
        let mut ps = [_mm512_setzero_si512(); K];
        if masked {
            for r in 0..K {
                ps[r] = unsafe { quads[r].load_masked(i, masks[r]) };
            }
        } else {
            for r in 0..K {
                ps[r] = unsafe { quads[r].load(i) };
            }
        }
        for rd in 1..rounds {
            for r in 0..K {
                let k = keys.row::<SHARED>(r, rd);
                av[r] = _mm512_aesenc_epi128(av[r], k);
                bv[r] = _mm512_aesenc_epi128(bv[r], k);
            }
        }
        for r in 0..K {
            let (k0, klast, fold) = (
                keys.row::<SHARED>(r, 0),
                keys.row::<SHARED>(r, rounds),
                keys.row::<SHARED>(r, FOLD),
            );
            // The ciphertext straight out of the last round (the data folded into its key),
            // the MAC's `T ^ k_0` out of the fold key; with `DEC` the output is the
            // keystream and the chains take the loaded `C_i` (see the ymm kernel).
            let last = if DEC {
                klast
            } else {
                _mm512_xor_si512(klast, ps[r])
            };
            let mut c = _mm512_aesenclast_epi128(av[r], last);
            let t = _mm512_aesenclast_epi128(bv[r], fold);
            if masked {
                if !DEC {
                    // The ciphertext, zero beyond the message: what the MAC takes.
                    c = _mm512_maskz_mov_epi8(masks[r], c);
                }
                // SAFETY: the caller's guarantee.
                unsafe { quads[r].store_masked(i, c, masks[r]) };
            } else {
                // SAFETY: the caller's guarantee.
                unsafe { quads[r].store(i, c) };
            }
            let c = if DEC { ps[r] } else { c };
            bv[r] = _mm512_xor_si512(t, c);
            // `fix1(C) ^ k_0`.
            av[r] = _mm512_xor_si512(_mm512_or_si512(c, fix), k0);
        }
    }
    *a = av;
    *b = bv;
}

/// Every lane's CFB chain and MAC over its whole message, partial last block included (under
/// byte masks), each lane run to its own end inside this one call: the contract and the
/// results of [`super::cfb_mac_lanes_vl`] (each lane ends with `T_{m-1} ^ C_m` in its MAC
/// state), four lanes per zmm register.
///
/// # Safety
/// `lanes.len() == macs.len()` is `1..=4 * CFB_MAC_QUADS`; every lane's key has `lanes[0]`'s
/// round count; with `SHARED` every lane's key is `lanes[0]`'s (the same reference), else
/// `rows` holds the rows of these lanes, four a row (`rows[r]` for lanes `4r..4r + 4`, as a
/// [`GroupKeys`](super::GroupKeys) of [`QuadKey`] rows makes them); lanes in order of
/// non-increasing `io.len.div_ceil(16)`, each with `blocks == io.len / 16` and its `io.len`
/// bytes inside its input and output.
pub(crate) unsafe fn cfb_mac_quads<const SHARED: bool, const DEC: bool>(
    _t: VaesZmmToken,
    lanes: &mut [ChainLane<'_>],
    macs: &mut [Block],
    rows: &[QuadKey],
) {
    // SAFETY: the token proves AVX2, VAES, AES-NI and AVX-512F, VL and BW; the rest is this
    // function's contract.
    unsafe { quads_kernel::<SHARED, DEC>(lanes, macs, rows) }
}

/// [`cfb_mac_quads`] under its target features.
///
/// # Safety
/// As [`cfb_mac_quads`], the token's features present.
#[target_feature(enable = "avx2,vaes,aes,avx512f,avx512vl,avx512bw")]
unsafe fn quads_kernel<const SHARED: bool, const DEC: bool>(
    lanes: &mut [ChainLane<'_>],
    macs: &mut [Block],
    rows: &[QuadKey],
) {
    const MAX: usize = CFB_MAC_QUADS;
    let steps_of = |l: &ChainLane<'_>| l.io.len.div_ceil(BLOCK);
    let n = lanes.len();
    assert!((1..=4 * MAX).contains(&n) && macs.len() == n);
    debug_assert!(lanes.windows(2).all(|w| steps_of(&w[0]) >= steps_of(&w[1])));
    debug_assert!(!SHARED || lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key)));
    debug_assert!(lanes.iter().all(|l| l.blocks == l.io.len / BLOCK));
    let rounds = lanes[0].key.rounds.min(14);
    // Rows of every live register.
    assert!(SHARED || rows.len() >= n.div_ceil(4));
    let keys = QuadKeys {
        key: lanes[0].key,
        rows,
    };
    let mut quads: [Quad<'_>; MAX] = Quad::of_lanes(lanes);
    // Register r's four lanes' values (slots past the lanes copy the register's first
    // lane), whitened; registers past the lanes are never run.
    let regs = n.div_ceil(4);
    let mut a = [_mm512_setzero_si512(); MAX];
    let mut b = [_mm512_setzero_si512(); MAX];
    for r in 0..regs {
        let j: [usize; 4] = core::array::from_fn(|s| slot_lane(n, r, s));
        let (chains, k0) = (j.map(|j| &lanes[j].chain), keys.row::<SHARED>(r, 0));
        a[r] = _mm512_xor_si512(load_quad(chains), k0);
        b[r] = _mm512_xor_si512(load_quad(j.map(|j| &macs[j])), k0);
    }

    // Lanes `0..live` have blocks left; the ended ones are a suffix (non-increasing lengths),
    // so the live registers are a prefix.
    let mut live = n;
    let mut i = 0;
    loop {
        // The lanes that end here: their states out, their slots shadows (a register's
        // first lane ending takes the register out of the steps).
        while live > 0 && steps_of(&lanes[live - 1]) <= i {
            live -= 1;
            let (r, s) = (live / 4, live % 4);
            let k0 = keys.row::<SHARED>(r, 0);
            let chain = lane_of(_mm512_xor_si512(a[r], k0), s);
            let mac = lane_of(_mm512_xor_si512(b[r], k0), s);
            if s > 0 {
                quads[r].drop_slot(s);
            }
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
        // The lanes that end at `end` with a partial block take their last step (`end - 1`)
        // under byte masks, every other slot's block of that step whole (lanes that run on
        // have whole blocks there); a shadow takes its slot 0's mask.
        let (masks, masked) =
            super::tail_masks::<4, MAX>(lanes, live, end, |r, s| quads[r].live[s]);
        let width = live.div_ceil(4);
        macro_rules! run {
            ($($k:literal)*) => {
                match width {
                    $($k => {
                        let q: &[Quad<'_>; $k] =
                            quads.first_chunk().unwrap_or_else(|| unreachable!());
                        let (a, b) = (
                            a.first_chunk_mut::<$k>().unwrap_or_else(|| unreachable!()),
                            b.first_chunk_mut::<$k>().unwrap_or_else(|| unreachable!()),
                        );
                        let m: &[u64; $k] = masks.first_chunk().unwrap_or_else(|| unreachable!());
                        // SAFETY: every live register's slots (a shadow reads its slot 0's
                        // lane, never stored) have whole blocks up to `end`, or with `masked`
                        // up to `end - 1` and the unmasked bytes of block `end - 1`; the
                        // features are this function's.
                        unsafe {
                            steps::<$k, SHARED, DEC>(q, keys, rounds, a, b, m, i, end, masked)
                        }
                    })*
                    _ => unreachable!("1 to CFB_MAC_QUADS registers"),
                }
            };
        }
        run!(1 2 3 4);
        i = end;
    }
}
