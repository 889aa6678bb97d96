//! CCM (NIST SP 800-38C, RFC 3610) with AES: authenticated encryption with associated data.
//!
//! For a nonce `N` of `n` = 7..=13 bytes the length field has `q = 15 - n` bytes (validation
//! bounds the message by `2^(8q) - 1` bytes); tags have `t` = 4, 6, .., 16 bytes.
//!
//! * `B0 = flags || N || [len(P)]_q`, `flags = 64·Adata + 8·((t - 2)/2) + (q - 1)`.
//! * Associated data `a` bytes, `a > 0`, is prefixed with its length — 2 bytes for
//!   `a < 2^16 - 2^8`, `0xFF 0xFE` + 4 bytes for `a < 2^32`, `0xFF 0xFF` + 8 bytes otherwise —
//!   and zero-padded to whole blocks. Empty AD has no encoding at all (`Adata = 0`).
//! * `T = CBC-MAC_K(B0 || encoded AD || P zero-padded)`, one strict chain per message.
//! * Counter blocks `A_i = (q - 1) || N || [i]_q`; `C = P ^ MSB_len(E(A_1) || E(A_2) || ..)`,
//!   tag `= MSB_t(T ^ E(A_0))`.
//!
//! # Schedule
//!
//! The same code serves both paths; on `Path::Single` it is called with one job and then
//! allocates nothing (the per-job containers hold one element inline, the formatted prefix of
//! a job with up to [`STACK_PREFIX`] bytes lives on the stack).
//!
//! 1. (Decryption only) CTR from `A_1` on the wide kernels: the recovered plaintext is written
//!    to the output, since the MAC is over the plaintext.
//! 2. The *prefix pass*: every job's `B0 || encoded AD` (zero-padded) is formatted into one
//!    scratch buffer and the CBC-MAC runs over it from a zero chain (so the first step is
//!    `E(B0)`), comb-scheduled across the batch ([`run_chain`] with [`CbcMac`]). A batch
//!    whose prefixes are all short (no AD, or at most 46 bytes of it) runs them one block at
//!    a time across the jobs in batched cipher calls instead, no comb pass ([`prefix_short`]).
//! 3. The *message pass*: the chain continues over the message's whole blocks, comb-scheduled
//!    again with the same rule — the VAES kernel pairs two lanes per ymm register. On
//!    encryption it reads the input (before CTR overwrites it in place); on decryption a
//!    read-only view of the output (the plaintext of step 1).
//! 4. The zero-padded partial last block (xored into the chain) and `A_0` of every job go to
//!    the block cipher in one batched call ([`Kernels::encrypt_many`], two blocks per job at
//!    most); then per job the tag: written on encryption (followed by CTR from `A_1`),
//!    compared in constant time on decryption — a mismatch zeroes the output `[..len]` and
//!    gives [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
//!
//! Both MAC passes are plain CBC-MAC chains over memory, so they run on the executor's fastest
//! kernels; each pass plans its own windows (the prefix lengths and the message lengths
//! differ). The CTR part needs no schedule: every message is wide-kernel parallel on its own.
//!
//! Secrets wiped after use: the MAC chaining values (the jobs' `chain`, wiped with the jobs;
//! the lanes of the passes), the plaintext tail block, `E(A_0)`, the counter blocks, the full
//! 16-byte tag block.

use crate::aes::{AesKey, ChainLane, CounterWidth, Kernels};
use crate::block::{load_short, wipe, xor, Block, IoPtrs, BLOCK};
use crate::modes::cmac::CbcMac;
use crate::modes::{encrypt_per_job, finish_tag, Prepared, TagIo};
use crate::sched::exec::{run_chain, Path};
use crate::{JobResult, Op};

/// Jobs per batched finalisation call: its blocks and key pointers live on the stack.
const CHUNK: usize = 64;

/// Formatted prefixes (`B0 || encoded AD`) of up to this many bytes in all are built on the
/// stack: no allocation on the single path for AD of up to 486 bytes.
const STACK_PREFIX: usize = 512;

/// Bytes of the length field: `q = 15 - n` for a nonce of `n` = 7..=13 bytes (validated).
fn q_of(nonce: &[u8]) -> usize {
    debug_assert!((7..=13).contains(&nonce.len()));
    15 - nonce.len()
}

/// The tag length of a validated job (4..=16, even); 16 for a job without a tag (which
/// validation excludes; [`finish`] reports it as [`Error::TagMisuse`](crate::Error::TagMisuse)).
fn tag_len(tag: &TagIo<'_>) -> usize {
    match tag {
        TagIo::Out(t) => t.len(),
        TagIo::In(t) => t.len(),
        TagIo::None => BLOCK,
    }
}

