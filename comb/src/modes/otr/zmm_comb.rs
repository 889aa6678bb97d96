//! OTR over a whole chunk of jobs on zmm, the jobs side by side: lane `j` of the chunk (four
//! lanes a register, up to eight registers) is one job from its `L` to its tag.
//!
//! The chunk's jobs are sorted by their count of whole pairs, longest first. Pair index `i`
//! of every job still running is one step: register `r` holds pair `i` of lanes `4r ..
//! 4r + 4`, the two rounds of the Feistel in flight for all registers together. Since the
//! lanes are sorted, the jobs still running are a prefix of them: the registers taken are
//! those up to the one holding the last running job, and only that register can hold lanes
//! that have ended (their loads read zeros, their stores are left out, their mask and checksum
//! lanes keep their values). A run of steps with one count of registers is a window (as in
//! the comb scheduler, [`crate::sched`]); each window runs with its count as a constant.
//!
//! Before the pairs, `L = E(Format(τ, N))` of all lanes in one pass; after them, every lane's
//! last chunk (odd, even or empty) in one pass under byte masks, then `TE` (and `TA` where a
//! job has AD) in one more. So a job costs no call, no pool lane and no copy of its own: the
//! per-job work is its setup and its tag.
//!
//! Used where zmm VAESENC issues at twice a ymm one's block rate
//! ([`crate::cpu::zmm_aes_full_rate`]) and the chunk's jobs share one key; elsewhere
//! [`super::run_chunk`] runs.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{ad_inputs, last_chunk, rk4, tag_len, State, States, PAIR};
use crate::aes::vaes::lane_of;
use crate::aes::{AesKey, Kernels};
use crate::block::{cut_windows, wipe, Block, BLOCK};
use crate::cpu::VaesZmmToken;
use crate::gf128::vclmul512::Vclmul512Token;
use crate::modes::{finish_tag, format_nonce, Prepared};
use crate::JobResult;

/// Calls `$f::<R, $dec>$args` with `R` = `$regs` (1 to 8) as a constant.
macro_rules! by_regs {
    ($regs:expr, $f:ident, $dec:ident, $args:tt) => {
        match $regs {
            1 => by_regs!(@call $f, 1, $dec, $args),
            2 => by_regs!(@call $f, 2, $dec, $args),
            3 => by_regs!(@call $f, 3, $dec, $args),
            4 => by_regs!(@call $f, 4, $dec, $args),
            5 => by_regs!(@call $f, 5, $dec, $args),
            6 => by_regs!(@call $f, 6, $dec, $args),
            7 => by_regs!(@call $f, 7, $dec, $args),
            8 => by_regs!(@call $f, 8, $dec, $args),
            _ => unreachable!("1 to 8 registers"),
        }
    };
    (@call $f:ident, $r:literal, $dec:ident, ($($a:expr),*)) => {
        $f::<$r, $dec>($($a),*)
    };
}

/// Lanes of a chunk: four a register.
const LANES: usize = 32;
/// Registers of a chunk.
const REGS: usize = LANES / 4;
/// Chunks of fewer jobs run on [`super::run_chunk`]: a register or two per layer leaves the
/// AES units waiting on latency.
const MIN_JOBS: usize = 8;

/// Jobs of at least this many whole pairs run them on [`super::body_zmm`].
const WIDE: usize = 16;

/// The whole pairs of a job of `ell` that the windows run.
fn comb_pairs(ell: usize) -> usize {
    if ell >= WIDE {
        0
    } else {
        ell
    }
}

/// Zeros that the ended lanes of a step read.
static ZERO: [u8; PAIR] = [0; PAIR];

/// The chunk's lanes in their order (longest job first); lanes `n..` of the last register are
/// empty (no pair, no last chunk).
struct Lanes {
    src: [*const u8; LANES],
    dst: [*mut u8; LANES],
    /// Whole pairs.
    ell: [usize; LANES],
    /// Whole pairs the windows run: `ell`, or none for a job of [`WIDE`] pairs or more (its
    /// pairs run on [`super::body_zmm`]). The lanes are sorted by it, largest first.
    comb: [usize; LANES],
    /// Bytes of the last chunk (0..=32).
    last: [usize; LANES],
    /// The job of each lane.
    job: [usize; LANES],
    /// The lane's job has AD.
    ad: [bool; LANES],
    n: usize,
}

