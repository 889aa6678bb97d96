//! AES-JAMBU v2 (Hongjun Wu, Tao Huang; CAESAR round 3): AES-128, an 8-byte nonce, an 8-byte
//! tag and 64-bit message blocks.
//!
//! The state is the 128-bit AES state `S = U ‖ V` (bytes 0..8 and 8..16) and a 64-bit
//! register `R`. Words are little-endian, as the designers' reference loads them (its
//! constants land in byte 0 of `U`, its padding byte `0x80` in byte 0 of the `V` half).
//!
//! * Initialisation: `S = E(N ‖ 0^64)`, then `U ^= 5` and `R = V`.
//! * Every frame: `S = E(S)`, then `U ^= R ^ c` with the frame constant `c`, `V ^= X` with
//!   the 8-byte input `X`, then `R ^= V`.
//! * Associated data: frames with `c = 1`, `X` = each whole 8-byte block, then one last frame
//!   with the 10*-padded remainder (a whole-block AD still costs this padding frame,
//!   `X = 0x80` in byte 0).
//! * Message: frames with `c = 0`, `X` = each plaintext block `P` (for decryption `P = U ^ C`,
//!   computed before `V` absorbs it), output `C = U ^ P`; then the padding frame, which also
//!   carries the partial last block (its output is `U ^ P` on the message bytes only).
//! * Tag: a frame with `c = 3` and `X = 0`, then `S = E(S)` once more and
//!   `T = U ^ V ^ R`.
//!
//! A message of `a` AD bytes and `m` message bytes costs `a/8 + m/8 + 5` AES calls, each
//! depending on the previous one: JAMBU is strictly sequential.
//!
//! # Scheduling
//! Every message is a [`StepLane`] of width 1 whose steps are exactly those AES calls (the
//! nonce initialisation `E(N ‖ 0^64)` is step 0, the two tag calls the last two). The batch
//! path drives all lanes through the comb stepper ([`run_steps`] with `Path::Comb`): sorted
//! by length, `P` lanes side by side, `P` independent blocks per cipher call. The single path
//! drives the same lane alone (`Path::Single`, no allocation), so both give the same bytes.
//!
//! # State representation
//! The state update between two AES calls is a handful of 64-bit xors. The lane keeps `U`,
//! `V` and `R` as three `u64` in general-purpose registers: the cipher output arrives in
//! memory (the stepper's block buffer), two 64-bit loads fetch its halves (they forward from
//! the cipher's 16-byte store), the xors run on the scalar ALUs (four ports on current x86
//! cores, against three vector ports), and the message word and the output word are plain
//! 64-bit loads and stores. Keeping `S` as a 128-bit vector instead would need the 64-bit
//! operands widened into xmm registers (`R ^ c` and `X` combined with `movq`/`punpcklqdq`)
//! and `V` extracted back for `R` and `U` for the output word: more instructions, each
//! crossing between register files, with no vector-wide operation to gain (papers/000 §6.1
//! makes the same observation). The ignored test `state_update_gpr_vs_xmm` times the two
//! forms (measured on a shared Zen-class machine: the 64-bit form 2–3x faster per update).
//!
//! The one place where the vector unit is used is the next cipher input: `U ‖ V` is joined in
//! an xmm register and written with one 16-byte store ([`put_state`]), because the cipher
//! reads the block with one 16-byte load, which two 8-byte stores would not forward to.
//!
//! # Decryption
//! The state absorbs the plaintext, so decryption writes the plaintext while computing the
//! tag; the tag is then compared in constant time ([`tag_matches`]) and on a mismatch the
//! output `[..len]` is zeroed and the job fails with [`Error::AuthenticationFailed`].
//!
//! # Secrets
//! The lane state (`U`, `V`, `R`, the computed tag) is wiped when the lane is dropped, the
//! stepper wipes its block buffer, and the 16-byte tag block of verification is wiped.

use crate::aes::{AesKey, Kernels};
use crate::block::{tag_matches, wipe, Block, IoPtrs};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::steps::{run_steps, StepLane};
use crate::{Error, JobResult, Op};

/// Frame constant of the initialisation (xored into `U` after `E(N ‖ 0^64)`).
const INIT: u64 = 5;
/// Frame constant of the associated-data frames.
const AD: u64 = 1;
/// Frame constant of the tag frame.
const FINAL: u64 = 3;

/// The 10* padding word of a block of `n` (0..8) bytes: `0x80` in byte `n`.
#[inline(always)]
fn pad(n: usize) -> u64 {
    0x80u64 << (8 * n)
}

