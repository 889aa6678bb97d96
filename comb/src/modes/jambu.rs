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
//! depending on the previous one: JAMBU is strictly sequential, two AES calls per 16 message
//! bytes.
//!
//! # How a batch runs
//! Every message is a [`Lane`] (its key, buffers and `U`, `V`, `R`). [`process`] takes all
//! lanes through the mode in passes, each pass one stretch of frames for every lane:
//!
//! 1. the initialisation and the AD padding frame (one fused pass when no job has a whole AD
//!    block, as in packet traffic; otherwise the initialisation, the whole AD blocks as a
//!    window run, then the padding frame);
//! 2. the whole message blocks: the window kernels, driven by the comb plan;
//! 3. the message padding frame, the tag frame and the final call, fused.
//!
//! The edge passes ([`edges`]) run 8 lanes per call on xmm, 16 on ymm (two per register),
//! all their frames in registers (the padded AD word and the partial block are read before
//! the call, the partial output written after it). The message run is where the bytes are:
//! on the batch path the lanes are made in the comb order of their message blocks (longest
//! first, `crate::sched::plan`), so each group of `P` lanes is a contiguous run and each
//! window of equal progress is a prefix of it ([`drive_sorted`]); a window is one kernel
//! call, or a few of near-equal size when it has more lanes than a call takes. The single
//! path runs the same passes with one lane, and the message blocks through the one-lane
//! kernel: the sequential baseline is the best single-message code, not the stepper, and
//! both paths give the same bytes by construction.
//!
//! # The window kernels
//! A lane keeps, across a window, `x = S ^ k0` (its next cipher input, already whitened) and
//! `ρ = (·, R)`: `R` in the high half of a vector, beside `V`. A frame is the nine AESENC
//! rounds and then
//! * encryption / AD: `x = AESENCLAST(x, k_last ^ k0 ^ (R ^ c, X))`: the frame's xors and the
//!   next whitening ride in the last round key, so from one frame to the next the chain is
//!   the ten AES rounds and nothing else. `X` arrives in the low half (an 8-byte `movq`
//!   load), `(R, X)` is one `palignr` of `(X, ·)` and `ρ`, the output word `U ^ P` is the
//!   low half of `x ^ k0 ^ X` (an 8-byte store), and `R ^= V` is one xor of `ρ` with
//!   `x ^ k0`, all off the chain;
//! * decryption needs the frame's `U` before it has `X = P = U ^ C`: `t = AESENCLAST(x,
//!   k_last ^ k0 ^ (R, 0))`, then `x = t ^ (0, P)` computed as `(t ^ (0, k0 ^ C)) ^ (0,
//!   t_low)`: two operations on the chain (decryption of one message: 1.71 against 1.59
//!   ns/byte for encryption, the ~3 extra cycles of a 40-cycle frame).
//!
//! `N` lanes interleave their rounds (rounds outer, lanes inner), so a frame of `N` lanes is
//! `10 N` independent AES instructions against a chain latency of 40 cycles (AESENC latency
//! 4). On xmm a call takes up to 8 lanes (two per-lane registers, `x` and `ρ`; 8 lanes
//! already fill the AES unit at two per cycle): measured on Zen 3, 2 KiB messages, `P = 8`
//! in one call of 8 lanes 0.26 ns/byte against 0.41 as two calls of 4 (`MAX_XMM = 6` gave
//! 4 + 4), and `P = 12` as one call of 12 lanes 0.32 against 0.31 as two of 6: past 8 the
//! registers spill and nothing is gained.
//!
//! With VAES the same kernel runs two lanes per ymm register (every operation of a frame acts
//! on each 128-bit half alone: VAESENC, VPALIGNR, VPSRLDQ, VPSLLDQ), up to 16 lanes (8
//! registers) per call; an odd lane count leaves the last register's high half a ghost that
//! reads and writes nothing. The xmm kernel is AES-bound at 8 lanes and the ymm one does
//! twice the blocks per instruction: measured (the ignored test `mode_timing`, `P = 16`,
//! batches of 64, encryption, ns/byte) 0.246 against 0.331 on the realistic mix and 0.174
//! against 0.264 at 2 KiB, so the vaes256 backend uses it for every window of two or more
//! lanes (one lane runs on xmm: half a register would be wasted).
//!
//! # State representation
//! The stepper this replaced kept `U`, `V`, `R` in general-purpose registers, because there
//! the cipher output came back through memory and 64-bit loads and scalar xors were the
//! cheapest way to consume it. In a register-resident kernel the cipher output is already in
//! a vector register, the whole frame update is three xors and a `palignr` there, and none of
//! it is on the AES chain (encryption); moving `U` and `V` to general-purpose registers and
//! back would add transfers between register files, on the chain for the next input. So the
//! state stays a vector; the only 64-bit memory accesses are the message and output words.
//! (A general-purpose form of the kernel was not built to compare.)
//!
//! # Decryption
//! The state absorbs the plaintext, so decryption writes the plaintext while computing the
//! tag; the tag is then compared in constant time ([`tag_matches`]) and on a mismatch the
//! output `[..len]` is zeroed and the job fails with [`Error::AuthenticationFailed`].
//!
//! # Secrets
//! The lane state (`U`, `V`, `R`, the computed tag) is wiped when the lane is dropped; the
//! edge passes wipe their input and output words, the ymm kernels their stack copies of
//! per-lane round-key pairs (a shared key is broadcast from the schedule, never copied), and
//! verification its 16-byte tag block. Nothing branches on or indexes by secret data: the
//! kernels' control flow depends on lengths and lane counts only.

use crate::aes::{AesKey, Kernels};
use crate::block::{tag_matches, wipe, IoPtrs};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::plan::{group_windows, order_by_decreasing_length, MAX_LANES};
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

/// The 10*-padded last associated-data block (the bytes after the whole blocks, then `0x80`).
#[inline(always)]
fn ad_last(ad: &[u8]) -> u64 {
    let n = ad.len() % 8;
    let tail = &ad[ad.len() - n..];
    tail.iter()
        .enumerate()
        .fold(pad(n), |w, (i, &b)| w | u64::from(b) << (8 * i))
}

/// What a run of frames absorbs, and where from: the kernels are instantiated per kind.
type Kind = u8;
/// Whole associated-data blocks: `c = 1`, `X` = the AD word, nothing written.
const AD_FRAMES: Kind = 0;
/// Whole plaintext blocks: `c = 0`, `X = P`, output `C = U ^ P`.
const ENC_FRAMES: Kind = 1;
/// Whole ciphertext blocks: `c = 0`, `P = U ^ C` written, `X = P`.
const DEC_FRAMES: Kind = 2;

/// AES-128 (the only key size of JAMBU; validation rejects the others).
const ROUNDS: usize = 10;

/// One JAMBU message: its buffers, its key and its state `S = U ‖ V`, `R` between frames.
struct Lane<'a> {
    key: &'a AesKey,
    /// The message: input, output.
    io: IoPtrs<'a>,
    /// The associated data.
    ad: &'a [u8],
    u: u64,
    v: u64,
    r: u64,
    /// The computed tag, after the last frame.
    tag: u64,
}