/// Per-lane secrets kept in memory between passes, wiped on drop: the masks `L_i` (as
/// integers: lane `j` is element `j`), the checksums, the `TA` inputs and the tags.
struct Secrets {
    m: [__m512i; REGS],
    s: [__m512i; REGS],
    ta: [Block; LANES],
    tags: [Block; LANES],
}

impl Drop for Secrets {
    fn drop(&mut self) {
        for v in self.m.iter_mut().chain(self.s.iter_mut()) {
            // SAFETY: a plain store to a register-sized local.
            unsafe { core::ptr::write_volatile(v, core::mem::zeroed()) };
        }
        for b in self.ta.iter_mut().chain(self.tags.iter_mut()) {
            wipe(b);
        }
    }
}

/// Runs the chunk here if this path applies (see the module doc); `false`: nothing done.
pub(super) fn try_run<const DEC: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) -> bool {
    let Kernels::Vaes256(t) = k else { return false };
    let n = jobs.len();
    if !(MIN_JOBS..=LANES).contains(&n) || !crate::cpu::zmm_aes_full_rate() {
        return false;
    }
    let Some(z) = VaesZmmToken::with(t) else {
        return false;
    };
    // The long jobs' body multiplies its masks with VPCLMULQDQ on zmm.
    if Vclmul512Token::get().is_none() {
        return false;
    }
    let key = jobs[0].lane.key;
    if key.rounds != 10 || jobs.iter().any(|j| !core::ptr::eq(j.lane.key, key)) {
        return false;
    }
    run::<DEC>(z, k, key, jobs, results);
    true
}

fn run<const DEC: bool>(
    z: VaesZmmToken,
    k: Kernels,
    key: &AesKey,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) {
    let n = jobs.len();
    // Lanes sorted by whole pairs, longest first (insertion sort: at most 32 jobs).
    let mut order = [0usize; LANES];
    let mut ells = [0usize; LANES];
    for (j, job) in jobs.iter().enumerate() {
        let io = &job.lane.io;
        // The passes write `len` output bytes (validation checked the room).
        assert!(io.len <= io.out_cap && (io.len == 0 || !io.dst.is_null()));
        let ell = comb_pairs(last_chunk(io.len).0);
        let mut at = j;
        while at > 0 && ells[at - 1] < ell {
            ells[at] = ells[at - 1];
            order[at] = order[at - 1];
            at -= 1;
        }
        ells[at] = ell;
        order[at] = j;
    }
    let mut ln = Lanes {
        src: [ZERO.as_ptr(); LANES],
        dst: [core::ptr::null_mut(); LANES],
        ell: [0; LANES],
        comb: [0; LANES],
        last: [0; LANES],
        job: [0; LANES],
        ad: [false; LANES],
        n,
    };
    let mut sec = Secrets {
        // SAFETY (both): zeroed vectors.
        m: [unsafe { core::mem::zeroed() }; REGS],
        s: [unsafe { core::mem::zeroed() }; REGS],
        ta: [[0; BLOCK]; LANES],
        tags: [[0; BLOCK]; LANES],
    };
    let mut formats = [0u128; LANES];
    for (lane, &j) in order[..n].iter().enumerate() {
        let job = &jobs[j];
        let io = &job.lane.io;
        let (ell, last) = last_chunk(io.len);
        ln.src[lane] = io.src;
        ln.dst[lane] = io.dst;
        ln.ell[lane] = ell;
        ln.comb[lane] = comb_pairs(ell);
        ln.last[lane] = last;
        ln.job[lane] = j;
        ln.ad[lane] = !job.ad.is_empty();
        formats[lane] = format_nonce(job.nonce, tag_len(&job.tag));
    }
    // The AD (rare in a batch of packets): the scalar path's step 2, its `TA` inputs per lane.
    let any_ad = jobs.iter().any(|j| !j.ad.is_empty());
    if any_ad {
        let mut st = States([State::default(); super::CHUNK]);
        ad_inputs(k, jobs, &mut st.0[..n]);
        for lane in 0..n {
            sec.ta[lane] = st.0[ln.job[lane]].ta.to_be_bytes();
        }
    }
    let regs = n.div_ceil(4);
    // SAFETY (all three): the token proves AVX-512F/VL/BW, VAES and AES-NI (and `Kernels`
    // SSSE3); every lane's pairs and last chunk lie inside its input and output (asserted
    // above: `PAIR · ell + last = len <= out_cap`).
    unsafe {
        masks(z, key, &formats, regs, &mut sec.m);
        // The long jobs' pairs, one job at a time on the per-job zmm body: it runs a message's
        // pairs at 16 a step, where the windows pay per step for every lane's pointers.
        let m = sec.m.as_mut_ptr().cast::<u128>();
        let sums = sec.s.as_mut_ptr().cast::<Block>();
        for lane in 0..n {
            if ln.comb[lane] < ln.ell[lane] {
                let io = &jobs[ln.job[lane]].lane.io;
                // `m` and `sums` hold 32 lanes of 16 bytes each, lane `j` at byte `16 j`.
                super::body_zmm::<DEC>(
                    key,
                    io,
                    ln.ell[lane],
                    &mut *m.add(lane),
                    &mut *sums.add(lane),
                );
            }
        }
        pairs::<DEC>(z, key, &ln, &mut sec);
        by_regs!(regs, last_and_tags, DEC, (z, key, &ln, any_ad, &mut sec));
    }
    formats.iter_mut().for_each(|f| *f = 0);
    for lane in 0..n {
        let j = ln.job[lane];
        let len = jobs[j].lane.io.len;
        let index = jobs[j].index;
        finish_tag(&mut jobs[j], &sec.tags[lane], &mut results[index], len);
    }
}