/// The low `n` (0..8) bytes of a word.
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    (1u64 << (8 * n)) - 1
}

/// The input bytes `[off, off + 8)` as a little-endian word (`off + 8 <= io.len`).
#[inline(always)]
fn read8(io: &IoPtrs<'_>, off: usize) -> u64 {
    assert!(off <= io.len && io.len - off >= 8);
    // SAFETY: by the `IoPtrs` invariant `src` is readable for `len` bytes and
    // `[off, off + 8)` lies inside `[0, len)` (checked above); the read is unaligned.
    u64::from_le_bytes(unsafe { io.src.add(off).cast::<[u8; 8]>().read_unaligned() })
}

/// Writes `w` little-endian at output bytes `[off, off + 8)` (`off + 8 <= io.out_cap`).
///
/// In place the output is the input: the lane only ever writes 8 bytes it has already read,
/// and never reads them again.
#[inline(always)]
fn write8(io: &IoPtrs<'_>, off: usize, w: u64) {
    assert!(!io.dst.is_null() && off <= io.out_cap && io.out_cap - off >= 8);
    // SAFETY: by the `IoPtrs` invariant `dst` is writable for `out_cap` bytes and
    // `[off, off + 8)` lies inside `[0, out_cap)` (checked above).
    unsafe {
        io.dst
            .add(off)
            .cast::<[u8; 8]>()
            .write_unaligned(w.to_le_bytes())
    };
}

/// The last `n = len % 8` input bytes as the low bytes of a word (0 when `n == 0`).
///
/// With 8 bytes or more the last 8 input bytes are read in one load and shifted (no
/// variable-length copy); in place, the head of that window may already hold output, which
/// the shift discards.
#[inline(always)]
fn read_tail(io: &IoPtrs<'_>) -> u64 {
    let n = io.len % 8;
    if n == 0 {
        0
    } else if io.len >= 8 {
        read8(io, io.len - 8) >> (8 * (8 - n))
    } else {
        // SAFETY: `src` is readable for `len` bytes (`IoPtrs` invariant; non-null even when
        // empty, it comes from a slice); the slice lives only for this read, while nothing
        // writes the output.
        let s = unsafe { core::slice::from_raw_parts(io.src, io.len) };
        s.iter()
            .enumerate()
            .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i))
    }
}

/// Writes the low `n = len % 8` bytes of `w` to output bytes `[len - n, len)`.
///
/// With 8 bytes or more, the last 8 output bytes are read, the tail merged in and written
/// back: the head of that window is output already written (the previous block), rewritten
/// unchanged.
#[inline(always)]
fn write_tail(io: &IoPtrs<'_>, w: u64) {
    let n = io.len % 8;
    if n == 0 {
        return;
    }
    assert!(!io.dst.is_null() && io.len <= io.out_cap);
    if io.len >= 8 {
        let at = io.len - 8;
        // SAFETY: `[at, at + 8)` lies inside the writable output (`len <= out_cap`), which
        // is the caller's initialised buffer and so readable.
        let old = u64::from_le_bytes(unsafe { io.dst.add(at).cast::<[u8; 8]>().read_unaligned() });
        let shift = 8 * (8 - n);
        let merged = (old & low_bytes(8 - n)) | (w << shift);
        write8(io, at, merged);
    } else {
        let mut bytes = w.to_le_bytes();
        // SAFETY: `[0, n) = [0, len)` lies inside the writable output (`len <= out_cap`);
        // `bytes` is a local, so it does not overlap it.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), io.dst, n) };
        zeroize::Zeroize::zeroize(&mut bytes);
    }
}

/// Writes the cipher input `U ‖ V` as one 16-byte store.
///
/// The cipher reads the block with one 16-byte load; two 8-byte stores would not forward to
/// it (the load would wait for both stores to reach the cache, on the critical path of every
/// step), so the halves are joined in an xmm register first (`movq`, `punpcklqdq`).
#[inline(always)]
fn put_state(b: &mut Block, u: u64, v: u64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        // SAFETY: SSE2 is enabled for the whole build (the cfg above); `b` is 16 writable
        // bytes and the store has no alignment requirement.
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), _mm_set_epi64x(v as i64, u as i64)) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        *b = (u128::from(u) | u128::from(v) << 64).to_le_bytes();
    }
}

/// Associated-data word `j` (whole 8-byte block), little-endian.
#[inline(always)]
fn ad_word(ad: &[u8], j: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&ad[8 * j..8 * j + 8]);
    u64::from_le_bytes(w)
}

