//! `c_api`: the C ABI of `comb-ffi` (`include/comb.h`), called directly from Rust.
//!
//! `comb_process` gets fuzzed job arrays: unknown algorithm and operation IDs, a NULL engine,
//! a NULL or misaligned array, bogus `size` fields (of the first job: call-level; of others:
//! per job), strides larger than `sizeof(comb_job)` (later struct versions), `n_jobs` whose
//! array would overflow, non-zero `flags`, NULL keys, NULL pointers with non-zero lengths,
//! dangling pointers with length 0, lengths that wrap around the address space or exceed
//! `isize::MAX`, in-place jobs with `out_cap < len`, and buffers that overlap (partially
//! in/out, written buffers over other jobs' IVs, tags over data, ...).
//!
//! Every pointer that the library may dereference points into memory this harness owns (one
//! arena of bytes): the C API cannot detect wild pointers, so only what it promises to check
//! is fuzzed. The oracle is a model of the header's contract:
//!
//! * call-level errors: the return code is one of those that apply; when the array can be
//!   walked every status is that code, otherwise the array is untouched; the arena is untouched;
//! * per job: a job with a header or pointer error gets one of the applicable codes; a job
//!   one of whose regions conflicts with another region of the batch (brute force over every
//!   pair: a written region sharing a byte with any other) gets `COMB_ERR_OVERLAP`; every other
//!   job gets exactly what `comb::Engine::process_one` gives on copies of its buffers (status,
//!   `out_len`, output and tag bytes);
//! * afterwards the arena equals the initial arena with exactly those jobs' outputs written;
//!   no job field but `status` and `out_len` changed (`reserved`, `user_data`, the bytes of
//!   a longer stride included); the return code is `COMB_OK` iff every status is.
//!
//! The small functions (`comb_alg_name`, `comb_iv_len`, `comb_tag_len_range`,
//! `comb_output_len`, `comb_strerror`, `comb_alg_from_name`, `comb_key_new`) get fuzzed IDs,
//! lengths and NULL pointers too.

#![no_main]

use arbitrary::Unstructured;
use comb::{AesKey, Algorithm, Data, Engine, Job, Op, Tag};
use comb_ffi::*;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::mem::{align_of, offset_of, size_of};
use core::ptr;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const ARENA: usize = 8192;
const JOB: usize = size_of::<CombJob>();
const MAX_JOBS: usize = 24;

fn int(u: &mut Unstructured<'_>, lo: usize, hi: usize) -> usize {
    u.int_in_range(lo..=hi).unwrap_or(lo)
}

fn u32_any(u: &mut Unstructured<'_>) -> u32 {
    u.arbitrary().unwrap_or(0)
}

/// A pointer of a job field, as an offset into the arena or a special value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum P {
    Null,
    /// `arena + offset`.
    At(usize),
    /// A non-NULL pointer that must never be dereferenced (only with length 0).
    Dangling(usize),
}

/// One region of a job: pointer and length.
#[derive(Clone, Copy, Debug)]
struct R {
    p: P,
    len: usize,
}

impl R {
    const EMPTY: R = R { p: P::Null, len: 0 };
}

#[derive(Clone, Debug)]
struct JobSpec {
    size: u32,
    flags: u32,
    key: Option<usize>,
    input: R,
    out: R,
    iv: R,
    ad: R,
    tag: R,
    reserved: u32,
    user_data: usize,
}

