//! # comb-ffi: the C ABI of comb
//!
//! A `cdylib` and `staticlib` with the hand-written header `include/comb.h` (the header is
//! the reference for C callers; the tests of this crate fail when it drifts from this code).
//!
//! * Opaque handles: [`CombKey`] (`comb_key`, an expanded AES key, zeroized when freed) and
//!   [`CombEngine`] (`comb_engine`, a backend and its lane counts).
//! * One versioned `#[repr(C)]` job struct, [`CombJob`] (`comb_job`), whose first field is
//!   its size, and one batch call, [`comb_process`], that writes a status per job in input
//!   order.
//! * Stable integer IDs for the algorithms (`COMB_ALG_*`) and operations (`COMB_OP_*`), and
//!   integer error codes (`COMB_OK`, `COMB_ERR_*`) with [`comb_strerror`].
//!
//! Guarantees: no panic crosses the boundary (every exported function catches unwinding and
//! returns [`COMB_ERR_PANIC`]); there is no global mutable state; keys and engines are
//! immutable after creation and may be shared by any number of threads; NULL pointers with
//! non-zero lengths, wrapping ranges and overlapping buffers are reported per job, before any
//! Rust reference to the caller's memory is formed.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations)]

mod overlap;

use comb::{AesKey, Algorithm, Data, Engine, Error, Job, JobResult, Op, Tag};
use core::ffi::{c_char, c_int, c_void, CStr};
use core::mem::{align_of, offset_of, size_of};
use core::ptr;
use overlap::Region;
use std::panic::{catch_unwind, AssertUnwindSafe};

// ----------------------------------------------------------------------------------------
// Versions
// ----------------------------------------------------------------------------------------

/// The ABI version of this library: incremented on any incompatible change of the header.
/// Adding functions, algorithm IDs, error codes or trailing job fields (under a new
/// `COMB_JOB_SIZE_V*`) keeps it.
pub const COMB_ABI_VERSION: u32 = 1;

/// The size of the version-1 job struct: `16 + 13 * sizeof(void *)` (120 bytes on LP64,
/// 68 on ILP32). `comb_process` rejects jobs whose `size` field is smaller.
pub const COMB_JOB_SIZE_V1: usize = size_of::<CombJob>();

/// The largest `size` field `comb_process` accepts (a guard against garbage; later versions of
/// the struct will stay far below it).
pub const COMB_JOB_SIZE_MAX: u32 = 4096;

// ----------------------------------------------------------------------------------------
// Algorithm and operation IDs
// ----------------------------------------------------------------------------------------

/// `aes-ecb`: SP 800-38A ECB, whole blocks, no IV.
pub const COMB_ALG_AES_ECB: u32 = 1;
/// `aes-cbc`: SP 800-38A CBC, whole blocks, 16-byte IV.
pub const COMB_ALG_AES_CBC: u32 = 2;
/// `aes-cbc-pkcs7`: CBC with PKCS#7 padding; encryption output is `(len / 16 + 1) * 16`.
pub const COMB_ALG_AES_CBC_PKCS7: u32 = 3;
/// `aes-ctr`: SP 800-38A CTR, 16-byte initial counter block (128-bit big-endian counter).
pub const COMB_ALG_AES_CTR: u32 = 4;
/// `aes-cfb128`: SP 800-38A CFB-128, 16-byte IV, any length.
pub const COMB_ALG_AES_CFB128: u32 = 5;
/// `aes-ofb`: SP 800-38A OFB, 16-byte IV, any length.
pub const COMB_ALG_AES_OFB: u32 = 6;
/// `aes-cmac`: SP 800-38B / RFC 4493 CMAC, tags of 1..=16 bytes, no IV.
pub const COMB_ALG_AES_CMAC: u32 = 7;
/// `aes-gcm`: SP 800-38D GCM (AEAD): nonce of 1 or more bytes (12 recommended), associated
/// data, detached tag of 4, 8 or 12..=16 bytes, output as long as the input.
pub const COMB_ALG_AES_GCM: u32 = 8;
/// `aes-ccm`: SP 800-38C / RFC 3610 CCM (AEAD): nonce 7..=13 bytes, tags 4, 6, .., 16 bytes.
pub const COMB_ALG_AES_CCM: u32 = 9;
/// `aes-ocb3`: RFC 7253 OCB (AEAD): nonce 1..=15 bytes, tags 8..=16 bytes.
pub const COMB_ALG_AES_OCB3: u32 = 10;
/// `aes128-otr`: AES-OTR v3, parallel AD: 16-byte key, 12-byte nonce, 16-byte tag.
pub const COMB_ALG_AES128_OTR: u32 = 11;
/// `aes128-cloc`: AES-CLOC: 16-byte key, 12-byte nonce, 8-byte tag.
pub const COMB_ALG_AES128_CLOC: u32 = 12;
/// `aes128-silc`: AES-SILC v3: 16-byte key, 12-byte nonce, 8-byte tag.
pub const COMB_ALG_AES128_SILC: u32 = 13;
/// `aes128-jambu`: AES-JAMBU v2: 16-byte key, 8-byte nonce, 8-byte tag.
pub const COMB_ALG_AES128_JAMBU: u32 = 14;
/// `aes128-mcoe-g`: McOE-G: 32-byte key K1 || K2, 16-byte nonce and tag.
pub const COMB_ALG_AES128_MCOE_G: u32 = 15;
/// `aes128-copa`: AES-COPA v2: 16-byte key, nonce and tag; ciphertext 16*max(1,ceil(len/16)) + 1 bytes.
pub const COMB_ALG_AES128_COPA: u32 = 16;
/// `aes128-poet`: POET v2, full AES-128 hash: 16-byte key, nonce and tag.
pub const COMB_ALG_AES128_POET: u32 = 17;
/// `aes128-poet-gf`: POET v1, GF(2^128) hash: 16-byte key, nonce and tag.
pub const COMB_ALG_AES128_POET_GF: u32 = 18;
/// `aes128-julius`: Julius-ECB: 16-byte key and nonce, no tag (tag_len 0); ciphertext
/// 16*ceil(len/16) + 16 bytes.
pub const COMB_ALG_AES128_JULIUS: u32 = 19;
/// `aes128-cobra-r`: COBRA-R (a documented reconstruction of COBRA, not the published
/// algorithm): 16-byte key, nonce and tag; messages of an even number of blocks.
pub const COMB_ALG_AES128_COBRA_R: u32 = 20;

/// Encrypt (for MACs and AEAD modes: generate the tag).
pub const COMB_OP_ENCRYPT: u32 = 1;
/// Decrypt (for MACs and AEAD modes: verify the tag).
pub const COMB_OP_DECRYPT: u32 = 2;
/// MAC tag generation (the same value as [`COMB_OP_ENCRYPT`]).
pub const COMB_OP_MAC_GENERATE: u32 = COMB_OP_ENCRYPT;
/// MAC tag verification (the same value as [`COMB_OP_DECRYPT`]).
pub const COMB_OP_MAC_VERIFY: u32 = COMB_OP_DECRYPT;

