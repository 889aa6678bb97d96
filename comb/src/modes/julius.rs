//! Julius-ECB ("regular" Julius, Bahack, CAESAR v1 draft) as its specification writes it.
//!
//! Field: GF(2^128) with `x^128 + x^7 + x^2 + x + 1` in the big-endian bit order of CMAC
//! (byte 15 bit 0 is `x^0`); `δ = E(0)`. The GCM field is the same field with every 128-bit
//! word bit-reversed, so `a·b = rev(rev(a) ⊗ rev(b))` and the Horner chain runs on the
//! cached [`GhashKey`] of `rev(δ)` (aggregated, carry-less multiplication).
//!
//! Encryption. The string `S = 0^15‖01 ‖ N ‖ [|A|]_64 ‖ [|M|]_64 ‖ A‖0* ‖ 0^128 ‖ 0*‖M` (AD
//! zero-padded at the back, the message at the front, `r = ceil(m/16) + 1` blocks from the
//! zero "redundancy" block on). `seed = Σ S_i·δ^(n-1-i)` (Horner), `μ = E(seed)`. The last `r`
//! blocks are masked: `r` even, block `j` gets `μ·δ^j`; `r` odd, block 0 gets `μ`, block 1
//! `μ·δ ^ μ`, block `j ≥ 2` `μ·δ^(j-1)` (the masks sum to zero under the Horner weights when
//! `r ≥ 2`, so the seed is unchanged). Output: ECB of the `r` masked blocks.
//!
//! Decryption. `X = E^-1(C)`; the seed is the Horner value over the header and `X` (`r ≥ 2`;
//! for `r = 1` over the header and a zero block). The message length is not transmitted:
//! `m = 16(r-1) - c`, `c` in `0..16`, and `m` enters the header, so the seed is computed with
//! `m = 0` and each candidate adds `m_c·δ^(n-3)`; all 16 `μ_c = E(seed_c)` are computed (one
//! batched call), the one with `μ_c = X_0` (the redundancy block) is selected in constant
//! time, and the `c` front-padding bytes must be zero. On failure the output is zeroed.
//!
//! Scheduling. No AES call depends on another inside a message: the Horner chain is field
//! multiplications only. Pass 1 hashes every job; `μ` (16 candidates on decryption) for all
//! jobs is one `Kernels::encrypt_many` call; pass 2, per group of jobs, makes the group's mask
//! products side by side ([`MaskTable`]), then masks each job into a scratch buffer and runs
//! the engine's wide ECB kernel (`Kernels::parallel`). The single path is the same code, one
//! job.

use crate::aes::{AesKey, Derived, Kernels};
use crate::block::{dbl_u128, load_short, wipe, xor, Block, IoPtrs, SecretBlocks, BLOCK};
use crate::gf128::bitrev::rev_io;
use crate::gf128::{mul_chains_in_place, Aggregation, GhashKey, MulChain};
use crate::modes::{set_ok, Prepared};
use crate::sched::exec::Path;
use crate::{Error, JobResult, Op};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

/// Blocks per stack window (hashing and ECB decryption).
const WINDOW: usize = 32;

/// Per-key constants: `δ = E(0)` and the GHASH key of `rev(δ)`.
pub(crate) struct JuliusKey {
    delta: u128,
    gh: GhashKey,
}

impl Derived for JuliusKey {
    const SLOT: usize = crate::aes::slot::JULIUS;
    fn derive(key: &AesKey) -> JuliusKey {
        let mut d = key.e_zero;
        let delta = u128::from_be_bytes(d);
        let mut h = delta.reverse_bits().to_be_bytes();
        let gh = GhashKey::new(&h);
        wipe(&mut d);
        wipe(&mut h);
        JuliusKey { delta, gh }
    }
}

impl Drop for JuliusKey {
    fn drop(&mut self) {
        self.delta.zeroize();
    }
}