#[derive(Debug)]
struct Spec {
    alg_id: u32,
    op_id: u32,
    engine_null: bool,
    keys: Vec<Vec<u8>>,
    /// The array's real stride in memory (a valid size).
    stride: usize,
    /// jobs[0].size when it is a bogus value (else every `size` is `stride` or per-job bogus).
    jobs: Vec<JobSpec>,
    /// How the array is passed.
    array: ArrayArg,
    /// `n_jobs` as passed (normally `jobs.len()`).
    n_jobs: usize,
    arena_seed: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArrayArg {
    Normal,
    Null,
    Misaligned(usize),
}

/// A bump allocator over the arena (regions of valid jobs do not overlap unless asked to).
struct Alloc {
    next: usize,
}

impl Alloc {
    fn take(&mut self, u: &mut Unstructured<'_>, len: usize) -> R {
        let gap = int(u, 0, 3);
        let start = (self.next + gap).min(ARENA);
        let len = len.min(ARENA - start);
        self.next = start + len;
        R {
            p: if len == 0 && int(u, 0, 1) == 0 {
                P::Null
            } else {
                P::At(start)
            },
            len,
        }
    }
}

/// A region for a buffer of `len` bytes: mostly fresh, sometimes NULL, dangling, overlapping
/// an earlier region, wrapping or huge.
fn region(u: &mut Unstructured<'_>, a: &mut Alloc, len: usize, earlier: &[R]) -> R {
    match int(u, 0, 31) {
        0..=26 => a.take(u, len),
        27 => R {
            p: P::Null,
            len: len.max(1),
        },
        28 => R {
            p: P::Dangling(int(u, 1, 4096) * 8),
            len: 0,
        },
        29 => {
            // Somewhere in the arena, likely overlapping something.
            let start = match earlier.iter().filter(|r| matches!(r.p, P::At(_))).count() {
                0 => int(u, 0, ARENA - 1),
                n => {
                    let k = int(u, 0, n - 1);
                    let r = earlier.iter().filter(|r| matches!(r.p, P::At(_))).nth(k);
                    match r {
                        Some(R { p: P::At(s), len }) => {
                            // (`len` may be a wrapping or huge length: stay in the arena.)
                            (s + int(u, 0, (*len).clamp(1, ARENA))).min(ARENA - 1)
                        }
                        _ => 0,
                    }
                }
            };
            R {
                p: P::At(start),
                len: len.max(1).min(ARENA - start),
            }
        }
        30 => {
            // Wraps around the address space.
            let start = int(u, 0, ARENA - 1);
            R {
                p: P::At(start),
                len: usize::MAX - int(u, 0, 64),
            }
        }
        _ => {
            // Longer than isize::MAX, without wrapping.
            let start = int(u, 0, ARENA - 1);
            R {
                p: P::At(start),
                len: isize::MAX as usize + 1 + int(u, 0, 64),
            }
        }
    }
}

fn msg_len(u: &mut Unstructured<'_>) -> usize {
    match int(u, 0, 7) {
        0..=2 => int(u, 0, 48),
        3 | 4 => 16 * int(u, 0, 40),
        5 => int(u, 0, 1024),
        6 => 16 * int(u, 0, 4) + int(u, 0, 15),
        _ => 0,
    }
}

fn decode(data: &[u8]) -> Spec {
    let mut u = Unstructured::new(data);
    let u = &mut u;
    let alg_id = match int(u, 0, 15) {
        0..=12 => int(u, 1, 7) as u32,
        13 => 0,
        14 => 8,
        _ => u32_any(u),
    };
    let op_id = match int(u, 0, 15) {
        0..=13 => int(u, 1, 2) as u32,
        14 => 0,
        _ => u32_any(u),
    };
    let engine_null = int(u, 0, 63) == 63;
    let keys = (0..int(u, 1, 3))
        .map(|i| {
            let n = [16, 24, 32][int(u, 0, 2)];
            (0..n).map(|b| (b * 29 + i * 5 + 3) as u8).collect()
        })
        .collect();
    let stride = match int(u, 0, 15) {
        0..=13 => JOB,
        _ => JOB + 8 * int(u, 1, 16),
    };
    let alg = comb_ffi::algorithm_from_id(alg_id);
    let op = match op_id {
        COMB_OP_ENCRYPT => Some(Op::Encrypt),
        COMB_OP_DECRYPT => Some(Op::Decrypt),
        _ => None,
    };
    let mut a = Alloc { next: 0 };
    let mut regions: Vec<R> = Vec::new();
    let n = int(u, 0, MAX_JOBS);
    let mut jobs = Vec::with_capacity(n);
    for i in 0..n {
        let size = match int(u, 0, 31) {
            0..=30 => stride as u32,
            _ if i == 0 => bogus_size(u),
            _ => u32_any(u),
        };
        let flags = if int(u, 0, 31) == 31 {
            u32_any(u) | 1
        } else {
            0
        };
        let key = if int(u, 0, 31) == 31 {
            None
        } else {
            Some(int(u, 0, 2))
        };
        let len = msg_len(u);
        let needed = match (alg, op) {
            (Some(alg), Some(op)) => alg.output_len(op, len).max(len),
            _ => len,
        };
        let cap = match int(u, 0, 7) {
            0..=5 => needed,
            6 => needed + int(u, 1, 32),
            _ => needed.saturating_sub(int(u, 1, 17)),
        };
        let (input, out) = match int(u, 0, 7) {
            0..=3 => {
                // In place: one buffer.
                let buf = region(u, &mut a, cap, &regions);
                let len = match buf.p {
                    // len > out_cap (in place): COMB_ERR_OUTPUT_TOO_SHORT before any access
                    // (not for MACs: they read in[0..len), which would leave the arena).
                    P::At(_) if !alg.is_some_and(Algorithm::is_mac) && int(u, 0, 15) == 15 => {
                        buf.len.saturating_add(int(u, 1, 17))
                    }
                    // (buf.len may be a wrapping or huge length: stay in the arena.)
                    P::At(start) => len.min(buf.len).min(ARENA - start),
                    _ => len.min(buf.len),
                };
                (R { p: buf.p, len }, buf)
            }
            4 | 5 => {
                let i = region(u, &mut a, len, &regions);
                let o = region(u, &mut a, cap, &regions);
                (i, o)
            }
            6 => {
                // out partially overlapping in.
                let i = a.take(u, len + 32);
                let shift = int(u, 1, 31);
                let start = match i.p {
                    P::At(s) => s,
                    _ => 0,
                };
                let o_start = (start + shift).min(ARENA);
                let o = R {
                    p: P::At(o_start),
                    len: cap.min(ARENA - o_start),
                };
                (
                    R {
                        p: i.p,
                        len: len.min(i.len),
                    },
                    o,
                )
            }
            _ => (R::EMPTY, R::EMPTY),
        };
        regions.push(input);
        regions.push(out);
        let iv_len = match (alg, int(u, 0, 15)) {
            (Some(alg), 0..=13) => alg.iv_len(),
            (None, 0..=13) => 16,
            _ => int(u, 0, 20),
        };
        let iv = region(u, &mut a, iv_len, &regions);
        regions.push(iv);
        let ad = if int(u, 0, 15) == 15 {
            let n = int(u, 1, 16);
            region(u, &mut a, n, &regions)
        } else if int(u, 0, 3) == 3 {
            R {
                p: P::Dangling(8),
                len: 0,
            }
        } else {
            R::EMPTY
        };
        regions.push(ad);
        let tag_len = match (alg.and_then(Algorithm::tag_lens), int(u, 0, 15)) {
            (Some((_, _, default)), 0..=11) => default,
            (Some((min, max, _)), 12) => int(u, min, max),
            (None, 0..=12) => 0,
            _ => int(u, 0, 20),
        };
        let tag = region(u, &mut a, tag_len, &regions);
        regions.push(tag);
        jobs.push(JobSpec {
            size,
            flags,
            key,
            input,
            out,
            iv,
            ad,
            tag,
            reserved: u32_any(u),
            user_data: int(u, 0, 255) << 8,
        });
    }
    let array = match int(u, 0, 31) {
        0..=29 => ArrayArg::Normal,
        30 => ArrayArg::Null,
        _ => ArrayArg::Misaligned(int(u, 1, align_of::<CombJob>() - 1)),
    };
    let n_jobs = match int(u, 0, 31) {
        0..=29 => jobs.len(),
        30 => 0,
        // The array would not fit the address space (or isize::MAX bytes).
        _ => usize::MAX / stride + 1 + int(u, 0, 1000),
    };
    Spec {
        alg_id,
        op_id,
        engine_null,
        keys,
        stride,
        jobs,
        array,
        n_jobs,
        arena_seed: int(u, 0, 255) as u8,
    }
}

/// A `size` for jobs[0] that `comb_process` must reject (the array's memory keeps the real
/// stride, so the library must not walk it with this one).
fn bogus_size(u: &mut Unstructured<'_>) -> u32 {
    match int(u, 0, 5) {
        0 => 0,
        1 => int(u, 1, JOB - 1) as u32,
        2 => (JOB + int(u, 1, 7)) as u32,
        3 => COMB_JOB_SIZE_MAX + 8 * int(u, 1, 100) as u32,
        4 => u32::MAX,
        _ => (JOB + 8 * int(u, 1, 40) + int(u, 1, 7)) as u32,
    }
}

fn engine() -> *mut CombEngine {
    struct SendPtr(*mut CombEngine);
    // SAFETY: the engine is immutable and shareable between threads (header, "Thread safety").
    unsafe impl Send for SendPtr {}
    unsafe impl Sync for SendPtr {}
    static E: OnceLock<SendPtr> = OnceLock::new();
    E.get_or_init(|| {
        let mut e = ptr::null_mut();
        // SAFETY: a valid out pointer.
        let rc = unsafe { comb_engine_new(&mut e) };
        assert_eq!(rc, COMB_OK);
        assert!(!e.is_null());
        SendPtr(e)
    })
    .0
}

fn reference_engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        Engine::untuned(comb::Backend::best(&comb::CpuFeatures::detect()).expect("AES-NI"))
            .expect("engine")
    })
}

