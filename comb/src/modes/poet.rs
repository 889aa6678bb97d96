//! POET (Abed, Fluhrer, Forler, List, Lucks, McGrew, Wenzel; FSE 2014), the two AES-128
//! instances of the CAESAR submission, 16-byte nonce, 16-byte tag:
//!
//! * `aes128-poet` — POET v2, the hash `F` a full AES-128 encryption under a derived key
//!   (SUPERCOP `aes128poetv2aes128`). This file.
//! * `aes128-poet-gf` — POET v1, `F` a multiplication in GF(2^128) by derived field elements
//!   (SUPERCOP `aes128poetv1gf128mul`, 2014-05-25). Its own parts are in `poet_gf.rs`;
//!   everything else is the shared code here, parameterised by `const GF: bool`.
//!
//! # The construction (both versions)
//!
//! Keys: `E_key(i)` is the user key encrypting the block `0^120 ‖ i`. `K = E_key(0)` keys the
//! block cipher `E_K` of the middle layer, the header hash and the length block;
//! `L = E_key(1)` is the header's mask key; then v2: `K_F = E_key(2)` keys `F` (one AES key
//! for both chains); v1: `L_t = E_key(2)`, `L_b = E_key(3)` (`F_top(x) = x·L_t`,
//! `F_bot(y) = y·L_b`, GCM bit order) and the tag mask `t_m = E_key(4)`. They are derived once
//! per key and cached with it ([`PoetKeys`], key slots `POET` / `POET_GF`).
//!
//! Header (`H = AD ‖ nonce`), PMAC-like with masks `m_i = x^i·L` (doubling in the GCM bit
//! order): `S = ⊕ E_K(B_i ⊕ m_i)` over the header's body blocks, `τ = E_K(S ⊕ Z)`. v2's body
//! is a zero parameter block, the whole blocks of `H` and `H`'s 10*-padded rest (always, even
//! empty), `Z = 0`; v1's body is every block of `H` but the last, and `Z` is that last block
//! (whole, or 10*-padded) xored with the mask `3·m` (whole) or `5·m` (padded).
//!
//! Message: top chain `x_0 = τ`, bottom chain `y_0 = τ` (v2: `τ ⊕ 0^120‖01`). Per block
//! `x_i = F_top(x_{i-1}) ⊕ M_i`, `Y_i = E_K(x_i)`, `C_i = Y_i ⊕ F_bot(y_{i-1})`, `y_i = Y_i`.
//! The last block (`l` = 1..=16 bytes; 0 for an empty message) is `M_l ‖ τ[..16-l]` xored with
//! `s = E_K(le64(8·len) ‖ 0^64)`, and its output xored with `s` again; the first `l` bytes are
//! the last ciphertext bytes, the other `16 - l` the head of the tag (tag splitting). One more
//! block through both chains with input `τ` (v1: `τ ⊕ t_m`), output xored with `τ` (v1:
//! `t_m`), gives the tag's last `l` bytes. Decryption runs the bottom chain forward from the
//! ciphertext and `E_K^{-1}` in the middle; the tag's head must decrypt to `τ[..16-l]` and its
//! tail must match: both are checked together in constant time.
//!
//! # How it runs
//!
//! Over the whole blocks before the last one, each direction is three passes, which is where
//! the structure shows: only *one* chain is sequential per direction.
//!
//! * **A — the chain** (encryption: the top chain `x_i = F_top(x_{i-1}) ⊕ M_i`; decryption:
//!   the bottom chain `y_i = F_bot(y_{i-1}) ⊕ C_i`), written to the output buffer. With
//!   `F` = AES this is exactly CFB encryption under `K_F` with IV `x_0` (resp. `y_0`): the
//!   comb scheduler ([`run_chain`] with CFB's chain rule) interleaves `P` messages. With `F` a
//!   multiplication it is a Horner chain without any AES call (`poet_gf.rs`).
//! * **B — the middle layer** `E_K` (resp. `E_K^{-1}`), in place over the output: independent
//!   blocks, the wide ECB kernel ([`Kernels::parallel`]).
//! * **C — the other hash** `out_i = in_i ⊕ F(in_{i-1})` in place: with `F` = AES that is
//!   CFB *decryption* under `K_F` (wide kernel); with multiplications, independent products.
//!
//! Encryption runs B and C as one pass per job: with `F` = AES one call
//! ([`Kernels::ecb_then_cfb_decrypt`]) does both layers of a step in registers, one read and
//! one write of the message instead of two, and one call's setup instead of two (which is
//! what a 40-byte packet mostly pays for). Decryption keeps them apart: C comes after the tag
//! check.
//!
//! The last block and the tag block are a few dependent calls per message; they run batched
//! across all jobs, up to two blocks per job per cipher call ([`Kernels::encrypt_many`]), as
//! does the header hash (all body blocks of all jobs) and `τ`, `s`. Decryption verifies after
//! passes A and B, which is all the tag depends on, and only then runs pass C, which is what
//! makes the plaintext: a forged message never has its plaintext computed. Its output (the
//! intermediate chain values of passes A and B) is zeroed and the job gets
//! [`Error::AuthenticationFailed`].
//!
//! The single path runs the same code with one job per call, except that v2's passes over
//! the whole blocks are one fused pass per message on x86 (`whole_blocks_fused`): one
//! message's chain leaves the AES unit idle for most of each call's latency, and the other
//! layers' calls fill it.
//! Secrets (`τ`, `s`, chain values, the last block's intermediate values) are wiped.

