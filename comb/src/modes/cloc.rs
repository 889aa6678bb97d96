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
//! # Scheduling: the batch path
//! The message phase is two chains per message: encryption, CFB with `fix1`, and the MAC, a
//! CBC-MAC over the ciphertext. The MAC of block `i` needs only `C_i`, which is ready as soon
//! as the CFB chain's block `i` is, so both chains advance together: per block `K_i =
//! E(X_i)` and `T_{i-1} = E(Y_i)` are independent cipher calls, then `C_i = M_i ^ K_i`,
//! `X_{i+1} = fix1(C_i)`, `Y_{i+1} = T_{i-1} ^ C_i` (`X_1 = V`, `Y_1 = mac_seed(V)`: the MAC
//! lags one block, and its first call makes `T_0`). The CFB+MAC kernels
//! ([`run_cfb_mac`]) run that step on every lane of a comb group with both chains in
//! registers, so 8 messages keep 16 blocks in flight (two lanes' CFB chains in one ymm
//! register, their MAC chains in another; 16 messages in AVX-512VL's 32 registers, or, where
//! a zmm VAESENC issues at the ymm rate, four per zmm register:
//! [`crate::aes::vaes::cfb_mac_quads`]):
//! 1. AD/nonce phase, batched step by step across jobs (step `s` of every job is one
//!    independent block: one multi-key [`Kernels::encrypt_many`] call per step and 64 jobs;
//!    the realistic mix has empty AD, one step), then `V`. When that phase is one step for
//!    every job, encryption takes a shorter route through the same calls
//!    ([`encrypt_batch_one_ad_step`]).
//! 2. Both message chains over every block: one plan; on xmm windows of equal progress, on
//!    ymm each group's lanes run to their own ends.
//! 3. The partial last blocks, one more step on both chains (`K_m` and `T_{m-1}`) and the
//!    tail bytes: with AVX-512 inside the ymm kernel under byte masks, else per comb group,
//!    while its messages are in L1, batched across the group's lanes. Every lane then holds
//!    `T_{m-1} ^ C_m`.
//! 4. Finalisation (the last block into the tag, one call per job, two dependent ones for
//!    SILC) batched across all jobs with [`Kernels::encrypt_many`].
//!
//! Before, the two chains ran as two comb passes (CFB, then CBC-MAC reading the ciphertext
//! back), each with its own plan, 16 messages per window: 1.03-1.05 TSC cycles/byte on the
//! realistic mix (Zen 3, VAES), 0.88-0.90 with both chains in one pass. And before that, a
//! generic stepper with both chains side by side in memory spent more time in its per-step
//! glue than in the cipher: 2.3.
//!
//! Where the batch time goes (Intel AVX-512 VM, TSC 2.0 GHz, in a quiet spell; `rdtsc`
//! around the parts of [`encrypt_batch_one_ad_step`] in a throw-away build, TSC ticks per
//! message, the realistic mix (three runs) / 64-byte messages (one)): the comb order 12-13 /
//! 13, `V` 24-26 / 32 (since made from a part per key, which took it from 40-47 to 17-19 in a
//! contended spell), the chain lanes and MAC seeds 9-10 / 13, the message chains 278-296 /
//! 93 (of which the kernel calls 251-265 / 56), the finalisation 17-19 / 24, the tags and
//! results 17 / 21; validation and the benchmark's job building about 30 more. Contended
//! spells put the same parts 25-80% higher. So a short message's time is mostly glue, spread
//! over parts of 10-35 ticks each. A kernel call also has a fixed cost: 16 lanes of one
//! whole block took 388 ticks in the fastest call, of four blocks 640, where one step's AES
//! work is about 60. Long messages run near the AES units' rate: at 1456 bytes the fastest
//! call took 2.09-2.10 ticks per block of either chain (4.4 per lane and step on average),
//! against 1.94-1.96 for a stand-alone loop of the same step (16 lanes, both chains, loads
//! and stores, buffers in L2) in the same minutes. (A contended spell had put the kernel at
//! 77% of the peak; that was the host.) Unequal lengths inside a comb group cost 5-10% of
//! the mix (lengths files of that distribution, each group of 16 set to its mean length:
//! CLOC/ECB 2.58-2.75 -> 2.45-2.49). Building `V`, the lanes and the MAC seeds in one pass
//! over the jobs instead of three measured no faster.
//!
//! # The single path
//! One message runs the same kernel on xmm, its two chains side by side: 3.3 TSC
//! cycles/byte on the realistic mix where the generic stepper (two blocks per step through
//! memory) took 4.9. Decryption runs the same kernel too (below).
//!
//! # Decryption: the keystream first, the plaintext only once the tag matches
//! The MAC chain and the keystream (`K_1 = E(V)`, `K_{i+1} = E(fix1(C_i))`) both read only
//! the ciphertext, so no plaintext is needed before the tag is checked, and none is made
//! before. One pass on the CFB+MAC kernels computes both ([`decrypt_keystream`],
//! [`run_cfb_mac_keystream`]: two independent blocks per message and step, as on encryption),
//! on the batch path and the single path, on every backend. The keystream goes into the job's
//! output when out of place, else into scratch (one comb group's, which the next group
//! reuses; on the stack up to 32 KiB). Per comb group, while its messages are in L1, the tags
//! are made and compared in constant time, and the plaintext (input xor keystream) is made
//! only for the jobs whose tag matches.
//!
//! A job whose tag does not match never has plaintext computed: its output `[..len]` (at most
//! keystream) is zeroed and it gets
//! [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
//!
//! Secrets wiped: every lane's chain states (the AD/encryption state and the MAC state) when
//! the lane is dropped, the chain lanes and MAC states of the passes (their `Drop`, or
//! explicitly on the single path), the batched AD, tail, finalisation and keystream buffers
//! (decryption's scratch keystream too) after use; the stepper wipes its own cipher buffers.