/// The stable numbering: `(C ID, algorithm, comb's string ID)`. IDs are never reused or
/// renumbered; new algorithms get the next free number.
const ALG_IDS: &[(u32, Algorithm, &CStr)] = &[
    (COMB_ALG_AES_ECB, Algorithm::AesEcb, c"aes-ecb"),
    (COMB_ALG_AES_CBC, Algorithm::AesCbc, c"aes-cbc"),
    (
        COMB_ALG_AES_CBC_PKCS7,
        Algorithm::AesCbcPkcs7,
        c"aes-cbc-pkcs7",
    ),
    (COMB_ALG_AES_CTR, Algorithm::AesCtr, c"aes-ctr"),
    (COMB_ALG_AES_CFB128, Algorithm::AesCfb128, c"aes-cfb128"),
    (COMB_ALG_AES_OFB, Algorithm::AesOfb, c"aes-ofb"),
    (COMB_ALG_AES_CMAC, Algorithm::AesCmac, c"aes-cmac"),
    (COMB_ALG_AES_GCM, Algorithm::AesGcm, c"aes-gcm"),
    (COMB_ALG_AES_CCM, Algorithm::AesCcm, c"aes-ccm"),
    (COMB_ALG_AES_OCB3, Algorithm::AesOcb3, c"aes-ocb3"),
    (COMB_ALG_AES128_OTR, Algorithm::Aes128Otr, c"aes128-otr"),
    (COMB_ALG_AES128_CLOC, Algorithm::Aes128Cloc, c"aes128-cloc"),
    (COMB_ALG_AES128_SILC, Algorithm::Aes128Silc, c"aes128-silc"),
    (
        COMB_ALG_AES128_JAMBU,
        Algorithm::Aes128Jambu,
        c"aes128-jambu",
    ),
    (
        COMB_ALG_AES128_MCOE_G,
        Algorithm::Aes128McoeG,
        c"aes128-mcoe-g",
    ),
    (COMB_ALG_AES128_COPA, Algorithm::Aes128Copa, c"aes128-copa"),
    (COMB_ALG_AES128_POET, Algorithm::Aes128Poet, c"aes128-poet"),
    (
        COMB_ALG_AES128_POET_GF,
        Algorithm::Aes128PoetGf,
        c"aes128-poet-gf",
    ),
    (
        COMB_ALG_AES128_JULIUS,
        Algorithm::Aes128Julius,
        c"aes128-julius",
    ),
    (
        COMB_ALG_AES128_COBRA_R,
        Algorithm::Aes128CobraR,
        c"aes128-cobra-r",
    ),
];

/// The algorithm of a C ID, if this build has it.
pub fn algorithm_from_id(id: u32) -> Option<Algorithm> {
    ALG_IDS.iter().find(|e| e.0 == id).map(|e| e.1)
}

/// The C ID of an algorithm (`None` only for an algorithm added to `comb` without an ID
/// here; a test checks that every [`Algorithm::ALL`] entry has one).
pub fn algorithm_to_id(alg: Algorithm) -> Option<u32> {
    ALG_IDS.iter().find(|e| e.1 == alg).map(|e| e.0)
}

fn op_from_id(op: u32) -> Option<Op> {
    match op {
        COMB_OP_ENCRYPT => Some(Op::Encrypt),
        COMB_OP_DECRYPT => Some(Op::Decrypt),
        _ => None,
    }
}

// ----------------------------------------------------------------------------------------
// Error codes
// ----------------------------------------------------------------------------------------

/// Success.
pub const COMB_OK: c_int = 0;
/// [`Error::Unsupported`]: the CPU lacks the instructions needed (e.g. no AES-NI).
pub const COMB_ERR_UNSUPPORTED: c_int = -1;
/// [`Error::UnknownBackend`]: `COMB_BACKEND` names no known backend.
pub const COMB_ERR_UNKNOWN_BACKEND: c_int = -2;
/// [`Error::UnknownAlgorithm`], and an algorithm ID this build does not know.
pub const COMB_ERR_UNKNOWN_ALGORITHM: c_int = -3;
/// [`Error::InvalidKeyLength`]: a key length the algorithm does not take (AES keys are 16, 24 or
/// 32 bytes; see `Algorithm::key_lens`).
pub const COMB_ERR_INVALID_KEY_LENGTH: c_int = -4;
/// [`Error::InvalidIvLength`]: the IV/nonce length is not what the algorithm takes.
pub const COMB_ERR_INVALID_IV_LENGTH: c_int = -5;
/// [`Error::NotBlockMultiple`]: the mode needs whole 16-byte blocks.
pub const COMB_ERR_NOT_BLOCK_MULTIPLE: c_int = -6;
/// [`Error::OutputTooShort`]: `out_cap` is below what the mode writes.
pub const COMB_ERR_OUTPUT_TOO_SHORT: c_int = -7;
/// [`Error::InvalidPadding`]: PKCS#7 padding did not verify (output zeroed).
pub const COMB_ERR_INVALID_PADDING: c_int = -8;
/// [`Error::InvalidTagLength`]: tag length outside the algorithm's range.
pub const COMB_ERR_INVALID_TAG_LENGTH: c_int = -9;
/// [`Error::TagMisuse`]: a MAC job without a tag, or a tag given to a mode that takes none.
pub const COMB_ERR_TAG_MISUSE: c_int = -10;
/// [`Error::AdNotSupported`]: associated data given to a mode without AD.
pub const COMB_ERR_AD_NOT_SUPPORTED: c_int = -11;
/// [`Error::AuthenticationFailed`]: the tag did not verify (output zeroed).
pub const COMB_ERR_AUTH_FAILED: c_int = -12;
/// [`Error::InvalidLaneCount`]: lane count outside 1..=32.
pub const COMB_ERR_INVALID_LANE_COUNT: c_int = -13;
/// [`Error::InvalidNonceLength`]: nonce length outside the algorithm's range (AES-GCM).
pub const COMB_ERR_INVALID_NONCE_LENGTH: c_int = -14;
/// [`Error::TagLengthNotAllowed`]: tag length not in the algorithm's set (AES-GCM).
pub const COMB_ERR_TAG_LENGTH_NOT_ALLOWED: c_int = -15;
/// [`Error::MessageTooLong`]: message or associated data longer than the algorithm allows.
pub const COMB_ERR_MESSAGE_TOO_LONG: c_int = -16;
/// [`Error::InvalidMessageLength`]: the input length does not have the shape the algorithm
/// needs (COBRA-R: an even number of blocks; an AES-COPA ciphertext is 16k + 1 bytes, a
/// Julius ciphertext 16k bytes, k >= 1).
pub const COMB_ERR_INVALID_MESSAGE_LENGTH: c_int = -17;
/// A required pointer is NULL, or a pointer is NULL with a non-zero length.
pub const COMB_ERR_NULL_POINTER: c_int = -100;
/// Buffers overlap: `in` and `out` partially (only `in == out` is allowed), or a written
/// buffer (output, generated tag) shares bytes with any other buffer of the batch.
pub const COMB_ERR_OVERLAP: c_int = -101;
/// A job's `size` is below `COMB_JOB_SIZE_V1`, above `COMB_JOB_SIZE_MAX`, not a multiple of
/// the struct's alignment, or differs from the first job's.
pub const COMB_ERR_JOB_SIZE: c_int = -102;
/// An operation ID other than `COMB_OP_ENCRYPT` / `COMB_OP_DECRYPT`.
pub const COMB_ERR_UNKNOWN_OP: c_int = -103;
/// A panic was caught inside the library (a bug; the call's outputs are unspecified).
pub const COMB_ERR_PANIC: c_int = -104;
/// Returned by `comb_process` when the batch ran and at least one job's `status` is not
/// `COMB_OK`.
pub const COMB_ERR_JOBS_FAILED: c_int = -105;
/// An invalid argument: non-zero `flags`, a misaligned job array, or a pointer + length that
/// wraps around or exceeds `PTRDIFF_MAX`.
pub const COMB_ERR_INVALID_ARGUMENT: c_int = -106;
/// An error of the Rust library this version of the C ABI has no code for.
pub const COMB_ERR_OTHER: c_int = -107;