use crate::aes::{slot, AesKey, ChainLane, Derived, Kernels, Lanes, Parallel};
use crate::block::{
    merge, shift_to_back, shift_to_front, splice, tag_matches, wipe, xor, xor_into, Block, IoPtrs,
    BLOCK,
};
use crate::gf128::GhashKey;
use crate::modes::cfb::CfbEncrypt;
use crate::modes::poet_gf::{self, GfHash, GfLane};
use crate::modes::{set_ok, Prepared, TagIo};
use crate::sched::exec::{run_chain, Path};
use crate::{Error, JobResult, Op};

/// `aes128-poet`: POET v2 with the full AES-128 hash.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    run_poet::<false>(k, jobs, results, op, path);
}

// ---------------------------------------------------------------------------------------
// Keys

/// The universal hash `F` of the two chains.
// One per derived key, kept in the key's slot: the variants' sizes (v1's two GHASH keys carry
// the zmm backend's sixteen powers each) cost memory once per key, not per job.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Hash {
    /// v2: AES-128 under `K_F = E_key(2)`, both chains.
    Aes(AesKey),
    /// v1: multiplication by `L_t` (top) and `L_b` (bottom).
    Gf(GfHash),
}

/// Which chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Top,
    Bot,
}

/// `F` of one chain.
#[derive(Clone, Copy)]
enum F<'k> {
    Aes(&'k AesKey),
    Mul(&'k GhashKey),
}

impl Hash {
    fn side(&self, side: Side) -> F<'_> {
        match self {
            Hash::Aes(a) => F::Aes(a),
            Hash::Gf(g) => F::Mul(g.side(side)),
        }
    }
}

/// What POET derives from the user key (see the module docs), cached with the key. `GF`
/// selects the version: v2 (`false`, slot `POET`) or v1 with the field hash (`true`, slot
/// `POET_GF`). The AES keys and the GHASH keys wipe themselves; `Drop` wipes the blocks.
pub(crate) struct PoetKeys<const GF: bool> {
    /// `K = E_key(0)`: the middle layer, the header hash, the length block, the tag block.
    k: AesKey,
    /// `L = E_key(1)`: the header masks.
    l: Block,
    hash: Hash,
    /// v1's tag mask `t_m = E_key(4)`; zero for v2.
    tm: Block,
    /// Where every header sum starts: v2 `E_K(L)`, its zero parameter block's term (the
    /// same for every message under this key); zero for v1, which has no parameter block.
    s0: Block,
}

/// A derived 16-byte AES key. [`AesKey::new`] fails only for a bad length (not 16) or without
/// AES-NI, and the user key that derived it already proved AES-NI.
fn derived_aes_key(bytes: &Block) -> AesKey {
    match AesKey::new(bytes) {
        Ok(k) => k,
        Err(_) => unreachable!("a 16-byte key on a CPU that expanded the user key"),
    }
}

impl<const GF: bool> Derived for PoetKeys<GF> {
    const SLOT: usize = if GF { slot::POET_GF } else { slot::POET };

    fn derive(key: &AesKey) -> Self {
        // E_key(0^120 ‖ i): v2 needs i = 0..=2, v1 i = 0..=4.
        let n = if GF { 5 } else { 3 };
        let mut c = [[0u8; BLOCK]; 5];
        for (i, b) in c.iter_mut().enumerate().take(n) {
            b[BLOCK - 1] = i as u8;
            key.encrypt_block(b);
        }
        let hash = if GF {
            Hash::Gf(GfHash::new(&c[2], &c[3]))
        } else {
            Hash::Aes(derived_aes_key(&c[2]))
        };
        let k = derived_aes_key(&c[0]);
        let mut s0 = [0u8; BLOCK];
        if !GF {
            // The parameter block is zero, so its masked input is L itself.
            s0 = c[1];
            k.encrypt_block(&mut s0);
        }
        let keys = PoetKeys {
            k,
            l: c[1],
            hash,
            tm: if GF { c[4] } else { [0; BLOCK] },
            s0,
        };
        c.iter_mut().for_each(wipe);
        keys
    }
}

impl<const GF: bool> Drop for PoetKeys<GF> {
    fn drop(&mut self) {
        wipe(&mut self.l);
        wipe(&mut self.tm);
        wipe(&mut self.s0);
    }
}

// ---------------------------------------------------------------------------------------
// Small block helpers

/// `x·b` in GF(2^128) with the GCM bit order (byte 0's most significant bit is the constant
/// term; `x^128 = 1 + x + x^2 + x^7`, the `0xE1` byte), the doubling of both versions' header
/// masks. Constant time: the reduction is a mask.
pub(crate) fn xtime(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    let carry = 0u128.wrapping_sub(v & 1); // all ones iff the x^127 coefficient was set
    ((v >> 1) ^ (carry & (0xE1u128 << 120))).to_be_bytes()
}

/// The header `ad ‖ nonce` bytes `[off, off + n)` (n <= 16) at the start of a zeroed block.
pub(crate) fn header_block(ad: &[u8], nonce: &[u8], off: usize, n: usize) -> Block {
    // A whole block inside the AD or inside the nonce is one load: a variable-length copy
    // is a `memcpy` call, and reading its byte stores back as words stalls store forwarding.
    if n == BLOCK {
        let whole = match off.checked_sub(ad.len()) {
            None => ad.get(off..).and_then(|s| s.first_chunk::<BLOCK>()),
            Some(at) => nonce.get(at..).and_then(|s| s.first_chunk::<BLOCK>()),
        };
        if let Some(b) = whole {
            return *b;
        }
    }
    let mut b = [0u8; BLOCK];
    let from_ad = ad.len().saturating_sub(off).min(n);
    if from_ad > 0 {
        b[..from_ad].copy_from_slice(&ad[off..off + from_ad]);
    }
    if from_ad < n {
        let at = off + from_ad - ad.len();
        b[from_ad..n].copy_from_slice(&nonce[at..at + (n - from_ad)]);
    }
    b
}

