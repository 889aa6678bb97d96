//! `aes128-cobra-r`: COBRA as **reconstructed** by the project (`shared/specs/cobra.md`).
//!
//! **COBRA-R is a reconstruction, not COBRA.** The specification section of the COBRA paper
//! (Andreeva, Luykx, Mennink, Yasuda, FSE 2014) was not available and no designer code exists;
//! COBRA-R reproduces the formulas of the only detailed secondary description (Bogdanov,
//! Lauridsen, Tischhauser 2015) and fills the gaps (per-pair equations, mask schedule,
//! associated-data hash, encodings) with the project's own choices. It has not been verified
//! against the published COBRA and cannot interoperate with it. The published COBRA's
//! authenticity is broken besides (M. Nandi, ASIACRYPT 2014): this mode exists only for the
//! performance comparison (1 AES call + 1 GF(2^128) multiplication per block, parallel AES,
//! a sequential multiplication chain) and must not protect data.
//!
//! The construction (spec §3-§7; field: big-endian integer convention, `x^128 + x^7 + x^2 + x
//! + 1`, doubling = CMAC doubling):
//!
//! * per key, cached with the key ([`Derived`], slot `COBRA_R`): `L = E(1)`, `L' = 4L`,
//!   `J = E(0)`, `L·L`, `T_in = 3(4L' ⊕ L)`, `T_out = 3·3(4L' ⊕ L)`, the AD-hash start mask
//!   `3^3·J`, and multiplication by `L` as a GHASH key of `rev(L)`: the big-endian product is
//!   `X·L = rev(rev(X) ⊗ rev(L))`, `⊗` the GCM product and `rev` the 128-bit reversal;
//! * per pair `(X_i, Y_i)`: `σ = X ⊕ V`, `ρ = Y ⊕ σ·L`, `V = ρ·L` (the chain, from
//!   `V_0 = L·L ⊕ N·L`), `C_{2i-1} = E(σ ⊕ Δ_i) ⊕ ρ`, `C_{2i} = E(C_{2i-1} ⊕ 3Δ_i) ⊕ σ`,
//!   `Δ_1 = L'`, `Δ_{i+1} = 2Δ_i`; `Σ = ⊕(σ_i ⊕ ρ_i)`;
//! * `𝒜` = AES-COPA v1's PMAC1' of the AD keyed with `J`; `T = E(E(Σ ⊕ T_in) ⊕ N ⊕ 𝒜 ⊕
//!   T_out)`.
//!
//! Scheduling. The chain has no AES call, only multiplications, so a message runs in windows
//! of [`W`] pairs: the chain fills the window's `σ`/`ρ` values, then the window's first
//! Feistel round is one wide ECB call ([`Kernels::parallel`]) and the second another (in
//! decryption both rounds come first, from the ciphertext alone, then the chain). The
//! per-message fixed work is batched across all jobs of the call: the AD hashes' final
//! calls `𝒜 = E(v)` together with `E(Σ ⊕ T_in)` in one [`Kernels::encrypt_many`], then the
//! tags `T` in another. The single path runs the same code with one job.
//!
//! Decryption is decrypt-then-verify in one pass (the tag needs `Σ`, i.e. every AES call of
//! the message): the plaintext is written as it is computed and, on a tag mismatch (compared
//! in constant time), the output `[..len]` is zeroed before the job gets
//! [`Error::AuthenticationFailed`].
//!
//! Secrets wiped: the chain value, `Σ`, masks, the window buffers, the AD-hash state and the
//! tag block; the derived key material on drop.

use crate::aes::{AesKey, Derived, Kernels, Parallel};
use crate::block::{dbl, tag_matches, wipe, Block, IoPtrs, BLOCK};
use crate::gf128::{tpl, GhashKey};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::{Error, JobResult, Op};

/// Pairs per window: each Feistel round of a window is one wide ECB call of `W` blocks.
const W: usize = 16;

/// Jobs per batched fixed-work call (stack buffers).
const CHUNK: usize = 32;

/// The per-key constants of COBRA-R (spec §3), wiped on drop.
pub(crate) struct CobraKeys {
    /// Multiplication by `L` in the big-endian field, as a GCM-field key `rev(L)`.
    mul: GhashKey,
    /// `L·L` (the first half of `V_0`).
    ll: Block,
    /// `L' = 4L` (`Δ_1`).
    lp: Block,
    /// `3(4L' ⊕ L)`.
    t_in: Block,
    /// `3·3(4L' ⊕ L)`.
    t_out: Block,
    /// `3^3·J`, the AD hash's first mask.
    ad0: Block,
}

