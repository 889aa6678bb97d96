//! The intel-ipsec-mb anchor: the multi-buffer job API of intel-ipsec-mb 1.3.

use std::ffi::{c_void, CStr};
use std::ptr::{self, NonNull};
use std::sync::OnceLock;

use zeroize::Zeroize;

use crate::common::{
    not_prepared, supported_alg, unsupported, Alg, Batch, AEAD_NONCE, AEAD_TAG, BLOCK,
};
use crate::{Anchor, Msg};

#[allow(
    dead_code,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unnecessary_transmutes,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks
)]
mod sys {
    include!(concat!(env!("OUT_DIR"), "/ipsec_mb_bindings.rs"));
}

const NAME: &str = "ipsec-mb";

/// The library's per-job length limit for ECB, CBC encryption and CMAC (`MB_MAX_LEN16` in
/// `lib/include/mb_mgr_job_check.h`: the multi-buffer lanes keep 16-bit lengths).
const MAX_JOB_LEN: usize = (1 << 16) - 2;
/// Most associated data an AES-CCM job takes: 1.3 rejects a longer one at submission, with
/// status "Invalid Additional Authenticated Data (AAD) length" (checked).
const MAX_CCM_AD: usize = 46;
/// ECB messages longer than [`MAX_JOB_LEN`] are split into independent jobs of at most this many
/// bytes (ECB blocks are independent, so this changes nothing in the output).
const ECB_CHUNK: usize = MAX_JOB_LEN & !(BLOCK - 1);

/// Expanded key material for one distinct key, 16-byte aligned as the library requires, zeroized
/// on drop. `enc`/`dec` hold up to 15 round keys; `k1`/`k2` are the CMAC subkeys.
#[repr(C, align(16))]
struct KeySched {
    enc: [u8; 15 * BLOCK],
    dec: [u8; 15 * BLOCK],
    k1: [u8; BLOCK],
    k2: [u8; BLOCK],
    key_len: u64,
    /// AES-GCM: the library's expanded key and GHASH key powers (`IMB_AESxxx_GCM_PRE`).
    gcm: Option<Box<sys::gcm_key_data>>,
}

impl Drop for KeySched {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
        self.k1.zeroize();
        self.k2.zeroize();
        if let Some(g) = &mut self.gcm {
            // SAFETY: gcm_key_data is plain bytes (arrays of u8 in unions); writing zeros over
            // the whole value leaves a valid (all-zero) value.
            unsafe { core::ptr::write_bytes(&mut **g as *mut sys::gcm_key_data, 0, 1) };
        }
    }
}

/// An allocated and initialised `IMB_MGR`, freed on drop.
struct Mgr(NonNull<sys::IMB_MGR>);

impl Mgr {
    /// `alloc_mb_mgr(0)` + `init_mb_mgr_auto`; returns the manager and the name of its code path.
    fn new() -> Result<(Self, &'static str), String> {
        // SAFETY: plain allocation call (flags 0 = no features disabled); NULL on failure.
        let p = unsafe { sys::alloc_mb_mgr(0) };
        let mgr =
            Self(NonNull::new(p).ok_or_else(|| {
                "anchor \"ipsec-mb\" is unavailable: alloc_mb_mgr failed".to_owned()
            })?);
        let mut arch: sys::IMB_ARCH = sys::IMB_ARCH_NONE;
        // SAFETY: `mgr` was just allocated by alloc_mb_mgr; `arch` is a valid out-pointer.
        unsafe { sys::init_mb_mgr_auto(mgr.0.as_ptr(), &mut arch) };
        // SAFETY: live manager.
        let errno = unsafe { sys::imb_get_errno(mgr.0.as_ptr()) };
        if errno != 0 || arch == sys::IMB_ARCH_NONE {
            return Err(format!(
                "anchor \"ipsec-mb\" is unavailable: init_mb_mgr_auto failed: {}",
                strerror(errno)
            ));
        }
        // SAFETY: live, initialised manager; `features` is a plain integer field.
        let features = unsafe { (*mgr.0.as_ptr()).features };
        Ok((mgr, arch_name(arch, features)))
    }
}