/// The 10*-padded last associated-data block (the bytes after the whole blocks, then `0x80`).
#[inline(always)]
fn ad_last(ad: &[u8]) -> u64 {
    let n = ad.len() % 8;
    let tail = &ad[ad.len() - n..];
    tail.iter()
        .enumerate()
        .fold(pad(n), |w, (i, &b)| w | u64::from(b) << (8 * i))
}

/// One JAMBU message as the comb stepper drives it (`DEC`: decryption). Steps:
///
/// | step | AES input → output use |
/// |---|---|
/// | `0` | `N ‖ 0^64` → initialisation |
/// | `1 ..= a/8` | AD block `step − 1` |
/// | `msg − 1` | padded AD remainder |
/// | `msg .. pad` | message block `step − msg` |
/// | `pad` | padded message remainder (partial last block) |
/// | `pad + 1` | tag frame (constant 3) |
/// | `pad + 2` | `T = U ^ V ^ R` |
struct Lane<'a, const DEC: bool> {
    key: &'a AesKey,
    io: IoPtrs<'a>,
    ad: &'a [u8],
    /// The state: `S = U ‖ V` (the next cipher input), `R`.
    u: u64,
    v: u64,
    r: u64,
    /// First message step (`a/8 + 2`).
    msg: usize,
    /// Whole message blocks (`m/8`); the padding step is `msg + full`.
    full: usize,
    /// The computed tag, after the last step.
    tag: u64,
}

impl<'a, const DEC: bool> Lane<'a, DEC> {
    fn new(job: &Prepared<'a>) -> Self {
        Self::with(job.lane.key, job.lane.io, job.ad, job.nonce)
    }

    fn with(key: &'a AesKey, io: IoPtrs<'a>, ad: &'a [u8], nonce: &[u8]) -> Self {
        let mut n = [0u8; 8];
        // The nonce length (8) was validated; a shorter one could not reach here.
        n.copy_from_slice(&nonce[..8]);
        Lane {
            key,
            io,
            ad,
            u: u64::from_le_bytes(n),
            v: 0,
            r: 0,
            msg: ad.len() / 8 + 2,
            full: io.len / 8,
            tag: 0,
        }
    }

    /// Every step that is not a whole message block (once per message each, or once per AD
    /// block): kept out of line so the message-block step stays small.
    #[inline(never)]
    fn store_other(&mut self, step: usize, su: u64, sv: u64) {
        let pad_step = self.msg + self.full;
        if step == 0 {
            self.u = su ^ INIT;
            self.v = sv;
            self.r = sv;
        } else if step < self.msg {
            // AD: whole blocks, then the padded remainder (always present).
            let x = if step < self.msg - 1 {
                ad_word(self.ad, step - 1)
            } else {
                ad_last(self.ad)
            };
            self.u = su ^ self.r ^ AD;
            self.v = sv ^ x;
            self.r ^= self.v;
        } else if step == pad_step {
            // The padding frame with the partial last block (possibly empty).
            let n = self.io.len % 8;
            let u = su ^ self.r;
            let p = if DEC {
                let p = (u ^ read_tail(&self.io)) & low_bytes(n);
                write_tail(&self.io, p);
                p
            } else {
                let p = read_tail(&self.io);
                write_tail(&self.io, u ^ p);
                p
            };
            self.u = u;
            self.v = sv ^ p ^ pad(n);
            self.r ^= self.v;
        } else if step == pad_step + 1 {
            self.u = su ^ self.r ^ FINAL;
            self.v = sv;
            self.r ^= sv;
        } else {
            self.tag = su ^ sv ^ self.r;
        }
    }
}

impl<'a, const DEC: bool> StepLane<'a> for Lane<'a, DEC> {
    const WIDTH: usize = 1;

    #[inline(always)]
    fn steps(&self) -> usize {
        self.msg + self.full + 3
    }

    #[inline(always)]
    fn key(&self, _slot: usize) -> &'a AesKey {
        self.key
    }

    #[inline(always)]
    fn load(&mut self, _step: usize, inputs: &mut [Block]) {
        put_state(&mut inputs[0], self.u, self.v);
    }

    #[inline(always)]
    fn store(&mut self, step: usize, outputs: &[Block]) {
        let o = &outputs[0];
        let mut h = [0u8; 8];
        h.copy_from_slice(&o[..8]);
        let su = u64::from_le_bytes(h);
        h.copy_from_slice(&o[8..]);
        let sv = u64::from_le_bytes(h);
        let j = step.wrapping_sub(self.msg);
        if j < self.full {
            // A whole message block: the hot step.
            let off = 8 * j;
            self.u = su ^ self.r;
            let p = if DEC {
                let p = self.u ^ read8(&self.io, off);
                write8(&self.io, off, p);
                p
            } else {
                let p = read8(&self.io, off);
                write8(&self.io, off, self.u ^ p);
                p
            };
            self.v = sv ^ p;
            self.r ^= self.v;
        } else {
            self.store_other(step, su, sv);
        }
    }
}