/// The C code of a library error (one code per [`Error`] variant).
pub fn error_code(e: &Error) -> c_int {
    match e {
        Error::Unsupported(_) => COMB_ERR_UNSUPPORTED,
        Error::UnknownBackend(_) => COMB_ERR_UNKNOWN_BACKEND,
        Error::UnknownAlgorithm(_) => COMB_ERR_UNKNOWN_ALGORITHM,
        Error::InvalidKeyLength { .. } => COMB_ERR_INVALID_KEY_LENGTH,
        Error::InvalidIvLength { .. } => COMB_ERR_INVALID_IV_LENGTH,
        Error::NotBlockMultiple { .. } => COMB_ERR_NOT_BLOCK_MULTIPLE,
        Error::OutputTooShort { .. } => COMB_ERR_OUTPUT_TOO_SHORT,
        Error::InvalidPadding => COMB_ERR_INVALID_PADDING,
        Error::InvalidTagLength { .. } => COMB_ERR_INVALID_TAG_LENGTH,
        Error::TagMisuse => COMB_ERR_TAG_MISUSE,
        Error::AdNotSupported => COMB_ERR_AD_NOT_SUPPORTED,
        Error::AuthenticationFailed => COMB_ERR_AUTH_FAILED,
        Error::InvalidLaneCount { .. } => COMB_ERR_INVALID_LANE_COUNT,
        Error::InvalidNonceLength { .. } => COMB_ERR_INVALID_NONCE_LENGTH,
        Error::TagLengthNotAllowed { .. } => COMB_ERR_TAG_LENGTH_NOT_ALLOWED,
        Error::MessageTooLong { .. } => COMB_ERR_MESSAGE_TOO_LONG,
        Error::InvalidMessageLength { .. } => COMB_ERR_INVALID_MESSAGE_LENGTH,
        _ => COMB_ERR_OTHER,
    }
}

/// Every error code with its static description (what [`comb_strerror`] returns).
pub const ERROR_MESSAGES: &[(c_int, &CStr)] = &[
    (COMB_OK, c"success"),
    (
        COMB_ERR_UNSUPPORTED,
        c"unsupported on this CPU (no AES-NI, or the forced backend cannot run)",
    ),
    (COMB_ERR_UNKNOWN_BACKEND, c"unknown backend in COMB_BACKEND"),
    (COMB_ERR_UNKNOWN_ALGORITHM, c"unknown algorithm ID"),
    (
        COMB_ERR_INVALID_KEY_LENGTH,
        c"invalid key length for the algorithm",
    ),
    (
        COMB_ERR_INVALID_IV_LENGTH,
        c"invalid IV/nonce length for the algorithm",
    ),
    (
        COMB_ERR_NOT_BLOCK_MULTIPLE,
        c"input length is not a multiple of 16 bytes",
    ),
    (COMB_ERR_OUTPUT_TOO_SHORT, c"output buffer too short"),
    (COMB_ERR_INVALID_PADDING, c"invalid padding"),
    (
        COMB_ERR_INVALID_TAG_LENGTH,
        c"invalid tag length for the algorithm",
    ),
    (
        COMB_ERR_TAG_MISUSE,
        c"tag missing, or given to an algorithm that takes none",
    ),
    (
        COMB_ERR_AD_NOT_SUPPORTED,
        c"associated data given to a mode without AD",
    ),
    (COMB_ERR_AUTH_FAILED, c"authentication failed"),
    (
        COMB_ERR_INVALID_LANE_COUNT,
        c"invalid lane count (allowed 1..32)",
    ),
    (
        COMB_ERR_INVALID_NONCE_LENGTH,
        c"invalid nonce length for the algorithm",
    ),
    (
        COMB_ERR_TAG_LENGTH_NOT_ALLOWED,
        c"tag length not allowed for the algorithm",
    ),
    (
        COMB_ERR_MESSAGE_TOO_LONG,
        c"message or associated data too long for the algorithm",
    ),
    (
        COMB_ERR_INVALID_MESSAGE_LENGTH,
        c"input length not of the shape the algorithm needs",
    ),
    (
        COMB_ERR_NULL_POINTER,
        c"NULL pointer (required, or with a non-zero length)",
    ),
    (
        COMB_ERR_OVERLAP,
        c"buffers overlap (only in == out is allowed)",
    ),
    (COMB_ERR_JOB_SIZE, c"invalid comb_job size field"),
    (COMB_ERR_UNKNOWN_OP, c"unknown operation ID"),
    (
        COMB_ERR_PANIC,
        c"internal error (panic caught in the library)",
    ),
    (
        COMB_ERR_JOBS_FAILED,
        c"one or more jobs failed (see each job's status)",
    ),
    (
        COMB_ERR_INVALID_ARGUMENT,
        c"invalid argument (flags, alignment or address range)",
    ),
    (
        COMB_ERR_OTHER,
        c"library error without a C code in this version",
    ),
];

// ----------------------------------------------------------------------------------------
// Handles and the job struct
// ----------------------------------------------------------------------------------------

/// `comb_key`: an expanded AES-128/192/256 key (opaque to C). Immutable after
/// [`comb_key_new`]; every byte of key material is overwritten when [`comb_key_free`] drops
/// it (the `Drop` of [`AesKey`]).
#[derive(Debug)]
pub struct CombKey {
    key: AesKey,
}

/// `comb_engine`: a [`comb::Engine`] (backend and lane counts; opaque to C). Immutable after
/// [`comb_engine_new`].
#[derive(Debug)]
pub struct CombEngine {
    engine: Engine,
}

