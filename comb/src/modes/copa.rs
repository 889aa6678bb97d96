//! AES-COPA v2 (Andreeva et al., ASIACRYPT 2013; CAESAR round-2 parameters): nonce-misuse
//! resistant authenticated encryption, as the designers' reference code defines it.
//!
//! Notation: `E` = AES-128, `L = E(0)`, `D_i = 2^i·L` (big-endian doubling, the CMAC field),
//! blocks numbered from 0, `n = max(1, ceil(m / 16))` message blocks.
//!
//! * Header: `V = PMAC'(AD || N)` with masks `3^3·2^k·L`: every block but the last is
//!   encrypted under its mask and summed; the last one, xored with `3·mask` (complete) or
//!   10*-padded with `3^2·mask`, joins the sum, which is encrypted once more.
//! * Message: the last block is 10*-padded when the message is empty or not a whole number of
//!   blocks ("partial"). Block `i` has `up_i = 3·D_i` (times 7 for a partial last block) and
//!   `down_i = 2·D_i`:
//!   `X_i = E(M_i ^ up_i)`, `Y_i = X_i ^ Y_{i-1}` (`Y_{-1} = L ^ V`), `C_i = E(Y_i) ^ down_i`.
//! * Tag: `T = E(E(Σ ^ 3·up_last) ^ Y_last) ^ 7·down_last`, `Σ` the xor of the (padded)
//!   message blocks.
//! * Output (`Algorithm::output_len`): `C_0 .. C_{n-1}` and one byte, 1 when the last block
//!   was padded, 0 otherwise; the tag is detached. The CAESAR reference appends the flag
//!   *after* the tag (`C || T || flag`); the library keeps the tag detached and the flag right
//!   after the ciphertext blocks.
//!
//! Scheduling. Both AES layers are parallel; only the xor chain `Y` links them. A message is
//! processed in windows of up to [`WINDOW`] blocks held in a stack scratch buffer (one pair
//! of buffers per call, [`Windows`]): mask the window into it, one wide ECB call
//! (`Kernels::parallel`, VAES where the engine has it), the xor chain over the window, a
//! second wide ECB call, unmask into the output. The per-message fixed AES calls — the last
//! header block `V`, `E(Σ ^ 3·up)` and the tag's outer call — are one block per job each,
//! batched across all jobs of the call with `Kernels::encrypt_many`. The single path is the
//! same code with one job.
//!
//! Decryption runs the layers backwards (`Y_i = E^-1(C_i ^ down_i)`, `M_i = E^-1(Y_i ^
//! Y_{i-1}) ^ up_i`), writes the (padded) plaintext blocks, then recomputes the tag over them.
//! The tag depends on the whole plaintext, so verification comes last: on a wrong tag, a flag
//! byte other than 0 or 1, or bad 10* padding (all folded into one constant-time decision)
//! every output byte is zeroed and the job fails with `AuthenticationFailed`.

use crate::aes::{AesKey, Derived, Kernels};
use crate::block::{dbl, dbl_u128, mul7_u128, pad10, store_short, tag_matches, wipe, xor};
use crate::block::{xor_into, Block, BLOCK};
use crate::gf128::tpl;
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::{Error, JobResult, Op};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

/// Blocks per window of the layered pass (2 KiB of scratch per buffer: L1-resident).
pub(super) const WINDOW: usize = 128;

/// Jobs whose per-message AES calls share one batched call (their state lives on the stack).
const CHUNK: usize = 64;

/// Per-key constants: `L = E(0)` and the first header mask `3^3·L`.
struct CopaKey {
    l: Block,
    l27: Block,
}

impl Derived for CopaKey {
    const SLOT: usize = crate::aes::slot::COPA;
    fn derive(key: &AesKey) -> CopaKey {
        let l = key.e_zero;
        let l27 = tpl(&tpl(&tpl(&l)));
        CopaKey { l, l27 }
    }
}

impl Drop for CopaKey {
    fn drop(&mut self) {
        wipe(&mut self.l);
        wipe(&mut self.l27);
    }
}