/// Blocks of a message before its last one, and the last one's length (0 only when empty).
fn split(len: usize) -> (usize, usize) {
    let full = len.saturating_sub(1) / BLOCK;
    (full, len - BLOCK * full)
}

// ---------------------------------------------------------------------------------------
// Per-job state

/// What a job carries between the phases; wiped on drop.
struct St {
    /// The header sum `S` until the header's last call, then `τ`.
    tau: Block,
    /// The length block `E_K(le64(8·len))` (accumulated from zero).
    s: Block,
    /// The chain pass's side after the whole blocks (encryption: top `x`; decryption: bottom
    /// `y`), and the other side (encryption: `Y` of the last whole block; decryption: `X`).
    ca: Block,
    cb: Block,
    /// Decryption: the last plaintext block (before it is known to be authentic).
    p: Block,
    /// Whole blocks before the last, and the last block's length.
    full: usize,
    last: usize,
    ok: bool,
}

impl Drop for St {
    fn drop(&mut self) {
        wipe(&mut self.tau);
        wipe(&mut self.s);
        wipe(&mut self.ca);
        wipe(&mut self.cb);
        wipe(&mut self.p);
    }
}

/// The initial value of a chain: `τ` on top; the bottom is `τ ⊕ 0^120‖01` in v2, `τ` in v1.
fn chain_init<const GF: bool>(tau: &Block, side: Side) -> Block {
    let mut b = *tau;
    if !GF && side == Side::Bot {
        b[BLOCK - 1] ^= 1;
    }
    b
}

// ---------------------------------------------------------------------------------------
// The driver

