//! The bit reversal of a 128-bit block, between the big-endian-integer convention of the
//! CMAC field (byte 0 most significant, `x^0` in the last bit) and GCM's bit-reflected one:
//! the same field with every 128-bit word reversed, so `a·b = rev(rev(a) ⊗ rev(b))` and a
//! mode in the former convention can run its products on the GHASH kernels (COBRA-R's
//! chain, Julius's Horner chain and masks).

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::aes::Kernels;
use crate::block::{xor, Block, IoPtrs, BLOCK};

/// The 128-bit reversal: maps the big-endian-integer convention to GCM's and back.
#[inline]
pub(crate) fn rev(b: &Block) -> Block {
    u128::from_be_bytes(*b).reverse_bits().to_be_bytes()
}

/// `rev` of every whole block of the input into the same place of the output (`io` in
/// place: in place), returning the xor of the results.
pub(crate) fn rev_io(k: Kernels, io: &IoPtrs<'_>) -> Block {
    assert!(!io.dst.is_null() && io.len <= io.out_cap);
    // SAFETY: `16·(len / 16) <= len` bytes are readable at `src` and, as len <= out_cap,
    // writable at `dst`; IoPtrs' input and output are one buffer or disjoint.
    unsafe { rev_raw(k, io.src, io.dst, io.len / BLOCK) }
}

/// `dst` block `i` = `rev(src` block `i)` for `i < n`; returns the xor of the results.
///
/// On x86 a byte reversal and a per-byte bit reversal, both SSSE3 byte shuffles from
/// registers (no memory table, so constant time): the scalar `u128::reverse_bits` is some
/// 30 instructions a block, more than the product it serves.
///
/// # Safety
/// `src` readable and `dst` writable for `16·n` bytes, equal or not overlapping.
pub(crate) unsafe fn rev_raw(k: Kernels, src: *const u8, dst: *mut u8, n: usize) -> Block {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        // SAFETY: the tokens prove SSSE3 (every backend needs it) and AVX2 (VAES); the
        // ranges are the caller's.
        unsafe {
            match k {
                Kernels::Vaes256(_) => rev_avx2(src, dst, n),
                Kernels::Ni(_) => rev_ssse3(src, dst, n),
            }
        }
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        let _ = k;
        let mut acc = [0u8; BLOCK];
        for i in 0..n {
            // SAFETY: block i is inside both ranges (caller).
            unsafe {
                let r = rev(&src.add(BLOCK * i).cast::<Block>().read_unaligned());
                dst.add(BLOCK * i).cast::<Block>().write_unaligned(r);
                acc = xor(&acc, &r);
            }
        }
        acc
    }
}

/// The per-byte bit reversal's two nibble tables: a nibble's reversal placed in the high
/// nibble (for a byte's low nibble) and in the low nibble (for its high one).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const REV_LO: [i8; 16] = [
    0x00, -0x80, 0x40, -0x40, 0x20, -0x60, 0x60, -0x20, 0x10, -0x70, 0x50, -0x30, 0x30, -0x50,
    0x70, -0x10,
];
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const REV_HI: [i8; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];
/// Byte `i` takes byte `15 - i`.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const SWAP: [i8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

/// One block per step, xmm.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "ssse3")]
unsafe fn rev_ssse3(src: *const u8, dst: *mut u8, n: usize) -> Block {
    // SAFETY (table loads): each table is 16 readable bytes.
    let [rev_lo, rev_hi, swap] =
        [&REV_LO, &REV_HI, &SWAP].map(|t| unsafe { _mm_loadu_si128(t.as_ptr().cast()) });
    let nib = _mm_set1_epi8(0x0f);
    let mut acc = _mm_setzero_si128();
    for i in 0..n {
        // SAFETY: block i lies inside both ranges (caller); it is read before it is written.
        let x = _mm_shuffle_epi8(unsafe { _mm_loadu_si128(src.add(BLOCK * i).cast()) }, swap);
        let lo = _mm_and_si128(x, nib);
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), nib);
        let r = _mm_or_si128(_mm_shuffle_epi8(rev_lo, lo), _mm_shuffle_epi8(rev_hi, hi));
        acc = _mm_xor_si128(acc, r);
        unsafe { _mm_storeu_si128(dst.add(BLOCK * i).cast(), r) };
    }
    let mut out = [0u8; BLOCK];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), acc) };
    out
}

/// Two blocks per step on ymm (the shuffles work within each 128-bit half), then the odd
/// block on xmm.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,ssse3")]
unsafe fn rev_avx2(src: *const u8, dst: *mut u8, n: usize) -> Block {
    // SAFETY (table loads): each table is 16 readable bytes.
    let [rev_lo, rev_hi, swap] = [&REV_LO, &REV_HI, &SWAP]
        .map(|t| _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(t.as_ptr().cast()) }));
    let nib = _mm256_set1_epi8(0x0f);
    let mut acc = _mm256_setzero_si256();
    for i in 0..n / 2 {
        // SAFETY: blocks 2i, 2i + 1 lie inside both ranges (caller); read before written.
        let x = unsafe { _mm256_loadu_si256(src.add(2 * BLOCK * i).cast()) };
        let x = _mm256_shuffle_epi8(x, swap);
        let lo = _mm256_and_si256(x, nib);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nib);
        let r = _mm256_or_si256(
            _mm256_shuffle_epi8(rev_lo, lo),
            _mm256_shuffle_epi8(rev_hi, hi),
        );
        acc = _mm256_xor_si256(acc, r);
        unsafe { _mm256_storeu_si256(dst.add(2 * BLOCK * i).cast(), r) };
    }
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let mut out = [0u8; BLOCK];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), folded) };
    if n % 2 == 1 {
        // SAFETY: the last block lies inside both ranges (caller).
        let last = unsafe { rev_ssse3(src.add(BLOCK * (n - 1)), dst.add(BLOCK * (n - 1)), 1) };
        out = xor(&out, &last);
    }
    out
}