/// The address a region starts at, given the arena's base.
fn addr(base: *mut u8, p: P) -> *mut u8 {
    match p {
        P::Null => ptr::null_mut(),
        P::At(off) => base.wrapping_add(off),
        P::Dangling(v) => v as *mut u8,
    }
}

/// The C-level errors that apply to a job (empty: it passes the header and pointer checks),
/// and its regions `(start offset, end offset, writable)` for the overlap check.
fn c_checks(
    j: &JobSpec,
    base: usize,
    stride: u32,
    alg: Algorithm,
    op: Op,
    in_place: bool,
) -> (Vec<c_int>, Vec<(usize, usize, bool)>) {
    let mut errs = Vec::new();
    if j.size != stride {
        errs.push(COMB_ERR_JOB_SIZE);
    }
    if j.flags != 0 {
        errs.push(COMB_ERR_INVALID_ARGUMENT);
    }
    if j.key.is_none() {
        errs.push(COMB_ERR_NULL_POINTER);
    }
    let mut regions = Vec::new();
    let mut check = |r: R, writable: bool, keep: bool, errs: &mut Vec<c_int>| {
        if r.len == 0 {
            return;
        }
        match r.p {
            P::Null => errs.push(COMB_ERR_NULL_POINTER),
            P::Dangling(_) => unreachable!("dangling pointers have length 0"),
            P::At(off) => {
                if r.len > isize::MAX as usize || (base + off).checked_add(r.len).is_none() {
                    errs.push(COMB_ERR_INVALID_ARGUMENT);
                } else if keep {
                    regions.push((off, off + r.len, writable));
                }
            }
        }
    };
    if alg.is_mac() {
        check(j.input, false, true, &mut errs);
    } else if in_place {
        check(j.input, false, false, &mut errs);
        check(j.out, true, true, &mut errs);
        if j.out.len < j.input.len {
            errs.push(COMB_ERR_OUTPUT_TOO_SHORT);
        }
    } else {
        check(j.input, false, true, &mut errs);
        check(j.out, true, true, &mut errs);
    }
    check(j.iv, false, true, &mut errs);
    check(j.ad, false, true, &mut errs);
    check(j.tag, op == Op::Encrypt, true, &mut errs);
    (errs, regions)
}