/// `comb_job`, version 1: one message of a batch (see `include/comb.h` for the contract of
/// each field). Later versions only append fields; `size` says which version the caller has.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CombJob {
    /// `sizeof(comb_job)` of the caller's header (>= [`COMB_JOB_SIZE_V1`]).
    pub size: u32,
    /// Reserved, must be 0.
    pub flags: u32,
    /// Input message, `len` bytes (MACs: the message).
    pub r#in: *const u8,
    /// Output buffer of `out_cap` bytes; `out == in` means in place. Ignored by MACs.
    pub out: *mut u8,
    /// Input length in bytes.
    pub len: usize,
    /// Output buffer capacity in bytes.
    pub out_cap: usize,
    /// Key handle from [`comb_key_new`].
    pub key: *const CombKey,
    /// IV, initial counter block or nonce, `iv_len` bytes.
    pub iv: *const u8,
    /// IV length in bytes.
    pub iv_len: usize,
    /// Associated data (AEAD modes), `ad_len` bytes.
    pub ad: *const u8,
    /// Associated data length in bytes.
    pub ad_len: usize,
    /// Tag: written on encrypt/generate, read on decrypt/verify; `tag_len` bytes.
    pub tag: *mut u8,
    /// Tag length in bytes (0: no tag).
    pub tag_len: usize,
    /// Out: `COMB_OK` or the job's error code.
    pub status: i32,
    /// Reserved; ignored and left unchanged.
    pub reserved: u32,
    /// Out: bytes written to `out` (the plaintext length for PKCS#7 decryption, 0 for MACs
    /// and on error).
    pub out_len: usize,
    /// The caller's, never read or written by the library.
    pub user_data: *mut c_void,
}

/// `(C field name, offset)` of every `comb_job` field in declaration order.
pub const JOB_FIELDS: &[(&str, usize)] = &[
    ("size", offset_of!(CombJob, size)),
    ("flags", offset_of!(CombJob, flags)),
    ("in", offset_of!(CombJob, r#in)),
    ("out", offset_of!(CombJob, out)),
    ("len", offset_of!(CombJob, len)),
    ("out_cap", offset_of!(CombJob, out_cap)),
    ("key", offset_of!(CombJob, key)),
    ("iv", offset_of!(CombJob, iv)),
    ("iv_len", offset_of!(CombJob, iv_len)),
    ("ad", offset_of!(CombJob, ad)),
    ("ad_len", offset_of!(CombJob, ad_len)),
    ("tag", offset_of!(CombJob, tag)),
    ("tag_len", offset_of!(CombJob, tag_len)),
    ("status", offset_of!(CombJob, status)),
    ("reserved", offset_of!(CombJob, reserved)),
    ("out_len", offset_of!(CombJob, out_len)),
    ("user_data", offset_of!(CombJob, user_data)),
];

// ----------------------------------------------------------------------------------------
// Exported functions
// ----------------------------------------------------------------------------------------

/// Runs `f`, turning a panic into `on_panic`: no unwinding ever leaves an exported function.
fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// The body of a `*_new` function: sets `*out` to NULL, then to a new handle of what `make`
/// returns, or returns `make`'s error code (`COMB_ERR_NULL_POINTER` for a NULL `out`).
///
/// # Safety
/// `out` is NULL or valid for a write.
unsafe fn new_handle<T>(out: *mut *mut T, make: impl FnOnce() -> Result<T, c_int>) -> c_int {
    guard(COMB_ERR_PANIC, || {
        if out.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        match make() {
            Ok(value) => {
                let handle = Box::into_raw(Box::new(value));
                // SAFETY: as above.
                unsafe { out.write(handle) };
                COMB_OK
            }
            Err(code) => code,
        }
    })
}

/// The body of a `*_free` function: drops a handle of [`new_handle`]; NULL is a no-op.
///
/// # Safety
/// `handle` is NULL or a handle from [`new_handle`] that is not used again (by any thread).
unsafe fn free_handle<T>(handle: *mut T) {
    guard((), || {
        if !handle.is_null() {
            // SAFETY: the handle came from Box::into_raw in new_handle and is freed once.
            drop(unsafe { Box::from_raw(handle) });
        }
    })
}

/// The body of a `*_range` query: writes `range(alg)` to `*min` and `*max`.
///
/// # Safety
/// `min` and `max` are NULL or valid for a write.
unsafe fn write_range(
    alg: u32,
    min: *mut usize,
    max: *mut usize,
    range: impl FnOnce(Algorithm) -> (usize, usize),
) -> c_int {
    guard(COMB_ERR_PANIC, || {
        let Some(a) = algorithm_from_id(alg) else {
            return COMB_ERR_UNKNOWN_ALGORITHM;
        };
        if min.is_null() || max.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        let (lo, hi) = range(a);
        // SAFETY: both non-NULL and writable by the caller's contract.
        unsafe {
            min.write(lo);
            max.write(hi);
        }
        COMB_OK
    })
}

/// `uint32_t comb_abi_version(void)`: [`COMB_ABI_VERSION`] of the library actually linked
/// (compare with the header's `COMB_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn comb_abi_version() -> u32 {
    COMB_ABI_VERSION
}

/// `const char *comb_version(void)`: the crate version, e.g. `"0.1.0"` (static string).
#[no_mangle]
pub extern "C" fn comb_version() -> *const c_char {
    const V: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    V.as_ptr()
}

/// `const char *comb_strerror(int code)`: a static, NUL-terminated description of an error
/// code; `"unknown error code"` for codes this library does not define. Never NULL.
#[no_mangle]
pub extern "C" fn comb_strerror(code: c_int) -> *const c_char {
    guard(c"unknown error code".as_ptr(), || {
        ERROR_MESSAGES
            .iter()
            .find(|e| e.0 == code)
            .map_or(c"unknown error code", |e| e.1)
            .as_ptr()
    })
}

/// `const char *comb_alg_name(uint32_t alg)`: the string ID of an algorithm (`"aes-cbc"`,
/// static), or NULL for an unknown ID.
#[no_mangle]
pub extern "C" fn comb_alg_name(alg: u32) -> *const c_char {
    guard(ptr::null(), || {
        ALG_IDS
            .iter()
            .find(|e| e.0 == alg)
            .map_or(ptr::null(), |e| e.2.as_ptr())
    })
}

/// `int comb_alg_from_name(const char *name, uint32_t *alg)`: looks a string ID up.
///
/// Returns `COMB_OK`, `COMB_ERR_NULL_POINTER` or `COMB_ERR_UNKNOWN_ALGORITHM`.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `alg` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_alg_from_name(name: *const c_char, alg: *mut u32) -> c_int {
    guard(COMB_ERR_PANIC, || {
        if name.is_null() || alg.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's contract.
        let name = unsafe { CStr::from_ptr(name) };
        match ALG_IDS.iter().find(|e| e.2 == name) {
            Some(e) => {
                // SAFETY: non-NULL and writable by the caller's contract.
                unsafe { alg.write(e.0) };
                COMB_OK
            }
            None => COMB_ERR_UNKNOWN_ALGORITHM,
        }
    })
}