/// The lines of one AES round on registers `$x…` with round key `$off / 16` of `{key}`,
/// broadcast into `$k` (`$op`: `vpxorq` for the whitening, `vaesenc`, `vaesenclast`).
macro_rules! round_lines {
    ($op:literal, $off:literal, $k:literal; $($x:ident)+) => {
        concat!(
            "vbroadcasti32x4 ", $k, ", xmmword ptr [{key} + ", $off, "]\n",
            $($op, " {", stringify!($x), "}, {", stringify!($x), "}, ", $k, "\n",)+
        )
    };
}

/// AES-128 encryption of registers `$x…` (bound to `$v[$i]`) under the round keys at `$key`,
/// round by round across the registers. In `asm!` because LLVM, short of registers in the
/// windows (masks, checksums, both halves of the pairs), scheduled each register's ten rounds
/// back to back: ten dependent VAESENC, the AES units idle on their latency.
macro_rules! aes128_zmm {
    ($v:ident, $key:expr; $($x:ident $i:literal)+) => {
        core::arch::asm!(
            round_lines!("vpxorq", 0, "zmm30"; $($x)+),
            round_lines!("vaesenc", 16, "zmm31"; $($x)+),
            round_lines!("vaesenc", 32, "zmm30"; $($x)+),
            round_lines!("vaesenc", 48, "zmm31"; $($x)+),
            round_lines!("vaesenc", 64, "zmm30"; $($x)+),
            round_lines!("vaesenc", 80, "zmm31"; $($x)+),
            round_lines!("vaesenc", 96, "zmm30"; $($x)+),
            round_lines!("vaesenc", 112, "zmm31"; $($x)+),
            round_lines!("vaesenc", 128, "zmm30"; $($x)+),
            round_lines!("vaesenc", 144, "zmm31"; $($x)+),
            round_lines!("vaesenclast", 160, "zmm30"; $($x)+),
            key = in(reg) $key,
            out("zmm30") _,
            out("zmm31") _,
            $($x = inout(zmm_reg) $v[$i],)+
            options(pure, readonly, nostack, preserves_flags),
        )
    };
}