/// `a·b` in the big-endian field (portable, constant time). Test reference only: the
/// portable product is some hundreds of cycles, and the products decryption needs have one
/// public operand ([`mul_public`]) or are powers of `δ` ([`pow_delta`]).
#[cfg(test)]
fn mul_be(a: u128, b: u128) -> u128 {
    let mut x = a.reverse_bits().to_be_bytes();
    let mut y = b.reverse_bits().to_be_bytes();
    let mut z = crate::gf128::gf_mul(&x, &y);
    let r = u128::from_be_bytes(z).reverse_bits();
    wipe(&mut x);
    wipe(&mut y);
    wipe(&mut z);
    r
}

/// `δ^e` by square-and-multiply with [`mul_be`] (test reference for [`pow_delta`]).
#[cfg(test)]
fn pow_be(delta: u128, mut e: usize) -> u128 {
    let mut acc = 1u128;
    let mut base = delta;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul_be(acc, base);
        }
        base = mul_be(base, base);
        e >>= 1;
    }
    base.zeroize();
    acc
}

/// `d·k` in the big-endian field for a public `k` (a length): Horner over the bits of `k`
/// with doublings, constant time in `d` (the branches follow `k` only).
fn mul_public(d: u128, k: u128) -> u128 {
    let mut acc = 0u128;
    for i in (0..128 - k.leading_zeros()).rev() {
        acc = dbl_u128(acc);
        if (k >> i) & 1 == 1 {
            acc ^= d;
        }
    }
    acc
}

/// `δ^e` (`e` a public length) on the key's GHASH kernel: `rev(δ^e) = rev(1)·H^e` with
/// `H = rev(δ)` ([`GhashKey::mul_h_pow`]: products by `H^8`). (Square-and-multiply with the
/// portable product took a third of decryption's samples on the realistic mix; the GHASH of
/// `e` zero blocks, eight products per reduction, a sixth.)
fn pow_delta(jk: &JuliusKey, e: usize) -> u128 {
    let mut x = jk.gh.mul_h_pow(&1u128.reverse_bits().to_be_bytes(), e);
    let r = u128::from_be_bytes(x).reverse_bits();
    wipe(&mut x);
    r
}

/// Horner evaluation at δ: `Σ b_i·δ^(n-1-i)` = GHASH at `rev(δ)` over all blocks but the
/// last (bit-reversed, a window at a time: [`rev_io`]), plus the last block.
///
/// Blocks go straight into the window; each full window is hashed but for its last block,
/// which moves to the front of the next, so the block that turns out to be the last is
/// still there at [`Horner::finish`]. (Holding the last block apart, in an `Option<Block>`
/// or a block and a flag, copied every block twice: LLVM moves a `[u8; 16]` in two 8-byte
/// halves, and the 16-byte load of the next push waited on those stores, a third of
/// encryption's samples.)
struct Horner<'k> {
    k: Kernels,
    gh: &'k GhashKey,
    state: Block,
    buf: [Block; WINDOW],
    fill: usize,
}

impl<'k> Horner<'k> {
    fn new(k: Kernels, jk: &'k JuliusKey) -> Self {
        Horner {
            k,
            gh: &jk.gh,
            state: [0; BLOCK],
            buf: [[0; BLOCK]; WINDOW],
            fill: 0,
        }
    }

    /// Appends block `b` (big-endian, as stored) to the string.
    fn push(&mut self, b: Block) {
        self.buf[self.fill] = b;
        self.fill += 1;
        if self.fill == WINDOW {
            self.flush();
        }
    }

    /// Hashes the window's blocks but the last (`fill >= 1`), which moves to the front.
    fn flush(&mut self) {
        let n = self.fill - 1;
        let window = self.buf[..n].as_flattened_mut();
        let mut acc = rev_io(self.k, &IoPtrs::in_place(window, BLOCK * n));
        wipe(&mut acc);
        self.gh
            .ghash_blocks(&mut self.state, &self.buf[..n], Aggregation::Eight);
        self.buf[0] = self.buf[n];
        self.fill = 1;
    }

    fn finish(mut self) -> u128 {
        if self.fill == 0 {
            return 0; // nothing pushed
        }
        self.flush();
        u128::from_be_bytes(self.state).reverse_bits() ^ u128::from_be_bytes(self.buf[0])
    }
}

impl Drop for Horner<'_> {
    fn drop(&mut self) {
        wipe(&mut self.state);
        for b in self.buf.iter_mut() {
            wipe(b);
        }
    }
}