impl Drop for Mgr {
    fn drop(&mut self) {
        // SAFETY: allocated by alloc_mb_mgr, freed exactly once; `run` always flushes, so no
        // job in the manager refers to our buffers any more.
        unsafe { sys::free_mb_mgr(self.0.as_ptr()) }
    }
}

fn strerror(errno: i32) -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string (or NULL) for any value.
    let s = unsafe { sys::imb_get_strerror(errno) };
    if s.is_null() {
        format!("error {errno}")
    } else {
        // SAFETY: non-NULL static NUL-terminated string (see above).
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }
}

/// Names the code path from the selected architecture and the manager's detected features,
/// using the library's own `IMB_CPUFLAGS_*` tiers.
fn arch_name(arch: sys::IMB_ARCH, features: u64) -> &'static str {
    let has = |flags: u32| features & u64::from(flags) == u64::from(flags);
    match arch {
        sys::IMB_ARCH_NOAESNI => "noaesni (software AES emulation)",
        sys::IMB_ARCH_SSE if has(sys::IMB_CPUFLAGS_SSE_T3) => "sse_t3",
        sys::IMB_ARCH_SSE if has(sys::IMB_CPUFLAGS_SSE_T2) => "sse_t2",
        sys::IMB_ARCH_SSE => "sse_t1",
        sys::IMB_ARCH_AVX if has(sys::IMB_CPUFLAGS_AVX_T2) => "avx_t2",
        sys::IMB_ARCH_AVX => "avx_t1",
        sys::IMB_ARCH_AVX2 if has(sys::IMB_CPUFLAGS_AVX2_T2) => "avx2_t2 (VAES)",
        sys::IMB_ARCH_AVX2 => "avx2_t1",
        sys::IMB_ARCH_AVX512 if has(sys::IMB_CPUFLAGS_AVX512_T2) => "avx512_t2 (VAES)",
        sys::IMB_ARCH_AVX512 => "avx512_t1",
        _ => "unknown",
    }
}

/// See [`crate::ipsec_mb_arch`].
pub(crate) fn arch() -> &'static str {
    static ARCH: OnceLock<&'static str> = OnceLock::new();
    ARCH.get_or_init(|| match Mgr::new() {
        Ok((_, name)) => name,
        Err(_) => "unavailable: alloc_mb_mgr/init_mb_mgr_auto failed",
    })
}

/// The error of a completed job, if its status is not `IMB_STATUS_COMPLETED`.
fn job_error(m: *mut sys::IMB_MGR, job: *const sys::IMB_JOB) -> Option<String> {
    // SAFETY: `job` is a non-NULL job the manager just returned as completed; it stays valid
    // until the next get_next_job call, and we only read two plain integer/pointer fields.
    let (status, msg) = unsafe { ((*job).status, (*job).user_data.addr()) };
    if status == sys::IMB_STATUS_COMPLETED {
        return None;
    }
    // SAFETY: `m` is the live manager that returned the job.
    let errno = unsafe { sys::imb_get_errno(m) };
    Some(format!(
        "{NAME}: message {msg}: job status {status} ({})",
        strerror(errno)
    ))
}

/// Source for zero-length CMAC messages: the library wants a non-NULL `src`, and this one is
/// readable even by an implementation that loads a whole block.
static ZERO_BLOCK: [u8; BLOCK] = [0; BLOCK];

/// One job of a prepared batch: a whole message, or for long ECB messages one chunk of it.
#[derive(Clone, Copy)]
struct JobDesc {
    msg: usize,
    offset: usize,
    len: usize,
}

/// The intel-ipsec-mb anchor (see the crate documentation).
pub(crate) struct IpsecMb {
    // Declared before `mgr` only for tidiness; `run` never leaves jobs in the manager.
    prepared: Option<(Batch, Vec<KeySched>, Vec<JobDesc>)>,
    mgr: Mgr,
    empty: Vec<Vec<u8>>,
}

impl IpsecMb {
    pub(crate) fn new() -> Result<Self, String> {
        let (mgr, _arch) = Mgr::new()?;
        Ok(Self {
            prepared: None,
            mgr,
            empty: Vec::new(),
        })
    }

