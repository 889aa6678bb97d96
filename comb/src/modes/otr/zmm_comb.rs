//! OTR over a whole chunk of jobs on zmm, the jobs side by side: lane `j` of the chunk (four
//! lanes a register, up to eight registers) is one job from its `L` to its tag.
//!
//! A job of [`WIDE`] whole pairs or more runs them first on [`super::body_zmm`], alone. The
//! others' pairs run side by side: the lanes sorted by their count of whole pairs, most first
//! (the long jobs counting none). Pair index `i` of every job still running is one step:
//! register `r` holds pair `i` of lanes `4r .. 4r + 4`, the two rounds of the Feistel in
//! flight for all registers together. Since the lanes are sorted, the jobs still running are
//! a prefix of them: the registers taken are those up to the one holding the last running
//! job, and only that register can hold lanes that have ended (their loads read zeros, their
//! stores are left out, their mask and checksum lanes keep their values). A run of steps with
//! one count of registers is a window (as in the comb scheduler, [`crate::sched`]); each
//! window runs with its count as a constant.
//!
//! Before the pairs, `L = E(Format(τ, N))` of all lanes in one pass; after them, every lane's
//! last chunk (odd, even or empty) in one pass under byte masks, then `TE` (and `TA` where a
//! job has AD) in one more. So a job costs no call, no pool lane and no copy of its own: the
//! per-job work is its setup and its tag.
//!
//! Jobs of several keys take each register's round keys from rows in memory, four lanes'
//! keys side by side ([`Keys`]); one key is broadcast. Used for chunks of 2 to 32 jobs on the
//! CPUs where it measured faster ([`crate::cpu::zmm_job_lanes_pay`]: AMD Zen 4 and Zen 5,
//! whether or not zmm VAESENC issues at twice a ymm one's block rate); elsewhere
//! [`super::run_chunk`] runs.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{
    ad_inputs, bswap4, join_pairs, last_chunk, rk, rk4, split_pairs, tag_len, State, States, PAIR,
};
use crate::aes::{AesKey, Kernels};
use crate::block::{store_short, tag_matches, Block, BLOCK};
use crate::cpu::VaesZmmToken;
use crate::gf128::vclmul512::Vclmul512Token;
use crate::modes::{finish_tag, set_ok, Prepared, TagIo};
use crate::JobResult;

/// Calls `$f::<R, $consts…>$args` with `R` = `$regs` (1 to 8) as a constant.
macro_rules! by_regs {
    ($regs:expr, $f:ident, $consts:tt, $args:tt) => {
        match $regs {
            1 => by_regs!(@call $f, 1, $consts, $args),
            2 => by_regs!(@call $f, 2, $consts, $args),
            3 => by_regs!(@call $f, 3, $consts, $args),
            4 => by_regs!(@call $f, 4, $consts, $args),
            5 => by_regs!(@call $f, 5, $consts, $args),
            6 => by_regs!(@call $f, 6, $consts, $args),
            7 => by_regs!(@call $f, 7, $consts, $args),
            8 => by_regs!(@call $f, 8, $consts, $args),
            _ => unreachable!("1 to 8 registers"),
        }
    };
    (@call $f:ident, $r:literal, ($($c:expr),*), ($($a:expr),*)) => {
        $f::<$r, $($c),*>($($a),*)
    };
}

/// Lanes of a chunk: four a register.
const LANES: usize = 32;
/// Registers of a chunk.
const REGS: usize = LANES / 4;
/// Chunks of fewer jobs run on [`super::run_chunk`]: so only a lone job (the single path's
/// chunks). For two to seven jobs, one or two registers a layer beat the pools; a lone job ran
/// slower here (the sequential engine, fixed lengths, TSC cycles/byte, three alternated pairs:
/// 64 bytes 6.77-11.8 against 5.36-6.00, 1456 bytes 0.423-0.649 against 0.320-0.343), and
/// `super::run` sends it to `run_chunk` first anyway. This was 8 until stop 73, by
/// reasoning (one or two registers a layer wait on latency). Measured on Zen 5 (comb engine,
/// the realistic mix, encryption, TSC cycles/byte, three alternated pairs), 2 against 8:
/// batches of 2 at 0.566-0.572 against 0.807-0.812, of 4 at 0.391-0.393 against
/// 0.551-0.574, of 6 at 0.381-0.391 against 0.532-0.534 (two pairs; the third contended).
const MIN_JOBS: usize = 2;

/// OTR's nonce length in bytes (the only one [`crate::Algorithm::Aes128Otr`] accepts).
const NONCE: usize = 12;

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

/// Zeros that the ended lanes of a step read; the address empty last chunks are loaded from
/// (under an empty mask, [`chunk_at`]).
static ZERO: [u8; PAIR] = [0; PAIR];

/// The chunk's lanes in their order (longest job first); lanes `n..` of the last register are
/// empty (no pair, no last chunk).
struct Lanes {
    src: [*const u8; LANES],
    dst: [*mut u8; LANES],
    /// The nonces (12 bytes each, checked by [`run_if_able`]).
    nonce: [*const u8; LANES],
    /// Whole pairs.
    ell: [usize; LANES],
    /// Whole pairs the windows run: `ell`, or none for a job of [`WIDE`] pairs or more (its
    /// pairs run on [`super::body_zmm`]). The lanes are sorted by it, largest first.
    comb: [u8; LANES],
    /// Bytes of the last chunk (0..=32).
    last: [u8; LANES],
    /// The job of each lane (below [`LANES`]).
    job: [u8; LANES],
    /// The lane's job has AD.
    ad: [bool; LANES],
    n: usize,
}

impl Lanes {
    /// `n` lanes, none filled yet: every lane reads `ZERO`, has no pair and no last chunk.
    fn empty(n: usize) -> Lanes {
        Lanes {
            src: [ZERO.as_ptr(); LANES],
            dst: [core::ptr::null_mut(); LANES],
            nonce: [ZERO.as_ptr(); LANES],
            ell: [0; LANES],
            comb: [0; LANES],
            last: [0; LANES],
            job: [0; LANES],
            ad: [false; LANES],
            n,
        }
    }
}

/// Per-lane secrets kept in memory between passes, wiped on drop: the masks `L_i` (as
/// integers: lane `j` is element `j`), the checksums, the `TA` inputs and the tags. Each
/// array is `REGS` registers' worth, 64-byte aligned, so that drop wipes it with zmm stores,
/// and only the `regs` registers' worth that the chunk's lanes use.
#[repr(C, align(64))]
struct Secrets {
    m: [__m512i; REGS],
    s: [__m512i; REGS],
    ta: [Block; LANES],
    tags: [Block; LANES],
    /// Registers' worth of each array that the chunk's lanes use (four lanes a register): no
    /// pass writes past them.
    regs: usize,
    /// Proves AVX-512F for the wipe.
    z: VaesZmmToken,
}

