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
//! Scheduling. The chain `x ← x·L ⊕ M_k` over the message blocks `X_1, Y_1, X_2, …` from `x
//! = L ⊕ N` gives `σ_1, ρ_1, σ_2, …` (since `(L ⊕ N)·L = V_0`); it has no AES call. In the
//! GHASH domain (`rev` of every value) it is exactly the Horner chain of the GHASH kernels
//! with key `rev(L)`, so encryption stages `rev(M_k)` into the output (byte shuffles: SSSE3,
//! two blocks per AVX2 instruction on the VAES backend), runs the chains there, and reverses
//! the chain values back (their xor is `Σ`). On the batch path the chains of all jobs are
//! comb-scheduled (papers/000 Algorithm 1 over their block counts, by POET's chain driver)
//! and [`crate::gf128::mul_chains`] advances up to eight of them per loop, two per
//! VPCLMULQDQ register: the single path's one chain waits on every product's latency, the
//! batch path's chains fill the multiplier.
//!
//! The two Feistel rounds are OTR's (`E(Δ ⊕ A) ⊕ B`, then `E(3Δ ⊕ ·) ⊕ A`, with `L'` for
//! OTR's `L`), so they run on OTR's code: its wide pair kernels, in place over the output,
//! and its cross-job pair pool for the pairs those leave (at most one per message on ymm,
//! seven on xmm). Decryption is parallel throughout: the rounds from the ciphertext, then
//! independent products ([`GhashKey::mul_each`], windows of `2W` blocks).
//! The per-message fixed work is batched across all jobs of the call: the AD hashes' final
//! calls `𝒜 = E(v)` together with `E(Σ ⊕ T_in)` in one [`Kernels::encrypt_many`], then the
//! tags `T` in another.
//!
//! Realistic mix, batch 64, Zen 4 (`comb bench`, TSC cycles/byte): the one-chain-at-a-time
//! version that this replaced ran at 5.37 (encryption) and 4.40 (decryption); the main job
//! at aab721f measured 1.12 and 1.15. The lane count barely matters from P = 4 up (1.09 to
//! 1.14 over 4..32): the chains are no longer the bottleneck, the passes over the data are.
//!
//! Decryption is decrypt-then-verify in one pass (the tag needs `Σ`, i.e. every AES call of
//! the message): the plaintext is written as it is computed and, on a tag mismatch (compared
//! in constant time), the output `[..len]` is zeroed before the job gets
//! [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
//!
//! Secrets wiped: the chain value, `Σ`, masks, the window buffers, the AD-hash state and the
//! tag block; the derived key material on drop.

use crate::aes::{AesKey, Derived, Kernels};
use crate::block::{dbl, load_short, wipe, xor, Block, IoPtrs, SecretBlocks, BLOCK};
use crate::gf128::bitrev::{rev, rev_io, rev_raw};
use crate::gf128::{tpl, GhashKey};
use crate::modes::otr;
use crate::modes::poet_gf::{self, GfLane};
use crate::modes::{finish_tag, Prepared};
use crate::sched::exec::Path;
use crate::{JobResult, Op};
use zeroize::Zeroize;

/// Blocks per wide ECB call of the AD hash; pairs per window of decryption's products.
const W: usize = 16;

/// Jobs per batched fixed-work call (stack buffers).
const CHUNK: usize = 32;

/// The per-key constants of COBRA-R (spec §3), wiped on drop.
pub(crate) struct CobraKeys {
    /// Multiplication by `L` in the big-endian field, as a GCM-field key `rev(L)`.
    mul: GhashKey,
    /// `rev(L)`, the chain's start without the nonce (its product by `L` is `L·L`, the
    /// first half of `V_0`).
    rl: Block,
    /// `L' = 4L` (`Δ_1`).
    lp: Block,
    /// `3(4L' ⊕ L)`.
    t_in: Block,
    /// `3·3(4L' ⊕ L)`.
    t_out: Block,
    /// `3^3·J`, the AD hash's first mask.
    ad0: Block,
}