/// Writes `j` as a C job at `at`.
fn write_job(at: *mut u8, j: &JobSpec, base: *mut u8, keys: &[*mut CombKey]) {
    let c = CombJob {
        size: j.size,
        flags: j.flags,
        r#in: addr(base, j.input.p),
        out: addr(base, j.out.p),
        len: j.input.len,
        out_cap: j.out.len,
        key: j
            .key
            .map_or(ptr::null(), |k| keys[k % keys.len()].cast_const()),
        iv: addr(base, j.iv.p),
        iv_len: j.iv.len,
        ad: addr(base, j.ad.p),
        ad_len: j.ad.len,
        tag: addr(base, j.tag.p),
        tag_len: j.tag.len,
        status: 0x5a5a_5a5a,
        reserved: j.reserved,
        out_len: 0xdead_beef,
        user_data: j.user_data as *mut c_void,
    };
    // SAFETY: `at` is 8-aligned and has room for a CombJob (the array is sized for it).
    unsafe { at.cast::<CombJob>().write(c) };
}

fn slice(arena: &[u8], r: R) -> &[u8] {
    match r.p {
        P::At(off) if r.len > 0 => &arena[off..off + r.len],
        _ => &[],
    }
}

/// What `comb::Engine::process_one` gives for a job that reaches the library, on copies of
/// its buffers; writes its outputs into `expected`. Returns (status, out_len).
fn reference(
    j: &JobSpec,
    alg: Algorithm,
    op: Op,
    in_place: bool,
    key: &AesKey,
    initial: &[u8],
    expected: &mut [u8],
) -> (c_int, usize) {
    // A MAC ignores out/out_cap, an in-place job reads its message from out: only slice what
    // the library uses (the other fields may hold lengths it never looks at).
    let input = if in_place {
        Vec::new()
    } else {
        slice(initial, j.input).to_vec()
    };
    let mut out = if alg.is_mac() {
        Vec::new()
    } else {
        slice(initial, j.out).to_vec()
    };
    let iv = slice(initial, j.iv).to_vec();
    let ad = slice(initial, j.ad).to_vec();
    let mut tag = slice(initial, j.tag).to_vec();
    let r = {
        let data = if alg.is_mac() {
            Data::Input(&input)
        } else if in_place {
            Data::InPlace {
                buf: &mut out,
                len: j.input.len,
            }
        } else {
            Data::Copy {
                input: &input,
                output: &mut out,
            }
        };
        let t = match (tag.len(), op) {
            (0, _) => Tag::None,
            (_, Op::Encrypt) => Tag::Out(&mut tag),
            (_, Op::Decrypt) => Tag::In(&tag),
        };
        let job = Job::new(key, data).with_iv(&iv).with_ad(&ad).with_tag(t);
        reference_engine().process_one(alg, op, job)
    };
    if !alg.is_mac() {
        if let P::At(off) = j.out.p {
            expected[off..off + out.len()].copy_from_slice(&out);
        }
    }
    if op == Op::Encrypt {
        if let P::At(off) = j.tag.p {
            expected[off..off + tag.len()].copy_from_slice(&tag);
        }
    }
    match r {
        Ok(n) => (COMB_OK, n),
        Err(e) => (error_code(&e), 0),
    }
}