pub(crate) fn run_poet<const GF: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    if jobs.is_empty() {
        return;
    }
    let keys: Vec<&PoetKeys<GF>> = jobs
        .iter()
        .map(|j| j.lane.key.derived::<PoetKeys<GF>>())
        .collect();
    let mut sts: Vec<St> = jobs
        .iter()
        .map(|j| {
            let (full, last) = split(j.lane.io.len);
            St {
                tau: [0; BLOCK],
                s: [0; BLOCK],
                ca: [0; BLOCK],
                cb: [0; BLOCK],
                p: [0; BLOCK],
                full,
                last,
                ok: false,
            }
        })
        .collect();
    header::<GF>(k, jobs, &keys, &mut sts);
    // Encryption chains the top and hashes the bottom; decryption the other way round.
    let (chain_side, other_side) = match op {
        Op::Encrypt => (Side::Top, Side::Bot),
        Op::Decrypt => (Side::Bot, Side::Top),
    };
    let sides = (chain_side, other_side);
    let fused = whole_blocks_fused::<GF>(k, jobs, &keys, &mut sts, op, sides, path);
    if !fused {
        pass_chain::<GF>(k, jobs, &keys, &mut sts, chain_side, path);
    }
    match op {
        Op::Encrypt => {
            // The middle layer and the bottom hash in one pass per job (the tail needs only
            // the last Y), then the last and tag blocks.
            if !fused {
                pass_middle_bottom::<GF>(k, jobs, &keys, &mut sts);
            }
            for (lo, chunk) in jobs.chunks_mut(CH).enumerate() {
                let at = lo * CH;
                tail_encrypt::<GF>(k, chunk, &keys[at..at + chunk.len()], &sts[at..]);
            }
            for job in jobs.iter() {
                set_ok(&mut results[job.index], job.lane.io.len);
            }
        }
        Op::Decrypt => {
            if !fused {
                pass_middle::<GF>(k, jobs, &keys, &mut sts);
            }
            for (lo, chunk) in jobs.chunks(CH).enumerate() {
                let at = lo * CH;
                tail_decrypt::<GF>(k, chunk, &keys[at..at + chunk.len()], &mut sts[at..]);
            }
            for ((job, key), st) in jobs.iter().zip(&keys).zip(&sts) {
                let io = job.lane.io;
                if st.ok {
                    pass_other::<GF>(k, job, key, st, other_side);
                    io.write_tail(BLOCK * st.full, &st.p);
                    set_ok(&mut results[job.index], io.len);
                } else {
                    io.zero_output(io.len);
                    results[job.index] = Err(Error::AuthenticationFailed);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Header hash, length block

/// Blocks per batched header call.
const HB: usize = 64;

/// Header body blocks waiting for one batched `E_K` call; each result is xored into a job's
/// sum (`to = 2·job`) or length block (`to = 2·job + 1`).
struct Pending<'k> {
    blocks: [Block; HB],
    keys: [&'k AesKey; HB],
    to: [usize; HB],
    n: usize,
}

impl<'k> Pending<'k> {
    fn push(&mut self, k: Kernels, sts: &mut [St], b: Block, key: &'k AesKey, to: usize) {
        self.blocks[self.n] = b;
        self.keys[self.n] = key;
        self.to[self.n] = to;
        self.n += 1;
        if self.n == HB {
            self.flush(k, sts);
        }
    }

    fn flush(&mut self, k: Kernels, sts: &mut [St]) {
        let n = self.n;
        k.encrypt_many(&mut self.blocks[..n], &self.keys[..n]);
        for (b, &to) in self.blocks[..n].iter_mut().zip(&self.to[..n]) {
            let st = &mut sts[to / 2];
            xor_into(if to % 2 == 0 { &mut st.tau } else { &mut st.s }, b);
            wipe(b);
        }
        self.n = 0;
    }
}

/// `τ` and `s` of every job: all header body blocks and length blocks in batched calls, then
/// `τ = E_K(S ⊕ Z)` in batched calls.
fn header<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
) {
    let mut pend = Pending {
        blocks: [[0; BLOCK]; HB],
        keys: [&keys[0].k; HB],
        to: [0; HB],
        n: 0,
    };
    let mut z: Vec<Block> = Vec::with_capacity(jobs.len());
    for (j, (job, key)) in jobs.iter().zip(keys).enumerate() {
        sts[j].tau = key.s0;
        let mut emit = |b: Block| pend.push(k, sts, b, &key.k, 2 * j);
        let zj = if GF {
            poet_gf::header_body(&key.l, job.ad, job.nonce, &mut emit)
        } else {
            header_body_v2(&key.l, job.ad, job.nonce, &mut emit)
        };
        z.push(zj);
        let bits = (job.lane.io.len as u64).wrapping_mul(8);
        let mut len = [0u8; BLOCK];
        len[..8].copy_from_slice(&bits.to_le_bytes());
        pend.push(k, sts, len, &key.k, 2 * j + 1);
    }
    pend.flush(k, sts);
    for (at, zs) in z.chunks_mut(HB).enumerate() {
        let n = zs.len();
        for (i, zb) in zs.iter_mut().enumerate() {
            let j = at * HB + i;
            pend.blocks[i] = xor(&sts[j].tau, zb);
            pend.keys[i] = &keys[j].k;
            wipe(zb);
        }
        k.encrypt_many(&mut pend.blocks[..n], &pend.keys[..n]);
        for (i, b) in pend.blocks[..n].iter_mut().enumerate() {
            sts[at * HB + i].tau = *b;
            wipe(b);
        }
    }
}

/// v2's header body after its parameter block (no intermediate tags: zero, under `L`; its
/// term `E_K(L)` is per key, [`PoetKeys::s0`]): the whole blocks of `ad ‖ nonce` under
/// `x·L, x^2·L, ...`, then the 10*-padded rest (possibly just the padding) under the next
/// mask; `Z = 0`. Each `B_i ⊕ m_i` goes to `emit`.
fn header_body_v2(l: &Block, ad: &[u8], nonce: &[u8], emit: &mut impl FnMut(Block)) -> Block {
    let hl = ad.len() + nonce.len();
    let mut m = *l;
    let mut off = 0;
    while hl - off >= BLOCK {
        m = xtime(&m);
        emit(xor(&header_block(ad, nonce, off, BLOCK), &m));
        off += BLOCK;
    }
    m = xtime(&m);
    // The 10* padding byte set in integer arithmetic: a byte store into `last` followed by
    // the xor's wider loads would stall store forwarding.
    let n = hl - off; // < 16
    let pad = (0x80u128 << (8 * (BLOCK - 1 - n))).to_be_bytes();
    let mut last = xor(&header_block(ad, nonce, off, n), &pad);
    emit(xor(&last, &m));
    wipe(&mut last);
    wipe(&mut m);
    [0; BLOCK]
}

// ---------------------------------------------------------------------------------------
// The whole blocks: passes A, B, C

/// Pass A: the chain over each job's whole blocks, from the chain side's initial value,
/// written to the output; `ca` = its value after them.
fn pass_chain<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
    side: Side,
    path: Path,
) {
    for st in sts.iter_mut() {
        st.ca = chain_init::<GF>(&st.tau, side);
    }
    if GF {
        let mut lanes: Vec<GfLane<'_>> = Vec::with_capacity(jobs.len());
        for ((job, key), st) in jobs.iter().zip(keys).zip(sts.iter()) {
            if let F::Mul(g) = key.hash.side(side) {
                lanes.push(GfLane {
                    io: job.lane.io,
                    g,
                    x: st.ca,
                    blocks: st.full,
                });
            }
        }
        poet_gf::chain(&mut lanes, path);
        for (lane, st) in lanes.iter_mut().zip(sts.iter_mut()) {
            st.ca = lane.x;
            wipe(&mut lane.x);
        }
    } else {
        let mut lanes = Lanes(Vec::with_capacity(jobs.len()));
        for ((job, key), st) in jobs.iter().zip(keys).zip(sts.iter()) {
            if let F::Aes(a) = key.hash.side(side) {
                lanes.push(ChainLane {
                    io: job.lane.io,
                    chain: st.ca,
                    key: a,
                    blocks: st.full,
                });
            }
        }
        // x_i = E_KF(x_{i-1}) ⊕ M_i, written out: CFB encryption.
        run_chain::<CfbEncrypt, _>(k, &mut lanes, path);
        for (lane, st) in lanes.iter().zip(sts.iter_mut()) {
            st.ca = lane.chain;
        }
    }
}

/// Decryption's pass B: `E_K^{-1}` in place over the whole blocks written by pass A; `cb` =
/// the last result, the top chain's value after the whole blocks (its initial value when
/// there are none). (Pass C waits for the tag check; encryption runs B and C together:
/// [`pass_middle_bottom`].)
fn pass_middle<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
) {
    for ((job, key), st) in jobs.iter().zip(keys).zip(sts.iter_mut()) {
        st.cb = chain_init::<GF>(&st.tau, Side::Top);
        if st.full == 0 {
            continue;
        }
        let n = BLOCK * st.full;
        let mut io = job.lane.io;
        let buf = io.output(n);
        let mut zero = [0u8; BLOCK];
        let io = IoPtrs::in_place(buf, n);
        let mut last_in = k.parallel(Parallel::EcbDecrypt, &key.k, &io, st.full, &zero);
        wipe(&mut last_in);
        st.cb.copy_from_slice(&buf[n - BLOCK..]);
        wipe(&mut zero);
    }
}

/// Encryption's passes B and C together, per job: `Y_i = E_K(x_i)` and
/// `C_i = Y_i ⊕ F_bot(Y_{i-1})` in place over the whole blocks written by pass A, from the
/// bottom chain's initial value; `cb` = the last `Y` (the initial value when there are no
/// whole blocks). v2 (`F` = AES): one call doing both layers in registers; v1: the ECB pass,
/// then the field products.
fn pass_middle_bottom<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
) {
    for ((job, key), st) in jobs.iter().zip(keys).zip(sts.iter_mut()) {
        let mut y0 = chain_init::<GF>(&st.tau, Side::Bot);
        if st.full == 0 {
            st.cb = y0;
            wipe(&mut y0);
            continue;
        }
        let n = BLOCK * st.full;
        let mut out = job.lane.io;
        let buf = out.output(n);
        st.cb = match key.hash.side(Side::Bot) {
            F::Aes(kf) => {
                let io = IoPtrs::in_place(buf, n);
                k.ecb_then_cfb_decrypt(&key.k, kf, &io, st.full, &y0)
            }
            F::Mul(g) => {
                let zero = [0u8; BLOCK];
                let io = IoPtrs::in_place(buf, n);
                let mut last_x = k.parallel(Parallel::EcbEncrypt, &key.k, &io, st.full, &zero);
                wipe(&mut last_x);
                let y: Block = buf[n - BLOCK..].try_into().unwrap_or([0; BLOCK]);
                poet_gf::unchain(buf, g, &y0);
                y
            }
        };
        wipe(&mut y0);
    }
}

