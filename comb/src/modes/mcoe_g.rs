//! McOE-G with AES-128 (Fleischmann, Forler, Lucks, Wenzel; the project's specification
//! `specs/mcoe-g.md`): a nonce-misuse-resistant on-line AEAD mode, one tweakable-block-cipher
//! call per block, every call depending on the previous one.
//!
//! * Key `K1 ‖ K2` (32 bytes; [`AesKey::new`] expands it as AES-256, a schedule this mode
//!   never uses): K1 the AES-128 key, K2 the multiplier of the tweak hash. Both are derived
//!   once per key and cached with it ([`McoeKeys`], slot [`crate::aes::slot::MCOE_G`]),
//!   together with the length masks `Ẽ^{1^128}(<r>)`, r = 1..15.
//! * Tweakable cipher `Ẽ^U(X) = E(X ⊕ U⊗K2) ⊕ U⊗K2`, `⊗` the GHASH product (the spec's field
//!   is GCM's, bit order included), inverse `D(Y ⊕ U⊗K2) ⊕ U⊗K2`.
//! * Header: the blocks of `pad10(A)` (none for empty A), then the nonce; chained
//!   `U ← Ẽ^U(H_j) ⊕ H_j`; the nonce's output is τ.
//! * Body: `C_i = Ẽ^U(M_i)`, `U ← M_i ⊕ C_i`; a partial last block of r bytes is
//!   tag-split: `X = (M* ‖ τ[..16-r]) ⊕ Ẽ^{1^128}(<r>)`, `C* = Ẽ^U(X)`, `U ← X ⊕ C*`.
//! * Tag `Z = Ẽ^U(τ)`: the tag is Z (r = 0) or `C*[r..] ‖ Z[..r]` (the detached tag is the
//!   last 16 bytes of the spec's `C`, so the ciphertext is exactly `|M|` bytes).
//!
//! Scheduling. Every call of a message depends on the previous one (through U), so one
//! message is latency-bound: a field multiplication, then an AES call (about 64 core cycles
//! per block here). The chain runs in fused kernels (module `fused`) that keep, per lane, the
//! tweak, the mask `U⊗K2`, the input and the AES state in registers, fold the mask into the
//! first and last round keys, and write only the output block; a message is three runs of
//! them — header (`pad10(A)`, nonce), body (whole blocks), tail (split block, τ) — each over
//! all jobs at once. On the batch path each run follows the comb plan (sorted by length,
//! windows of equal progress), so a window's P multiplications and P AES calls per step are
//! independent and overlap; with VAES and VPCLMULQDQ two lanes share a ymm register, up to
//! 16 lanes per kernel call (measured, 2 KiB messages: xmm 8 lanes 1.06, ymm 8 lanes 0.74,
//! ymm 16 lanes 0.68 TSC cycles/byte). Multiplier: the 4-multiplication schoolbook product on
//! both paths. On the batch path papers/000 §6.4 says so (with chains interleaved,
//! throughput counts; measured on Zen 1, Karatsuba 1.28-1.33 against schoolbook 1.06 TSC
//! cycles/byte at 2 KiB on xmm). For one chain the paper preferred the 3-multiplication
//! Karatsuba product (fewer multiplications on the critical path); on the Intel AVX-512 VM
//! the schoolbook chain is the faster one (`comb bench --paper`, Fig. 5: one chain 1.10
//! against 1.63 core cycles/byte), and so was this single path with it (alternated builds,
//! core cycles/byte: the realistic mix 4.44-4.74 -> 4.15-4.24, 2048 B 3.97-4.03 ->
//! 3.56-3.71, 128 B 6.83-6.90 -> 6.41-6.52; on Zen 1 the two had been equal within noise).
//! Where the CPU has no PCLMULQDQ the whole chain runs on the comb stepper ([`StepLane`] of
//! width 1 whose `load` computes the mask with [`GhashKey::mul_h`] and whose `store` folds
//! the output into the next tweak), the tags as one batched [`Kernels::encrypt_many`]; a unit
//! test checks the two paths give the same bytes.
//!
//! Decryption cannot verify before decrypting (the tag is the end of the chain through every
//! plaintext block): plaintext is written as the chain goes, and on a tag mismatch (compared in
//! constant time) the whole output `[..len]` is zeroed before the job fails with
//! [`Error::AuthenticationFailed`].

use crate::aes::{AesKey, Derived, Kernels};
use crate::block::{
    load_short, merge, pad10, shift_to_back, shift_to_front, splice, tag_matches, wipe, xor, Block,
    IoPtrs, BLOCK,
};
use crate::gf128::{GhashBackend, GhashKey, MulVariant};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::steps::{run_steps, StepLane};
use crate::{Error, JobResult, Op};

/// What McOE-G derives from a key `K1 ‖ K2` and keeps with it.
pub(crate) struct McoeKeys {
    /// The AES-128 key K1.
    k1: AesKey,
    /// K2 as a GHASH key: the schoolbook multiplier on xmm PCLMULQDQ (a single product per
    /// call, where the ymm backend would run the same xmm code), or the best this CPU has.
    h: GhashKey,
    /// `len_mask[r] = Ẽ^{1^128}(<r>)` for r = 1..15 (entry 0 unused, zero).
    len_mask: [Block; BLOCK],
}

impl Derived for McoeKeys {
    const SLOT: usize = crate::aes::slot::MCOE_G;

    fn derive(key: &AesKey) -> McoeKeys {
        let (mut k1, mut k2) = key.raw_halves();
        let aes = match AesKey::new(&k1) {
            Ok(a) => a,
            // `key` exists, so AES-NI is present and a 16-byte key always expands.
            Err(_) => unreachable!("AES-128 expansion cannot fail once an AesKey exists"),
        };
        let h = GhashKey::with_backend(&k2, GhashBackend::Clmul(MulVariant::Schoolbook))
            .unwrap_or_else(|_| GhashKey::new(&k2));
        let mut h1 = h.mul_h(&[0xff; BLOCK]);
        let mut len_mask = [[0u8; BLOCK]; BLOCK];
        for (r, m) in len_mask.iter_mut().enumerate().skip(1) {
            let mut x = h1;
            x[BLOCK - 1] ^= r as u8;
            aes.encrypt_block(&mut x);
            *m = xor(&x, &h1);
            wipe(&mut x);
        }
        wipe(&mut h1);
        wipe(&mut k1);
        wipe(&mut k2);
        McoeKeys {
            k1: aes,
            h,
            len_mask,
        }
    }
}