/// `7·x` in the big-endian field.
fn mul7(x: &Block) -> Block {
    mul7_u128(u128::from_be_bytes(*x)).to_be_bytes()
}

/// Block `i` of `AD || nonce` (`len` bytes in all) and how many of its bytes exist.
fn header_block(ad: &[u8], nonce: &[u8], i: usize) -> (Block, usize) {
    let mut b = [0u8; BLOCK];
    let start = i * BLOCK;
    let end = (start + BLOCK).min(ad.len() + nonce.len());
    for (j, p) in (start..end).enumerate() {
        b[j] = if p < ad.len() {
            ad[p]
        } else {
            nonce[p - ad.len()]
        };
    }
    (b, end - start)
}

/// One job's state between the phases; wiped on drop.
#[derive(Default)]
struct State {
    /// Header sum, then `V`; then `E(Σ ^ 3·up)`; then the tag block.
    v: Block,
    /// `Y_last`.
    y: Block,
    /// `Σ ^ 3·up_last`.
    sigma: Block,
    /// `7·down_last`.
    down7: Block,
    /// Message blocks (with the padded last one).
    n: usize,
    /// Whether the last block is padded.
    partial: bool,
    /// Decryption: the flag byte and the padding are well-formed (constant-time mask).
    ok: u8,
    /// Decryption: plaintext length if the padding is right.
    m: usize,
}

impl Drop for State {
    fn drop(&mut self) {
        wipe(&mut self.v);
        wipe(&mut self.y);
        wipe(&mut self.sigma);
        wipe(&mut self.down7);
    }
}

/// The two window buffers of the layered passes (and of the header hash), one pair per call
/// of [`run`]: the blocks a window held (masked message blocks, the chain, the masks) are
/// secret, so the buffers are wiped on drop, as far as any window reached. Made and wiped per
/// job they took half of COPA's time on the realistic mix (4 KiB zeroed and 256 blocks wiped
/// for every message, most of them a few blocks long).
struct Windows {
    a: [Block; WINDOW],
    b: [Block; WINDOW],
    /// Blocks of each buffer any window has written.
    used: usize,
}

impl Windows {
    fn new() -> Windows {
        Windows {
            a: [[0; BLOCK]; WINDOW],
            b: [[0; BLOCK]; WINDOW],
            used: 0,
        }
    }

    /// Both buffers' first `c` blocks, to be written.
    fn take(&mut self, c: usize) -> (&mut [Block], &mut [Block]) {
        self.used = self.used.max(c);
        (&mut self.a[..c], &mut self.b[..c])
    }
}

impl Drop for Windows {
    fn drop(&mut self) {
        for b in self.a[..self.used]
            .iter_mut()
            .chain(self.b[..self.used].iter_mut())
        {
            wipe(b);
        }
    }
}