/// Pass C: `out_i = in_i ⊕ F_other(in_{i-1})` in place over the whole blocks, from the other
/// side's initial value: the ciphertext (encryption) or plaintext (decryption).
fn pass_other<const GF: bool>(
    k: Kernels,
    job: &Prepared<'_>,
    key: &PoetKeys<GF>,
    st: &St,
    other: Side,
) {
    if st.full == 0 {
        return;
    }
    let n = BLOCK * st.full;
    let mut io = job.lane.io;
    let buf = io.output(n);
    let mut iv = chain_init::<GF>(&st.tau, other);
    match key.hash.side(other) {
        // CFB decryption: out_i = in_i ⊕ E_KF(in_{i-1}), the wide kernel.
        F::Aes(a) => {
            let mut last = k.parallel(
                Parallel::CfbDecrypt,
                a,
                &IoPtrs::in_place(buf, n),
                st.full,
                &iv,
            );
            wipe(&mut last);
        }
        F::Mul(g) => poet_gf::unchain(buf, g, &iv),
    }
    wipe(&mut iv);
}

// ---------------------------------------------------------------------------------------
// The last block and the tag block, batched

/// Jobs per batched tail call (two blocks each).
const CH: usize = 32;

/// What one block of a batched tail call goes through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    E,
    D,
    Top,
    Bot,
}

/// `blocks[j·W + c]` through `calls[c]` under job `j`'s keys, for the jobs of a chunk: the
/// AES ones (and `F` when it is AES) in one batched cipher call, the field products directly.
/// A call list is either `[D]` or has no `D` (the cipher runs in one direction per call).
fn calls<const GF: bool, const W: usize>(
    k: Kernels,
    keys: &[&PoetKeys<GF>],
    calls: [Call; W],
    blocks: &mut [Block],
) {
    debug_assert!(keys.len() <= CH && blocks.len() == keys.len() * W);
    let decrypt = calls.contains(&Call::D);
    debug_assert!(!decrypt || W == 1);
    let crypt = |blocks: &mut [Block], ks: &[&AesKey]| {
        if decrypt {
            k.decrypt_many(blocks, ks);
        } else {
            k.encrypt_many(blocks, ks);
        }
    };
    if !GF {
        // v2: every call is an AES call (`F` is AES-128), so the blocks go through the
        // cipher in place, under their keys in the same order: no gathering copy, nothing
        // of ours left to wipe.
        let mut ks: [&AesKey; 2 * CH] = [&keys[0].k; 2 * CH];
        let mut all_aes = true;
        for (j, key) in keys.iter().enumerate() {
            for (c, call) in calls.iter().enumerate() {
                ks[j * W + c] = match call {
                    Call::E | Call::D => &key.k,
                    Call::Top | Call::Bot => match key.hash.side(side_of(*call)) {
                        F::Aes(a) => a,
                        F::Mul(_) => {
                            all_aes = false;
                            &key.k
                        }
                    },
                };
            }
        }
        if all_aes {
            crypt(blocks, &ks[..blocks.len()]);
            return;
        }
    }
    let mut buf = [[0u8; BLOCK]; 2 * CH];
    let mut ks: [&AesKey; 2 * CH] = [&keys[0].k; 2 * CH];
    let mut at = [0usize; 2 * CH];
    let mut n = 0;
    for (j, key) in keys.iter().enumerate() {
        for (c, call) in calls.iter().enumerate() {
            let i = j * W + c;
            let aes = match call {
                Call::E | Call::D => &key.k,
                Call::Top | Call::Bot => match key.hash.side(side_of(*call)) {
                    F::Aes(a) => a,
                    F::Mul(g) => {
                        blocks[i] = g.mul_h(&blocks[i]);
                        continue;
                    }
                },
            };
            buf[n] = blocks[i];
            ks[n] = aes;
            at[n] = i;
            n += 1;
        }
    }
    crypt(&mut buf[..n], &ks[..n]);
    for (b, &i) in buf[..n].iter_mut().zip(&at[..n]) {
        blocks[i] = *b;
        wipe(b);
    }
}

