//! AES-CLOC (Iwata, Minematsu, Guo, Morioka; FSE 2014), the CAESAR v2/v3 parameter set
//! `aes128n12t8clocv3`: AES-128, 12-byte nonce, 8-byte tag, PARAM byte `0xC0`. The lane
//! machinery here is shared with AES-SILC ([`super::silc`]), which differs only in how the
//! associated data and nonce make the initial value `V` and in the finalisation: the two
//! differences are the [`Scheme`] trait.
//!
//! # The mode
//! Blocks are 16 bytes; `fix0` clears the most significant bit of byte 0, `fix1` sets it;
//! `10*` pads a partial block with `0x80` then zeros. `G` maps the four 32-bit words
//! `(a, b, c, d)` to `(b, c, d, a ^ b)` (word-wise xors and moves only, so byte order inside
//! the words does not matter); `f1 = G^8`, `f2 = g2 = G`, `g1 = G^2`, `h = G^4`.
//! * AD (`A_1..A_a`; one block, `10*(empty)`, when empty): `S = E(fix0(A_1'))` with `A_1'`
//!   the first block, `10*`-padded when the AD is shorter than a block; then `S = h(S)` if the
//!   bit `fix0` cleared was set. Further blocks CBC-style, `S = E(S ^ A_i)`, the last one
//!   `10*`-padded when partial.
//! * Nonce: `S ^= PARAM ‖ N ‖ 10*`, then `V = f2(S)` when the AD was padded (empty or not a
//!   multiple of 16 bytes), else `V = f1(S)`.
//! * Encryption (CFB with fix1): `K_1 = E(V)`, `C_i = M_i ^ K_i`, `K_{i+1} = E(fix1(C_i))`;
//!   the last block may be partial (its keystream truncated).
//! * MAC over the ciphertext: `T_0 = E(g2(V))`, `T_i = E(T_{i-1} ^ C_i)` for all blocks but
//!   the last, then `tag = E(f1(T ^ C_m))` (last block complete) or `E(f2(T ^ 10*(C_m)))`;
//!   an empty message takes `tag = E(g1(V))`. The tag is the first 8 bytes.
//!
//! # Scheduling
//! Per message: the AD chain (one cipher call per AD block, the nonce included in SILC's),
//! then two chains side by side — the encryption chain needs `C_i` for `K_{i+1}` and the MAC
//! chain needs `C_i` for `T_i`, and both have `C_i` as soon as `K_i` is known — so step `i` of
//! the message phase carries both (`E(fix1(C_i))` and `E(T_{i-1} ^ C_i)`), two independent
//! blocks per step. On the batch path every phase runs through the comb stepper
//! ([`run_steps`]): the AD phase one block per lane and step, the message phase two, so a
//! window of `P` lanes keeps `2P` blocks in flight. The tag encryption (one call per job,
//! two dependent ones for SILC) is batched across all jobs with [`Kernels::encrypt_many`].
//! The single path drives the same lane code one message at a time.
//!
//! # Decryption: verify, then decrypt
//! The MAC chain reads only the ciphertext, so decryption first runs the AD chain and the MAC
//! chain (one block per step), compares the tag in constant time, and only for jobs whose tag
//! matches computes the keystream. That keystream is parallel (`K_1 = E(V)`, `K_{i+1} =
//! E(fix1(C_i))`, all from ciphertext), so it runs as independent blocks packed across jobs
//! into multi-key cipher calls. A job whose tag does not match never has plaintext computed:
//! its output `[..len]` is zeroed and it gets [`Error::AuthenticationFailed`].
//!
//! Secrets wiped: every lane's chain states (the AD/encryption state and the MAC state) when
//! the lane is dropped, the batched finalisation and keystream buffers after use; the stepper
//! wipes its own cipher buffers.

use core::marker::PhantomData;

