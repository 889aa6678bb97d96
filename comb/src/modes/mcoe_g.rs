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
//! message is latency-bound: a field multiplication, then an AES call. Each message is a
//! [`StepLane`] of width 1 whose `load` computes the mask `U⊗K2` and whose `store` folds the
//! cipher output into the next tweak; on the batch path the comb stepper runs P messages side
//! by side, so their P multiplications and P AES calls per step are independent and overlap.
//! Decryption runs the header with the forward cipher and the body with the inverse one, two
//! stepper passes. The last call, the tag, is one batched [`Kernels::encrypt_many`] over all
//! jobs. Multiplier: the 3-multiplication Karatsuba PCLMULQDQ product on the single path
//! (latency-bound: fewer multiplications on the chain), the 4-multiplication schoolbook one on
//! the batch path (papers/000 §6.4: with P chains interleaved the multiplier's throughput and
//! the cheaper reduction count, not the latency); both from [`crate::gf128`].
//!
//! Decryption cannot verify before decrypting (the tag is the end of the chain through every
//! plaintext block): plaintext is written as the chain goes, and on a tag mismatch (compared in
//! constant time) the whole output `[..len]` is zeroed before the job fails with
//! [`Error::AuthenticationFailed`].

use crate::aes::{AesKey, Derived, Kernels};
use crate::block::{tag_matches, wipe, Block, IoPtrs, BLOCK};
use crate::gf128::{GhashBackend, GhashKey, MulVariant};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::steps::{run_steps, StepLane};
use crate::{Error, JobResult, Op};

/// What McOE-G derives from a key `K1 ‖ K2` and keeps with it.
pub(crate) struct McoeKeys {
    /// The AES-128 key K1.
    k1: AesKey,
    /// K2 with the Karatsuba multiplier (single path).
    h_single: GhashKey,
    /// K2 with the schoolbook multiplier (batch path).
    h_batch: GhashKey,
    /// `len_mask[r] = Ẽ^{1^128}(<r>)` for r = 1..15 (entry 0 unused, zero).
    len_mask: [Block; BLOCK],
}

/// K2 as a GHASH key with multiplication variant `v` on xmm PCLMULQDQ (a single product per
/// call, where the ymm backend would run the same xmm code), or the best this CPU has.
fn hash_key(k2: &Block, v: MulVariant) -> GhashKey {
    GhashKey::with_backend(k2, GhashBackend::Clmul(v)).unwrap_or_else(|_| GhashKey::new(k2))
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
        let h_single = hash_key(&k2, MulVariant::Karatsuba);
        let h_batch = hash_key(&k2, MulVariant::Schoolbook);
        let mut h1 = h_single.mul_h(&[0xff; BLOCK]);
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
            h_single,
            h_batch,
            len_mask,
        }
    }
}

impl Drop for McoeKeys {
    fn drop(&mut self) {
        self.len_mask.iter_mut().for_each(wipe);
        // `k1` and the two GHASH keys wipe themselves.
    }
}

#[inline(always)]
fn xor(a: &Block, b: &Block) -> Block {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// Whole input block `i` of `io` (`16 * (i + 1) <= io.len`).
#[inline]
fn read_block(io: &IoPtrs<'_>, i: usize) -> Block {
    assert!(BLOCK * (i + 1) <= io.len);
    // SAFETY: the 16 bytes lie inside the input, readable for `io.len` bytes (IoPtrs
    // invariant, bound checked above); unaligned read of plain bytes, and no reference to the
    // (possibly aliasing, in place) output exists while it runs.
    unsafe { io.src.add(BLOCK * i).cast::<Block>().read_unaligned() }
}

/// One message's chain state across the stepper passes and the tag step.
struct State<'a> {
    io: IoPtrs<'a>,
    keys: &'a McoeKeys,
    g: &'a GhashKey,
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
}