    /// Expands `key` with the manager's key-expansion (and for CMAC subkey, for GCM
    /// GHASH-key) functions.
    fn expand(&self, key: &[u8], alg: Alg) -> Result<KeySched, String> {
        let cmac = alg == Alg::Cmac;
        let mut ks = KeySched {
            enc: [0; 15 * BLOCK],
            dec: [0; 15 * BLOCK],
            k1: [0; BLOCK],
            k2: [0; BLOCK],
            key_len: key.len() as u64,
            gcm: None,
        };
        if alg == Alg::Gcm {
            let m = self.mgr.0.as_ptr();
            // SAFETY: live, initialised manager: reading its function-pointer table.
            let pre = unsafe {
                match key.len() {
                    16 => (*m).gcm128_pre,
                    24 => (*m).gcm192_pre,
                    _ => (*m).gcm256_pre,
                }
            }
            .ok_or_else(|| format!("{NAME}: the manager lacks AES-GCM key setup"))?;
            // SAFETY: gcm_key_data is plain bytes; all-zero is a valid value to be overwritten.
            let mut g: Box<sys::gcm_key_data> = Box::new(unsafe { core::mem::zeroed() });
            // SAFETY: `key` holds key_len bytes (16/24/32, matching the function chosen); `g` is
            // a writable, properly aligned gcm_key_data (Box honours the type's alignment).
            unsafe { pre(key.as_ptr().cast(), &mut *g) };
            ks.gcm = Some(g);
            return Ok(ks);
        }
        let m = self.mgr.0.as_ptr();
        // SAFETY: live, initialised manager: reading its function-pointer table.
        let (exp128, exp192, exp256, sub128, sub256) = unsafe {
            (
                (*m).keyexp_128,
                (*m).keyexp_192,
                (*m).keyexp_256,
                (*m).cmac_subkey_gen_128,
                (*m).cmac_subkey_gen_256,
            )
        };
        let missing = || format!("{NAME}: the manager lacks a key-expansion function");
        let exp = match key.len() {
            16 => exp128,
            24 => exp192,
            _ => exp256,
        }
        .ok_or_else(missing)?;
        // SAFETY: `key` holds key_len readable bytes (checked 16/24/32 by Batch); `enc`/`dec`
        // have room for 15 round keys (the most, AES-256) and are 16-byte aligned.
        unsafe {
            exp(
                key.as_ptr().cast(),
                ks.enc.as_mut_ptr().cast(),
                ks.dec.as_mut_ptr().cast(),
            )
        };
        if cmac {
            let sub = match key.len() {
                16 => sub128,
                32 => sub256,
                n => {
                    return Err(format!(
                        "{NAME}: AES-CMAC supports 128- and 256-bit keys only, got a {}-bit key",
                        n * 8
                    ))
                }
            }
            .ok_or_else(missing)?;
            // SAFETY: `enc` holds the expanded key just computed; `k1`/`k2` are 16 writable,
            // 16-byte aligned bytes each.
            unsafe {
                sub(
                    ks.enc.as_ptr().cast(),
                    ks.k1.as_mut_ptr().cast(),
                    ks.k2.as_mut_ptr().cast(),
                )
            };
        }
        Ok(ks)
    }
}

/// Whether a CTR message of `len` bytes starting at counter block `iv` keeps the low 32 bits of
/// the counter from wrapping (ipsec-mb increments only those; SP 800-38A increments all 128).
fn ctr_fits_32(iv: &[u8; BLOCK], len: usize) -> bool {
    let low = u64::from(u32::from_be_bytes([iv[12], iv[13], iv[14], iv[15]]));
    let blocks = len.div_ceil(BLOCK) as u64;
    blocks == 0 || low + blocks - 1 <= u64::from(u32::MAX)
}