/// The bytes of the job array that the library must leave alone: everything but `status`
/// and `out_len` of each job.
fn frozen(array: &[u8], n: usize, stride: usize) -> Vec<u8> {
    let mut v = array.to_vec();
    for i in 0..n {
        let s = i * stride + offset_of!(CombJob, status);
        v[s..s + 4].fill(0);
        let o = i * stride + offset_of!(CombJob, out_len);
        v[o..o + size_of::<usize>()].fill(0);
    }
    v
}

fn read_status(array: &[u8], i: usize, stride: usize) -> (i32, usize) {
    let s = i * stride + offset_of!(CombJob, status);
    let o = i * stride + offset_of!(CombJob, out_len);
    (
        i32::from_ne_bytes(array[s..s + 4].try_into().expect("4 bytes")),
        usize::from_ne_bytes(array[o..o + size_of::<usize>()].try_into().expect("word")),
    )
}

fn check_small_functions(u: &mut Unstructured<'_>) {
    let id = match int(u, 0, 3) {
        0 => int(u, 0, 9) as u32,
        _ => u32_any(u),
    };
    let alg = algorithm_from_id(id);
    let name = comb_alg_name(id);
    assert_eq!(name.is_null(), alg.is_none(), "comb_alg_name({id})");
    if let Some(a) = alg {
        // SAFETY: a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(name) };
        assert_eq!(s.to_str().ok(), Some(a.id()));
        let mut back = 0u32;
        // SAFETY: valid pointers.
        assert_eq!(unsafe { comb_alg_from_name(name, &mut back) }, COMB_OK);
        assert_eq!(back, id);
    }
    let mut v = 0usize;
    let mut w = 0usize;
    let null = int(u, 0, 3) == 0;
    // SAFETY: valid or NULL out pointers.
    let rc = unsafe { comb_iv_len(id, if null { ptr::null_mut() } else { &mut v }) };
    match (alg, null) {
        (None, _) => assert_eq!(rc, COMB_ERR_UNKNOWN_ALGORITHM),
        (Some(_), true) => assert_eq!(rc, COMB_ERR_NULL_POINTER),
        (Some(a), false) => assert_eq!((rc, v), (COMB_OK, a.iv_len())),
    }
    // SAFETY: as above.
    let rc = unsafe { comb_tag_len_range(id, &mut v, if null { ptr::null_mut() } else { &mut w }) };
    match (alg, null) {
        (None, _) => assert_eq!(rc, COMB_ERR_UNKNOWN_ALGORITHM),
        (Some(_), true) => assert_eq!(rc, COMB_ERR_NULL_POINTER),
        (Some(a), false) => {
            assert_eq!(rc, COMB_OK);
            assert_eq!((v, w), a.tag_lens().map_or((0, 0), |(lo, hi, _)| (lo, hi)));
        }
    }
    let op = int(u, 0, 3) as u32;
    let len = match int(u, 0, 3) {
        0 => usize::MAX - int(u, 0, 40),
        1 => isize::MAX as usize - int(u, 0, 40),
        _ => int(u, 0, 100_000),
    };
    let mut out = 0usize;
    // SAFETY: a valid out pointer.
    let rc = unsafe { comb_output_len(id, op, len, &mut out) };
    match (alg, op) {
        (None, _) => assert_eq!(rc, COMB_ERR_UNKNOWN_ALGORITHM),
        (Some(_), 0 | 3) => assert_eq!(rc, COMB_ERR_UNKNOWN_OP),
        (Some(a), _) => {
            let o = if op == 1 { Op::Encrypt } else { Op::Decrypt };
            // comb.h's lengths, exact (no overflow in u128): an error past PTRDIFF_MAX.
            let l = len as u128;
            let want = match (a, o) {
                (Algorithm::AesCmac, _) => 0,
                (Algorithm::AesCbcPkcs7, Op::Encrypt) => 16 * (l / 16 + 1),
                (Algorithm::Aes128Copa, Op::Encrypt) => 16 * l.div_ceil(16).max(1) + 1,
                (Algorithm::Aes128Copa, Op::Decrypt) => l.saturating_sub(1),
                (Algorithm::Aes128Julius, Op::Encrypt) => 16 * l.div_ceil(16) + 16,
                (Algorithm::Aes128Julius, Op::Decrypt) => l.saturating_sub(16),
                _ => l,
            };
            if want > isize::MAX as u128 {
                assert_eq!(
                    rc, COMB_ERR_INVALID_ARGUMENT,
                    "comb_output_len({id}, {op}, {len})"
                );
            } else {
                assert_eq!(
                    (rc, out as u128),
                    (COMB_OK, want),
                    "comb_output_len({id}, {op}, {len})"
                );
            }
        }
    }
    let code = match int(u, 0, 1) {
        0 => -(int(u, 0, 120) as c_int),
        _ => u32_any(u) as c_int,
    };
    // SAFETY: comb_strerror never returns NULL and its strings are static.
    let s = unsafe { CStr::from_ptr(comb_strerror(code)) };
    assert!(!s.to_bytes().is_empty());

    // comb_alg_from_name on arbitrary (NUL-terminated) bytes.
    let mut name_bytes: Vec<u8> = (0..int(u, 0, 16)).map(|_| int(u, 1, 255) as u8).collect();
    name_bytes.push(0);
    let mut got = 0u32;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { comb_alg_from_name(name_bytes.as_ptr().cast::<c_char>(), &mut got) };
    let text = std::str::from_utf8(&name_bytes[..name_bytes.len() - 1]).ok();
    match text.and_then(|t| Algorithm::from_id(t).ok()) {
        Some(a) => assert_eq!((rc, algorithm_from_id(got)), (COMB_OK, Some(a))),
        None => assert_eq!(rc, COMB_ERR_UNKNOWN_ALGORITHM),
    }
    // SAFETY: NULL pointers are checked.
    assert_eq!(
        unsafe { comb_alg_from_name(ptr::null(), &mut got) },
        COMB_ERR_NULL_POINTER
    );

    // comb_key_new: lengths within the buffer, NULL with any length, lengths over isize::MAX.
    let buf = [7u8; 40];
    let (p, len) = match int(u, 0, 3) {
        0 => (ptr::null(), int(u, 0, 40)),
        1 => (buf.as_ptr(), isize::MAX as usize + 1 + int(u, 0, 9)),
        _ => (buf.as_ptr(), int(u, 0, 40)),
    };
    let mut k: *mut CombKey = 8 as *mut CombKey;
    // SAFETY: `p` is NULL or valid for `len` bytes (or len > isize::MAX, which is rejected).
    let rc = unsafe { comb_key_new(p, len, &mut k) };
    match (p.is_null(), len) {
        (true, _) => assert_eq!(rc, COMB_ERR_NULL_POINTER),
        (false, 16 | 24 | 32) => assert_eq!(rc, COMB_OK),
        _ => assert_eq!(rc, COMB_ERR_INVALID_KEY_LENGTH),
    }
    assert_eq!(k.is_null(), rc != COMB_OK, "*out after comb_key_new: {rc}");
    // SAFETY: NULL or a fresh handle.
    unsafe { comb_key_free(k) };
    // SAFETY: a NULL out pointer is checked.
    assert_eq!(
        unsafe { comb_key_new(buf.as_ptr(), 16, ptr::null_mut()) },
        COMB_ERR_NULL_POINTER
    );
}

