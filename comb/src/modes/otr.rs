//! AES-OTR v3 (Minematsu, CAESAR round 3) with parallel associated-data processing
//! (`aes128otrpv3` of SUPERCOP): 12-byte nonce, 16-byte tag, only the forward cipher.
//!
//! Notation: `E` = AES under the job's key; masks are elements of GF(2^128) in the
//! big-endian convention of [`crate::gf128::dbl`] (`x^128 = x^7 + x^2 + x + 1`).
//!
//! * `Q = E(0^128)` — per key, kept with the key ([`AesKey::e_zero`]).
//! * `L = E(Format(τ, N))`, `Format = [τ mod 128]_7 ‖ 0* ‖ 1 ‖ N` (τ the tag length in bits):
//!   per job. Pair `i` (blocks `2i`, `2i + 1`) uses `L_i = 2^i·L` and `L*_i = 3·2^i·L`.
//! * Message `M = M_1 ‖ … ‖ M_ell-pairs ‖ last chunk` with the last chunk of 1..=32 bytes
//!   (empty message: an empty last chunk). Whole pair `(A, B)`: the two-round Feistel
//!   `C_A = E(L_i ⊕ A) ⊕ B`, `C_B = E(L*_i ⊕ C_A) ⊕ A`; checksum `Σ ⊕= B`.
//! * Last chunk of `l <= 16` bytes: `C = MSB_l(E(L_ell)) ⊕ M`, `Σ ⊕= ozp(M)`; of `16 < l`
//!   bytes (`A` whole, `B` of `r = l − 16` bytes): `Z = E(L_ell ⊕ A)`, `C_B = MSB_r(Z) ⊕ B`,
//!   `Σ ⊕= Z ⊕ ozp(C_B)`, `C_A = E(L*_ell ⊕ ozp(C_B)) ⊕ A`. `ozp` = 10* padding to 16 bytes
//!   (nothing for 16 bytes).
//! * `TE = E(Σ ⊕ f·La)`, `La = L_ell` (odd last chunk) or `L*_ell` (even), `f = 7` when the
//!   last block is whole, else `f = 3² = 5`.
//! * AD (parallel, PMAC-like; none: `TA = 0`): whole blocks `A_i` but the last, `ΣA ⊕=
//!   E(2^i·Q ⊕ A_i)`; then `TA = E(ΣA ⊕ ozp(A_last) ⊕ g·2^m·Q)` with `g = 3` for a partial
//!   last block, `g = 5` for a whole one. Tag = `TE ⊕ TA`.
//! * Decryption runs the Feistel backwards (`A = E(L*_i ⊕ C_A) ⊕ C_B`, `B = E(L_i ⊕ A) ⊕
//!   C_A`); the checksum needs the plaintext, so the tag is checked after decrypting: on a
//!   mismatch (constant-time [`tag_matches`](crate::block::tag_matches)) the output
//!   `[..len]` is zeroed and the job gets
//!   [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
//!
//! # Scheduling
//!
//! Nothing is chained: pairs are independent, and so are AD blocks. Jobs go in chunks of
//! [`CHUNK`] (a call of [`SMALL`] jobs, as the single path's, with arrays of that size);
//! per chunk:
//!
//! 1. `L` of every job: one batched [`Kernels::encrypt_many`] call.
//! 2. AD: per job, whole steps of a wide kernel (8 blocks on xmm, 16 on ymm), the masks
//!    doubled in registers and `ΣA` kept in a register; the remaining blocks of all jobs go
//!    to a cross-job block pool (batched `encrypt_many`).
//! 3. Message pairs: per job, whole steps of the wide pair kernel ([`body_ni`]: 8 pairs,
//!    the 8 first-round blocks in flight, then the 8 second-round blocks; [`body_vaes`]: 16
//!    pairs in 8 ymm registers per layer, then one narrower step of 2 to 14 pairs), masks
//!    doubled in registers; where AVX-512 is, [`body_zmm`] runs all pairs of a message of
//!    at least 16, four pairs per zmm register, the last step under masks. The remaining
//!    pairs of all jobs (on ymm at most one per job) go to a cross-job pair pool ([`PairPool`]) run
//!    by the same two-layer kernel with per-lane keys and masks (8 lanes on xmm, 16 on
//!    ymm), so short messages (one or two pairs) still fill the AES pipeline when batched.
//!    An even last chunk (17..=32 bytes) is a pair whose second block is cut
//!    ([`PairLane`]): it joins the pool, staged in a 32-byte buffer.
//! 4. Odd last chunks (1..=16 bytes): `E(L_ell)` of those jobs in one `encrypt_many`.
//! 5. `TE` of every job and `TA` of every job with AD: one `encrypt_many`.
//!
//! On the single path the same code runs with one job per call (`modes::run` splits); batch
//! and single paths give the same bytes by construction.
//!
//! On AMD CPUs with AVX-512 (Zen 4 and later, [`crate::cpu::zmm_job_lanes_pay`]), a chunk
//! of 2 to 32 jobs (of one key or several) runs side by side instead, one job per zmm lane
//! ([`zmm_comb`]): `L`, the pairs of jobs under 16 pairs, the last chunks and the tags of
//! all jobs in passes over the lanes, so no job costs a pool lane, a staged copy or a
//! batched call of its own; longer jobs run their pairs on [`body_zmm`]. The same bytes as
//! the steps above (the tests check both against a reference). Measured on Zen 5 (comb
//! engine, batches of 64, encryption, core cycles per message, one run): 64 bytes
//! 225 -> 123, 256 bytes 294 -> 166, 512 bytes 356 -> 224, 1024 bytes 375 -> 295, 1456
//! bytes 409 -> 372, 4 KiB 878 -> 779 (ECB 55-58, 74-77, 117-119, 200-204, 275-279,
//! 717-721).
//! On Zen 4, where a zmm VAESENC does no more blocks a cycle than a ymm one, it still paid
//! (comb engine, batches of 64, encryption, TSC cycles/byte, alternated in one session): the
//! realistic mix 0.48-0.52 -> 0.35-0.39 (ECB 0.18-0.19), 64 bytes 3.06-3.08 -> 1.61-1.63,
//! 1456 bytes 0.299 -> 0.256-0.258, 4 KiB 0.211 -> 0.195-0.196.
//!
//! Where the time goes (Intel AVX-512 VM, comb engine, batches of 64, encryption, TSC
//! cycles; timing-only builds that leave out one part, output wrong):
//! - Everything but the pairs costs about 120 cycles per message whatever its length. That
//!   was 116-126 at 80, 464 and 1456 bytes, against 46-50 for ECB's whole 80-byte message.
//!   On the realistic mix it is half of OTR's time: 0.210-0.212 cycles/byte without the
//!   pairs, against 0.419-0.441 for all of OTR and 0.18 for ECB.
//! - The last chunks (step 4, and the even ones' pool lanes and copies) are 9-13% of the mix
//!   (0.372 without them). Even done for free inside the body kernel, OTR would stay above
//!   2× ECB.
//! - The pairs cost 0.21 cycles/byte on the mix, more than ECB's whole time. Per message
//!   they cost more than all of ECB: 226-235 cycles against 192-205 at 1456 bytes, 103-105
//!   against 81-86 at 464 (the narrower ymm step). The 16-pair zmm steps themselves run at
//!   ECB's rate: from 1040 to 1552 bytes both add about 52 cycles per 512 bytes.
//! - Pooling every pair of a message shorter than one wide step, instead of its narrower
//!   step, was no faster (mix 0.424-0.451 against 0.418-0.428).
//!
//! So reaching 1.5× ECB would need both a pair path at ECB's rate on short and mid-length
//! messages and most of the 120 per-message cycles gone. For a message of 48 or 64 bytes,
//! step 3 costs 52-78 cycles, and step 5 with the tags' output 24-26.
//!
//! Those cycles are spread thin. On a slower, contended host of the same family (TSC 2.0
//! GHz), `rdtsc` around each step of a chunk gave, in TSC ticks per message of the mix (OTR
//! then at 0.96-1.02 cycles/byte): step 3 370-395, step 1 48-56 (of which the cipher call
//! 10-16), the odd last chunks 31-34, the even ones' copy out 24-27, `TE` 29-31, the tags
//! 24-28; outside the mode, validation about 33. `perf` by source line puts step 1's loop
//! first among the glue: its costliest instructions wait on the nonce's loads, the first
//! touch of the caller's nonce bytes. No step is a quarter of the glue, so no single change
//! there gives more than a few percent of OTR's time.
//!
//! Secrets wiped after use: `L` and every mask, `Σ`, `ΣA`, `Z`, `TE`, `TA`, the full tag
//! block, the pools' masks, the staged last chunks (per-job [`State`], the pools and the
//! [`Stage`] wipe on drop).

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::aes::ni::{load as ld, store as st};
use crate::aes::{AesKey, Kernels};
use crate::block::{cut_windows, pad10, truncate, wipe, xor, Block, IoPtrs, BLOCK};
// Masks as big-endian integers: doubling and `7·v` constant time (the reduction is a mask).
use crate::block::{dbl_u128 as dbl, mul7_u128 as mul7};
use crate::cpu::{NiToken, VaesToken, VaesZmmToken};
use crate::gf128::dbl_xmm_sar;
use crate::gf128::vclmul::VclmulToken;
use crate::gf128::vclmul512::Vclmul512Token;
use crate::modes::{finish_tag, format_nonce, Prepared, TagIo};
use crate::sched::exec::Path;
use crate::{JobResult, Op};
use zeroize::Zeroize;

/// Jobs per chunk: the per-job state and the batched blocks live on the stack.
const CHUNK: usize = 32;
/// Chunks of at most this many jobs (the single path's one) run with arrays of this size.
const SMALL: usize = 1;
/// Two blocks: a pair.
const PAIR: usize = 2 * BLOCK;
/// Lanes of one pool step (the ymm kernel: 8 registers of 2 lanes).
const POOL: usize = 16;

// ---------------------------------------------------------------------------------------
// per-key constants, masks

/// A block as a big-endian integer (byte 0 most significant): the masks' representation.
#[inline]
fn int(b: &Block) -> u128 {
    u128::from_be_bytes(*b)
}

/// `5·v = 4·v ⊕ v` (the reference's `mul3twice`, `3² = 5` in GF(2^128)).
#[inline]
fn mul5(v: u128) -> u128 {
    dbl(dbl(v)) ^ v
}

/// `ozp`: the first `n` (0..=16) bytes of `b` (already zero beyond `n`), 10*-padded when
/// `n < 16`. `n` is a length: public. In register arithmetic (a byte store into a block
/// read back as 16 bytes stalls store forwarding).
#[inline]
fn ozp(b: &Block, n: usize) -> u128 {
    int(&pad10(b, n))
}

/// Where the last chunk starts and how long it is (0..=32; 0 only for an empty message).
fn last_chunk(len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    let last = match len % PAIR {
        0 => PAIR,
        r => r,
    };
    ((len - last) / PAIR, last)
}

/// The secret per-job values of a chunk, wiped on drop.
#[derive(Clone, Copy, Default)]
struct State {
    /// `L = L_0`, the mask of the first pair.
    l: u128,
    /// Checksum Σ.
    sum: u128,
    /// `f·La`, the tag mask (with an empty message's checksum block).
    te: u128,
    /// The input of `TA` (AD jobs): `ΣA ⊕ ozp(A_last) ⊕ g·2^m·Q`.
    ta: u128,
}

struct States<const C: usize>([State; C]);

impl<const C: usize> Drop for States<C> {
    fn drop(&mut self) {
        for s in &mut self.0 {
            s.l.zeroize();
            s.sum.zeroize();
            s.te.zeroize();
            s.ta.zeroize();
        }
    }
}

/// Blocks and keys of one batched cipher call over a chunk (`N`: one per job, or two),
/// wiped on drop.
struct Batch<'k, const N: usize> {
    blocks: [Block; N],
    keys: [&'k AesKey; N],
    /// The job of each entry (a byte: chunks hold at most `CHUNK` <= 256 jobs, and the array
    /// is zeroed per chunk).
    jobs: [u8; N],
    n: usize,
}

