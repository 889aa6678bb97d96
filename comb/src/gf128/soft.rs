//! Portable constant-time GHASH: 64-bit integer multiplies with "holes", no tables, no
//! secret-dependent branches.
//!
//! # Carry-less multiplication with an integer multiplier
//!
//! An integer multiply adds partial products with carries; a carry-less one must XOR them.
//! Split each 64-bit operand into four masks `x_r = x & (0x1111.. << r)`, so that every set bit
//! of `x_r` sits at a position `≡ r (mod 4)`. The integer product `x_r * y_s` then has all its
//! partial products at positions `≡ r + s (mod 4)`, and at any one position at most 16 of them
//! meet, at most 15 below bit 60. Fifteen ones sum to at most `0b1111`: the sum never reaches
//! the next position of the same residue class (4 bits up), so after masking with the class,
//! each bit is the parity of its partial products, which is exactly the carry-less product.
//! The one position where 16 partial products can meet lies at 60 or above and its carry
//! leaves the 64-bit word. This gives the low 64 bits of a 64×64 carry-less product in 16
//! integer multiplies ([`bmul64`]); the high 64 bits are the low bits of the product of the
//! bit-reversed operands, reversed back ([`clmul64`]). The technique is the one of BearSSL's
//! `ghash_ctmul64`; the code here is written from the argument above.
//!
//! Integer multiplication is constant-time on every CPU this crate targets (x86-64 `MUL`/
//! `IMUL`, AArch64 `MUL`/`UMULH`), and `u64::reverse_bits` compiles to shifts and masks (or
//! one `RBIT`): nothing here depends on secret data for timing.
//!
//! # Field representation
//!
//! As the hardware kernels, a GCM block `X` is held as `u128::from_be_bytes(X)` (the
//! bit-reflected polynomial, see the module `gf128` docs), H is pre-multiplied by the
//! reflected `x` ([`mulx`]), and reduction is a Montgomery-style division by `y^128`
//! ([`reduce`]), so `reduce(clmul128(X, K_i)) = X·H^i` with no 1-bit product shift.

use super::{aggregate, Aggregation, Powers};
use crate::block::Block;

/// The three "holes" masks: bits at positions ≡ r (mod 4).
const M0: u64 = 0x1111_1111_1111_1111;
const M1: u64 = M0 << 1;
const M2: u64 = M0 << 2;
const M3: u64 = M0 << 3;