impl CobraKeys {
    /// `x·L` in the big-endian field, one product (the tests' reference; the modes run
    /// the chain and the products through the GHASH kernels).
    #[cfg(test)]
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
        let mut j = key.e_zero;
        let rl = rev(&l);
        let mul = GhashKey::new(&rl);
        let lp = dbl(&dbl(&l));
        let mut dt = xor(&dbl(&dbl(&lp)), &l);
        let t_in = tpl(&dt);
        let t_out = tpl(&t_in);
        let ad0 = tpl(&tpl(&tpl(&j)));
        let keys = CobraKeys {
            mul,
            rl,
            lp,
            t_in,
            t_out,
            ad0,
        };
        wipe(&mut l);
        wipe(&mut j);
        wipe(&mut dt);
        keys
    }
}

impl Drop for CobraKeys {
    fn drop(&mut self) {
        wipe(&mut self.rl);
        wipe(&mut self.lp);
        wipe(&mut self.t_in);
        wipe(&mut self.t_out);
        wipe(&mut self.ad0);
    }
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
        k.ecb_in_place(key, &mut buf[..n], false);
        for b in &buf[..n] {
            v = xor(&v, b);
        }
        j += n;
    }
    let last = &ad[full * BLOCK..];
    // The last block zero-padded by word loads, and its 10* bit set in a register: a byte
    // store into the block, read back by word loads straight after, stalled them.
    let mut pad = load_short(last);
    if last.len() == BLOCK {
        delta = tpl(&delta);
    } else {
        let bit = 0x80u128 << (8 * (BLOCK - 1 - last.len()));
        pad = (u128::from_be_bytes(pad) | bit).to_be_bytes();
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

/// The chain's start in the GHASH domain: `rev(L ⊕ N)`, whose product by `L` is `V_0 = L·L ⊕
/// N·L`, so that the chain `x ← x·L ⊕ M_k` over the message blocks gives `σ_1 = V_0 ⊕ X_1`
/// first.
fn chain_start(d: &CobraKeys, nonce: &[u8]) -> Block {
    let mut n = [0u8; BLOCK];
    n.copy_from_slice(&nonce[..BLOCK]);
    xor(&d.rl, &rev(&n))
}

/// The job's output as an in-place buffer of its `len` bytes: encryption keeps the chain's
/// values there until the Feistel rounds overwrite them with the ciphertext, decryption
/// keeps `σ_i, ρ_i` there until the products turn them into the plaintext.
fn output_io<'a>(io: &'a mut IoPtrs<'_>) -> IoPtrs<'a> {
    let len = io.len;
    IoPtrs::in_place(io.output(len), len)
}

/// The two Feistel rounds of every pair of every job, `Δ_1 = L'`: in encryption `(σ, ρ) ↦
/// (C_{2i-1}, C_{2i})`, in decryption back. This is OTR's pair Feistel with `L'` for OTR's
/// `L` (`E(Δ ⊕ A) ⊕ B`, then `E(3Δ ⊕ ·) ⊕ A`), so it runs on OTR's code: wide steps per job,
/// the pairs they leave (at most one per message on ymm) in OTR's cross-job pair pool.
fn feistel<const DEC: bool>(
    k: Kernels,
    jobs: &[Prepared<'_>],
    ios: &[IoPtrs<'_>],
    d: &[&CobraKeys],
) {
    let Some(first) = jobs.first() else { return };
    let mut pool = otr::PairPool::new(first.lane.key, ios[0]);
    // OTR's checksum (the pairs' second blocks), not COBRA-R's Σ: dropped.
    let mut drop_sum = |_: usize, _: &Block| {};
    for (j, ((job, io), d)) in jobs.iter().zip(ios).zip(d).enumerate() {
        // The kernels write the pairs' output bytes: validation checked the room.
        assert!(io.len <= io.out_cap && (io.len == 0 || !io.dst.is_null()));
        let pairs = io.len / (2 * BLOCK);
        let mut l = u128::from_be_bytes(d.lp);
        let mut unused = [0u8; BLOCK];
        let (key, pool) = (job.lane.key, &mut pool);
        otr::pairs::<DEC>(
            k,
            key,
            *io,
            pairs,
            &mut l,
            &mut unused,
            pool,
            j,
            &mut drop_sum,
        );
        wipe(&mut unused);
        l.zeroize();
    }
    pool.flush::<DEC>(k, &mut drop_sum);
}

/// The multiplication chains of all `outs` (staged `rev(M_k)`, in place), each from its
/// start value, on POET's chain driver ([`poet_gf::chain`]): one message at a time on
/// `Path::Single` (a latency-bound chain), comb-scheduled over the block counts on
/// `Path::Comb`.
fn run_chains(d: &[&CobraKeys], outs: &[IoPtrs<'_>], starts: &[Block], path: Path) {
    let mut lanes: Vec<GfLane<'_>> = outs
        .iter()
        .zip(d)
        .zip(starts)
        .map(|((io, d), x)| GfLane {
            io: *io,
            g: &d.mul,
            x: *x,
            blocks: io.len / BLOCK,
        })
        .collect();
    poet_gf::chain(&mut lanes, path);
    for l in &mut lanes {
        wipe(&mut l.x);
    }
}

/// Decryption after the Feistel rounds: the output holds `σ_i, ρ_i`; the plaintext is
/// `X_i = σ_i ⊕ ρ_{i-1}·L` (`ρ_0·L` read as `V_0`) and `Y_i = ρ_i ⊕ σ_i·L`, independent
/// products ([`GhashKey::mul_each`] over `σ_1, ρ_1, σ_2, …` in the GHASH domain). Returns
/// `Σ`.
fn unchain(k: Kernels, d: &CobraKeys, out: &IoPtrs<'_>, nonce: &[u8]) -> Block {
    assert!(!out.dst.is_null() && out.len <= out.out_cap);
    let blocks = out.len / BLOCK;
    let mut prev = chain_start(d, nonce);
    let mut sum = [0u8; BLOCK];
    let mut buf = [[0u8; BLOCK]; 2 * W];
    let mut j = 0;
    while j < blocks {
        let n = (blocks - j).min(2 * W);
        let b = buf.as_flattened_mut().as_mut_ptr();
        // SAFETY: blocks j..j + n lie inside the output (16·blocks <= len <= out_cap), which
        // `out` reads and writes in place; `buf` holds 2W >= n blocks and is not the output.
        unsafe {
            let x = rev_raw(k, out.src.add(BLOCK * j), b, n);
            sum = xor(&sum, &x);
            let next = buf[n - 1];
            d.mul.mul_each(&prev, &mut buf[..n]);
            prev = next;
            rev_raw(k, buf.as_flattened().as_ptr(), out.dst.add(BLOCK * j), n);
        }
        j += n;
    }
    buf.iter_mut().for_each(wipe);
    wipe(&mut prev);
    // `rev` is linear: the xor of the reversed blocks is the reversal of their xor.
    let s = rev(&sum);
    wipe(&mut sum);
    s
}

/// Runs COBRA-R `op` over validated jobs (16-byte nonce and tag, message an even number of
/// blocks), writing `results[job.index]`. Both paths run this code; `Path::Single` calls it
/// with one job.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    // Σ of every job. Encryption: the messages staged into the outputs, then every job's
    // multiplication chain (across jobs on the batch path), then the Feistel rounds.
    let d: Vec<&CobraKeys> = jobs
        .iter()
        .map(|j| j.lane.key.derived::<CobraKeys>())
        .collect();
    let mut ios: Vec<IoPtrs<'_>> = jobs.iter().map(|j| j.lane.io).collect();
    // Σ of every job (secret: it is encrypted into the tag), wiped when dropped.
    let sums = SecretBlocks(match op {
        Op::Encrypt => {
            // rev(M) into the outputs, the chains there (across jobs on the batch path), σ
            // and ρ back from the GHASH domain (their xor is Σ), then the Feistel rounds.
            for io in &ios {
                rev_io(k, io);
            }
            let outs: Vec<IoPtrs<'_>> = ios.iter_mut().map(output_io).collect();
            let x = SecretBlocks(
                jobs.iter()
                    .zip(&d)
                    .map(|(j, d)| chain_start(d, j.nonce))
                    .collect(),
            );
            run_chains(&d, &outs, &x, path);
            drop(x);
            let sums = outs.iter().map(|o| rev_io(k, o)).collect();
            feistel::<false>(k, jobs, &outs, &d);
            sums
        }
        Op::Decrypt => {
            feistel::<true>(k, jobs, &ios, &d);
            let outs: Vec<IoPtrs<'_>> = ios.iter_mut().map(output_io).collect();
            jobs.iter()
                .zip(&outs)
                .zip(&d)
                .map(|((j, out), d)| unchain(k, d, out, j.nonce))
                .collect()
        }
    });
    for (chunk, sums) in jobs.chunks_mut(CHUNK).zip(sums.chunks(CHUNK)) {
        let Some(first) = chunk.first() else { continue };
        let n = chunk.len();
        // blocks[2j] = AD state v_j, blocks[2j+1] = Σ_j ⊕ T_in.
        let mut blocks = [[0u8; BLOCK]; 2 * CHUNK];
        let mut keys: [&AesKey; 2 * CHUNK] = [first.lane.key; 2 * CHUNK];
        for (j, (job, sum)) in chunk.iter().zip(sums).enumerate() {
            let key = job.lane.key;
            let d = key.derived::<CobraKeys>();
            blocks[2 * j] = ad_state(k, key, d, job.ad);
            blocks[2 * j + 1] = xor(sum, &d.t_in);
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
            finish_tag(job, t, &mut results[job.index], len);
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
        let l = rev(&d.rl);
        assert_eq!(d.mul_l(&l), blk("B9BFD006D62B3543C3464EA064DA2407"));
        // V_0 = L·L ⊕ N·L, and the chain's start is the value whose product by L it is.
        let v0 = blk("73FE6E7C8166AF53B530CD7FEA5FCCAB");
        assert_eq!(
            xor(&d.mul_l(&l), &d.mul_l(&n.clone().try_into().unwrap())),
            v0
        );
        assert_eq!(d.mul_l(&rev(&chain_start(&d, &n))), v0);
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
    /// Spec §6 and §7's tag literally, pair by pair, one product at a time: the reference
    /// for the chains and products run in the GHASH domain. Returns `C ‖ T`.
    fn reference_seal(k: Kernels, key: &AesKey, nonce: &[u8], ad: &[u8], m: &[u8]) -> Vec<u8> {
        let d = CobraKeys::derive(key);
        let l = rev(&d.rl);
        let n: Block = nonce.try_into().unwrap();
        let mut v = xor(&d.mul_l(&l), &d.mul_l(&n));
        let mut delta = d.lp;
        let mut sum = [0u8; BLOCK];
        let mut out = Vec::new();
        for pair in m.chunks_exact(2 * BLOCK) {
            let s = xor(&pair[..BLOCK].try_into().unwrap(), &v);
            let r = xor(&pair[BLOCK..].try_into().unwrap(), &d.mul_l(&s));
            v = d.mul_l(&r);
            sum = xor(&sum, &xor(&s, &r));
            let mut c1 = xor(&s, &delta);
            key.encrypt_block(&mut c1);
            let c1 = xor(&c1, &r);
            let mut c2 = xor(&c1, &tpl(&delta));
            key.encrypt_block(&mut c2);
            out.extend_from_slice(&c1);
            out.extend_from_slice(&xor(&c2, &s));
            delta = dbl(&delta);
        }
        let mut a = ad_state(k, key, &d, ad);
        key.encrypt_block(&mut a);
        let mut t = xor(&sum, &d.t_in);
        key.encrypt_block(&mut t);
        let mut t = xor(&xor(&t, &n), &xor(&a, &d.t_out));
        key.encrypt_block(&mut t);
        out.extend_from_slice(&t);
        out
    }

    /// Messages of 0..=40 pairs (one window, several, and partial ones) in one batch with
    /// mixed keys, nonces and AD: the batch path at several lane counts and the sequential
    /// path equal the literal reference on every backend, and decryption in place gives
    /// the plaintext back.
    #[test]
    fn paths_match_the_literal_specification() {
        use crate::batch::{Engine, Job, Tag};
        use crate::block::test_bytes as bytes;
        use crate::{Algorithm, Op};
        let alg = Algorithm::Aes128CobraR;
        let keys: Vec<AesKey> = (0..3)
            .map(|i| AesKey::new(&bytes(50 + i, 16)).unwrap())
            .collect();
        let pairs = [
            0usize, 1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 40, 7, 1, 24, 9, 2,
        ];
        let msgs: Vec<Vec<u8>> = pairs
            .iter()
            .enumerate()
            .map(|(i, &p)| bytes(100 + i as u64, 32 * p))
            .collect();
        let nonces: Vec<Vec<u8>> = (0..pairs.len())
            .map(|i| bytes(200 + i as u64, 16))
            .collect();
        let ads: Vec<Vec<u8>> = (0..pairs.len())
            .map(|i| bytes(300 + i as u64, i % 4 * 9))
            .collect();
        let key_of = |i: usize| &keys[i % keys.len()];
        for b in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(b).unwrap();
            let want: Vec<Vec<u8>> = (0..pairs.len())
                .map(|i| reference_seal(k, key_of(i), &nonces[i], &ads[i], &msgs[i]))
                .collect();
            for lanes in [None, Some(1), Some(3), Some(16)] {
                let engine = Engine::untuned(b).unwrap();
                let engine = match lanes {
                    Some(p) => engine.with_lanes(p).unwrap(),
                    None => engine,
                };
                let run = |op, jobs: &mut [Job<'_>]| match lanes {
                    Some(_) => engine.process(alg, op, jobs),
                    None => engine.process_sequential(alg, op, jobs),
                };
                let mut outs: Vec<Vec<u8>> = msgs.iter().map(|m| vec![0; m.len()]).collect();
                let mut tags = vec![[0u8; 16]; pairs.len()];
                let mut jobs: Vec<Job<'_>> = outs
                    .iter_mut()
                    .zip(tags.iter_mut())
                    .enumerate()
                    .map(|(i, (o, t))| {
                        Job::copy(key_of(i), &msgs[i], o)
                            .with_iv(&nonces[i])
                            .with_ad(&ads[i])
                            .with_tag(Tag::Out(t))
                    })
                    .collect();
                let results = run(Op::Encrypt, &mut jobs);
                drop(jobs);
                for i in 0..pairs.len() {
                    assert!(results[i].is_ok(), "{b:?} {lanes:?} job {i}");
                    let mut got = outs[i].clone();
                    got.extend_from_slice(&tags[i]);
                    assert_eq!(got, want[i], "{b:?} {lanes:?} job {i} ({} pairs)", pairs[i]);
                }
                let mut jobs: Vec<Job<'_>> = outs
                    .iter_mut()
                    .zip(tags.iter())
                    .enumerate()
                    .map(|(i, (o, t))| {
                        Job::in_place(key_of(i), o)
                            .with_iv(&nonces[i])
                            .with_ad(&ads[i])
                            .with_tag(Tag::In(t))
                    })
                    .collect();
                let results = run(Op::Decrypt, &mut jobs);
                drop(jobs);
                for i in 0..pairs.len() {
                    assert!(results[i].is_ok(), "{b:?} {lanes:?} job {i} decrypt");
                    assert_eq!(outs[i], msgs[i], "{b:?} {lanes:?} job {i} decrypt");
                }
            }
        }
    }

    /// The SSSE3 and AVX2 reversals equal `rev` on blocks with every byte value in every
    /// position, for every count (odd ones leave AVX2 a block for xmm), copying and in
    /// place, and return the xor of what they wrote.
    #[test]
    fn rev_kernels_are_rev() {
        let blocks: Vec<Block> = (0..33u8)
            .map(|i| core::array::from_fn(|j| ((16 * usize::from(i) + j) as u8).wrapping_mul(37)))
            .collect();
        for b in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(b).unwrap();
            for n in 0..=blocks.len() {
                let want: Vec<Block> = blocks[..n].iter().map(rev).collect();
                let want_xor = want.iter().fold([0u8; BLOCK], |a, b| xor(&a, b));
                let input = blocks[..n].as_flattened().to_vec();
                let mut out = vec![0u8; 16 * n];
                let got_xor = rev_io(k, &IoPtrs::copy(&input, &mut out));
                assert_eq!(out, want.as_flattened(), "{b:?} n={n}");
                assert_eq!(got_xor, want_xor, "{b:?} n={n}");
                let mut inplace = input.clone();
                rev_io(k, &IoPtrs::in_place(&mut inplace, 16 * n));
                assert_eq!(inplace, want.as_flattened(), "{b:?} n={n} in place");
            }
        }
    }
}