/// AES-128 encryption of the `R` registers of `x` under `key` ([`aes128_zmm`]).
///
/// # Safety
/// AVX-512F, VAES; `key` has 10 rounds.
#[inline]
#[target_feature(enable = "avx512f,vaes")]
unsafe fn enc128<const R: usize>(x: &mut [__m512i; R], key: &AesKey) {
    debug_assert!(key.rounds == 10);
    let k = key.enc.0.as_ptr().cast::<u8>();
    // SAFETY: the round keys are 11 readable rows of 16 bytes; the registers are `x`'s own.
    unsafe {
        match R {
            1 => aes128_zmm!(x, k; x0 0),
            2 => aes128_zmm!(x, k; x0 0 x1 1),
            3 => aes128_zmm!(x, k; x0 0 x1 1 x2 2),
            4 => aes128_zmm!(x, k; x0 0 x1 1 x2 2 x3 3),
            5 => aes128_zmm!(x, k; x0 0 x1 1 x2 2 x3 3 x4 4),
            6 => aes128_zmm!(x, k; x0 0 x1 1 x2 2 x3 3 x4 4 x5 5),
            7 => aes128_zmm!(x, k; x0 0 x1 1 x2 2 x3 3 x4 4 x5 5 x6 6),
            _ => aes128_zmm!(x, k; x0 0 x1 1 x2 2 x3 3 x4 4 x5 5 x6 6 x7 7),
        }
    }
}

/// The register of four xmm lanes.
#[inline]
#[target_feature(enable = "avx512f,avx")]
fn join(x: [__m128i; 4]) -> __m512i {
    _mm512_inserti64x4::<1>(
        _mm512_castsi256_si512(_mm256_set_m128i(x[1], x[0])),
        _mm256_set_m128i(x[3], x[2]),
    )
}

/// Byte swap of each lane: a mask integer to its block, and back.
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

/// Doubling in GF(2^128) of each lane's mask integer (`x^128 = x^7 + x^2 + x + 1`): both
/// quadwords shifted left, the high one's top bit reduced into the low one (0x87) and the
/// low one's carried into the high one. Constant time.
#[inline]
#[target_feature(enable = "avx512f")]
fn dbl4(v: __m512i) -> __m512i {
    let top = _mm512_srai_epi64::<63>(v);
    // Quadwords swapped within each lane: the high one's sign beside the low one.
    let swapped = _mm512_shuffle_epi32::<0b01_00_11_10>(top);
    let carry = _mm512_and_si512(
        swapped,
        _mm512_set_epi64(1, 0x87, 1, 0x87, 1, 0x87, 1, 0x87),
    );
    _mm512_xor_si512(_mm512_slli_epi64::<1>(v), carry)
}

/// Byte mask of the first `n <= 16` bytes.
#[inline]
fn first(n: usize) -> __mmask16 {
    ((1u32 << n.min(BLOCK)) - 1) as __mmask16
}

/// `L = E(Format(τ, N))` of every lane, as integers into `m`.
///
/// # Safety
/// AVX-512F/BW, VAES, AES-NI (the token).
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn masks(
    _z: VaesZmmToken,
    key: &AesKey,
    formats: &[u128; LANES],
    regs: usize,
    m: &mut [__m512i; REGS],
) {
    let mut x = [_mm512_setzero_si512(); REGS];
    for (r, xr) in x.iter_mut().enumerate().take(regs) {
        // SAFETY: four integers, 64 bytes inside `formats`.
        *xr = bswap4(unsafe { _mm512_loadu_si512(formats[4 * r..].as_ptr().cast()) });
    }
    enc_z!(&mut x, key, 10);
    for r in 0..regs {
        m[r] = bswap4(x[r]);
    }
}

/// Every whole pair of every lane, window by window.
///
/// # Safety
/// As [`masks`]; each lane's `ell` pairs inside its input and output.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn pairs<const DEC: bool>(z: VaesZmmToken, key: &AesKey, ln: &Lanes, sec: &mut Secrets) {
    let mut i = 0;
    loop {
        let running = ln.comb[..ln.n].iter().take_while(|&&e| e > i).count();
        if running == 0 {
            break;
        }
        let regs = running.div_ceil(4);
        let end = ln.comb[4 * (regs - 1)];
        // SAFETY: forwarded.
        unsafe { by_regs!(regs, window, DEC, (z, key, ln, sec, i, end)) };
        i = end;
    }
}