/// The 128-bit reversal: maps the big-endian-integer convention to GCM's and back.
#[inline]
fn rev(b: &Block) -> Block {
    u128::from_be_bytes(*b).reverse_bits().to_be_bytes()
}

#[inline]
fn xor(a: &Block, b: &Block) -> Block {
    (u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(*b)).to_ne_bytes()
}

impl CobraKeys {
    /// `x·L` in the big-endian field.
    #[inline]
    fn mul_l(&self, x: &Block) -> Block {
        let mut r = rev(x);
        let mut p = self.mul.mul_h(&r);
        let out = rev(&p);
        wipe(&mut r);
        wipe(&mut p);
        out
    }
}

impl Derived for CobraKeys {
    const SLOT: usize = crate::aes::slot::COBRA_R;

    fn derive(key: &AesKey) -> CobraKeys {
        let mut l = [0u8; BLOCK];
        l[BLOCK - 1] = 1;
        key.encrypt_block(&mut l);
        let mut j = [0u8; BLOCK];
        key.encrypt_block(&mut j);
        let mut rl = rev(&l);
        let mul = GhashKey::new(&rl);
        wipe(&mut rl);
        let lp = dbl(&dbl(&l));
        let mut dt = xor(&dbl(&dbl(&lp)), &l);
        let t_in = tpl(&dt);
        let t_out = tpl(&t_in);
        let ad0 = tpl(&tpl(&tpl(&j)));
        let mut keys = CobraKeys {
            mul,
            ll: [0; BLOCK],
            lp,
            t_in,
            t_out,
            ad0,
        };
        keys.ll = keys.mul_l(&l);
        wipe(&mut l);
        wipe(&mut j);
        wipe(&mut dt);
        keys
    }
}

impl Drop for CobraKeys {
    fn drop(&mut self) {
        wipe(&mut self.ll);
        wipe(&mut self.lp);
        wipe(&mut self.t_in);
        wipe(&mut self.t_out);
        wipe(&mut self.ad0);
    }
}

/// The whole input block `[off, off + 16)` (`off + 16 <= io.len`).
#[inline]
fn read_block(io: &IoPtrs<'_>, off: usize) -> Block {
    assert!(off + BLOCK <= io.len);
    let mut v = *io;
    v.len = off + BLOCK;
    v.read_from(off)
}

/// `E` on every block of `blocks` under `key`, through the wide ECB kernel.
fn ecb(k: Kernels, key: &AesKey, blocks: &mut [Block]) {
    let n = blocks.len();
    if n == 0 {
        return;
    }
    let bytes = blocks.as_flattened_mut();
    let io = IoPtrs::in_place(bytes, n * BLOCK);
    k.parallel(Parallel::EcbEncrypt, key, &io, n, &[0; BLOCK]);
}

/// The AD hash's state `v` before its final call `𝒜 = E(v)` (spec §5): every AD block but
/// the last encrypted under its mask (windows of wide ECB calls), the last one (whole, or
/// 10*-padded, also when the AD is empty) xored in with `3δ` or `3·3δ`.
fn ad_state(k: Kernels, key: &AesKey, d: &CobraKeys, ad: &[u8]) -> Block {
    let full = ad.len().saturating_sub(1) / BLOCK;
    let mut delta = d.ad0;
    let mut v = [0u8; BLOCK];
    let mut buf = [[0u8; BLOCK]; W];
    let mut j = 0;
    while j < full {
        let n = (full - j).min(W);
        for (i, b) in buf[..n].iter_mut().enumerate() {
            let at = (j + i) * BLOCK;
            let mut a = [0u8; BLOCK];
            a.copy_from_slice(&ad[at..at + BLOCK]);
            *b = xor(&a, &delta);
            delta = dbl(&delta);
        }
        ecb(k, key, &mut buf[..n]);
        for b in &buf[..n] {
            v = xor(&v, b);
        }
        j += n;
    }
    let last = &ad[full * BLOCK..];
    let mut pad = [0u8; BLOCK];
    pad[..last.len()].copy_from_slice(last);
    if last.len() == BLOCK {
        delta = tpl(&delta);
    } else {
        pad[last.len()] = 0x80;
        delta = tpl(&tpl(&delta));
    }
    v = xor(&xor(&v, &delta), &pad);
    wipe(&mut delta);
    wipe(&mut pad);
    for b in &mut buf {
        wipe(b);
    }
    v
}

/// `V_0 = L·L ⊕ N·L`.
fn v0(d: &CobraKeys, nonce: &[u8]) -> Block {
    let mut n = [0u8; BLOCK];
    n.copy_from_slice(&nonce[..BLOCK]);
    xor(&d.ll, &d.mul_l(&n))
}