impl Drop for McoeKeys {
    fn drop(&mut self) {
        self.len_mask.iter_mut().for_each(wipe);
        // `k1` and the GHASH key wipe themselves.
    }
}

/// One message's chain state across the stepper passes and the tag step.
struct State<'a> {
    io: IoPtrs<'a>,
    keys: &'a McoeKeys,
    ad: &'a [u8],
    nonce: Block,
    /// Blocks of `pad10(A)` (0 for empty A).
    a: usize,
    /// Whole message blocks and bytes of the partial last block.
    m: usize,
    r: usize,
    /// Global step range of the current stepper pass.
    start: usize,
    end: usize,
    /// The tweak U.
    u: Block,
    /// The mask `U⊗K2` of the call in flight.
    h: Block,
    /// The chain input of the call in flight (header block, message or ciphertext block, X
    /// or C*): `U ← x ⊕ output` after it.
    x: Block,
    tau: Block,
    /// Encryption: C* (its bytes r.. are the tag's first part). Decryption: the unmasked X
    /// (bytes r.. must equal τ[..16-r]).
    last: Block,
    /// Decryption: the received tag.
    tag_in: Block,
    /// The tag block `Z = Ẽ^U(τ)`.
    z: Block,
}

impl Drop for State<'_> {
    fn drop(&mut self) {
        for b in [
            &mut self.u,
            &mut self.h,
            &mut self.x,
            &mut self.tau,
            &mut self.last,
            &mut self.z,
        ] {
            wipe(b);
        }
    }
}

/// What global step `s` of a message processes.
#[derive(Clone, Copy)]
enum Kind {
    Ad(usize),
    Nonce,
    Body(usize),
    Final,
}

impl<'a> State<'a> {
    fn new(job: &Prepared<'a>) -> State<'a> {
        let keys: &'a McoeKeys = job.lane.key.derived::<McoeKeys>();
        let io = job.lane.io;
        let ad: &'a [u8] = job.ad;
        // Validation admits 16-byte tags only.
        let tag_in = match &job.tag {
            TagIo::In(t) => t.first_chunk::<BLOCK>().copied().unwrap_or([0; BLOCK]),
            _ => [0; BLOCK],
        };
        State {
            io,
            keys,
            ad,
            nonce: job.nonce.try_into().unwrap_or([0; BLOCK]),
            a: if ad.is_empty() {
                0
            } else {
                ad.len() / BLOCK + 1
            },
            m: io.len / BLOCK,
            r: io.len % BLOCK,
            start: 0,
            end: 0,
            u: [0; BLOCK],
            h: [0; BLOCK],
            x: [0; BLOCK],
            tau: [0; BLOCK],
            last: [0; BLOCK],
            tag_in,
            z: [0; BLOCK],
        }
    }

    /// Steps of the header (AD blocks and nonce).
    fn header_steps(&self) -> usize {
        self.a + 1
    }

    /// Steps of the header and the body (whole blocks, and the split block if r > 0).
    fn chain_steps(&self) -> usize {
        self.a + 1 + self.m + usize::from(self.r > 0)
    }

    fn kind(&self, s: usize) -> Kind {
        if s < self.a {
            Kind::Ad(s)
        } else if s == self.a {
            Kind::Nonce
        } else if s <= self.a + self.m {
            Kind::Body(s - self.a - 1)
        } else {
            Kind::Final
        }
    }

    /// Block `j` of `pad10(A)`.
    fn ad_block(&self, j: usize) -> Block {
        let rest = &self.ad[BLOCK * j..];
        let n = rest.len().min(BLOCK);
        pad10(&load_short(&rest[..n]), n)
    }

    /// The cipher input of step `s`; `INV`: the body runs the inverse cipher.
    #[inline]
    fn load<const INV: bool>(&mut self, s: usize) -> Block {
        self.h = self.keys.h.mul_h(&self.u);
        self.x = match self.kind(s) {
            Kind::Ad(j) => self.ad_block(j),
            Kind::Nonce => self.nonce,
            Kind::Body(i) => self.io.read_block(BLOCK * i),
            Kind::Final => {
                // The r input bytes, then (encryption) the first 16 - r bytes of τ masked
                // with the length block, or (decryption) the first 16 - r tag bytes: C*.
                let r = self.r;
                let head = self.io.read_from(BLOCK * self.m);
                if INV {
                    splice(&head, r, &self.tag_in)
                } else {
                    xor(&splice(&head, r, &self.tau), &self.keys.len_mask[r])
                }
            }
        };
        xor(&self.x, &self.h)
    }

    /// Takes the cipher output of step `s`.
    #[inline]
    fn store<const INV: bool>(&mut self, s: usize, out: &Block) {
        let mut y = xor(out, &self.h);
        match self.kind(s) {
            Kind::Ad(_) => {}
            Kind::Nonce => self.tau = y,
            Kind::Body(i) => self.io.write_block(BLOCK * i, &y),
            Kind::Final => {
                let r = self.r;
                let mut ks = if INV {
                    // y = X before unmasking; the message bytes are X ⊕ mask.
                    self.last = xor(&y, &self.keys.len_mask[r]);
                    xor(&self.last, &self.x)
                } else {
                    // y = C*; the output bytes are its first r.
                    self.last = y;
                    xor(&y, &self.io.read_from(BLOCK * self.m))
                };
                // Output tail = input tail ⊕ ks = (decryption) X[..r], (encryption) C*[..r].
                self.io.xor_tail(&ks);
                wipe(&mut ks);
            }
        }
        self.u = xor(&self.x, &y);
        wipe(&mut y);
    }
}

/// A message in one stepper pass: `INV` = the body's inverse-cipher pass of decryption.
struct Pass<'s, 'a, const INV: bool>(&'s mut State<'a>);

impl<'s, 'a, const INV: bool> StepLane<'a> for Pass<'s, 'a, INV> {
    const WIDTH: usize = 1;
    const DECRYPT: bool = INV;