/// The header blocks `0^15‖01`, `N`, lengths, zero-padded AD.
fn push_header(h: &mut Horner<'_>, nonce: &[u8], ad: &[u8], mlen: u64) {
    h.push(1u128.to_be_bytes());
    let mut n = [0u8; BLOCK];
    n.copy_from_slice(nonce);
    h.push(n);
    h.push(((u128::from(ad.len() as u64) << 64) | u128::from(mlen)).to_be_bytes());
    for chunk in ad.chunks(BLOCK) {
        let mut b = load_short(chunk);
        h.push(b);
        wipe(&mut b);
    }
}

/// The shape of an `m`-byte message's encryption: `r = ceil(m/16) + 1` output blocks (the
/// redundancy block first), and `pres`, the zero bytes that front-pad `M` to `r - 1` blocks.
fn shape(m: usize) -> (usize, usize) {
    let r = m.div_ceil(BLOCK) + 1;
    (r, (r - 1) * BLOCK - m)
}

/// Block `j` (1..r) of the front-padded message `0^pres ‖ M`.
fn msg_block(io: &IoPtrs<'_>, j: usize, pres: usize) -> Block {
    if j == 1 {
        let mut first = if io.len <= BLOCK {
            io.read_from(0)
        } else {
            io.read_block(0)
        };
        let b = (u128::from_be_bytes(first) >> (8 * pres)).to_be_bytes();
        wipe(&mut first);
        b
    } else {
        io.read_block(BLOCK * (j - 1) - pres)
    }
}

/// The mask products `P_k = μ·δ^k` (`1 <= k < r`) of every job of a call, made up front
/// into one buffer: job `i`'s `r_i - 1` products at `offsets[i]..`, as big-endian blocks.
///
/// Each job's products are one chain of products by `δ` in the GCM field, `x ← x·H`, over
/// zero blocks; the chains of all jobs run side by side ([`mul_chains_in_place`], longest
/// first so that the chains stepping together have like lengths), so that the multiplier
/// overlaps products of different jobs, where one job's chain alone waits out each product's
/// latency. Then one bit reversal over the whole buffer ([`rev_io`]) maps them back to the
/// big-endian field.
///
/// Made one per mask, each product had a call and two bit reversals on the chain's path;
/// one chain per job ([`GhashKey::mul_chain`]) was then still a quarter of Julius's
/// encryption samples on the realistic mix, the chain's latency.
struct MaskTable {
    pows: SecretBlocks,
    /// Job `i`'s products are `pows[offsets[i]..offsets[i + 1]]`; empty for one job (all).
    offsets: Vec<usize>,
}

impl MaskTable {
    /// The products of `n` jobs, job `i`'s key, `μ` and `r` being `job(i)`.
    fn new<'j>(k: Kernels, n: usize, job: impl Fn(usize) -> (&'j JuliusKey, u128, usize)) -> Self {
        let count = |i: usize| job(i).2.saturating_sub(1);
        // Job i's region is pows[offsets[i]..offsets[i + 1]]; one job needs none (all).
        let mut offsets = Vec::new();
        let total = if n == 1 {
            count(0)
        } else {
            offsets.reserve(n + 1);
            let mut t = 0;
            for i in 0..n {
                offsets.push(t);
                t += count(i);
            }
            offsets.push(t);
            t
        };
        let mut pows = SecretBlocks(vec![[0; BLOCK]; total]);
        if n == 1 {
            // One job (the single path): its chain on the one-chain kernel, without the
            // bookkeeping and allocations of several (measured 6-11% of a single-path call
            // on the mix).
            let (jk, mu, _) = job(0);
            let mut x = mu.reverse_bits().to_be_bytes();
            let io = IoPtrs::in_place(pows.as_flattened_mut(), BLOCK * total);
            jk.gh.mul_chain(&mut x, &io, 0, total);
            wipe(&mut x);
        } else {
            // Every job's region as a chain, then the chains longest first.
            let mut chains: Vec<MulChain<'_>> = Vec::with_capacity(n);
            let mut rest: &mut [Block] = &mut pows;
            for (i, w) in offsets.windows(2).enumerate() {
                let (blocks, tail) = rest.split_at_mut(w[1] - w[0]);
                rest = tail;
                let (jk, mu, _) = job(i);
                chains.push(MulChain {
                    key: &jk.gh,
                    x: mu.reverse_bits().to_be_bytes(),
                    blocks,
                });
            }
            chains.sort_unstable_by_key(|c| core::cmp::Reverse(c.blocks.len()));
            mul_chains_in_place(&mut chains);
            for c in chains.iter_mut() {
                wipe(&mut c.x);
            }
        }
        let all = pows.as_flattened_mut();
        let len = all.len();
        let mut acc = rev_io(k, &IoPtrs::in_place(all, len));
        wipe(&mut acc);
        MaskTable { pows, offsets }
    }

    /// Job `i`'s masks, for blocks `1..r` in order.
    fn masks(&self, i: usize, mu: u128, r: usize) -> Masks<'_> {
        Masks {
            mu,
            pows: match self.offsets.get(i..i + 2) {
                Some(&[a, b]) => &self.pows[a..b],
                _ => &self.pows, // one job
            },
            odd: r % 2 == 1,
            j: 1,
        }
    }
}