/// Runs AES-COPA `op` over validated jobs (16-byte key and nonce, 16-byte tag, ciphertext
/// shape `16k + 1`, output room per `Algorithm::output_len`), writing `results[job.index]`.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    _path: Path,
) {
    // Both paths run the same phases; `modes::run` hands the single path one job at a time.
    let mut win = Windows::new();
    for chunk in jobs.chunks_mut(CHUNK) {
        let Some(first) = chunk.first() else { continue };
        let n = chunk.len();
        let mut st: [State; CHUNK] = core::array::from_fn(|_| State::default());
        let mut blk = [[0u8; BLOCK]; CHUNK];
        let mut keys: [&AesKey; CHUNK] = [first.lane.key; CHUNK];
        for (kk, job) in keys.iter_mut().zip(chunk.iter()) {
            *kk = job.lane.key;
        }
        let keys = &keys[..n];
        // Phase 1: the header hash up to its last block, for every job.
        for (s, job) in st.iter_mut().zip(chunk.iter()) {
            s.v = header_sum(k, job, &mut win);
        }
        // Phase 2: V = E(sum) for all jobs at once.
        for (b, s) in blk.iter_mut().zip(st.iter()) {
            *b = s.v;
        }
        k.encrypt_many(&mut blk[..n], keys);
        for (b, s) in blk.iter_mut().zip(st.iter_mut()) {
            s.v = *b;
        }
        // Phase 3: the two layers over each message.
        for (s, job) in st.iter_mut().zip(chunk.iter()) {
            match op {
                Op::Encrypt => encrypt_layers(k, job, s, &mut win),
                Op::Decrypt => decrypt_layers(k, job, s, &mut win),
            }
        }
        // Phase 4: E(Σ ^ 3·up_last), then the tag E(that ^ Y_last) ^ 7·down_last.
        for (b, s) in blk.iter_mut().zip(st.iter()) {
            *b = s.sigma;
        }
        k.encrypt_many(&mut blk[..n], keys);
        for (b, s) in blk.iter_mut().zip(st.iter()) {
            xor_into(b, &s.y);
        }
        k.encrypt_many(&mut blk[..n], keys);
        for ((b, s), job) in blk.iter_mut().zip(st.iter_mut()).zip(chunk.iter_mut()) {
            xor_into(b, &s.down7);
            results[job.index] = finish(job, s, b);
            wipe(b);
        }
        for b in blk.iter_mut() {
            wipe(b);
        }
    }
}

/// The header hash of `AD || nonce` without its final encryption: the sum of the encrypted
/// masked blocks but the last, xored with the last block's masked (and maybe padded) value.
fn header_sum(k: Kernels, job: &Prepared<'_>, win: &mut Windows) -> Block {
    let key = job.lane.key;
    let ck = key.derived::<CopaKey>();
    let (ad, nonce) = (job.ad, job.nonce);
    let total = ad.len() + nonce.len(); // >= 16
    let blocks = total.div_ceil(BLOCK);
    let mut delta = ck.l27;
    let mut sum = [0u8; BLOCK];
    let mut i = 0;
    while i + 1 < blocks {
        let c = (blocks - 1 - i).min(WINDOW);
        let (scratch, _) = win.take(c);
        for s in scratch.iter_mut() {
            let (b, _) = header_block(ad, nonce, i);
            *s = xor(&b, &delta);
            delta = dbl(&delta);
            i += 1;
        }
        k.ecb_in_place(key, scratch, false);
        for s in scratch.iter() {
            xor_into(&mut sum, s);
        }
    }
    let (mut last, len) = header_block(ad, nonce, blocks - 1);
    delta = tpl(&delta);
    if len < BLOCK {
        last = pad10(&last, len);
        delta = tpl(&delta);
    }
    xor_into(&mut sum, &xor(&last, &delta));
    wipe(&mut last);
    wipe(&mut delta);
    sum
}

/// Message blocks and whether the last one is padded, for a plaintext of `m` bytes.
fn shape(m: usize) -> (usize, bool) {
    (m.div_ceil(BLOCK).max(1), m == 0 || !m.is_multiple_of(BLOCK))
}

/// The masks `(up, down)` of block `i` from `d = D_i` (a big-endian integer), advancing `d`
/// to `D_{i+1}`. The chain stays an integer: kept as a block, each doubling swapped its bytes
/// twice on the chain's path.
#[inline]
fn masks(d: &mut u128, last_partial: bool) -> (Block, Block) {
    let next = dbl_u128(*d);
    let mut up = *d ^ next;
    if last_partial {
        up = mul7_u128(up);
    }
    *d = next;
    (up.to_be_bytes(), next.to_be_bytes())
}