/// Steps `from..to` on `R` registers: every lane of registers `0..R - 1` runs all of them,
/// the lanes of register `R - 1` those before their own `ell`.
///
/// # Safety
/// As [`pairs`].
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn window<const R: usize, const DEC: bool>(
    _z: VaesZmmToken,
    key: &AesKey,
    ln: &Lanes,
    sec: &mut Secrets,
    from: usize,
    to: usize,
) {
    let b = R - 1;
    let mut m: [__m512i; R] = core::array::from_fn(|r| sec.m[r]);
    let mut s: [__m512i; R] = core::array::from_fn(|r| sec.s[r]);
    let to_pairs_lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    let to_pairs_hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    for i in from..to {
        // Opaque to LLVM: otherwise it keeps 64 pointers (each lane's input and output) moved
        // on step by step in memory, a load and a store each per step. 256-byte messages
        // 176 -> 160 core cycles each, 512 bytes 228 -> 201 (batches of 64, two runs).
        let off = core::hint::black_box(PAIR * i);
        // Lanes of the last register still running; qword mask of them.
        let cnt = ln.comb[4 * b..4 * b + 4].iter().filter(|&&e| e > i).count();
        let kb = ((1u32 << (2 * cnt)) - 1) as __mmask8;
        let runs = |r: usize, q: usize| r < b || q < cnt;
        // SAFETY: a running lane's pair `i < ell` lies inside its input; an ended one reads
        // `ZERO`.
        let ld = |r: usize, q: usize| unsafe {
            let p = if runs(r, q) {
                ln.src[4 * r + q].add(off)
            } else {
                ZERO.as_ptr()
            };
            _mm256_loadu_si256(p.cast())
        };
        let mut a = [_mm512_setzero_si512(); R];
        let mut bb = [_mm512_setzero_si512(); R];
        for r in 0..R {
            let u = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(ld(r, 0)), ld(r, 1));
            let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(ld(r, 2)), ld(r, 3));
            a[r] = _mm512_shuffle_i64x2::<0b10_00_10_00>(u, v);
            bb[r] = _mm512_shuffle_i64x2::<0b11_01_11_01>(u, v);
        }
        let next: [__m512i; R] = core::array::from_fn(|r| dbl4(m[r]));
        let lb: [__m512i; R] = core::array::from_fn(|r| bswap4(m[r]));
        let lsb: [__m512i; R] = core::array::from_fn(|r| bswap4(_mm512_xor_si512(m[r], next[r])));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_xor_si512(a[r], if DEC { lsb[r] } else { lb[r] }));
        // SAFETY: the caller's features; OTR keys are AES-128 (checked in `try_run`).
        unsafe { enc128(&mut x, key) };
        let y1: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(x[r], bb[r]));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_xor_si512(y1[r], if DEC { lb[r] } else { lsb[r] }));
        // SAFETY: as above.
        unsafe { enc128(&mut x, key) };
        for r in 0..R {
            let y2 = _mm512_xor_si512(x[r], a[r]);
            // The checksum block: `B`, the plaintext's second block.
            let cs = if DEC { y2 } else { bb[r] };
            if r == b {
                s[r] = _mm512_mask_xor_epi64(s[r], kb, s[r], cs);
                m[r] = _mm512_mask_mov_epi64(m[r], kb, next[r]);
            } else {
                s[r] = _mm512_xor_si512(s[r], cs);
                m[r] = next[r];
            }
            let lo = _mm512_permutex2var_epi64(y1[r], to_pairs_lo, y2);
            let hi = _mm512_permutex2var_epi64(y1[r], to_pairs_hi, y2);
            let halves = [
                _mm512_castsi512_si256(lo),
                _mm512_extracti64x4_epi64::<1>(lo),
                _mm512_castsi512_si256(hi),
                _mm512_extracti64x4_epi64::<1>(hi),
            ];
            for (q, h) in halves.into_iter().enumerate() {
                if runs(r, q) {
                    // SAFETY: pair `i < ell` of a running lane lies inside its output.
                    unsafe { _mm256_storeu_si256(ln.dst[4 * r + q].add(off).cast(), h) };
                }
            }
        }
    }
    sec.m[..R].copy_from_slice(&m);
    sec.s[..R].copy_from_slice(&s);
}

/// One lane's inputs to [`last_and_tags`]: `U`, `W`, the keep mask and `10*` pad of `U`'s
/// cut (odd chunks; none for even ones) and of `W`'s, whether the chunk is even and whether
/// its last block is whole.
struct LastInputs {
    x: [__m128i; 6],
    even: bool,
    whole: bool,
}