/// The masks of blocks `1..r` of one job in order, given `μ` and the products `P_k` (see the
/// module notes and [`MaskTable`]).
struct Masks<'b> {
    mu: u128,
    /// `pows[k - 1] = P_k` as a big-endian block.
    pows: &'b [Block],
    odd: bool,
    j: usize,
}

impl Masks<'_> {
    /// The next block's mask, as a big-endian block (kept as bytes: the masks are only
    /// xored into blocks).
    fn next_mask(&mut self) -> Block {
        // Even r: masks P_1 .. P_(r-1); odd r: P_1 ^ μ, then P_1 .. P_(r-2).
        let m = match (self.odd, self.j) {
            (false, j) => self.pows[j - 1],
            (true, 1) => (u128::from_be_bytes(self.pows[0]) ^ self.mu).to_be_bytes(),
            (true, j) => self.pows[j - 2],
        };
        self.j += 1;
        m
    }
}

impl Drop for Masks<'_> {
    fn drop(&mut self) {
        self.mu.zeroize();
    }
}

pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    _path: Path,
) {
    // Both paths are the same code: `modes::run` hands the single path one job at a time, and
    // nothing inside a message needs the comb scheduler (no AES chain).
    match op {
        Op::Encrypt => encrypt(k, jobs, results),
        Op::Decrypt => decrypt(k, jobs, results),
    }
}

fn encrypt(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult]) {
    // Pass 1: the seeds.
    let mut seeds: Vec<Block> = Vec::with_capacity(jobs.len());
    let mut keys: Vec<&AesKey> = Vec::with_capacity(jobs.len());
    let mut max_r = 0;
    for job in jobs.iter() {
        let key = job.lane.key;
        let jk = key.derived::<JuliusKey>();
        let io = &job.lane.io;
        let m = io.len;
        let (r, pres) = shape(m);
        max_r = max_r.max(r);
        let mut h = Horner::new(k, jk);
        push_header(&mut h, job.nonce, job.ad, m as u64);
        h.push([0; BLOCK]);
        for j in 1..r {
            h.push(msg_block(io, j, pres));
        }
        seeds.push(h.finish().to_be_bytes());
        keys.push(key);
    }
    // μ for every job: one batched call.
    k.encrypt_many(&mut seeds, &keys);
    // Pass 2, per group of jobs: the group's mask products, then per job mask, wide ECB,
    // write.
    let mut scratch: Vec<Block> = vec![[0; BLOCK]; max_r];
    for (jobs, seeds) in jobs.chunks_mut(TABLE_JOBS).zip(seeds.chunks(TABLE_JOBS)) {
        let table = MaskTable::new(k, jobs.len(), |i| {
            let job = &jobs[i];
            let jk = job.lane.key.derived::<JuliusKey>();
            (jk, u128::from_be_bytes(seeds[i]), shape(job.lane.io.len).0)
        });
        for (i, (job, mu)) in jobs.iter_mut().zip(seeds.iter()).enumerate() {
            let key = job.lane.key;
            let io = &job.lane.io;
            let m = io.len;
            let (r, pres) = shape(m);
            let mu = u128::from_be_bytes(*mu);
            let s = &mut scratch[..r];
            s[0] = mu.to_be_bytes();
            let mut masks = table.masks(i, mu, r);
            for (j, b) in s.iter_mut().enumerate().skip(1) {
                *b = xor(&msg_block(io, j, pres), &masks.next_mask());
            }
            drop(masks);
            k.ecb_in_place(key, s, false);
            for (j, b) in s.iter().enumerate() {
                io.write_block(BLOCK * j, b);
            }
            set_ok(&mut results[job.index], r * BLOCK);
        }
    }
    for b in scratch.iter_mut().chain(seeds.iter_mut()) {
        wipe(b);
    }
}