/// The chain a hash call belongs to (`Top` or `Bot`; the cipher calls have none).
fn side_of(call: Call) -> Side {
    if call == Call::Top {
        Side::Top
    } else {
        Side::Bot
    }
}

/// Tag splitting's 16-byte block: `a[l..] ‖ t[..l]`, built in registers (variable-length
/// copies are `memcpy` calls whose byte stores, read back as words, stall store
/// forwarding). Encryption: the tag from `C*` and `T`; decryption: the block the tag check
/// compares, from the decrypted last block and the recomputed `T'`.
fn tag_split(a: &Block, l: usize, t: &Block) -> Block {
    let keep = BLOCK - l;
    merge(&shift_to_front(a, l), &shift_to_back(t, keep), keep)
}

/// The tag block's input and output masks: v2 `τ`, `τ`; v1 `τ ⊕ t_m`, `t_m`.
fn tag_masks<const GF: bool>(key: &PoetKeys<GF>, tau: &Block) -> (Block, Block) {
    let tin = xor(tau, &key.tm);
    let tout = if GF { key.tm } else { *tau };
    (tin, tout)
}

/// Encryption of the last block and the tag block for a chunk of jobs (three batched calls):
/// `x_L = F_top(x) ⊕ (M_L ‖ τ) ⊕ s`, `C_L ‖ T_head = E_K(x_L) ⊕ F_bot(y) ⊕ s`;
/// `T_tail = E_K(F_top(x_L) ⊕ τ_in) ⊕ F_bot(Y_L) ⊕ τ_out`.
fn tail_encrypt<const GF: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &[St],
) {
    let n = jobs.len();
    let mut b = [[0u8; BLOCK]; 2 * CH];
    let mut bl = [[0u8; BLOCK]; CH];
    let mut yl = [[0u8; BLOCK]; CH];
    // `C* = C_L ‖ T_head`, kept until the tag's tail is known.
    let mut head = [[0u8; BLOCK]; CH];
    // F_top(x), F_bot(y).
    for (j, st) in sts[..n].iter().enumerate() {
        b[2 * j] = st.ca;
        b[2 * j + 1] = st.cb;
    }
    calls::<GF, 2>(k, keys, [Call::Top, Call::Bot], &mut b[..2 * n]);
    for (j, (job, st)) in jobs.iter().zip(sts).enumerate() {
        let mut m = job.lane.io.read_from(BLOCK * st.full);
        m = splice(&m, st.last, &st.tau);
        xor_into(&mut m, &st.s);
        let xl = xor(&b[2 * j], &m);
        bl[j] = b[2 * j + 1];
        b[2 * j] = xl;
        b[2 * j + 1] = xl;
        wipe(&mut m);
    }
    // Y_L = E_K(x_L), F_top(x_L).
    calls::<GF, 2>(k, keys, [Call::E, Call::Top], &mut b[..2 * n]);
    for (j, ((job, key), st)) in jobs.iter_mut().zip(keys).zip(sts).enumerate() {
        yl[j] = b[2 * j];
        let mut out = xor(&xor(&yl[j], &bl[j]), &st.s);
        job.lane.io.write_tail(BLOCK * st.full, &out);
        head[j] = out;
        wipe(&mut out);
        let (tin, _) = tag_masks(key, &st.tau);
        b[2 * j] = xor(&b[2 * j + 1], &tin);
        b[2 * j + 1] = yl[j];
    }
    // Y_T = E_K(x_T), F_bot(Y_L).
    calls::<GF, 2>(k, keys, [Call::E, Call::Bot], &mut b[..2 * n]);
    for (j, ((job, key), st)) in jobs.iter_mut().zip(keys).zip(sts).enumerate() {
        let (_, tout) = tag_masks(key, &st.tau);
        let mut t = xor(&xor(&b[2 * j], &b[2 * j + 1]), &tout);
        let whole = tag_split(&head[j], st.last, &t);
        if let TagIo::Out(tag) = &mut job.tag {
            // The tag is 16 bytes (validated: POET's only tag length).
            debug_assert_eq!(tag.len(), BLOCK);
            if let Ok(tb) = <&mut Block>::try_from(&mut tag[..]) {
                *tb = whole;
            }
        }
        wipe(&mut t);
    }
    b.iter_mut().for_each(wipe);
    bl.iter_mut().for_each(wipe);
    yl.iter_mut().for_each(wipe);
    head.iter_mut().for_each(wipe);
}