/// [`LastInputs`] of lane `j`.
///
/// # Safety
/// AVX-512BW/VL; the lane's last chunk, bytes `PAIR · ell .. len`, inside its input.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn last_inputs(ln: &Lanes, j: usize) -> LastInputs {
    let last = ln.last[j];
    let mut x = [_mm_setzero_si128(); 6];
    if last > 0 {
        let p = ln.src[j].wrapping_add(PAIR * ln.ell[j]);
        // SAFETY: the last chunk lies inside the input (caller); a masked load touches only
        // its mask's bytes.
        unsafe {
            x[0] = _mm_maskz_loadu_epi8(first(last), p.cast());
            if last > BLOCK {
                x[1] = _mm_maskz_loadu_epi8(first(last - BLOCK), p.add(BLOCK).cast());
            }
        }
    }
    let even = last > BLOCK;
    let (ka, pa) = cut_windows(if even { BLOCK } else { last });
    let (kb, pb) = cut_windows(last.saturating_sub(BLOCK));
    for (xk, c) in x[2..].iter_mut().zip([ka, pa, kb, pb]) {
        // SAFETY: a 16-byte constant block.
        *xk = unsafe { _mm_loadu_si128(c.as_ptr().cast()) };
    }
    LastInputs {
        x,
        even,
        whole: last == BLOCK || last == PAIR,
    }
}