/// `int comb_iv_len(uint32_t alg, size_t *iv_len)`: the IV/nonce length the algorithm takes
/// (0: none); for variable-length nonces the recommended one (AES-GCM: 12), see
/// [`comb_iv_len_range`].
///
/// # Safety
/// `iv_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_iv_len(alg: u32, iv_len: *mut usize) -> c_int {
    guard(COMB_ERR_PANIC, || {
        let Some(a) = algorithm_from_id(alg) else {
            return COMB_ERR_UNKNOWN_ALGORITHM;
        };
        if iv_len.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { iv_len.write(a.iv_len()) };
        COMB_OK
    })
}

/// `int comb_iv_len_range(uint32_t alg, size_t *min, size_t *max)`: the IV/nonce lengths the
/// algorithm accepts, inclusive (`min == max` for fixed-length IVs, both 0 for none; AES-GCM:
/// 1 to 2^61 - 1, clamped to `SIZE_MAX`).
///
/// # Safety
/// `min` and `max` are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_iv_len_range(alg: u32, min: *mut usize, max: *mut usize) -> c_int {
    // SAFETY: the caller's contract is write_range's.
    unsafe { write_range(alg, min, max, Algorithm::iv_lens) }
}

/// `int comb_tag_len_allowed(uint32_t alg, size_t len)`: 1 if a tag of `len` bytes is allowed,
/// 0 if not (always 0 for algorithms without a tag), `COMB_ERR_UNKNOWN_ALGORITHM`.
#[no_mangle]
pub extern "C" fn comb_tag_len_allowed(alg: u32, len: usize) -> c_int {
    guard(COMB_ERR_PANIC, || match algorithm_from_id(alg) {
        Some(a) => c_int::from(a.tag_len_allowed(len)),
        None => COMB_ERR_UNKNOWN_ALGORITHM,
    })
}

/// `int comb_tag_len_range(uint32_t alg, size_t *min, size_t *max)`: the shortest and longest
/// tag (both 0 for algorithms without a tag). Not every length between need be allowed
/// (AES-GCM: 4, 8, 12..=16); see [`comb_tag_len_allowed`].
///
/// # Safety
/// `min` and `max` are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_tag_len_range(alg: u32, min: *mut usize, max: *mut usize) -> c_int {
    let range = |a: Algorithm| a.tag_lens().map_or((0, 0), |(lo, hi, _)| (lo, hi));
    // SAFETY: the caller's contract is write_range's.
    unsafe { write_range(alg, min, max, range) }
}

/// `int comb_output_len(uint32_t alg, uint32_t op, size_t len, size_t *out_len)`: the
/// `out_cap` a job of `len` input bytes needs (0 for MACs; for PKCS#7 decryption the input
/// length, an upper bound of the plaintext). `COMB_ERR_INVALID_ARGUMENT` when that length
/// exceeds `PTRDIFF_MAX`: no buffer can hold it (PKCS#7, COPA and Julius encryption expand a
/// message near `SIZE_MAX`; the Rust API's `Algorithm::output_len` saturates there).
///
/// # Safety
/// `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_output_len(
    alg: u32,
    op: u32,
    len: usize,
    out_len: *mut usize,
) -> c_int {
    guard(COMB_ERR_PANIC, || {
        let Some(a) = algorithm_from_id(alg) else {
            return COMB_ERR_UNKNOWN_ALGORITHM;
        };
        let Some(o) = op_from_id(op) else {
            return COMB_ERR_UNKNOWN_OP;
        };
        if out_len.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        // `output_len` saturates at `usize::MAX`, which is above the limit too.
        let out = a.output_len(o, len);
        if out > isize::MAX as usize {
            return COMB_ERR_INVALID_ARGUMENT;
        }
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { out_len.write(out) };
        COMB_OK
    })
}

/// `int comb_key_new(const uint8_t *key, size_t len, comb_key **out)`: expands a 16-, 24- or
/// 32-byte AES key into a new handle. On error `*out` is set to NULL (when `out` is not NULL).
///
/// Returns `COMB_OK`, `COMB_ERR_NULL_POINTER`, `COMB_ERR_INVALID_KEY_LENGTH` or
/// `COMB_ERR_UNSUPPORTED` (no AES-NI).
///
/// # Safety
/// `key` is NULL or readable for `len` bytes; `out` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_key_new(key: *const u8, len: usize, out: *mut *mut CombKey) -> c_int {
    let make = || {
        if key.is_null() {
            return Err(COMB_ERR_NULL_POINTER);
        }
        if len > isize::MAX as usize {
            return Err(COMB_ERR_INVALID_KEY_LENGTH);
        }
        // SAFETY: non-NULL, readable for `len` <= isize::MAX bytes by the caller's contract,
        // and only read while this call runs.
        let bytes = unsafe { core::slice::from_raw_parts(key, len) };
        let key = AesKey::new(bytes).map_err(|e| error_code(&e))?;
        Ok(CombKey { key })
    };
    // SAFETY: `out` is NULL or valid for a write by the caller's contract.
    unsafe { new_handle(out, make) }
}

/// `void comb_key_free(comb_key *key)`: zeroizes and frees a key handle; NULL is a no-op.
///
/// # Safety
/// `key` is NULL or a handle from [`comb_key_new`] that is not used again (by any thread).
#[no_mangle]
pub unsafe extern "C" fn comb_key_free(key: *mut CombKey) {
    // SAFETY: a handle of comb_key_new (new_handle) freed once, by the caller's contract;
    // dropping the AesKey overwrites its key material.
    unsafe { free_handle(key) }
}

/// `int comb_engine_new(comb_engine **out)`: an engine on the best backend of this CPU, or the
/// one the `COMB_BACKEND` environment variable names (read once, here), with the lane counts
/// of the tuning file if there is one. On error `*out` is set to NULL.
///
/// Returns `COMB_OK`, `COMB_ERR_NULL_POINTER`, `COMB_ERR_UNSUPPORTED` or
/// `COMB_ERR_UNKNOWN_BACKEND`.
///
/// # Safety
/// `out` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn comb_engine_new(out: *mut *mut CombEngine) -> c_int {
    let make = || {
        Engine::new()
            .map(|engine| CombEngine { engine })
            .map_err(|e| error_code(&e))
    };
    // SAFETY: `out` is NULL or valid for a write by the caller's contract.
    unsafe { new_handle(out, make) }
}

/// `void comb_engine_free(comb_engine *engine)`: frees an engine; NULL is a no-op.
///
/// # Safety
/// `engine` is NULL or a handle from [`comb_engine_new`] that is not used again.
#[no_mangle]
pub unsafe extern "C" fn comb_engine_free(engine: *mut CombEngine) {
    // SAFETY: a handle of comb_engine_new (new_handle) freed once, by the caller's contract.
    unsafe { free_handle(engine) }
}

/// `const char *comb_engine_backend(const comb_engine *engine)`: the engine's backend name
/// (`"ni"`, `"vaes256"`; static), or NULL for a NULL engine.
///
/// # Safety
/// `engine` is NULL or a live handle from [`comb_engine_new`].
#[no_mangle]
pub unsafe extern "C" fn comb_engine_backend(engine: *const CombEngine) -> *const c_char {
    guard(ptr::null(), || {
        // SAFETY: NULL or a live handle by the caller's contract.
        let Some(engine) = (unsafe { engine.as_ref() }) else {
            return ptr::null();
        };
        let name = engine.engine.backend().name();
        match name {
            "ni" => c"ni".as_ptr(),
            "vaes256" => c"vaes256".as_ptr(),
            _ => c"other".as_ptr(),
        }
    })
}