use crate::aes::{AesKey, Kernels};
use crate::block::{tag_matches, wipe, Block, IoPtrs, BLOCK};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::steps::{run_steps, StepLane};
use crate::{Error, JobResult, Op};

/// CLOC's parameter byte for (AES, 12-byte nonce, 8-byte tag); SILC uses the same value.
pub(crate) const PARAM: u8 = 0xC0;

/// Jobs (finalisation) or blocks (decryption keystream) per batched cipher call, on the stack.
const CHUNK: usize = 64;

/// What distinguishes CLOC from SILC: the AD/nonce chain that makes `V`, the first MAC input,
/// and the finalisation. Everything else (lanes, the message chains, the scheduling,
/// verify-then-decrypt) is shared.
pub(crate) trait Scheme: 'static {
    /// Dependent cipher calls that make the final finalisation block: 1 (CLOC) or 2 (SILC,
    /// whose last MAC block and tag block follow each other).
    const FINAL_CALLS: usize;
    /// Cipher calls of the AD chain (nonce processing included) for `ad_len` bytes of AD.
    fn ad_steps(ad_len: usize) -> usize;
    /// Cipher input of AD step `step`; `state` is the previous step's chain value (undefined
    /// for step 0).
    fn ad_input(state: &Block, ad: &[u8], nonce: &[u8], step: usize) -> Block;
    /// Chain value after AD step `step`, from its cipher output.
    fn ad_output(out: &Block, ad: &[u8], step: usize) -> Block;
    /// `V` from the AD chain's last value.
    fn v(state: &Block, ad: &[u8], nonce: &[u8]) -> Block;
    /// First cipher input of the MAC chain of a non-empty message.
    fn mac_seed(v: &Block) -> Block;
    /// Input of the first finalisation call: for an empty message from `V` alone; else from
    /// the MAC state `ts` and the last ciphertext block (`c`, zero beyond its `len` bytes).
    fn final_input(v: &Block, ts: &Block, last: Option<(&Block, usize)>) -> Block;
    /// Input of the second finalisation call (only when `FINAL_CALLS == 2`) from the first
    /// call's output and the message length in bytes.
    fn final_second(out: &Block, msg_len: usize) -> Block;
}

/// AES-CLOC (CAESAR v2/v3 reference `aes128n12t8clocv3`).
pub(crate) struct Cloc;

impl Scheme for Cloc {
    const FINAL_CALLS: usize = 1;

    fn ad_steps(ad_len: usize) -> usize {
        ad_len.div_ceil(BLOCK).max(1)
    }

    fn ad_input(state: &Block, ad: &[u8], _nonce: &[u8], step: usize) -> Block {
        let rest = &ad[BLOCK * step..];
        let mut b = match rest.first_chunk::<BLOCK>() {
            Some(full) => *full,
            None => pad10(rest),
        };
        if step == 0 {
            b[0] &= 0x7f; // fix0
            b
        } else {
            xor(state, &b)
        }
    }

    fn ad_output(out: &Block, ad: &[u8], step: usize) -> Block {
        if step != 0 {
            return *out;
        }
        // h when fix0 cleared a set bit: the first AD byte's MSB, or the 0x80 of 10*(empty).
        // Selected by a mask, not a branch (the AD need not be public).
        let msb = ad.first().map_or(0x80, |b| b & 0x80);
        let mask = 0u128.wrapping_sub(u128::from(msb >> 7));
        let plain = u128::from_ne_bytes(*out);
        let mapped = u128::from_ne_bytes(g_pow(out, 4));
        ((mapped & mask) | (plain & !mask)).to_ne_bytes()
    }

    fn v(state: &Block, ad: &[u8], nonce: &[u8]) -> Block {
        let mut s = *state;
        s[0] ^= PARAM;
        for (x, n) in s[1..].iter_mut().zip(nonce) {
            *x ^= n;
        }
        if nonce.len() + 1 < BLOCK {
            s[nonce.len() + 1] ^= 0x80;
        }
        // f2 when the AD was 10*-padded (empty or not whole blocks), f1 otherwise.
        let padded = ad.is_empty() || !ad.len().is_multiple_of(BLOCK);
        let v = g_pow(&s, if padded { 1 } else { 8 });
        wipe(&mut s);
        v
    }