impl Drop for State<'_> {
    fn drop(&mut self) {
        for b in [
            &mut self.u,
            &mut self.h,
            &mut self.x,
            &mut self.tau,
            &mut self.last,
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
    fn new(job: &Prepared<'a>, path: Path) -> State<'a> {
        let keys: &'a McoeKeys = job.lane.key.derived::<McoeKeys>();
        let io = job.lane.io;
        let ad: &'a [u8] = job.ad;
        let mut tag_in = [0u8; BLOCK];
        if let TagIo::In(t) = &job.tag {
            let n = t.len().min(BLOCK);
            tag_in[..n].copy_from_slice(&t[..n]);
        }
        State {
            io,
            keys,
            g: match path {
                Path::Single => &keys.h_single,
                Path::Comb { .. } => &keys.h_batch,
            },
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
        let mut b = [0u8; BLOCK];
        b[..n].copy_from_slice(&rest[..n]);
        if n < BLOCK {
            b[n] = 0x80;
        }
        b
    }

    /// The cipher input of step `s`; `INV`: the body runs the inverse cipher.
    #[inline]
    fn load<const INV: bool>(&mut self, s: usize) -> Block {
        self.h = self.g.mul_h(&self.u);
        self.x = match self.kind(s) {
            Kind::Ad(j) => self.ad_block(j),
            Kind::Nonce => self.nonce,
            Kind::Body(i) => read_block(&self.io, i),
            Kind::Final => {
                // The r input bytes, then (encryption) the first 16 - r bytes of τ masked
                // with the length block, or (decryption) the first 16 - r tag bytes: C*.
                let r = self.r;
                let mut x = self.io.read_from(BLOCK * self.m);
                if INV {
                    x[r..].copy_from_slice(&self.tag_in[..BLOCK - r]);
                } else {
                    x[r..].copy_from_slice(&self.tau[..BLOCK - r]);
                    x = xor(&x, &self.keys.len_mask[r]);
                }
                x
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

/// Runs one stepper pass over the states' steps `[start, end)` as set by `range`.
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
        run_steps(k, &mut [Pass::<INV>(one)], path);
    } else {
        let mut lanes: Vec<Pass<'_, '_, INV>> = states.iter_mut().map(Pass::<INV>).collect();
        run_steps(k, &mut lanes, path);
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
        let mut st = [State::new(job, path)];
        process(k, &mut st, core::slice::from_mut(job), results, op, path);
    } else {
        let mut st: Vec<State<'a>> = jobs.iter().map(|j| State::new(j, path)).collect();
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
    match op {
        Op::Encrypt => pass::<false>(k, states, path, |s| (0, s.chain_steps())),
        Op::Decrypt => {
            pass::<false>(k, states, path, |s| (0, s.header_steps()));
            pass::<true>(k, states, path, |s| (s.header_steps(), s.chain_steps()));
        }
    }
    // The tag Z = Ẽ^U(τ) of every job, CHUNK per batched cipher call.
    for (sts, jbs) in states.chunks_mut(CHUNK).zip(jobs.chunks_mut(CHUNK)) {
        let n = sts.len();
        let mut z = [[0u8; BLOCK]; CHUNK];
        let mut keys: [&AesKey; CHUNK] = [&sts[0].keys.k1; CHUNK];
        for ((zz, kk), st) in z.iter_mut().zip(keys.iter_mut()).zip(sts.iter_mut()) {
            st.h = st.g.mul_h(&st.u);
            *zz = xor(&st.tau, &st.h);
            *kk = &st.keys.k1;
        }
        k.encrypt_many(&mut z[..n], &keys[..n]);
        for ((zz, st), job) in z.iter_mut().zip(sts.iter()).zip(jbs.iter_mut()) {
            let mut t = xor(zz, &st.h);
            results[job.index] = finish(st, job, &t);
            wipe(&mut t);
            wipe(zz);
        }
    }
}

/// Writes (encryption) or checks (decryption) the tag of one job; `t` = Z.
fn finish(st: &State<'_>, job: &mut Prepared<'_>, t: &Block) -> JobResult {
    let r = st.r;
    let len = st.io.len;
    // The full 16-byte tag: Z, or C*[r..] ‖ Z[..r] with a split block.
    let mut full = *t;
    if r > 0 {
        full[..BLOCK - r].copy_from_slice(&st.last[r..]);
        full[BLOCK - r..].copy_from_slice(&t[..r]);
    }
    let res = match &mut job.tag {
        TagIo::Out(out) => {
            let n = out.len().min(BLOCK);
            out[..n].copy_from_slice(&full[..n]);
            Ok(len)
        }
        TagIo::In(_) => {
            // With a split block the first 16 - r bytes are the check X[r..] = τ[..16-r];
            // the received tag's last r bytes are Z[..r].
            let mut expected = st.tag_in;
            if r > 0 {
                expected[..BLOCK - r].copy_from_slice(&st.tau[..BLOCK - r]);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        for g in [&d.h_single, &d.h_batch] {
            assert_eq!(g.mul_h(&n), hex16("1248CF0624BB97B2E49D463A77F45C79"));
            assert_eq!(
                g.mul_h(&[0xff; 16]),
                hex16("6206FE1DDA323FF88B248E70F69BC86E")
            );
        }
        assert_eq!(d.len_mask[1], hex16("88BAC82B47B481B508AA66F0B34E7847"));
        let mut tau = n;
        d.k1.encrypt_block(&mut tau);
        assert_eq!(tau, hex16("EC8CDF7398607CB0F2D21675EA9EA1E4"));
    }
}