use core::marker::PhantomData;

use crate::aes::{AesKey, ChainLane, Kernels, Lanes};
use crate::block::{
    load_short, pad10, wipe, with_scratch, xor, Block, IoPtrs, SecretBlocks, BLOCK,
};
use crate::modes::{finish_tag, finish_tag_then, Prepared};
use crate::sched::exec::{
    cfb_mac_comb_order, cfb_mac_group_len, run_cfb_mac, run_cfb_mac_keystream, Path,
};
use crate::sched::steps::{run_steps, StepLane};
use crate::{JobResult, Op};

/// CLOC's parameter byte for (AES, 12-byte nonce, 8-byte tag); SILC uses the same value.
pub(crate) const PARAM: u8 = 0xC0;

/// Jobs per batched cipher call (the AD/nonce phase, the finalisation), on the stack.
const CHUNK: usize = 64;

/// What distinguishes CLOC from SILC: the AD/nonce chain that makes `V`, the first MAC input,
/// and the finalisation. Everything else (lanes, the message chains, the scheduling,
/// decryption's keystream-then-verify) is shared.
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
    /// Whether the AD phase is the one cipher call `E(0^128)` (CLOC's empty AD: `fix0` of
    /// `10*`): its output is then the key's [`AesKey::e_zero`], and the phase needs no call.
    /// (Without the call, CLOC's batch time on the realistic mix fell about 2%: Intel AVX-512
    /// VM, CLOC/ECB 2.57 -> 2.53, medians of five alternated runs; the single path's, one
    /// dependent call fewer, 5-8%.)
    fn ad_is_e_zero(_ad: &[u8]) -> bool {
        false
    }
    /// `V` from the AD chain's last value.
    fn v(state: &Block, ad: &[u8], nonce: &[u8]) -> Block;
    /// For a job whose AD phase is `E(0^128)` ([`Scheme::ad_is_e_zero`]): the part of `V`
    /// that depends on the key alone, made from the key's cached `E(0)`; [`Scheme::v_of`]
    /// adds the nonce's. The default is the AD phase's chain value, `V` then made in full by
    /// [`Scheme::v`].
    fn v_key_part(e_zero: &Block) -> Block {
        Self::ad_output(e_zero, &[], 0)
    }
    /// `V` of a job whose AD phase is `E(0^128)`, from its key's [`Scheme::v_key_part`].
    fn v_of(key_part: &Block, nonce: &[u8]) -> Block {
        Self::v(key_part, &[], nonce)
    }
    /// First cipher input of the MAC chain of a non-empty message.
    fn mac_seed(v: &Block) -> Block;
    /// Input of the first finalisation call: for an empty message from `V` alone; else from
    /// `u = T ^ C_m`, the MAC chain's value before the last block xor the last ciphertext
    /// block (zero beyond its `len` bytes), and `len`.
    fn final_input(v: &Block, last: Option<(&Block, usize)>) -> Block;
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
        let b = match rest.first_chunk::<BLOCK>() {
            Some(full) => *full,
            None => pad10(&load_short(rest), rest.len()),
        };
        if step == 0 {
            (u128::from_le_bytes(b) & !0x80).to_le_bytes() // fix0
        } else {
            xor(state, &b)
        }
    }

    fn ad_is_e_zero(ad: &[u8]) -> bool {
        ad.is_empty()
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
        let mut s = xor(state, &param_nonce(nonce));
        // f2 when the AD was 10*-padded (empty or not whole blocks), f1 otherwise.
        let padded = ad.is_empty() || !ad.len().is_multiple_of(BLOCK);
        let v = g_pow(&s, if padded { 1 } else { 8 });
        wipe(&mut s);
        v
    }

    // With empty AD, `V = f2(h(E(0)) ^ PN)` with `PN = PARAM ‖ N ‖ 10*`, and `f2 = G` is
    // linear: `V = G^5(E(0)) ^ G(PN)`. The first term is the key's, made once per key
    // (per run of jobs under one key) instead of per job.
    fn v_key_part(e_zero: &Block) -> Block {
        g_pow(&g_pow(e_zero, 4), 1)
    }

    fn v_of(key_part: &Block, nonce: &[u8]) -> Block {
        xor(key_part, &g_pow(&param_nonce(nonce), 1))
    }

    fn mac_seed(v: &Block) -> Block {
        g_pow(v, 1) // g2
    }

    fn final_input(v: &Block, last: Option<(&Block, usize)>) -> Block {
        match last {
            None => g_pow(v, 2), // g1
            Some((u, n)) => {
                // 10*: the padding bit after the n bytes (C_m is zero beyond them, so the bit
                // is xored into u).
                let mut t = xor(u, &pad10(&[0; BLOCK], n));
                let out = if n < BLOCK {
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

/// `PARAM ‖ N ‖ 10*`, the block CLOC xors into the AD chain's value to make `V` (the nonce is
/// validated to 12 bytes; shorter would pad, longer is cut at the block). Built as a
/// little-endian integer from word loads (a block of byte stores and copies, read back as 16
/// bytes, stalled store forwarding); the 12-byte nonce from two fixed-width loads, with the
/// padding bit a constant.
fn param_nonce(nonce: &[u8]) -> Block {
    match nonce.first_chunk::<12>() {
        Some(n) if nonce.len() == 12 => {
            let lo = u64::from_le_bytes(n[..8].try_into().unwrap_or([0; 8]));
            let hi = u32::from_le_bytes(n[8..].try_into().unwrap_or([0; 4]));
            (u128::from(PARAM) | u128::from(lo) << 8 | u128::from(hi) << 72 | 0x80 << 104)
                .to_le_bytes()
        }
        _ => {
            let n = nonce.len().min(BLOCK - 1);
            let pn = u128::from(PARAM) | u128::from_le_bytes(load_short(&nonce[..n])) << 8;
            pad10(&pn.to_le_bytes(), n + 1)
        }
    }
}

/// `G^k` on the four 32-bit words of `b`: `(a, b, c, d) -> (b, c, d, a ^ b)` per round.
///
/// On the block as one little-endian 128-bit integer `x`, word `i` in bits `32i..32i + 32`.
/// `G` is linear, so each power CLOC uses is a fixed xor of shifted copies of `x`; with `t =
/// x ^ (x >> 32)` = `(a^b, b^c, c^d, d)`:
/// * `G   = (b, c, d, a^b)`             = `x >> 32`, top word `a^b`;
/// * `G^2 = (c, d, a^b, b^c)`           = `(x >> 64) ^ (t << 64)`;
/// * `G^4 = (a^b, b^c, c^d, d^a^b)`     = `t ^ (t << 96)`;
/// * `G^8 = (a^c, b^d, a^b^c, b^c^d)`   = `x ^ (x >> 64) ^ (t << 64)`.
///
/// A few shifts and xors instead of `k` dependent rounds (eight for `f1`, which CLOC applies
/// twice per message). Other powers run the rounds. (Word by word through memory it stored
/// 4-byte pieces that the next cipher call's 16-byte load could not forward: a stall per
/// call, several per message.)
pub(crate) fn g_pow(b: &Block, k: u32) -> Block {
    let x = u128::from_le_bytes(*b);
    let t = x ^ (x >> 32);
    let y = match k {
        1 => (x >> 32) | (u128::from(t as u32) << 96),
        2 => (x >> 64) ^ (t << 64),
        4 => t ^ (t << 96),
        8 => x ^ (x >> 64) ^ (t << 64),
        _ => (0..k).fold(x, |s, _| {
            let ab = (s ^ (s >> 32)) as u32;
            (s >> 32) | (u128::from(ab) << 96)
        }),
    };
    y.to_le_bytes()
}

/// One message's state through all phases.
pub(crate) struct Lane<'k> {
    key: &'k AesKey,
    io: IoPtrs<'k>,
    ad: &'k [u8],
    nonce: &'k [u8],
    /// The AD chain value, then `V` (the message chains run in the passes' own lanes).
    es: Block,
    /// The MAC chain value; after encryption's message phase, `T_{m-1} ^ C_m`; after the
    /// finalisation, the tag block.
    ts: Block,
    ad_steps: usize,
}

impl<'k> Lane<'k> {
    /// A lane before its AD phase; when that phase is `E(0^128)`
    /// ([`Scheme::ad_is_e_zero`]), after it (no steps left, the chain value made from the
    /// key's cached `E(0)`).
    fn new<S: Scheme>(job: &Prepared<'k>) -> Lane<'k> {
        let key = job.lane.key;
        let (es, ad_steps) = if S::ad_is_e_zero(job.ad) {
            (S::ad_output(&key.e_zero, job.ad, 0), 0)
        } else {
            ([0; BLOCK], S::ad_steps(job.ad.len()))
        };
        Lane {
            key,
            io: job.lane.io,
            ad: job.ad,
            nonce: job.nonce,
            es,
            ts: [0; BLOCK],
            ad_steps,
        }
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        wipe(&mut self.es);
        wipe(&mut self.ts);
    }
}

/// The single path's AD chain (and SILC's nonce block) as the stepper sees it: one block per
/// step, the view on the stack (no allocation per message).
struct AdPhase<'a, 'k, S>(&'a mut Lane<'k>, PhantomData<S>);

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

/// Runs the scheme `S` over validated jobs (key, nonce, tag length and direction, output room
/// checked by validation), writing `results[job.index]`.
pub(crate) fn run_scheme<S: Scheme>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    let one_ad_step = |jobs: &[Prepared<'_>]| jobs.iter().all(|j| S::ad_steps(j.ad.len()) == 1);
    match (path, op) {
        (Path::Comb { .. }, Op::Encrypt) if jobs.len() > 1 && one_ad_step(jobs) => {
            encrypt_batch_one_ad_step::<S>(k, jobs, results, path);
        }
        (Path::Comb { .. }, Op::Decrypt) if jobs.len() > 1 => {
            let order = cfb_mac_comb_order(jobs.len(), |i| jobs[i].lane.io.len);
            let vs = if one_ad_step(jobs) {
                vs_one_ad_step::<S>(k, jobs, &order)
            } else {
                let mut lanes: Vec<Lane<'_>> = jobs.iter().map(Lane::new::<S>).collect();
                start_batch::<S>(k, &mut lanes);
                SecretBlocks(order.iter().map(|&i| lanes[i].es).collect())
            };
            decrypt_keystream::<S>(k, jobs, results, &order, &vs, path);
        }
        (Path::Comb { .. }, Op::Encrypt) if jobs.len() > 1 => {
            let mut lanes: Vec<Lane<'_>> = jobs.iter().map(Lane::new::<S>).collect();
            encrypt_batch::<S>(k, jobs, &mut lanes, path);
            report(jobs, &lanes, results);
        }
        // One message (`modes::run` hands the single path one job at a time).
        _ => {
            for i in 0..jobs.len() {
                let job = &mut jobs[i..=i];
                let mut lane = [Lane::new::<S>(&job[0])];
                single_v::<S>(k, &mut lane[0]);
                match op {
                    Op::Encrypt => {
                        encrypt_single::<S>(k, job, &mut lane[0]);
                        report(job, &lane, results);
                    }
                    Op::Decrypt => {
                        let v = core::slice::from_ref(&lane[0].es);
                        decrypt_keystream::<S>(k, job, results, &[0], v, Path::Single);
                    }
                }
            }
        }
    }
}

/// `V` of every job (in `order`) whose AD/nonce phase is one cipher call ([`Scheme::ad_steps`]
/// 1): when the AD phase of all of them is `E(0)` (CLOC's empty AD), from each key's part and
/// the nonce; else from the AD/nonce block of every job (its step 0 reads no chain state),
/// encrypted in batched calls.
fn vs_one_ad_step<S: Scheme>(k: Kernels, jobs: &[Prepared<'_>], order: &[usize]) -> SecretBlocks {
    let in_order = || order.iter().map(|&i| &jobs[i]);
    let e_zero = jobs.iter().all(|j| S::ad_is_e_zero(j.ad));
    if e_zero {
        // `V` from its key's part (made again only where the key changes along the order: a
        // pointer comparison, public) and the nonce.
        let mut key: Option<&AesKey> = None;
        let mut part = [0u8; BLOCK];
        let vs = SecretBlocks(
            in_order()
                .map(|j| {
                    if !key.is_some_and(|k| core::ptr::eq(k, j.lane.key)) {
                        key = Some(j.lane.key);
                        part = S::v_key_part(&j.lane.key.e_zero);
                    }
                    S::v_of(&part, j.nonce)
                })
                .collect(),
        );
        wipe(&mut part);
        vs
    } else {
        let mut vs = SecretBlocks(
            in_order()
                .map(|j| S::ad_input(&[0; BLOCK], j.ad, j.nonce, 0))
                .collect(),
        );
        encrypt_in_chunks::<CHUNK>(k, &mut vs, in_order());
        for (v, j) in vs.iter_mut().zip(in_order()) {
            let mut s = S::ad_output(v, j.ad, 0);
            *v = S::v(&s, j.ad, j.nonce);
            wipe(&mut s);
        }
        vs
    }
}

/// Decryption of `jobs` (a batch, or on the single path one job), from every job's `V` (`vs`,
/// in `order`, the comb order): the MAC and the keystream in one pass
/// ([`run_cfb_mac_keystream`]: per step and lane `T_i = E(T_{i-1} ^ C_i)` and `K_{i+1} =
/// E(fix1(C_i))`, both from the ciphertext, both chains in flight as on encryption). The
/// keystream goes where it cannot be taken for plaintext: into the job's own output when out
/// of place, else into a scratch buffer (an in-place job's output is its ciphertext), wiped
/// on drop. Then, per comb group while its messages are in L1, the tags, their check, and
/// only for the jobs whose tag matches the plaintext, input xor keystream. A job whose tag
/// does not match never has plaintext computed: its output (keystream at most) is zeroed and
/// it gets [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
///
/// Against the verify-first passes it replaced (the MAC chains alone, then the keystream of
/// the jobs that passed, each a comb pass of windows; on the single path the MAC chain, then
/// the keystream), Intel AVX-512 VM:
/// * AVX-512 kernels, the realistic mix (`comb bench --op both`, comb engine, four alternated
///   pairs of runs): decryption's time over encryption's in the same run fell from 1.51-1.53
///   to 1.17-1.23 for CLOC and from 1.46-1.51 to 1.17-1.22 for SILC; over CCM's decryption,
///   from 1.29-1.34 to 1.02-1.06 (CLOC) and from 1.38-1.44 to 1.12-1.15 (SILC).
/// * The AVX2 kernels (AVX-512 hidden from the executor in throw-away builds of both), CLOC
///   batches of 64, fastest call of 150, three alternated runs, TSC ticks per message: the
///   mix 541-629 -> 438-455, 1440 bytes 671-714 -> 637-656, 64 bytes 198-226 -> 143-146.
/// * The single path, CLOC (fastest of 60): the mix 1617-1861 -> 1298-1751, 1440 bytes
///   2910-3264 -> 2250-2833, 64 bytes unchanged (331-409 against 297-401).
fn decrypt_keystream<S: Scheme>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    order: &[usize],
    vs: &[Block],
    path: Path,
) {
    // An in-place job's keystream waits in scratch ([`with_scratch`]: no allocation, and no
    // page faults, up to 32 KiB), one region per comb group, which every group reuses: the
    // executor finishes a group, its plaintext included, before it starts the next. So the
    // scratch is the largest group's in-place bytes, not the batch's; the groups then run as
    // calls of their own. Without in-place jobs, all lanes go to one executor call: a call
    // per group (its key rows assembled and wiped, its lanes set up) took 216-303 TSC ticks
    // per 64-byte message where one call took 183-250 (CLOC, batches of 64, fastest of 150
    // calls, six alternated runs on a busy host; in an earlier set of eight, whose old build
    // linked zeroize 1.9.1, 138-142 against 128-130, and 385-394 against 379-384 on the
    // realistic mix).
    let (scratch_len, per_call) = if jobs.iter().any(|j| j.lane.io.in_place_io()) {
        let p = cfb_mac_group_len(path, order.len());
        let in_place_bytes = |g: &[usize]| -> usize {
            g.iter()
                .map(|&i| jobs[i].lane.io)
                .filter(|io| io.in_place_io())
                .map(|io| io.len)
                .sum()
        };
        (order.chunks(p).map(in_place_bytes).max().unwrap_or(0), p)
    } else {
        (0, order.len().max(1))
    };
    match (order, vs) {
        ([i], [v]) => {
            // One job (the single path): its lane and MAC state on the stack.
            with_scratch(scratch_len.div_ceil(BLOCK), |scratch| {
                let mut dec = [keystream_lane(
                    &jobs[*i],
                    v,
                    &mut scratch.as_flattened_mut(),
                )];
                let mut macs = [S::mac_seed(v)];
                check_keystream::<S, 1>(k, jobs, results, order, vs, &mut dec, &mut macs, path);
                wipe(&mut dec[0].chain);
                wipe(&mut macs[0]);
            });
        }
        _ => with_scratch(scratch_len.div_ceil(BLOCK), |scratch| {
            for (members, group_vs) in order.chunks(per_call).zip(vs.chunks(per_call)) {
                let mut free: &mut [u8] = scratch.as_flattened_mut();
                let mut dec = Lanes(
                    members
                        .iter()
                        .zip(group_vs)
                        .map(|(&i, v)| keystream_lane(&jobs[i], v, &mut free))
                        .collect(),
                );
                let mut macs = SecretBlocks(group_vs.iter().map(S::mac_seed).collect());
                check_keystream::<S, CHUNK>(
                    k, jobs, results, members, group_vs, &mut dec, &mut macs, path,
                );
            }
        }),
    }
}

/// Job `job`'s lane for [`decrypt_keystream`], its chain `v`: an in-place job's output (its
/// keystream) is taken from the front of `free`.
fn keystream_lane<'s>(job: &Prepared<'s>, v: &Block, free: &mut &'s mut [u8]) -> ChainLane<'s> {
    let io = if job.lane.io.in_place_io() {
        let (mine, rest) = core::mem::take(free).split_at_mut(job.lane.io.len);
        *free = rest;
        job.lane.io.with_output(mine)
    } else {
        job.lane.io
    };
    ChainLane {
        io,
        chain: *v,
        key: job.lane.key,
        blocks: io.len / BLOCK,
    }
}

/// [`decrypt_keystream`]'s pass over its lanes (`dec[i]` and `macs[i]` job `order[i]`'s):
/// the keystream and the MAC states, then per group the tags ([`tag_blocks`], `C` blocks per
/// cipher call), their check and the plaintext of the jobs that match.
#[allow(clippy::too_many_arguments)]
fn check_keystream<S: Scheme, const C: usize>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    order: &[usize],
    vs: &[Block],
    dec: &mut [ChainLane<'_>],
    macs: &mut [Block],
    path: Path,
) {
    run_cfb_mac_keystream(k, dec, macs, path, |group, tags, first| {
        let members = &order[first..first + group.len()];
        let group_vs = &vs[first..first + group.len()];
        tag_blocks::<S, C>(k, tags, group_vs.iter(), members.iter().map(|&i| &jobs[i]));
        for ((&i, d), t) in members.iter().zip(group).zip(tags.iter()) {
            let job = &mut jobs[i];
            let (io, slot) = (job.lane.io, &mut results[job.index]);
            finish_tag_then(job, t, slot, io.len, || io.xor_to_output(&d.io));
        }
    });
}

/// Encryption of a batch whose AD/nonce phase is one cipher call per job (CLOC: at most 16
/// bytes of AD; SILC: none; the realistic mix has none), the common case, in fewer passes
/// over the jobs than [`encrypt_batch`]: the phase's blocks are encrypted in batched calls and
/// become `V` in place; the CFB chains start from `V` and the MAC chains from `mac_seed(V)`
/// directly, without per-job [`Lane`] records; the finalisation makes its cipher inputs in
/// the MAC states' own buffer, and the tags and results are written in the same pass.
///
/// The same cipher calls as [`encrypt_batch`], in the same order. On the realistic mix
/// (batch 64) it ran 3% fewer instructions than that path (`valgrind --tool=callgrind`, the
/// comb engine's timed calls, xmm kernels: CLOC 10.75 -> 10.41 million, SILC 10.80 -> 10.48),
/// and in alternated `comb bench` runs on the Zen 3 VM CLOC's time over CBC's in the same run
/// fell from 1.84-2.04 to 1.76-1.86 (SILC 1.86-2.06 to 1.75-1.92; four pairs).
///
/// With CLOC's empty AD, `V` is the key's part ([`Scheme::v_key_part`], made once per key
/// along the order) xor the nonce's ([`Scheme::v_of`]), where each job's `V` had been made in
/// full from its key's `E(0)`: 66 instructions fewer per job (the realistic mix 10.24 -> 9.99
/// million, 64-byte messages 3.36 -> 3.11, `scripts/count-instructions.sh`), and the `V` loop
/// took 17-19 TSC ticks per message against 40-47 (Intel AVX-512 VM, contended, `rdtsc`
/// around it in a throw-away build, three alternated runs each on the mix and at 64 bytes).
fn encrypt_batch_one_ad_step<S: Scheme>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
) {
    // Every per-job array below is in the comb order of the message chains: `vs[i]`,
    // `enc[i]` and `macs[i]` are job `order[i]`'s.
    let order = cfb_mac_comb_order(jobs.len(), |i| jobs[i].lane.io.len);
    let in_order = || order.iter().map(|&i| &jobs[i]);
    let vs = vs_one_ad_step::<S>(k, jobs, &order);

    // Both message chains; every lane's MAC state becomes `T ^ C_m` (see `encrypt_batch`).
    let mut enc = Lanes(
        in_order()
            .zip(vs.iter())
            .map(|(j, v)| ChainLane {
                io: j.lane.io,
                chain: *v,
                key: j.lane.key,
                blocks: j.lane.io.len / BLOCK,
            })
            .collect(),
    );
    let mut macs = SecretBlocks(vs.iter().map(S::mac_seed).collect());
    run_cfb_mac(k, &mut enc, &mut macs, path);
    drop(enc);

    // The finalisation, in place in `macs`, then the tags (validation gave every job an
    // output tag).
    tag_blocks::<S, CHUNK>(k, &mut macs, vs.iter(), in_order());
    for (m, &i) in macs.iter().zip(order.iter()) {
        let job = &mut jobs[i];
        let len = job.lane.io.len;
        // Inlined (`finish_tag` is a call per job): 16 fewer instructions per message at 64
        // bytes (804 -> 788, `scripts/count-instructions.sh aes128-cloc --dist fixed
        // --lengths 64`). Its time is within the noise: Intel AVX-512 VM, batches of 64,
        // fastest of 100 calls, TSC ticks per message, four alternated pairs; the two in a
        // quiet spell 64 bytes 111-112 -> 108-111, the realistic mix 332-334 -> 330-331; the
        // two after it, as the host got busy, 112-154 -> 142-173 and 328-425 -> 415-497.
        finish_tag_then(job, m, &mut results[job.index], len, || {});
    }
}

/// `blocks[i]` encrypted under the `i`-th job's key (`jobs` yields one per block), `C` blocks per
/// multi-key call ([`CHUNK`] on the batch path, one on the single path, whose key array then
/// holds one key, not 64).
///
/// On ymm these calls (with the tails') took about as many `perf` samples as the message
/// chains' kernel on 72-byte messages, for half as many blocks. Their inputs are written as
/// 16-byte blocks and the ECB kernel loads 32 bytes, which cannot be forwarded from two
/// stores (about 20 cycles on Zen 3); repacking the inputs with 32-byte stores first measured
/// no faster (72 bytes and the realistic mix, four alternated pairs), nor did the xmm kernel.
fn encrypt_in_chunks<'j, 'k: 'j, const C: usize>(
    k: Kernels,
    blocks: &mut [Block],
    jobs: impl Iterator<Item = &'j Prepared<'k>>,
) {
    let mut keys = jobs.map(|j| j.lane.key);
    for c in blocks.chunks_mut(C) {
        let mut row = [keys.next().expect("a job per block"); C];
        for slot in &mut row[1..c.len()] {
            *slot = keys.next().expect("a job per block");
        }
        k.encrypt_many(c, &row[..c.len()]);
    }
}

/// One message's AD chain on the stepper (no steps when it is `E(0)`, [`Lane::new`]), then
/// `V`, left in `es`.
fn single_v<S: Scheme>(k: Kernels, l: &mut Lane<'_>) {
    run_steps(k, &mut [AdPhase::<S>(l, PhantomData)], Path::Single);
    l.es = S::v(&l.es, l.ad, l.nonce);
}

/// One message's encryption from its `V` ([`single_v`]): both chains side by side on the xmm
/// CFB+MAC kernel, then the partial last block (`ts` becomes `T ^ C_m`), and the
/// finalisation.
fn encrypt_single<S: Scheme>(k: Kernels, jobs: &[Prepared<'_>], l: &mut Lane<'_>) {
    let mut lane = [enc_lane(l)];
    let mut mac = [S::mac_seed(&l.es)];
    run_cfb_mac(k, &mut lane, &mut mac, Path::Single);
    l.ts = mac[0];
    wipe(&mut mac[0]);
    wipe(&mut lane[0].chain);
    finalise::<S, 1>(k, jobs, core::slice::from_mut(l));
}

/// Encryption of a batch whose AD phase is not one step for every job: the AD phase batched
/// step by step across jobs, then both chains of every message in one comb pass (per group,
/// while its messages are in L1, the partial last blocks: every lane's `ts` becomes `T ^ C_m`
/// and the whole ciphertext is written), and the finalisation batched across jobs.
fn encrypt_batch<S: Scheme>(k: Kernels, jobs: &[Prepared<'_>], lanes: &mut [Lane<'_>], path: Path) {
    start_batch::<S>(k, lanes);
    let order = cfb_mac_comb_order(lanes.len(), |i| lanes[i].io.len);
    let mut enc = Lanes(order.iter().map(|&i| enc_lane(&lanes[i])).collect());
    let mut macs = SecretBlocks(order.iter().map(|&i| S::mac_seed(&lanes[i].es)).collect());
    run_cfb_mac(k, &mut enc, &mut macs, path);
    for (&i, u) in order.iter().zip(macs.iter()) {
        lanes[i].ts = *u;
    }
    finalise::<S, CHUNK>(k, jobs, lanes);
}

/// The AD chain of every lane, leaving `V` in `es`, batched across lanes step by step: all
/// lanes' step-`s` blocks are independent, so each step is one multi-key cipher call per
/// [`CHUNK`] lanes. The lanes of a chunk are taken longest AD first, so the lanes still
/// running at any step are a prefix.
///
/// (With empty AD that is one batched call for the whole batch, one block per job: no plan
/// and no per-step lane views, which the stepper needed. The realistic mix's empty AD takes
/// the shorter routes of [`vs_one_ad_step`], where this runs for no job.)
fn start_batch<S: Scheme>(k: Kernels, lanes: &mut [Lane<'_>]) {
    let mut order: Vec<usize> = (0..lanes.len()).collect();
    // Stable, and linear when every lane has the same AD length.
    order.sort_by_key(|&i| core::cmp::Reverse(lanes[i].ad_steps));
    let mut buf = [[0u8; BLOCK]; CHUNK];
    for chunk in order.chunks(CHUNK) {
        let Some(&first) = chunk.first() else {
            continue;
        };
        let keys: [&AesKey; CHUNK] =
            core::array::from_fn(|j| lanes[chunk[j.min(chunk.len() - 1)]].key);
        for step in 0..lanes[first].ad_steps {
            let live = chunk.partition_point(|&i| lanes[i].ad_steps > step);
            for (b, &i) in buf.iter_mut().zip(&chunk[..live]) {
                let l = &lanes[i];
                *b = S::ad_input(&l.es, l.ad, l.nonce, step);
            }
            k.encrypt_many(&mut buf[..live], &keys[..live]);
            for (b, &i) in buf.iter().zip(&chunk[..live]) {
                let l = &mut lanes[i];
                l.es = S::ad_output(b, l.ad, step);
            }
        }
        for &i in chunk {
            let l = &mut lanes[i];
            l.es = S::v(&l.es, l.ad, l.nonce);
        }
    }
    buf.iter_mut().for_each(wipe);
}

/// A lane's CFB chain for the CFB+MAC kernels: from `V` over its whole blocks.
fn enc_lane<'k>(l: &Lane<'k>) -> ChainLane<'k> {
    ChainLane {
        io: l.io,
        chain: l.es,
        key: l.key,
        blocks: l.io.len / BLOCK,
    }
}

/// The tag blocks of every lane (left in `ts`, which held its `T ^ C_m`), batched across
/// lanes ([`tag_blocks`], per `C` lanes: [`CHUNK`], or one on the single path, whose buffers
/// then hold one block). `lanes[i]` is `jobs[i]`'s.
fn finalise<S: Scheme, const C: usize>(k: Kernels, jobs: &[Prepared<'_>], lanes: &mut [Lane<'_>]) {
    for (chunk, js) in lanes.chunks_mut(C).zip(jobs.chunks(C)) {
        let n = chunk.len();
        let mut buf = [[0u8; BLOCK]; C];
        for (b, l) in buf.iter_mut().zip(chunk.iter()) {
            *b = l.ts;
        }
        tag_blocks::<S, C>(k, &mut buf[..n], chunk.iter().map(|l| &l.es), js.iter());
        for (b, l) in buf.iter_mut().zip(chunk.iter_mut()) {
            l.ts = *b;
            wipe(b);
        }
    }
}

/// The finalisation of `jobs`, in place: `blocks[i]` holds the `i`-th job's `T ^ C_m` (ignored
/// for an empty message) and becomes its tag block; `vs` gives each job's `V` (both in the
/// order `jobs` yields them). `FINAL_CALLS` batched multi-key cipher calls
/// ([`encrypt_in_chunks`], `C` blocks each).
///
/// On the realistic mix this is 4-5% of CLOC's and SILC's batch time (a timing-only build
/// without it, Intel AVX-512 VM, three alternated runs). Run instead as further steps of the
/// AVX-512 CFB+MAC kernel (a lane's MAC half taking each final call's input between steps,
/// its data masked off), it was much slower: CLOC/ECB 2.51 -> 3.04 on the mix, 2.23 -> 2.80
/// at 1456 bytes (alternated runs), the grown kernel's step loop keeping its states in memory.
fn tag_blocks<'v, 'j, 'k: 'j, S: Scheme, const C: usize>(
    k: Kernels,
    blocks: &mut [Block],
    vs: impl Iterator<Item = &'v Block>,
    jobs: impl Iterator<Item = &'j Prepared<'k>> + Clone,
) {
    for ((b, v), j) in blocks.iter_mut().zip(vs).zip(jobs.clone()) {
        let len = j.lane.io.len;
        *b = if len == 0 {
            S::final_input(v, None)
        } else {
            S::final_input(v, Some((b, len - BLOCK * (len.div_ceil(BLOCK) - 1))))
        };
    }
    encrypt_in_chunks::<C>(k, blocks, jobs.clone());
    if S::FINAL_CALLS == 2 {
        for (b, j) in blocks.iter_mut().zip(jobs.clone()) {
            *b = S::final_second(b, j.lane.io.len);
        }
        encrypt_in_chunks::<C>(k, blocks, jobs);
    }
}

/// Encryption's tags and results.
fn report(jobs: &mut [Prepared<'_>], lanes: &[Lane<'_>], results: &mut [JobResult]) {
    for (job, l) in jobs.iter_mut().zip(lanes) {
        let len = l.io.len;
        finish_tag(job, &l.ts, &mut results[job.index], len);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::test_bytes as bytes;

    /// `G` once, literally as the specification defines it on four 32-bit words.
    fn g_words(b: &Block) -> Block {
        let w: [u32; 4] =
            core::array::from_fn(|i| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()));
        let g = [w[1], w[2], w[3], w[0] ^ w[1]];
        let mut out = [0u8; BLOCK];
        for (i, x) in g.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// `PARAM ‖ N ‖ 10*` for every nonce length the code can see (validation lets only 12
    /// through, which takes the fixed-width read), byte by byte as the specification writes
    /// it.
    #[test]
    fn param_nonce_is_param_nonce_padded() {
        for n in 0..BLOCK {
            let nonce = bytes(77 + n as u64, n);
            let mut want = [0u8; BLOCK];
            want[0] = PARAM;
            want[1..=n].copy_from_slice(&nonce);
            if n + 1 < BLOCK {
                want[n + 1] = 0x80; // a 15-byte nonce fills the block: no padding
            }
            assert_eq!(param_nonce(&nonce), want, "nonce of {n} bytes");
        }
    }

    /// CLOC's `V` with empty AD from the key's part and the nonce is the `V` that the AD
    /// phase's chain value (`h(E(0))`) and [`Scheme::v`] make, for every nonce length the
    /// code can see.
    #[test]
    fn v_from_key_part_is_v() {
        for seed in 0..20 {
            let e_zero: Block = bytes(seed, BLOCK).try_into().unwrap();
            let part = Cloc::v_key_part(&e_zero);
            let state = Cloc::ad_output(&e_zero, &[], 0);
            for n in 0..BLOCK {
                let nonce = bytes(1000 + seed * 16 + n as u64, n);
                assert_eq!(
                    Cloc::v_of(&part, &nonce),
                    Cloc::v(&state, &[], &nonce),
                    "seed {seed}, nonce of {n} bytes"
                );
            }
        }
    }

    /// Every power, the closed forms (1, 2, 4, 8) and the rounds alike, is that many
    /// applications of the word-wise `G`.
    #[test]
    fn g_pow_is_repeated_g() {
        for seed in 0..20 {
            let b: Block = bytes(seed, BLOCK).try_into().unwrap();
            let mut want = b;
            for k in 0..=9 {
                assert_eq!(g_pow(&b, k), want, "G^{k}, seed {seed}");
                want = g_words(&want);
            }
        }
    }
}