impl<'k, const N: usize> Batch<'k, N> {
    fn new(fill: &'k AesKey) -> Batch<'k, N> {
        Batch {
            blocks: [[0; BLOCK]; N],
            keys: [fill; N],
            jobs: [0; N],
            n: 0,
        }
    }
    fn push(&mut self, b: u128, key: &'k AesKey, job: usize) {
        self.blocks[self.n] = b.to_be_bytes();
        self.keys[self.n] = key;
        debug_assert!(job < CHUNK && self.n < N);
        self.jobs[self.n] = job as u8;
        self.n += 1;
    }
    fn run(&mut self, k: Kernels) {
        k.encrypt_many(&mut self.blocks[..self.n], &self.keys[..self.n]);
    }
    fn clear(&mut self) {
        for b in &mut self.blocks[..self.n] {
            wipe(b);
        }
        self.n = 0;
    }
}

impl<const N: usize> Drop for Batch<'_, N> {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The even last chunks of a chunk's jobs, staged for the pair pool (input, then output, in
/// place), wiped on drop.
struct Stage<const C: usize>([[Block; 2]; C]);

impl<const C: usize> Drop for Stage<C> {
    fn drop(&mut self) {
        // `wipe`, not `zeroize`: one 16-byte store per block, not 16 byte stores.
        for b in self.0.as_flattened_mut() {
            wipe(b);
        }
    }
}

/// The odd last chunk (`last`, 1..=16 bytes at `off`, the end of the message): output =
/// input ⊕ `MSB_last(z)`, `z = E(L_ell)`. Returns the input, zero-padded to a block.
fn out_odd(io: &IoPtrs<'_>, off: usize, last: usize, z: &Block) -> Block {
    debug_assert!((1..=BLOCK).contains(&last) && off + last == io.len);
    if last == BLOCK {
        let input = io.read_block(off);
        io.write_block(off, &xor(&input, z));
        input
    } else {
        // `len % 16 == last`: the message's partial last block.
        io.xor_tail(z)
    }
}

// ---------------------------------------------------------------------------------------
// the driver

/// Runs OTR `op` over validated jobs (key 16 bytes, nonce 12 bytes, tag 16 bytes and its
/// direction, output room), writing `results[job.index]`.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    _path: Path,
) {
    // Both paths run the same code: on the single path `modes::run` hands over one job at a
    // time; a batch goes in chunks, everything batched across a chunk's jobs. The per-job
    // state lives in stack arrays sized by the chunk's capacity: a small call (the single
    // path: one job) does not clear and wipe 32 jobs' worth.
    for chunk in jobs.chunks_mut(CHUNK) {
        match (op, chunk.len() <= SMALL) {
            (Op::Encrypt, true) => run_chunk::<false, SMALL, { 2 * SMALL }>(k, chunk, results),
            (Op::Decrypt, true) => run_chunk::<true, SMALL, { 2 * SMALL }>(k, chunk, results),
            (Op::Encrypt, false) => {
                if !zmm_comb::try_run::<false>(k, chunk, results) {
                    run_chunk::<false, CHUNK, { 2 * CHUNK }>(k, chunk, results)
                }
            }
            (Op::Decrypt, false) => {
                if !zmm_comb::try_run::<true>(k, chunk, results) {
                    run_chunk::<true, CHUNK, { 2 * CHUNK }>(k, chunk, results)
                }
            }
        }
    }
}

fn tag_len(tag: &TagIo<'_>) -> usize {
    match tag {
        TagIo::Out(t) => t.len(),
        TagIo::In(t) => t.len(),
        TagIo::None => BLOCK,
    }
}

/// One chunk of at most `C` jobs; `C2 = 2C` (the tag batch's capacity).
fn run_chunk<const DEC: bool, const C: usize, const C2: usize>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) {
    const { assert!(C2 == 2 * C && C <= CHUNK) };
    let Some(first) = jobs.first() else { return };
    let n = jobs.len();
    assert!(n <= C);
    let fill = first.lane.key;
    let mut st = States([State::default(); C]);
    let st = &mut st.0[..n];
    for job in jobs.iter() {
        let io = &job.lane.io;
        // The kernels write `len` output bytes (validation checked the room).
        assert!(io.len <= io.out_cap && (io.len == 0 || !io.dst.is_null()));
    }

    // 1. L = E(Format(τ, N)) of every job.
    let mut batch = Batch::<C>::new(fill);
    for (j, job) in jobs.iter().enumerate() {
        batch.push(format_nonce(job.nonce, tag_len(&job.tag)), job.lane.key, j);
    }
    batch.run(k);
    for i in 0..batch.n {
        st[usize::from(batch.jobs[i])].l = int(&batch.blocks[i]);
    }
    batch.clear();

    // 2. The AD.
    ad_inputs(k, jobs, st);

    // 3. The whole pairs: wide steps per job, the rest pooled; an even last chunk joins the
    //    pool as a cut pair (see `PairLane`), staged. An odd last chunk needs only `E(L_ell)`
    //    (batched, 4.). The tag mask `f·La` of every job.
    let mut stage = Stage([[[0; BLOCK]; 2]; C]);
    let mut odd = Batch::<C>::new(fill);
    {
        let mut ppool = PairPool::new(fill, jobs[0].lane.io);
        for ((j, job), staged) in jobs.iter().enumerate().zip(stage.0.iter_mut()) {
            let io = job.lane.io;
            let key = job.lane.key;
            let (ell, last) = last_chunk(io.len);
            let off = PAIR * ell;
            let mut l = st[j].l;
            let mut sum = [0u8; BLOCK];
            let mut sink = |slot: usize, b: &Block| st[slot].sum ^= int(b);
            pairs::<DEC>(k, key, io, ell, &mut l, &mut sum, &mut ppool, j, &mut sink);
            // `La`, the tag's mask base: `L*_ell` for an even last chunk, `L_ell` for an odd
            // one.
            let mut la = if last > BLOCK { l ^ dbl(l) } else { l };
            if last > BLOCK {
                let r = last - BLOCK;
                let (mut x, mut y) = (io.read_block(off), io.read_from(off + BLOCK));
                *staged = if DEC { [pad10(&y, r), x] } else { [x, y] };
                wipe(&mut x);
                wipe(&mut y);
                let io = IoPtrs::in_place(staged.as_flattened_mut(), PAIR);
                let lane = PairLane::new::<DEC>(io, 0, key, l, la, j, r);
                ppool.push::<DEC>(k, lane, &mut sink);
            } else if last > 0 {
                odd.push(l, key, j);
            }
            let s = &mut st[j];
            // `f·La`, `f = 7` for a whole last block. An empty message's checksum block:
            // `ozp` of nothing.
            s.te = match last {
                0 => mul5(la) ^ ozp(&[0; BLOCK], 0),
                BLOCK | PAIR => mul7(la),
                _ => mul5(la),
            };
            s.sum ^= int(&sum);
            l.zeroize();
            la.zeroize();
            wipe(&mut sum);
        }
        ppool.flush::<DEC>(k, &mut |slot, b| st[slot].sum ^= int(b));
    }

    // 4. The odd last chunks: `C = MSB_l(E(L_ell)) ⊕ M` (or back), `Σ ⊕= ozp(M)`.
    odd.run(k);
    for i in 0..odd.n {
        let j = usize::from(odd.jobs[i]);
        let io = &jobs[j].lane.io;
        let (ell, last) = last_chunk(io.len);
        let z = &odd.blocks[i];
        let mut input = out_odd(io, PAIR * ell, last, z);
        let mut m = if DEC {
            truncate(&xor(&input, z), last)
        } else {
            input
        };
        st[j].sum ^= ozp(&m, last);
        wipe(&mut m);
        wipe(&mut input);
    }
    odd.clear();

    // 5. The even last chunks out of the stage, in the pair's order.
    for (job, staged) in jobs.iter().zip(stage.0.iter()) {
        let io = &job.lane.io;
        let (ell, last) = last_chunk(io.len);
        if last > BLOCK {
            let off = PAIR * ell;
            let [lo, hi] = staged;
            // Encrypting `ozp(C_B) ‖ C_A`, decrypting `A ‖ B`.
            let (first, second) = if DEC { (lo, hi) } else { (hi, lo) };
            io.write_block(off, first);
            io.write_tail(off + BLOCK, second);
        }
    }
    drop(stage);

    // 6. TE of every job, TA of the jobs with AD.
    let mut batch = Batch::<C2>::new(fill);
    for (j, job) in jobs.iter().enumerate() {
        batch.push(st[j].sum ^ st[j].te, job.lane.key, j);
        if !job.ad.is_empty() {
            batch.push(st[j].ta, job.lane.key, j);
        }
    }
    batch.run(k);
    let mut tags = [[0u8; BLOCK]; C];
    for i in 0..batch.n {
        let j = usize::from(batch.jobs[i]);
        tags[j] = xor(&tags[j], &batch.blocks[i]);
    }
    batch.clear();

    // 7. Tags out, or checked.
    for (j, job) in jobs.iter_mut().enumerate() {
        let len = job.lane.io.len;
        finish_tag(job, &tags[j], &mut results[job.index], len);
        debug_assert_eq!(DEC, matches!(job.tag, TagIo::In(_)));
    }
    for t in &mut tags[..n] {
        wipe(t);
    }
}

/// The `TA` input of every job with AD into `st[j].ta` (step 2 of [`run_chunk`]): wide steps
/// per job, the rest of every job's blocks in a shared pool.
fn ad_inputs(k: Kernels, jobs: &[Prepared<'_>], st: &mut [State]) {
    let Some(first) = jobs.first() else { return };
    let fill = first.lane.key;
    let mut bpool = BlockPool::new(fill);
    for (j, job) in jobs.iter().enumerate() {
        if job.ad.is_empty() {
            continue;
        }
        let key = job.lane.key;
        let ad = IoPtrs::read_only(job.ad);
        let last = match ad.len % BLOCK {
            0 => BLOCK,
            r => r,
        };
        let m = (ad.len - last) / BLOCK;
        let mut q = int(&key.e_zero);
        let mut asum = [0u8; BLOCK];
        let done = ad_wide(k, key, &ad, m, &mut q, &mut asum);
        let mut ta = int(&asum);
        wipe(&mut asum);
        for i in done..m {
            let a = ad.read_block(BLOCK * i);
            bpool.push(k, st, int(&a) ^ q, key, j);
            q = dbl(q);
        }
        let tail = ad.read_from(ad.len - last);
        ta ^= ozp(&tail, last);
        ta ^= if last == BLOCK { mul5(q) } else { dbl(q) ^ q };
        st[j].ta ^= ta;
        q.zeroize();
        ta.zeroize();
    }
    bpool.flush(k, st);
}

// ---------------------------------------------------------------------------------------
// pools: independent work of several jobs run together

/// AD blocks (already masked) of any jobs, encrypted `POOL` at a time; each output is xored
/// into its job's `ta`.
struct BlockPool<'k> {
    blocks: [Block; POOL],
    keys: [&'k AesKey; POOL],
    slots: [usize; POOL],
    n: usize,
}

impl<'k> BlockPool<'k> {
    fn new(fill: &'k AesKey) -> BlockPool<'k> {
        BlockPool {
            blocks: [[0; BLOCK]; POOL],
            keys: [fill; POOL],
            slots: [0; POOL],
            n: 0,
        }
    }

    fn push(&mut self, k: Kernels, st: &mut [State], x: u128, key: &'k AesKey, slot: usize) {
        self.blocks[self.n] = x.to_be_bytes();
        self.keys[self.n] = key;
        self.slots[self.n] = slot;
        self.n += 1;
        if self.n == POOL {
            self.flush(k, st);
        }
    }

    fn flush(&mut self, k: Kernels, st: &mut [State]) {
        let n = self.n;
        if n == 0 {
            return;
        }
        k.encrypt_many(&mut self.blocks[..n], &self.keys[..n]);
        for i in 0..n {
            st[self.slots[i]].ta ^= int(&self.blocks[i]);
            wipe(&mut self.blocks[i]);
        }
        self.n = 0;
    }
}

impl Drop for BlockPool<'_> {
    fn drop(&mut self) {
        for b in &mut self.blocks {
            wipe(b);
        }
    }
}

/// One whole pair of some job: input at `io.src + off`, output at `io.dst + off`, the mask of
/// the first round (`L_i` encrypting, `L*_i` decrypting) and of the second, the job's slot.
///
/// Also an even last chunk of OTR (`16 < l <= 32` bytes, `r = l − 16`), staged in a 32-byte
/// buffer: it is a pair whose second block is cut to `r` bytes. Encrypting, the staged input
/// is `A ‖ B ‖ 0*`, the masks `L_ell`, `L*_ell`, and the kernel cuts the first round's output
/// to `ozp(MSB_r(Z ⊕ B)) = ozp(C_B)` before the second round ([`PairLane::cut`] = r); the
/// output is `ozp(C_B) ‖ C_A` (the pair's order swapped) and the checksum block `Z ⊕
/// ozp(C_B)`. Decrypting, the staged input is `ozp(C_B) ‖ C_A`, the masks `L*_ell`, `L_ell`;
/// the unchanged kernel gives `A ‖ (Z ⊕ ozp(C_B))`, whose first `r` bytes are `B`, and the
/// checksum block `Z ⊕ ozp(C_B)`. For a whole pair these are the pair's own formulas.
#[derive(Clone, Copy)]
pub(crate) struct PairLane<'a> {
    io: IoPtrs<'a>,
    off: usize,
    key: &'a AesKey,
    first: Block,
    second: Block,
    slot: usize,
    /// Bytes of the first round's output kept before the second round, encrypting (16: a
    /// whole pair).
    cut: usize,
}

impl<'a> PairLane<'a> {
    /// The lane of the pair at `off` of `io` with masks `L_i`, `L*_i = 3·L_i`, in the
    /// order of direction `DEC`.
    // Always inlined, as `PairPool::push`: the masks go straight into the pool's lane.
    #[inline(always)]
    fn new<const DEC: bool>(
        io: IoPtrs<'a>,
        off: usize,
        key: &'a AesKey,
        l: u128,
        ls: u128,
        slot: usize,
        cut: usize,
    ) -> PairLane<'a> {
        let (first, second) = if DEC { (ls, l) } else { (l, ls) };
        PairLane {
            io,
            off,
            key,
            first: first.to_be_bytes(),
            second: second.to_be_bytes(),
            slot,
            cut,
        }
    }
}