    fn mac_seed(v: &Block) -> Block {
        g_pow(v, 1) // g2
    }

    fn final_input(v: &Block, ts: &Block, last: Option<(&Block, usize)>) -> Block {
        match last {
            None => g_pow(v, 2), // g1
            Some((c, n)) => {
                let mut t = xor(ts, c);
                let out = if n < BLOCK {
                    t[n] ^= 0x80;
                    g_pow(&t, 1) // f2
                } else {
                    g_pow(&t, 8) // f1
                };
                wipe(&mut t);
                out
            }
        }
    }

    fn final_second(out: &Block, _msg_len: usize) -> Block {
        *out // FINAL_CALLS == 1: never called
    }
}

/// `G^k` on the four 32-bit words of `b`: `(a, b, c, d) -> (b, c, d, a ^ b)` per round.
pub(crate) fn g_pow(b: &Block, k: u32) -> Block {
    let w = |i: usize| u32::from_ne_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    let mut s = [w(0), w(1), w(2), w(3)];
    for _ in 0..k {
        s = [s[1], s[2], s[3], s[0] ^ s[1]];
    }
    let mut out = [0u8; BLOCK];
    for (o, x) in out.chunks_exact_mut(4).zip(s) {
        o.copy_from_slice(&x.to_ne_bytes());
    }
    out
}

/// `a ^ b`.
#[inline(always)]
pub(crate) fn xor(a: &Block, b: &Block) -> Block {
    (u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(*b)).to_ne_bytes()
}

/// `bytes` (fewer than 16) followed by `0x80` and zeros.
pub(crate) fn pad10(bytes: &[u8]) -> Block {
    let mut b = zero_pad(bytes);
    b[bytes.len()] = 0x80;
    b
}

/// `bytes` (at most 16) followed by zeros.
pub(crate) fn zero_pad(bytes: &[u8]) -> Block {
    let mut b = [0u8; BLOCK];
    b[..bytes.len()].copy_from_slice(bytes);
    b
}

/// `fix1`: the ciphertext block with its most significant bit set.
#[inline(always)]
fn fix1(mut c: Block) -> Block {
    c[0] |= 0x80;
    c
}

/// The whole input block at `off` (`off + 16 <= io.len`) with `read_from`'s single unaligned
/// load: the view is shortened to end at the block (a shorter readable range keeps the
/// `IoPtrs` invariant; past the input, `read_from` reads only what exists and asserts).
#[inline(always)]
fn block_at(io: &IoPtrs<'_>, off: usize) -> Block {
    let mut view = *io;
    view.len = io.len.min(off.saturating_add(BLOCK));
    view.read_from(off)
}

/// The first `n` bytes of `b`, the rest zero (`n <= 16`).
#[inline(always)]
fn truncate(b: &Block, n: usize) -> Block {
    let mask = if n >= BLOCK {
        u128::MAX
    } else {
        (1u128 << (8 * n)) - 1
    };
    (u128::from_le_bytes(*b) & mask).to_le_bytes()
}

/// One message's state through all phases.
pub(crate) struct Lane<'k> {
    key: &'k AesKey,
    io: IoPtrs<'k>,
    ad: &'k [u8],
    nonce: &'k [u8],
    /// The AD chain value, then `V`, then (encryption) the keystream block of the next
    /// message block. Decryption keeps `V` here after the AD phase.
    es: Block,
    /// The MAC chain value; after the finalisation, the tag block.
    ts: Block,
    ad_steps: usize,
    /// Message blocks, the last possibly partial.
    blocks: usize,
    /// Decryption: the tag matched.
    ok: bool,
}