/// Encryption layers of one job; `s.v` holds `V`. Leaves `Y_last`, `Σ ^ 3·up_last` and
/// `7·down_last` in `s` and writes the ciphertext blocks and the flag byte.
fn encrypt_layers(k: Kernels, job: &Prepared<'_>, s: &mut State, win: &mut Windows) {
    let key = job.lane.key;
    let ck = key.derived::<CopaKey>();
    let mut io = job.lane.io;
    let m = io.len;
    let (n, partial) = shape(m);
    let mut d = u128::from_be_bytes(ck.l);
    let mut y = xor(&ck.l, &s.v);
    let mut sigma = [0u8; BLOCK];
    let mut up_last = [0u8; BLOCK];
    let mut down_last = [0u8; BLOCK];
    let mut i = 0;
    while i < n {
        let c = (n - i).min(WINDOW);
        let (scratch, downs) = win.take(c);
        for (sc, dn) in scratch.iter_mut().zip(downs.iter_mut()) {
            let last = i + 1 == n;
            let mut mb = if last && partial {
                pad10(&io.read_from(BLOCK * i), m - BLOCK * i)
            } else {
                io.read_block(BLOCK * i)
            };
            let (up, down) = masks(&mut d, last && partial);
            xor_into(&mut sigma, &mb);
            *sc = xor(&mb, &up);
            *dn = down;
            if last {
                up_last = up;
                down_last = down;
            }
            wipe(&mut mb);
            i += 1;
        }
        k.ecb_in_place(key, scratch, false);
        for sc in scratch.iter_mut() {
            xor_into(&mut y, sc);
            *sc = y;
        }
        k.ecb_in_place(key, scratch, false);
        let base = i - c;
        for (j, (sc, dn)) in scratch.iter().zip(downs.iter()).enumerate() {
            io.write_block(BLOCK * (base + j), &xor(sc, dn));
        }
    }
    io.output(BLOCK * n + 1)[BLOCK * n] = u8::from(partial);
    s.y = y;
    s.sigma = xor(&sigma, &tpl(&up_last));
    s.down7 = mul7(&down_last);
    s.n = n;
    s.partial = partial;
    s.ok = 1;
    s.m = m;
    d.zeroize();
    for b in [&mut y, &mut sigma, &mut up_last, &mut down_last] {
        wipe(b);
    }
}

/// Decryption layers of one job; `s.v` holds `V`. Writes the `n` (padded) plaintext blocks,
/// and leaves in `s` what the tag needs and whether flag and padding are well-formed.
fn decrypt_layers(k: Kernels, job: &Prepared<'_>, s: &mut State, win: &mut Windows) {
    let key = job.lane.key;
    let ck = key.derived::<CopaKey>();
    let io = job.lane.io;
    let n = io.len / BLOCK; // validated: len = 16n + 1, n >= 1
    let flag = io.read_from(BLOCK * n)[0];
    // The flag is part of the (public) ciphertext; anything but 0 or 1 fails later, after the
    // same amount of work on the blocks as 0 would take.
    let partial = flag == 1;
    let mut d = u128::from_be_bytes(ck.l);
    let mut y = xor(&ck.l, &s.v);
    let mut sigma = [0u8; BLOCK];
    let mut up_last = [0u8; BLOCK];
    let mut down_last = [0u8; BLOCK];
    let mut last_block = [0u8; BLOCK];
    let mut i = 0;
    while i < n {
        let c = (n - i).min(WINDOW);
        let (scratch, ups) = win.take(c);
        for (sc, u) in scratch.iter_mut().zip(ups.iter_mut()) {
            let last = i + 1 == n;
            let (up, down) = masks(&mut d, last && partial);
            *sc = xor(&io.read_block(BLOCK * i), &down);
            *u = up;
            if last {
                up_last = up;
                down_last = down;
            }
            i += 1;
        }
        k.ecb_in_place(key, scratch, true);
        for sc in scratch.iter_mut() {
            let yi = *sc;
            *sc = xor(&yi, &y);
            y = yi;
        }
        k.ecb_in_place(key, scratch, true);
        let base = i - c;
        for (j, (sc, u)) in scratch.iter().zip(ups.iter()).enumerate() {
            let mut mb = xor(sc, u);
            xor_into(&mut sigma, &mb);
            io.write_block(BLOCK * (base + j), &mb);
            if base + j + 1 == n {
                last_block = mb;
            }
            wipe(&mut mb);
        }
    }
    // Padding of the last block (partial only): its last non-zero byte must be 0x80. Found
    // without data-dependent branches: the plaintext of a forgery must not leak through
    // timing.
    // On the block as one little-endian integer (byte j = bits 8j..8j+8): the last non-zero
    // byte holds the highest set bit (LZCNT and a shift by a register count, both constant
    // time). A loop over the bytes also worked, but had the compiler keep the whole last
    // block as sixteen bytes, written out one by one (measured: decryption 40% slower).
    let v = u128::from_le_bytes(last_block);
    let nonzero = !v.ct_eq(&0);
    let top_byte = 127u32.wrapping_sub(v.leading_zeros()) / 8;
    let byte = (v.wrapping_shr(8 * top_byte) & 0xff) as u32;
    let pos = u32::conditional_select(&0, &top_byte, nonzero);
    let val = u32::conditional_select(&0, &byte, nonzero);
    let pad_ok = val.ct_eq(&0x80);
    let flag_ok = Choice::from(u8::from(flag <= 1));
    let ok = flag_ok & (!Choice::from(u8::from(partial)) | pad_ok);
    s.ok = ok.unwrap_u8();
    // Plaintext length if the checks pass (public once they do).
    s.m = if partial {
        BLOCK * (n - 1) + pos as usize
    } else {
        BLOCK * n
    };
    s.y = y;
    s.sigma = xor(&sigma, &tpl(&up_last));
    s.down7 = mul7(&down_last);
    s.n = n;
    s.partial = partial;
    d.zeroize();
    for b in [
        &mut y,
        &mut sigma,
        &mut up_last,
        &mut down_last,
        &mut last_block,
    ] {
        wipe(b);
    }
}