/// `size_t comb_job_layout(size_t *out, size_t n)`: the library's view of `comb_job`:
/// `sizeof`, `alignof`, then the offset of every field in declaration order. Writes the first
/// `min(n, total)` values to `out` (which may be NULL when `n` is 0) and returns `total`
/// (2 + the number of fields). For ABI checks: compare with `sizeof`/`offsetof` in C.
///
/// # Safety
/// `out` is NULL or valid for `n` writes.
#[no_mangle]
pub unsafe extern "C" fn comb_job_layout(out: *mut usize, n: usize) -> usize {
    guard(0, || {
        let values = [size_of::<CombJob>(), align_of::<CombJob>()]
            .into_iter()
            .chain(JOB_FIELDS.iter().map(|f| f.1));
        let total = 2 + JOB_FIELDS.len();
        if !out.is_null() {
            for (i, v) in values.take(n).enumerate() {
                // SAFETY: i < n, and `out` is writable for n values by the caller's contract.
                unsafe { out.add(i).write(v) };
            }
        }
        total
    })
}

// ----------------------------------------------------------------------------------------
// The batch call
// ----------------------------------------------------------------------------------------

/// One job during a call: its copied fields, whether it is in place, and its results so far.
struct State {
    job: CombJob,
    in_place: bool,
    status: c_int,
    out_len: usize,
}

/// `[p, p + len)` as a region, or an error: NULL with a non-zero length, a length above
/// `isize::MAX` (no Rust slice may be that long) or a range that wraps around.
fn range(p: *const u8, len: usize, job: usize, writable: bool) -> Result<Region, c_int> {
    if len == 0 {
        return Ok(Region {
            start: 0,
            end: 0,
            job,
            writable,
        });
    }
    if p.is_null() {
        return Err(COMB_ERR_NULL_POINTER);
    }
    let start = p as usize;
    match start.checked_add(len) {
        Some(end) if len <= isize::MAX as usize => Ok(Region {
            start,
            end,
            job,
            writable,
        }),
        _ => Err(COMB_ERR_INVALID_ARGUMENT),
    }
}

/// Checks one job's header and pointers (no memory behind them is touched) and appends its
/// regions for the overlap check.
fn check_job(
    j: &CombJob,
    stride: u32,
    alg: Algorithm,
    op: Op,
    index: usize,
    regions: &mut Vec<Region>,
) -> Result<bool, c_int> {
    if j.size != stride {
        return Err(COMB_ERR_JOB_SIZE);
    }
    if j.flags != 0 {
        return Err(COMB_ERR_INVALID_ARGUMENT);
    }
    if j.key.is_null() {
        return Err(COMB_ERR_NULL_POINTER);
    }
    let in_place = !alg.is_mac() && !j.r#in.is_null() && j.r#in == j.out.cast_const();
    let mark = regions.len();
    let pushed = push_regions(j, alg, op, in_place, index, regions);
    if pushed.is_err() {
        regions.truncate(mark);
    }
    pushed.map(|()| in_place)
}

/// Appends `r` unless it is empty (an empty region never conflicts).
fn push(regions: &mut Vec<Region>, r: Region) {
    if r.start < r.end {
        regions.push(r);
    }
}