    fn steps(&self) -> usize {
        self.0.end - self.0.start
    }

    fn key(&self, _slot: usize) -> &'a AesKey {
        let keys: &'a McoeKeys = self.0.keys;
        &keys.k1
    }

    #[inline]
    fn load(&mut self, step: usize, inputs: &mut [Block]) {
        let s = self.0.start + step;
        inputs[0] = self.0.load::<INV>(s);
    }

    #[inline]
    fn store(&mut self, step: usize, outputs: &[Block]) {
        let s = self.0.start + step;
        self.0.store::<INV>(s, &outputs[0]);
    }
}

/// Runs one stepper pass over the states' steps `[start, end)` as set by `range`; states
/// with an empty range take no part.
fn pass<const INV: bool>(
    k: Kernels,
    states: &mut [State<'_>],
    path: Path,
    range: impl Fn(&State<'_>) -> (usize, usize),
) {
    for st in states.iter_mut() {
        (st.start, st.end) = range(st);
    }
    if let [one] = states {
        if one.end > one.start {
            run_steps(k, &mut [Pass::<INV>(one)], path);
        }
    } else {
        let mut lanes: Vec<Pass<'_, '_, INV>> = states
            .iter_mut()
            .filter(|s| s.end > s.start)
            .map(Pass::<INV>)
            .collect();
        if !lanes.is_empty() {
            run_steps(k, &mut lanes, path);
        }
    }
}

/// Jobs per batched tag call (stack arrays: no allocation per call on the single path).
const CHUNK: usize = 64;

/// Runs McOE-G `op` over validated jobs (32-byte keys, 16-byte nonces, 16-byte tags),
/// writing `results[job.index]`.
pub(crate) fn run<'a>(
    k: Kernels,
    jobs: &mut [Prepared<'a>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    if let [job] = jobs {
        let mut st = [State::new(job)];
        process(k, &mut st, core::slice::from_mut(job), results, op, path);
    } else {
        let mut st: Vec<State<'a>> = jobs.iter().map(State::new).collect();
        process(k, &mut st, jobs, results, op, path);
    }
}

fn process(
    k: Kernels,
    states: &mut [State<'_>],
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    #[cfg(test)]
    let forced = tests::FORCE_STEPPED.with(|f| f.get());
    #[cfg(not(test))]
    let forced = false;
    if forced || !fused::process(k, states, op, path) {
        stepped(k, states, op, path);
    }
    for (st, job) in states.iter_mut().zip(jobs.iter_mut()) {
        results[job.index] = finish(st, job);
        wipe(&mut st.z);
    }
}

/// The whole chain on the comb stepper, one block per step and lane, and the tags batched:
/// for CPUs without a PCLMULQDQ backend for K2 (the fused kernels' field multiplier).
fn stepped(k: Kernels, states: &mut [State<'_>], op: Op, path: Path) {
    match op {
        Op::Encrypt => pass::<false>(k, states, path, |s| (0, s.chain_steps())),
        Op::Decrypt => {
            pass::<false>(k, states, path, |s| (0, s.header_steps()));
            pass::<true>(k, states, path, |s| (s.header_steps(), s.chain_steps()));
        }
    }
    // The tag Z = Ẽ^U(τ) of every job, CHUNK per batched cipher call.
    for sts in states.chunks_mut(CHUNK) {
        let n = sts.len();
        let mut z = [[0u8; BLOCK]; CHUNK];
        let mut keys: [&AesKey; CHUNK] = [&sts[0].keys.k1; CHUNK];
        for ((zz, kk), st) in z.iter_mut().zip(keys.iter_mut()).zip(sts.iter_mut()) {
            st.h = st.keys.h.mul_h(&st.u);
            *zz = xor(&st.tau, &st.h);
            *kk = &st.keys.k1;
        }
        k.encrypt_many(&mut z[..n], &keys[..n]);
        for (zz, st) in z.iter_mut().zip(sts.iter_mut()) {
            st.z = xor(zz, &st.h);
            wipe(zz);
        }
    }
}

/// Writes (encryption) or checks (decryption) the tag of one job from its Z.
fn finish(st: &State<'_>, job: &mut Prepared<'_>) -> JobResult {
    let t = &st.z;
    let r = st.r;
    let len = st.io.len;
    // The full 16-byte tag: Z, or C*[r..] ‖ Z[..r] with a split block.
    let mut full = if r > 0 {
        merge(
            &shift_to_front(&st.last, r),
            &shift_to_back(t, BLOCK - r),
            BLOCK - r,
        )
    } else {
        *t
    };
    let res = match &mut job.tag {
        TagIo::Out(out) => {
            // Validation admits 16-byte tags only: one block store.
            if let Some(o) = out.first_chunk_mut::<BLOCK>() {
                *o = full;
            }
            Ok(len)
        }
        TagIo::In(_) => {
            // With a split block the first 16 - r bytes are the check X[r..] = τ[..16-r];
            // the received tag's last r bytes are Z[..r].
            let mut expected = if r > 0 {
                merge(&st.tau, &st.tag_in, BLOCK - r)
            } else {
                st.tag_in
            };
            let ok = tag_matches(&full, &expected);
            wipe(&mut expected);
            if ok {
                Ok(len)
            } else {
                st.io.zero_output(len);
                Err(Error::AuthenticationFailed)
            }
        }
        TagIo::None => Err(Error::TagMisuse), // excluded by validation
    };
    wipe(&mut full);
    res
}

/// The whole chain in fused kernels: per block the tweak mask `U⊗K2` (PCLMULQDQ), the
/// AES-128 call with the mask folded into its first and last round keys, and the next
/// tweak, all in registers; nothing leaves them but the output block. (The comb stepper
/// hands every block through memory and a by-value [`GhashKey::mul_h`]: measured 3-5x
/// slower per block.)
///
/// A message is three runs of the same kernel, each a comb plan over all jobs: the header
/// (`pad10(A)` then the nonce, copied into a scratch buffer whose last block becomes τ),
/// the body's whole blocks (in the caller's buffer), and the tail — encryption: the split
/// block X (if `r > 0`) then τ, whose output is Z; decryption: the split block C* through
/// the inverse cipher, then τ forward. Every block of every run is one chain step, exactly
/// as the spec's sequence of `Ẽ` calls.
mod fused {
    use super::State;
    use crate::aes::Kernels;
    use crate::block::xor;
    use crate::block::{splice, wipe, Block, IoPtrs, BLOCK};
    use crate::sched::exec::Path;
    use crate::Op;

    /// Runs McOE-G `op` over `states` up to Z (`st.z`, with `st.tau`, `st.last`, the output
    /// written); `false`, with nothing done, where the CPU has no fused kernel (no
    /// PCLMULQDQ backend for K2).
    pub(super) fn process(k: Kernels, states: &mut [State<'_>], op: Op, path: Path) -> bool {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            let Some(e) = x86::Engine::new(k, states) else {
                return false;
            };
            run(&e, states, op, path);
            true
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            let _ = (k, states, op, path);
            false
        }
    }

    /// Scratch blocks for the header and tail runs, wiped when dropped.
    struct Scratch(Vec<u8>);

    impl Drop for Scratch {
        fn drop(&mut self) {
            // Whole blocks only, each one 16-byte volatile store (`zeroize` on bytes writes
            // them one at a time: measured a third of this function's time at 64 bytes).
            self.0.as_chunks_mut::<BLOCK>().0.iter_mut().for_each(wipe);
        }
    }

    /// Runs `lanes` (one per state, in order; `inv`: the inverse cipher) and takes their
    /// tweaks back into the states.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn advance(
        e: &x86::Engine,
        inv: bool,
        lanes: &mut [x86::Lane<'_>],
        states: &mut [State<'_>],
        path: Path,
    ) {
        if inv {
            e.drive::<true>(lanes, path);
        } else {
            e.drive::<false>(lanes, path);
        }
        for (st, l) in states.iter_mut().zip(lanes.iter()) {
            st.u = l.u;
        }
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn run(e: &x86::Engine, states: &mut [State<'_>], op: Op, path: Path) {
        use x86::Lane;
        let inv = op == Op::Decrypt;

        // Header: pad10(A) ‖ N per job, in place in scratch; τ is the nonce's output.
        let total: usize = states.iter().map(|s| s.header_steps()).sum();
        let mut hdr = Scratch(vec![0u8; BLOCK * total]);
        {
            let mut rest: &mut [u8] = &mut hdr.0;
            let mut lanes: Vec<Lane<'_>> = Vec::with_capacity(states.len());
            for st in states.iter() {
                let n = st.header_steps();
                let (mine, more) = core::mem::take(&mut rest).split_at_mut(BLOCK * n);
                rest = more;
                for (j, b) in mine.as_chunks_mut::<BLOCK>().0.iter_mut().enumerate() {
                    *b = if j < st.a { st.ad_block(j) } else { st.nonce };
                }
                lanes.push(e.lane(st, IoPtrs::in_place(mine, BLOCK * n), n));
            }
            advance(e, false, &mut lanes, states, path);
            for (st, l) in states.iter_mut().zip(&lanes) {
                st.tau = l.io.read_from(BLOCK * (st.header_steps() - 1));
            }
        }

        // Body: the whole blocks, in the caller's buffer.
        {
            let mut lanes: Vec<Lane<'_>> =
                states.iter().map(|st| e.lane(st, st.io, st.m)).collect();
            advance(e, inv, &mut lanes, states, path);
        }

        // Tail. Encryption: [X, τ] (split block) or [τ], forward. Decryption: [C*] inverse
        // (split block only), then [τ] forward.
        let mut tail = Scratch(vec![0u8; 2 * BLOCK * states.len()]);
        {
            let mut lanes: Vec<Lane<'_>> = Vec::with_capacity(states.len());
            let mut rest: &mut [u8] = &mut tail.0;
            for st in states.iter() {
                let (mine, more) = core::mem::take(&mut rest).split_at_mut(2 * BLOCK);
                rest = more;
                let (x, t) = mine.split_at_mut(BLOCK);
                let r = st.r;
                let head = st.io.read_from(BLOCK * st.m);
                let mut head = if inv {
                    splice(&head, r, &st.tag_in)
                } else {
                    xor(&splice(&head, r, &st.tau), &st.keys.len_mask[r])
                };
                x.copy_from_slice(&head);
                t.copy_from_slice(&st.tau);
                wipe(&mut head);
                // The blocks of this run, from block `off` of the pair: the split block and
                // (encryption) τ after it.
                let (off, n) = match (inv, r > 0) {
                    (false, true) => (0, 2),
                    (false, false) => (1, 1),
                    (true, true) => (0, 1),
                    (true, false) => (0, 0),
                };
                let blocks = &mut mine[BLOCK * off..BLOCK * (off + n)];
                lanes.push(e.lane(st, IoPtrs::in_place(blocks, BLOCK * n), n));
            }
            advance(e, inv, &mut lanes, states, path);
        }
        for (st, blocks) in states.iter_mut().zip(tail.0.as_chunks::<{ 2 * BLOCK }>().0) {
            let y: Block = blocks[..BLOCK].try_into().unwrap_or([0; BLOCK]);
            let r = st.r;
            if r > 0 {
                let mut ks = if inv {
                    // y = X; the message bytes are X ⊕ mask.
                    st.last = xor(&y, &st.keys.len_mask[r]);
                    xor(&st.last, &st.io.read_from(BLOCK * st.m))
                } else {
                    // y = C*; the output bytes are its first r.
                    st.last = y;
                    xor(&y, &st.io.read_from(BLOCK * st.m))
                };
                st.io.xor_tail(&ks);
                wipe(&mut ks);
            }
            if !inv {
                st.z = blocks[BLOCK..].try_into().unwrap_or([0; BLOCK]);
            }
        }
        if inv {
            // Z = Ẽ^U(τ) forward, one block per job.
            let mut lanes: Vec<Lane<'_>> = Vec::with_capacity(states.len());
            let mut rest: &mut [u8] = &mut tail.0;
            for st in states.iter() {
                let (mine, more) = core::mem::take(&mut rest).split_at_mut(2 * BLOCK);
                rest = more;
                let t = &mut mine[BLOCK..];
                lanes.push(e.lane(st, IoPtrs::in_place(t, BLOCK), 1));
            }
            advance(e, false, &mut lanes, states, path);
            for (st, l) in states.iter_mut().zip(&lanes) {
                st.z = l.io.read_from(0);
            }
        }
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    mod x86 {
        #[cfg(target_arch = "x86")]
        use core::arch::x86::*;
        #[cfg(target_arch = "x86_64")]
        use core::arch::x86_64::*;

        use super::State;
        use crate::aes::lanes::dispatch_pairs;
        use crate::aes::{ni, AesKey, Kernels, RoundKeys};
        use crate::block::{wipe, Block, IoPtrs, BLOCK};
        use crate::cpu::{NiToken, VaesToken};
        use crate::gf128::clmul::{self, ClmulToken};
        use crate::gf128::vclmul::{self, VclmulToken};
        use crate::gf128::Powers;
        use crate::sched::exec::Path;
        use crate::sched::plan::plan;

        /// AES-128: K1 is always a 16-byte key.
        const ROUNDS: usize = 10;

        /// Most lanes per kernel call; wider windows run as several calls of near-equal size.
        /// Each lane keeps its tweak, mask, input and state live across a step: at 8 lanes
        /// that is already more than the 16 xmm registers, and 6 lanes fill the AES unit and
        /// the multiplier.
        const MAX_LANES: usize = 8;

        /// Most lanes per ymm kernel call (two per register).
        const MAX_WIDE_LANES: usize = 16;

        /// One message's chain in one run, as the kernels see it.
        pub(super) struct Lane<'a> {
            pub(super) io: IoPtrs<'a>,
            key: &'a AesKey,
            pow: &'a Powers,
            /// The tweak U before the run's next block; after the run, after its last one.
            pub(super) u: Block,
            /// Blocks of this run (each one `Ẽ` call).
            blocks: usize,
        }

        impl Drop for Lane<'_> {
            fn drop(&mut self) {
                wipe(&mut self.u);
            }
        }

        impl<'a> Lane<'a> {
            fn dup(&self) -> Lane<'a> {
                Lane { u: self.u, ..*self }
            }
        }

        /// The fused kernels this CPU runs, with the proofs that make calling them sound.
        pub(super) struct Engine {
            xmm: (ClmulToken, NiToken),
            /// Two lanes per ymm register where the CPU has VAES and VPCLMULQDQ.
            ymm: Option<(VclmulToken, VaesToken)>,
        }

        impl Engine {
            /// The engine for `states`, if every K2 runs on a PCLMULQDQ backend.
            pub(super) fn new(k: Kernels, states: &[State<'_>]) -> Option<Engine> {
                let t = states
                    .iter()
                    .map(|s| s.keys.h.clmul_parts().map(|(t, _)| t))
                    .reduce(|a, b| a.and(b))??;
                let ymm = match k {
                    Kernels::Vaes256(v) => VclmulToken::get().map(|c| (c, v)),
                    Kernels::Ni(_) => None,
                };
                Some(Engine {
                    xmm: (t, k.ni()),
                    ymm,
                })
            }

            /// A lane of `st` over `blocks` blocks of `io`, from `st.u`.
            pub(super) fn lane<'a>(
                &self,
                st: &State<'a>,
                io: IoPtrs<'a>,
                blocks: usize,
            ) -> Lane<'a> {
                let keys: &'a super::super::McoeKeys = st.keys;
                let Some((_, pow)) = keys.h.clmul_parts() else {
                    unreachable!("Engine::new checked every K2")
                };
                Lane {
                    io,
                    key: &keys.k1,
                    pow,
                    u: st.u,
                    blocks,
                }
            }

            /// Runs every lane over all its blocks (`INV`: the inverse cipher): the comb plan
            /// with the path's `P` on the batch path (lanes sorted by length, windows of
            /// equal progress, each window one kernel call per at most `MAX_*_LANES` lanes),
            /// one lane after another on the single path.
            pub(super) fn drive<const INV: bool>(&self, lanes: &mut [Lane<'_>], path: Path) {
                match path {
                    Path::Comb { lanes: p }
                        if lanes.len() > 1 && lanes.iter().all(|l| l.blocks == lanes[0].blocks) =>
                    {
                        // All lanes equally long (the header of jobs with equal AD lengths,
                        // most tails): the plan would be groups of `P` lanes, one window
                        // each; without sorting or allocating.
                        let n = lanes[0].blocks;
                        for group in lanes.chunks_mut(p.max(1)) {
                            self.window::<INV>(group, 0, n);
                        }
                    }
                    Path::Comb { lanes: p } if lanes.len() > 1 => {
                        let lens: Vec<usize> = lanes.iter().map(|l| l.blocks).collect();
                        let plan = plan(&lens, p);
                        // The lanes in plan order: a window's lanes (the first `lanes` members
                        // of its group) are one contiguous run.
                        let mut sorted: Vec<Lane<'_>> =
                            plan.order.iter().map(|&i| lanes[i].dup()).collect();
                        for g in &plan.groups {
                            let members = &mut sorted[g.members.clone()];
                            let mut done = 0;
                            for w in plan.windows_of(g) {
                                self.window::<INV>(&mut members[..w.lanes], done, w.blocks);
                                done += w.blocks;
                            }
                        }
                        for (&i, l) in plan.order.iter().zip(&sorted) {
                            lanes[i].u = l.u;
                        }
                    }
                    _ => {
                        // One dependent chain: no planning, no allocation.
                        for l in lanes.iter_mut() {
                            let blocks = l.blocks;
                            window::<INV>(self.xmm, core::slice::from_mut(l), 0, blocks);
                        }
                    }
                }
            }

            /// One window: its lanes split into near-equal kernel calls.
            fn window<const INV: bool>(&self, lanes: &mut [Lane<'_>], start: usize, count: usize) {
                let max = if self.ymm.is_some() && lanes.len() > 1 {
                    MAX_WIDE_LANES
                } else {
                    MAX_LANES
                };
                let calls = lanes.len().div_ceil(max);
                let (q, r) = (lanes.len() / calls.max(1), lanes.len() % calls.max(1));
                let mut at = 0;
                for c in 0..calls {
                    let part = &mut lanes[at..at + q + usize::from(c < r)];
                    at += part.len();
                    match self.ymm {
                        Some(proof) if part.len() > 1 => {
                            window_wide::<INV>(proof, part, start, count)
                        }
                        _ => window::<INV>(self.xmm, part, start, count),
                    }
                }
            }
        }

        /// The kernels' contract, checked once per call: every block they touch lies in the
        /// lane's input and (non-null) output, and K1 is AES-128. `None`: nothing to do; else whether the keys are shared.
        fn check(lanes: &[Lane<'_>], start: usize, count: usize) -> Option<bool> {
            if count == 0 || lanes.is_empty() {
                return None;
            }
            let end = start
                .checked_add(count)
                .and_then(|b| b.checked_mul(BLOCK))
                .expect("block range overflows");
            for l in lanes {
                assert!(start + count <= l.blocks);
                assert!(end <= l.io.len && end <= l.io.out_cap && !l.io.dst.is_null());
                assert_eq!(l.key.rounds, ROUNDS);
            }
            // Whether every lane has lane 0's keys (the kernels' shared-key fast path).
            Some(
                lanes.iter().all(|l| {
                    core::ptr::eq(l.key, lanes[0].key) && core::ptr::eq(l.pow, lanes[0].pow)
                }),
            )
        }

        /// Advances `lanes` (2..=MAX_WIDE_LANES) by `count` body blocks from block `start`,
        /// two lanes per ymm register.
        fn window_wide<const INV: bool>(
            _proof: (VclmulToken, VaesToken),
            lanes: &mut [Lane<'_>],
            start: usize,
            count: usize,
        ) {
            let Some(shared) = check(lanes, start, count) else {
                return;
            };
            // SAFETY: the tokens prove VAES, AVX2, VPCLMULQDQ and the xmm instructions;
            // `dispatch_pairs!` picks the kernel for exactly this lane count
            // (2..=MAX_WIDE_LANES); the ranges and key size were checked above, `shared` on
            // these lanes.
            unsafe { dispatch_pairs!(lanes.len(), shared, kernel_wide::<INV>(lanes, start, count)) }
        }

        /// Advances `lanes` (1..=MAX_LANES) by `count` body blocks from block `start`.
        fn window<const INV: bool>(
            _proof: (ClmulToken, NiToken),
            lanes: &mut [Lane<'_>],
            start: usize,
            count: usize,
        ) {
            let Some(shared) = check(lanes, start, count) else {
                return;
            };
            macro_rules! go {
                ($($n:literal)*) => {
                    match lanes.len() {
                        1 => {
                            let Ok(a) = <&mut [Lane<'_>; 1]>::try_from(lanes) else {
                                unreachable!("one lane")
                            };
                            // SAFETY: the tokens prove PCLMULQDQ, SSE2, SSSE3 (ClmulToken)
                            // and AES-NI (NiToken); the ranges and key size were checked
                            // above.
                            unsafe { kernel::<1, true, INV>(a, start, count) }
                        }
                        $($n => {
                            let Ok(a) = <&mut [Lane<'_>; $n]>::try_from(lanes) else {
                                unreachable!("N lanes")
                            };
                            // SAFETY: as for one lane.
                            unsafe {
                                if shared {
                                    kernel::<$n, true, INV>(a, start, count)
                                } else {
                                    kernel::<$n, false, INV>(a, start, count)
                                }
                            }
                        })*
                        _ => unreachable!("1..=MAX_LANES lanes"),
                    }
                };
            }
            go!(2 3 4 5 6 7 8);
        }

        /// The schedule of the cipher direction: `E_K1`, or (`INV`) the equivalent inverse
        /// cipher's.
        fn schedule<const INV: bool>(key: &AesKey) -> &RoundKeys {
            if INV {
                &key.dec
            } else {
                &key.enc
            }
        }

        /// Round key `r` of a schedule.
        #[inline]
        #[target_feature(enable = "sse2")]
        fn rk(k: &RoundKeys, r: usize) -> __m128i {
            ni::load(&k.0[r])
        }

        /// `N` lanes, `count` blocks each from `start`: `h = U⊗K2`,
        /// `y = E_K1(x ⊕ h) ⊕ h` (`INV`: `D_K1`), `U ← x ⊕ y`, `y` written in place of `x`.
        /// Rounds outer, lanes inner: `N` independent multiplications, then `N` independent
        /// AES chains, per step. `SHARED`: all lanes have lane 0's key (round keys loaded once
        /// per round). The product is the 4-multiplication schoolbook one (see the module
        /// docs).
        ///
        /// # Safety
        /// The CPU has AES-NI, PCLMULQDQ, SSE2 and SSSE3; for every lane, blocks
        /// `start..start + count` lie in its input and its (non-null) output, and its key is
        /// AES-128.
        #[target_feature(enable = "aes,pclmulqdq,sse2,ssse3")]
        unsafe fn kernel<const N: usize, const SHARED: bool, const INV: bool>(
            lanes: &mut [Lane<'_>; N],
            start: usize,
            count: usize,
        ) {
            // Plain loops, no closures (see `kernel_wide`).
            let zero = _mm_setzero_si128();
            let mut io: [IoPtrs<'_>; N] = [lanes[0].io; N];
            let mut rks: [&RoundKeys; N] = [schedule::<INV>(lanes[0].key); N];
            let mut mk = [(zero, zero); N];
            let mut u = [zero; N];
            for j in 0..N {
                let src = if SHARED { 0 } else { j };
                io[j] = lanes[j].io;
                rks[j] = schedule::<INV>(lanes[src].key);
                mk[j] = clmul::k1(lanes[src].pow);
                u[j] = ni::load(&lanes[j].u);
            }
            for i in start..start + count {
                let mut h = [zero; N];
                let mut x = [zero; N];
                let mut s = [zero; N];
                for j in 0..N {
                    let hf = clmul::mul1::<false>(clmul::bswap(u[j]), mk[j].0, mk[j].1);
                    h[j] = clmul::bswap(hf);
                    // SAFETY: block i < start + count lies in the input (caller).
                    x[j] = unsafe { ni::load_in(&io[j], i) };
                    s[j] = _mm_xor_si128(_mm_xor_si128(x[j], h[j]), rk(rks[j], 0));
                }
                for r in 1..ROUNDS {
                    if SHARED {
                        let kr = rk(rks[0], r);
                        for sj in s.iter_mut() {
                            *sj = if INV {
                                _mm_aesdec_si128(*sj, kr)
                            } else {
                                _mm_aesenc_si128(*sj, kr)
                            };
                        }
                    } else {
                        for (j, sj) in s.iter_mut().enumerate() {
                            let kr = rk(rks[j], r);
                            *sj = if INV {
                                _mm_aesdec_si128(*sj, kr)
                            } else {
                                _mm_aesenc_si128(*sj, kr)
                            };
                        }
                    }
                }
                for j in 0..N {
                    // The mask folded into the last round key: y = out ⊕ h in one instruction.
                    let last = _mm_xor_si128(rk(rks[j], ROUNDS), h[j]);
                    let y = if INV {
                        _mm_aesdeclast_si128(s[j], last)
                    } else {
                        _mm_aesenclast_si128(s[j], last)
                    };
                    // SAFETY: block i lies in the output (caller); in place, x[j] was read
                    // before this store and is not read again.
                    unsafe { ni::store_out(&io[j], i, y) };
                    u[j] = _mm_xor_si128(x[j], y);
                }
            }
            for (l, v) in lanes.iter_mut().zip(u) {
                ni::store(&mut l.u, v);
            }
        }

        /// Two xmm values as one ymm register, `lo` in the low lane.
        #[inline]
        #[target_feature(enable = "avx,avx2")]
        fn pair(lo: __m128i, hi: __m128i) -> __m256i {
            _mm256_set_m128i(hi, lo)
        }

        /// The kernel of [`kernel`] with two lanes per ymm register: `PAIRS` registers, the
        /// last one's high half a ghost (a copy of its low lane whose results are dropped) if
        /// `ODD`. Per step `PAIRS` two-lane products (VPCLMULQDQ) and `PAIRS` two-block AES
        /// chains (VAES): on this CPU the xmm kernel is bound by the PCLMULQDQ and AESENC
        /// throughput, which the ymm forms double.
        ///
        /// # Safety
        /// The CPU has VAES, AVX2, VPCLMULQDQ, AES-NI, PCLMULQDQ, SSE2 and SSSE3;
        /// `lanes.len() == 2·PAIRS - ODD`; for every lane, blocks `start..start + count` lie
        /// in its input and its (non-null) output, and its key is AES-128.
        #[target_feature(enable = "avx,avx2,vaes,aes,vpclmulqdq,pclmulqdq,sse2,ssse3")]
        unsafe fn kernel_wide<
            const PAIRS: usize,
            const ODD: bool,
            const SHARED: bool,
            const INV: bool,
        >(
            lanes: &mut [Lane<'_>],
            start: usize,
            count: usize,
        ) {
            debug_assert_eq!(lanes.len(), 2 * PAIRS - usize::from(ODD));
            // Plain loops, no closures: a closure does not inherit this function's target
            // features, so `pair` and the loads inside one would be out-of-line calls.
            let zero = _mm256_setzero_si256();
            let mut io_lo: [IoPtrs<'_>; PAIRS] = [lanes[0].io; PAIRS];
            let mut io_hi: [IoPtrs<'_>; PAIRS] = [lanes[0].io; PAIRS];
            let mut rks = [[zero; ROUNDS + 1]; PAIRS];
            let mut mk = [(zero, zero); PAIRS];
            let mut u = [zero; PAIRS];
            for p in 0..PAIRS {
                let (l0, l1) = (&lanes[2 * p], &lanes[(2 * p + 1).min(lanes.len() - 1)]);
                // The ghost half of an odd count mirrors its low lane.
                let l1 = if ODD && p == PAIRS - 1 { l0 } else { l1 };
                io_lo[p] = l0.io;
                io_hi[p] = l1.io;
                if !SHARED || p == 0 {
                    let (a, b) = (schedule::<INV>(l0.key), schedule::<INV>(l1.key));
                    for (r, k) in rks[p].iter_mut().enumerate() {
                        *k = pair(rk(a, r), rk(b, r));
                    }
                    let ((k0, kk0), (k1, kk1)) = (clmul::k1(l0.pow), clmul::k1(l1.pow));
                    mk[p] = (pair(k0, k1), pair(kk0, kk1));
                }
                u[p] = pair(ni::load(&l0.u), ni::load(&l1.u));
            }
            for i in start..start + count {
                let mut h = [zero; PAIRS];
                let mut x = [zero; PAIRS];
                let mut s = [zero; PAIRS];
                for p in 0..PAIRS {
                    let kp = if SHARED { 0 } else { p };
                    let hf = vclmul::mul2::<false>(vclmul::bswap2(u[p]), mk[kp].0, mk[kp].1);
                    h[p] = vclmul::bswap2(hf);
                    // SAFETY: block i < start + count lies in both lanes' inputs (caller).
                    x[p] = unsafe { pair(ni::load_in(&io_lo[p], i), ni::load_in(&io_hi[p], i)) };
                    s[p] = _mm256_xor_si256(_mm256_xor_si256(x[p], h[p]), rks[kp][0]);
                }
                // Rounds outer, pairs inner: `r` indexes every pair's key row.
                #[allow(clippy::needless_range_loop)]
                for r in 1..ROUNDS {
                    for (p, sp) in s.iter_mut().enumerate() {
                        let kr = rks[if SHARED { 0 } else { p }][r];
                        *sp = if INV {
                            _mm256_aesdec_epi128(*sp, kr)
                        } else {
                            _mm256_aesenc_epi128(*sp, kr)
                        };
                    }
                }
                for p in 0..PAIRS {
                    let last = _mm256_xor_si256(rks[if SHARED { 0 } else { p }][ROUNDS], h[p]);
                    let y = if INV {
                        _mm256_aesdeclast_epi128(s[p], last)
                    } else {
                        _mm256_aesenclast_epi128(s[p], last)
                    };
                    // SAFETY: block i lies in the lanes' outputs (caller); in place, x[p] was
                    // read before these stores. A ghost half writes nothing.
                    unsafe {
                        ni::store_out(&io_lo[p], i, _mm256_castsi256_si128(y));
                        if !(ODD && p == PAIRS - 1) {
                            ni::store_out(&io_hi[p], i, _mm256_extracti128_si256::<1>(y));
                        }
                    }
                    u[p] = _mm256_xor_si256(x[p], y);
                }
            }
            for (p, v) in u.into_iter().enumerate() {
                ni::store(&mut lanes[2 * p].u, _mm256_castsi256_si128(v));
                if !(ODD && p == PAIRS - 1) {
                    ni::store(&mut lanes[2 * p + 1].u, _mm256_extracti128_si256::<1>(v));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, Engine, Job, Tag};
    use std::cell::Cell;

    std::thread_local! {
        /// Makes this thread's McOE-G runs take the stepper path (the one for CPUs without
        /// PCLMULQDQ), so that it stays tested on CPUs that have the fused kernels.
        pub(super) static FORCE_STEPPED: Cell<bool> = const { Cell::new(false) };
    }

    /// Encrypts then decrypts a batch (lengths 0..=200, AD 0..=40, two keys) on `engine`,
    /// returning ciphertexts and tags; decryption must give the plaintexts back.
    fn seal_open(engine: &Engine, keys: &[AesKey], seed: u64) -> Vec<(Vec<u8>, [u8; 16])> {
        let n = 40;
        let data = crate::block::test_bytes(seed, 300 * n);
        let pts: Vec<&[u8]> = (0..n)
            .map(|i| &data[300 * i..300 * i + (i * 37 % 201)])
            .collect();
        let ads: Vec<&[u8]> = (0..n)
            .map(|i| &data[300 * i + 201..300 * i + 201 + i % 41])
            .collect();
        let nonces: Vec<&[u8]> = (0..n)
            .map(|i| &data[300 * i + 250..300 * i + 266])
            .collect();
        let mut bufs: Vec<Vec<u8>> = pts.iter().map(|p| p.to_vec()).collect();
        let mut tags = vec![[0u8; 16]; n];
        // One batch call in place, `op`'s direction: tags written (encryption) or checked.
        let run = |op: Op, bufs: &mut [Vec<u8>], tags: &mut [[u8; 16]]| {
            let mut jobs: Vec<Job<'_>> = bufs
                .iter_mut()
                .zip(tags.iter_mut())
                .enumerate()
                .map(|(i, (b, t))| {
                    let tag = match op {
                        Op::Encrypt => Tag::Out(t),
                        Op::Decrypt => Tag::In(&*t),
                    };
                    Job::in_place(&keys[i % keys.len()], b)
                        .with_iv(nonces[i])
                        .with_ad(ads[i])
                        .with_tag(tag)
                })
                .collect();
            let r = engine.process(Algorithm::Aes128McoeG, op, &mut jobs);
            assert!(r.iter().all(|r| r.is_ok()), "{op:?}: {r:?}");
        };
        run(Op::Encrypt, &mut bufs, &mut tags);
        let sealed: Vec<(Vec<u8>, [u8; 16])> =
            bufs.iter().cloned().zip(tags.iter().copied()).collect();
        run(Op::Decrypt, &mut bufs, &mut tags);
        for (b, p) in bufs.iter().zip(&pts) {
            assert_eq!(b.as_slice(), *p);
        }
        sealed
    }

    /// The stepper path (CPUs without PCLMULQDQ) and the fused kernels give the same bytes,
    /// on every backend and at lane counts that exercise odd, split and single windows.
    #[test]
    fn stepped_path_matches_fused_kernels() {
        let keys: Vec<AesKey> = (0..2u64)
            .filter_map(|i| AesKey::new(&crate::block::test_bytes(i + 7, 32)).ok())
            .collect();
        if keys.is_empty() {
            return; // no AES-NI
        }
        for backend in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            for lanes in [1, 3, 8, 13, 16, 32] {
                let Ok(engine) = Engine::with_backend(backend).and_then(|e| e.with_lanes(lanes))
                else {
                    continue;
                };
                let fused = seal_open(&engine, &keys, lanes as u64);
                FORCE_STEPPED.with(|f| f.set(true));
                let stepped = seal_open(&engine, &keys, lanes as u64);
                FORCE_STEPPED.with(|f| f.set(false));
                assert_eq!(fused, stepped, "{backend:?}, {lanes} lanes");
            }
        }
    }

    fn hex16(s: &str) -> Block {
        let v: Vec<u8> = (0..32)
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect();
        v.try_into().unwrap()
    }

    /// The spec's worked example (section 8): intermediate values of the key setup.
    #[test]
    fn spec_intermediates() {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(&hex16("2B7E151628AED2A6ABF7158809CF4F3C"));
        key[16..].copy_from_slice(&hex16("3243F6A8885A308D313198A2E0370734"));
        let Ok(key) = AesKey::new(&key) else {
            return; // no AES-NI
        };
        let d = key.derived::<McoeKeys>();
        let n = hex16("F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF");
        assert_eq!(d.h.mul_h(&n), hex16("1248CF0624BB97B2E49D463A77F45C79"));
        assert_eq!(
            d.h.mul_h(&[0xff; 16]),
            hex16("6206FE1DDA323FF88B248E70F69BC86E")
        );
        assert_eq!(d.len_mask[1], hex16("88BAC82B47B481B508AA66F0B34E7847"));
        let mut tau = n;
        d.k1.encrypt_block(&mut tau);
        assert_eq!(tau, hex16("EC8CDF7398607CB0F2D21675EA9EA1E4"));
    }
}