/// Pairs of any jobs, run `POOL` (ymm) or 8 (xmm) at a time through the two-round Feistel;
/// the checksum block of each (`B`) goes to the caller's sink with the pair's slot (OTR xors
/// it into its job's `sum`; COBRA-R, whose checksum is another, drops it).
pub(crate) struct PairPool<'a> {
    lanes: [PairLane<'a>; POOL],
    n: usize,
    /// Some lane (encrypting) is cut: the flush runs the kernel that cuts.
    cut: bool,
}

impl<'a> PairPool<'a> {
    pub(crate) fn new(fill: &'a AesKey, io: IoPtrs<'a>) -> PairPool<'a> {
        let lane = PairLane {
            io,
            off: 0,
            key: fill,
            first: [0; BLOCK],
            second: [0; BLOCK],
            slot: 0,
            cut: BLOCK,
        };
        PairPool {
            lanes: [lane; POOL],
            n: 0,
            cut: false,
        }
    }

    /// Lanes per step of `k`'s pool kernel.
    fn width(k: Kernels) -> usize {
        match k {
            Kernels::Ni(_) => 8,
            Kernels::Vaes256(_) => POOL,
        }
    }

    // Always inlined: out of line, the lane is built on the stack (its masks as two 8-byte
    // stores each) and copied in with 16-byte loads that wait for those stores.
    #[inline(always)]
    fn push<const DEC: bool>(
        &mut self,
        k: Kernels,
        lane: PairLane<'a>,
        sink: &mut impl FnMut(usize, &Block),
    ) {
        // The kernel reads 32 bytes of input and writes 32 of output at `off`.
        assert!(lane.off <= lane.io.len && PAIR <= lane.io.len - lane.off);
        assert!(lane.io.len <= lane.io.out_cap && !lane.io.dst.is_null());
        assert!(lane.cut <= BLOCK);
        self.cut |= !DEC && lane.cut < BLOCK;
        self.lanes[self.n] = lane;
        self.n += 1;
        if self.n == Self::width(k) {
            self.flush::<DEC>(k, sink);
        }
    }

    pub(crate) fn flush<const DEC: bool>(
        &mut self,
        k: Kernels,
        sink: &mut impl FnMut(usize, &Block),
    ) {
        let n = self.n;
        if n == 0 {
            return;
        }
        let lanes = &self.lanes[..n];
        let mut sums = [[0u8; BLOCK]; POOL];
        let rounds = lanes[0].key.rounds;
        if lanes.iter().any(|l| l.key.rounds != rounds) {
            // Keys of several sizes (not for OTR's 16-byte keys; kept correct anyway): one
            // lane at a time.
            for (l, s) in lanes.iter().zip(sums.iter_mut()) {
                let (l, s) = (core::slice::from_ref(l), core::slice::from_mut(s));
                // SAFETY: the token proves AES-NI; `push` checked the lane's bounds.
                unsafe {
                    if self.cut {
                        pool_ni::<1, DEC, true>(l, s)
                    } else {
                        pool_ni::<1, DEC, false>(l, s)
                    }
                }
            }
        } else {
            let sums = &mut sums[..n];
            // SAFETY (all four): the token proves AES-NI (and AVX2, VAES for the ymm
            // kernel); `push` checked every lane's bounds.
            match (k, self.cut) {
                (Kernels::Ni(t), false) => unsafe {
                    pool_ni_dispatch::<DEC, false>(t, lanes, sums)
                },
                (Kernels::Ni(t), true) => unsafe { pool_ni_dispatch::<DEC, true>(t, lanes, sums) },
                (Kernels::Vaes256(t), false) => unsafe {
                    pool_vaes_dispatch::<DEC, false>(t, lanes, sums)
                },
                (Kernels::Vaes256(t), true) => unsafe {
                    pool_vaes_dispatch::<DEC, true>(t, lanes, sums)
                },
            }
        }
        for (l, s) in lanes.iter().zip(sums.iter_mut()) {
            sink(l.slot, s);
            wipe(s);
        }
        self.n = 0;
        self.cut = false;
    }
}

impl Drop for PairPool<'_> {
    fn drop(&mut self) {
        for l in &mut self.lanes {
            wipe(&mut l.first);
            wipe(&mut l.second);
        }
    }
}

// ---------------------------------------------------------------------------------------
// xmm kernels

/// Round key `r` of `key` (`RoundKeys` rows are 16-byte aligned).
#[inline]
#[target_feature(enable = "sse2")]
fn rk(key: &AesKey, r: usize) -> __m128i {
    let row = &key.enc.0[r];
    // SAFETY: `row` is 16 readable, 16-byte-aligned bytes.
    unsafe { _mm_load_si128(row.as_ptr().cast()) }
}

/// The mask integer `v` (a big-endian block value) as an xmm integer.
#[inline]
#[target_feature(enable = "sse2")]
fn from_int(v: u128) -> __m128i {
    _mm_set_epi64x((v >> 64) as i64, v as u64 as i64)
}

#[inline]
#[target_feature(enable = "sse2")]
fn to_int(v: __m128i) -> u128 {
    let mut b = [0u8; BLOCK];
    st(&mut b, v);
    let x = u128::from_le_bytes(b);
    wipe(&mut b);
    x
}

/// Byte swap: the xmm integer of a mask to the block in memory order, and back.
#[inline]
#[target_feature(enable = "sse2,ssse3")]
fn bswap(v: __m128i) -> __m128i {
    _mm_shuffle_epi8(
        v,
        _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    )
}

/// Encrypts the xmm blocks of an array in place, lane `j` under `$key(j)`:
/// `enc_x!(x, key_fn, rounds)`. A macro so that the states stay in registers.
macro_rules! enc_x {
    ($x:expr, $key:expr, $rounds:expr) => {{
        let x = $x;
        let rounds: usize = $rounds;
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = _mm_xor_si128(*xj, rk($key(j), 0));
        }
        for r in 1..rounds {
            for (j, xj) in x.iter_mut().enumerate() {
                *xj = _mm_aesenc_si128(*xj, rk($key(j), r));
            }
        }
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = _mm_aesenclast_si128(*xj, rk($key(j), rounds));
        }
    }};
}

/// Pair pool on xmm: `lanes` in steps of up to 8.
///
/// # Safety
/// AES-NI (the token); every lane's 32 bytes at `off` inside its input and output; all lanes'
/// keys of one size.
#[target_feature(enable = "aes,sse2")]
unsafe fn pool_ni_dispatch<const DEC: bool, const CUT: bool>(
    _t: NiToken,
    lanes: &[PairLane<'_>],
    sums: &mut [Block],
) {
    for (l, s) in lanes.chunks(8).zip(sums.chunks_mut(8)) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match l.len() {
                1 => pool_ni::<1, DEC, CUT>(l, s),
                2 => pool_ni::<2, DEC, CUT>(l, s),
                3 => pool_ni::<3, DEC, CUT>(l, s),
                4 => pool_ni::<4, DEC, CUT>(l, s),
                5 => pool_ni::<5, DEC, CUT>(l, s),
                6 => pool_ni::<6, DEC, CUT>(l, s),
                7 => pool_ni::<7, DEC, CUT>(l, s),
                _ => pool_ni::<8, DEC, CUT>(l, s),
            }
        }
    }
}

/// The two-round Feistel on `N` pairs of any jobs (`lanes.len() == N`): the `N` first-round
/// blocks in flight, then the `N` second-round blocks. Writes each pair's checksum block `B`
/// to `sums`. `CUT` (encrypting): the first round's output cut to each lane's
/// [`PairLane::cut`] bytes and `10*`-padded, the checksum block `Z ⊕` that (`B` when whole).
///
/// # Safety
/// As [`pool_ni_dispatch`], with exactly `N` lanes and sums.
#[inline]
#[target_feature(enable = "aes,sse2")]
unsafe fn pool_ni<const N: usize, const DEC: bool, const CUT: bool>(
    lanes: &[PairLane<'_>],
    sums: &mut [Block],
) {
    debug_assert!(lanes.len() == N && sums.len() == N);
    let rounds = lanes[0].key.rounds.min(14);
    let shared = lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key));
    let key = |j: usize| if shared { lanes[0].key } else { lanes[j].key };
    // SAFETY (loads/stores): the caller guarantees each lane's [off, off + 32) is inside its
    // input and output; every input block is loaded before the lane's stores.
    let a: [__m128i; N] = core::array::from_fn(|j| unsafe {
        _mm_loadu_si128(lanes[j].io.src.add(lanes[j].off).cast())
    });
    let mut x: [__m128i; N] = core::array::from_fn(|j| _mm_xor_si128(a[j], ld(&lanes[j].first)));
    enc_x!(&mut x, key, rounds);
    let b: [__m128i; N] = core::array::from_fn(|j| unsafe {
        _mm_loadu_si128(lanes[j].io.src.add(lanes[j].off + BLOCK).cast())
    });
    let y1: [__m128i; N] = core::array::from_fn(|j| {
        let y = _mm_xor_si128(x[j], b[j]);
        if CUT && !DEC {
            let (keep, pad) = cut_windows(lanes[j].cut);
            _mm_xor_si128(_mm_and_si128(y, ld(keep)), ld(pad))
        } else {
            y
        }
    });
    // The checksum block: `B` (whole pairs encrypting), `Z ⊕ y1` (cut lanes).
    let sv: [__m128i; N] = core::array::from_fn(|j| {
        if CUT && !DEC {
            _mm_xor_si128(x[j], y1[j])
        } else {
            b[j]
        }
    });
    let mut x2: [__m128i; N] = core::array::from_fn(|j| _mm_xor_si128(y1[j], ld(&lanes[j].second)));
    enc_x!(&mut x2, key, rounds);
    for j in 0..N {
        let y2 = _mm_xor_si128(x2[j], a[j]);
        unsafe {
            let dst = lanes[j].io.dst.add(lanes[j].off);
            _mm_storeu_si128(dst.cast(), y1[j]);
            _mm_storeu_si128(dst.add(BLOCK).cast(), y2);
        }
        st(&mut sums[j], if DEC { y2 } else { sv[j] });
    }
}

/// Wide xmm body: `steps` steps of 8 whole pairs from pair 0; `l` = `L_0` in, `L_(8·steps)`
/// out; the checksum blocks xored into `sum`.
///
/// Software-pipelined in halves of [`HALF`] pairs: each AES pass carries the first round of
/// one half and the second round of the half before, eight independent blocks (what keeps
/// the AES unit busy: latency 4, two per cycle), where a step of 8 pairs ran its two rounds
/// one after the other and drained the unit between them. Measured on an AMD Zen 1 host
/// (no VAES), comb engine, P = 8: 2 KiB messages 0.98 -> 0.81 TSC cycles/byte, realistic mix
/// 1.43 -> 1.25; halves of 8 pairs (16 blocks in flight, spilled) ran at 0.94-0.99.
///
/// # Safety
/// AES-NI, SSSE3 (the token); `32 · 8 · steps` bytes inside the input and the output.
#[target_feature(enable = "aes,sse2,ssse3")]
unsafe fn body_ni<const DEC: bool>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    steps: usize,
    l: &mut u128,
    sum: &mut Block,
) {
    const H: usize = HALF;
    let halves = 8 * steps / HALF;
    if halves == 0 {
        return;
    }
    let rounds = key.rounds.min(14);
    let kf = |_: usize| key;
    let mut li = from_int(*l);
    let mut s = ld(sum);
    let zero = _mm_setzero_si128();
    // The half in flight: its first pair, first input blocks, first output blocks, and its
    // second-round cipher inputs.
    let mut p_prev = 0;
    let mut a_prev = [zero; H];
    let mut y1_prev = [zero; H];
    let mut x2_prev = [zero; H];
    for h in 0..=halves {
        // Lanes 0..H: this half's first round; lanes H..2H: the previous half's second.
        let mut x = [zero; 2 * H];
        let p0 = h * H;
        let mut lb = [zero; H + 1];
        let mut a = [zero; H];
        if h < halves {
            lb[0] = bswap(li);
            for m in lb[1..].iter_mut() {
                li = dbl_xmm_sar(li);
                *m = bswap(li);
            }
            for j in 0..H {
                // SAFETY: pair p0 + j < 8·steps lies inside the input (caller).
                a[j] = unsafe { _mm_loadu_si128(io.src.add(PAIR * (p0 + j)).cast()) };
                let mask = if DEC {
                    _mm_xor_si128(lb[j], lb[j + 1])
                } else {
                    lb[j]
                };
                x[j] = _mm_xor_si128(a[j], mask);
            }
        }
        x[H..].copy_from_slice(&x2_prev);
        match (h, h < halves) {
            (0, _) => enc_x!(&mut x[..H], kf, rounds),
            (_, true) => enc_x!(&mut x, kf, rounds),
            (_, false) => enc_x!(&mut x[H..], kf, rounds),
        }
        if h > 0 {
            for j in 0..H {
                let y2 = _mm_xor_si128(x[H + j], a_prev[j]);
                // SAFETY: pair p_prev + j lies inside the output (caller); its input was
                // read one pass earlier.
                unsafe {
                    let dst = io.dst.add(PAIR * (p_prev + j));
                    _mm_storeu_si128(dst.cast(), y1_prev[j]);
                    _mm_storeu_si128(dst.add(BLOCK).cast(), y2);
                }
                if DEC {
                    s = _mm_xor_si128(s, y2);
                }
            }
        }
        if h < halves {
            for j in 0..H {
                // SAFETY: as for `a`.
                let b = unsafe { _mm_loadu_si128(io.src.add(PAIR * (p0 + j) + BLOCK).cast()) };
                let y1 = _mm_xor_si128(x[j], b);
                if !DEC {
                    s = _mm_xor_si128(s, b);
                }
                let mask = if DEC {
                    lb[j]
                } else {
                    _mm_xor_si128(lb[j], lb[j + 1])
                };
                y1_prev[j] = y1;
                x2_prev[j] = _mm_xor_si128(y1, mask);
            }
            a_prev = a;
            p_prev = p0;
        }
    }
    *l = to_int(li);
    st(sum, s);
}