// The wipe stores whole registers: every array starts on a 64-byte boundary of the aligned
// struct and holds `REGS` registers' worth.
const _: () = {
    use core::mem::{offset_of, size_of};
    let reg = size_of::<__m512i>();
    assert!(size_of::<[Block; LANES]>() == REGS * reg);
    assert!(offset_of!(Secrets, m) % reg == 0 && offset_of!(Secrets, s) % reg == 0);
    assert!(offset_of!(Secrets, ta) % reg == 0 && offset_of!(Secrets, tags) % reg == 0);
};

impl Secrets {
    /// All zero, for a chunk of `n` lanes.
    fn new(z: VaesZmmToken, n: usize) -> Secrets {
        Secrets {
            // SAFETY (both): zeroed vectors.
            m: [unsafe { core::mem::zeroed() }; REGS],
            s: [unsafe { core::mem::zeroed() }; REGS],
            ta: [[0; BLOCK]; LANES],
            tags: [[0; BLOCK]; LANES],
            regs: n.div_ceil(4),
            z,
        }
    }
}

impl Drop for Secrets {
    fn drop(&mut self) {
        // SAFETY: the token proves AVX-512F.
        unsafe { wipe_secrets(self.z, self) };
    }
}

/// Zeros the used registers' worth of every array of `sec` with volatile zmm stores. The
/// 16-byte wipe of all 64 blocks (each a zero block stored to the stack, read back and stored)
/// was about a sixth of [`run`]'s samples at 64-byte messages; this one took 64-byte batches
/// from 1.16-1.26 to 1.10-1.14 TSC cycles/byte (Zen 5, comb engine, three alternated pairs).
///
/// # Safety
/// AVX-512F (the token).
#[target_feature(enable = "avx512f")]
unsafe fn wipe_secrets(_z: VaesZmmToken, sec: &mut Secrets) {
    let regs = sec.regs.min(REGS);
    let zero = _mm512_setzero_si512();
    let arrays = [
        sec.m.as_mut_ptr(),
        sec.s.as_mut_ptr(),
        sec.ta.as_mut_ptr().cast::<__m512i>(),
        sec.tags.as_mut_ptr().cast::<__m512i>(),
    ];
    for a in arrays {
        for r in 0..regs {
            // SAFETY: register `r < REGS` of an array of `REGS` registers' worth, 64-byte
            // aligned (the struct's layout, asserted above); volatile keeps the stores.
            unsafe { core::ptr::write_volatile(a.add(r), zero) };
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Rows of round keys for each register of a chunk: `rows[r][t]` = round key `t` of lanes
/// `4r .. 4r + 4`.
type Rows = [[__m512i; 11]; REGS];

/// The round keys of a chunk's lanes: the jobs' one key, or (jobs of several keys) their
/// [`Rows`], wiped on drop. The rows live in the caller's stack storage, written only for
/// several keys: one-key chunks neither fill nor wipe 5.6 KiB. They were on the heap, zeroed
/// before filling: with key `i mod 16` for job `i` (a throw-away patch of the benchmark),
/// `malloc`, its consolidation and the `memset` took 3.5% of OTR's samples on the realistic
/// mix. On the stack (comb engine, batches of 64, TSC cycles/byte, three alternated pairs):
/// the mix 0.285-0.292 -> 0.258-0.259, 64-byte messages 1.64-1.65 -> 1.42-1.43, 1456 bytes
/// 0.176-0.177 -> 0.165-0.169; one key 0.244-0.248 -> 0.248-0.252 on the mix.
struct Keys<'k, 'r> {
    shared: Option<&'k AesKey>,
    rows: Option<&'r mut Rows>,
}

impl<'k, 'r> Keys<'k, 'r> {
    /// The keys of lanes `0..lanes.len()` (`lanes[j]`: the job of lane `j`); lanes past them
    /// take the first lane's. Several keys fill `storage`.
    fn of(
        z: VaesZmmToken,
        jobs: &[Prepared<'k>],
        lanes: &[u8],
        storage: &'r mut core::mem::MaybeUninit<Rows>,
    ) -> Keys<'k, 'r> {
        let first = jobs[usize::from(lanes[0])].lane.key;
        if jobs.iter().all(|j| core::ptr::eq(j.lane.key, first)) {
            return Keys {
                shared: Some(first),
                rows: None,
            };
        }
        let key = |j: usize| {
            lanes
                .get(j)
                .map_or(first, |&job| jobs[usize::from(job)].lane.key)
        };
        // SAFETY: the token proves AVX-512F; `fill_rows` writes every row of every register,
        // so the storage is initialised after it.
        let rows = unsafe {
            fill_rows(z, storage.as_mut_ptr(), key);
            storage.assume_init_mut()
        };
        Keys {
            shared: None,
            rows: Some(rows),
        }
    }
}

impl Drop for Keys<'_, '_> {
    fn drop(&mut self) {
        if let Some(rows) = &mut self.rows {
            for v in rows.as_flattened_mut() {
                // SAFETY: a plain store to a register-sized element of the rows.
                unsafe { core::ptr::write_volatile(v, core::mem::zeroed()) };
            }
        }
    }
}

/// `rows[r][t]` = round key `t` of the keys of lanes `4r .. 4r + 4`, for every register.
///
/// # Safety
/// AVX-512F (the token); `rows` valid for writes.
#[target_feature(enable = "avx2,avx512f")]
unsafe fn fill_rows<'k>(_z: VaesZmmToken, rows: *mut Rows, key: impl Fn(usize) -> &'k AesKey) {
    for r in 0..REGS {
        let k: [&AesKey; 4] = core::array::from_fn(|q| key(4 * r + q));
        for t in 0..11 {
            let v = join(core::array::from_fn(|q| rk(k[q], t)));
            // SAFETY: row `t < 11` of register `r < REGS`, inside `rows` (caller).
            unsafe { rows.cast::<__m512i>().add(11 * r + t).write(v) };
        }
    }
}

/// The order of `n <= 32` jobs by their keys (below 128), largest first, ties in job order:
/// `order[lane]` is the job of `lane` (zero past `n`; bytes, so that zeroing and returning
/// the order stays one register's worth). Each job's lane is its rank, from two byte compares
/// against all keys at once: no branch on the keys (an insertion sort there mispredicted its
/// loop exits on the realistic mix, a quarter of this path's per-job setup).
///
/// # Safety
/// AVX2 (the token) and POPCNT (checked by [`cpu_token`]: the token does not prove it).
#[target_feature(enable = "avx2,popcnt")]
unsafe fn sort_lanes(_z: VaesZmmToken, keys: &[u8; LANES], n: usize) -> [u8; LANES] {
    // SAFETY: 32 readable bytes.
    let all = unsafe { _mm256_loadu_si256(keys.as_ptr().cast()) };
    let mut order = [0u8; LANES];
    // The keys past `n` are zero: never above a key, and equal ones come after every job.
    for (j, &key) in keys.iter().enumerate().take(n) {
        debug_assert!(key < 128, "a signed byte compare");
        let k = _mm256_set1_epi8(key as i8);
        let above = _mm256_movemask_epi8(_mm256_cmpgt_epi8(all, k)) as u32;
        let tied = _mm256_movemask_epi8(_mm256_cmpeq_epi8(all, k)) as u32;
        let before = (1u64 << j) as u32 - 1;
        let lane = (above.count_ones() + (tied & before).count_ones()) as usize;
        order[lane] = j as u8;
    }
    order
}

/// Runs the chunk here if this path applies (see the module doc); `false`: nothing done.
pub(super) fn try_run<const DEC: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) -> bool {
    crate::cpu::zmm_job_lanes_pay() && run_if_able::<DEC>(k, jobs, results)
}

/// [`try_run`] whatever this CPU's preference: the chunk runs here if the CPU has what this
/// path needs and the chunk fits it; `false`: nothing done. (The tests run it on every
/// AVX-512 host, not only where it is chosen.)
fn run_if_able<const DEC: bool>(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) -> bool {
    if !(MIN_JOBS..=LANES).contains(&jobs.len()) {
        return false;
    }
    let Some(z) = cpu_token(k) else {
        return false;
    };
    // OTR's keys are AES-128, its nonces 12 bytes and its tags 16 (validated); kept as
    // conditions: the asm rounds are ten, and `masks` loads 12 nonce bytes after a `Format`
    // prefix for 16-byte tags.
    if jobs
        .iter()
        .any(|j| j.lane.key.rounds != 10 || j.nonce.len() != NONCE || tag_len(&j.tag) != BLOCK)
    {
        return false;
    }
    run::<DEC>(z, k, jobs, results);
    true
}

/// The zmm token if `k` and this CPU have everything this path needs, else `None`.
fn cpu_token(k: Kernels) -> Option<VaesZmmToken> {
    let Kernels::Vaes256(t) = k else { return None };
    let z = VaesZmmToken::with(t)?;
    // The long jobs' body multiplies its masks with VPCLMULQDQ on zmm.
    Vclmul512Token::get()?;
    // The lane sort counts bits with POPCNT, which the tokens do not prove (every CPU this
    // path is for has it; a hypervisor could still hide it).
    std::is_x86_feature_detected!("popcnt").then_some(z)
}

/// The chunk's lanes, their passes ([`passes`]) and the jobs' results.
fn run<const DEC: bool>(
    z: VaesZmmToken,
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
) {
    let n = jobs.len();
    // Lanes sorted by the pairs the windows run (`comb_pairs`), most first; jobs of `WIDE`
    // pairs or more count none and come last.
    let mut sort_keys = [0u8; LANES];
    for (key, job) in sort_keys.iter_mut().zip(jobs.iter()) {
        let io = &job.lane.io;
        // The passes write `len` output bytes (validation checked the room).
        assert!(io.len <= io.out_cap && (io.len == 0 || !io.dst.is_null()));
        *key = comb_pairs(last_chunk(io.len).0) as u8;
    }
    // SAFETY: the token proves AVX2; `run_if_able`, the only caller, checked POPCNT (`cpu_token`).
    let order = unsafe { sort_lanes(z, &sort_keys, n) };
    let mut ln = Lanes::empty(n);
    let mut sec = Secrets::new(z, n);
    for (lane, &j) in order[..n].iter().enumerate() {
        let j = usize::from(j);
        let job = &jobs[j];
        let io = &job.lane.io;
        let (ell, last) = last_chunk(io.len);
        ln.src[lane] = io.src;
        ln.dst[lane] = io.dst;
        ln.ell[lane] = ell;
        // The key the lanes were sorted by: the windows rely on that order.
        ln.comb[lane] = sort_keys[j];
        ln.last[lane] = last as u8;
        ln.job[lane] = j as u8;
        ln.ad[lane] = !job.ad.is_empty();
        ln.nonce[lane] = job.nonce.as_ptr();
    }
    // The AD (rare in a batch of packets): the scalar path's step 2, its `TA` inputs per lane.
    let any_ad = ln.ad[..n].contains(&true);
    if any_ad {
        let mut st = States([State::default(); super::CHUNK]);
        ad_inputs(k, jobs, &mut st.0[..n]);
        for lane in 0..n {
            sec.ta[lane] = st.0[usize::from(ln.job[lane])].ta.to_be_bytes();
        }
    }
    let mut rows = core::mem::MaybeUninit::uninit();
    let keys = Keys::of(z, jobs, &ln.job[..n], &mut rows);
    // SAFETY: the token proves AVX-512F/VL/BW, VAES and AES-NI (and `Kernels` SSSE3); every
    // lane's pairs and last chunk lie inside its input and output (asserted above: `PAIR ·
    // ell + last = len <= out_cap`); `SHARED` as `keys` is.
    unsafe {
        if keys.shared.is_some() {
            passes::<DEC, true>(z, jobs, &ln, &keys, any_ad, &mut sec);
        } else {
            passes::<DEC, false>(z, jobs, &ln, &keys, any_ad, &mut sec);
        }
    }
    for lane in 0..n {
        let job = &mut jobs[usize::from(ln.job[lane])];
        let len = job.lane.io.len;
        let slot = &mut results[job.index];
        // Encrypting: the tag and the result here, without a call per job. Zen 5, comb
        // engine, TSC cycles/byte, four alternated pairs: 64-byte messages 1.07-1.11 ->
        // 1.03-1.05, 96 bytes 0.754-0.782 -> 0.709-0.741.
        match (DEC, &mut job.tag) {
            (false, TagIo::Out(out)) => {
                store_short(out, &sec.tags[lane]);
                set_ok(slot, len);
                continue;
            }
            // Decrypting, a matching tag likewise; a mismatch (which zeroes the output) goes
            // to `finish_tag`, which compares again.
            (true, TagIo::In(expected)) if tag_matches(&sec.tags[lane], expected) => {
                set_ok(slot, len);
                continue;
            }
            _ => {}
        }
        finish_tag(job, &sec.tags[lane], slot, len);
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

/// [`aes128_zmm`] with each register's own round keys: register `$x` (bound to `$v[$i]`)
/// under the rows at `$p` (64 bytes a round).
macro_rules! aes128_zmm_rows {
    ($v:ident; $($x:ident $i:literal $p:ident $rows:expr)+) => {
        core::arch::asm!(
            rows_lines!("vpxorq", 0; $($x $p)+),
            rows_lines!("vaesenc", 64; $($x $p)+),
            rows_lines!("vaesenc", 128; $($x $p)+),
            rows_lines!("vaesenc", 192; $($x $p)+),
            rows_lines!("vaesenc", 256; $($x $p)+),
            rows_lines!("vaesenc", 320; $($x $p)+),
            rows_lines!("vaesenc", 384; $($x $p)+),
            rows_lines!("vaesenc", 448; $($x $p)+),
            rows_lines!("vaesenc", 512; $($x $p)+),
            rows_lines!("vaesenc", 576; $($x $p)+),
            rows_lines!("vaesenclast", 640; $($x $p)+),
            $($x = inout(zmm_reg) $v[$i],)+
            $($p = in(reg) $rows,)+
            options(pure, readonly, nostack, preserves_flags),
        )
    };
}

/// The lines of one round of [`aes128_zmm_rows`]: register `$x` with the row at `$p + $off`.
macro_rules! rows_lines {
    ($op:literal, $off:literal; $($x:ident $p:ident)+) => {
        concat!($($op, " {", stringify!($x), "}, {", stringify!($x), "}, zmmword ptr [{",
            stringify!($p), "} + ", $off, "]\n",)+)
    };
}

/// AES-128 encryption of the `R` registers of `x`, register `r` holding lanes `4r .. 4r + 4`
/// ([`aes128_zmm`], or [`aes128_zmm_rows`] for lanes of several keys).
///
/// # Safety
/// AVX-512F, VAES; the keys have 10 rounds; `SHARED` iff one key, else rows `0..R` filled.
#[inline]
#[target_feature(enable = "avx512f,vaes")]
unsafe fn enc128<const R: usize, const SHARED: bool>(x: &mut [__m512i; R], keys: &Keys<'_, '_>) {
    if SHARED {
        // Outside the windows' steps LLVM's own schedule of the rounds serves.
        let key = keys.shared.expect("SHARED: one key");
        enc_z!(x, key, 10);
    } else {
        // SAFETY: forwarded.
        unsafe { enc128_in::<R, false>(x, keys) };
    }
}

/// [`enc128`] with `SHARED` = `keys.shared.is_some()` known, so that the windows' steps take
/// no branch on it; the rounds in `asm!` in both cases ([`aes128_zmm`]).
///
/// # Safety
/// As [`enc128`], and `SHARED` as above.
#[inline]
#[target_feature(enable = "avx512f,vaes")]
unsafe fn enc128_in<const R: usize, const SHARED: bool>(x: &mut [__m512i; R], keys: &Keys<'_, '_>) {
    // SAFETY (all arms): the round keys are 11 readable rows (16 bytes shared, 64 bytes a
    // register's); the registers are `x`'s own.
    if SHARED {
        let key = keys.shared.expect("SHARED: one key");
        debug_assert!(key.rounds == 10);
        let k = key.enc.0.as_ptr().cast::<u8>();
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
        return;
    }
    let rows = keys.rows.as_deref().expect("!SHARED: rows");
    let p = |r: usize| rows[r].as_ptr();
    unsafe {
        match R {
            1 => aes128_zmm_rows!(x; x0 0 p0 p(0)),
            2 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1)),
            3 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2)),
            4 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2) x3 3 p3 p(3)),
            5 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2) x3 3 p3 p(3)
                x4 4 p4 p(4)),
            6 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2) x3 3 p3 p(3)
                x4 4 p4 p(4) x5 5 p5 p(5)),
            7 => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2) x3 3 p3 p(3)
                x4 4 p4 p(4) x5 5 p5 p(5) x6 6 p6 p(6)),
            _ => aes128_zmm_rows!(x; x0 0 p0 p(0) x1 1 p1 p(1) x2 2 p2 p(2) x3 3 p3 p(3)
                x4 4 p4 p(4) x5 5 p5 p(5) x6 6 p6 p(6) x7 7 p7 p(7)),
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