impl<'k> Lane<'k> {
    fn new<S: Scheme>(job: &Prepared<'k>) -> Lane<'k> {
        Lane {
            key: job.lane.key,
            io: job.lane.io,
            ad: job.ad,
            nonce: job.nonce,
            es: [0; BLOCK],
            ts: [0; BLOCK],
            ad_steps: S::ad_steps(job.ad.len()),
            blocks: job.lane.io.len.div_ceil(BLOCK),
            ok: false,
        }
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        wipe(&mut self.es);
        wipe(&mut self.ts);
    }
}

/// A phase of the lanes as the stepper sees it: a view of one lane.
trait View<'a, 'k>: StepLane<'k> {
    fn of(lane: &'a mut Lane<'k>) -> Self;
}

/// The AD chain (and SILC's nonce block): one block per step.
struct AdPhase<'a, 'k, S>(&'a mut Lane<'k>, PhantomData<S>);

impl<'a, 'k, S: Scheme> View<'a, 'k> for AdPhase<'a, 'k, S> {
    fn of(lane: &'a mut Lane<'k>) -> Self {
        AdPhase(lane, PhantomData)
    }
}

impl<'k, S: Scheme> StepLane<'k> for AdPhase<'_, 'k, S> {
    const WIDTH: usize = 1;
    fn steps(&self) -> usize {
        self.0.ad_steps
    }
    fn key(&self, _slot: usize) -> &'k AesKey {
        self.0.key
    }
    #[inline(always)]
    fn load(&mut self, step: usize, inputs: &mut [Block]) {
        let l = &*self.0;
        inputs[0] = S::ad_input(&l.es, l.ad, l.nonce, step);
    }
    #[inline(always)]
    fn store(&mut self, step: usize, outputs: &[Block]) {
        self.0.es = S::ad_output(&outputs[0], self.0.ad, step);
    }
}

/// Encryption, all message blocks but the last: step 0 is `(E(V), E(mac_seed(V)))`, step
/// `i >= 1` encrypts block `i - 1` with the current keystream, writes it, and hands
/// `(fix1(C), T ^ C)` to the cipher.
struct EncPhase<'a, 'k>(&'a mut Lane<'k>);

impl<'a, 'k> View<'a, 'k> for EncPhase<'a, 'k> {
    fn of(lane: &'a mut Lane<'k>) -> Self {
        EncPhase(lane)
    }
}

impl<'k> StepLane<'k> for EncPhase<'_, 'k> {
    const WIDTH: usize = 2;
    fn steps(&self) -> usize {
        self.0.blocks
    }
    fn key(&self, _slot: usize) -> &'k AesKey {
        self.0.key
    }
    #[inline(always)]
    fn load(&mut self, step: usize, inputs: &mut [Block]) {
        let l = &*self.0;
        let [ks, mac, ..] = inputs else { return };
        if step == 0 {
            *ks = l.es;
            *mac = l.ts;
        } else {
            let off = BLOCK * (step - 1);
            let c = xor(&l.es, &block_at(&l.io, off));
            l.io.write_block(off, &c);
            *ks = fix1(c);
            *mac = xor(&l.ts, &c);
        }
    }
    #[inline(always)]
    fn store(&mut self, _step: usize, outputs: &[Block]) {
        if let [ks, mac, ..] = outputs {
            self.0.es = *ks;
            self.0.ts = *mac;
        }
    }
}

/// Decryption's MAC chain over the ciphertext (nothing written): step 0 is
/// `E(mac_seed(V))`, step `i >= 1` absorbs ciphertext block `i - 1`.
struct MacPhase<'a, 'k>(&'a mut Lane<'k>);

impl<'a, 'k> View<'a, 'k> for MacPhase<'a, 'k> {
    fn of(lane: &'a mut Lane<'k>) -> Self {
        MacPhase(lane)
    }
}