/// Pairs per half-step of [`body_ni`] (a divisor of the 8 pairs of a step).
const HALF: usize = 4;
const _: () = assert!(8 % HALF == 0);

/// Wide xmm AD: `steps` steps of 8 blocks from block 0, masks `q` (in: `2^0·Q`-based
/// current, out: advanced by `8·steps`), outputs xored into `asum`.
///
/// # Safety
/// AES-NI, SSSE3 (the token); `16 · 8 · steps` bytes inside the input.
#[target_feature(enable = "aes,sse2,ssse3")]
unsafe fn ad_ni(key: &AesKey, io: &IoPtrs<'_>, steps: usize, q: &mut u128, asum: &mut Block) {
    const W: usize = 8;
    let rounds = key.rounds.min(14);
    let kf = |_: usize| key;
    let mut qi = from_int(*q);
    let mut s = ld(asum);
    for step in 0..steps {
        // SAFETY: blocks 8·step..8·step + 8 lie inside the input (caller).
        let mut x: [__m128i; W] = core::array::from_fn(|j| unsafe {
            let a = _mm_loadu_si128(io.src.add(BLOCK * (step * W + j)).cast());
            // The mask doubled in a register, as in `body_vaes`.
            let m = bswap(qi);
            qi = dbl_xmm_sar(qi);
            _mm_xor_si128(a, m)
        });
        enc_x!(&mut x, kf, rounds);
        for xj in x {
            s = _mm_xor_si128(s, xj);
        }
    }
    *q = to_int(qi);
    st(asum, s);
}

// ---------------------------------------------------------------------------------------
// ymm kernels (VAES): two blocks per register

/// Round key `r` of `key` in both halves.
#[inline]
#[target_feature(enable = "avx2")]
fn rk2(key: &AesKey, r: usize) -> __m256i {
    _mm256_broadcastsi128_si256(rk(key, r))
}

/// Round key `r` of `lo` (low half) and `hi` (high half).
#[inline]
#[target_feature(enable = "avx2")]
fn rk_pair(lo: &AesKey, hi: &AesKey, r: usize) -> __m256i {
    // SAFETY: both rows are 16 readable bytes.
    unsafe { _mm256_loadu2_m128i(hi.enc.0[r].as_ptr().cast(), lo.enc.0[r].as_ptr().cast()) }
}

/// Doubling (as [`dbl`]) of both 128-bit lanes of `v`, each a mask as a block (byte 0 the
/// most significant): every byte shifted left by one, taking the top bit of the byte after
/// it, and byte 15 the reduction `0x87` if byte 0's top bit was set. Five instructions for
/// two masks, with no byte swap; constant time (a compare, a fixed shuffle, masks).
#[inline]
#[target_feature(enable = "avx2")]
fn dbl_blocks(v: __m256i) -> __m256i {
    // 0xff in every byte whose top bit is set.
    let top = _mm256_cmpgt_epi8(_mm256_setzero_si256(), v);
    // Byte i of each lane takes byte i + 1's, byte 15 byte 0's.
    let next = _mm256_setr_epi8(
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
        12, 13, 14, 15, 0,
    );
    // 1 in every byte, 0x87 in byte 15 (the top byte of each lane's high word).
    let carry = _mm256_set_epi64x(
        0x8701_0101_0101_0101u64 as i64,
        0x0101_0101_0101_0101,
        0x8701_0101_0101_0101u64 as i64,
        0x0101_0101_0101_0101,
    );
    let c = _mm256_and_si256(_mm256_shuffle_epi8(top, next), carry);
    _mm256_xor_si256(_mm256_add_epi8(v, v), c)
}

/// `(L, 2L)`, the masks of a wide body's first two pairs, as blocks (`L` in the low lane),
/// from the mask integer `l`.
#[inline]
#[target_feature(enable = "avx2,ssse3")]
fn l_and_2l(l: u128) -> __m256i {
    let m = _mm256_broadcastsi128_si256(bswap(from_int(l)));
    _mm256_blend_epi32::<0xf0>(m, dbl_blocks(m))
}

/// Multiplication by x^16 of both lanes of `v`, masks as blocks (16 doublings): as integers,
/// a shift left by two bytes and the reduction of the 16 bits shifted out, `t·(x^7 + x^2 + x
/// + 1)` (at most 23 bits, so no further reduction). Constant time.
#[inline]
#[target_feature(enable = "avx2")]
fn times_x16_blocks(v: __m256i) -> __m256i {
    let swap = block_swap();
    let int = _mm256_shuffle_epi8(v, swap);
    let red = times_reduction(_mm256_srli_si256::<14>(int));
    let int = _mm256_xor_si256(_mm256_slli_si256::<2>(int), red);
    _mm256_shuffle_epi8(int, swap)
}

/// The byte order that turns both lanes' masks into big-endian integers and back.
#[inline]
#[target_feature(enable = "avx2")]
fn block_swap() -> __m256i {
    _mm256_setr_epi8(
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
        5, 4, 3, 2, 1, 0,
    )
}

/// `t·(x^7 + x^2 + x + 1)` per 64-bit word, for the bits `t` a shift left pushed out of a
/// block (fewer than 57 of them, so the product fits the word): what they reduce to.
#[inline]
#[target_feature(enable = "avx2")]
fn times_reduction(t: __m256i) -> __m256i {
    _mm256_xor_si256(
        _mm256_xor_si256(t, _mm256_slli_epi64::<1>(t)),
        _mm256_xor_si256(_mm256_slli_epi64::<2>(t), _mm256_slli_epi64::<7>(t)),
    )
}

/// Multiplication by x^k (k <= 56) of both lanes of `v`, masks as blocks: as integers, a
/// shift left by `k` bits and the reduction of the `k` bits shifted out, `t·(x^7 + x^2 + x +
/// 1)` (under 64 bits, so no further reduction). The registers of a call's first step get
/// their masks this way, each straight from `(L, 2L)`: as a chain of two doublings per
/// register, the last register's mask came some 60 cycles after the first, and its AES
/// layers with it. Constant time (`k` is a public position).
#[inline]
#[target_feature(enable = "avx2")]
fn times_xk_blocks(v: __m256i, k: usize) -> __m256i {
    debug_assert!(k <= 56);
    let swap = block_swap();
    let int = _mm256_shuffle_epi8(v, swap);
    let up = _mm_cvtsi32_si128(k as i32);
    let down = _mm_cvtsi32_si128(64 - k as i32);
    // Each word's top k bits: the low word's carry into the high word, the high word's out.
    let spill = _mm256_srl_epi64(int, down);
    let shifted = _mm256_xor_si256(_mm256_sll_epi64(int, up), _mm256_slli_si256::<8>(spill));
    let red = times_reduction(_mm256_srli_si256::<8>(spill));
    _mm256_shuffle_epi8(_mm256_xor_si256(shifted, red), swap)
}

/// [`times_x16_blocks`] with the reduction as one carry-less product: the 16 bits shifted
/// out (bytes 0 and 1 of each block) gathered into a little-endian integer `t`, `t · 0x87`
/// (VPCLMULQDQ, at most 23 bits), its three bytes put back in the blocks' order (bytes 15,
/// 14, 13), beside the blocks shifted by two bytes. Five instructions where the shifts and
/// xors took eleven; constant time.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn times_x16_clmul(v: __m256i) -> __m256i {
    const Z: i8 = -128; // a shuffle index that zeroes its byte
    let gather = _mm256_setr_epi8(
        1, 0, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 0, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z,
        Z, Z,
    );
    let place = _mm256_setr_epi8(
        Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 1, 0, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2,
        1, 0,
    );
    let t = _mm256_shuffle_epi8(v, gather);
    let red = _mm256_clmulepi64_epi128::<0x00>(t, _mm256_set1_epi64x(0x87));
    _mm256_xor_si256(_mm256_srli_si256::<2>(v), _mm256_shuffle_epi8(red, place))
}

/// Encrypts the ymm registers of an array in place, register `j` under the rows `$row(j, r)`:
/// `enc_y!(x, row_fn, rounds)`.
macro_rules! enc_y {
    ($x:expr, $row:expr, $rounds:expr) => {{
        let x = $x;
        let rounds: usize = $rounds;
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = _mm256_xor_si256(*xj, $row(j, 0));
        }
        for r in 1..rounds {
            for (j, xj) in x.iter_mut().enumerate() {
                *xj = _mm256_aesenc_epi128(*xj, $row(j, r));
            }
        }
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = _mm256_aesenclast_epi128(*xj, $row(j, rounds));
        }
    }};
}

/// Pair pool on ymm: `lanes` in steps of up to 16 (8 registers).
///
/// # Safety
/// AVX2, VAES, AES-NI (the token); as [`pool_ni_dispatch`] otherwise.
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn pool_vaes_dispatch<const DEC: bool, const CUT: bool>(
    _t: VaesToken,
    lanes: &[PairLane<'_>],
    sums: &mut [Block],
) {
    for (l, s) in lanes.chunks(POOL).zip(sums.chunks_mut(POOL)) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match l.len().div_ceil(2) {
                1 => pool_vaes::<1, DEC, CUT>(l, s),
                2 => pool_vaes::<2, DEC, CUT>(l, s),
                3 => pool_vaes::<3, DEC, CUT>(l, s),
                4 => pool_vaes::<4, DEC, CUT>(l, s),
                5 => pool_vaes::<5, DEC, CUT>(l, s),
                6 => pool_vaes::<6, DEC, CUT>(l, s),
                7 => pool_vaes::<7, DEC, CUT>(l, s),
                _ => pool_vaes::<8, DEC, CUT>(l, s),
            }
        }
    }
}

/// The two-round Feistel on `2R - 1` or `2R` pairs of any jobs in `R` ymm registers (lanes
/// `2r`, `2r + 1` in register `r`; an odd count leaves the last register's high half a shadow
/// of its low lane: computed, never stored).
///
/// `CUT`: as in [`pool_ni`].
///
/// # Safety
/// As [`pool_vaes_dispatch`], with `lanes.len()` `2R - 1` or `2R` and as many sums.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn pool_vaes<const R: usize, const DEC: bool, const CUT: bool>(
    lanes: &[PairLane<'_>],
    sums: &mut [Block],
) {
    let n = lanes.len();
    debug_assert!((n == 2 * R || n + 1 == 2 * R) && sums.len() == n);
    let rounds = lanes[0].key.rounds.min(14);
    let shared = lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key));
    let hi = |r: usize| (2 * r + 1).min(n - 1);
    let row = |r: usize, i: usize| {
        if shared {
            rk2(lanes[0].key, i)
        } else {
            rk_pair(lanes[2 * r].key, lanes[hi(r)].key, i)
        }
    };
    // SAFETY (loads/stores): each lane's [off, off + 32) is inside its input and output
    // (caller); each pair's blocks are loaded before its stores; the shadow half is read from
    // its low lane and never stored.
    let load = |r: usize, d: usize| unsafe {
        let (lo, h) = (&lanes[2 * r], &lanes[hi(r)]);
        _mm256_loadu2_m128i(
            h.io.src.add(h.off + d).cast(),
            lo.io.src.add(lo.off + d).cast(),
        )
    };
    let mask = |r: usize, second: bool| {
        let (lo, h) = (&lanes[2 * r], &lanes[hi(r)]);
        let (a, b) = if second {
            (&lo.second, &h.second)
        } else {
            (&lo.first, &h.first)
        };
        // SAFETY: two 16-byte blocks.
        unsafe { _mm256_loadu2_m128i(b.as_ptr().cast(), a.as_ptr().cast()) }
    };
    let a: [__m256i; R] = core::array::from_fn(|r| load(r, 0));
    let mut x: [__m256i; R] = core::array::from_fn(|r| _mm256_xor_si256(a[r], mask(r, false)));
    enc_y!(&mut x, row, rounds);
    let b: [__m256i; R] = core::array::from_fn(|r| load(r, BLOCK));
    let y1: [__m256i; R] = core::array::from_fn(|r| {
        let y = _mm256_xor_si256(x[r], b[r]);
        if CUT && !DEC {
            let ((klo, plo), (khi, phi)) =
                (cut_windows(lanes[2 * r].cut), cut_windows(lanes[hi(r)].cut));
            // SAFETY: four 16-byte constant blocks.
            let (keep, pad) = unsafe {
                (
                    _mm256_loadu2_m128i(khi.as_ptr().cast(), klo.as_ptr().cast()),
                    _mm256_loadu2_m128i(phi.as_ptr().cast(), plo.as_ptr().cast()),
                )
            };
            _mm256_xor_si256(_mm256_and_si256(y, keep), pad)
        } else {
            y
        }
    });
    // The checksum block: `B` (whole pairs encrypting), `Z ⊕ y1` (cut lanes).
    let cs: [__m256i; R] = core::array::from_fn(|r| {
        if CUT && !DEC {
            _mm256_xor_si256(x[r], y1[r])
        } else {
            b[r]
        }
    });
    let mut x2: [__m256i; R] = core::array::from_fn(|r| _mm256_xor_si256(y1[r], mask(r, true)));
    enc_y!(&mut x2, row, rounds);
    for r in 0..R {
        let y2 = _mm256_xor_si256(x2[r], a[r]);
        let sv = if DEC { y2 } else { cs[r] };
        let lo = &lanes[2 * r];
        unsafe {
            let d = lo.io.dst.add(lo.off);
            _mm_storeu_si128(d.cast(), _mm256_castsi256_si128(y1[r]));
            _mm_storeu_si128(d.add(BLOCK).cast(), _mm256_castsi256_si128(y2));
        }
        st(&mut sums[2 * r], _mm256_castsi256_si128(sv));
        if 2 * r + 1 < n {
            let h = &lanes[2 * r + 1];
            unsafe {
                let d = h.io.dst.add(h.off);
                _mm_storeu_si128(d.cast(), _mm256_extracti128_si256::<1>(y1[r]));
                _mm_storeu_si128(d.add(BLOCK).cast(), _mm256_extracti128_si256::<1>(y2));
            }
            st(&mut sums[2 * r + 1], _mm256_extracti128_si256::<1>(sv));
        }
    }
}