/// All passes over the lanes: `L`, the long jobs' pairs, the windows, the last chunks and
/// the tags. One key (`SHARED`) or several: each an instantiation of its own, so that the
/// one-key chunks carry no code of the other case.
///
/// # Safety
/// As [`window`]; `SHARED` iff `keys.shared` is some.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes,ssse3,vpclmulqdq")]
unsafe fn passes<const DEC: bool, const SHARED: bool>(
    z: VaesZmmToken,
    jobs: &[Prepared<'_>],
    ln: &Lanes,
    keys: &Keys<'_, '_>,
    any_ad: bool,
    sec: &mut Secrets,
) {
    let regs = ln.n.div_ceil(4);
    // SAFETY (all): forwarded.
    unsafe {
        masks::<SHARED>(z, keys, ln, regs, &mut sec.m);
        // The long jobs' pairs, one job at a time on the per-job zmm body: it runs a message's
        // pairs at 16 a step, where the windows pay per step for every lane's pointers. While
        // one runs, the next one's input is prefetched (see `prefetch_pairs`).
        let m = sec.m.as_mut_ptr().cast::<u128>();
        let sums = sec.s.as_mut_ptr().cast::<Block>();
        let mut long = (0..ln.n)
            .filter(|&lane| usize::from(ln.comb[lane]) < ln.ell[lane])
            .peekable();
        while let Some(lane) = long.next() {
            if let Some(&next) = long.peek() {
                prefetch_pairs(ln.src[next], ln.ell[next]);
            }
            let job = &jobs[usize::from(ln.job[lane])];
            // `m` and `sums` hold 32 lanes of 16 bytes each, lane `j` at byte `16 j`.
            super::body_zmm::<DEC>(
                job.lane.key,
                &job.lane.io,
                ln.ell[lane],
                &mut *m.add(lane),
                &mut *sums.add(lane),
            );
        }
        let mut i = 0;
        loop {
            let running = ln.comb[..ln.n]
                .iter()
                .take_while(|&&e| usize::from(e) > i)
                .count();
            if running == 0 {
                break;
            }
            let r = running.div_ceil(4);
            let end = usize::from(ln.comb[4 * (r - 1)]);
            by_regs!(r, window, (DEC, SHARED), (z, keys, ln, sec, i, end));
            i = end;
        }
        by_regs!(
            regs,
            last_and_tags,
            (DEC, SHARED),
            (z, keys, ln, any_ad, sec)
        );
    }
}

/// Prefetches the `ell` pairs of input at `src`, a line at a time, into L1. The long jobs'
/// bodies run one after another, each straight through its message; the next one's lines,
/// requested while one runs, arrive beside its work rather than at the start of the next body.
/// Without it, a working set beyond L2 slowed the bodies and not ECB (1400-1500-byte messages
/// in eight batches against one: OTR +11-15%, ECB +1-4%). Zen 5, comb engine, encryption, TSC
/// cycles/byte, six alternated pairs: OTR on the realistic mix 0.220-0.228 -> 0.208-0.218.
/// Decryption and 16 keys: no change that three to six pairs could show; one batch of
/// 1456-byte messages (all in cache): 0.137-0.141 -> 0.142-0.147 (three pairs, one contended
/// run left out). The job after the next (or both) prefetched, or the window jobs' inputs too:
/// no better. In the main job's rows (eight modes and both engines, their samples round-robin)
/// no change either: OTR/ECB 1.475-1.563 without, 1.507-1.560 with (six alternated pairs, a
/// busy spell).
#[inline]
#[target_feature(enable = "sse")]
fn prefetch_pairs(src: *const u8, ell: usize) {
    for at in (0..PAIR * ell).step_by(64) {
        // A prefetch is a hint: it reads nothing architecturally and never faults, so any
        // address will do (these lie inside the input).
        _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(at).cast());
    }
}

