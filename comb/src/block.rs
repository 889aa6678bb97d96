//! The 16-byte block and the raw view of one message's input and output.

use core::marker::PhantomData;

/// AES block size in bytes.
pub const BLOCK: usize = 16;

/// A 16-byte block.
pub type Block = [u8; BLOCK];

/// Doubling in GF(2^128) with the CMAC polynomial x^128 + x^7 + x^2 + x + 1, big-endian bit
/// order (SP 800-38B). Constant time: the reduction is a mask, not a branch.
pub fn dbl(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    let carry = 0u128.wrapping_sub(v >> 127); // all ones iff the top bit was set
    ((v << 1) ^ (carry & 0x87)).to_be_bytes()
}

/// Whether the first `expected.len()` (1..=16) bytes of `computed` equal `expected`, in
/// constant time: both sides zero-padded to one 128-bit word and compared with `subtle`'s
/// word comparison (a xor and a mask, no data-dependent branch or early exit). Only the tag
/// length, which is public, steers the padding.
pub(crate) fn tag_matches(computed: &Block, expected: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    let n = expected.len().min(BLOCK);
    let mut c = [0u8; BLOCK];
    let mut e = [0u8; BLOCK];
    c[..n].copy_from_slice(&computed[..n]);
    e[..n].copy_from_slice(&expected[..n]);
    let equal = u128::from_ne_bytes(c).ct_eq(&u128::from_ne_bytes(e));
    zeroize::Zeroize::zeroize(&mut c);
    bool::from(equal)
}

/// `a ^= b` over equal-length slices.
pub(crate) fn xor_in_place(a: &mut [u8], b: &[u8]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= *y;
    }
}

/// Where one message is read from and written to: the same memory (in place) or two
/// distinct buffers. Kernels take this instead of slices because Rust slices cannot express
/// "`dst` may be `src`".
///
/// Invariant (established by the constructors, relied on by every kernel): `src` is valid for
/// reads of `len` bytes and, unless `dst` is null, `dst` is valid for writes of `out_cap`
/// bytes, for the lifetime `'a`. When `src == dst` the memory is one `&mut [u8]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IoPtrs<'a> {
    pub(crate) src: *const u8,
    pub(crate) dst: *mut u8,
    pub(crate) len: usize,
    pub(crate) out_cap: usize,
    _life: PhantomData<&'a mut [u8]>,
}

impl<'a> IoPtrs<'a> {
    /// Read `buf[..len]`, write results back into `buf`.
    pub(crate) fn in_place(buf: &'a mut [u8], len: usize) -> IoPtrs<'a> {
        let len = len.min(buf.len());
        IoPtrs {
            src: buf.as_ptr(),
            dst: buf.as_mut_ptr(),
            len,
            out_cap: buf.len(),
            _life: PhantomData,
        }
    }

    /// Read `src`, write `dst`.
    pub(crate) fn copy(src: &'a [u8], dst: &'a mut [u8]) -> IoPtrs<'a> {
        IoPtrs {
            src: src.as_ptr(),
            dst: dst.as_mut_ptr(),
            len: src.len(),
            out_cap: dst.len(),
            _life: PhantomData,
        }
    }

    /// Read `src`; nothing is written (MACs).
    pub(crate) fn read_only(src: &'a [u8]) -> IoPtrs<'a> {
        IoPtrs {
            src: src.as_ptr(),
            dst: core::ptr::null_mut(),
            len: src.len(),
            out_cap: 0,
            _life: PhantomData,
        }
    }

    /// Copies input bytes `[off, off + n)` into `out[..n]` (n <= 16, off + n <= len).
    pub(crate) fn read_partial(&self, off: usize, out: &mut Block, n: usize) {
        assert!(n <= BLOCK && off <= self.len && n <= self.len - off);
        // SAFETY: the range was just checked against `len`, for which `src` is readable.
        let s = unsafe { core::slice::from_raw_parts(self.src.add(off), n) };
        out[..n].copy_from_slice(s);
    }

    /// Writes `data` at output offset `off` (off + data.len() <= out_cap).
    pub(crate) fn write(&self, off: usize, data: &[u8]) {
        assert!(!self.dst.is_null() && off <= self.out_cap && data.len() <= self.out_cap - off);
        // SAFETY: range checked against `out_cap`, for which `dst` is writable; `data` is a
        // local copy, so it cannot overlap the destination.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), self.dst.add(off), data.len()) };
    }

    /// Zeroes the first `n` output bytes (authentication failure, bad padding).
    pub(crate) fn zero_output(&self, n: usize) {
        if self.dst.is_null() {
            return;
        }
        let n = n.min(self.out_cap);
        // SAFETY: `dst` is writable for `out_cap >= n` bytes.
        let out = unsafe { core::slice::from_raw_parts_mut(self.dst, n) };
        zeroize::Zeroize::zeroize(out);
    }

    /// The output bytes `[0, n)` as a slice (n <= out_cap), for post-processing such as the
    /// PKCS#7 check. Only call when no other view of the output is alive.
    pub(crate) fn output(&mut self, n: usize) -> &mut [u8] {
        assert!(!self.dst.is_null() && n <= self.out_cap);
        // SAFETY: `dst` is writable for `out_cap` bytes for 'a and `&mut self` keeps this the
        // only live view created through this value.
        unsafe { core::slice::from_raw_parts_mut(self.dst, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_matches_compares_exactly_the_tag_length() {
        let t: Block = core::array::from_fn(|i| i as u8 + 1);
        for n in 1..=16 {
            assert!(tag_matches(&t, &t[..n]));
            for i in 0..n {
                let mut bad = t[..n].to_vec();
                bad[i] ^= 0x80;
                assert!(!tag_matches(&t, &bad), "n={n} i={i}");
            }
        }
    }

    #[test]
    fn dbl_matches_rfc4493_subkeys() {
        // RFC 4493 §4: L = E(K, 0) for K = 2b7e1516..., K1, K2.
        let l: Block = [
            0x7d, 0xf7, 0x6b, 0x0c, 0x1a, 0xb8, 0x99, 0xb3, 0x3e, 0x42, 0xf0, 0x47, 0xb9, 0x1b,
            0x54, 0x6f,
        ];
        let k1 = dbl(&l);
        let k2 = dbl(&k1);
        assert_eq!(
            k1,
            [
                0xfb, 0xee, 0xd6, 0x18, 0x35, 0x71, 0x33, 0x66, 0x7c, 0x85, 0xe0, 0x8f, 0x72, 0x36,
                0xa8, 0xde
            ]
        );
        assert_eq!(
            k2,
            [
                0xf7, 0xdd, 0xac, 0x30, 0x6a, 0xe2, 0x66, 0xcc, 0xf9, 0x0b, 0xc1, 0x1e, 0xe4, 0x6d,
                0x51, 0x3b
            ]
        );
    }
}