/// Writes or checks the tag `t` of one job and gives its result.
fn finish(job: &mut Prepared<'_>, s: &State, t: &Block) -> JobResult {
    match &mut job.tag {
        TagIo::Out(out) => {
            store_short(out, t);
            Ok(BLOCK * s.n + 1)
        }
        TagIo::In(expected) => {
            let mut io = job.lane.io;
            let ok = Choice::from(u8::from(tag_matches(t, expected))) & Choice::from(s.ok);
            if !bool::from(ok) {
                io.zero_output(io.len);
                return Err(Error::AuthenticationFailed);
            }
            // Authentic: the padding bytes after the plaintext are not part of it.
            let room = BLOCK * s.n;
            io.output(room)[s.m..].zeroize();
            Ok(s.m)
        }
        TagIo::None => Err(Error::TagMisuse), // excluded by validation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_masks() {
        assert_eq!(shape(0), (1, true));
        assert_eq!(shape(1), (1, true));
        assert_eq!(shape(16), (1, false));
        assert_eq!(shape(17), (2, true));
        assert_eq!(shape(32), (2, false));
        let l: Block = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x91);
        let mut d = u128::from_be_bytes(l);
        let (up, down) = masks(&mut d, false);
        assert_eq!(up, tpl(&l));
        assert_eq!(down, dbl(&l));
        assert_eq!(d.to_be_bytes(), dbl(&l));
        let (up7, _) = masks(&mut u128::from_be_bytes(l), true);
        assert_eq!(
            up7,
            xor(&xor(&dbl(&dbl(&tpl(&l))), &dbl(&tpl(&l))), &tpl(&l))
        );
    }

    #[test]
    fn header_blocks_straddle_ad_and_nonce() {
        let ad = [1u8, 2, 3];
        let nonce: Block = core::array::from_fn(|i| 0x10 + i as u8);
        let (b0, l0) = header_block(&ad, &nonce, 0);
        assert_eq!(l0, 16);
        assert_eq!(&b0[..3], &ad);
        assert_eq!(&b0[3..], &nonce[..13]);
        let (b1, l1) = header_block(&ad, &nonce, 1);
        assert_eq!(l1, 3);
        assert_eq!(&b1[..3], &nonce[13..]);
        assert_eq!(&b1[3..], &[0; 13]);
    }
}