/// `L = E(Format(τ, N))` of every lane, as integers into `m`. For a 12-byte nonce and a
/// 16-byte tag (`τ mod 128 = 0`) the block `Format(τ, N)` is `00 00 00 01 ‖ N`: each lane's
/// prefix from a constant and its nonce by a masked load straight into its last 12 bytes.
/// (A `u128` per lane built with byte swaps and shifts, stored and loaded back, was nearly a
/// fifth of [`run`]'s own samples on 64-byte messages.)
///
/// # Safety
/// AVX-512F/BW, VAES, AES-NI (the token); every lane's nonce 12 readable bytes.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn masks<const SHARED: bool>(
    _z: VaesZmmToken,
    key: &Keys<'_, '_>,
    ln: &Lanes,
    regs: usize,
    m: &mut [__m512i; REGS],
) {
    let prefix = _mm512_broadcast_i32x4(_mm_setr_epi32(0x0100_0000, 0, 0, 0));
    let mut x = [_mm512_setzero_si512(); REGS];
    for (r, xr) in x.iter_mut().enumerate().take(regs) {
        let mut v = prefix;
        for q in 0..4 {
            // Bytes 4..16 of lane q of a register loaded from `p − 4 − 16q` are the 12 at `p`.
            let p = ln.nonce[4 * r + q].wrapping_sub(4 + BLOCK * q);
            // SAFETY: a masked load touches only its mask's bytes, the nonce's 12 (caller).
            v = unsafe { _mm512_mask_loadu_epi8(v, 0xfff0 << (16 * q), p.cast()) };
        }
        *xr = v;
    }
    // SAFETY: the caller's features; 10-round keys (`run_if_able`); rows, if any, for all eight
    // registers (the first lane's keys past `regs`: those registers' outputs are not used).
    unsafe { enc128::<REGS, SHARED>(&mut x, key) };
    for r in 0..regs {
        m[r] = bswap4(x[r]);
    }
}