impl<'k> StepLane<'k> for MacPhase<'_, 'k> {
    const WIDTH: usize = 1;
    fn steps(&self) -> usize {
        self.0.blocks
    }
    fn key(&self, _slot: usize) -> &'k AesKey {
        self.0.key
    }
    #[inline(always)]
    fn load(&mut self, step: usize, inputs: &mut [Block]) {
        let l = &*self.0;
        inputs[0] = if step == 0 {
            l.ts
        } else {
            xor(&l.ts, &block_at(&l.io, BLOCK * (step - 1)))
        };
    }
    #[inline(always)]
    fn store(&mut self, _step: usize, outputs: &[Block]) {
        self.0.ts = outputs[0];
    }
}

/// Runs one phase over all lanes: the lane views live on the stack for a single lane (the
/// single path: no allocation per message), in one vector for a batch.
fn drive<'a, 'k: 'a, V: View<'a, 'k>>(k: Kernels, lanes: &'a mut [Lane<'k>], path: Path) {
    if let [one] = lanes {
        run_steps(k, &mut [V::of(one)], path);
    } else {
        let mut views: Vec<V> = lanes.iter_mut().map(V::of).collect();
        run_steps(k, &mut views, path);
    }
}

/// Runs the scheme `S` over validated jobs (key, nonce, tag length and direction, output room
/// checked by validation), writing `results[job.index]`.
pub(crate) fn run_scheme<S: Scheme>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    if let [job] = jobs {
        let mut lane = [Lane::new::<S>(job)];
        process::<S>(k, jobs, &mut lane, op, path);
        report(jobs, &lane, results, op);
    } else {
        let mut lanes: Vec<Lane<'_>> = jobs.iter().map(Lane::new::<S>).collect();
        process::<S>(k, jobs, &mut lanes, op, path);
        report(jobs, &lanes, results, op);
    }
}

/// All phases: AD chain, `V`, the message chains, the finalisation and, on decryption, the
/// tag check and the keystream of the verified lanes (`lanes[i]` is `jobs[i]`'s).
fn process<S: Scheme>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    lanes: &mut [Lane<'_>],
    op: Op,
    path: Path,
) {
    drive::<AdPhase<'_, '_, S>>(k, lanes, path);
    for l in lanes.iter_mut() {
        let v = S::v(&l.es, l.ad, l.nonce);
        l.es = v;
        l.ts = S::mac_seed(&v);
    }
    match op {
        Op::Encrypt => drive::<EncPhase<'_, '_>>(k, lanes, path),
        Op::Decrypt => drive::<MacPhase<'_, '_>>(k, lanes, path),
    }
    finalise::<S>(k, lanes, op);
    if op == Op::Decrypt {
        for (job, l) in jobs.iter().zip(lanes.iter_mut()) {
            l.ok = matches!(&job.tag, TagIo::In(t) if tag_matches(&l.ts, t));
        }
        decrypt_verified(k, lanes);
    }
}

