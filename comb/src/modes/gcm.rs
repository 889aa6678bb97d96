//! GCM (SP 800-38D) with AES: authenticated encryption with associated data.
//!
//! * `J0` — the pre-counter block: `IV || 0^31 || 1` for a 12-byte nonce (the fast path),
//!   else `GHASH_H(IV || 0^(s+64) || [len(IV)]_64)`. Made by validation ([`j0_into`]), kept in the
//!   job's `chain` (wiped when the job is dropped).
//! * `H = E_K(0^128)` — the GHASH key, computed on a key's first GCM use and cached with the
//!   key ([`AesKey::ghash_key`]): powers H^1..H^8 for the 8-block aggregated GHASH.
//! * Encryption: `C = GCTR(inc32(J0), P)` — the wide CTR kernel with a 32-bit counter
//!   ([`CounterWidth::Low32`]) — then `S = GHASH_H(A || 0^v || C || 0^u || [len(A)]_64 ||
//!   [len(C)]_64)` and `T = MSB_t(E_K(J0) ^ S)`.
//! * Decryption: **verify, then decrypt**. `S` is computed over the received ciphertext, the
//!   tag compared in constant time ([`tag_matches`]), and only if it matches is `P =
//!   GCTR(inc32(J0), C)` written. On a mismatch no plaintext is ever computed: the output
//!   bytes `[..len]` are zeroed (in place that is the ciphertext; out of place the output was
//!   never written) and the job gets [`Error::AuthenticationFailed`], the same state as every
//!   failed authentication of the library leaves.
//!
//! Batch path and single path run the same code: the per-message fixed work, `E_K(J0)` of
//! every job, is one batched cipher call (one block per job, as CMAC's finalisation), then per
//! job the wide CTR from `inc32(J0)` and GHASH. On the single path each call has one job.
//! Encrypting on VAES with a VPCLMULQDQ GHASH, CTR and GHASH run as one stitched kernel
//! ([`Kernels::gcm_encrypt`]): every message where the GHASH runs on zmm, messages of 512
//! bytes or more where it runs on ymm. The other messages (and every message elsewhere) run
//! CTR and then GHASH, two messages' hashes side by side.
//!
//! Secrets wiped after use: `inc32(J0)`, `E_K(J0)`, the GHASH state `S` and `E_K(J0) ^ S`
//! (the full 16-byte tag block). `J0` itself is the job's `chain`, wiped with the job.

use crate::aes::{AesKey, CounterWidth, Kernels};
use crate::block::{store_short, tag_matches, wipe, xor, Block, BLOCK};
use crate::gf128::{Aggregation, GhashKey};
use crate::modes::{Prepared, TagIo};
use crate::{Error, JobResult, Op};

/// Jobs per batched `E_K(J0)` call: the blocks and key pointers live on the stack (no heap
/// allocation per call, which matters on the single path, one call per message).
const CHUNK: usize = 64;

/// Capacity of the arrays for calls of at most this many jobs (the single path has one).
const SMALL: usize = 8;

/// The pre-counter block `J0` of SP 800-38D §7.1 step 2 for nonce `iv` (1 byte or more;
/// validated by the caller), written into `j`, a job's chaining block.
///
/// Written in place rather than returned: a returned block came back in two 64-bit
/// registers, was stored as two halves and reloaded as one 16-byte value when the job was
/// built, a store-forwarding stall that cost ~10% of a batch of 64-byte packets. Inlined into
/// the job set-up with the hashed case apart: once the compiler stopped inlining the whole
/// function, the call per job cost 5% of a batch of 64-byte packets.
#[inline]
pub(crate) fn j0_into(j: &mut Block, key: &AesKey, iv: &[u8]) {
    if let Some((lo, hi)) = iv.split_first_chunk::<8>().filter(|_| iv.len() == 12) {
        // IV || 0^31 || 1.
        let hi: [u8; 4] = hi.try_into().unwrap_or([0; 4]);
        let v = u128::from(u64::from_le_bytes(*lo))
            | u128::from(u32::from_le_bytes(hi)) << 64
            | 1u128 << 120;
        *j = v.to_le_bytes();
    } else {
        j0_hashed(j, key, iv);
    }
}

/// `J0` of a nonce of any length but 12 bytes: the GHASH of the nonce zero-padded to whole
/// blocks (`ghash_update` pads a partial last block), then of the block `0^64 ||
/// [len(IV)]_64` (in bits; the nonce is at most 2^61 - 1 bytes, so the bit length fits 64
/// bits).
#[inline(never)]
fn j0_hashed(j: &mut Block, key: &AesKey, iv: &[u8]) {
    *j = [0; BLOCK];
    let g = key.ghash_key();
    g.ghash_update(j, iv);
    let bits = (iv.len() as u64).wrapping_mul(8);
    g.ghash_blocks(j, &[u128::from(bits).to_be_bytes()], Aggregation::One);
}