/// Steps `from..to` on `R` registers: every lane of registers `0..R - 1` runs all of them,
/// the lanes of register `R - 1` those before their own `ell`.
///
/// # Safety
/// As [`passes`].
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn window<const R: usize, const DEC: bool, const SHARED: bool>(
    _z: VaesZmmToken,
    key: &Keys<'_, '_>,
    ln: &Lanes,
    sec: &mut Secrets,
    from: usize,
    to: usize,
) {
    let b = R - 1;
    let mut m: [__m512i; R] = core::array::from_fn(|r| sec.m[r]);
    let mut s: [__m512i; R] = core::array::from_fn(|r| sec.s[r]);
    for i in from..to {
        // Opaque to LLVM: otherwise it keeps 64 pointers (each lane's input and output) moved
        // on step by step in memory, a load and a store each per step. 256-byte messages
        // 176 -> 160 core cycles each, 512 bytes 228 -> 201 (batches of 64, two runs).
        let off = core::hint::black_box(PAIR * i);
        // Lanes of the last register still running; qword mask of them.
        let cnt = ln.comb[4 * b..4 * b + 4]
            .iter()
            .filter(|&&e| usize::from(e) > i)
            .count();
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
            (a[r], bb[r]) = split_pairs(u, v);
        }
        let next: [__m512i; R] = core::array::from_fn(|r| dbl4(m[r]));
        let lb: [__m512i; R] = core::array::from_fn(|r| bswap4(m[r]));
        let lsb: [__m512i; R] = core::array::from_fn(|r| bswap4(_mm512_xor_si512(m[r], next[r])));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_xor_si512(a[r], if DEC { lsb[r] } else { lb[r] }));
        // SAFETY: the caller's features; OTR keys are AES-128 (checked in `run_if_able`).
        unsafe { enc128_in::<R, SHARED>(&mut x, key) };
        let y1: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(x[r], bb[r]));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_xor_si512(y1[r], if DEC { lb[r] } else { lsb[r] }));
        // SAFETY: as above.
        unsafe { enc128_in::<R, SHARED>(&mut x, key) };
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
            let (lo, hi) = join_pairs(y1[r], y2);
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

/// The inputs of [`last_and_tags`] in register `r` (lanes `4r .. 4r + 4`): `U` and `W`
/// (zero past the chunk), the byte masks of `U`'s bytes (`min(last, 16)`) and of `W`'s
/// (`last − 16`), the `10*` pad bytes after them (at `min(last, 16)`, none at 16; at `last −
/// 16`) and the quadword masks of the lanes whose chunk is even and whose last block is
/// whole. All lane-wise from the lanes' lengths, with no branch on them, and the chunk's
/// bytes by masked loads straight into their lanes (as the outputs are stored): where each
/// lane took two loads, four constant blocks by its length and branches on it, then lane
/// inserts to join them and extracts to store (some twenty shuffles a register).
#[derive(Clone, Copy)]
struct LastInputs {
    u: __m512i,
    w: __m512i,
    ku: __mmask64,
    kw: __mmask64,
    pad_u: __mmask64,
    pad_w: __mmask64,
    even: __mmask8,
    whole: __mmask8,
}

impl LastInputs {
    /// Zeros, before [`last_inputs`] fills them.
    // SAFETY: all-zero vectors and masks.
    const EMPTY: LastInputs = unsafe { core::mem::zeroed() };
}

/// Where lane `j`'s last chunk starts in its input, or (an empty chunk) [`ZERO`]. The masked
/// loads of [`last_and_tags`] address 64-byte spans from up to 48 bytes before it, touching
/// only the chunk's bytes; an empty job's buffer may be null or dangling, and those addresses
/// would not even be canonical. (Empty chunks' loads read under an empty mask at `ZERO`;
/// their stores are left out, see there.)
#[inline]
fn chunk_at(ln: &Lanes, j: usize) -> *const u8 {
    if ln.last[j] == 0 {
        ZERO.as_ptr()
    } else {
        ln.src[j].wrapping_add(PAIR * ln.ell[j])
    }
}

/// The byte mask of lane `q` of a register.
#[inline]
fn lane_bytes(q: usize) -> __mmask64 {
    0xffff << (16 * q)
}

