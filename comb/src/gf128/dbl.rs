//! Doubling and tripling in GF(2^128) for masks (OCB3, OTR, COPA, COBRA, POET).
//!
//! Convention: the block is a big-endian 128-bit integer (byte 0 most significant) and the
//! field polynomial is `x^128 + x^7 + x^2 + x + 1`, so doubling is "shift left by one, xor
//! `0x87` into the last byte if the bit shifted out was set" (RFC 7253 §2, SP 800-38B). This
//! is *not* GHASH's bit-reflected convention.
//!
//! The conditional xor is where implementations differ (papers/000 §6.5 measures four ways to
//! test the MSB of an xmm register, all with a branch). Here every variant turns the MSB into
//! an all-ones/all-zeros mask without a branch, so the time never depends on the (secret)
//! mask value:
//!
//! * [`dbl`] (the crate's CMAC doubling, [`crate::block::dbl`]): `0 - msb`, a negation.
//! * [`dbl_sar`]: arithmetic shift right by 127 of the signed value (sign-fill).
//! * [`dbl_mulbit`]: `msb * 0x87`, a multiply by the bit.
//! * [`dbl_xmm_sar`], [`dbl_xmm_cmp`] (x86): the paper's SSE formulation of the shift
//!   (Listing 1.1, `v1 = v << 1` per qword, `v2` the carry between qwords), with the MSB mask
//!   from `psrad` (arithmetic shift of the top dword) or `pcmpgtd` (signed compare with zero),
//!   broadcast by `pshufd`.
//!
//! All give the same result; which is fastest inside a mode is for the benchmark to say.

use crate::block::Block;

pub use crate::block::dbl;

/// The reduction constant for `x^128 = x^7 + x^2 + x + 1`.
const RP: u128 = 0x87;

/// Doubling; the MSB mask by arithmetic shift (sign fill).
#[inline]
pub fn dbl_sar(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    let mask = ((v as i128) >> 127) as u128;
    ((v << 1) ^ (mask & RP)).to_be_bytes()
}

/// Doubling; the reduction term as the MSB times the constant.
#[inline]
pub fn dbl_mulbit(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    ((v << 1) ^ ((v >> 127) * RP)).to_be_bytes()
}

/// Tripling: `3·b = 2·b ^ b`.
#[inline]
pub fn tpl(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    (u128::from_be_bytes(dbl(b)) ^ v).to_be_bytes()
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub use xmm::{dbl_xmm_cmp, dbl_xmm_sar};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod xmm {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    /// `v << 1` as one 128-bit shift: per-qword shift plus the low qword's top bit carried
    /// into the high qword (papers/000 Listing 1.1, lines 3–5).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn shl1(v: __m128i) -> __m128i {
        let v1 = _mm_slli_epi64::<1>(v);
        let v2 = _mm_srli_epi64::<63>(_mm_slli_si128::<8>(v));
        _mm_or_si128(v1, v2)
    }

    /// Doubling of a block held as an integer (`u128::from_be_bytes(block)` in the register,
    /// i.e. after a byte swap); MSB mask by arithmetic shift of the top dword.
    ///
    /// Meant for kernels that keep their blocks in xmm registers: callable without `unsafe`
    /// from any `#[target_feature]` function that enables SSE2 (as every AES kernel does).
    ///
    /// # Safety
    ///
    /// Called from elsewhere, the CPU must have SSE2 (every x86-64 CPU has).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn dbl_xmm_sar(v: __m128i) -> __m128i {
        let mask = _mm_shuffle_epi32::<0xff>(_mm_srai_epi32::<31>(v));
        let rp = _mm_set_epi32(0, 0, 0, 0x87);
        _mm_xor_si128(shl1(v), _mm_and_si128(mask, rp))
    }

    /// As [`dbl_xmm_sar`], MSB mask by signed compare `0 > top dword`.
    ///
    /// # Safety
    ///
    /// As [`dbl_xmm_sar`]: the CPU must have SSE2.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn dbl_xmm_cmp(v: __m128i) -> __m128i {
        let top = _mm_shuffle_epi32::<0xff>(v);
        let mask = _mm_cmpgt_epi32(_mm_setzero_si128(), top);
        let rp = _mm_set_epi32(0, 0, 0, 0x87);
        _mm_xor_si128(shl1(v), _mm_and_si128(mask, rp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Doubling the textbook way, bit by bit with a branch (test only).
    fn dbl_ref(b: &Block) -> Block {
        let mut out = [0u8; 16];
        for i in 0..16 {
            let next = if i + 1 < 16 { b[i + 1] >> 7 } else { 0 };
            out[i] = (b[i] << 1) | next;
        }
        if b[0] & 0x80 != 0 {
            out[15] ^= 0x87;
        }
        out
    }

    fn samples() -> Vec<Block> {
        let mut v: Vec<Block> = vec![
            [0; 16],
            [0xff; 16],
            {
                let mut b = [0; 16];
                b[0] = 0x80;
                b
            },
            {
                let mut b = [0; 16];
                b[15] = 1;
                b
            },
            {
                let mut b = [0; 16];
                b[7] = 0x80; // the bit that crosses the qword boundary
                b
            },
        ];
        let mut s = 0x0123_4567_89ab_cdefu64;
        for _ in 0..500 {
            let mut b = [0u8; 16];
            for x in b.iter_mut() {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                *x = s as u8;
            }
            v.push(b);
        }
        v
    }

    #[test]
    fn all_doublings_match_the_reference() {
        for b in samples() {
            let want = dbl_ref(&b);
            assert_eq!(dbl(&b), want, "{b:02x?}");
            assert_eq!(dbl_sar(&b), want, "{b:02x?}");
            assert_eq!(dbl_mulbit(&b), want, "{b:02x?}");
            #[cfg(target_arch = "x86_64")]
            {
                use core::arch::x86_64::*;
                let v = u128::from_be_bytes(b);
                // SAFETY: `v` is 16 readable bytes; loadu has no alignment requirement.
                let x = unsafe { _mm_loadu_si128((&v as *const u128).cast()) };
                // SAFETY: SSE2 is part of the x86-64 baseline (every x86-64 CPU has it).
                let both = unsafe { [dbl_xmm_sar(x), dbl_xmm_cmp(x)] };
                for y in both {
                    let mut out = 0u128;
                    // SAFETY: `out` is 16 writable bytes; storeu has no alignment requirement.
                    unsafe { _mm_storeu_si128((&mut out as *mut u128).cast(), y) };
                    assert_eq!(out.to_be_bytes(), want, "{b:02x?}");
                }
            }
        }
    }

    #[test]
    fn tripling_is_double_plus_one() {
        for b in samples() {
            let d = dbl_ref(&b);
            let want: Block = core::array::from_fn(|i| d[i] ^ b[i]);
            assert_eq!(tpl(&b), want);
        }
        // 3·1 = x + 1 and 3·x^127 = x^128 + x^127 = x^127 + 0x87.
        let mut one = [0u8; 16];
        one[15] = 1;
        let mut three = [0u8; 16];
        three[15] = 3;
        assert_eq!(tpl(&one), three);
        let mut top = [0u8; 16];
        top[0] = 0x80;
        let mut want = [0u8; 16];
        want[0] = 0x80;
        want[15] = 0x87;
        assert_eq!(tpl(&top), want);
    }
}