/// `inc32(x)`: the last 32 bits of `x` plus one, mod 2^32; the first 96 bits unchanged.
fn inc32(x: &Block) -> Block {
    let mut y = *x;
    let low = u32::from_be_bytes([x[12], x[13], x[14], x[15]]).wrapping_add(1);
    y[12..].copy_from_slice(&low.to_be_bytes());
    y
}

/// Runs GCM `op` over validated jobs (nonce, tag length and direction, data length and output
/// room already checked; `chain` holds `J0`), writing `results[job.index]`.
pub(crate) fn run(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult], op: Op) {
    for chunk in jobs.chunks_mut(CHUNK) {
        // The per-job blocks live in stack arrays sized by the chunk's capacity: a small call
        // (the single path: one job) does not clear and carry 64 jobs' worth.
        if chunk.len() <= SMALL {
            run_chunk::<SMALL>(k, chunk, results, op);
        } else {
            run_chunk::<CHUNK>(k, chunk, results, op);
        }
    }
}

/// One chunk of at most `C` jobs.
fn run_chunk<const C: usize>(
    k: Kernels,
    chunk: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
) {
    let n = chunk.len().min(C);
    let chunk = &mut chunk[..n];
    let Some(first) = chunk.first() else { return };
    // E_K(J0) of every job of the chunk in one batched cipher call, and every job's first
    // counter block inc32(J0) made ahead of its use (made just before the CTR kernel
    // loads it, its 4-byte store stalled the kernel's 16-byte load).
    let mut ek = [[0u8; BLOCK]; C];
    let mut ctr = [[0u8; BLOCK]; C];
    let mut keys: [&AesKey; C] = [first.lane.key; C];
    for (((e, c), k), job) in ek
        .iter_mut()
        .zip(ctr.iter_mut())
        .zip(keys.iter_mut())
        .zip(chunk.iter())
    {
        *e = job.lane.chain;
        *c = inc32(&job.lane.chain);
        *k = job.lane.key;
    }
    k.encrypt_many(&mut ek[..n], &keys[..n]);
    // S of every job: the tag block before E_K(J0) is added; the jobs' hashes side by side.
    let mut s = [[0u8; BLOCK]; C];
    let mut ghash_keys: [&GhashKey; C] = [first.lane.key.ghash_key(); C];
    match op {
        Op::Encrypt => {
            // A message runs CTR and GHASH in one kernel where the backends allow it; the
            // others (`rest`, job indices: C <= 256) hash side by side.
            const { assert!(C <= 256) };
            let mut rest = [0u8; C];
            let mut m = 0;
            for (i, job) in chunk.iter().enumerate() {
                let io = &job.lane.io;
                let out = matches!(job.tag, TagIo::Out(_));
                if !(out && k.gcm_encrypt(job.lane.key, io, &ctr[i], job.ad, &mut s[i])) {
                    rest[m] = i as u8;
                    m += 1;
                }
            }
            // Each job's CTR runs just before its hash starts, so the hash reads the
            // ciphertext from L1 (a chunk's CTR first and then its hashes, the ciphertext of
            // a batch of 1.5 KB packets no longer fit there: measured 8% slower). Nor are
            // short messages' counter blocks batched across jobs into one cipher call: on the
            // Intel AVX-512 VM, at 80 bytes the per-job CTR calls were 10% of the samples
            // and one wide call over the same blocks took half that, but building the
            // counters and the stack arrays (12 KB for 64 jobs of up to 8 blocks) and xoring
            // the keystream took more than the rest: 80 B 1.58 -> 2.32 TSC cycles/byte, the
            // realistic mix 0.336 -> 0.395.
            let data = |j: usize| {
                let i = usize::from(rest[j]);
                let job = &chunk[i];
                let io = job.lane.io;
                if let TagIo::Out(_) = job.tag {
                    k.ctr(job.lane.key, &io, &ctr[i], CounterWidth::Low32);
                }
                // SAFETY: validation checked a non-null output of at least `len` bytes,
                // just written by the CTR pass (a job of the wrong tag direction, which
                // validation excludes, would hash its unwritten output and get no tag).
                // Jobs' outputs are distinct buffers, so writing a later job's output does
                // not touch this view; nothing writes this one while it lives.
                (job.ad, unsafe {
                    core::slice::from_raw_parts(io.dst, io.len)
                })
            };
            for (g, &i) in ghash_keys.iter_mut().zip(&rest[..m]) {
                *g = chunk[usize::from(i)].lane.key.ghash_key();
            }
            let mut hashed = [[0u8; BLOCK]; C];
            GhashKey::gcm_ghash_many(&ghash_keys[..m], data, &mut hashed[..m]);
            for (h, &i) in hashed.iter_mut().zip(&rest[..m]) {
                s[usize::from(i)] = *h;
                wipe(h);
            }
            for ((job, s), e) in chunk.iter_mut().zip(s.iter_mut()).zip(&ek) {
                finish_encrypt(job, s, e, &mut results[job.index]);
            }
        }
        Op::Decrypt => {
            for (g, job) in ghash_keys.iter_mut().zip(chunk.iter()) {
                *g = job.lane.key.ghash_key();
            }
            // SAFETY: by the `IoPtrs` invariant `src` is valid for reads of `len` bytes
            // (non-null even when empty: it comes from a slice). The view of job i is read
            // only by its hash, which `gcm_ghash_each` finishes before it calls `verify(i)`,
            // the only writer of job i's output (in place, the same memory); jobs' buffers
            // are distinct, so no other job's output overlaps it.
            let data = |i: usize| {
                let job = &chunk[i];
                (job.ad, unsafe {
                    core::slice::from_raw_parts(job.lane.io.src, job.lane.io.len)
                })
            };
            // Each job verified and decrypted once its hash is done (on zmm right after
            // it, so that its CTR overlaps the next job's hash).
            let verify = |i: usize, s: &mut Block| {
                let job = &chunk[i];
                results[job.index] = finish_decrypt(k, job, s, &ek[i], &ctr[i]);
            };
            GhashKey::gcm_ghash_each(&ghash_keys[..n], data, &mut s[..n], verify);
        }
    }
    for ((e, c), s) in ek.iter_mut().zip(ctr.iter_mut()).zip(s.iter_mut()).take(n) {
        wipe(e);
        wipe(c);
        wipe(s);
    }
}