/// [`LastInputs`] of register `r`.
///
/// # Safety
/// AVX-512F/BW; each lane's last chunk, bytes `PAIR · ell .. len`, inside its input.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn last_inputs(ln: &Lanes, r: usize) -> LastInputs {
    // Each lane's `last` in all its bytes: the four bytes in every lane, then byte q spread
    // over lane q.
    let four = i32::from_le_bytes(ln.last[4 * r..4 * r + 4].try_into().unwrap_or([0; 4]));
    let spread = _mm512_set_epi64(
        0x0303_0303_0303_0303,
        0x0303_0303_0303_0303,
        0x0202_0202_0202_0202,
        0x0202_0202_0202_0202,
        0x0101_0101_0101_0101,
        0x0101_0101_0101_0101,
        0,
        0,
    );
    let last = _mm512_shuffle_epi8(_mm512_set1_epi32(four), spread);
    let sixteen = _mm512_set1_epi8(BLOCK as i8);
    let (lu, lw) = (
        _mm512_min_epu8(last, sixteen),
        _mm512_subs_epu8(last, sixteen),
    );
    let at = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    let (ku, kw) = (
        _mm512_cmplt_epu8_mask(at, lu),
        _mm512_cmplt_epu8_mask(at, lw),
    );
    let (pad_u, pad_w) = (
        _mm512_cmpeq_epi8_mask(at, lu),
        _mm512_cmpeq_epi8_mask(at, lw),
    );
    // A quadword of `last` in every byte compares as `last` does.
    let times = |b: u64| _mm512_set1_epi64((b * 0x0101_0101_0101_0101) as i64);
    let even = _mm512_cmpgt_epu64_mask(last, times(16));
    let whole = _mm512_cmpeq_epu64_mask(last, times(16)) | _mm512_cmpeq_epu64_mask(last, times(32));
    let mut u = _mm512_setzero_si512();
    let mut w = _mm512_setzero_si512();
    for q in 0..4 {
        let j = 4 * r + q;
        // Lane q of a register loaded from `p − 16q` is the 16 bytes at `p`.
        let p = chunk_at(ln, j).wrapping_sub(BLOCK * q);
        // SAFETY: the chunk's bytes lie inside the input (caller); a masked load touches only
        // its mask's bytes (none for an empty chunk, or an odd one's `W`).
        unsafe {
            u = _mm512_mask_loadu_epi8(u, ku & lane_bytes(q), p.cast());
            w = _mm512_mask_loadu_epi8(w, kw & lane_bytes(q), p.wrapping_add(BLOCK).cast());
        }
    }
    LastInputs {
        u,
        w,
        ku,
        kw,
        pad_u,
        pad_w,
        even,
        whole,
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
/// As [`passes`]; each lane's last chunk inside its input and output.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,vaes,aes")]
unsafe fn last_and_tags<const R: usize, const DEC: bool, const SHARED: bool>(
    _z: VaesZmmToken,
    key: &Keys<'_, '_>,
    ln: &Lanes,
    any_ad: bool,
    sec: &mut Secrets,
) {
    // A loop, not `from_fn`: LLVM kept that closure out of line (1.3% of OTR's samples on the
    // realistic mix).
    let mut li = [LastInputs::EMPTY; R];
    for (r, lr) in li.iter_mut().enumerate() {
        // SAFETY: each lane's last chunk lies inside its input (caller).
        *lr = unsafe { last_inputs(ln, r) };
    }
    let u: [__m512i; R] = core::array::from_fn(|r| li[r].u);
    let w: [__m512i; R] = core::array::from_fn(|r| li[r].w);
    // `ozp`: the pad byte after the kept bytes (which end before it).
    let pad = _mm512_set1_epi8(0x80u8 as i8);
    let pad_u = |r: usize, x: __m512i| _mm512_mask_mov_epi8(x, li[r].pad_u, pad);
    let pad_w = |r: usize, x: __m512i| _mm512_mask_mov_epi8(x, li[r].pad_w, pad);
    let even: [__mmask8; R] = core::array::from_fn(|r| li[r].even);
    let whole: [__mmask8; R] = core::array::from_fn(|r| li[r].whole);
    let mi: [__m512i; R] = core::array::from_fn(|r| sec.m[r]);
    let dbl: [__m512i; R] = core::array::from_fn(|r| dbl4(mi[r]));
    let lb: [__m512i; R] = core::array::from_fn(|r| bswap4(mi[r]));
    let lsb: [__m512i; R] = core::array::from_fn(|r| bswap4(_mm512_xor_si512(mi[r], dbl[r])));
    let mut out_a = [_mm512_setzero_si512(); R];
    let mut out_b = [_mm512_setzero_si512(); R];
    let mut cs = [_mm512_setzero_si512(); R];
    if DEC {
        let ozp_w: [__m512i; R] = core::array::from_fn(|r| pad_w(r, w[r]));
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_mask_xor_epi64(lb[r], even[r], ozp_w[r], lsb[r]));
        // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
        unsafe { enc128::<R, SHARED>(&mut x, key) };
        let a: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(x[r], u[r]));
        let mut x: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(a[r], lb[r]));
        // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
        unsafe { enc128::<R, SHARED>(&mut x, key) };
        for r in 0..R {
            out_a[r] = a[r];
            out_b[r] = _mm512_xor_si512(x[r], w[r]);
            let odd_cs = pad_u(r, _mm512_maskz_mov_epi8(li[r].ku, a[r]));
            cs[r] = _mm512_mask_xor_epi64(odd_cs, even[r], x[r], ozp_w[r]);
        }
    } else {
        let mut x: [__m512i; R] =
            core::array::from_fn(|r| _mm512_mask_xor_epi64(lb[r], even[r], lb[r], u[r]));
        // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
        unsafe { enc128::<R, SHARED>(&mut x, key) };
        let zs = x;
        let y: [__m512i; R] = core::array::from_fn(|r| {
            pad_w(
                r,
                _mm512_maskz_mov_epi8(li[r].kw, _mm512_xor_si512(zs[r], w[r])),
            )
        });
        let mut x: [__m512i; R] = core::array::from_fn(|r| _mm512_xor_si512(y[r], lsb[r]));
        // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
        unsafe { enc128::<R, SHARED>(&mut x, key) };
        for r in 0..R {
            let ca = _mm512_xor_si512(x[r], u[r]);
            out_a[r] = _mm512_mask_mov_epi64(_mm512_xor_si512(zs[r], u[r]), even[r], ca);
            out_b[r] = y[r];
            let odd_cs = pad_u(r, u[r]);
            cs[r] = _mm512_mask_xor_epi64(odd_cs, even[r], zs[r], y[r]);
        }
    }
    for r in 0..R {
        for q in 0..4 {
            let j = 4 * r + q;
            // Nothing to store; and a masked store under an empty mask at `ZERO` (read-only)
            // took a slow path: with empty lanes in a chunk (2 to 31 jobs, not a multiple of
            // four) the realistic mix in batches of 30 ran 0.33-0.39 TSC cycles/byte against
            // 0.24 with this branch, batches of 6 0.72-0.75 against 0.31-0.32.
            if ln.last[j] == 0 {
                continue;
            }
            // Lane q of a register stored at `d − 16q` lands at `d`, the chunk's start (not
            // empty here: no `chunk_at`).
            let d = ln.dst[j]
                .wrapping_add(PAIR * ln.ell[j])
                .wrapping_sub(BLOCK * q);
            // SAFETY: the last chunk lies inside the output; a masked store writes only its
            // mask's bytes (none for an odd chunk's second block).
            unsafe {
                _mm512_mask_storeu_epi8(d.cast(), li[r].ku & lane_bytes(q), out_a[r]);
                _mm512_mask_storeu_epi8(
                    d.wrapping_add(BLOCK).cast(),
                    li[r].kw & lane_bytes(q),
                    out_b[r],
                );
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
    // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
    unsafe { enc128::<R, SHARED>(&mut x, key) };
    if any_ad {
        // SAFETY (loads): four blocks, 64 bytes inside `sec.ta`.
        let mut t: [__m512i; R] = core::array::from_fn(|r| unsafe {
            _mm512_loadu_si512(sec.ta[4 * r..].as_ptr().cast())
        });
        // SAFETY: the caller's features; 10-round keys (`run_if_able`), rows of `regs >= R` filled.
        unsafe { enc128::<R, SHARED>(&mut t, key) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::prepare_all;
    use crate::block::test_bytes;
    use crate::cpu::VaesToken;
    use crate::{Algorithm, Error, Job, Op, Tag};

    /// One direction of a chunk, on zmm ([`run_if_able`]) or on the chunk of the other
    /// backends ([`super::super::run_chunk`]), its jobs validated as a batch's are
    /// ([`crate::batch::prepare_all`]): the outputs, the tags written (encrypting) and the
    /// results. `tags_in`: the tags to check (decrypting), else none.
    #[allow(clippy::type_complexity)]
    fn run_one<const DEC: bool>(
        zmm: bool,
        k: Kernels,
        keys: &[&AesKey],
        inputs: &[Vec<u8>],
        nonces: &[Vec<u8>],
        ads: &[Vec<u8>],
        tags_in: &[[u8; BLOCK]],
    ) -> (Vec<Vec<u8>>, Vec<[u8; BLOCK]>, Vec<JobResult>) {
        let n = inputs.len();
        let mut outs: Vec<Vec<u8>> = inputs.iter().map(|i| vec![0xee; i.len()]).collect();
        let mut tags = vec![[0u8; BLOCK]; n];
        let mut results: Vec<JobResult> = vec![Ok(usize::MAX); n];
        let mut jobs: Vec<Job<'_>> = outs
            .iter_mut()
            .zip(tags.iter_mut())
            .enumerate()
            .map(|(j, (out, tag))| {
                Job::copy(keys[j], &inputs[j], out)
                    .with_iv(&nonces[j])
                    .with_ad(&ads[j])
                    .with_tag(if DEC {
                        Tag::In(&tags_in[j])
                    } else {
                        Tag::Out(tag)
                    })
            })
            .collect();
        let op = if DEC { Op::Decrypt } else { Op::Encrypt };
        let mut prepared: Vec<Prepared<'_>> = Vec::with_capacity(n);
        prepare_all(
            Algorithm::Aes128Otr,
            op,
            &mut jobs,
            &mut results,
            &mut prepared,
        );
        assert_eq!(prepared.len(), n, "every job valid");
        if zmm {
            assert!(
                run_if_able::<DEC>(k, &mut prepared, &mut results),
                "the chunk fits"
            );
        } else {
            super::super::run_chunk::<DEC, { super::super::CHUNK }, { 2 * super::super::CHUNK }>(
                k,
                &mut prepared,
                &mut results,
            );
        }
        drop(prepared);
        drop(jobs);
        (outs, tags, results)
    }

    /// The chunk on zmm gives the same bytes and results as the chunk of the other backends,
    /// on every AVX-512 host (not only where it is chosen): chunks of 2 to 32 jobs of random
    /// lengths (0 to 1600 bytes: jobs for the windows and for the body, every last chunk; the
    /// edges between them in one case), of one key or three, with and without AD;
    /// encrypting, then decrypting what came out with every third tag changed (those jobs
    /// fail, their output zeroed; the others give the plaintext back).
    #[test]
    fn chunk_matches_the_other_backends_chunk() {
        let Some(t) = VaesToken::get() else {
            return;
        };
        let k = Kernels::Vaes256(t);
        if cpu_token(k).is_none() {
            return;
        }
        let owned: Vec<AesKey> = (0..3u8)
            .map(|i| AesKey::new(&[0x31 + i; 16]).unwrap())
            .collect();
        let mut seed = 7u64;
        let mut next = |below: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) as usize) % below
        };
        for n in MIN_JOBS..=LANES {
            for case in 0..4 {
                let what = format!("{n} jobs, case {case}");
                let keys: Vec<&AesKey> = (0..n)
                    .map(|j| &owned[if case % 2 == 0 { 0 } else { j % 3 }])
                    .collect();
                // Case 3 starts with the edges: empty, one block, one pair, a pair and a byte,
                // the longest job for the windows and the shortest for the body.
                const EDGES: [usize; 7] = [0, 16, 32, 33, 32 * WIDE, 32 * WIDE + 1, 32 * WIDE + 32];
                let inputs: Vec<Vec<u8>> = (0..n)
                    .map(|j| {
                        let len = match EDGES.get(j) {
                            Some(&len) if case == 3 => len,
                            _ => next(1601),
                        };
                        test_bytes((100 * n + 10 * case + j) as u64, len)
                    })
                    .collect();
                let nonces: Vec<Vec<u8>> = (0..n)
                    .map(|j| test_bytes((7 * n + j) as u64, NONCE))
                    .collect();
                let ads: Vec<Vec<u8>> = (0..n)
                    .map(|j| {
                        let len = if case >= 2 && j % 3 == 1 { next(70) } else { 0 };
                        test_bytes((3 * n + j) as u64, len)
                    })
                    .collect();
                let enc = |zmm| run_one::<false>(zmm, k, &keys, &inputs, &nonces, &ads, &[]);
                let (want, got) = (enc(false), enc(true));
                for (j, input) in inputs.iter().enumerate() {
                    let what = format!("{what}, job {j} of {} bytes", input.len());
                    assert!(got.0[j] == want.0[j], "{what}: the ciphertext");
                    assert_eq!(got.1[j], want.1[j], "{what}: the tag");
                    assert_eq!(got.2[j], Ok(input.len()), "{what}: the result");
                    assert_eq!(want.2[j], Ok(input.len()), "{what}: the result");
                }
                let mut tags = want.1.clone();
                for tag in tags.iter_mut().step_by(3) {
                    tag[next(BLOCK)] ^= 1 << next(8);
                }
                let dec = |zmm| run_one::<true>(zmm, k, &keys, &want.0, &nonces, &ads, &tags);
                let (want_d, got_d) = (dec(false), dec(true));
                for (j, input) in inputs.iter().enumerate() {
                    let what = format!("{what}, job {j} of {} bytes, decrypting", input.len());
                    let (out, result) = (&got_d.0[j], &got_d.2[j]);
                    assert_eq!(*result, want_d.2[j], "{what}: the result");
                    if j % 3 == 0 {
                        assert_eq!(*result, Err(Error::AuthenticationFailed), "{what}");
                        assert!(out.iter().all(|&b| b == 0), "{what}: zeroed");
                    } else {
                        assert_eq!(*result, Ok(input.len()), "{what}");
                        assert!(out == input, "{what}: the plaintext");
                    }
                }
            }
        }
    }

    /// The last-chunk inputs of a register, lane by lane, against their definitions: every
    /// `last` from 0 to 32 in every lane position (beside pairs before it, and lanes of other
    /// lengths), `U` and `W` the chunk's bytes and zeros, the kept bytes, the pad byte, the
    /// even and whole lanes.
    #[test]
    fn last_inputs_match_their_definitions() {
        if !(std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw"))
        {
            return;
        }
        let input: Vec<u8> = (0..4 * 200).map(|i| (i * 7 + 3) as u8).collect();
        for last in 0..=PAIR {
            for q0 in 0..4 {
                let mut ln = Lanes::empty(8);
                // Lanes 4..8 (register 1): lane q0 of length `last` after q0 + 1 pairs, the
                // others of other lengths.
                for q in 0..4 {
                    let j = 4 + q;
                    ln.src[j] = input[200 * q..].as_ptr();
                    ln.ell[j] = q + 1;
                    ln.last[j] = if q == q0 {
                        last
                    } else {
                        (last + 11 * q + 5) % 33
                    } as u8;
                }
                // SAFETY: AVX-512F and BW checked; every chunk lies inside `input`.
                let li = unsafe { last_inputs(&ln, 1) };
                // SAFETY: any 64 bytes are four blocks.
                let blocks = |v: __m512i| unsafe { core::mem::transmute::<__m512i, [Block; 4]>(v) };
                let (u, w) = (blocks(li.u), blocks(li.w));
                for q in 0..4 {
                    let l = usize::from(ln.last[4 + q]);
                    let what = format!("last {last}, lane {q0}: lane {q} of {l}");
                    let chunk = &input[200 * q + PAIR * (q + 1)..][..l];
                    let (lu, lw) = (l.min(BLOCK), l.saturating_sub(BLOCK));
                    assert_eq!(u[q][..lu], chunk[..lu], "{what}: U");
                    assert!(u[q][lu..].iter().all(|&b| b == 0), "{what}: U's zeros");
                    assert_eq!(w[q][..lw], chunk[lu..], "{what}: W");
                    assert!(w[q][lw..].iter().all(|&b| b == 0), "{what}: W's zeros");
                    let bits = |k: __mmask64| (k >> (16 * q)) as u16;
                    assert_eq!(bits(li.ku), ((1u32 << lu) - 1) as u16, "{what}: U's bytes");
                    assert_eq!(bits(li.kw), ((1u32 << lw) - 1) as u16, "{what}: W's bytes");
                    let pad = |n: usize| if n < BLOCK { 1u16 << n } else { 0 };
                    assert_eq!(bits(li.pad_u), pad(lu), "{what}: U's pad");
                    assert_eq!(bits(li.pad_w), pad(lw), "{what}: W's pad");
                    let lane = |k: __mmask8| (k >> (2 * q)) & 3;
                    assert_eq!(lane(li.even), if l > BLOCK { 3 } else { 0 }, "{what}: even");
                    let whole = l == BLOCK || l == PAIR;
                    assert_eq!(lane(li.whole), if whole { 3 } else { 0 }, "{what}: whole");
                }
            }
        }
    }

    /// The wipe (what drop runs) clears every lane a chunk of `n` jobs can have written (its
    /// registers' worth of masks, checksums, `TA` inputs and tags), for every `n` from 1 to 32.
    #[test]
    fn secrets_wipe_clears_the_used_lanes() {
        let Some(z) = VaesToken::get().and_then(VaesZmmToken::with) else {
            return;
        };
        for n in 1..=LANES {
            let mut sec = Secrets::new(z, n);
            // SAFETY: the four arrays lie before `regs` in the `repr(C)` struct; any bytes are
            // valid vectors and blocks.
            unsafe {
                let all = core::ptr::addr_of_mut!(sec.m).cast::<u8>();
                all.write_bytes(0xa5, core::mem::offset_of!(Secrets, regs));
            }
            // What drop runs. SAFETY: the token proves AVX-512F.
            unsafe { wipe_secrets(z, &mut sec) };
            let bytes = |v: &[__m512i]| -> Vec<u8> {
                // SAFETY: 64 readable bytes a vector.
                unsafe { core::slice::from_raw_parts(v.as_ptr().cast::<u8>(), 64 * v.len()) }
                    .to_vec()
            };
            let used = 64 * n.div_ceil(4);
            for (what, b) in [("m", bytes(&sec.m)), ("s", bytes(&sec.s))] {
                assert!(b[..used].iter().all(|&x| x == 0), "n {n}: {what}");
            }
            for lane in 0..n {
                assert_eq!(sec.ta[lane], [0; BLOCK], "n {n}: ta of lane {lane}");
                assert_eq!(sec.tags[lane], [0; BLOCK], "n {n}: tag of lane {lane}");
            }
            // The fill reached the arrays: lanes past the used registers keep it.
            if used < 64 * REGS {
                assert_eq!(sec.tags[LANES - 1], [0xa5; BLOCK], "n {n}");
            }
        }
    }

    /// The lane order is a stable sort by key, largest first, for chunks of every size from
    /// 1 to 32 jobs and keys from few distinct values (many ties) to many; zero past the jobs.
    #[test]
    fn sort_lanes_is_a_stable_descending_sort() {
        let Some(z) = VaesToken::get().and_then(VaesZmmToken::with) else {
            return;
        };
        if !std::is_x86_feature_detected!("popcnt") {
            return;
        }
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for n in 1..=LANES {
            for spread in [1u64, 2, 3, 16, 128] {
                let mut keys = [0u8; LANES];
                for k in &mut keys[..n] {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    *k = (rng % spread) as u8;
                }
                let mut want: Vec<usize> = (0..n).collect();
                want.sort_by_key(|&j| core::cmp::Reverse(keys[j]));
                // SAFETY: the token proves AVX2; POPCNT checked above.
                let order = unsafe { sort_lanes(z, &keys, n) };
                let order: Vec<usize> = order.iter().map(|&j| usize::from(j)).collect();
                assert_eq!(order[..n], want[..], "n {n}, keys {:?}", &keys[..n]);
                assert!(order[n..].iter().all(|&j| j == 0));
            }
        }
    }
}