impl<'a> Lane<'a> {
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
            tag: 0,
        }
    }

    /// The whole 8-byte blocks of the input a run of kind `K` reads.
    #[inline(always)]
    fn frames<const K: Kind>(&self) -> usize {
        if K == AD_FRAMES {
            self.ad.len() / 8
        } else {
            self.io.len / 8
        }
    }

    /// Where a run of kind `K` reads its words and writes its output words (none for AD).
    #[inline(always)]
    fn source<const K: Kind>(&self) -> (*const u8, *mut u8) {
        if K == AD_FRAMES {
            (self.ad.as_ptr(), core::ptr::null_mut())
        } else {
            (self.io.src, self.io.dst)
        }
    }

    /// A copy for a run in another order (the state is taken back with [`Lane::take_state`]).
    fn dup(&self) -> Lane<'a> {
        Lane { ..*self }
    }

    fn take_state(&mut self, from: &Lane<'_>) {
        (self.u, self.v, self.r) = (from.u, from.v, from.r);
    }
}

impl Drop for Lane<'_> {
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
    match path {
        Path::Comb { .. } if jobs.len() > 1 => {
            // The lanes in the comb order of their message frames (longest first): the
            // message run, most of the work, then needs no reordering.
            let order = order_by_decreasing_length(jobs.len(), |i| jobs[i].lane.io.len / 8);
            let mut lanes: Vec<Lane<'_>> = order.iter().map(|&i| Lane::new(&jobs[i])).collect();
            process::<DEC>(k, &mut lanes, path);
            for (&i, lane) in order.iter().zip(&lanes) {
                let job = &mut jobs[i];
                results[job.index] = finish::<DEC>(job, lane);
            }
        }
        _ => {
            // One message at a time, its lane on the stack: no allocation per message.
            for job in jobs.iter_mut() {
                let mut lane = [Lane::new(job)];
                process::<DEC>(k, &mut lane, Path::Single);
                results[job.index] = finish::<DEC>(job, &lane[0]);
            }
        }
    }
}