/// Jobs whose mask products are made together ([`MaskTable`]): enough chains to fill the
/// multiplier, few enough that their products (about 1.5 KiB per packet of the realistic
/// mix) stay in L1 until the jobs use them.
const TABLE_JOBS: usize = 16;

/// Candidates per decryption (front-padding lengths 0..16).
const CANDS: usize = BLOCK;

fn decrypt(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult]) {
    // Pass 1: X = E^-1(C) (X_0 into `chain`, X_1.. into the output), the m = 0 seed, and the
    // candidate seeds.
    let mut cands: Vec<Block> = Vec::with_capacity(jobs.len() * CANDS);
    let mut keys: Vec<&AesKey> = Vec::with_capacity(jobs.len() * CANDS);
    for job in jobs.iter_mut() {
        let key = job.lane.key;
        let jk = key.derived::<JuliusKey>();
        let r = job.lane.io.len / BLOCK;
        let mut win = [[0u8; BLOCK]; WINDOW];
        let mut h = Horner::new(k, jk);
        push_header(&mut h, job.nonce, job.ad, 0);
        let mut a = 0;
        while a < r {
            let n = (r - a).min(WINDOW);
            let io = &job.lane.io;
            for (i, b) in win[..n].iter_mut().enumerate() {
                *b = io.read_block(BLOCK * (a + i));
            }
            k.ecb_in_place(key, &mut win[..n], true);
            for (i, b) in win[..n].iter().enumerate() {
                let j = a + i;
                if j == 0 {
                    job.lane.chain = *b;
                    // r = 1: the seed is over the zero redundancy block itself.
                    h.push(if r == 1 { [0; BLOCK] } else { *b });
                } else {
                    io.write_block(BLOCK * (j - 1), b);
                    h.push(*b);
                }
            }
            a += n;
        }
        for b in win.iter_mut() {
            wipe(b);
        }
        let mut seed0 = h.finish();
        if r == 1 {
            cands.push(seed0.to_be_bytes());
            keys.push(key);
        } else {
            // seed_c = seed0 ^ m_c·δ^(n-3), n - 3 = AD blocks + r, m_c = 16(r-1) - c.
            let e = job.ad.len().div_ceil(BLOCK) + r;
            let mut d = pow_delta(jk, e);
            let base = ((r - 1) * BLOCK) as u128;
            // m_c = (base - 16) | (16 - c) for c >= 1: the low part from d·1, d·x, d·x^2, d·x^3.
            let mut hi = mul_public(d, base - BLOCK as u128);
            let mut top = mul_public(d, base);
            let mut p = [0u128; 4];
            p[0] = d;
            for i in 1..4 {
                p[i] = dbl_u128(p[i - 1]);
            }
            for c in 0..CANDS {
                let s = if c == 0 {
                    top
                } else {
                    let v = CANDS - c;
                    let mut lo = 0u128;
                    for (i, pi) in p.iter().enumerate() {
                        lo ^= pi & 0u128.wrapping_sub(((v >> i) & 1) as u128);
                    }
                    hi ^ lo
                };
                cands.push((seed0 ^ s).to_be_bytes());
                keys.push(key);
            }
            hi.zeroize();
            top.zeroize();
            d.zeroize();
            p.zeroize();
        }
        seed0.zeroize();
    }
    // All candidates μ_c of all jobs: one batched call.
    k.encrypt_many(&mut cands, &keys);
    // Pass 2: select each job's μ among its candidates (in constant time), ...
    let mut at = 0;
    let mut picks: Vec<(&JuliusKey, u128, usize)> = Vec::with_capacity(jobs.len());
    let mut pads: Vec<(u64, Choice)> = Vec::with_capacity(jobs.len());
    for job in jobs.iter() {
        let r = job.lane.io.len / BLOCK;
        let x0 = u128::from_be_bytes(job.lane.chain);
        let nc = if r == 1 { 1 } else { CANDS };
        let mut mu = 0u128;
        let mut pad = 0u64;
        let mut found = Choice::from(0);
        for (c, mc) in cands[at..at + nc].iter().enumerate() {
            let mc = u128::from_be_bytes(*mc);
            let eq = mc.ct_eq(&x0);
            mu = u128::conditional_select(&mu, &mc, eq);
            pad = u64::conditional_select(&pad, &(c as u64), eq);
            found |= eq;
        }
        at += nc;
        picks.push((job.lane.key.derived::<JuliusKey>(), mu, r));
        pads.push((pad, found));
        mu.zeroize();
    }
    // ... per group of jobs, make the group's masks, then check and unmask.
    for ((jobs, picks), pads) in jobs
        .chunks_mut(TABLE_JOBS)
        .zip(picks.chunks(TABLE_JOBS))
        .zip(pads.chunks(TABLE_JOBS))
    {
        let table = MaskTable::new(k, picks.len(), |i| picks[i]);
        for (i, job) in jobs.iter_mut().enumerate() {
            let len = job.lane.io.len;
            let (_, mut mu, r) = picks[i];
            let (pad, found) = pads[i];
            let mut ok = found;
            let mut masks = table.masks(i, mu, r);
            let out = job.lane.io.output(len - BLOCK);
            if r >= 2 {
                // The first `pad` bytes of block 1 must be zero.
                let mut m1 = u128::from_be_bytes(masks.next_mask());
                let mut b1 = [0u8; BLOCK];
                b1.copy_from_slice(&out[..BLOCK]);
                let mut p1 = u128::from_be_bytes(b1) ^ m1;
                // Bytes [0, pad): the top 8·pad bits (none when pad = 0).
                let front = !(u128::MAX >> (8 * pad as u32));
                ok &= (p1 & front).ct_eq(&0);
                if bool::from(ok) {
                    out[..BLOCK].copy_from_slice(&p1.to_be_bytes());
                }
                m1.zeroize();
                p1.zeroize();
                wipe(&mut b1);
            }
            if bool::from(ok) {
                let pad = pad as usize;
                for j in 2..r {
                    let o = BLOCK * (j - 1);
                    let mut b = [0u8; BLOCK];
                    b.copy_from_slice(&out[o..o + BLOCK]);
                    out[o..o + BLOCK].copy_from_slice(&xor(&b, &masks.next_mask()));
                    wipe(&mut b);
                }
                let m = (r - 1) * BLOCK - pad;
                out.copy_within(pad.., 0);
                out[m..].zeroize();
                set_ok(&mut results[job.index], m);
            } else {
                drop(masks);
                let io = &job.lane.io;
                io.zero_output(io.len);
                results[job.index] = Err(Error::AuthenticationFailed);
            }
            mu.zeroize();
            wipe(&mut job.lane.chain);
        }
    }
    for (_, mu, _) in picks.iter_mut() {
        mu.zeroize();
    }
    for b in cands.iter_mut() {
        wipe(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::test_bytes;

    /// The reference's `mul_by_delta` with its bit test corrected (`delta[i] & power`): bits
    /// of `b` from byte 15 bit 0 up, `a` doubled (big-endian, 0x87) each step. Test only.
    fn mul_ref(a: u128, b: u128) -> u128 {
        let mut z = 0;
        let mut t = a;
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                z ^= t;
            }
            t = u128::from_be_bytes(crate::block::dbl(&t.to_be_bytes()));
        }
        z
    }

    fn word(seed: u64) -> u128 {
        let mut b = [0u8; BLOCK];
        b.copy_from_slice(&test_bytes(seed, BLOCK));
        u128::from_be_bytes(b)
    }

    #[test]
    fn field_products_match_the_reference() {
        let key = AesKey::new(&test_bytes(1, 16)).unwrap();
        let jk = key.derived::<JuliusKey>();
        let mut z = [0u8; BLOCK];
        key.encrypt_block(&mut z);
        assert_eq!(jk.delta, u128::from_be_bytes(z));
        for s in 0..40 {
            let (a, b) = (word(2 * s + 7), word(2 * s + 8));
            assert_eq!(mul_be(a, b), mul_ref(a, b));
        }
        assert_eq!(mul_be(word(3), 2), mul_ref(word(3), 2));
        let d = jk.delta;
        let mut p = 1;
        for e in 0..70 {
            assert_eq!(pow_be(d, e), p, "e = {e}");
            assert_eq!(pow_delta(jk, e), p, "e = {e}");
            p = mul_ref(p, d);
        }
        // Products by public lengths: small, sparse, and every bit set.
        for (s, k) in [0u128, 1, 2, 3, 16, 1440, 1455, (1 << 40) + 5, u128::MAX]
            .into_iter()
            .enumerate()
        {
            let a = word(50 + s as u64);
            assert_eq!(mul_public(a, k), mul_ref(a, k), "k = {k}");
        }
    }

    /// The masks of blocks `1..r` against products made one at a time by the reference
    /// multiplication: `μ·δ^j` for even `r`; `μ·δ ⊕ μ`, then `μ·δ^(j-1)`, for odd `r`. On
    /// every backend: every `r` up to 70 (and some again) in one table, jobs of two keys
    /// interleaved, in an order that is not by length (the chains run longest first); and
    /// each `r` alone, as the single path makes them.
    #[test]
    fn masks_match_naive_products() {
        let keys = [
            AesKey::new(&test_bytes(3, 16)).unwrap(),
            AesKey::new(&test_bytes(4, 16)).unwrap(),
        ];
        let rs: Vec<usize> = (1..=70)
            .rev()
            .step_by(3)
            .chain(1..=70)
            .chain([33, 2, 1])
            .collect();
        let specs: Vec<(&JuliusKey, u128, usize)> = rs
            .iter()
            .enumerate()
            .map(|(i, &r)| (keys[i % 2].derived::<JuliusKey>(), word(300 + i as u64), r))
            .collect();
        let check = |table: &MaskTable, i: usize, (jk, mu, r): (&JuliusKey, u128, usize)| {
            let mut masks = table.masks(i, mu, r);
            let mut t = mu;
            for j in 1..r {
                let want = if r % 2 == 0 {
                    t = mul_ref(t, jk.delta);
                    t
                } else if j == 1 {
                    t = mul_ref(t, jk.delta);
                    t ^ mu
                } else {
                    let m = t;
                    t = mul_ref(t, jk.delta);
                    m
                };
                let got = u128::from_be_bytes(masks.next_mask());
                assert_eq!(got, want, "job {i}: r = {r}, j = {j}");
            }
        };
        for b in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(b).unwrap();
            let table = MaskTable::new(k, specs.len(), |i| specs[i]);
            for (i, &spec) in specs.iter().enumerate() {
                check(&table, i, spec);
                check(&MaskTable::new(k, 1, |_| spec), 0, spec);
            }
        }
    }

    /// Every backend (the windows' bit reversal runs on its kernels).
    #[test]
    fn horner_matches_naive_evaluation() {
        let key = AesKey::new(&test_bytes(2, 16)).unwrap();
        let jk = key.derived::<JuliusKey>();
        for be in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(be).unwrap();
            for n in [1usize, 2, 3, 31, 32, 33, 34, 64, 65, 70] {
                let blocks: Vec<u128> = (0..n as u64).map(|i| word(100 + i)).collect();
                let mut h = Horner::new(k, jk);
                let mut naive = 0u128;
                for &b in &blocks {
                    h.push(b.to_be_bytes());
                    naive = mul_ref(naive, jk.delta) ^ b;
                }
                assert_eq!(h.finish(), naive, "{be:?} n = {n}");
            }
        }
    }
}