/// `B0 = flags || N || [len]_q` (SP 800-38C §A.2.1).
fn b0(nonce: &[u8], t: usize, has_ad: bool, len: usize) -> Block {
    let q = q_of(nonce);
    debug_assert!((4..=16).contains(&t) && t.is_multiple_of(2));
    // Validation bounds the message by 2^(8q) - 1 bytes (usize is at most 64 bits on every
    // target this crate builds for): the bytes above q are zero.
    debug_assert!(q >= 8 || (len as u64) >> (8 * q) == 0);
    let flags = (u8::from(has_ad) << 6) | (((t - 2) / 2) as u8) << 3 | (q - 1) as u8;
    // As a little-endian integer: the flags in byte 0, the nonce in bytes 1..16 - q, and
    // `[len]_q` in the last q bytes (the byte swap puts len's low byte in byte 15; its bytes
    // above q are zero). Register arithmetic and word loads: byte stores and copies into the
    // block, read back as 16 bytes by the caller, stalled store forwarding.
    (u128::from(flags) | nonce_bytes(nonce) | u128::from(len as u64).swap_bytes()).to_le_bytes()
}

/// The nonce in bytes `1..16 - q` of an otherwise zero block, as a little-endian integer.
fn nonce_bytes(nonce: &[u8]) -> u128 {
    u128::from_le_bytes(load_short(nonce)) << 8
}

/// The counter block `A_i = (q - 1) || N || [i]_q` for `i` = 0 (the tag pad) or 1 (the first
/// keystream block) (SP 800-38C §A.3).
fn counter(nonce: &[u8], i: u8) -> Block {
    let q = q_of(nonce);
    // Little-endian: byte 0 the flags, then the nonce, byte 15 `i` (as in `b0`).
    (u128::from((q - 1) as u8) | nonce_bytes(nonce) | u128::from(i) << 120).to_le_bytes()
}

/// The encoding of the AD length `a > 0` (SP 800-38C §A.2.2): the bytes and how many of them.
fn ad_header(a: usize) -> ([u8; 10], usize) {
    let a = a as u64;
    let mut h = [0u8; 10];
    if a < (1 << 16) - (1 << 8) {
        h[..2].copy_from_slice(&(a as u16).to_be_bytes());
        (h, 2)
    } else if a < 1 << 32 {
        h[..2].copy_from_slice(&[0xFF, 0xFE]);
        h[2..6].copy_from_slice(&(a as u32).to_be_bytes());
        (h, 6)
    } else {
        h[..2].copy_from_slice(&[0xFF, 0xFF]);
        h[2..].copy_from_slice(&a.to_be_bytes());
        (h, 10)
    }
}

/// Bytes of a job's formatted prefix `B0 || encoded AD`, zero-padded to whole blocks.
fn prefix_len(ad: &[u8]) -> usize {
    if ad.is_empty() {
        BLOCK
    } else {
        // A slice holds at most isize::MAX bytes: no overflow.
        BLOCK + (ad_header(ad.len()).1 + ad.len()).div_ceil(BLOCK) * BLOCK
    }
}

/// A slice of one inline element or of a vector: the single path (one job per call) keeps
/// its per-job lanes and views on the stack.
enum Few<T> {
    One([T; 1]),
    Many(Vec<T>),
}

impl<T> Few<T> {
    /// The `n` items of `items` (which yields exactly `n`).
    fn new(n: usize, mut items: impl Iterator<Item = T>) -> Few<T> {
        match (n, items.next()) {
            (1, Some(x)) => Few::One([x]),
            (_, first) => Few::Many(first.into_iter().chain(items).collect()),
        }
    }
}

impl<T> core::ops::Deref for Few<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Few::One(x) => x,
            Few::Many(v) => v,
        }
    }
}

impl<T> core::ops::DerefMut for Few<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Few::One(x) => x,
            Few::Many(v) => v,
        }
    }
}

/// CBC-MAC lanes whose chaining values (MAC states) are wiped when they are dropped.
struct MacLanes<'l>(Few<ChainLane<'l>>);

impl Drop for MacLanes<'_> {
    fn drop(&mut self) {
        for lane in self.0.iter_mut() {
            wipe(&mut lane.chain);
        }
    }
}

/// Runs CCM `op` over validated jobs (key, nonce length, tag length and direction, message
/// length against the length field, output room already checked), writing
/// `results[job.index]`.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    if jobs.is_empty() {
        return;
    }
    if op == Op::Decrypt {
        // CCM authenticates the plaintext: recover it first (into the output), verify after.
        for job in jobs.iter() {
            ctr(k, job);
        }
    }
    prefix_pass(k, jobs, path);
    message_pass(k, jobs, op, path);
    finish(k, jobs, results, op);
}