/// The tag blocks of every lane (left in `ts`), batched across lanes: the last message block
/// (written here on encryption), then `FINAL_CALLS` multi-key cipher calls per chunk.
fn finalise<S: Scheme>(k: Kernels, lanes: &mut [Lane<'_>], op: Op) {
    for chunk in lanes.chunks_mut(CHUNK) {
        let Some(first) = chunk.first() else { continue };
        let n = chunk.len();
        let mut buf = [[0u8; BLOCK]; CHUNK];
        let mut keys: [&AesKey; CHUNK] = [first.key; CHUNK];
        for ((b, key), l) in buf.iter_mut().zip(keys.iter_mut()).zip(chunk.iter()) {
            *key = l.key;
            *b = if l.blocks == 0 {
                S::final_input(&l.es, &l.ts, None)
            } else {
                let off = BLOCK * (l.blocks - 1);
                let len = l.io.len - off;
                let mut c = match op {
                    Op::Encrypt => {
                        let c = truncate(&xor(&l.es, &l.io.read_from(off)), len);
                        if len == BLOCK {
                            l.io.write_block(off, &c);
                        } else {
                            l.io.xor_tail(&l.es);
                        }
                        c
                    }
                    Op::Decrypt => l.io.read_from(off),
                };
                let t = S::final_input(&l.es, &l.ts, Some((&c, len)));
                wipe(&mut c);
                t
            };
        }
        k.encrypt_many(&mut buf[..n], &keys[..n]);
        if S::FINAL_CALLS == 2 {
            for (b, l) in buf.iter_mut().zip(chunk.iter()) {
                *b = S::final_second(b, l.io.len);
            }
            k.encrypt_many(&mut buf[..n], &keys[..n]);
        }
        for (b, l) in buf.iter_mut().zip(chunk.iter_mut()) {
            l.ts = *b;
            wipe(b);
        }
    }
}

/// Decryption of the lanes whose tag matched: keystream blocks `E(V)`, `E(fix1(C_i))`, all
/// independent, packed across lanes into multi-key cipher calls of up to [`CHUNK`] blocks.
/// Each ciphertext block is read once (before its plaintext may overwrite it in place) and
/// kept beside its keystream input.
fn decrypt_verified(k: Kernels, lanes: &[Lane<'_>]) {
    let Some(first) = lanes.first() else { return };
    let mut ks = [[0u8; BLOCK]; CHUNK];
    let mut ct = [[0u8; BLOCK]; CHUNK];
    let mut keys: [&AesKey; CHUNK] = [first.key; CHUNK];
    let mut at = [(0usize, 0usize); CHUNK];
    let mut n = 0;
    let flush = |n: usize,
                 ks: &mut [Block; CHUNK],
                 ct: &[Block; CHUNK],
                 keys: &[&AesKey; CHUNK],
                 at: &[(usize, usize); CHUNK]| {
        k.encrypt_many(&mut ks[..n], &keys[..n]);
        for ((s, c), &(li, off)) in ks[..n].iter_mut().zip(&ct[..n]).zip(&at[..n]) {
            let io = &lanes[li].io;
            if off + BLOCK <= io.len {
                io.write_block(off, &xor(s, c));
            } else {
                io.xor_tail(s);
            }
            wipe(s);
        }
    };
    for (li, l) in lanes.iter().enumerate() {
        if !l.ok {
            continue;
        }
        let mut input = l.es; // V
        for b in 0..l.blocks {
            let off = BLOCK * b;
            let c = block_at(&l.io, off);
            ks[n] = input;
            ct[n] = c;
            keys[n] = l.key;
            at[n] = (li, off);
            n += 1;
            input = fix1(c);
            if n == CHUNK {
                flush(n, &mut ks, &ct, &keys, &at);
                n = 0;
            }
        }
        wipe(&mut input);
    }
    if n > 0 {
        flush(n, &mut ks, &ct, &keys, &at);
    }
}

/// Writes the tags (encryption) or checks them (decryption: sets `ok`, zeroes the output of
/// failures), and the results.
fn report(jobs: &mut [Prepared<'_>], lanes: &[Lane<'_>], results: &mut [JobResult], op: Op) {
    for (job, l) in jobs.iter_mut().zip(lanes) {
        results[job.index] = match (&mut job.tag, op) {
            (TagIo::Out(tag), Op::Encrypt) => {
                let n = tag.len().min(BLOCK);
                tag[..n].copy_from_slice(&l.ts[..n]);
                Ok(l.io.len)
            }
            (TagIo::In(_), Op::Decrypt) if l.ok => Ok(l.io.len),
            (TagIo::In(_), Op::Decrypt) => {
                l.io.zero_output(l.io.len);
                Err(Error::AuthenticationFailed)
            }
            _ => Err(Error::TagMisuse), // excluded by validation
        };
    }
}

/// Runs AES-CLOC `op` over validated jobs.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    run_scheme::<Cloc>(k, jobs, results, op, path);
}