impl Anchor for IpsecMb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn supports(&self, alg: &str, encrypt: bool) -> bool {
        match Alg::parse(alg) {
            Ok(Alg::Ecb | Alg::Cbc | Alg::Ctr) => true,
            Ok(Alg::Cmac | Alg::Gcm | Alg::Ccm) => encrypt,
            _ => false,
        }
    }

    fn prepare(&mut self, alg_id: &str, encrypt: bool, msgs: &[Msg<'_>]) -> Result<(), String> {
        self.prepared = None;
        let alg = supported_alg(self, alg_id, encrypt)?;
        let (batch, distinct) = Batch::new(alg, encrypt, msgs)?;
        let keys = distinct
            .iter()
            .map(|k| self.expand(k, alg))
            .collect::<Result<Vec<_>, _>>()?;
        let mut jobs = Vec::with_capacity(msgs.len());
        for (i, input) in batch.inputs.iter().enumerate() {
            let len = input.len();
            match alg {
                Alg::Ecb => {
                    // A zero-length message has nothing to encrypt (and the library rejects
                    // zero-length cipher jobs): no job.
                    let mut offset = 0;
                    while offset < len {
                        let n = (len - offset).min(ECB_CHUNK);
                        jobs.push(JobDesc {
                            msg: i,
                            offset,
                            len: n,
                        });
                        offset += n;
                    }
                }
                Alg::Cbc | Alg::Ctr => {
                    if alg == Alg::Cbc && encrypt && len > MAX_JOB_LEN {
                        return Err(format!(
                            "{NAME}: message {i}: AES-CBC encryption jobs are limited to \
                             {MAX_JOB_LEN} bytes, got {len}"
                        ));
                    }
                    if alg == Alg::Ctr && !ctr_fits_32(&batch.ivs[i], len) {
                        return Err(format!(
                            "{NAME}: message {i}: the CTR counter would wrap its low 32 bits, \
                             which intel-ipsec-mb does not carry into the upper 96 bits"
                        ));
                    }
                    if len > 0 {
                        jobs.push(JobDesc {
                            msg: i,
                            offset: 0,
                            len,
                        });
                    }
                }
                Alg::Cmac => {
                    if len > MAX_JOB_LEN {
                        return Err(format!(
                            "{NAME}: message {i}: AES-CMAC jobs are limited to {MAX_JOB_LEN} \
                             bytes, got {len}"
                        ));
                    }
                    jobs.push(JobDesc {
                        msg: i,
                        offset: 0,
                        len,
                    });
                }
                Alg::Gcm | Alg::Ccm => {
                    if alg == Alg::Ccm && len > MAX_JOB_LEN {
                        return Err(format!(
                            "{NAME}: message {i}: AES-CCM jobs are limited to {MAX_JOB_LEN} \
                             bytes, got {len}"
                        ));
                    }
                    let ad = batch.ads[i].len();
                    if alg == Alg::Ccm && ad > MAX_CCM_AD {
                        return Err(format!(
                            "{NAME}: message {i}: AES-CCM jobs take at most {MAX_CCM_AD} bytes \
                             of associated data, got {ad}"
                        ));
                    }
                    jobs.push(JobDesc {
                        msg: i,
                        offset: 0,
                        len,
                    });
                }
                Alg::CbcPkcs7 | Alg::Cfb128 | Alg::Ofb => {
                    return Err(unsupported(NAME, alg_id, encrypt));
                }
            }
        }
        self.prepared = Some((batch, keys, jobs));
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let (batch, keys, jobs) = self.prepared.as_mut().ok_or_else(|| not_prepared(NAME))?;
        let m = self.mgr.0.as_ptr();
        // SAFETY: live, initialised manager: reading its function-pointer table.
        let (get_next, submit, get_completed, flush) = unsafe {
            (
                (*m).get_next_job,
                (*m).submit_job,
                (*m).get_completed_job,
                (*m).flush_job,
            )
        };
        let (Some(get_next), Some(submit), Some(get_completed), Some(flush)) =
            (get_next, submit, get_completed, flush)
        else {
            return Err(format!("{NAME}: the manager lacks a job-API function"));
        };

        let (alg, encrypt) = (batch.alg, batch.encrypt);
        let (cipher_mode, hash_alg_128) = match alg {
            Alg::Ecb => (sys::IMB_CIPHER_ECB, sys::IMB_AUTH_NULL),
            Alg::Cbc => (sys::IMB_CIPHER_CBC, sys::IMB_AUTH_NULL),
            Alg::Ctr => (sys::IMB_CIPHER_CNTR, sys::IMB_AUTH_NULL),
            Alg::Cmac => (sys::IMB_CIPHER_NULL, sys::IMB_AUTH_AES_CMAC),
            Alg::Gcm => (sys::IMB_CIPHER_GCM, sys::IMB_AUTH_AES_GMAC),
            Alg::Ccm => (sys::IMB_CIPHER_CCM, sys::IMB_AUTH_AES_CCM),
            _ => return Err(format!("{NAME}: internal: unsupported algorithm prepared")),
        };
        let (direction, order) = match (encrypt, alg) {
            // CCM encryption authenticates the plaintext first (the library's required order).
            (true, Alg::Ccm) => (sys::IMB_DIR_ENCRYPT, sys::IMB_ORDER_HASH_CIPHER),
            (true, _) | (_, Alg::Cmac) => (sys::IMB_DIR_ENCRYPT, sys::IMB_ORDER_CIPHER_HASH),
            _ => (sys::IMB_DIR_DECRYPT, sys::IMB_ORDER_HASH_CIPHER),
        };

        let mut submitted = 0usize;
        let mut completed = 0usize;
        let mut first_error: Option<String> = None;

        for d in jobs.iter() {
            let ks = &keys[batch.key_of[d.msg]];
            let input = &batch.inputs[d.msg];
            let out = &mut batch.outputs[d.msg];
            // SAFETY: live manager; get_next_job returns the next free job slot (never NULL
            // in 1.3, checked anyway), which we fill completely for this mode before submitting.
            let job = unsafe { get_next(m) };
            if job.is_null() {
                first_error.get_or_insert_with(|| format!("{NAME}: get_next_job returned NULL"));
                break;
            }
            // SAFETY: `job` is a valid, exclusively ours job slot until submit_job.
            let j = unsafe { &mut *job };
            j.enc_keys = ks.enc.as_ptr().cast();
            j.dec_keys = ks.dec.as_ptr().cast();
            j.key_len_in_bytes = ks.key_len;
            // `offset + len <= input.len()` (JobDesc construction), and `out` has the input's
            // length for the cipher modes, so both pointers stay inside their buffers. They are
            // derived with `Vec::as_ptr`/`as_mut_ptr` (which create no reference to the heap
            // buffer, so later ones don't invalidate earlier ones), and the buffers are not
            // touched (moved, resized or freed) until every job has been flushed below.
            j.__bindgen_anon_1.src = if input.is_empty() {
                ZERO_BLOCK.as_ptr()
            } else {
                input.as_ptr().wrapping_add(d.offset)
            };
            j.__bindgen_anon_3.cipher_start_src_offset_in_bytes = 0;
            j.hash_start_src_offset_in_bytes = 0;
            j.user_data = ptr::without_provenance_mut::<c_void>(d.msg);
            j.user_data2 = ptr::null_mut();
            j.cipher_mode = cipher_mode;
            j.cipher_direction = direction;
            j.chain_order = order;
            if matches!(alg, Alg::Gcm | Alg::Ccm) {
                // AEAD: ciphertext into out[..len], the 16-byte tag into out[len..] (Batch
                // sized `out` as len + AEAD_TAG); 12-byte nonce. The associated data is read
                // from the batch's copy, which outlives the flush like the inputs; none is
                // passed as a pointer to a static zero block, never read.
                let ad = &batch.ads[d.msg];
                let (aad, aad_len) = if ad.is_empty() {
                    (ZERO_BLOCK.as_ptr().cast::<c_void>(), 0)
                } else {
                    (ad.as_ptr().cast::<c_void>(), ad.len() as u64)
                };
                j.hash_alg = hash_alg_128;
                j.__bindgen_anon_2.dst = out.as_mut_ptr();
                j.__bindgen_anon_4.msg_len_to_cipher_in_bytes = d.len as u64;
                j.__bindgen_anon_5.msg_len_to_hash_in_bytes = d.len as u64;
                j.iv = batch.ivs[d.msg].as_ptr();
                j.iv_len_in_bytes = AEAD_NONCE as u64;
                j.auth_tag_output = out.as_mut_ptr().wrapping_add(d.len);
                j.auth_tag_output_len_in_bytes = AEAD_TAG as u64;
                // The header's `#define GCM IMB_CIPHER_GCM` (and CCM) compatibility macros
                // make bindgen name the union members `IMB_CIPHER_GCM` / `IMB_CIPHER_CCM`.
                if let Some(g) = &ks.gcm {
                    let g: *const sys::gcm_key_data = &**g;
                    j.enc_keys = g.cast();
                    j.dec_keys = g.cast();
                    j.u.IMB_CIPHER_GCM.aad = aad;
                    j.u.IMB_CIPHER_GCM.aad_len_in_bytes = aad_len;
                    j.u.IMB_CIPHER_GCM.ctx = ptr::null_mut();
                } else {
                    // CCM runs the forward cipher only, in both directions.
                    j.dec_keys = ks.enc.as_ptr().cast();
                    j.u.IMB_CIPHER_CCM.aad = aad;
                    j.u.IMB_CIPHER_CCM.aad_len_in_bytes = aad_len;
                }
            } else if alg == Alg::Cmac {
                j.hash_alg = if ks.key_len == 32 {
                    sys::IMB_AUTH_AES_CMAC_256
                } else {
                    hash_alg_128
                };
                j.__bindgen_anon_2.dst = ptr::null_mut();
                j.__bindgen_anon_4.msg_len_to_cipher_in_bytes = 0;
                j.__bindgen_anon_5.msg_len_to_hash_in_bytes = d.len as u64;
                j.iv = ptr::null();
                j.iv_len_in_bytes = 0;
                j.u.CMAC._key_expanded = ks.enc.as_ptr().cast();
                j.u.CMAC._skey1 = ks.k1.as_ptr().cast();
                j.u.CMAC._skey2 = ks.k2.as_ptr().cast();
                j.auth_tag_output = out.as_mut_ptr();
                j.auth_tag_output_len_in_bytes = BLOCK as u64;
            } else {
                j.hash_alg = hash_alg_128;
                j.__bindgen_anon_2.dst = out.as_mut_ptr().wrapping_add(d.offset);
                j.__bindgen_anon_4.msg_len_to_cipher_in_bytes = d.len as u64;
                j.__bindgen_anon_5.msg_len_to_hash_in_bytes = 0;
                if alg == Alg::Ecb {
                    j.iv = ptr::null();
                    j.iv_len_in_bytes = 0;
                } else {
                    j.iv = batch.ivs[d.msg].as_ptr();
                    j.iv_len_in_bytes = BLOCK as u64;
                }
                j.auth_tag_output = ptr::null_mut();
                j.auth_tag_output_len_in_bytes = 0;
            }
            // SAFETY: live manager with the job from get_next_job filled in; all pointers in it
            // refer to buffers owned by `self.prepared` that outlive the flush below.
            let mut done = unsafe { submit(m) };
            submitted += 1;
            while !done.is_null() {
                completed += 1;
                if let Some(e) = job_error(m, done) {
                    first_error.get_or_insert(e);
                }
                // SAFETY: live manager.
                done = unsafe { get_completed(m) };
            }
        }
        loop {
            // SAFETY: live manager; flush_job completes and returns the oldest pending job, NULL
            // when none is left, so after this loop no job refers to our buffers.
            let done = unsafe { flush(m) };
            if done.is_null() {
                break;
            }
            completed += 1;
            if let Some(e) = job_error(m, done) {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if completed != submitted {
            return Err(format!(
                "{NAME}: {submitted} jobs submitted but {completed} returned"
            ));
        }
        Ok(())
    }

    fn outputs(&self) -> &[Vec<u8>] {
        match &self.prepared {
            Some((batch, _, _)) => &batch.outputs,
            None => &self.empty,
        }
    }
}