/// The last chunk of every lane (`R` registers: all lanes), then its tag: `TE = E(Σ ⊕ f·La)`
/// and, for jobs with AD, `⊕ E(TA input)`, into `sec.tags`.
///
/// Per lane, from the last chunk's first `min(last, 16)` bytes `U` and its next `r = last −
/// 16` bytes `W` (even chunks), zero beyond:
/// - odd or empty (`last <= 16`): `Z = E(L)`, output `U ⊕ Z` (`last` bytes), checksum block
///   `ozp(M)` (`M` the plaintext: `U` encrypting, the output decrypting), `La = L`;
/// - even, encrypting: `Z = E(L ⊕ U)`, `y = ozp(MSB_r(Z ⊕ W))` (`ozp(C_B)`), output
///   `E(L* ⊕ y) ⊕ U ‖ MSB_r(y)`, checksum block `Z ⊕ y`, `La = L*`;
/// - even, decrypting: `A = E(L* ⊕ ozp(W)) ⊕ U`, `Z = E(L ⊕ A)`, output `A ‖ MSB_r(Z ⊕ W)`,
///   checksum block `Z ⊕ ozp(W)`, `La = L*`.
///
/// `f = 7` for a whole last block (`last` 16 or 32), else 5.
///
/// # Safety
/// As [`pairs`]; each lane's last chunk inside its input and output.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn last_and_tags<const R: usize, const DEC: bool>(
    _z: VaesZmmToken,
    key: &AesKey,
    ln: &Lanes,
    any_ad: bool,
    sec: &mut Secrets,
) {
    let mut u = [_mm512_setzero_si512(); R];
    let mut w = [_mm512_setzero_si512(); R];
    let mut keep_a = [_mm512_setzero_si512(); R];
    let mut pad_a = [_mm512_setzero_si512(); R];
    let mut keep_b = [_mm512_setzero_si512(); R];
    let mut pad_b = [_mm512_setzero_si512(); R];
    let mut even = [0 as __mmask8; R];
    let mut whole = [0 as __mmask8; R];
    for r in 0..R {
        // SAFETY: each lane's last chunk lies inside its input (caller).
        let lanes: [LastInputs; 4] =
            core::array::from_fn(|q| unsafe { last_inputs(ln, 4 * r + q) });
        let reg = |k: usize| join(core::array::from_fn(|q| lanes[q].x[k]));
        u[r] = reg(0);
        w[r] = reg(1);
        keep_a[r] = reg(2);
        pad_a[r] = reg(3);
        keep_b[r] = reg(4);
        pad_b[r] = reg(5);
        for (q, l) in lanes.iter().enumerate() {
            if l.even {
                even[r] |= 3 << (2 * q);
            }
            if l.whole {
                whole[r] |= 3 << (2 * q);
            }
        }
    }
    let mi: [__m512i; R] = core::array::from_fn(|r| sec.m[r]);
    let dbl: [__m512i; R] = core::array::from_fn(|r| dbl4(mi[r]));
    let lb: [__m512i; R] = core::array::from_fn(|r| bswap4(mi[r]));
    let lsb: [__m512i; R] = core::array::from_fn(|r| bswap4(_mm512_xor_si512(mi[r], dbl[r])));
    let mut out_a = [_mm512_setzero_si512(); R];
    let mut out_b = [_mm512_setzero_si512(); R];
    let mut cs = [_mm512_setzero_si512(); R];
    if DEC {
        let ozp_w: [__m512i; R] = core::array::from_fn(|r| _mm512_or_si512(w[r], pad_b[r]));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_mask_xor_epi64(lb[r], even[r], ozp_w[r], lsb[r]));
        enc_z!(&mut x, key, 10);
        let a: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(x[r], u[r]));
        let mut x: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(a[r], lb[r]));
        enc_z!(&mut x, key, 10);
        for r in 0..R {
            out_a[r] = a[r];
            out_b[r] = _mm512_xor_si512(x[r], w[r]);
            let odd_cs = _mm512_or_si512(_mm512_and_si512(a[r], keep_a[r]), pad_a[r]);
            cs[r] = _mm512_mask_xor_epi64(odd_cs, even[r], x[r], ozp_w[r]);
        }
    } else {
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_mask_xor_epi64(lb[r], even[r], lb[r], u[r]));
        enc_z!(&mut x, key, 10);
        let zs = x;
        let y: [__m512i; R] = core::array::from_fn(|r| {
            let c = _mm512_and_si512(_mm512_xor_si512(zs[r], w[r]), keep_b[r]);
            _mm512_or_si512(c, pad_b[r])
        });
        let mut x: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(y[r], lsb[r]));
        enc_z!(&mut x, key, 10);
        for r in 0..R {
            let ca = _mm512_xor_si512(x[r], u[r]);
            out_a[r] = _mm512_mask_mov_epi64(_mm512_xor_si512(zs[r], u[r]), even[r], ca);
            out_b[r] = y[r];
            let odd_cs = _mm512_or_si512(u[r], pad_a[r]);
            cs[r] = _mm512_mask_xor_epi64(odd_cs, even[r], zs[r], y[r]);
        }
    }
    for r in 0..R {
        for q in 0..4 {
            let j = 4 * r + q;
            let last = ln.last[j];
            if last == 0 {
                continue;
            }
            let d = ln.dst[j].wrapping_add(PAIR * ln.ell[j]);
            // SAFETY: the last chunk lies inside the output; a masked store writes only its
            // mask's bytes.
            unsafe {
                _mm_mask_storeu_epi8(d.cast(), first(last), lane_of(out_a[r], q));
                if last > BLOCK {
                    _mm_mask_storeu_epi8(
                        d.add(BLOCK).cast(),
                        first(last - BLOCK),
                        lane_of(out_b[r], q),
                    );
                }
            }
        }
    }
    // TE = E(Σ ⊕ f·La), La = L (odd) or L* (even), as integers before the byte swap.
    let mut x: [__m512i; R] = core::array::from_fn(|r| {
        let la = _mm512_mask_xor_epi64(mi[r], even[r], mi[r], dbl[r]);
        let la2 = dbl4(la);
        let la5 = _mm512_xor_si512(dbl4(la2), la);
        let f = _mm512_mask_xor_epi64(la5, whole[r], la5, la2);
        let sum = _mm512_xor_si512(sec.s[r], cs[r]);
        _mm512_xor_si512(sum, bswap4(f))
    });
    enc_z!(&mut x, key, 10);
    if any_ad {
        // SAFETY (loads): four blocks, 64 bytes inside `sec.ta`.
        let mut t: [__m512i; R] = core::array::from_fn(|r| unsafe {
            _mm512_loadu_si512(sec.ta[4 * r..].as_ptr().cast())
        });
        enc_z!(&mut t, key, 10);
        for r in 0..R {
            let mut has = 0 as __mmask8;
            for q in 0..4 {
                let j = 4 * r + q;
                if ln.ad[j] {
                    has |= 3 << (2 * q);
                }
            }
            x[r] = _mm512_mask_xor_epi64(x[r], has, x[r], t[r]);
        }
    }
    for (r, xr) in x.iter().enumerate() {
        // SAFETY: four blocks, 64 bytes inside `sec.tags`.
        unsafe { _mm512_storeu_si512(sec.tags[4 * r..].as_mut_ptr().cast(), *xr) };
    }
}