/// Decryption of the last block and the tag block for a chunk of jobs, and the verdict
/// (`st.ok`; the last plaintext block in `st.p`). Four batched calls:
/// `y_L = F_bot(y) ⊕ (C_L ‖ T_head) ⊕ s`, `P_L = E_K^{-1}(y_L) ⊕ F_top(x) ⊕ s`;
/// `T' = E_K(F_top(X_L) ⊕ τ_in) ⊕ F_bot(y_L) ⊕ τ_out`. Authentic iff
/// `P_L[l..] ‖ T'[..l] = τ[..16-l] ‖ T_tail`, one constant-time comparison.
fn tail_decrypt<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
) {
    let n = jobs.len();
    let mut b = [[0u8; BLOCK]; 2 * CH];
    let mut b1 = [[0u8; BLOCK]; CH];
    let mut al = [[0u8; BLOCK]; CH];
    let mut bt = [[0u8; BLOCK]; CH];
    // F_bot(y), F_top(x).
    for (j, st) in sts[..n].iter().enumerate() {
        b[2 * j] = st.ca;
        b[2 * j + 1] = st.cb;
    }
    calls::<GF, 2>(k, keys, [Call::Bot, Call::Top], &mut b[..2 * n]);
    for (j, (job, st)) in jobs.iter().zip(sts.iter()).enumerate() {
        // The tag's head completes the last block (`In` of 16 bytes: validated; anything
        // else fails the comparison below).
        let head: &[u8] = match &job.tag {
            TagIo::In(tag) if tag.len() == BLOCK => tag,
            _ => &[0; BLOCK],
        };
        let mut c = job.lane.io.read_from(BLOCK * st.full);
        c = splice(&c, st.last, head);
        xor_into(&mut c, &st.s);
        b1[j] = xor(&b[2 * j], &c); // y_L
        al[j] = b[2 * j + 1];
        wipe(&mut c);
    }
    // X_L = E_K^{-1}(y_L); P_L = X_L ⊕ F_top(x) ⊕ s.
    for j in 0..n {
        b[2 * j + 1] = b1[j]; // y_L, for F_bot(y_L)
    }
    calls::<GF, 1>(k, keys, [Call::D], &mut b1[..n]);
    for (j, st) in sts[..n].iter_mut().enumerate() {
        st.p = xor(&xor(&b1[j], &al[j]), &st.s);
        b[2 * j] = b1[j];
    }
    // F_top(X_L), F_bot(y_L).
    calls::<GF, 2>(k, keys, [Call::Top, Call::Bot], &mut b[..2 * n]);
    for (j, (key, st)) in keys.iter().zip(sts.iter()).enumerate() {
        let (tin, _) = tag_masks(key, &st.tau);
        b1[j] = xor(&b[2 * j], &tin); // x_T
        bt[j] = b[2 * j + 1];
    }
    // Y_T = E_K(x_T); T' = Y_T ⊕ F_bot(y_L) ⊕ τ_out.
    calls::<GF, 1>(k, keys, [Call::E], &mut b1[..n]);
    for (j, ((job, key), st)) in jobs.iter().zip(keys).zip(sts.iter_mut()).enumerate() {
        let (_, tout) = tag_masks(key, &st.tau);
        let mut t = xor(&xor(&b1[j], &bt[j]), &tout);
        let l = st.last;
        // Computed: P_L[l..] ‖ T'[..l]; expected: τ[..16-l] ‖ T_tail.
        let keep = BLOCK - l;
        let mut got = tag_split(&st.p, l, &t);
        let mut want = [0u8; BLOCK];
        st.ok = match &job.tag {
            TagIo::In(tag) => match <&Block>::try_from(*tag) {
                Ok(tag) => {
                    want = merge(&st.tau, tag, keep);
                    tag_matches(&got, &want)
                }
                Err(_) => false,
            },
            _ => false,
        };
        wipe(&mut t);
        wipe(&mut got);
        wipe(&mut want);
    }
    for a in [&mut b[..], &mut b1[..], &mut al[..], &mut bt[..]] {
        a.iter_mut().for_each(wipe);
    }
}

// ---------------------------------------------------------------------------------------
// One message's whole blocks in one fused pass (xmm)