/// `C = P ^ E(A_1) || E(A_2) || ..` (either direction), from input to output.
///
/// The wide kernels count the whole block as a 128-bit big-endian integer
/// ([`CounterWidth::Full128`]); CCM increments only the last `q` bytes of `A_i`, and the two
/// agree because the count never carries out of them: a message has at most `2^(8q) - 1`
/// bytes (validated), so at most `m = ceil(len / 16) <= 2^(8q - 4)` blocks, and the last
/// counter `[m]_q` fits the `q`-byte field with room to spare (q <= 8, so the field also lies
/// inside the low 64 bits the kernels add in).
fn ctr(k: Kernels, job: &Prepared<'_>) {
    let io = job.lane.io;
    if io.len == 0 {
        return;
    }
    debug_assert!(q_of(job.nonce) >= 8 || (io.len as u64) >> (8 * q_of(job.nonce)) == 0);
    let mut a1 = counter(job.nonce, 1);
    k.ctr(job.lane.key, &io, &a1, CounterWidth::Full128);
    wipe(&mut a1);
}

/// Step 2: every job's chain becomes the CBC-MAC (from zero) of its formatted prefix
/// `B0 || encoded AD`, comb-scheduled over the batch; in a batch whose prefixes are all
/// short (no AD, or at most 46 bytes of it), by [`prefix_short`].
fn prefix_pass(k: Kernels, jobs: &mut [Prepared<'_>], path: Path) {
    let longest = jobs.iter().map(|j| prefix_len(j.ad)).max().unwrap_or(0) / BLOCK;
    // One job (the single path) keeps the chain pass: through `prefix_short` the sequential
    // engine ran 4-5% slower on the realistic mix, with and without AD (core cycles/byte,
    // three alternated pairs: 2.62-2.69 -> 2.74-2.81 without AD).
    if jobs.len() > 1 && longest <= SHORT_PREFIX_BLOCKS {
        return prefix_short(k, jobs, longest);
    }
    let total: usize = jobs.iter().map(|j| prefix_len(j.ad)).sum();
    let mut stack = [0u8; STACK_PREFIX];
    let mut heap: Vec<u8>;
    let scratch: &mut [u8] = if total <= STACK_PREFIX {
        &mut stack[..total]
    } else {
        heap = vec![0u8; total];
        &mut heap
    };
    // Format: B0, then (with AD) the length encoding and the AD; the padding stays zero.
    let mut off = 0;
    for job in jobs.iter() {
        let t = tag_len(&job.tag);
        let p = prefix_len(job.ad);
        let dst = &mut scratch[off..off + p];
        dst[..BLOCK].copy_from_slice(&b0(job.nonce, t, !job.ad.is_empty(), job.lane.io.len));
        if !job.ad.is_empty() {
            let (h, hl) = ad_header(job.ad.len());
            dst[BLOCK..BLOCK + hl].copy_from_slice(&h[..hl]);
            dst[BLOCK + hl..BLOCK + hl + job.ad.len()].copy_from_slice(job.ad);
        }
        off += p;
    }
    let scratch: &[u8] = scratch;
    let mut off = 0;
    let mut lanes = MacLanes(Few::new(
        jobs.len(),
        jobs.iter().map(|job| {
            let p = prefix_len(job.ad);
            let lane = ChainLane {
                io: IoPtrs::read_only(&scratch[off..off + p]),
                chain: [0u8; BLOCK],
                key: job.lane.key,
                blocks: p / BLOCK,
            };
            off += p;
            lane
        }),
    ));
    run_chain::<CbcMac, _>(k, &mut lanes.0, path);
    for (job, lane) in jobs.iter_mut().zip(lanes.0.iter()) {
        job.lane.chain = lane.chain;
    }
    // The scratch holds B0 (nonce and length) and the AD: public, nothing to wipe.
}

/// Prefixes of at most this many blocks (`B0` and up to 46 bytes of AD with its 2-byte length
/// encoding: IPsec's 8 or 12, TLS 1.2's 13, IEEE 802.11 CCMP's 22 to 30) go through
/// [`prefix_short`].
const SHORT_PREFIX_BLOCKS: usize = 4;

/// The prefix pass of a batch of short prefixes (at most `longest` <= [`SHORT_PREFIX_BLOCKS`]
/// blocks each): the CBC-MAC one block at a time across the jobs, `E(B0)` of every job in batched
/// calls ([`encrypt_per_job`]), then `E(chain ^ block s)` of every job with an `s`-th
/// prefix block, and so on. Every call has one block of every job still going, independent
/// of each other. A comb pass for them formatted the prefixes into a scratch buffer, then
/// sorted, grouped and walked windows of one to four blocks, and its lane vector was a heap
/// allocation per call: with 13 bytes of AD per message that took CCM encryption on the
/// realistic mix from 0.41 TSC cycles/byte without AD to 0.49. Batched, 0.739-0.746 core
/// cycles/byte became 0.698-0.707 (three alternated pairs; without AD 0.65).
fn prefix_short(k: Kernels, jobs: &mut [Prepared<'_>], longest: usize) {
    let all: [usize; CHUNK] = core::array::from_fn(|i| i);
    let mut some = [0usize; CHUNK];
    for chunk in jobs.chunks_mut(CHUNK) {
        let n = chunk.len();
        encrypt_per_job(
            k,
            chunk,
            &all[..n],
            #[inline(always)]
            |job| {
                b0(
                    job.nonce,
                    tag_len(&job.tag),
                    !job.ad.is_empty(),
                    job.lane.io.len,
                )
            },
            |job, e| job.lane.chain = *e,
        );
        for s in 1..longest {
            let mut m = 0;
            for (i, job) in chunk.iter().enumerate() {
                if prefix_len(job.ad) > s * BLOCK {
                    some[m] = i;
                    m += 1;
                }
            }
            encrypt_per_job(
                k,
                chunk,
                &some[..m],
                #[inline(always)]
                |job| xor(&job.lane.chain, &short_ad_block(job.ad, s - 1)),
                |job, e| job.lane.chain = *e,
            );
        }
    }
}

/// Block `i` of a short AD's encoding `[a]_16 || AD || 0*` (`a` = `ad.len()`, 1..=46 bytes,
/// so the 2-byte length encoding): built in a register from word loads, no byte copies.
/// Inlined: as a call it returned the block through memory in two 8-byte halves, and the
/// 16-byte load of it waited on them (a failed store forward per job).
#[inline(always)]
fn short_ad_block(ad: &[u8], i: usize) -> Block {
    let a = ad.len();
    debug_assert!((1..=(SHORT_PREFIX_BLOCKS - 1) * BLOCK - 2).contains(&a));
    if i == 0 {
        // Little-endian: the length big-endian in bytes 0 and 1, then up to 14 AD bytes.
        let head = u128::from_le_bytes(load_short(&ad[..a.min(BLOCK - 2)]));
        (u128::from((a as u16).to_be_bytes()[0])
            | u128::from((a as u16).to_be_bytes()[1]) << 8
            | head << 16)
            .to_le_bytes()
    } else {
        let from = (BLOCK * i - 2).min(a);
        load_short(&ad[from..a.min(from + BLOCK)])
    }
}

/// Step 3: the chain continues over the message's whole blocks (comb-scheduled), then the
/// zero-padded partial last block, if any, is xored into it — what [`finish`] encrypts.
/// Encryption reads the input; decryption the plaintext that [`ctr`] wrote to the output.
fn message_pass(k: Kernels, jobs: &mut [Prepared<'_>], op: Op, path: Path) {
    match op {
        Op::Encrypt => {
            for job in jobs.iter_mut() {
                job.lane.blocks = job.lane.io.len / BLOCK;
            }
            run_chain::<CbcMac, _>(k, jobs, path);
            for job in jobs.iter_mut() {
                absorb_tail(&mut job.lane);
            }
        }
        Op::Decrypt => {
            // Read-only views of the outputs: copies of the jobs' `IoPtrs` lend out their
            // output bytes (`IoPtrs::output`), which CTR has just filled with the plaintext.
            let mut outs = Few::new(jobs.len(), jobs.iter().map(|j| j.lane.io));
            let mut lanes = MacLanes(Few::new(
                jobs.len(),
                outs.iter_mut().zip(jobs.iter()).map(|(io, job)| {
                    let len = io.len;
                    ChainLane {
                        io: IoPtrs::read_only(io.output(len)),
                        chain: job.lane.chain,
                        key: job.lane.key,
                        blocks: len / BLOCK,
                    }
                }),
            ));
            run_chain::<CbcMac, _>(k, &mut lanes.0, path);
            for (job, lane) in jobs.iter_mut().zip(lanes.0.iter_mut()) {
                absorb_tail(lane);
                job.lane.chain = lane.chain;
            }
        }
    }
}

/// For a message whose length is not a whole number of blocks: its last bytes, zero-padded,
/// xored into the lane's chain (the input of the last CBC-MAC step).
fn absorb_tail(lane: &mut ChainLane<'_>) {
    if lane.io.len.is_multiple_of(BLOCK) {
        return;
    }
    // One 16-byte xor: xored byte by byte, the chain's byte stores stalled the 16-byte load
    // of the next cipher call.
    let mut tail = lane.io.read_from(lane.blocks * BLOCK);
    lane.chain = xor(&lane.chain, &tail);
    wipe(&mut tail);
}

/// Step 4: the last CBC-MAC step of every job with a partial block and `E(A_0)` of every job,
/// in one batched cipher call per [`CHUNK`] jobs; then the tag (and encryption's CTR), or the
/// verification.
fn finish(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult], op: Op) {
    for chunk in jobs.chunks_mut(CHUNK) {
        let Some(first) = chunk.first() else { continue };
        let mut blocks = [[0u8; BLOCK]; 2 * CHUNK];
        let mut keys: [&AesKey; 2 * CHUNK] = [first.lane.key; 2 * CHUNK];
        let mut m = 0;
        for job in chunk.iter() {
            if !job.lane.io.len.is_multiple_of(BLOCK) {
                blocks[m] = job.lane.chain;
                keys[m] = job.lane.key;
                m += 1;
            }
            blocks[m] = counter(job.nonce, 0);
            keys[m] = job.lane.key;
            m += 1;
        }
        k.encrypt_many(&mut blocks[..m], &keys[..m]);
        let mut at = 0;
        for job in chunk.iter_mut() {
            // The CBC-MAC value: the output of the last step (the tail's, or the chain's own
            // when the message ended on a block boundary or is empty).
            let mut s = if !job.lane.io.len.is_multiple_of(BLOCK) {
                at += 1;
                blocks[at - 1]
            } else {
                job.lane.chain
            };
            s = xor(&s, &blocks[at]);
            at += 1;
            // Encrypting, the message is encrypted after its MAC (in place, CTR overwrites
            // the plaintext the MAC read); decrypting, a mismatch zeroes the plaintext
            // already in the output.
            if op == Op::Encrypt && matches!(job.tag, TagIo::Out(_)) {
                ctr(k, job);
            }
            let len = job.lane.io.len;
            finish_tag(job, &s, &mut results[job.index], len);
            wipe(&mut s);
        }
        blocks[..m].iter_mut().for_each(wipe);
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

    /// SP 800-38C Appendix C.1 (Example 1): B0 and the counter blocks.
    #[test]
    fn formatting_of_sp800_38c_example_1() {
        let nonce = hex("10111213141516");
        assert_eq!(
            b0(&nonce, 4, true, 4).to_vec(),
            hex("4f101112131415160000000000000004")
        );
        assert_eq!(
            counter(&nonce, 0).to_vec(),
            hex("07101112131415160000000000000000")
        );
        assert_eq!(
            counter(&nonce, 1).to_vec(),
            hex("07101112131415160000000000000001")
        );
        // Example 3: 12-byte nonce, 8-byte tag, 24-byte message.
        let nonce = hex("101112131415161718191a1b");
        assert_eq!(
            b0(&nonce, 8, true, 24).to_vec(),
            hex("5a101112131415161718191a1b000018")
        );
        // No AD: the Adata bit is clear. 13-byte nonce, 16-byte tag, 0x1234 bytes.
        let nonce = [0xAB; 13];
        let b = b0(&nonce, 16, false, 0x1234);
        assert_eq!(b[0], 8 * 7 + 1);
        assert_eq!(b[14..], [0x12, 0x34]);
    }

    #[test]
    fn ad_length_encodings_switch_at_the_spec_bounds() {
        let enc = |a: usize| {
            let (h, n) = ad_header(a);
            h[..n].to_vec()
        };
        assert_eq!(enc(1), [0, 1]);
        assert_eq!(enc(0xFEFF), [0xFE, 0xFF]);
        assert_eq!(enc(0xFF00), [0xFF, 0xFE, 0, 0, 0xFF, 0]);
        assert_eq!(enc(0xFFFF_FFFF), [0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF]);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(enc(1 << 32), [0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(prefix_len(&[]), 16);
        assert_eq!(prefix_len(&[0; 14]), 32);
        assert_eq!(prefix_len(&[0; 15]), 48);
    }

    #[test]
    fn few_holds_one_inline() {
        assert!(matches!(Few::new(1, [7u8].into_iter()), Few::One([7])));
        let many = Few::new(3, 0u8..3);
        assert_eq!(&*many, &[0, 1, 2]);
        assert!(Few::new(0, core::iter::empty::<u8>()).is_empty());
    }
}