/// Appends the regions of job `index` (see [`check_job`]).
fn push_regions(
    j: &CombJob,
    alg: Algorithm,
    op: Op,
    in_place: bool,
    index: usize,
    regions: &mut Vec<Region>,
) -> Result<(), c_int> {
    if alg.is_mac() {
        push(regions, range(j.r#in, j.len, index, false)?);
    } else if in_place {
        // One buffer: the message is its first `len` bytes, the output may use `out_cap`.
        range(j.r#in, j.len, index, false)?;
        let buf = range(j.out, j.out_cap, index, true)?;
        if j.out_cap < j.len {
            return Err(COMB_ERR_OUTPUT_TOO_SHORT);
        }
        push(regions, buf);
    } else {
        push(regions, range(j.r#in, j.len, index, false)?);
        push(regions, range(j.out, j.out_cap, index, true)?);
    }
    push(regions, range(j.iv, j.iv_len, index, false)?);
    push(regions, range(j.ad, j.ad_len, index, false)?);
    push(regions, range(j.tag, j.tag_len, index, op == Op::Encrypt)?);
    Ok(())
}

/// A slice of `len` bytes at `p` (`&[]` when `len` is 0, whatever `p`).
///
/// # Safety
/// When `len > 0`: `p` is non-NULL, `[p, p + len)` is readable, does not wrap, and is not
/// written through any other reference during `'a`.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the function's contract.
        unsafe { core::slice::from_raw_parts(p, len) }
    }
}

/// A mutable slice of `len` bytes at `p` (empty when `len` is 0).
///
/// # Safety
/// When `len > 0`: `p` is non-NULL, `[p, p + len)` is writable, does not wrap, and is not
/// accessed through any other reference during `'a`.
unsafe fn bytes_mut<'a>(p: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        &mut []
    } else {
        // SAFETY: the function's contract.
        unsafe { core::slice::from_raw_parts_mut(p, len) }
    }
}

/// The `comb::Job` of a checked C job.
///
/// # Safety
/// `c` passed [`check_job`] and the overlap check, and the caller's contract of
/// [`comb_process`] holds for it: its key is live and its buffers are valid for `'a`.
unsafe fn rust_job<'a>(c: &State, alg: Algorithm, op: Op) -> Job<'a> {
    let j = &c.job;
    // SAFETY: for the whole block: the pointers are non-NULL where the lengths are not 0, the
    // ranges do not wrap (check_job), no written range shares a byte with any other range of the
    // batch (overlap check), and the caller guarantees validity for the call's duration.
    unsafe {
        let key: &'a AesKey = &(*j.key).key;
        let data = if alg.is_mac() {
            Data::Input(bytes(j.r#in, j.len))
        } else if c.in_place {
            Data::InPlace {
                buf: bytes_mut(j.out, j.out_cap),
                len: j.len,
            }
        } else {
            Data::Copy {
                input: bytes(j.r#in, j.len),
                output: bytes_mut(j.out, j.out_cap),
            }
        };
        let tag = match (j.tag_len, op) {
            (0, _) => Tag::None,
            (n, Op::Encrypt) => Tag::Out(bytes_mut(j.tag, n)),
            (n, Op::Decrypt) => Tag::In(bytes(j.tag.cast_const(), n)),
        };
        Job::new(key, data)
            .with_iv(bytes(j.iv, j.iv_len))
            .with_ad(bytes(j.ad, j.ad_len))
            .with_tag(tag)
    }
}

/// `int comb_process(const comb_engine *engine, uint32_t alg, uint32_t op, comb_job *jobs,
/// size_t n_jobs)`: runs a batch of jobs of one algorithm and direction; writes `status` and
/// `out_len` of every job, in input order.
///
/// Returns `COMB_OK` (every job succeeded), `COMB_ERR_JOBS_FAILED` (the batch ran; see each
/// job's `status`), or a call-level error: `COMB_ERR_NULL_POINTER` (engine, or jobs with
/// `n_jobs > 0`), `COMB_ERR_UNKNOWN_ALGORITHM`, `COMB_ERR_UNKNOWN_OP`, `COMB_ERR_JOB_SIZE`
/// (first job's `size`), `COMB_ERR_INVALID_ARGUMENT` (misaligned array or array size
/// overflow), `COMB_ERR_PANIC`. On a call-level error no job is processed, and when the array
/// can be walked (a valid first `size`) every job's `status` is set to that code.
///
/// # Safety
/// `engine` is NULL or a live engine handle. `jobs` is NULL or points to `n_jobs` jobs laid
/// out `jobs[0].size` bytes apart, each readable and writable, not accessed by anyone else
/// during the call. In each job: `key` is NULL or a live key handle; every pointer with a
/// non-zero length is readable (written buffers: writable) for that length. Overlaps and NULL
/// pointers are detected and reported, not assumed away.
#[no_mangle]
pub unsafe extern "C" fn comb_process(
    engine: *const CombEngine,
    alg: u32,
    op: u32,
    jobs: *mut CombJob,
    n_jobs: usize,
) -> c_int {
    guard(COMB_ERR_PANIC, || {
        // SAFETY: NULL or a live handle by the caller's contract.
        let engine = unsafe { engine.as_ref() };
        let call = match (engine, algorithm_from_id(alg), op_from_id(op)) {
            (None, _, _) => Err(COMB_ERR_NULL_POINTER),
            (_, None, _) => Err(COMB_ERR_UNKNOWN_ALGORITHM),
            (_, _, None) => Err(COMB_ERR_UNKNOWN_OP),
            (Some(e), Some(a), Some(o)) => Ok((e.engine, a, o)),
        };
        if n_jobs == 0 {
            return call.err().unwrap_or(COMB_OK);
        }
        if jobs.is_null() {
            return COMB_ERR_NULL_POINTER;
        }
        if !(jobs as usize).is_multiple_of(align_of::<CombJob>()) {
            return COMB_ERR_INVALID_ARGUMENT;
        }
        // SAFETY: `jobs` is non-NULL, aligned, and its first job readable (n_jobs > 0); `size` is
        // the first field of every version of the struct.
        let stride = unsafe { ptr::addr_of!((*jobs).size).read() };
        if (stride as usize) < COMB_JOB_SIZE_V1
            || stride > COMB_JOB_SIZE_MAX
            || !(stride as usize).is_multiple_of(align_of::<CombJob>())
        {
            return COMB_ERR_JOB_SIZE;
        }
        if n_jobs
            .checked_mul(stride as usize)
            .is_none_or(|total| total > isize::MAX as usize)
        {
            return COMB_ERR_INVALID_ARGUMENT;
        }
        let at = |i: usize| -> *mut CombJob {
            // The array spans n_jobs * stride bytes (checked not to overflow above).
            jobs.cast::<u8>().wrapping_add(i * stride as usize).cast()
        };
        let write_back = |i: usize, status: c_int, out_len: usize| {
            let p = at(i);
            // SAFETY: job i lies in the caller's array (i < n_jobs), is aligned (stride is a
            // multiple of the alignment) and writable, and no Rust reference to it exists.
            unsafe {
                ptr::addr_of_mut!((*p).status).write(status);
                ptr::addr_of_mut!((*p).out_len).write(out_len);
            }
        };
        let (engine, alg, op) = match call {
            Ok(c) => c,
            Err(code) => {
                (0..n_jobs).for_each(|i| write_back(i, code, 0));
                return code;
            }
        };

        // Copy and check every job's version-1 fields, and mark the job as failed until it is
        // done (so a panic caught by the outer guard never leaves a stale COMB_OK behind).
        let mut state: Vec<State> = Vec::with_capacity(n_jobs);
        let mut regions = Vec::with_capacity(n_jobs * 4);
        for i in 0..n_jobs {
            // SAFETY: job i is readable for at least COMB_JOB_SIZE_V1 bytes and aligned (above).
            let job = unsafe { at(i).read() };
            write_back(i, COMB_ERR_PANIC, 0);
            let (status, in_place) = match check_job(&job, stride, alg, op, i, &mut regions) {
                Ok(in_place) => (COMB_OK, in_place),
                Err(code) => (code, false),
            };
            state.push(State {
                job,
                in_place,
                status,
                out_len: 0,
            });
        }
        // Regions of jobs that failed their checks were not added: they cannot conflict.
        if overlap::any_conflict(&regions, &mut Vec::with_capacity(n_jobs)) {
            for (s, bad) in state
                .iter_mut()
                .zip(overlap::conflicting_jobs(&regions, n_jobs))
            {
                if bad {
                    s.status = COMB_ERR_OVERLAP;
                }
            }
        }

        let index: Vec<usize> = (0..n_jobs)
            .filter(|&i| state[i].status == COMB_OK)
            .collect();
        let mut rjobs: Vec<Job<'_>> = index
            .iter()
            // SAFETY: each job passed check_job and the overlap check; the caller's contract
            // covers the rest. The jobs (and their slices) are dropped before write-back.
            .map(|&i| unsafe { rust_job(&state[i], alg, op) })
            .collect();
        let results: Result<Vec<JobResult>, _> =
            catch_unwind(AssertUnwindSafe(|| engine.process(alg, op, &mut rjobs)));
        drop(rjobs);
        match results {
            Ok(results) => {
                for (&i, r) in index.iter().zip(results) {
                    match r {
                        Ok(n) => state[i].out_len = n,
                        Err(e) => state[i].status = error_code(&e),
                    }
                }
            }
            Err(_) => index.iter().for_each(|&i| state[i].status = COMB_ERR_PANIC),
        }
        let mut all_ok = true;
        for (i, s) in state.iter().enumerate() {
            write_back(i, s.status, s.out_len);
            all_ok &= s.status == COMB_OK;
        }
        if all_ok {
            COMB_OK
        } else {
            COMB_ERR_JOBS_FAILED
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `comb_process` on batches on both sides of 64 jobs (where the engine keeps the
    /// validated jobs on the stack or in a vector), some sizes twice, every job equal to the
    /// Rust API's output. Job 3 writes over job 2's input: both fail with `COMB_ERR_OVERLAP`
    /// (every owner of a conflicting region does) and the others still run.
    #[test]
    fn process_matches_the_rust_api_around_64_jobs() {
        let Ok(engine_rs) = Engine::new() else {
            return; // no AES-NI
        };
        let key_bytes = [0x42u8; 16];
        let rs_key = AesKey::new(&key_bytes).unwrap();
        let mut key: *mut CombKey = ptr::null_mut();
        let mut engine: *mut CombEngine = ptr::null_mut();
        // SAFETY: valid pointers to 16 key bytes and to the out-parameters.
        unsafe {
            assert_eq!(comb_key_new(key_bytes.as_ptr(), 16, &mut key), COMB_OK);
            assert_eq!(comb_engine_new(&mut engine), COMB_OK);
        }
        let iv = [7u8; 16];
        for n in [1usize, 63, 64, 65, 130, 64, 130] {
            let len = |i: usize| 16 * (1 + (i * 7) % 90);
            let mut inputs: Vec<Vec<u8>> = (0..n)
                .map(|i| (0..len(i)).map(|b| (b * 31 + i) as u8).collect())
                .collect();
            let mut outs: Vec<Vec<u8>> = inputs.iter().map(|m| vec![0u8; m.len()]).collect();
            // Job 3 (when there is one) encrypts job 2's input in place: an overlap. (Raw
            // pointers from `Vec::as_ptr`/`as_mut_ptr`, which create no references.)
            let bad = (n > 3).then_some(3);
            let in_ptrs: Vec<*const u8> = inputs.iter().map(|m| m.as_ptr()).collect();
            let shared = inputs[2.min(n - 1)].as_mut_ptr();
            let mut jobs: Vec<CombJob> = (0..n)
                .map(|i| {
                    let (input, out, l) = if Some(i) == bad {
                        (shared.cast_const(), shared, len(2))
                    } else {
                        (in_ptrs[i], outs[i].as_mut_ptr(), len(i))
                    };
                    CombJob {
                        size: COMB_JOB_SIZE_V1 as u32,
                        flags: 0,
                        r#in: input,
                        out,
                        len: l,
                        out_cap: l,
                        key,
                        iv: iv.as_ptr(),
                        iv_len: 16,
                        ad: ptr::null(),
                        ad_len: 0,
                        tag: ptr::null_mut(),
                        tag_len: 0,
                        status: 1,
                        reserved: 0,
                        out_len: 0,
                        user_data: ptr::null_mut(),
                    }
                })
                .collect();
            // SAFETY: live handles; n jobs, each buffer valid for its length.
            let rc = unsafe {
                comb_process(
                    engine,
                    algorithm_to_id(Algorithm::AesCbc).unwrap(),
                    COMB_OP_ENCRYPT,
                    jobs.as_mut_ptr(),
                    n,
                )
            };
            assert_eq!(
                rc,
                if bad.is_some() {
                    COMB_ERR_JOBS_FAILED
                } else {
                    COMB_OK
                },
                "n {n}"
            );
            for i in 0..n {
                if bad.is_some() && (i == 2 || i == 3) {
                    assert_eq!(jobs[i].status, COMB_ERR_OVERLAP, "n {n} job {i}");
                    continue;
                }
                let mut want = inputs[i].clone();
                let r = engine_rs.process_one(
                    Algorithm::AesCbc,
                    Op::Encrypt,
                    Job::in_place(&rs_key, &mut want).with_iv(&iv),
                );
                assert_eq!(r, Ok(len(i)));
                assert_eq!(jobs[i].status, COMB_OK, "n {n} job {i}");
                assert_eq!(jobs[i].out_len, len(i), "n {n} job {i}");
                assert!(outs[i] == want, "n {n} job {i}");
            }
        }
        // SAFETY: handles from the constructors above, freed once.
        unsafe {
            comb_key_free(key);
            comb_engine_free(engine);
        }
    }

    #[test]
    fn guard_turns_a_panic_into_the_error_value() {
        assert_eq!(guard(COMB_ERR_PANIC, || COMB_OK), COMB_OK);
        assert_eq!(
            guard(COMB_ERR_PANIC, || -> c_int { panic!("inside the library") }),
            COMB_ERR_PANIC
        );
    }

    #[test]
    fn every_algorithm_has_a_stable_id_and_its_string_id() {
        for &alg in Algorithm::ALL {
            let id = algorithm_to_id(alg).unwrap_or_else(|| panic!("{alg} has no C ID"));
            assert_eq!(algorithm_from_id(id), Some(alg));
            let e = ALG_IDS.iter().find(|e| e.0 == id).unwrap();
            assert_eq!(e.2.to_str().unwrap(), alg.id());
        }
        // IDs are 1, 2, ... in table order (0 stays invalid, so zeroed jobs fail loudly).
        for (i, e) in ALG_IDS.iter().enumerate() {
            assert_eq!(e.0 as usize, i + 1);
        }
        assert_eq!(algorithm_from_id(0), None);
    }

    #[test]
    fn error_codes_are_distinct_and_described() {
        for (i, a) in ERROR_MESSAGES.iter().enumerate() {
            for b in &ERROR_MESSAGES[i + 1..] {
                assert_ne!(a.0, b.0);
            }
            // SAFETY: comb_strerror returns a static NUL-terminated string.
            let s = unsafe { CStr::from_ptr(comb_strerror(a.0)) };
            assert_eq!(s, a.1);
        }
        for e in [
            Error::Unsupported("x"),
            Error::UnknownBackend("x".into()),
            Error::UnknownAlgorithm("x".into()),
            Error::InvalidKeyLength { got: 1 },
            Error::InvalidIvLength {
                expected: 16,
                got: 1,
            },
            Error::NotBlockMultiple { len: 1 },
            Error::OutputTooShort { needed: 2, got: 1 },
            Error::InvalidPadding,
            Error::InvalidTagLength {
                got: 0,
                min: 1,
                max: 16,
            },
            Error::TagMisuse,
            Error::AdNotSupported,
            Error::AuthenticationFailed,
            Error::InvalidLaneCount { got: 0 },
            Error::InvalidNonceLength {
                got: 0,
                min: 1,
                max: 2,
            },
            Error::TagLengthNotAllowed {
                got: 5,
                allowed: &[4, 8],
            },
            Error::MessageTooLong { len: 2, max: 1 },
            Error::InvalidMessageLength { len: 1, rule: "x" },
        ] {
            let code = error_code(&e);
            assert!(code < 0 && code != COMB_ERR_OTHER, "{e:?}");
            assert!(ERROR_MESSAGES.iter().any(|m| m.0 == code));
        }
    }

    #[test]
    fn job_v1_size_is_sixteen_plus_thirteen_words_and_has_no_padding() {
        assert_eq!(COMB_JOB_SIZE_V1, 16 + 13 * size_of::<usize>());
        assert_eq!(size_of::<usize>(), size_of::<*const u8>());
        // Offsets strictly increase with no hole: every byte belongs to a field.
        let sizes = [4, 4].into_iter().chain(core::iter::repeat_n(
            size_of::<usize>(),
            JOB_FIELDS.len() - 2,
        ));
        let mut next = 0;
        for ((name, off), (i, sz)) in JOB_FIELDS.iter().zip(sizes.enumerate()) {
            let sz = if *name == "status" || *name == "reserved" {
                4
            } else {
                sz
            };
            assert_eq!(*off, next, "field {i} {name}");
            next = off + sz;
        }
        assert_eq!(next, COMB_JOB_SIZE_V1);
    }
}