impl<const DEC: bool> Drop for Lane<'_, DEC> {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.u.zeroize();
        self.v.zeroize();
        self.r.zeroize();
        self.tag.zeroize();
    }
}

/// Runs AES-JAMBU `op` over validated jobs (16-byte keys, 8-byte nonces, 8-byte tags in the
/// direction of `op`, output room checked), writing `results[job.index]`.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    match op {
        Op::Encrypt => run_op::<false>(k, jobs, results, path),
        Op::Decrypt => run_op::<true>(k, jobs, results, path),
    }
}

fn run_op<const DEC: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
) {
    if path == Path::Single || jobs.len() <= 1 {
        // One lane at a time on the stack: no allocation per message.
        for job in jobs.iter_mut() {
            let mut lane = Lane::<DEC>::new(job);
            run_steps(k, core::slice::from_mut(&mut lane), Path::Single);
            results[job.index] = finish(job, &lane);
        }
        return;
    }
    let mut lanes: Vec<Lane<'_, DEC>> = jobs.iter().map(Lane::new).collect();
    run_steps(k, &mut lanes, path);
    for (job, lane) in jobs.iter_mut().zip(&lanes) {
        results[job.index] = finish(job, lane);
    }
}

/// Writes (encryption) or checks (decryption) the tag of a lane that ran all its steps.
fn finish<const DEC: bool>(job: &mut Prepared<'_>, lane: &Lane<'_, DEC>) -> JobResult {
    let len = lane.io.len;
    match &mut job.tag {
        TagIo::Out(tag) if !DEC => {
            // The tag length (8) was validated.
            tag[..8].copy_from_slice(&lane.tag.to_le_bytes());
            Ok(len)
        }
        TagIo::In(expected) if DEC => {
            let mut t = [0u8; 16];
            t[..8].copy_from_slice(&lane.tag.to_le_bytes());
            let ok = tag_matches(&t, expected);
            wipe(&mut t);
            if ok {
                Ok(len)
            } else {
                lane.io.zero_output(len);
                Err(Error::AuthenticationFailed)
            }
        }
        // Excluded by validation (a tag in the direction of the operation).
        _ => {
            lane.io.zero_output(len);
            Err(Error::TagMisuse)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two forms of the message-block state update, as the lane meets it: the cipher
    /// output in a 16-byte buffer, a plaintext word `p`, the register `R`; the update writes
    /// the next cipher input back to the buffer and yields the ciphertext word. `gpr`: two
    /// 64-bit loads, scalar xors, two 64-bit stores (what the lane does); `xmm`: one 128-bit
    /// load, `(R, p)` moved into an xmm register and xored in, one 128-bit store, `V` and `U`
    /// extracted back for `R` and the output word.
    fn update_gpr(buf: &mut Block, r: &mut u64, p: u64) -> u64 {
        let mut h = [0u8; 8];
        h.copy_from_slice(&buf[..8]);
        let u = u64::from_le_bytes(h) ^ *r;
        h.copy_from_slice(&buf[8..]);
        let v = u64::from_le_bytes(h) ^ p;
        *r ^= v;
        buf[..8].copy_from_slice(&u.to_le_bytes());
        buf[8..].copy_from_slice(&v.to_le_bytes());
        u ^ p
    }

    #[cfg(target_arch = "x86_64")]
    fn update_xmm(buf: &mut Block, r: &mut u64, p: u64) -> u64 {
        use core::arch::x86_64::*;
        // SSE2 is part of the x86_64 baseline, so these intrinsics are always available.
        // SAFETY: `buf` is 16 readable and writable bytes; the loads/stores are unaligned.
        unsafe {
            let s = _mm_loadu_si128(buf.as_ptr().cast());
            let s = _mm_xor_si128(s, _mm_set_epi64x(p as i64, *r as i64));
            _mm_storeu_si128(buf.as_mut_ptr().cast(), s);
            *r ^= _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)) as u64;
            _mm_cvtsi128_si64(s) as u64 ^ p
        }
    }

    /// `n` chained updates (the buffer forced through memory each time, as between two
    /// cipher calls); returns the final state and a digest of the output words.
    #[inline(never)]
    fn chain(n: usize, f: fn(&mut Block, &mut u64, u64) -> u64) -> (Block, u64, u64) {
        let mut buf: Block = core::array::from_fn(|i| i as u8);
        let (mut r, mut acc) = (0x0123_4567_89ab_cdefu64, 0u64);
        for i in 0..n as u64 {
            let p = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            acc = acc.rotate_left(1) ^ f(core::hint::black_box(&mut buf), &mut r, p);
        }
        (buf, r, acc)
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    #[ignore = "micro-timing; run with --ignored --nocapture (the test profile is optimised)"]
    fn state_update_gpr_vs_xmm() {
        assert_eq!(chain(1000, update_gpr), chain(1000, update_xmm));
        let n = 20_000_000;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let a = core::hint::black_box(chain(n, update_gpr));
            let gpr = t.elapsed();
            let t = std::time::Instant::now();
            let b = core::hint::black_box(chain(n, update_xmm));
            let xmm = t.elapsed();
            assert_eq!(a, b);
            println!(
                "u64 halves (GPR): {:.2} ns/update, 128-bit (xmm): {:.2} ns/update",
                gpr.as_secs_f64() * 1e9 / n as f64,
                xmm.as_secs_f64() * 1e9 / n as f64
            );
        }
    }

    /// Time per 8-byte block of the real lanes: one 256 KiB message on the single path, and
    /// 64 messages of 4 KiB comb-scheduled at P = 8 and 16.
    #[test]
    #[ignore = "micro-timing; run with --ignored --nocapture (the test profile is optimised)"]
    fn lane_timing() {
        let Ok(key) = AesKey::new(&[9; 16]) else {
            return;
        };
        let Some(k) = Kernels::new(crate::cpu::Backend::Ni) else {
            return;
        };
        let time = |lanes: usize, len: usize, path: Path| {
            let mut bufs = vec![vec![0u8; len]; lanes];
            let t = std::time::Instant::now();
            for _ in 0..8 {
                let mut ls: Vec<Lane<'_, false>> = bufs
                    .iter_mut()
                    .map(|b| Lane::with(&key, IoPtrs::in_place(b, len), &[], &[1; 8]))
                    .collect();
                run_steps(k, &mut ls, path);
            }
            t.elapsed().as_secs_f64() * 1e9 / (8 * lanes * len / 8) as f64
        };
        for _ in 0..3 {
            println!(
                "ns per 8-byte block: single {:.2}, comb P=8 {:.2}, comb P=16 {:.2}",
                time(1, 1 << 18, Path::Single),
                time(64, 4096, Path::Comb { lanes: 8 }),
                time(64, 4096, Path::Comb { lanes: 16 })
            );
        }
    }

    #[test]
    fn padding_words() {
        assert_eq!(pad(0), 0x80);
        assert_eq!(pad(7), 0x80 << 56);
        assert_eq!(low_bytes(0), 0);
        assert_eq!(low_bytes(3), 0xff_ffff);
        assert_eq!(ad_last(&[]), 0x80);
        assert_eq!(ad_last(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), 0x80_09);
        assert_eq!(
            ad_word(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 0),
            0x0807_0605_0403_0201
        );
    }

    /// Tail reads and merged tail writes against a byte model, in place and out of place.
    #[test]
    fn tails_match_a_bytewise_model() {
        for len in 0..=20usize {
            let input: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x3C).collect();
            let n = len % 8;
            let mut want = 0u64;
            for (i, &b) in input[len - n..].iter().enumerate() {
                want |= u64::from(b) << (8 * i);
            }
            assert_eq!(read_tail(&IoPtrs::read_only(&input)), want, "len {len}");
            let w = 0x1122_3344_5566_7788u64;
            let mut out = vec![0xEEu8; len + 2];
            write_tail(&IoPtrs::copy(&input, &mut out), w);
            let mut expect = vec![0xEEu8; len + 2];
            for i in 0..n {
                expect[len - n + i] = (w >> (8 * i)) as u8;
            }
            assert_eq!(out, expect, "copy, len {len}");
            let mut buf = input.clone();
            write_tail(&IoPtrs::in_place(&mut buf, len), w);
            let mut expect = input.clone();
            for i in 0..n {
                expect[len - n + i] = (w >> (8 * i)) as u8;
            }
            assert_eq!(buf, expect, "in place, len {len}");
        }
    }
}