/// Defines a wide ymm body, `$name` compiled with `$features` and multiplying its masks by
/// x^16 with `$x16`: [`body_vaes`] everywhere VAES is, [`body_vaes_clmul`] where VPCLMULQDQ
/// also is.
macro_rules! body_vaes_fn {
    ($name:ident, $features:literal, $x16:ident, $doc:literal) => {
        /// Wide ymm body: `steps` steps of `2R` whole pairs from pair `first` (register `r`
        /// of a layer holds pairs `2r` and `2r + 1` of the step); `l` (the mask of pair
        /// `first` on entry) and `sum` as in [`body_ni`]. `R = 8` for the long run of a
        /// message; narrower steps take what is left of it, so that a long message leaves at
        /// most one pair to the cross-job pool (whose per-pair bookkeeping cost as much as the
        /// kernel's work on the pairs it took).
        ///
        /// # Safety
        #[doc = $doc]
        #[target_feature(enable = $features)]
        unsafe fn $name<const R: usize, const DEC: bool>(
            key: &AesKey,
            io: &IoPtrs<'_>,
            first: usize,
            steps: usize,
            l: &mut u128,
            sum: &mut Block,
        ) {
            let rounds = key.rounds.min(14);
            let row = |_: usize, i: usize| rk2(key, i);
            // The masks of register r, (L_2r, L_2r+1), as blocks (byte 0 the most
            // significant): x^2r times (L, 2L), each register's straight from the call's
            // first mask ([`times_xk_blocks`]), not a chain through the registers before it
            // (1024-byte messages, batches of 64: 0.52-0.55 against 0.50-0.51 TSC
            // cycles/byte, five alternated pairs of runs; no change on the realistic mix).
            // From step to step each register's masks are multiplied by x^16 (`$x16`), eight
            // independent products instead of a chain of 16 doublings: before, 17 serial
            // doublings of one xmm mask per step, each with a byte swap and an insert, held
            // the step back (2048-byte messages 0.36 TSC cycles/byte; with the chain's links
            // made independent 0.315).
            assert!(R == 8 || steps <= 1, "only the widest step strides");
            let m0 = l_and_2l(*l);
            let mut lv: [__m256i; R] = core::array::from_fn(|r| times_xk_blocks(m0, 2 * r));
            let mut next = times_xk_blocks(m0, 2 * R);
            let mut s = _mm256_setzero_si256();
            for step in 0..steps {
                let p0 = first + step * 2 * R;
                // (L*_2r, L*_2r+1) = (L_2r ⊕ L_2r+1, L_2r+1 ⊕ L_2r+2).
                let lsv: [__m256i; R] = core::array::from_fn(|r| {
                    let after = if r + 1 < R { lv[r + 1] } else { next };
                    _mm256_xor_si256(lv[r], _mm256_permute2x128_si256::<0x21>(lv[r], after))
                });
                // This step's masks; the carried ones move on to the next step's, early, so the
                // products are ready when it starts.
                let this = lv;
                if step + 1 < steps {
                    lv = core::array::from_fn(|r| $x16(lv[r]));
                    next = $x16(next);
                }
                let lv = this;
                // SAFETY (loads/stores): pairs p0..p0 + 2R lie inside input and output (caller);
                // each pair's blocks are loaded before its stores.
                let ld2 = |r: usize, d: usize| unsafe {
                    let lo = io.src.add(PAIR * (p0 + 2 * r) + d);
                    _mm256_loadu2_m128i(lo.add(PAIR).cast(), lo.cast())
                };
                let a: [__m256i; R] = core::array::from_fn(|r| ld2(r, 0));
                let mut x: [__m256i; R] = core::array::from_fn(|r| {
                    _mm256_xor_si256(a[r], if DEC { lsv[r] } else { lv[r] })
                });
                enc_y!(&mut x, row, rounds);
                let mut y1 = [x[0]; R];
                for r in 0..R {
                    let b = ld2(r, BLOCK);
                    y1[r] = _mm256_xor_si256(x[r], b);
                    if !DEC {
                        s = _mm256_xor_si256(s, b);
                    }
                    x[r] = _mm256_xor_si256(y1[r], if DEC { lv[r] } else { lsv[r] });
                }
                enc_y!(&mut x, row, rounds);
                for r in 0..R {
                    let y2 = _mm256_xor_si256(x[r], a[r]);
                    unsafe {
                        let d = io.dst.add(PAIR * (p0 + 2 * r));
                        _mm256_storeu2_m128i(d.add(PAIR).cast(), d.cast(), y1[r]);
                        _mm256_storeu2_m128i(d.add(PAIR + BLOCK).cast(), d.add(BLOCK).cast(), y2);
                    }
                    if DEC {
                        s = _mm256_xor_si256(s, y2);
                    }
                }
            }
            *l = to_int(bswap(_mm256_castsi256_si128(next)));
            let folded = _mm_xor_si128(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            st(sum, _mm_xor_si128(ld(sum), folded));
        }
    };
}

body_vaes_fn!(
    body_vaes,
    "avx2,vaes,aes,ssse3",
    times_x16_blocks,
    "AVX2, VAES, AES-NI, SSSE3 (the token); pairs `first..first + 2R · steps` inside input
    and output."
);
body_vaes_fn!(
    body_vaes_clmul,
    "avx2,vaes,aes,ssse3,vpclmulqdq",
    times_x16_clmul,
    "AVX2, VAES, AES-NI, SSSE3 (the token) and VPCLMULQDQ; pairs `first..first + 2R · steps`
    inside input and output."
);

/// [`times_x16_clmul`] on the four lanes of a zmm register.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn times_x16_zmm(v: __m512i) -> __m512i {
    const Z: i8 = -128; // a shuffle index that zeroes its byte
    let gather = _mm512_broadcast_i32x4(_mm_setr_epi8(
        1, 0, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z,
    ));
    let place = _mm512_broadcast_i32x4(_mm_setr_epi8(
        Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 1, 0,
    ));
    let t = _mm512_shuffle_epi8(v, gather);
    let red = _mm512_clmulepi64_epi128::<0x00>(t, _mm512_set1_epi64(0x87));
    _mm512_xor_si512(_mm512_bsrli_epi128::<2>(v), _mm512_shuffle_epi8(red, place))
}

/// The pair of a zmm register's lane in [`body_zmm`]: lanes 0 to 3 hold the register's pairs
/// 0, 2, 1 and 3 (an involution: also the lane of a pair). So the first blocks `A` of the
/// four pairs come from two loads, 48 bytes apart, one blend, and so do the second blocks
/// `B`; the outputs go back with masked stores (see [`zmm_step`]).
const ZMM_LANE_PAIR: [usize; 4] = [0, 2, 1, 3];

/// The masks `L_k = L·x^k` for `k` in `0..16`, as blocks: lane `j` of register `r` is
/// `L_4r+p`, `p = ZMM_LANE_PAIR[j]`. Each straight from `L` (an integer, broadcast): per
/// lane a shift left by `k` bits of both quadwords (variable shifts), the low quadword's top
/// `k` bits carried into the high one and the high one's reduced into the low one (`t·(x^7 +
/// x^2 + x + 1)`, at most 22 bits), then one byte swap a register. Lane-wise arithmetic,
/// short before the first step can start: the chain of products from `(L, 2L)` it replaces
/// (two [`times_xk_blocks`] a register) held each call up. Zen 5, comb engine, TSC
/// cycles/byte, alternated builds: 1 KiB messages 0.173-0.187 -> 0.164-0.165 (three pairs),
/// OTR/ECB on the realistic mix 1.63-1.68 -> 1.58-1.64 (four pairs). Constant time.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn first_masks_zmm(l: u128) -> [__m512i; 4] {
    let v = _mm512_broadcast_i32x4(from_int(l));
    // Each lane's quadwords swapped: the high one beside the low one and back.
    let swapped = _mm512_shuffle_epi32::<0b01_00_11_10>(v);
    core::array::from_fn(|r| {
        // Lane j: k = 4r + ZMM_LANE_PAIR[j], in both quadwords. A variable shift by 64 or
        // more gives zero, so each right shift below takes one quadword of the lane and clears
        // the other.
        let k = |j: usize| (4 * r + ZMM_LANE_PAIR[j]) as i64;
        let up = _mm512_set_epi64(k(3), k(3), k(2), k(2), k(1), k(1), k(0), k(0));
        let to_high = _mm512_set_epi64(64 - k(3), 64, 64 - k(2), 64, 64 - k(1), 64, 64 - k(0), 64);
        let to_low = _mm512_set_epi64(64, 64 - k(3), 64, 64 - k(2), 64, 64 - k(1), 64, 64 - k(0));
        let shifted = _mm512_sllv_epi64(v, up);
        // The low quadword's top k bits, into the high one.
        let carry = _mm512_srlv_epi64(swapped, to_high);
        // The high quadword's top k bits `t`, in the low one, reduced.
        let t = _mm512_srlv_epi64(swapped, to_low);
        let x = _mm512_ternarylogic_epi64::<0x96>(shifted, carry, t);
        let x = _mm512_ternarylogic_epi64::<0x96>(
            x,
            _mm512_slli_epi64::<1>(t),
            _mm512_slli_epi64::<2>(t),
        );
        bswap4(_mm512_xor_si512(x, _mm512_slli_epi64::<7>(t)))
    })
}

/// Byte swap of each lane of a zmm register: mask integers to their blocks, and back.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn bswap4(v: __m512i) -> __m512i {
    _mm512_shuffle_epi8(
        v,
        _mm512_broadcast_i32x4(_mm_set_epi8(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        )),
    )
}

/// Round key `r` of `key` in all four lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn rk4(key: &AesKey, r: usize) -> __m512i {
    _mm512_broadcast_i32x4(rk(key, r))
}

/// Encrypts the zmm registers of an array in place under `key`: `enc_z!(x, key, rounds)`.
macro_rules! enc_z {
    ($x:expr, $key:expr, $rounds:expr) => {{
        let x = $x;
        let rounds: usize = $rounds;
        let k0 = rk4($key, 0);
        for xj in x.iter_mut() {
            *xj = _mm512_xor_si512(*xj, k0);
        }
        for r in 1..rounds {
            let kr = rk4($key, r);
            for xj in x.iter_mut() {
                *xj = _mm512_aesenc_epi128(*xj, kr);
            }
        }
        let kl = rk4($key, rounds);
        for xj in x.iter_mut() {
            *xj = _mm512_aesenclast_epi128(*xj, kl);
        }
    }};
}