/// Encrypts the message of `io` (spec §6) and returns `Σ`.
fn encrypt_body(k: Kernels, key: &AesKey, d: &CobraKeys, io: &IoPtrs<'_>, nonce: &[u8]) -> Block {
    let pairs = io.len / (2 * BLOCK);
    let mut v = v0(d, nonce);
    let mut delta = d.lp;
    let mut sum = [0u8; BLOCK];
    let mut sig = [[0u8; BLOCK]; W];
    let mut rho = [[0u8; BLOCK]; W];
    let mut buf = [[0u8; BLOCK]; W];
    let mut dl = [[0u8; BLOCK]; W];
    let mut p = 0;
    while p < pairs {
        let n = (pairs - p).min(W);
        // The chain: σ, ρ of the window (reads the whole window before any write).
        for i in 0..n {
            let off = (p + i) * 2 * BLOCK;
            let s = xor(&read_block(io, off), &v);
            let r = xor(&read_block(io, off + BLOCK), &d.mul_l(&s));
            v = d.mul_l(&r);
            sum = xor(&sum, &xor(&s, &r));
            sig[i] = s;
            rho[i] = r;
            dl[i] = delta;
            buf[i] = xor(&s, &delta);
            delta = dbl(&delta);
        }
        // Round 1: C_{2i-1} = E(σ ⊕ Δ) ⊕ ρ.
        ecb(k, key, &mut buf[..n]);
        for i in 0..n {
            let c1 = xor(&buf[i], &rho[i]);
            io.write_block((p + i) * 2 * BLOCK, &c1);
            buf[i] = xor(&c1, &tpl(&dl[i]));
        }
        // Round 2: C_{2i} = E(C_{2i-1} ⊕ 3Δ) ⊕ σ.
        ecb(k, key, &mut buf[..n]);
        for i in 0..n {
            io.write_block((p + i) * 2 * BLOCK + BLOCK, &xor(&buf[i], &sig[i]));
        }
        p += n;
    }
    for b in sig
        .iter_mut()
        .chain(&mut rho)
        .chain(&mut buf)
        .chain(&mut dl)
    {
        wipe(b);
    }
    wipe(&mut v);
    wipe(&mut delta);
    sum
}

/// Decrypts the ciphertext of `io` (spec §7; the output is written, unverified) and returns
/// `Σ`.
fn decrypt_body(k: Kernels, key: &AesKey, d: &CobraKeys, io: &IoPtrs<'_>, nonce: &[u8]) -> Block {
    let pairs = io.len / (2 * BLOCK);
    let mut v = v0(d, nonce);
    let mut delta = d.lp;
    let mut sum = [0u8; BLOCK];
    let mut c1 = [[0u8; BLOCK]; W];
    let mut c2 = [[0u8; BLOCK]; W];
    let mut buf = [[0u8; BLOCK]; W];
    let mut dl = [[0u8; BLOCK]; W];
    let mut p = 0;
    while p < pairs {
        let n = (pairs - p).min(W);
        for i in 0..n {
            let off = (p + i) * 2 * BLOCK;
            c1[i] = read_block(io, off);
            c2[i] = read_block(io, off + BLOCK);
            dl[i] = delta;
            buf[i] = xor(&c1[i], &tpl(&delta));
            delta = dbl(&delta);
        }
        // σ = E(C_{2i-1} ⊕ 3Δ) ⊕ C_{2i}; the buffer then holds σ ⊕ Δ for round 1.
        ecb(k, key, &mut buf[..n]);
        for i in 0..n {
            c2[i] = xor(&buf[i], &c2[i]); // σ
            buf[i] = xor(&c2[i], &dl[i]);
        }
        // ρ = E(σ ⊕ Δ) ⊕ C_{2i-1}.
        ecb(k, key, &mut buf[..n]);
        for i in 0..n {
            let s = c2[i];
            let r = xor(&buf[i], &c1[i]);
            let off = (p + i) * 2 * BLOCK;
            io.write_block(off, &xor(&s, &v));
            io.write_block(off + BLOCK, &xor(&r, &d.mul_l(&s)));
            v = d.mul_l(&r);
            sum = xor(&sum, &xor(&s, &r));
        }
        p += n;
    }
    for b in c1.iter_mut().chain(&mut c2).chain(&mut buf).chain(&mut dl) {
        wipe(b);
    }
    wipe(&mut v);
    wipe(&mut delta);
    sum
}