/// Writes one job's tag `MSB_t(E_K(J0) ^ S)` (`ek` = `E_K(J0)`; the ciphertext is written)
/// and its result into `result`.
///
/// The result is written in place rather than returned: returned, it was built on the stack
/// in two 8-byte halves and copied into the results with 16-byte loads, a store-forwarding
/// stall per job that took a third of this function's time in a batch. (The other modes'
/// [`crate::modes::finish_tag`], which writes in place too, measured 1-2% slower here on
/// 64-byte packets, not being inlined.)
fn finish_encrypt(job: &mut Prepared<'_>, s: &mut Block, ek: &Block, result: &mut JobResult) {
    let TagIo::Out(tag) = &mut job.tag else {
        *result = Err(Error::TagMisuse); // excluded by validation
        return;
    };
    *s = xor(s, ek);
    store_short(tag, s);
    *result = Ok(job.lane.io.len);
}

/// Verifies one job's tag (`s` = its `S`, `ek` = `E_K(J0)`) and, only if it matches, decrypts
/// it from `ctr` = `inc32(J0)`; else zeroes its output.
fn finish_decrypt(
    k: Kernels,
    job: &Prepared<'_>,
    s: &mut Block,
    ek: &Block,
    ctr: &Block,
) -> JobResult {
    let TagIo::In(expected) = &job.tag else {
        return Err(Error::TagMisuse); // excluded by validation
    };
    let io = job.lane.io;
    let len = io.len;
    *s = xor(s, ek);
    if !tag_matches(s, expected) {
        io.zero_output(len);
        return Err(Error::AuthenticationFailed);
    }
    k.ctr(job.lane.key, &io, ctr, CounterWidth::Low32);
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inc32_wraps_in_the_low_word_only() {
        let mut x = [0xffu8; 16];
        let y = inc32(&x);
        assert_eq!(y[..12], [0xff; 12]);
        assert_eq!(y[12..], [0; 4]);
        x[12..].copy_from_slice(&[0, 0, 0x01, 0xff]);
        assert_eq!(inc32(&x)[12..], [0, 0, 0x02, 0x00]);
    }

    /// J0 of the GCM spec's test cases 5 (8-byte IV) and 6 (60-byte IV), Appendix B: the
    /// first counter block Y0 printed there.
    #[test]
    fn j0_of_spec_test_cases() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let Ok(key) = AesKey::new(&hex("feffe9928665731c6d6a8f9467308308")) else {
            return; // no AES-NI
        };
        let iv5 = hex("cafebabefacedbad");
        let j0 = |iv: &[u8]| {
            let mut j = [0u8; 16];
            j0_into(&mut j, &key, iv);
            j
        };
        assert_eq!(j0(&iv5).to_vec(), hex("c43a83c4c4badec4354ca984db252f7d"));
        let iv6 = hex(concat!(
            "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728",
            "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b"
        ));
        assert_eq!(j0(&iv6).to_vec(), hex("3bab75780a31c059f83d2a44752f9864"));
        let iv12 = hex("cafebabefacedbaddecaf888");
        assert_eq!(j0(&iv12).to_vec(), hex("cafebabefacedbaddecaf88800000001"));
    }

    #[test]
    fn ghash_length_block() {
        // GCM spec test case 1's S: GHASH of the lengths block alone (both zero) is zero.
        let g = GhashKey::new(&[0x42; 16]);
        let mut s = [[1u8; 16]; 2];
        GhashKey::gcm_ghash_many(&[&g, &g], |_| (&[], &[]), &mut s);
        assert_eq!(s, [[0; 16]; 2]);
    }
}