/// The wide body on zmm: all `ell >= 16` whole pairs of one message, from pair 0, in steps
/// of 16 pairs (four pairs per register: register `r` of a layer holds pairs `4r .. 4r + 4`
/// of the step, four registers per layer) and, when 16 does not divide `ell`, a last step of
/// 17 to 31 pairs in five to eight registers, under masks ([`zmm_step`]); `l` (on return
/// `L_ell`) and `sum` as in [`body_vaes`]. The same AES work as the ymm body in half the
/// instructions around it: a zmm VAESENC issues once a cycle where a ymm one issues twice,
/// but the loads, lane shuffles, mask products, xors and stores are halved, and the shuffles
/// and products run on port 5, beside the AES unit (the ymm body's vector uops shared ports
/// 0 and 1 with its VAESENC).
///
/// One call per message, the remainder in the last step beside a whole step's pairs: before,
/// a second call ran the remainder's even part alone (one to four registers, its mask setup
/// again) and an odd last pair went to the cross-job pool. Measured on the Intel AVX-512 VM
/// (comb engine, core cycles/byte, encryption, two alternated runs): 1024 B 0.513-0.516 ->
/// 0.449-0.452, 1456 B 0.392-0.395 -> 0.352-0.354, 4 KiB 0.264-0.267 -> 0.240-0.244; the
/// realistic mix 0.634-0.641 -> 0.584-0.596 encrypting, 0.649-0.652 -> 0.582-0.597
/// decrypting (three pairs). Steps of eight registers throughout ran slower (4 KiB 0.297);
/// so did the remainder in a step of its own (one pair in one register waits out both
/// layers' latency), and messages of 8 to 15 pairs on zmm (the realistic mix 0.606-0.609).
///
/// Nor does the message's last chunk belong in the last step (stop 69; Intel AVX-512 VM, a
/// harness timing the library call alone, batches of 64, encryption, TSC ticks per message,
/// alternated builds, a contended host). The chunk ran as one more lane of the step, under
/// byte masks, its operands swapped or cut per case (odd or even, either direction), in place
/// of the pair pool's cut lane, the staging and the batched `E(L_ell)`. The first version passed
/// the KATs, the last the reference tests; each was slower:
/// - every message on zmm, last steps of one to eight registers: the mix 342-356 against
///   262-294 (fastest of 300 runs, two pairs); a short message's lanes in a step of their own
///   wait out both layers, where the pools run them beside other jobs';
/// - only messages of at least 16 pairs: 1024 bytes 310-324 against 337-361, but 1440 bytes
///   513 against 427-431, 1456 bytes 485-498 against 419-424, the mix 326-340 against 287-307
///   (fastest of 300 runs, two or three pairs). The larger function spilled: 402-736 stack
///   accesses in `body_zmm` over four versions of it, against 98-134;
/// - the same with the last step cut to one to four registers (112-148 stack accesses): 1440
///   bytes 824-917 against 726-807, the mix 637-709 against 569-628 (10th percentiles of 400
///   runs, four pairs in a busy spell). The pool runs the cut lanes 16 to a call.
///
/// On Zen 5 (stop 73; `comb bench`, comb engine, core cycles per message, batches of 64,
/// alternated builds) a software-pipelined body ran no faster: each layer of rounds eight
/// registers (the second layer of step `j - 1` beside the first of step `j + 1`, `asm!`
/// rounds, the step's code shared with this one), 1000 bytes 287-293 against 305-307,
/// 1456 bytes 372-391 against 386-387, 4 KiB 773-806 against 752-758; the realistic mix
/// slower (OTR/ECB 1.83-1.84 against 1.89-1.93, three pairs). What binds there is not the
/// layers' latency (VAESENC on zmm: about four cycles, two a cycle) but the lane shuffles:
/// in a microbenchmark (gcc, `asm` loops, the TSC) 16 independent zmm VAESENC took 5.45
/// ticks, with 8 `vshufi64x2` beside them 6.94 and with 8 `vpermt2q` 7.03, with 16 `vpxorq`
/// 5.50: the shuffles share the AES units' pipes. A step of 16 pairs has 88 VAESENC and 32
/// shuffles (split, join, the masks' products and `L*`). An OTR-shaped loop in C over 4 KiB
/// took 286-338 ticks with its split and join, 208-234 without them, against 182 for ECB on
/// zmm.
///
/// So since stop 78 the split and join are gone: a register's lanes hold its pairs in the
/// order of [`ZMM_LANE_PAIR`], its `A` blocks from two loads 48 bytes apart and one blend (so
/// its `B` blocks), the outputs stored back under masks. Zen 5, comb engine, batches of 64,
/// TSC cycles/byte, three alternated runs: 1456 bytes 0.157 -> 0.151-0.153, 4 KiB
/// 0.119-0.120 -> 0.112-0.115, 1 KiB 0.167-0.169 against 0.168-0.171; the realistic mix no
/// change that five alternated pairs could show. Then the `B` blocks loaded only after the
/// first layer and its outputs stored at once (fewer registers live across the rounds; the
/// merged step of eight registers had spilled): 1 KiB 0.173-0.186 -> 0.164-0.173, 1456 bytes
/// 0.157-0.167 -> 0.151-0.154, 4 KiB 0.116-0.122 -> 0.107-0.112 (three of four alternated
/// pairs; the fourth contended), OTR/ECB on the mix 1.56-1.65 -> 1.52-1.57 (four pairs).
///
/// Slower still on Zen 5 (stop 80; comb engine, TSC cycles/byte, three or four alternated
/// pairs against this body, which ran 1456-byte batches at 0.138-0.150 in the same runs, one
/// contended 0.183 left out):
/// - two jobs' whole steps side by side, eight registers a layer: 1456 bytes 0.149-0.156,
///   the mix 0.226-0.233 against 0.217-0.234;
/// - one step of 9 to 12 registers for 33 to 47 pairs: 1456 bytes 0.155-0.163;
/// - the rounds unrolled for ten, the round keys re-read each layer (the key behind
///   `black_box`): 4 KiB 0.110-0.122 against 0.104-0.128, slower in seven of nine pairs; with
///   the keys hoisted instead LLVM spilled (4 KiB 0.110-0.118 against 0.100-0.104, one
///   contended 0.140 left out);
/// - `asm!` rounds (round by round, as in the windows): 1456 bytes 0.143-0.154;
/// - every long job's steps of 16 pairs in one software pipeline (each layer the second
///   half of one step beside the first of the next, across jobs): 1456 bytes 0.173-0.189.
///
/// A C model of this step (gcc, the same loads, stores and layers, masks precomputed, round
/// keys broadcast per round) runs 1536-byte messages at 118-122 TSC ticks each as three
/// steps of four registers (our layout at 1536 bytes) and at 108-112 as one of four and one
/// of eight (ours at 1400-1500 bytes); this body takes about 144 (rdtsc around the chunk's
/// loop over its long jobs). With the round count a runtime value, which makes gcc roll the
/// rounds into a loop as LLVM does here, the model takes 139-141 and 135-137. Unrolled, this
/// body did not get faster (above). The model ported to Rust (same intrinsics, a standalone
/// program, three steps of four registers) took 157-160 ticks with each round key broadcast
/// in its round, 138-140 with the keys broadcast once and held in registers, and 110-115
/// with the keys in registers and `-C target-cpu=znver4`: LLVM's generic schedule, not the
/// work, is most of the rest.
///
/// On Zen 4 (a zmm VAESENC in two halves: in a C loop one issued a cycle, four cycles'
/// latency, so a layer's four registers just keep the unit busy) this body runs 4 KiB messages
/// at about 1.45 times the AES work's own time. Timing-only builds in a harness calling it
/// on a hot 4 KiB buffer (TSC ticks a message, medians of 2001): 643-666 as it is, 593 without
/// the `x^16` products (in the C loop, beside 16 independent zmm VAESENC, each `vpclmulqdq`
/// added a cycle; 8 `vpshufb`, `vpermt2q` or `vpermq` nothing and 16 of them about 9 cycles;
/// 16 `vpxorq` or `vpternlogq` nothing); no change with the key whitening folded into a
/// three-way xor; 814 with steps of eight registers (LLVM spilled).
/// Without the second layer's wait on the first (its input from `B` alone) 612, without the
/// second masked store of each output 637, without the checksum no change, and without all
/// of these 517, still 1.15 times the AES work.
/// In a chunk, a long job's first masks made while the job before it ran were slower (three
/// alternated pairs, TSC cycles/byte: 576 bytes 0.379-0.393 -> 0.403-0.415, 1456 bytes
/// 0.256-0.269 -> 0.265-0.269, the mix 0.344-0.358 -> 0.358-0.382). For 33 to 47 pairs, two
/// steps of five or six registers each in place of one of four and one of five to eight: in
/// the harness 4-6% faster at 36 to 47 pairs, but in a chunk 1456 bytes 0.270-0.274 ->
/// 0.266-0.274 and the mix 0.361-0.365 -> 0.357-0.391 (three alternated pairs); not kept.
///
/// # Safety
/// AVX-512F, AVX-512BW, VAES, AES-NI, SSSE3 and VPCLMULQDQ; pairs `0..ell` inside input and
/// output.
#[target_feature(enable = "avx2,avx512f,avx512bw,vaes,aes,ssse3,vpclmulqdq")]
unsafe fn body_zmm<const DEC: bool>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    ell: usize,
    l: &mut u128,
    sum: &mut Block,
) {
    assert!(ell >= 16, "at least one 16-pair step");
    const R: usize = 4;
    const N: usize = 4 * R;
    let rounds = key.rounds.min(14);
    // The masks of register r, (L_4r, .., L_4r+3) in the lanes of `ZMM_LANE_PAIR`.
    let mut lv: [__m512i; R] = first_masks_zmm(*l);
    let mut s = _mm512_setzero_si512();
    let (full, rem) = (ell / N, ell % N);
    // With a remainder, the last whole step runs beside it, in one step of 17 to 31 pairs.
    let strided = if rem > 0 { full - 1 } else { full };
    for step in 0..strided {
        // The next step's masks: their first lane, L_16(step+1), is also the mask after this
        // step's last pair.
        let ahead = lv.map(|v| times_x16_zmm(v));
        // SAFETY: the step's pairs lie inside input and output (caller).
        unsafe { zmm_step::<R, DEC>(key, rounds, io, N * step, N, &lv, ahead[0], &mut s) };
        lv = ahead;
    }
    if rem > 0 {
        // Masks of the step's registers (and of the one after them, the mask after its
        // last pair): this step's and the next's.
        let ahead = lv.map(|v| times_x16_zmm(v));
        let m: [__m512i; 2 * R] =
            core::array::from_fn(|r| if r < R { lv[r] } else { ahead[r - R] });
        let (at, count) = (N * strided, N + rem);
        let after = |r: usize| {
            if r < 2 * R {
                m[r]
            } else {
                times_x16_zmm(ahead[0])
            }
        };
        macro_rules! merged {
            ($($r:literal)*) => {
                match count.div_ceil(4) {
                    // SAFETY: as above.
                    $($r => unsafe {
                        let m: [__m512i; $r] = core::array::from_fn(|r| m[r]);
                        zmm_step::<$r, DEC>(key, rounds, io, at, count, &m, after($r), &mut s)
                    },)*
                    _ => unreachable!("17 to 31 pairs"),
                }
            };
        }
        merged!(5 6 7 8);
        lv = ahead;
    }
    // L_ell: pair rem mod 4 of register rem / 4 (of the masks after the last 16-pair
    // boundary).
    let lane = (2 * ZMM_LANE_PAIR[rem % 4]) as i64;
    let idx = _mm512_set_epi64(0, 0, 0, 0, 0, 0, lane + 1, lane);
    let out = _mm512_permutexvar_epi64(idx, lv[rem / 4]);
    *l = to_int(bswap(_mm512_castsi512_si128(out)));
    let s256 = _mm256_xor_si256(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64::<1>(s));
    let folded = _mm_xor_si128(
        _mm256_castsi256_si128(s256),
        _mm256_extracti128_si256::<1>(s256),
    );
    st(sum, _mm_xor_si128(ld(sum), folded));
}

/// Four pairs `u = A0 B0 A1 B1`, `v = A2 B2 A3 B3` (blocks, low first) as `(A0 A1 A2 A3,
/// B0 B1 B2 B3)`: each pair's halves in the same lane of two registers.
#[inline]
#[target_feature(enable = "avx512f")]
fn split_pairs(u: __m512i, v: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_shuffle_i64x2::<0b10_00_10_00>(u, v),
        _mm512_shuffle_i64x2::<0b11_01_11_01>(u, v),
    )
}

/// [`split_pairs`] backwards: lane `j` of `y1` and of `y2` as pair `j`, pairs 0 and 1 in the
/// first register, 2 and 3 in the second.
#[inline]
#[target_feature(enable = "avx512f")]
fn join_pairs(y1: __m512i, y2: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_permutex2var_epi64(y1, _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), y2),
        _mm512_permutex2var_epi64(y1, _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4), y2),
    )
}