/// Every frame of every lane, in passes over all lanes: the frames around the whole blocks
/// (initialisation, AD padding, message padding, tag) as fused passes of a few frames each
/// ([`edges`], in registers, 8 or 16 lanes per call), the whole blocks as runs of the window
/// kernels ([`drive`]).
fn process<const DEC: bool>(k: Kernels, lanes: &mut [Lane<'_>], path: Path) {
    if lanes.iter().all(|l| l.ad.len() < 8) {
        // No whole AD blocks (most packets): initialisation and the AD padding frame in one.
        edges::<HEAD, DEC>(k, lanes);
    } else {
        edges::<INIT_ONLY, DEC>(k, lanes);
        drive::<AD_FRAMES>(k, lanes, path);
        edges::<AD_PAD, DEC>(k, lanes);
    }
    if DEC {
        drive::<DEC_FRAMES>(k, lanes, path);
    } else {
        drive::<ENC_FRAMES>(k, lanes, path);
    }
    edges::<TAIL, DEC>(k, lanes);
}

/// Which frames an [`edges`] pass runs.
type Edge = u8;
/// Initialisation (`S = E(N ‖ 0^64)`, `U ^= 5`, `R = V`), then the AD padding frame.
const HEAD: Edge = 0;
/// The initialisation alone (whole AD blocks follow).
const INIT_ONLY: Edge = 1;
/// The AD padding frame alone.
const AD_PAD: Edge = 2;
/// The message padding frame (with the partial last block), the tag frame and the final
/// call: `T = U ^ V ^ R`.
const TAIL: Edge = 3;

/// One [`Edge`] pass over all lanes, [`kernels::edge_lanes`] per kernel call (8 on xmm, 16
/// on ymm): the input word of each lane (the padded AD remainder, the message's last partial
/// block) is read before the call, the output word (the partial block's output) written
/// after it.
fn edges<const E: Edge, const DEC: bool>(k: Kernels, lanes: &mut [Lane<'_>]) {
    for chunk in lanes.chunks_mut(kernels::edge_lanes(k)) {
        let mut w = [0u64; kernels::EDGE_MAX];
        for (wj, l) in w.iter_mut().zip(chunk.iter()) {
            *wj = match E {
                HEAD | AD_PAD => ad_last(l.ad),
                TAIL => read_tail(&l.io),
                _ => 0,
            };
        }
        let mut out = [0u64; kernels::EDGE_MAX];
        kernels::edge::<E, DEC>(k, chunk, &w, &mut out);
        if E == TAIL {
            for (l, &o) in chunk.iter().zip(&out) {
                write_tail(&l.io, o);
            }
        }
        zeroize::Zeroize::zeroize(&mut w);
        zeroize::Zeroize::zeroize(&mut out);
    }
}

/// Runs every lane's whole blocks of kind `K`: on the comb path by the comb plan (groups of
/// `P` lanes longest first, windows of equal progress, each window one or a few kernel
/// calls), on the single path one lane after another through the one-lane kernel.
fn drive<const K: Kind>(k: Kernels, lanes: &mut [Lane<'_>], path: Path) {
    let p = match path {
        Path::Comb { lanes: p } if lanes.len() > 1 => p.clamp(1, MAX_LANES),
        _ => {
            for l in lanes.iter_mut() {
                let n = l.frames::<K>();
                let mut run = kernels::Run::<K>::new(core::slice::from_mut(l));
                run.window(Kernels::Ni(k.ni()), 1, 0, n);
            }
            return;
        }
    };
    if lanes.iter().all(|l| l.frames::<K>() == 0) {
        return; // No whole blocks (the AD of most packets): nothing to plan.
    }
    if lanes
        .windows(2)
        .all(|w| w[0].frames::<K>() >= w[1].frames::<K>())
    {
        // Already in comb order (the message run: the lanes were made in it).
        drive_sorted::<K>(k, lanes, p);
    } else {
        let order = order_by_decreasing_length(lanes.len(), |i| lanes[i].frames::<K>());
        let mut sorted: Vec<Lane<'_>> = order.iter().map(|&i| lanes[i].dup()).collect();
        drive_sorted::<K>(k, &mut sorted, p);
        for (&i, l) in order.iter().zip(&sorted) {
            lanes[i].take_state(l);
        }
    }
}

/// [`drive`] over lanes already sorted by decreasing length: the plan's groups are then
/// consecutive runs of `p` lanes, and each group's windows are prefixes of it.
fn drive_sorted<const K: Kind>(k: Kernels, lanes: &mut [Lane<'_>], p: usize) {
    debug_assert!((1..=MAX_LANES).contains(&p));
    for group in lanes.chunks_mut(p) {
        // The group's lengths copied out: the kernels borrow the lanes mutably while the
        // windows are walked.
        let mut lens = [0usize; MAX_LANES];
        for (n, lane) in lens.iter_mut().zip(group.iter()) {
            *n = lane.frames::<K>();
        }
        let count = group.len();
        let mut run = kernels::Run::<K>::new(group);
        let mut done = 0;
        for w in group_windows(count, |i| lens[i]) {
            run.window(k, w.lanes, done, w.blocks);
            done += w.blocks;
        }
    }
}

/// Writes (encryption) or checks (decryption) the tag of a lane that ran all its frames.
fn finish<const DEC: bool>(job: &mut Prepared<'_>, lane: &Lane<'_>) -> JobResult {
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

/// The register-resident kernels (xmm with AES-NI; ymm with VAES, two lanes per register).
mod kernels {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    use super::{
        low_bytes, pad, Edge, Kind, Lane, AD, AD_FRAMES, AD_PAD, DEC_FRAMES, ENC_FRAMES, FINAL,
        HEAD, INIT, INIT_ONLY, ROUNDS, TAIL,
    };
    use crate::aes::lanes::dispatch_pairs;
    use crate::aes::{ni, AesKey, Kernels, RoundKeys};
    use crate::cpu::{NiToken, VaesToken};

    /// Lanes per xmm [`edge`] call: 8 independent AES chains fill the xmm AES unit (latency
    /// 4, two per cycle). Measured (`mode_timing`, 128-byte messages, `P = 16`, vaes256): 16
    /// lanes per call 0.534 ns/byte against 0.456 for 8 (the states spill), and the tail
    /// pass split into a padding pass and a tag pass 0.470 against 0.458 fused.
    const EDGE_XMM: usize = 8;

    /// Lanes per ymm [`edge`] call: two per register, 8 registers, as the window kernels.
    pub(super) const EDGE_MAX: usize = 16;

    /// Lanes per [`edge`] call on the backend of `k`.
    pub(super) fn edge_lanes(k: Kernels) -> usize {
        match k {
            Kernels::Vaes256(_) => EDGE_MAX,
            Kernels::Ni(_) => EDGE_XMM,
        }
    }

    /// Most lanes per xmm window call. Per lane the kernel keeps `x` and `ρ` live (two
    /// registers), so 8 lanes use all 16; measured against 6 and 12 (module docs).
    const MAX_XMM: usize = 8;

    /// Most lanes per ymm window call (two per register, 8 registers: enough to fill the
    /// VAES unit, and the largest window of the default `P = 16`).
    const MAX_YMM: usize = 16;

    /// Round key `r` of a schedule.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn rk(k: &RoundKeys, r: usize) -> __m128i {
        ni::load(&k.0[r])
    }

    /// Runs the frames of pass `E` (see [`super::Edge`]) for `lanes` (1..=[`edge_lanes`] of
    /// `k`, AES-128 keys, any mix of them); `w[j]` is lane `j`'s input word, `out[j]` gets
    /// its output word (`TAIL`: the partial block's output in the low `len % 8` bytes). Two
    /// or more lanes on the ymm backend run two per register ([`edge_ymm`]), otherwise on
    /// xmm ([`edge_ni`]).
    pub(super) fn edge<const E: Edge, const DEC: bool>(
        k: Kernels,
        lanes: &mut [Lane<'_>],
        w: &[u64; EDGE_MAX],
        out: &mut [u64; EDGE_MAX],
    ) {
        assert!(lanes.iter().all(|l| l.key.rounds == ROUNDS));
        assert!(lanes.len() <= edge_lanes(k));
        if let (Kernels::Vaes256(_), 2..) = (k, lanes.len()) {
            let shared = lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key));
            // SAFETY: the token proves VAES, AVX2 and the xmm instructions; every key is
            // AES-128 (asserted above); `dispatch_pairs!` picks the kernel for exactly this
            // lane count (2..=EDGE_MAX, asserted above) and `shared` was just computed.
            unsafe { dispatch_pairs!(lanes.len(), shared, edge_ymm::<E, DEC>(lanes, w, out)) };
            return;
        }
        let _ni: NiToken = k.ni();
        macro_rules! go {
            ($($n:literal)*) => {
                match lanes.len() {
                    $($n => {
                        let Ok(a) = <&mut [Lane<'_>; $n]>::try_from(lanes) else {
                            unreachable!("exactly N lanes")
                        };
                        // SAFETY: the token proves AES-NI, SSE2 and SSSE3; every key is
                        // AES-128 (asserted above), so rounds 0..=10 are its round keys.
                        unsafe { edge_ni::<$n, E, DEC>(a, w, out) }
                    })*
                    0 => {}
                    _ => unreachable!("1..=EDGE_XMM lanes"),
                }
            };
        }
        go!(1 2 3 4 5 6 7 8);
    }

    /// The nine AESENC rounds of one frame on every lane (`x` whitened).
    #[inline]
    #[target_feature(enable = "aes,sse2")]
    fn rounds<const N: usize>(x: &mut [__m128i; N], keys: &[&RoundKeys; N]) {
        for r in 1..ROUNDS {
            for (xj, kj) in x.iter_mut().zip(keys) {
                *xj = _mm_aesenc_si128(*xj, rk(kj, r));
            }
        }
    }

    /// A frame that absorbs `X = w` with constant `c` (no output): `x` the whitened state,
    /// `rho = (·, R)`, `fk = k_last ^ k0`.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn absorb<const N: usize>(
        x: &mut [__m128i; N],
        rho: &mut [__m128i; N],
        keys: &[&RoundKeys; N],
        k0: &[__m128i; N],
        fk: &[__m128i; N],
        c: i64,
        w: &[u64; N],
    ) {
        rounds(x, keys);
        for j in 0..N {
            let d = _mm_alignr_epi8::<8>(_mm_set_epi64x(0, w[j] as i64), rho[j]);
            let last = _mm_xor_si128(_mm_xor_si128(fk[j], d), _mm_set_epi64x(0, c));
            x[j] = _mm_aesenclast_si128(x[j], last);
            rho[j] = _mm_xor_si128(rho[j], _mm_xor_si128(x[j], k0[j]));
        }
    }

    /// # Safety
    /// The CPU has AES-NI, SSE2 and SSSE3; every lane's key is AES-128.
    #[target_feature(enable = "aes,sse2,ssse3")]
    unsafe fn edge_ni<const N: usize, const E: Edge, const DEC: bool>(
        lanes: &mut [Lane<'_>; N],
        w: &[u64; EDGE_MAX],
        out: &mut [u64; EDGE_MAX],
    ) {
        let zero = _mm_setzero_si128();
        let keys: [&RoundKeys; N] = core::array::from_fn(|j| &lanes[j].key.enc);
        let mut k0 = [zero; N];
        let mut fk = [zero; N];
        let mut x = [zero; N];
        let mut rho = [zero; N];
        let mut wn = [0u64; N];
        for j in 0..N {
            let l = &lanes[j];
            k0[j] = rk(keys[j], 0);
            fk[j] = ni::load(&l.key.fold);
            x[j] = _mm_xor_si128(_mm_set_epi64x(l.v as i64, l.u as i64), k0[j]);
            rho[j] = _mm_set_epi64x(l.r as i64, 0);
            wn[j] = w[j];
        }
        let zeros = [0u64; N];
        if E == HEAD || E == INIT_ONLY {
            // R = 0 before the initialisation, so `R = V` is `R ^= V`.
            rho = [zero; N];
            absorb(&mut x, &mut rho, &keys, &k0, &fk, INIT as i64, &zeros);
        }
        if E == HEAD || E == AD_PAD {
            absorb(&mut x, &mut rho, &keys, &k0, &fk, AD as i64, &wn);
        }
        if E == TAIL {
            // The padding frame: X = P ‖ 10*, the output U ^ P on the low n bytes.
            rounds(&mut x, &keys);
            for j in 0..N {
                let n = lanes[j].io.len % 8;
                let padw = _mm_set_epi64x(0, pad(n) as i64);
                let wv = _mm_set_epi64x(0, wn[j] as i64);
                if DEC {
                    // P = (U ^ C) & low n bytes, from the frame's U.
                    let r_lo = _mm_srli_si128::<8>(rho[j]);
                    let t = _mm_aesenclast_si128(x[j], _mm_xor_si128(fk[j], r_lo));
                    let mask = _mm_set_epi64x(0, low_bytes(n) as i64);
                    let p = _mm_and_si128(_mm_xor_si128(_mm_xor_si128(t, k0[j]), wv), mask);
                    out[j] = _mm_cvtsi128_si64(p) as u64;
                    x[j] = _mm_xor_si128(t, _mm_slli_si128::<8>(_mm_or_si128(p, padw)));
                } else {
                    let xw = _mm_or_si128(wv, padw);
                    let d = _mm_alignr_epi8::<8>(xw, rho[j]);
                    x[j] = _mm_aesenclast_si128(x[j], _mm_xor_si128(fk[j], d));
                    let o = _mm_xor_si128(_mm_xor_si128(x[j], k0[j]), xw);
                    out[j] = _mm_cvtsi128_si64(o) as u64;
                }
                rho[j] = _mm_xor_si128(rho[j], _mm_xor_si128(x[j], k0[j]));
            }
            // The tag frame, then T = U ^ V ^ R of one more call.
            absorb(&mut x, &mut rho, &keys, &k0, &fk, FINAL as i64, &zeros);
            rounds(&mut x, &keys);
            for j in 0..N {
                let s = _mm_aesenclast_si128(x[j], rk(keys[j], ROUNDS));
                // T = U ^ V ^ R: the low half of S ^ (V, ·) ^ (R, ·).
                let t = _mm_xor_si128(
                    _mm_xor_si128(s, _mm_unpackhi_epi64(s, s)),
                    _mm_unpackhi_epi64(rho[j], rho[j]),
                );
                lanes[j].tag = _mm_cvtsi128_si64(t) as u64;
            }
        } else {
            for j in 0..N {
                let s = _mm_xor_si128(x[j], k0[j]);
                let l = &mut lanes[j];
                l.u = _mm_cvtsi128_si64(s) as u64;
                l.v = _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)) as u64;
                l.r = _mm_cvtsi128_si64(_mm_unpackhi_epi64(rho[j], rho[j])) as u64;
            }
        }
        zeroize::Zeroize::zeroize(&mut wn);
    }

    /// The round-key rows of one ymm register, its two lanes' rows side by side (rows
    /// 1..=10 filled; a shared key's are broadcast where used instead).
    type PairRows = [__m256i; ROUNDS + 1];

    /// The state of one ymm register of [`frames_ymm`] or [`edge_ymm`], lanes `lo` (low
    /// half) and `hi` (high half; a ghost half is `lo` again): `[k0, fk ^ (c, 0), x, ρ]`
    /// with `x = (U, V) ^ k0` and `ρ = (0, R)` per half (`fk = k_last ^ k0`, `c` the frame
    /// constant the window kernels fold into the last round key). Unless `SHARED` the
    /// register's round-key rows are assembled into `rows`; with `SHARED` the kernels
    /// broadcast `shared`'s rows where used.
    #[inline]
    #[target_feature(enable = "avx,avx2,sse2")]
    fn pair_state<const SHARED: bool>(
        lo: &Lane<'_>,
        hi: &Lane<'_>,
        shared: &AesKey,
        rows: &mut PairRows,
        c: __m128i,
    ) -> [__m256i; 4] {
        let (a, b) = if SHARED {
            (shared, shared)
        } else {
            (lo.key, hi.key)
        };
        if !SHARED {
            for (r, kr) in rows.iter_mut().enumerate().skip(1) {
                *kr = pair(rk(&a.enc, r), rk(&b.enc, r));
            }
        }
        let k0 = pair(rk(&a.enc, 0), rk(&b.enc, 0));
        let fk = pair(
            _mm_xor_si128(ni::load(&a.fold), c),
            _mm_xor_si128(ni::load(&b.fold), c),
        );
        let x = _mm256_xor_si256(
            pair(
                _mm_set_epi64x(lo.v as i64, lo.u as i64),
                _mm_set_epi64x(hi.v as i64, hi.u as i64),
            ),
            k0,
        );
        let rho = pair(
            _mm_set_epi64x(lo.r as i64, 0),
            _mm_set_epi64x(hi.r as i64, 0),
        );
        [k0, fk, x, rho]
    }

    /// The nine AESENC rounds of one frame on every register of a ymm kernel: with `SHARED`
    /// the rows broadcast from lane 0's schedule, otherwise each register's assembled rows.
    #[inline]
    #[target_feature(enable = "avx,avx2,vaes")]
    fn rounds_ymm<const PAIRS: usize, const SHARED: bool>(
        x: &mut [__m256i; PAIRS],
        rks: &[PairRows; PAIRS],
        shared: &RoundKeys,
    ) {
        for r in 1..ROUNDS {
            if SHARED {
                let kr = _mm256_broadcastsi128_si256(rk(shared, r));
                for xp in x.iter_mut() {
                    *xp = _mm256_aesenc_epi128(*xp, kr);
                }
            } else {
                for (xp, kp) in x.iter_mut().zip(rks) {
                    *xp = _mm256_aesenc_epi128(*xp, kp[r]);
                }
            }
        }
    }

    /// [`absorb`] on ymm: a frame that absorbs the words in the low halves of `w` with
    /// constant `c`, two lanes per register.
    #[inline]
    #[target_feature(enable = "avx,avx2,vaes")]
    #[allow(clippy::too_many_arguments)]
    fn absorb_ymm<const PAIRS: usize, const SHARED: bool>(
        x: &mut [__m256i; PAIRS],
        rho: &mut [__m256i; PAIRS],
        rks: &[PairRows; PAIRS],
        shared: &RoundKeys,
        k0: &[__m256i; PAIRS],
        fk: &[__m256i; PAIRS],
        c: i64,
        w: &[__m256i; PAIRS],
    ) {
        rounds_ymm::<PAIRS, SHARED>(x, rks, shared);
        let cv = _mm256_set_epi64x(0, c, 0, c);
        for p in 0..PAIRS {
            let d = _mm256_alignr_epi8::<8>(w[p], rho[p]);
            let last = _mm256_xor_si256(_mm256_xor_si256(fk[p], d), cv);
            x[p] = _mm256_aesenclast_epi128(x[p], last);
            rho[p] = _mm256_xor_si256(rho[p], _mm256_xor_si256(x[p], k0[p]));
        }
    }

    /// The word of lane `h` (0 low, 1 high) of a register: the low 64 bits of that half.
    #[inline]
    #[target_feature(enable = "avx,avx2")]
    fn word(v: __m256i, h: usize) -> u64 {
        let half = if h == 0 {
            _mm256_castsi256_si128(v)
        } else {
            _mm256_extracti128_si256::<1>(v)
        };
        _mm_cvtsi128_si64(half) as u64
    }

    /// [`edge_ni`] with two lanes per ymm register: `PAIRS` registers, the last one's high
    /// half a ghost (a copy of its low lane, fed a zero word, whose results are dropped) if
    /// `ODD`. Every operation acts on each 128-bit half alone, as in [`frames_ymm`]. On the
    /// realistic mix the edge passes were 9% of the batch path's samples on xmm, 8 lanes per
    /// call; here a call keeps 16 lanes' frames in flight in 8 registers.
    ///
    /// # Safety
    /// The CPU has VAES, AVX2, AES-NI, SSE2 and SSSE3; `lanes.len() == 2·PAIRS - ODD`;
    /// every key is AES-128; with `SHARED` every lane has lane 0's key.
    #[target_feature(enable = "avx,avx2,vaes,aes,sse2,ssse3")]
    unsafe fn edge_ymm<
        const PAIRS: usize,
        const ODD: bool,
        const SHARED: bool,
        const E: Edge,
        const DEC: bool,
    >(
        lanes: &mut [Lane<'_>],
        w: &[u64; EDGE_MAX],
        out: &mut [u64; EDGE_MAX],
    ) {
        debug_assert_eq!(lanes.len(), 2 * PAIRS - usize::from(ODD));
        let zero = _mm256_setzero_si256();
        let ghost = |p: usize| ODD && p == PAIRS - 1;
        // Each register's round keys, assembled from its two lanes' schedules (with a shared
        // key none: its rows are broadcast where used).
        let mut rks = [[zero; ROUNDS + 1]; PAIRS];
        let shared_rk = &lanes[0].key.enc;
        let mut k0 = [zero; PAIRS];
        let mut fk = [zero; PAIRS];
        let mut x = [zero; PAIRS];
        let mut rho = [zero; PAIRS];
        let mut wv = [zero; PAIRS];
        // TAIL: each lane's padding word and the mask of its partial block's bytes.
        let mut padw = [zero; PAIRS];
        let mut mask = [zero; PAIRS];
        for p in 0..PAIRS {
            let lo = &lanes[2 * p];
            let hi = if ghost(p) { lo } else { &lanes[2 * p + 1] };
            let none = _mm_setzero_si128();
            [k0[p], fk[p], x[p], rho[p]] =
                pair_state::<SHARED>(lo, hi, lanes[0].key, &mut rks[p], none);
            let w_hi = if ghost(p) { 0 } else { w[2 * p + 1] };
            wv[p] = pair(
                _mm_set_epi64x(0, w[2 * p] as i64),
                _mm_set_epi64x(0, w_hi as i64),
            );
            if E == TAIL {
                let (n_lo, n_hi) = (lo.io.len % 8, hi.io.len % 8);
                padw[p] = pair(
                    _mm_set_epi64x(0, pad(n_lo) as i64),
                    _mm_set_epi64x(0, pad(n_hi) as i64),
                );
                mask[p] = pair(
                    _mm_set_epi64x(0, low_bytes(n_lo) as i64),
                    _mm_set_epi64x(0, low_bytes(n_hi) as i64),
                );
            }
        }
        let zeros = [zero; PAIRS];
        if E == HEAD || E == INIT_ONLY {
            // R = 0 before the initialisation, so `R = V` is `R ^= V`.
            rho = [zero; PAIRS];
            let c = INIT as i64;
            absorb_ymm::<PAIRS, SHARED>(&mut x, &mut rho, &rks, shared_rk, &k0, &fk, c, &zeros);
        }
        if E == HEAD || E == AD_PAD {
            let c = AD as i64;
            absorb_ymm::<PAIRS, SHARED>(&mut x, &mut rho, &rks, shared_rk, &k0, &fk, c, &wv);
        }
        if E == TAIL {
            // The padding frame: X = P ‖ 10*, the output U ^ P on the low n bytes.
            rounds_ymm::<PAIRS, SHARED>(&mut x, &rks, shared_rk);
            for p in 0..PAIRS {
                let o;
                if DEC {
                    // P = (U ^ C) & low n bytes, from the frame's U.
                    let r_lo = _mm256_srli_si256::<8>(rho[p]);
                    let t = _mm256_aesenclast_epi128(x[p], _mm256_xor_si256(fk[p], r_lo));
                    let u = _mm256_xor_si256(_mm256_xor_si256(t, k0[p]), wv[p]);
                    o = _mm256_and_si256(u, mask[p]);
                    let xw = _mm256_or_si256(o, padw[p]);
                    x[p] = _mm256_xor_si256(t, _mm256_slli_si256::<8>(xw));
                } else {
                    let xw = _mm256_or_si256(wv[p], padw[p]);
                    let d = _mm256_alignr_epi8::<8>(xw, rho[p]);
                    x[p] = _mm256_aesenclast_epi128(x[p], _mm256_xor_si256(fk[p], d));
                    o = _mm256_xor_si256(_mm256_xor_si256(x[p], k0[p]), xw);
                }
                out[2 * p] = word(o, 0);
                if !ghost(p) {
                    out[2 * p + 1] = word(o, 1);
                }
                rho[p] = _mm256_xor_si256(rho[p], _mm256_xor_si256(x[p], k0[p]));
            }
            // The tag frame, then T = U ^ V ^ R of one more call.
            let c = FINAL as i64;
            absorb_ymm::<PAIRS, SHARED>(&mut x, &mut rho, &rks, shared_rk, &k0, &fk, c, &zeros);
            rounds_ymm::<PAIRS, SHARED>(&mut x, &rks, shared_rk);
            for p in 0..PAIRS {
                let kl = if SHARED {
                    _mm256_broadcastsi128_si256(rk(shared_rk, ROUNDS))
                } else {
                    rks[p][ROUNDS]
                };
                let s = _mm256_aesenclast_epi128(x[p], kl);
                // T = U ^ V ^ R: the low half of S ^ (V, ·) ^ (R, ·), per lane.
                let t = _mm256_xor_si256(
                    _mm256_xor_si256(s, _mm256_unpackhi_epi64(s, s)),
                    _mm256_unpackhi_epi64(rho[p], rho[p]),
                );
                lanes[2 * p].tag = word(t, 0);
                if !ghost(p) {
                    lanes[2 * p + 1].tag = word(t, 1);
                }
            }
        } else {
            for p in 0..PAIRS {
                let s = _mm256_xor_si256(x[p], k0[p]);
                let v = _mm256_unpackhi_epi64(s, s);
                let r = _mm256_unpackhi_epi64(rho[p], rho[p]);
                for h in 0..2 - usize::from(ghost(p)) {
                    let l = &mut lanes[2 * p + h];
                    (l.u, l.v, l.r) = (word(s, h), word(v, h), word(r, h));
                }
            }
        }
        // The assembled round keys and the input words are copies of secrets on the stack.
        // SAFETY: local arrays of plain vectors; volatile keeps the wipes.
        unsafe {
            if !SHARED {
                core::ptr::write_volatile(&mut rks, [[zero; ROUNDS + 1]; PAIRS]);
            }
            core::ptr::write_volatile(&mut wv, [zero; PAIRS]);
        }
    }

    /// The frame constant of kind `K`.
    const fn constant(k: Kind) -> i64 {
        if k == AD_FRAMES {
            AD as i64
        } else {
            0
        }
    }

    /// Lanes in decreasing order of their whole blocks of kind `K` (a comb group, or one
    /// lane), checked once against the kernels' contract: every lane's blocks of kind `K`
    /// lie in its input and (writing kinds) its non-null output, and every key is AES-128.
    /// A window over a prefix of the lanes then needs one comparison, as the prefix's last
    /// lane has the fewest blocks. (Checking every lane for every window cost about 3% of
    /// the batch path on the realistic mix: a group of 16 lanes has up to 16 windows.)
    pub(super) struct Run<'r, 'a, const K: Kind> {
        lanes: &'r mut [Lane<'a>],
        /// Whether every lane has lane 0's key.
        shared: bool,
    }

    impl<'r, 'a, const K: Kind> Run<'r, 'a, K> {
        /// Checks `lanes`; panics if they break the contract (a bug in the caller).
        pub(super) fn new(lanes: &'r mut [Lane<'a>]) -> Self {
            for l in lanes.iter() {
                if K != AD_FRAMES {
                    // frames = len / 8, so 8 · frames cannot overflow.
                    assert!(8 * l.frames::<K>() <= l.io.out_cap && !l.io.dst.is_null());
                }
                assert_eq!(l.key.rounds, ROUNDS);
            }
            assert!(lanes
                .windows(2)
                .all(|w| w[0].frames::<K>() >= w[1].frames::<K>()));
            let shared = lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key));
            Run { lanes, shared }
        }

        /// One window: the first `n` lanes advance `count` whole blocks from block `start`.
        /// Two or more lanes on the ymm backend run two per register, in calls of at most
        /// [`MAX_YMM`] lanes; one lane, or the xmm backend, on xmm in calls of at most
        /// [`MAX_XMM`].
        pub(super) fn window(&mut self, k: Kernels, n: usize, start: usize, count: usize) {
            if n == 0 || count == 0 {
                return;
            }
            assert!(n <= self.lanes.len());
            let end = start.checked_add(count).expect("block range overflows");
            // The prefix's last lane has its fewest blocks (sorted, checked in `new`).
            assert!(end <= self.lanes[n - 1].frames::<K>());
            let (ymm, max) = match k {
                Kernels::Vaes256(t) if n > 1 => (Some(t), MAX_YMM),
                _ => (None, MAX_XMM),
            };
            let shared = self.shared;
            let mut at = 0;
            for c in calls(n, max) {
                let part = &mut self.lanes[at..at + c];
                at += c;
                // SAFETY: `part` is a run of the first `n` lanes, each of which has blocks
                // `start..end` in its buffers (asserted above, with `new`'s checks) and an
                // AES-128 key; `shared` holds for all the lanes, so for these; `c` is within
                // the kernel's lane range (`calls` with `max`, ymm only for c > 1).
                unsafe {
                    match ymm {
                        Some(t) if c > 1 => window_ymm::<K>(t, part, shared, start, count),
                        _ => window_xmm::<K>(k.ni(), part, shared, start, count),
                    }
                }
            }
        }
    }

    /// Sizes of the near-equal calls that cover `n` lanes with at most `max` each.
    fn calls(n: usize, max: usize) -> impl Iterator<Item = usize> {
        let c = n.div_ceil(max).max(1);
        (0..c).map(move |i| n / c + usize::from(i < n % c))
    }

    /// `lanes` (1..=MAX_XMM of a [`Run`]'s checked window) advance `count` blocks from
    /// `start` on xmm.
    ///
    /// # Safety
    /// Every lane has blocks `start..start + count` of kind `K` in its input and (writing
    /// kinds) its non-null output, and an AES-128 key; with `shared`, lane 0's.
    unsafe fn window_xmm<const K: Kind>(
        _t: NiToken,
        lanes: &mut [Lane<'_>],
        shared: bool,
        start: usize,
        count: usize,
    ) {
        macro_rules! go {
            ($($n:literal)*) => {
                match lanes.len() {
                    $($n => {
                        let Ok(a) = <&mut [Lane<'_>; $n]>::try_from(lanes) else {
                            unreachable!("exactly N lanes")
                        };
                        // SAFETY: the token proves AES-NI, SSE2 and SSSE3; the block range,
                        // the key size and `shared` are the caller's guarantees.
                        unsafe {
                            if shared {
                                frames_xmm::<$n, true, K>(a, start, count)
                            } else {
                                frames_xmm::<$n, false, K>(a, start, count)
                            }
                        }
                    })*
                    _ => unreachable!("1..=MAX_XMM lanes"),
                }
            };
        }
        go!(1 2 3 4 5 6 7 8);
    }

    /// `lanes` (2..=MAX_YMM of a [`Run`]'s checked window) advance `count` blocks from
    /// `start`, two per ymm register.
    ///
    /// # Safety
    /// As [`window_xmm`].
    unsafe fn window_ymm<const K: Kind>(
        _t: VaesToken,
        lanes: &mut [Lane<'_>],
        shared: bool,
        start: usize,
        count: usize,
    ) {
        // SAFETY: the token proves VAES, AVX2 and the xmm instructions; `dispatch_pairs!`
        // picks the kernel for exactly this lane count (2..=MAX_YMM); the block range, the
        // key size and `shared` are the caller's guarantees.
        unsafe { dispatch_pairs!(lanes.len(), shared, frames_ymm::<K>(lanes, start, count)) }
    }

    /// Input word `i` of a run (`K`: the AD or the message) as the low 64 bits.
    ///
    /// # Safety
    /// `8 * (i + 1)` bytes are readable at `src`.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn load_word(src: *const u8, i: usize) -> __m128i {
        // SAFETY: by the caller's guarantee; movq has no alignment requirement.
        unsafe { _mm_loadl_epi64(src.add(8 * i).cast()) }
    }

    /// Writes the low 64 bits of `w` as output word `i`.
    ///
    /// # Safety
    /// `8 * (i + 1)` bytes are writable at `dst`.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn store_word(dst: *mut u8, i: usize, w: __m128i) {
        // SAFETY: by the caller's guarantee; movq has no alignment requirement.
        unsafe { _mm_storel_epi64(dst.add(8 * i).cast(), w) }
    }

    /// `N` lanes advance `count` frames of kind `K` from block `start`, in registers.
    ///
    /// Each lane keeps `x = S ^ k0` (its next cipher input, whitened) and `ρ = (·, R)` (`R`
    /// in the high half, beside `V`). A frame is the nine AESENC rounds, then
    /// * encryption / AD: `x = AESENCLAST(x, k_last ^ k0 ^ (R ^ c, X))`, which is directly
    ///   the whitened next input (the frame's xors and the next whitening ride in the last
    ///   round key, so the chain from one frame to the next is the AES rounds alone); then
    ///   `S = x ^ k0`, the output word `U ^ P` and `R ^= V` off the chain;
    /// * decryption: `P = U ^ C` needs the frame's `U` first: `t = AESENCLAST(x,
    ///   k_last ^ k0 ^ (R, 0))`, `P` = low half of `t ^ k0 ^ C`, `x = t ^ (0, P)`, two
    ///   operations on the chain (the shifted `t` and one xor).
    ///
    /// # Safety
    /// The CPU has AES-NI, SSE2 and SSSE3; for every lane, words `start..start + count` lie
    /// in the input of kind `K` and (writing kinds) its non-null output; every key is
    /// AES-128; with `SHARED` every lane has lane 0's key.
    #[target_feature(enable = "aes,sse2,ssse3")]
    unsafe fn frames_xmm<const N: usize, const SHARED: bool, const K: Kind>(
        lanes: &mut [Lane<'_>; N],
        start: usize,
        count: usize,
    ) {
        let zero = _mm_setzero_si128();
        let c = _mm_set_epi64x(0, constant(K));
        let mut src = [core::ptr::null::<u8>(); N];
        let mut dst = [core::ptr::null_mut::<u8>(); N];
        let mut keys: [&RoundKeys; N] = [&lanes[0].key.enc; N];
        let mut k0 = [zero; N];
        let mut fk = [zero; N];
        let mut x = [zero; N];
        let mut rho = [zero; N];
        for j in 0..N {
            let l = &lanes[j];
            (src[j], dst[j]) = l.source::<K>();
            let key = if SHARED { lanes[0].key } else { l.key };
            keys[j] = &key.enc;
            k0[j] = rk(&key.enc, 0);
            fk[j] = _mm_xor_si128(ni::load(&key.fold), c);
            x[j] = _mm_xor_si128(_mm_set_epi64x(l.v as i64, l.u as i64), k0[j]);
            rho[j] = _mm_set_epi64x(l.r as i64, 0);
        }
        for i in start..start + count {
            for r in 1..ROUNDS {
                if SHARED {
                    let kr = rk(keys[0], r);
                    for xj in x.iter_mut() {
                        *xj = _mm_aesenc_si128(*xj, kr);
                    }
                } else {
                    for (xj, kj) in x.iter_mut().zip(keys) {
                        *xj = _mm_aesenc_si128(*xj, rk(kj, r));
                    }
                }
            }
            for j in 0..N {
                // SAFETY: word i < start + count lies in the input (caller).
                let w = unsafe { load_word(src[j], i) };
                if K == DEC_FRAMES {
                    let last = _mm_xor_si128(fk[j], _mm_srli_si128::<8>(rho[j]));
                    let t = _mm_aesenclast_si128(x[j], last);
                    // Low half: P = U ^ C.
                    let kw = _mm_xor_si128(k0[j], w);
                    let p = _mm_xor_si128(t, kw);
                    // SAFETY: word i lies in the output (caller); in place, C was read above.
                    unsafe { store_word(dst[j], i, p) };
                    // x ^ (0, P) as (x ^ (0, k0 ^ C)) ^ (0, x_low): two operations after
                    // AESENCLAST on the chain, not four.
                    let q = _mm_xor_si128(t, _mm_slli_si128::<8>(kw));
                    x[j] = _mm_xor_si128(q, _mm_slli_si128::<8>(t));
                } else {
                    let d = _mm_alignr_epi8::<8>(w, rho[j]);
                    x[j] = _mm_aesenclast_si128(x[j], _mm_xor_si128(fk[j], d));
                    if K == ENC_FRAMES {
                        let out = _mm_xor_si128(_mm_xor_si128(x[j], k0[j]), w);
                        // SAFETY: word i lies in the output (caller); in place, P was read
                        // above.
                        unsafe { store_word(dst[j], i, out) };
                    }
                }
                rho[j] = _mm_xor_si128(rho[j], _mm_xor_si128(x[j], k0[j]));
            }
        }
        for j in 0..N {
            let s = _mm_xor_si128(x[j], k0[j]);
            let l = &mut lanes[j];
            l.u = _mm_cvtsi128_si64(s) as u64;
            l.v = _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)) as u64;
            l.r = _mm_cvtsi128_si64(_mm_unpackhi_epi64(rho[j], rho[j])) as u64;
        }
    }

    /// Two xmm values as one ymm register, `lo` in the low lane.
    #[inline]
    #[target_feature(enable = "avx,avx2")]
    fn pair(lo: __m128i, hi: __m128i) -> __m256i {
        _mm256_set_m128i(hi, lo)
    }

    /// [`frames_xmm`] with two lanes per ymm register: `PAIRS` registers, the last one's high
    /// half a ghost (a copy of its low lane's state, fed zero words, whose results are
    /// dropped) if `ODD`. All operations of a frame act on each 128-bit half alone
    /// (VAESENC, VPALIGNR, VPSRLDQ, VPSLLDQ), so a register is two independent lanes.
    ///
    /// # Safety
    /// The CPU has VAES, AVX2, AES-NI, SSE2 and SSSE3; `lanes.len() == 2·PAIRS - ODD`; for
    /// every lane, words `start..start + count` lie in the input of kind `K` and (writing
    /// kinds) its non-null output; every key is AES-128; with `SHARED` every lane has lane
    /// 0's key.
    #[target_feature(enable = "avx,avx2,vaes,aes,sse2,ssse3")]
    unsafe fn frames_ymm<const PAIRS: usize, const ODD: bool, const SHARED: bool, const K: Kind>(
        lanes: &mut [Lane<'_>],
        start: usize,
        count: usize,
    ) {
        debug_assert_eq!(lanes.len(), 2 * PAIRS - usize::from(ODD));
        // Plain loops, no closures: a closure does not inherit this function's target
        // features, so `pair` and the loads inside one would be out-of-line calls.
        let zero = _mm256_setzero_si256();
        let c = _mm_set_epi64x(0, constant(K));
        let mut src = [(core::ptr::null::<u8>(), core::ptr::null::<u8>()); PAIRS];
        let mut dst = [(core::ptr::null_mut::<u8>(), core::ptr::null_mut::<u8>()); PAIRS];
        // The round keys of each register's two lanes, row by row; with a shared key none:
        // its rows are broadcast from the schedule where used (a load, no copy to wipe).
        let mut rks = [[zero; ROUNDS + 1]; PAIRS];
        let shared_rk = &lanes[0].key.enc;
        let mut k0 = [zero; PAIRS];
        let mut fk = [zero; PAIRS];
        let mut x = [zero; PAIRS];
        let mut rho = [zero; PAIRS];
        for p in 0..PAIRS {
            let lo = &lanes[2 * p];
            let ghost = ODD && p == PAIRS - 1;
            let hi = if ghost { lo } else { &lanes[2 * p + 1] };
            let ((src_lo, dst_lo), (src_hi, dst_hi)) = (lo.source::<K>(), hi.source::<K>());
            // A ghost half reads nothing (null: see the loads below) and writes nothing.
            src[p] = (src_lo, if ghost { core::ptr::null() } else { src_hi });
            dst[p] = (dst_lo, dst_hi);
            [k0[p], fk[p], x[p], rho[p]] =
                pair_state::<SHARED>(lo, hi, lanes[0].key, &mut rks[p], c);
        }
        for i in start..start + count {
            rounds_ymm::<PAIRS, SHARED>(&mut x, &rks, shared_rk);
            for p in 0..PAIRS {
                let (s_lo, s_hi) = src[p];
                // SAFETY: word i < start + count lies in both lanes' inputs (caller); a
                // ghost half loads nothing.
                let w = unsafe {
                    let hi = if ODD && p == PAIRS - 1 {
                        _mm_setzero_si128()
                    } else {
                        load_word(s_hi, i)
                    };
                    pair(load_word(s_lo, i), hi)
                };
                let out;
                if K == DEC_FRAMES {
                    let last = _mm256_xor_si256(fk[p], _mm256_srli_si256::<8>(rho[p]));
                    let t = _mm256_aesenclast_epi128(x[p], last);
                    let kw = _mm256_xor_si256(k0[p], w);
                    // As in `frames_xmm`: two operations after VAESENCLAST on the chain.
                    let q = _mm256_xor_si256(t, _mm256_slli_si256::<8>(kw));
                    x[p] = _mm256_xor_si256(q, _mm256_slli_si256::<8>(t));
                    out = _mm256_xor_si256(t, kw);
                } else {
                    let d = _mm256_alignr_epi8::<8>(w, rho[p]);
                    x[p] = _mm256_aesenclast_epi128(x[p], _mm256_xor_si256(fk[p], d));
                    out = _mm256_xor_si256(_mm256_xor_si256(x[p], k0[p]), w);
                }
                if K != AD_FRAMES {
                    let (d_lo, d_hi) = dst[p];
                    // SAFETY: word i lies in both lanes' outputs (caller); in place, the
                    // input word was read above. A ghost half writes nothing.
                    unsafe {
                        store_word(d_lo, i, _mm256_castsi256_si128(out));
                        if !(ODD && p == PAIRS - 1) {
                            store_word(d_hi, i, _mm256_extracti128_si256::<1>(out));
                        }
                    }
                }
                rho[p] = _mm256_xor_si256(rho[p], _mm256_xor_si256(x[p], k0[p]));
            }
        }
        for p in 0..PAIRS {
            let s = _mm256_xor_si256(x[p], k0[p]);
            let (s_lo, s_hi) = (_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            let (r_lo, r_hi) = (
                _mm256_castsi256_si128(rho[p]),
                _mm256_extracti128_si256::<1>(rho[p]),
            );
            for (h, (s, r)) in [(s_lo, r_lo), (s_hi, r_hi)].into_iter().enumerate() {
                if h == 1 && ODD && p == PAIRS - 1 {
                    break;
                }
                let l = &mut lanes[2 * p + h];
                l.u = _mm_cvtsi128_si64(s) as u64;
                l.v = _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)) as u64;
                l.r = _mm_cvtsi128_si64(_mm_unpackhi_epi64(r, r)) as u64;
            }
        }
        if !SHARED {
            // The assembled round keys are a copy of key material on the stack.
            // SAFETY: `rks` is a local array of plain vectors; volatile keeps the wipe.
            unsafe { core::ptr::write_volatile(&mut rks, [[zero; ROUNDS + 1]; PAIRS]) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lengths of the realistic mix (papers/000): 44% in 40..=100, 37% in 1400..=1500, 19%
    /// in 101..=1399 bytes, from a fixed linear congruential sequence.
    fn realistic_lengths(n: usize, seed: u64) -> Vec<usize> {
        let mut x = seed;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m) as usize
        };
        (0..n)
            .map(|_| match next(100) {
                0..44 => 40 + next(61),
                44..81 => 1400 + next(101),
                _ => 101 + next(1299),
            })
            .collect()
    }

    /// TSC-free timing of the whole mode on batches of the realistic mix and of fixed
    /// lengths, encryption, single path and comb path at several `P`, on each backend:
    /// nanoseconds per byte (the CLI bench gives cycles; this isolates the mode from the
    /// engine's validation and job handling).
    #[test]
    #[ignore = "micro-timing; run with --ignored --nocapture (the test profile is optimised)"]
    fn mode_timing() {
        let Ok(key) = AesKey::new(&[9; 16]) else {
            return;
        };
        let reps: usize = std::env::var("JAMBU_REPS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(300);
        for backend in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(backend).unwrap();
            for (name, lens) in [
                ("realistic", realistic_lengths(64, 7)),
                ("128", vec![128; 64]),
                ("2048", vec![2048; 64]),
            ] {
                if std::env::var("JAMBU_ONLY").is_ok_and(|o| o != name) {
                    continue;
                }
                let total: usize = lens.iter().sum();
                let mut bufs: Vec<Vec<u8>> = lens.iter().map(|&n| vec![1u8; n]).collect();
                let trial = |bufs: &mut Vec<Vec<u8>>, path: Path| {
                    let t = std::time::Instant::now();
                    for _ in 0..reps {
                        let frames: Vec<usize> = bufs.iter().map(|b| b.len() / 8).collect();
                        let order = match path {
                            Path::Comb { lanes: p } => crate::sched::plan::plan(&frames, p).order,
                            Path::Single => (0..bufs.len()).collect(),
                        };
                        let mut ls: Vec<Lane<'_>> = Vec::with_capacity(bufs.len());
                        let mut refs: Vec<Option<&mut Vec<u8>>> =
                            bufs.iter_mut().map(Some).collect();
                        for &i in &order {
                            let b = refs[i].take().unwrap();
                            let n = b.len();
                            ls.push(Lane::with(&key, IoPtrs::in_place(b, n), &[], &[1; 8]));
                        }
                        let dec = std::env::var("JAMBU_DEC").is_ok();
                        for l in ls.chunks_mut(if path == Path::Single { 1 } else { 64 }) {
                            if dec {
                                process::<true>(k, l, path);
                            } else {
                                process::<false>(k, l, path);
                            }
                        }
                    }
                    t.elapsed().as_secs_f64() * 1e9 / (reps * total) as f64
                };
                // The best of 15 trials: the host is shared, so the minimum is the figure.
                let time = |bufs: &mut Vec<Vec<u8>>, path: Path| {
                    (0..15)
                        .map(|_| trial(bufs, path))
                        .fold(f64::INFINITY, f64::min)
                };
                let single = if std::env::var("JAMBU_NOSINGLE").is_ok() {
                    0.0
                } else {
                    time(&mut bufs, Path::Single)
                };
                let ps: Vec<usize> = std::env::var("JAMBU_P")
                    .ok()
                    .map(|v| v.split(',').filter_map(|p| p.parse().ok()).collect())
                    .unwrap_or(vec![8, 12, 16, 24, 32]);
                let combs: Vec<String> = ps
                    .iter()
                    .map(|&p| format!("P={p} {:.3}", time(&mut bufs, Path::Comb { lanes: p })))
                    .collect();
                println!(
                    "{backend:?} {name}: ns/byte single {single:.3}, {}",
                    combs.join(", ")
                );
            }
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