/// Runs COBRA-R `op` over validated jobs (16-byte nonce and tag, message an even number of
/// blocks), writing `results[job.index]`. Both paths run this code; `Path::Single` calls it
/// with one job.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    _path: Path,
) {
    for chunk in jobs.chunks_mut(CHUNK) {
        let Some(first) = chunk.first() else { continue };
        let n = chunk.len();
        // blocks[2j] = AD state v_j, blocks[2j+1] = Σ_j ⊕ T_in.
        let mut blocks = [[0u8; BLOCK]; 2 * CHUNK];
        let mut keys: [&AesKey; 2 * CHUNK] = [first.lane.key; 2 * CHUNK];
        for (j, job) in chunk.iter().enumerate() {
            let key = job.lane.key;
            let d = key.derived::<CobraKeys>();
            let io = job.lane.io;
            let sum = match op {
                Op::Encrypt => encrypt_body(k, key, d, &io, job.nonce),
                Op::Decrypt => decrypt_body(k, key, d, &io, job.nonce),
            };
            blocks[2 * j] = ad_state(k, key, d, job.ad);
            blocks[2 * j + 1] = xor(&sum, &d.t_in);
            keys[2 * j] = key;
            keys[2 * j + 1] = key;
        }
        // 𝒜 and E(Σ ⊕ T_in) of every job: one batched call.
        k.encrypt_many(&mut blocks[..2 * n], &keys[..2 * n]);
        // T = E(E(Σ ⊕ T_in) ⊕ N ⊕ 𝒜 ⊕ T_out): a second one.
        let mut tags = [[0u8; BLOCK]; CHUNK];
        for (j, job) in chunk.iter().enumerate() {
            let d = job.lane.key.derived::<CobraKeys>();
            let mut nb = [0u8; BLOCK];
            nb.copy_from_slice(&job.nonce[..BLOCK]);
            tags[j] = xor(
                &xor(&blocks[2 * j + 1], &nb),
                &xor(&blocks[2 * j], &d.t_out),
            );
            keys[j] = job.lane.key;
        }
        k.encrypt_many(&mut tags[..n], &keys[..n]);
        for (job, t) in chunk.iter_mut().zip(tags.iter_mut()) {
            let len = job.lane.io.len;
            results[job.index] = match &mut job.tag {
                TagIo::Out(out) => {
                    let m = out.len().min(BLOCK);
                    out[..m].copy_from_slice(&t[..m]);
                    Ok(len)
                }
                TagIo::In(expected) => {
                    if tag_matches(t, expected) {
                        Ok(len)
                    } else {
                        job.lane.io.zero_output(len);
                        Err(Error::AuthenticationFailed)
                    }
                }
                TagIo::None => Err(Error::TagMisuse), // excluded by validation
            };
            wipe(t);
        }
        for b in &mut blocks {
            wipe(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn blk(s: &str) -> Block {
        hex(s).try_into().unwrap()
    }

    /// The intermediate values of the spec's worked example (§9).
    #[test]
    fn worked_example_constants() {
        let Ok(key) = AesKey::new(&hex("2B7E151628AED2A6ABF7158809CF4F3C")) else {
            return; // no AES-NI
        };
        let d = CobraKeys::derive(&key);
        let n = hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF");
        assert_eq!(d.lp, blk("5C49F500D2C6FAFEBBD19AE71DC9BF9F"));
        assert_eq!(d.ll, blk("B9BFD006D62B3543C3464EA064DA2407"));
        assert_eq!(v0(&d, &n), blk("73FE6E7C8166AF53B530CD7FEA5FCCAB"));
        assert_eq!(
            d.mul_l(&blk("5E5175C87BF356D192DB143183AB4861")),
            blk("E2B3BABB3AD12902C0A2C672960E6180")
        );
        assert_eq!(d.t_in, blk("6A5EFBC580FEFFCFC2D6176ED0FDB347"));
        assert_eq!(d.t_out, blk("BEE30C4E81030050477A39B37106D5C9"));
        let Some(k) = Kernels::new(crate::Backend::Ni) else {
            return;
        };
        let ad_hash = |ad: &[u8]| {
            let mut v = ad_state(k, &key, &d, ad);
            key.encrypt_block(&mut v);
            v
        };
        assert_eq!(ad_hash(&[]), blk("373B0CBA334460AAA32F93DC70130EB1"));
        let ad: Vec<u8> = (0u8..17).collect();
        assert_eq!(ad_hash(&ad[..16]), blk("C21BF837CE927A981926659A30CF70DD"));
        assert_eq!(ad_hash(&ad), blk("4B9EC72EF5CD197EFD51E2DC83595C28"));
    }
}