fuzz_target!(|data: &[u8]| {
    let spec = decode(data);
    let debug = std::env::var_os("COMB_FUZZ_DEBUG").is_some();
    if debug && std::env::var_os("COMB_FUZZ_DEBUG_SPEC").is_some() {
        eprintln!("{spec:#?}");
    }
    let mut tail = Unstructured::new(data.get(data.len().saturating_sub(32)..).unwrap_or(&[]));
    check_small_functions(&mut tail);

    // Keys.
    let keys: Vec<*mut CombKey> = spec
        .keys
        .iter()
        .map(|k| {
            let mut h = ptr::null_mut();
            // SAFETY: valid pointers.
            assert_eq!(
                unsafe { comb_key_new(k.as_ptr(), k.len(), &mut h) },
                COMB_OK
            );
            h
        })
        .collect();
    let rust_keys: Vec<AesKey> = spec
        .keys
        .iter()
        .map(|k| AesKey::new(k).expect("key"))
        .collect();

    // The arena (u64 words: 8-aligned) and its initial contents.
    let mut arena_words = vec![0u64; ARENA / 8];
    let base = arena_words.as_mut_ptr().cast::<u8>();
    for i in 0..ARENA {
        // SAFETY: i < ARENA, inside the allocation.
        unsafe {
            *base.add(i) = (i as u8).wrapping_mul(31).wrapping_add(spec.arena_seed) ^ (i >> 8) as u8
        };
    }
    // SAFETY: the arena, ARENA bytes.
    let initial: Vec<u8> = unsafe { core::slice::from_raw_parts(base, ARENA) }.to_vec();

    // The job array: at least one slot, plus one word of slack for the misaligned pointer.
    let slots = spec.jobs.len().max(1);
    let mut array_words = vec![0u64; (slots * spec.stride) / 8 + 1];
    let array = array_words.as_mut_ptr().cast::<u8>();
    for (i, j) in spec.jobs.iter().enumerate() {
        write_job(array.wrapping_add(i * spec.stride), j, base, &keys);
        // Bytes of a longer stride: the caller's, never touched.
        for b in JOB..spec.stride {
            // SAFETY: inside the array.
            unsafe { *array.add(i * spec.stride + b) = (b as u8) ^ 0xa5 };
        }
    }
    if spec.jobs.is_empty() {
        // A lone valid-looking slot, so that reading jobs[0] stays in bounds.
        let empty = JobSpec {
            size: spec.stride as u32,
            flags: 0,
            key: None,
            input: R::EMPTY,
            out: R::EMPTY,
            iv: R::EMPTY,
            ad: R::EMPTY,
            tag: R::EMPTY,
            reserved: 0,
            user_data: 0,
        };
        write_job(array, &empty, base, &keys);
    }
    let array_bytes = slots * spec.stride;
    // SAFETY: the array's bytes.
    let before: Vec<u8> = unsafe { core::slice::from_raw_parts(array, array_bytes) }.to_vec();

    let eng = if spec.engine_null {
        ptr::null()
    } else {
        engine().cast_const()
    };
    let jobs_ptr: *mut CombJob = match spec.array {
        ArrayArg::Normal => array.cast(),
        ArrayArg::Null => ptr::null_mut(),
        ArrayArg::Misaligned(k) => array.wrapping_add(k).cast(),
    };
    // SAFETY: every pointer the library may dereference points into the arena or the array
    // (or comes with a length it must reject), the keys and the engine are live.
    let rc = unsafe { comb_process(eng, spec.alg_id, spec.op_id, jobs_ptr, spec.n_jobs) };
    if debug {
        let statuses: Vec<i32> = (0..spec.jobs.len().min(spec.n_jobs))
            .filter(|_| spec.array == ArrayArg::Normal)
            // SAFETY: inside the array.
            .map(|i| unsafe {
                ptr::addr_of!((*array.add(i * spec.stride).cast::<CombJob>()).status).read()
            })
            .collect();
        eprintln!(
            "comb_process(alg {}, op {}, {} jobs) = {rc}; statuses {statuses:?}",
            spec.alg_id, spec.op_id, spec.n_jobs
        );
    }

    // SAFETY: the arena and the array after the call.
    let arena_after: Vec<u8> = unsafe { core::slice::from_raw_parts(base, ARENA) }.to_vec();
    let after: Vec<u8> = unsafe { core::slice::from_raw_parts(array, array_bytes) }.to_vec();
    for k in keys {
        // SAFETY: handles from comb_key_new, freed once.
        unsafe { comb_key_free(k) };
    }

    // ---- The model.
    let alg = algorithm_from_id(spec.alg_id);
    let op = match spec.op_id {
        COMB_OP_ENCRYPT => Some(Op::Encrypt),
        COMB_OP_DECRYPT => Some(Op::Decrypt),
        _ => None,
    };
    let mut call_errs: Vec<c_int> = Vec::new();
    if spec.engine_null {
        call_errs.push(COMB_ERR_NULL_POINTER);
    }
    if alg.is_none() {
        call_errs.push(COMB_ERR_UNKNOWN_ALGORITHM);
    }
    if op.is_none() {
        call_errs.push(COMB_ERR_UNKNOWN_OP);
    }
    let first_size = spec.jobs.first().map_or(spec.stride as u32, |j| j.size);
    let size_ok = first_size as usize >= COMB_JOB_SIZE_V1
        && first_size <= COMB_JOB_SIZE_MAX
        && first_size as usize % align_of::<CombJob>() == 0;
    if spec.n_jobs == 0 {
        let want = call_errs.first().copied().unwrap_or(COMB_OK);
        assert!(
            call_errs.contains(&rc) || (call_errs.is_empty() && rc == COMB_OK),
            "n_jobs 0: {rc}, want {want}"
        );
        assert_eq!(before, after, "n_jobs 0 touched the array");
        assert_eq!(initial, arena_after, "n_jobs 0 touched the arena");
        return;
    }
    let mut array_errs: Vec<c_int> = Vec::new();
    match spec.array {
        ArrayArg::Null => array_errs.push(COMB_ERR_NULL_POINTER),
        ArrayArg::Misaligned(_) => array_errs.push(COMB_ERR_INVALID_ARGUMENT),
        ArrayArg::Normal => {}
    }
    if spec.array == ArrayArg::Normal && !size_ok {
        array_errs.push(COMB_ERR_JOB_SIZE);
    }
    if spec
        .n_jobs
        .checked_mul(first_size as usize)
        .is_none_or(|t| t > isize::MAX as usize)
    {
        array_errs.push(COMB_ERR_INVALID_ARGUMENT);
    }
    if !array_errs.is_empty() {
        // The array cannot be walked (or must not be).
        assert!(
            array_errs.contains(&rc) || call_errs.contains(&rc),
            "call-level {rc}, want one of {array_errs:?} {call_errs:?}"
        );
        assert_eq!(initial, arena_after, "a rejected call touched the arena");
        assert_eq!(
            before, after,
            "a call that cannot walk its array touched it ({rc})"
        );
        return;
    }
    assert_eq!(
        spec.n_jobs,
        spec.jobs.len(),
        "walkable arrays are passed with their length"
    );
    assert_eq!(first_size as usize, spec.stride);
    let stride = spec.stride;
    assert_eq!(
        frozen(&before, spec.jobs.len(), stride),
        frozen(&after, spec.jobs.len(), stride),
        "comb_process changed a job field other than status and out_len"
    );
    if !call_errs.is_empty() {
        assert!(
            call_errs.contains(&rc),
            "call-level {rc}, want one of {call_errs:?}"
        );
        for i in 0..spec.jobs.len() {
            assert_eq!(
                read_status(&after, i, stride),
                (rc, 0),
                "job {i} after call-level error {rc}"
            );
        }
        assert_eq!(initial, arena_after, "a rejected call touched the arena");
        return;
    }
    let (alg, op) = (alg.expect("known"), op.expect("known"));

    // Per job: C-level checks, then the overlap check over the jobs that passed them.
    let mut want: Vec<Option<Vec<c_int>>> = Vec::new(); // Some(codes): rejected by the C layer
    let mut regions: Vec<(usize, usize, bool, usize)> = Vec::new();
    let mut in_place_of = Vec::new();
    for (i, j) in spec.jobs.iter().enumerate() {
        let in_place = !alg.is_mac() && j.input.p != P::Null && j.input.p == j.out.p;
        in_place_of.push(in_place);
        let (errs, rs) = c_checks(j, base as usize, stride as u32, alg, op, in_place);
        if errs.is_empty() {
            regions.extend(rs.into_iter().map(|(s, e, w)| (s, e, w, i)));
            want.push(None);
        } else {
            want.push(Some(errs));
        }
    }
    let mut conflict = vec![false; spec.jobs.len()];
    for (x, a) in regions.iter().enumerate() {
        for b in &regions[x + 1..] {
            if a.0 < b.1 && b.0 < a.1 && (a.2 || b.2) {
                conflict[a.3] = true;
                conflict[b.3] = true;
            }
        }
    }
    let mut expected = initial.clone();
    let mut all_ok = true;
    for (i, j) in spec.jobs.iter().enumerate() {
        let (status, out_len) = read_status(&after, i, stride);
        all_ok &= status == COMB_OK;
        if let Some(errs) = &want[i] {
            assert!(
                errs.contains(&status),
                "job {i}: status {status}, want one of {errs:?}: {j:?}"
            );
            assert_eq!(out_len, 0, "job {i}: out_len {out_len} on error");
            continue;
        }
        if conflict[i] {
            assert_eq!(
                (status, out_len),
                (COMB_ERR_OVERLAP, 0),
                "job {i}: overlapping buffers not reported: {j:?}"
            );
            continue;
        }
        let key = &rust_keys[j.key.expect("checked") % rust_keys.len()];
        let (ws, wn) = reference(j, alg, op, in_place_of[i], key, &initial, &mut expected);
        assert_eq!(
            (status, out_len),
            (ws, wn),
            "job {i}: differs from comb::Engine::process_one: {j:?}"
        );
    }
    assert_eq!(
        rc,
        if all_ok {
            COMB_OK
        } else {
            COMB_ERR_JOBS_FAILED
        },
        "return code"
    );
    if expected != arena_after {
        let first = expected
            .iter()
            .zip(&arena_after)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "memory after comb_process differs from the model at arena offset {first}; jobs: {:?}",
            spec.jobs
        );
    }
});