/// One step of [`body_zmm`]: `count` pairs from pair `first` (`4R - 3 ..= 4R`), in `R`
/// registers per layer, with masks `lv` (lane `j` of register `r`: `L_first+4r+p`, `p =`
/// [`ZMM_LANE_PAIR`]`[j]`) and `after` (its first lane the mask after the step's last
/// register); the checksum blocks xored into `s`. A step of fewer than `4R` pairs loads and
/// stores under masks: the missing pairs' lanes are zero, computed, never stored, and kept
/// out of the checksum.
///
/// It must inline into [`body_zmm`]: with more call sites (messages of 8 to 15 pairs on
/// zmm too) LLVM kept two of them out of line, and 1456-byte messages ran 15% slower.
///
/// # Safety
/// As [`body_zmm`], with pairs `first..first + count` inside input and output.
#[inline]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,avx512f,avx512bw,vaes,aes,ssse3,vpclmulqdq")]
unsafe fn zmm_step<const R: usize, const DEC: bool>(
    key: &AesKey,
    rounds: usize,
    io: &IoPtrs<'_>,
    first: usize,
    count: usize,
    lv: &[__m512i; R],
    after: __m512i,
    s: &mut __m512i,
) {
    debug_assert!(count <= 4 * R && count + 4 > 4 * R);
    let whole = count == 4 * R;
    // (L*_i) = (L_i ⊕ L_i+1): the next pair's mask, in lane order, of register r (lanes 2
    // and 3 beside lanes 0 and 1) and of the next register (its lane 0 beside lane 3).
    let next_pair = _mm512_set_epi64(9, 8, 3, 2, 7, 6, 5, 4);
    let lsv = |r: usize| {
        let next = if r + 1 < R { lv[r + 1] } else { after };
        _mm512_xor_si512(lv[r], _mm512_permutex2var_epi64(lv[r], next_pair, next))
    };
    // Qword masks of the lanes of register r that hold one of the step's pairs; of those,
    // the lanes of its pairs 0 and 1 (lanes 0 and 2) and of its pairs 2 and 3 (lanes 1, 3).
    // Only the last register can be partial (`count > 4R - 4`).
    let full = |r: usize| whole || r + 1 < R;
    let valid = |r: usize| -> __mmask8 {
        if full(r) {
            return 0xff;
        }
        match count.saturating_sub(4 * r).min(4) {
            0 => 0,
            1 => 0x03,
            2 => 0x33,
            3 => 0x3f,
            _ => 0xff,
        }
    };
    let low = |r: usize| valid(r) & 0x33;
    let high = |r: usize| valid(r) & 0xcc;
    let at = PAIR * first;
    // SAFETY (loads and stores): the step's pairs lie inside input and output (caller); a
    // masked load or store touches only the bytes of its mask's lanes, the step's pairs;
    // an unmasked load reads 64 bytes inside its register's four pairs, all there. Every
    // block is loaded before its place is stored to (in place, input and output are one):
    // a register's `A` blocks before the first layer, its `B` blocks before its `A` places
    // are written, and all `B` blocks before the second layer, whose outputs go to them.
    //
    // Register r's blocks at offset `k` blocks (`A` for k = 0 and 3, `B` for 1 and 4, with
    // the mask of lanes 0 and 2 or of lanes 1 and 3): lane j of a load at `p + 16k` is the
    // block at `p + 16(k + j)`, `A` of the register's pair `(j + k) / 2` for even `j + k`,
    // its `B` for odd. `wrapping_add` (here and for the stores): a partial register's
    // windows may start past the buffers' ends; the masked accesses touch none of those
    // bytes.
    let ld = |r: usize, k: usize| unsafe {
        let q = io.src.wrapping_add(at + 4 * PAIR * r + BLOCK * k);
        let mask = if k < 3 { low(r) } else { high(r) };
        if full(r) {
            _mm512_loadu_si512(q.cast())
        } else {
            _mm512_maskz_loadu_epi64(mask, q.cast())
        }
    };
    let st = |r: usize, k: usize, v: __m512i| unsafe {
        let d = io.dst.wrapping_add(at + 4 * PAIR * r + BLOCK * k);
        _mm512_mask_storeu_epi64(d.cast(), if k < 3 { low(r) } else { high(r) }, v);
    };
    let a: [__m512i; R] =
        core::array::from_fn(|r| _mm512_mask_blend_epi64(0xcc, ld(r, 0), ld(r, 3)));
    let mut x: [__m512i; R] =
        core::array::from_fn(|r| _mm512_xor_si512(a[r], if DEC { lsv(r) } else { lv[r] }));
    enc_z!(&mut x, key, rounds);
    // The `B` blocks only now, and the first layer's outputs stored at once: fewer
    // registers live across the rounds.
    for (r, xr) in x.iter_mut().enumerate() {
        let b = _mm512_mask_blend_epi64(0xcc, ld(r, 1), ld(r, 4));
        let y1 = _mm512_xor_si512(*xr, b);
        if !DEC {
            // The missing pairs' B lanes are zero.
            *s = _mm512_xor_si512(*s, b);
        }
        st(r, 0, y1);
        st(r, 3, y1);
        *xr = _mm512_xor_si512(y1, if DEC { lv[r] } else { lsv(r) });
    }
    enc_z!(&mut x, key, rounds);
    for r in 0..R {
        let y2 = _mm512_xor_si512(x[r], a[r]);
        if DEC {
            *s = _mm512_xor_si512(
                *s,
                if full(r) {
                    y2
                } else {
                    _mm512_maskz_mov_epi64(valid(r), y2)
                },
            );
        }
        st(r, 1, y2);
        st(r, 4, y2);
    }
}

/// Wide ymm AD: `steps` steps of 16 blocks (8 registers of two consecutive blocks); `q`,
/// `asum` as in [`ad_ni`].
///
/// # Safety
/// AVX2, VAES, AES-NI, SSSE3 (the token); `16 · 16 · steps` bytes inside the input.
#[target_feature(enable = "avx2,vaes,aes,ssse3")]
unsafe fn ad_vaes(key: &AesKey, io: &IoPtrs<'_>, steps: usize, q: &mut u128, asum: &mut Block) {
    const R: usize = 8;
    const W: usize = 2 * R;
    let rounds = key.rounds.min(14);
    let row = |_: usize, i: usize| rk2(key, i);
    let mut qi = from_int(*q);
    let mut s = _mm256_setzero_si256();
    for step in 0..steps {
        // Doubled in a register, as in `body_vaes`.
        let m: [__m128i; W] = core::array::from_fn(|_| {
            let m = bswap(qi);
            qi = dbl_xmm_sar(qi);
            m
        });
        // SAFETY: blocks 16·step..16·step + 16 lie inside the input (caller).
        let mut x: [__m256i; R] = core::array::from_fn(|r| unsafe {
            let a = _mm256_loadu_si256(io.src.add(BLOCK * (step * W + 2 * r)).cast());
            _mm256_xor_si256(a, _mm256_set_m128i(m[2 * r + 1], m[2 * r]))
        });
        enc_y!(&mut x, row, rounds);
        for xr in x {
            s = _mm256_xor_si256(s, xr);
        }
    }
    *q = to_int(qi);
    let folded = _mm_xor_si128(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
    st(asum, _mm_xor_si128(ld(asum), folded));
}

// ---------------------------------------------------------------------------------------
// kernel choice

/// The first `ell` whole pairs of one job (slot `slot` of `pool`) through the two-round
/// Feistel, from `l`, the mask of pair 0 (on return the mask of pair `ell`): the wide steps
/// here, their checksum xored into `sum`; the pairs they leave pushed to `pool`, whose
/// checksum blocks reach `sink` when it runs. Also COBRA-R's Feistel (the same two rounds,
/// its `L'` for `L`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pairs<'a, const DEC: bool>(
    k: Kernels,
    key: &'a AesKey,
    io: IoPtrs<'a>,
    ell: usize,
    l: &mut u128,
    sum: &mut Block,
    pool: &mut PairPool<'a>,
    slot: usize,
    sink: &mut impl FnMut(usize, &Block),
) {
    let done = body_wide::<DEC>(k, key, &io, ell, l, sum);
    for p in done..ell {
        let lane = PairLane::new::<DEC>(io, PAIR * p, key, *l, *l ^ dbl(*l), slot, BLOCK);
        pool.push::<DEC>(k, lane, sink);
        *l = dbl(*l);
    }
}

/// Whole wide steps of the message's first `ell` pairs (one job); returns the pairs done.
///
/// On ymm only, also where AVX-512 is: a zmm body (four pairs per register, 32-pair steps in
/// eight registers per layer, the rest in one step under masks) measured on Zen 4 (`comb
/// bench`, comb engine, TSC cycles/byte, encryption) 16 KiB 0.211 -> 0.202, but 512 B 0.645
/// -> 0.70 and 64 B 3.1 -> 4.4: a short message's one or two pairs in a step of their own wait
/// out the AES latency twice, where the pool runs them beside other jobs'. Nor is the wide
/// step's gap to ECB (16 KiB: 0.21 against 0.12 for the same AES work) the wait of the second
/// layer for the first: a loop of two dependent layers of eight registers of bare VAESENC
/// issues at the full rate there. The loads, lane shuffles, xors and stores around the rounds
/// compete with them for the vector pipes. Nor did software pipelining help on Zen 3 (VAESENC
/// latency 4): a ymm body in halves of 8 pairs as [`body_ni`] (each pass one half's first
/// round beside the previous half's second, 8 registers, masks carried by x^8, the message's
/// last pairs in a partial half) measured 16 KiB 0.26 -> 0.30 TSC cycles/byte, 1440 bytes
/// 0.45 -> 0.49, the realistic mix 0.70-0.71 -> 0.77-0.78.
///
/// On Zen 3 (no AVX-512, so this ymm body), timing-only builds alternated with the body as at
/// b451224, 8 KiB messages, batches of 16, comb engine, TSC cycles/byte. The host's noise was about
/// ±20% (ECB 0.14-0.20 in the same runs), so only large effects count:
/// - The second layer fed from the input instead of the first layer's output: no faster. In the two
///   quietest pairs 0.276 and 0.272 against 0.274 and 0.271; the other five pairs scattered with
///   the host (0.270-0.404 against 0.281-0.430). As on the Intel VM, the wait of one layer for the
///   other is not what costs.
/// - Without the second layer's rounds (half the AES work): 0.216-0.343 against 0.281-0.416 (six
///   pairs), far less than half the time saved. The rounds are not what bounds the body.
/// - Steps of 8 pairs (`R = 4`, masks carried by x^8): 0.446-0.505 against 0.281-0.418 (seven
///   pairs), slower in every pair: four registers a layer leave the AES units waiting on latency.
/// - The pairs' blocks read with 32-byte loads instead of 16-byte inserts (wrong output), or the
///   mask products left out: within the noise.
///
/// `llvm-mca -mcpu=znver3` on the step loop of a proxy build (rounds fixed at 10 so that the loop
/// unrolls; it spills a little more than this body, about 125 stack accesses a step against some
/// 100) puts the step at about 162 cycles per 16 pairs (32 blocks), against 40 for the ECB kernel's
/// 16 blocks: not the rounds (80 cycles on the two pipes that take VAESENC) but the vector pipes 1,
/// 4 and 5, busy with the lane inserts and permutes (26 a step, LLVM's merged stores among them),
/// the mask products' VPCLMULQDQ (4 cycles each on pipe 0 in the model) and the spills and reloads.
/// Two leaner bodies, measured by `perf` samples of the body over those of the bench's ECB probe in
/// the same run (8 KiB, batches of 16; this body 0.51-0.62):
/// - a register's two pairs read with two 32-byte loads and two lane permutes and written the same
///   way, the step's masks in a table in memory moved on by the x^16 products (each register's `L*`
///   then an unaligned load, no permute), `A` and the first layer's outputs through memory:
///   0.42-0.64 (four pairs), no clear gain;
/// - the same with the masks doubled as integers into the table (four chains of x^4): twice this
///   body's samples (1990-2036 against 1028-1078, two pairs); the integer work is about 16
///   instructions a mask, some 270 a step.
///
/// On the Intel AVX-512 VM (4 KiB messages, comb engine, TSC cycles/byte; ECB 0.11-0.12):
/// - The body compiled with AVX-512VL (32 ymm registers) ran 0.22 -> 0.28: LLVM merged
///   adjacent 16-byte stores into zmm stores, and while a 512-bit uop is in flight the core
///   shuts port 1's vector unit, where half the ymm VAESENC issue. With the stores kept
///   16 bytes wide (volatile), a software-pipelined body of 16 registers (one half's first
///   round beside the previous half's second, as [`body_ni`]) ran 0.235 against 0.223.
/// - Timing-only ablations: the second layer fed from the input instead of the first's
///   output (no dependency between the layers) ran as fast as the real body, so the wait is
///   not what costs; without the x^16 products 7% faster; one store per register instead of
///   four, no faster. Most likely (no PMU on that VM) the vector uops around the rounds cost,
///   sharing ports 0/1/5 with the VAESENC. 32-byte loads and stores with lane permutes,
///   instead of 16-byte inserts and extracts, were no faster (0.244-0.311 against
///   0.230-0.291, alternated, a noisy host).
/// - So where AVX-512 is, a message of at least 16 pairs runs on zmm ([`body_zmm`], all its
///   pairs): the vector uops around the rounds halve, and the lane shuffles and mask
///   products move to port 5. 4 KiB 0.216-0.218 -> 0.166-0.167, 1456 B 0.283-0.288 ->
///   0.262-0.264 (0.245-0.252 with the narrower step on zmm too), the realistic mix
///   0.428-0.431 -> 0.372-0.377 encrypting and 0.420-0.427 -> 0.384-0.392 decrypting
///   (three alternated pairs). A message too short for a 16-pair step keeps the ymm
///   narrower step: on zmm it ran 128..512-byte messages up to 10% slower.
fn body_wide<const DEC: bool>(
    k: Kernels,
    key: &AesKey,
    io: &IoPtrs<'_>,
    ell: usize,
    l: &mut u128,
    sum: &mut Block,
) -> usize {
    debug_assert!(PAIR * ell <= io.len && io.len <= io.out_cap);
    match k {
        Kernels::Ni(_) => {
            let steps = ell / 8;
            if steps > 0 {
                // SAFETY: the token proves AES-NI and SSSE3; 32·8·steps <= 32·ell <= len <=
                // out_cap (checked by the driver).
                unsafe { body_ni::<DEC>(key, io, steps, l, sum) };
            }
            8 * steps
        }
        Kernels::Vaes256(t) => {
            let steps = ell / 16;
            let first = 16 * steps;
            if steps > 0 && VaesZmmToken::with(t).is_some() && Vclmul512Token::get().is_some() {
                // SAFETY: the tokens prove AVX2, VAES, AES-NI, SSSE3, AVX-512F, AVX-512BW and
                // VPCLMULQDQ; pairs 0..ell lie inside input and output as above.
                unsafe { body_zmm::<DEC>(key, io, ell, l, sum) };
                return ell;
            }
            // SAFETY (all calls): the token proves AVX2, VAES, AES-NI and SSSE3, and
            // `VclmulToken` VPCLMULQDQ; the pairs run are 0..first + 2·regs <= ell, inside
            // input and output as above.
            unsafe {
                // Only a striding call multiplies masks by x^16. Measured on Zen 4 (`comb
                // bench`, comb engine, TSC cycles/byte): 16 KiB messages 0.220-0.223 -> 0.210-
                // 0.213 encrypting, 0.230-0.234 -> 0.217-0.218 decrypting; 1440 bytes about
                // 1.5% faster; the realistic mix within noise (its per-message costs rule).
                if steps > 0 && VclmulToken::get().is_some() {
                    body_vaes_clmul::<8, DEC>(key, io, 0, steps, l, sum);
                } else if steps > 0 {
                    body_vaes::<8, DEC>(key, io, 0, steps, l, sum);
                }
                let regs = (ell - first) / 2;
                if regs > 0 {
                    body_vaes_n::<DEC>(key, io, first, 1, l, sum, regs);
                }
                first + 2 * regs
            }
        }
    }
}