/// v2's whole blocks of one message in one pass, all of a block's AES calls in registers.
/// Encryption: `x_i = E_KF(x_{i-1}) ⊕ M_i`, `Y_i = E_K(x_i)`, `C_i = Y_i ⊕ E_KF(Y_{i-1})`
/// (passes A, B and C); decryption: `y_i = E_KF(y_{i-1}) ⊕ C_i`, `X_i = E_K^{-1}(y_i)`
/// written out (passes A and B; C waits for the tag check).
///
/// Why: one message is one dependent chain, `E_KF` on the chain value, and the separate
/// passes leave the AES unit idle for most of each chain call's latency. Here only the
/// chain call is on the critical path; `E_K` of the block and `E_KF` of the bottom chain
/// fill its latency, and each block is read and written once. Measured on an AMD Zen 1
/// host (no VAES), sequential engine, 2 KiB messages: encryption 2.84 against 3.37 TSC
/// cycles/byte, decryption 3.26 against 3.55. For batches the separate passes stay: there
/// the comb kernels already fill the unit, and fused multi-lane kernels (three AES states
/// per lane, plain or software-pipelined) measured slower, 1.21 and 1.30 against 1.15 at
/// P = 8 (they spill).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod fused {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use crate::aes::{ni, AesKey, RoundKeys};
    use crate::block::{Block, IoPtrs, BLOCK};
    use crate::cpu::NiToken;

    /// AES-128: POET's derived keys are 16 bytes.
    const ROUNDS: usize = 10;

    /// Runs one message's `blocks` whole blocks: `chain` is the chain value (encryption's top
    /// `x`, decryption's bottom `y`) and `other` encryption's bottom `Y` (decryption: the
    /// last `X` written), both updated.
    pub(super) fn run<const ENC: bool>(
        _t: NiToken,
        io: &IoPtrs<'_>,
        kf: &AesKey,
        k: &AesKey,
        blocks: usize,
        chain: &mut Block,
        other: &mut Block,
    ) {
        let end = blocks.checked_mul(BLOCK).expect("block range overflows");
        assert!(end <= io.len && end <= io.out_cap && (blocks == 0 || !io.dst.is_null()));
        assert!(kf.rounds == ROUNDS && k.rounds == ROUNDS);
        let km = if ENC { &k.enc } else { &k.dec };
        // SAFETY: the token proves AES-NI and SSE2; blocks 0..blocks lie in the input and
        // the output (checked above), and both keys are AES-128.
        unsafe { kernel::<ENC>(io, &kf.enc, km, blocks, chain, other) }
    }

    /// Round key `r` of a schedule.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn rk(k: &RoundKeys, r: usize) -> __m128i {
        ni::load(&k.0[r])
    }

    /// # Safety
    /// The CPU has AES-NI and SSE2; blocks `0..blocks` lie in `io`'s input and (non-null)
    /// output; `kf`, `km` are AES-128 schedules.
    #[target_feature(enable = "aes,sse2")]
    unsafe fn kernel<const ENC: bool>(
        io: &IoPtrs<'_>,
        kf: &RoundKeys,
        km: &RoundKeys,
        blocks: usize,
        chain: &mut Block,
        other: &mut Block,
    ) {
        let mut c = ni::load(chain);
        let mut o = ni::load(other);
        for i in 0..blocks {
            // SAFETY: block i < blocks lies in the input (caller).
            let m = unsafe { ni::load_in(io, i) };
            let mut a = _mm_xor_si128(c, rk(kf, 0));
            let mut f = _mm_xor_si128(o, rk(kf, 0));
            for r in 1..ROUNDS {
                a = _mm_aesenc_si128(a, rk(kf, r));
                if ENC {
                    f = _mm_aesenc_si128(f, rk(kf, r));
                }
            }
            // The chain: E_KF(previous) ⊕ input block, the xor folded into the last key.
            c = _mm_aesenclast_si128(a, _mm_xor_si128(rk(kf, ROUNDS), m));
            let mut b = _mm_xor_si128(c, rk(km, 0));
            for r in 1..ROUNDS {
                b = if ENC {
                    _mm_aesenc_si128(b, rk(km, r))
                } else {
                    _mm_aesdec_si128(b, rk(km, r))
                };
            }
            let (out, y) = if ENC {
                let y = _mm_aesenclast_si128(b, rk(km, ROUNDS));
                (_mm_xor_si128(y, _mm_aesenclast_si128(f, rk(kf, ROUNDS))), y)
            } else {
                let x = _mm_aesdeclast_si128(b, rk(km, ROUNDS));
                (x, x)
            };
            // SAFETY: block i lies in the output (caller); in place, m was read before.
            unsafe { ni::store_out(io, i, out) };
            o = y;
        }
        ni::store(chain, c);
        ni::store(other, o);
    }
}

/// Passes A and B (decryption) or A, B and C (encryption) of v2 for one message at a time in
/// the fused xmm kernel, `sides` = (chain side, other side) of `op` (`ca`, `cb` as the
/// separate passes leave them): on the single path
/// and for a batch of one. `false`, with nothing done, where the separate passes run
/// instead (batches, v1, other architectures).
fn whole_blocks_fused<const GF: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    keys: &[&PoetKeys<GF>],
    sts: &mut [St],
    op: Op,
    (chain_side, other_side): (Side, Side),
    path: Path,
) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if !GF && (path == Path::Single || jobs.len() == 1) {
        for ((job, key), st) in jobs.iter().zip(keys).zip(sts.iter_mut()) {
            let F::Aes(kf) = key.hash.side(chain_side) else {
                unreachable!("v2 hashes with AES")
            };
            st.ca = chain_init::<GF>(&st.tau, chain_side);
            st.cb = chain_init::<GF>(&st.tau, other_side);
            let io = &job.lane.io;
            let (t, ca, cb) = (k.ni(), &mut st.ca, &mut st.cb);
            match op {
                Op::Encrypt => fused::run::<true>(t, io, kf, &key.k, st.full, ca, cb),
                Op::Decrypt => fused::run::<false>(t, io, kf, &key.k, st.full, ca, cb),
            }
        }
        return true;
    }
    let _ = (k, jobs, keys, sts, op, chain_side, other_side, path);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xtime_is_multiplication_by_x_in_the_gcm_field() {
        let mut a = [0u8; BLOCK];
        a[3] = 0x5a;
        a[15] = 0x01; // the x^127 term
        let mut x = [0u8; BLOCK];
        x[0] = 0x40; // x
        assert_eq!(xtime(&a), crate::gf128::gf_mul(&a, &x));
        let b: Block = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xc3);
        assert_eq!(xtime(&b), crate::gf128::gf_mul(&b, &x));
    }

    #[test]
    fn header_blocks_cross_the_ad_nonce_boundary() {
        let ad: Vec<u8> = (0..20).collect();
        let nonce: Vec<u8> = (100..116).collect();
        let all: Vec<u8> = ad.iter().chain(&nonce).copied().collect();
        for off in 0..all.len() {
            for n in 0..=BLOCK.min(all.len() - off) {
                let mut want = [0u8; BLOCK];
                want[..n].copy_from_slice(&all[off..off + n]);
                assert_eq!(header_block(&ad, &nonce, off, n), want, "off {off} n {n}");
            }
        }
    }

    #[test]
    fn split_gives_the_last_block_1_to_16_bytes() {
        assert_eq!(split(0), (0, 0));
        assert_eq!(split(1), (0, 1));
        assert_eq!(split(16), (0, 16));
        assert_eq!(split(17), (1, 1));
        assert_eq!(split(32), (1, 16));
        assert_eq!(split(33), (2, 1));
    }
}