/// The low 64 bits of the carry-less product of `x` and `y` (see the module docs).
#[inline]
fn bmul64(x: u64, y: u64) -> u64 {
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let m = |a: u64, b: u64| a.wrapping_mul(b);
    let z0 = m(x0, y0) ^ m(x1, y3) ^ m(x2, y2) ^ m(x3, y1);
    let z1 = m(x0, y1) ^ m(x1, y0) ^ m(x2, y3) ^ m(x3, y2);
    let z2 = m(x0, y2) ^ m(x1, y1) ^ m(x2, y0) ^ m(x3, y3);
    let z3 = m(x0, y3) ^ m(x1, y2) ^ m(x2, y1) ^ m(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// The full 127-bit carry-less product of two 64-bit words.
///
/// `rev(x) ⊗ rev(y) = rev127(x ⊗ y)`: the low 64 bits of the product of the reversed words,
/// reversed, are bits 63..126 of the product; one shift drops bit 63 (already in the low
/// word).
#[inline]
fn clmul64(x: u64, y: u64) -> u128 {
    let lo = bmul64(x, y);
    let hi = bmul64(x.reverse_bits(), y.reverse_bits()).reverse_bits() >> 1;
    (u128::from(hi) << 64) | u128::from(lo)
}

/// A 256-bit carry-less product, not yet reduced: `hi·y^128 + lo`.
#[derive(Clone, Copy, Default)]
pub(super) struct Wide {
    lo: u128,
    hi: u128,
}

impl Wide {
    #[inline]
    fn xor(self, o: Wide) -> Wide {
        Wide {
            lo: self.lo ^ o.lo,
            hi: self.hi ^ o.hi,
        }
    }
}

/// `a ⊗ b` (carry-less, 128 × 128 → 255 bits) by Karatsuba: three 64 × 64 products.
#[inline]
fn clmul128(a: u128, b: u128) -> Wide {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    Wide {
        lo: lo ^ (mid << 64),
        hi: hi ^ (mid >> 64),
    }
}

/// `T · y^-128 mod P*(y)`, `P* = y^128 + y^127 + y^126 + y^121 + 1` (the reflected GCM
/// polynomial): adds the multiple of `P*` that clears the low 128 bits, 64 bits at a time, and
/// returns the high half. Linear in `T`, so sums of products can be reduced once.
#[inline]
pub(super) fn reduce(t: Wide) -> u128 {
    let Wide { mut lo, mut hi } = t;
    // x0 · P*: cancels bits 0..64; x0·(y^121 + y^126 + y^127) = (x0·(y^57+y^62+y^63))·y^64,
    // and x0·y^128 lands in `hi`.
    let x0 = u128::from(lo as u64);
    let t0 = (x0 << 57) ^ (x0 << 62) ^ (x0 << 63);
    lo ^= t0 << 64;
    hi ^= (t0 >> 64) ^ x0;
    // x1 · y^64 · P*: cancels bits 64..128, the rest lands in `hi`.
    let x1 = lo >> 64;
    hi ^= (x1 << 57) ^ (x1 << 62) ^ (x1 << 63) ^ (x1 << 64);
    hi
}

/// `v · y mod P*`: the 1-bit shift of the reflected product moved into the key. Branch-free:
/// the top bit becomes an all-ones or all-zeros mask.
#[inline]
pub(super) fn mulx(v: u128) -> u128 {
    const P: u128 = (1 << 127) | (1 << 126) | (1 << 121) | 1;
    let top = 0u128.wrapping_sub(v >> 127);
    (v << 1) ^ (top & P)
}

/// Montgomery product: `mont(a, b) = a·b·y^-128 mod P*`.
#[inline]
pub(super) fn mont(a: u128, b: u128) -> u128 {
    reduce(clmul128(a, b))
}

/// `N` blocks, one reduction: `(s ^ X_0)·H^N + X_1·H^(N-1) + … + X_{N-1}·H`.
#[inline]
fn agg<const N: usize>(pow: &Powers, s: u128, blocks: &[Block; N]) -> u128 {
    agg_n(pow, s, blocks)
}

/// [`agg`] for `1..=8` blocks counted at run time.
#[inline]
pub(super) fn agg_n(pow: &Powers, s: u128, blocks: &[Block]) -> u128 {
    let n = blocks.len();
    debug_assert!((1..=8).contains(&n));
    let mut acc = Wide::default();
    for (i, b) in blocks.iter().enumerate() {
        let mut x = u128::from_be_bytes(*b);
        if i == 0 {
            x ^= s;
        }
        // K_(n-i) sits at desc[8 - n + i].
        acc = acc.xor(clmul128(x, pow.desc[8 - n + i]));
    }
    reduce(acc)
}

/// GCM's GHASH of `ad` and `ct` with the lengths block, in one pass
/// ([`super::gcm_stream_many`] of one message).
pub(super) fn gcm(pow: &Powers, out: &mut Block, ad: &[u8], ct: &[u8]) {
    super::gcm_stream_many(
        0u128,
        1,
        |_| (ad, ct),
        |_, s, c| agg::<8>(pow, s, c),
        |_, s, c| agg_n(pow, s, c),
        |_, s| *out = s.to_be_bytes(),
    );
}

/// GHASH over whole blocks (the caller handles partial ones), `agg` blocks per reduction.
pub(super) fn update(pow: &Powers, state: &mut Block, blocks: &[Block], agg_by: Aggregation) {
    let s = aggregate(
        u128::from_be_bytes(*state),
        blocks,
        agg_by,
        |s, c| agg::<8>(pow, s, c),
        |s, c| agg::<4>(pow, s, c),
        |s, c| agg::<1>(pow, s, c),
    );
    *state = s.to_be_bytes();
}

/// `K_1..K_8` from `K_1` (each `K_i = mont(K_(i-1), K_1)`), in `desc` order.
pub(super) fn powers(k1: u128) -> [u128; 8] {
    let mut desc = [0u128; 8];
    let mut k = k1;
    desc[7] = k;
    for i in (0..7).rev() {
        k = mont(k, k1);
        desc[i] = k;
    }
    desc
}

/// The chain `x ← x·H ⊕ M_i` over `n` blocks, `M_i` read at `src + 16i`, each `x` written at
/// `dst + 16i` (`mont` by `K_1`: constant-time).
///
/// # Safety
/// `src` readable and `dst` writable for `16·n` bytes; the two are equal or do not overlap.
pub(super) unsafe fn chain(pow: &Powers, x: &mut Block, src: *const u8, dst: *mut u8, n: usize) {
    let k = pow.desc[7];
    let mut v = u128::from_be_bytes(*x);
    for i in 0..n {
        // SAFETY: block i lies in the caller's ranges; in place, it is read before written.
        unsafe {
            let m = u128::from_be_bytes(src.add(16 * i).cast::<Block>().read_unaligned());
            v = mont(v, k) ^ m;
            dst.add(16 * i)
                .cast::<Block>()
                .write_unaligned(v.to_be_bytes());
        }
    }
    *x = v.to_be_bytes();
}

/// In place, `B_i ← B_i ⊕ B_{i-1}·H` with the old `B_{i-1}`, `B_{-1} = iv`.
pub(super) fn each(pow: &Powers, iv: &Block, blocks: &mut [Block]) {
    let k = pow.desc[7];
    let mut prev = u128::from_be_bytes(*iv);
    for b in blocks {
        let c = u128::from_be_bytes(*b);
        *b = (c ^ mont(prev, k)).to_be_bytes();
        prev = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-serial carry-less product, the obvious way (test only: branches on data).
    fn clmul64_ref(x: u64, y: u64) -> u128 {
        let mut r = 0u128;
        for i in 0..64 {
            if (y >> i) & 1 == 1 {
                r ^= u128::from(x) << i;
            }
        }
        r
    }

    #[test]
    fn clmul64_matches_bit_serial() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let edge = [0, 1, u64::MAX, 1 << 63, M0, M3, 0x8000_0000_0000_0001];
        for &a in &edge {
            for &b in &edge {
                assert_eq!(clmul64(a, b), clmul64_ref(a, b), "{a:x} {b:x}");
            }
        }
        for _ in 0..2000 {
            let (a, b) = (next(), next());
            assert_eq!(clmul64(a, b), clmul64_ref(a, b), "{a:x} {b:x}");
        }
    }
}