/// [`body_vaes`] in `regs` registers (1 to 8).
///
/// # Safety
/// As [`body_vaes`].
unsafe fn body_vaes_n<const DEC: bool>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    first: usize,
    steps: usize,
    l: &mut u128,
    sum: &mut Block,
    regs: usize,
) {
    macro_rules! by_regs {
        ($($n:literal)*) => {
            match regs {
                $($n => body_vaes::<$n, DEC>(key, io, first, steps, l, sum),)*
                _ => unreachable!("1 to 8 registers"),
            }
        };
    }
    // SAFETY: forwarded from the caller.
    unsafe { by_regs!(1 2 3 4 5 6 7 8) }
}

/// Whole wide steps of the AD's first `m` blocks; returns the blocks done.
fn ad_wide(
    k: Kernels,
    key: &AesKey,
    ad: &IoPtrs<'_>,
    m: usize,
    q: &mut u128,
    asum: &mut Block,
) -> usize {
    debug_assert!(BLOCK * m <= ad.len);
    match k {
        Kernels::Ni(_) => {
            let steps = m / 8;
            if steps > 0 {
                // SAFETY: the token proves AES-NI and SSSE3; 16·8·steps <= 16·m <= len.
                unsafe { ad_ni(key, ad, steps, q, asum) };
            }
            8 * steps
        }
        Kernels::Vaes256(_) => {
            let steps = m / 16;
            if steps > 0 {
                // SAFETY: the token proves AVX2, VAES, AES-NI and SSSE3; bounds as above.
                unsafe { ad_vaes(key, ad, steps, q, asum) };
            }
            16 * steps
        }
    }
}

mod zmm_comb;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_format() {
        let n: Vec<u8> = (1..=12).collect();
        let b = format_nonce(&n, 16).to_be_bytes();
        assert_eq!(b[..4], [0, 0, 0, 1]);
        assert_eq!(b[4..], n[..]);
        let b = format_nonce(&n, 8).to_be_bytes();
        assert_eq!(b[0], 64 << 1);
    }

    #[test]
    fn last_chunk_split() {
        assert_eq!(last_chunk(0), (0, 0));
        assert_eq!(last_chunk(1), (0, 1));
        assert_eq!(last_chunk(32), (0, 32));
        assert_eq!(last_chunk(33), (1, 1));
        assert_eq!(last_chunk(64), (1, 32));
    }

    /// `f` applied to the masks `v` (low lane) and `w` (high lane) as blocks, against the
    /// u128 model `model` on both, for 300 pairs of values from `v0` (top bits set and clear).
    /// `f` runs an AVX2 kernel: the callers check AVX2.
    fn check_both_lanes(f: impl Fn(__m256i) -> __m256i, model: impl Fn(u128) -> u128, v0: u128) {
        let mut v = v0;
        for i in 0..300u32 {
            let w = v.rotate_left(i * 7) ^ u128::from(i) << 113;
            let (lo, hi) = (v.to_be_bytes(), w.to_be_bytes());
            let mut out = [0u8; 32];
            // SAFETY: the callers checked AVX2; 32-byte buffers.
            let x = unsafe { _mm256_loadu2_m128i(hi.as_ptr().cast(), lo.as_ptr().cast()) };
            let y = f(x);
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), y) };
            assert_eq!(out[..16], model(v).to_be_bytes(), "low lane, {v:#x}");
            assert_eq!(out[16..], model(w).to_be_bytes(), "high lane, {w:#x}");
            v = model(v) ^ u128::from(i).rotate_right(i);
        }
    }

    #[test]
    fn dbl_blocks_doubles_both_lanes() {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was checked.
            check_both_lanes(
                |x| unsafe { dbl_blocks(x) },
                dbl,
                0x8123_4567_89ab_cdef_0011_2233_4455_66ff,
            );
        }
    }

    #[test]
    fn times_x16_blocks_is_sixteen_doublings() {
        let x16 = |a: u128| (0..16).fold(a, |a, _| dbl(a));
        if std::is_x86_feature_detected!("avx2") {
            check_both_lanes(
                // SAFETY: AVX2 was checked.
                |x| unsafe { times_x16_blocks(x) },
                x16,
                0xffff_4567_89ab_cdef_0011_2233_4455_66ff,
            );
        }
    }

    #[test]
    fn times_xk_blocks_is_k_doublings() {
        if std::is_x86_feature_detected!("avx2") {
            for k in 0..=56 {
                let xk = |a: u128| (0..k).fold(a, |a, _| dbl(a));
                for v0 in [
                    0xffff_4567_89ab_cdef_0011_2233_4455_66ff,
                    0x0001_8000_89ab_cdef_0011_2233_4455_66ff,
                ] {
                    // SAFETY: AVX2 was checked.
                    check_both_lanes(|x| unsafe { times_xk_blocks(x, k) }, xk, v0);
                }
            }
        }
    }

    #[test]
    fn times_x16_clmul_is_sixteen_doublings() {
        let x16 = |a: u128| (0..16).fold(a, |a, _| dbl(a));
        if VclmulToken::get().is_some() {
            check_both_lanes(
                // SAFETY: VPCLMULQDQ and AVX2 were checked (the token).
                |x| unsafe { times_x16_clmul(x) },
                x16,
                0xffff_4567_89ab_cdef_0011_2233_4455_66ff,
            );
            check_both_lanes(
                // SAFETY: VPCLMULQDQ and AVX2 were checked (the token).
                |x| unsafe { times_x16_clmul(x) },
                x16,
                0x0001_8000_89ab_cdef_0011_2233_4455_66ff,
            );
        }
    }

    /// Both compilations of the wide body give the same bytes, masks and checksum, both
    /// directions, for several strides (the CPU's choice runs in the mode's other tests;
    /// this one also covers the other).
    #[test]
    fn body_vaes_compilations_agree() {
        let (Some(_), Some(_)) = (VaesToken::get(), VclmulToken::get()) else {
            return;
        };
        let key = AesKey::new(&[0x5a; 16]).unwrap();
        for steps in 1..=3usize {
            let len = PAIR * 16 * steps;
            let input: Vec<u8> = (0..len).map(|i| (i * 131 + steps) as u8).collect();
            for dec in [false, true] {
                let mut outs = Vec::new();
                for clmul in [false, true] {
                    let mut out = vec![0u8; len];
                    let io = IoPtrs::copy(&input, &mut out);
                    let mut l = 0xc000_0000_0000_0000_0000_0000_0000_1235u128;
                    let mut sum = [0u8; BLOCK];
                    // SAFETY: VAES, AVX2, AES-NI, SSSE3 and VPCLMULQDQ checked above; 16·steps
                    // pairs are exactly the input and the output.
                    unsafe {
                        match (clmul, dec) {
                            (false, false) => {
                                body_vaes::<8, false>(&key, &io, 0, steps, &mut l, &mut sum)
                            }
                            (false, true) => {
                                body_vaes::<8, true>(&key, &io, 0, steps, &mut l, &mut sum)
                            }
                            (true, false) => {
                                body_vaes_clmul::<8, false>(&key, &io, 0, steps, &mut l, &mut sum)
                            }
                            (true, true) => {
                                body_vaes_clmul::<8, true>(&key, &io, 0, steps, &mut l, &mut sum)
                            }
                        }
                    }
                    outs.push((out, l, sum));
                }
                assert_eq!(outs[0], outs[1], "steps {steps}, dec {dec}");
                let want = (0..16 * steps)
                    .fold(0xc000_0000_0000_0000_0000_0000_0000_1235u128, |a, _| dbl(a));
                assert_eq!(outs[0].1, want, "the mask after the body");
            }
        }
    }

    /// One job's first `ell` pairs of `input` through the zmm body (`zmm`) or through the
    /// xmm path (its 8-pair steps, then the cross-job pool): the output (copying into a
    /// zeroed buffer, or in place), the mask after the pairs and the checksum.
    fn run_pairs<const DEC: bool>(
        zmm: bool,
        ni: NiToken,
        key: &AesKey,
        input: &[u8],
        ell: usize,
        in_place: bool,
        l0: u128,
    ) -> (Vec<u8>, u128, Block) {
        let len = input.len();
        let mut out = if in_place {
            input.to_vec()
        } else {
            vec![0u8; len]
        };
        let io = if in_place {
            IoPtrs::in_place(&mut out, len)
        } else {
            IoPtrs::copy(input, &mut out)
        };
        let (mut l, mut sum) = (l0, [0x3c; BLOCK]);
        if zmm {
            // SAFETY: the caller checked VAES, AVX2, AES-NI, SSSE3, VPCLMULQDQ, AVX-512F and
            // AVX-512BW; pairs 0..ell lie inside input and output.
            unsafe { body_zmm::<DEC>(key, &io, ell, &mut l, &mut sum) };
        } else {
            let k = Kernels::Ni(ni);
            let mut pooled = [0u8; BLOCK];
            let mut sink = |_: usize, b: &Block| pooled = xor(&pooled, b);
            let mut pool = PairPool::new(key, io);
            pairs::<DEC>(k, key, io, ell, &mut l, &mut sum, &mut pool, 0, &mut sink);
            pool.flush::<DEC>(k, &mut sink);
            drop(pool);
            sum = xor(&sum, &pooled);
        }
        (out, l, sum)
    }

    /// The zmm body gives the xmm path's bytes, mask and checksum for every count of pairs
    /// from 16 (one step) to 50 (three steps; narrower steps of one to four registers,
    /// whole and under masks, odd counts), both directions, copying and in place; the bytes
    /// after the pairs stay untouched.
    #[test]
    fn body_zmm_matches_xmm() {
        let (Some(t), Some(ni), Some(_)) =
            (VaesToken::get(), NiToken::get(), Vclmul512Token::get())
        else {
            return;
        };
        if VaesZmmToken::with(t).is_none() {
            return;
        }
        let key = AesKey::new(&[0xa7; 16]).unwrap();
        let l0 = 0x8000_0000_0000_0000_0000_0000_0001_2347u128;
        for ell in 16..=100 {
            let len = PAIR * ell + 5;
            let input = crate::block::test_bytes(ell as u64, len);
            for dec in [false, true] {
                for in_place in [false, true] {
                    let run = |zmm: bool| match dec {
                        false => run_pairs::<false>(zmm, ni, &key, &input, ell, in_place, l0),
                        true => run_pairs::<true>(zmm, ni, &key, &input, ell, in_place, l0),
                    };
                    let (want, got) = (run(false), run(true));
                    let what = format!("ell {ell}, dec {dec}, in place {in_place}");
                    assert_eq!(got, want, "{what}");
                    let hi = PAIR * ell;
                    let untouched = if in_place { &input[hi..] } else { &[0; 5][..] };
                    assert_eq!(got.0[hi..], *untouched, "{what}");
                    assert_ne!(got.0[..hi], input[..hi], "{what}");
                    assert_ne!(got.2, [0x3c; BLOCK], "{what}: the checksum");
                    let mask = (0..ell).fold(l0, |a, _| dbl(a));
                    assert_eq!(got.1, mask, "{what}: the mask after the body");
                }
            }
        }
    }

    /// The sixteen first masks on zmm are `L·x^k`, each in its pair's lane, for masks whose
    /// top bits reduce (all ones) and whose low quadword carries (a bit at 63).
    #[test]
    fn first_masks_zmm_are_the_doublings() {
        if !(std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw"))
        {
            return;
        }
        for l in [
            1u128,
            u128::MAX,
            0x8000_0000_0000_0000_8000_0000_0000_0000,
            0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
        ] {
            // SAFETY: AVX-512F and BW were checked.
            let got = unsafe { first_masks_zmm(l) };
            let mut want = l;
            for k in 0..16 {
                // SAFETY: any 64 bytes are four blocks.
                let block: Block =
                    unsafe { core::mem::transmute::<__m512i, [Block; 4]>(got[k / 4]) }
                        [ZMM_LANE_PAIR[k % 4]];
                assert_eq!(block, want.to_be_bytes(), "L {l:#x}, k {k}");
                want = dbl(want);
            }
        }
    }

    #[test]
    fn mask_multiples() {
        let v = 0x8000_0000_0000_0000_0000_0000_0000_0001u128;
        assert_eq!(mul5(v), dbl(dbl(v)) ^ v);
        assert_eq!(mul7(v), dbl(dbl(v)) ^ dbl(v) ^ v);
        assert_eq!(int(&crate::block::dbl(&v.to_be_bytes())), dbl(v));
    }
}
