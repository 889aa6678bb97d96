//! The OpenSSL 3 anchor: EVP ciphers and EVP_MAC CMAC, one message at a time.

use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr::{self, NonNull};

use openssl_sys as ffi;

use crate::common::{not_prepared, supported_alg, Alg, Batch, AEAD_NONCE, AEAD_TAG, BLOCK};
use crate::{Anchor, Msg};

const NAME: &str = "openssl";

/// Largest message accepted: EVP lengths are `int`, and the output may grow by one block.
const MAX_LEN: usize = (i32::MAX as usize) - 2 * BLOCK;

extern "C" {
    // OpenSSL 3 libcrypto functions (linked by openssl-sys) that openssl-sys 0.9 does not
    // declare; signatures as in <openssl/params.h> and <openssl/evp.h>.
    fn EVP_CipherFinal_ex(ctx: *mut ffi::EVP_CIPHER_CTX, out: *mut u8, outl: *mut c_int) -> c_int;
    fn OSSL_PARAM_construct_utf8_string(
        key: *const c_char,
        buf: *mut c_char,
        bsize: usize,
    ) -> ffi::OSSL_PARAM;
}

/// Drains OpenSSL's thread-local error queue into a message.
fn ossl_error(what: &str) -> String {
    let mut reasons = Vec::new();
    loop {
        // SAFETY: ERR_get_error only pops this thread's error queue; no arguments.
        let code = unsafe { ffi::ERR_get_error() };
        if code == 0 {
            break;
        }
        // SAFETY: returns NULL or a pointer to a static NUL-terminated string.
        let reason = unsafe { ffi::ERR_reason_error_string(code) };
        if reason.is_null() {
            reasons.push(format!("error {code:#x}"));
        } else {
            // SAFETY: non-NULL, static, NUL-terminated (see above).
            reasons.push(
                unsafe { CStr::from_ptr(reason) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    if reasons.is_empty() {
        format!("{NAME}: {what} failed")
    } else {
        format!("{NAME}: {what} failed: {}", reasons.join("; "))
    }
}

/// An owned `EVP_CIPHER` (fetched from the default provider).
struct Cipher(NonNull<ffi::EVP_CIPHER>);

impl Cipher {
    fn fetch(name: &str) -> Result<Self, String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: NULL library context = default; `cname` is a valid NUL-terminated string that
        // outlives the call; NULL properties = no query. The result is NULL or an owned reference.
        let p = unsafe { ffi::EVP_CIPHER_fetch(ptr::null_mut(), cname.as_ptr(), ptr::null()) };
        NonNull::new(p)
            .map(Self)
            .ok_or_else(|| ossl_error(&format!("EVP_CIPHER_fetch({name})")))
    }
}

impl Drop for Cipher {
    fn drop(&mut self) {
        // SAFETY: we own this reference (from EVP_CIPHER_fetch) and free it exactly once.
        unsafe { ffi::EVP_CIPHER_free(self.0.as_ptr()) }
    }
}

/// An owned `EVP_CIPHER_CTX` keyed for one distinct key.
struct CipherCtx(NonNull<ffi::EVP_CIPHER_CTX>);

impl CipherCtx {
    fn new(cipher: &Cipher, key: &[u8], encrypt: bool, alg: Alg) -> Result<Self, String> {
        let padding = alg == Alg::CbcPkcs7;
        // SAFETY: no arguments; the result is NULL or a fresh context that we own.
        let ctx = NonNull::new(unsafe { ffi::EVP_CIPHER_CTX_new() })
            .ok_or_else(|| ossl_error("EVP_CIPHER_CTX_new"))?;
        let ctx = Self(ctx);
        if alg == Alg::Ccm {
            // CCM fixes its nonce and tag lengths before the key is set (EVP_EncryptInit(3)).
            // SAFETY: live context; the cipher only, no key or IV yet.
            let ok = unsafe {
                ffi::EVP_CipherInit_ex(
                    ctx.0.as_ptr(),
                    cipher.0.as_ptr(),
                    ptr::null_mut(),
                    ptr::null(),
                    ptr::null(),
                    c_int::from(encrypt),
                )
            };
            if ok != 1 {
                return Err(ossl_error("EVP_CipherInit_ex (CCM cipher)"));
            }
            for (ctrl, arg) in [
                (ffi::EVP_CTRL_GCM_SET_IVLEN, AEAD_NONCE),
                (ffi::EVP_CTRL_GCM_SET_TAG, AEAD_TAG),
            ] {
                // SAFETY: live context with a CCM cipher; SET_IVLEN and SET_TAG with a NULL
                // pointer only record the lengths (the AEAD ctrls share their numbers).
                let ok = unsafe {
                    ffi::EVP_CIPHER_CTX_ctrl(ctx.0.as_ptr(), ctrl, arg as c_int, ptr::null_mut())
                };
                if ok != 1 {
                    return Err(ossl_error("EVP_CIPHER_CTX_ctrl (CCM lengths)"));
                }
            }
        }
        // CCM's cipher is already set (passing it again would reset the lengths just set).
        let cipher_arg = if alg == Alg::Ccm {
            ptr::null()
        } else {
            cipher.0.as_ptr().cast_const()
        };
        // SAFETY: `ctx` is a live context; `cipher` is a live fetched cipher whose key length
        // equals `key.len()` (the cipher name was chosen from it); the key is read during the
        // call only; the IV is set per message in `run`.
        let ok = unsafe {
            ffi::EVP_CipherInit_ex(
                ctx.0.as_ptr(),
                cipher_arg,
                ptr::null_mut(),
                key.as_ptr(),
                ptr::null(),
                c_int::from(encrypt),
            )
        };
        if ok != 1 {
            return Err(ossl_error("EVP_CipherInit_ex (key)"));
        }
        // SAFETY: live, initialised context.
        if unsafe { ffi::EVP_CIPHER_CTX_set_padding(ctx.0.as_ptr(), c_int::from(padding)) } != 1 {
            return Err(ossl_error("EVP_CIPHER_CTX_set_padding"));
        }
        Ok(ctx)
    }
}

impl Drop for CipherCtx {
    fn drop(&mut self) {
        // SAFETY: we own the context and free it exactly once; OpenSSL cleanses the key schedule.
        unsafe { ffi::EVP_CIPHER_CTX_free(self.0.as_ptr()) }
    }
}

/// An owned `EVP_MAC` ("CMAC").
struct MacAlg(NonNull<ffi::EVP_MAC>);

impl Drop for MacAlg {
    fn drop(&mut self) {
        // SAFETY: we own this reference (from EVP_MAC_fetch) and free it exactly once.
        unsafe { ffi::EVP_MAC_free(self.0.as_ptr()) }
    }
}

/// An owned `EVP_MAC_CTX` keyed for one distinct key.
struct MacCtx(NonNull<ffi::EVP_MAC_CTX>);

impl MacCtx {
    fn new(mac: &MacAlg, key: &[u8]) -> Result<Self, String> {
        // SAFETY: `mac` is a live fetched EVP_MAC; the result is NULL or a context we own.
        let ctx = NonNull::new(unsafe { ffi::EVP_MAC_CTX_new(mac.0.as_ptr()) })
            .ok_or_else(|| ossl_error("EVP_MAC_CTX_new"))?;
        let ctx = Self(ctx);
        let cipher = match key.len() {
            16 => c"AES-128-CBC",
            24 => c"AES-192-CBC",
            _ => c"AES-256-CBC",
        };
        // SAFETY: both strings are static and NUL-terminated; OpenSSL only reads the value
        // (`bsize` = its length without the NUL, as OSSL_PARAM_construct_utf8_string documents;
        // the `*mut` is the C signature, nothing is written).
        let params = unsafe {
            [
                OSSL_PARAM_construct_utf8_string(
                    c"cipher".as_ptr(),
                    cipher.as_ptr().cast_mut(),
                    cipher.to_bytes().len(),
                ),
                ffi::OSSL_PARAM_construct_end(),
            ]
        };
        // SAFETY: live context; key pointer/length describe `key`; `params` is an
        // end-terminated array living until after the call.
        let ok =
            unsafe { ffi::EVP_MAC_init(ctx.0.as_ptr(), key.as_ptr(), key.len(), params.as_ptr()) };
        if ok != 1 {
            return Err(ossl_error("EVP_MAC_init (key)"));
        }
        Ok(ctx)
    }
}

impl Drop for MacCtx {
    fn drop(&mut self) {
        // SAFETY: we own the context and free it exactly once (OpenSSL cleanses the CMAC state).
        unsafe { ffi::EVP_MAC_CTX_free(self.0.as_ptr()) }
    }
}

/// The keyed contexts of a prepared batch (each holds its own reference to the fetched
/// algorithm, so the `Cipher`/`MacAlg` handles are released at the end of `prepare`).
enum Contexts {
    Cipher(Vec<CipherCtx>),
    Mac(Vec<MacCtx>),
}

/// The OpenSSL anchor (see the crate documentation).
pub(crate) struct OpenSsl {
    prepared: Option<(Batch, Contexts)>,
    empty: Vec<Vec<u8>>,
}

impl OpenSsl {
    /// Checks at run time that libcrypto is OpenSSL 3 and provides AES.
    pub(crate) fn new() -> Result<Self, String> {
        ffi::init();
        // SAFETY: no arguments; returns the run-time library version.
        let version = unsafe { ffi::OpenSSL_version_num() };
        if version < 0x3000_0000 {
            return Err(format!(
                "anchor \"openssl\" is unavailable: run-time libcrypto is {version:#x}, OpenSSL 3 \
                 is required"
            ));
        }
        Cipher::fetch("AES-128-CBC")
            .map_err(|e| format!("anchor \"openssl\" is unavailable: {e}"))?;
        Ok(Self {
            prepared: None,
            empty: Vec::new(),
        })
    }
}

fn cipher_name(alg: Alg, key_len: usize) -> String {
    let mode = match alg {
        Alg::Ecb => "ECB",
        Alg::Cbc | Alg::CbcPkcs7 | Alg::Cmac => "CBC",
        Alg::Ctr => "CTR",
        Alg::Cfb128 => "CFB",
        Alg::Ofb => "OFB",
        Alg::Gcm => "GCM",
        Alg::Ccm => "CCM",
    };
    format!("AES-{}-{mode}", key_len * 8)
}

/// One GCM/CCM encryption of `input` with associated data `ad`: `out` = ciphertext ‖ 16-byte
/// tag (`out` is `input.len() + AEAD_TAG` bytes). The context is keyed; the nonce is set per
/// message, and for CCM the message length is announced first, as EVP requires; the
/// associated data goes in before the message (an update with no output buffer).
fn aead_encrypt(
    ctx: *mut ffi::EVP_CIPHER_CTX,
    alg: Alg,
    nonce: &[u8],
    ad: &[u8],
    input: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let len = input.len();
    let in_len = c_int::try_from(len).map_err(|e| e.to_string())?;
    if out.len() != len + AEAD_TAG {
        return Err(format!("{NAME}: internal: AEAD output of the wrong size"));
    }
    // SAFETY: live context keyed in `prepare`; NULL cipher/engine/key keep them; `nonce` is
    // AEAD_NONCE readable bytes, the IV length the context was set up with (GCM's default).
    let ok = unsafe {
        ffi::EVP_CipherInit_ex(
            ctx,
            ptr::null(),
            ptr::null_mut(),
            ptr::null(),
            nonce.as_ptr(),
            1,
        )
    };
    if ok != 1 {
        return Err(ossl_error("EVP_CipherInit_ex (nonce)"));
    }
    let mut n: c_int = 0;
    if alg == Alg::Ccm {
        // SAFETY: CCM's length announcement: NULL in/out pointers with the total length.
        let ok =
            unsafe { ffi::EVP_CipherUpdate(ctx, ptr::null_mut(), &mut n, ptr::null(), in_len) };
        if ok != 1 {
            return Err(ossl_error("EVP_CipherUpdate (CCM length)"));
        }
    }
    if !ad.is_empty() {
        let ad_len = c_int::try_from(ad.len()).map_err(|e| e.to_string())?;
        // SAFETY: an AEAD context's associated data: NULL output, `ad` readable for ad_len.
        let ok =
            unsafe { ffi::EVP_CipherUpdate(ctx, ptr::null_mut(), &mut n, ad.as_ptr(), ad_len) };
        if ok != 1 {
            return Err(ossl_error("EVP_CipherUpdate (associated data)"));
        }
    }
    // SAFETY: `out` has room for `len` bytes of ciphertext (plus the tag after it); `input` is
    // readable for `len` bytes. A stream mode writes exactly `len` bytes here. (CCM with an
    // empty message: the data call computes the MAC of B0 alone, so it is made even then.)
    let ok =
        unsafe { ffi::EVP_CipherUpdate(ctx, out.as_mut_ptr(), &mut n, input.as_ptr(), in_len) };
    if ok != 1 || usize::try_from(n).ok() != Some(len) {
        return Err(ossl_error("EVP_CipherUpdate"));
    }
    let mut fin: c_int = 0;
    // SAFETY: GCM/CCM Final writes no bytes; the pointer is inside `out` (the tag space).
    if unsafe { EVP_CipherFinal_ex(ctx, out.as_mut_ptr().add(len), &mut fin) } != 1 || fin != 0 {
        return Err(ossl_error("EVP_CipherFinal_ex"));
    }
    // SAFETY: GET_TAG copies AEAD_TAG bytes into the last AEAD_TAG bytes of `out`.
    let ok = unsafe {
        ffi::EVP_CIPHER_CTX_ctrl(
            ctx,
            ffi::EVP_CTRL_GCM_GET_TAG,
            AEAD_TAG as c_int,
            out.as_mut_ptr().add(len).cast(),
        )
    };
    if ok != 1 {
        return Err(ossl_error("EVP_CIPHER_CTX_ctrl (get tag)"));
    }
    Ok(())
}

impl Anchor for OpenSsl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn supports(&self, alg: &str, encrypt: bool) -> bool {
        match Alg::parse(alg) {
            Ok(Alg::Cmac | Alg::Gcm | Alg::Ccm) => encrypt,
            Ok(_) => true,
            Err(_) => false,
        }
    }

    fn prepare(&mut self, alg_id: &str, encrypt: bool, msgs: &[Msg<'_>]) -> Result<(), String> {
        self.prepared = None;
        let alg = supported_alg(self, alg_id, encrypt)?;
        if let Some(i) = msgs.iter().position(|m| m.input.len() > MAX_LEN) {
            return Err(format!(
                "{NAME}: message {i} is longer than {MAX_LEN} bytes"
            ));
        }
        let (batch, distinct) = Batch::new(alg, encrypt, msgs)?;
        let contexts = if alg == Alg::Cmac {
            let name = c"CMAC";
            // SAFETY: default library context, static NUL-terminated name, no properties; the
            // result is NULL or an owned reference.
            let mac = unsafe { ffi::EVP_MAC_fetch(ptr::null_mut(), name.as_ptr(), ptr::null()) };
            let mac = MacAlg(NonNull::new(mac).ok_or_else(|| ossl_error("EVP_MAC_fetch(CMAC)"))?);
            let ctxs = distinct
                .iter()
                .map(|k| MacCtx::new(&mac, k))
                .collect::<Result<_, _>>()?;
            Contexts::Mac(ctxs)
        } else {
            let mut ciphers: Vec<(usize, Cipher)> = Vec::new();
            let mut ctxs = Vec::with_capacity(distinct.len());
            for k in &distinct {
                if !ciphers.iter().any(|(len, _)| *len == k.len()) {
                    ciphers.push((k.len(), Cipher::fetch(&cipher_name(alg, k.len()))?));
                }
                let cipher = ciphers
                    .iter()
                    .find(|(len, _)| *len == k.len())
                    .map(|(_, c)| c)
                    .ok_or("internal: cipher not fetched")?;
                ctxs.push(CipherCtx::new(cipher, k, encrypt, alg)?);
            }
            Contexts::Cipher(ctxs)
        };
        self.prepared = Some((batch, contexts));
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let (batch, contexts) = self.prepared.as_mut().ok_or_else(|| not_prepared(NAME))?;
        match contexts {
            Contexts::Mac(ctxs) => {
                for (i, out) in batch.outputs.iter_mut().enumerate() {
                    let ctx = ctxs[batch.key_of[i]].0.as_ptr();
                    let input = &batch.inputs[i];
                    let mut len = 0usize;
                    // SAFETY: `ctx` is a live, keyed EVP_MAC_CTX; NULL key = restart with the
                    // same key; no params.
                    if unsafe { ffi::EVP_MAC_init(ctx, ptr::null(), 0, ptr::null()) } != 1 {
                        return Err(ossl_error(&format!("message {i}: EVP_MAC_init")));
                    }
                    // SAFETY: pointer/length describe `input` (a dangling-but-aligned pointer
                    // with length 0 is never read).
                    if unsafe { ffi::EVP_MAC_update(ctx, input.as_ptr(), input.len()) } != 1 {
                        return Err(ossl_error(&format!("message {i}: EVP_MAC_update")));
                    }
                    // SAFETY: `out` is 16 writable bytes and we pass outsize = out.len().
                    let ok =
                        unsafe { ffi::EVP_MAC_final(ctx, out.as_mut_ptr(), &mut len, out.len()) };
                    if ok != 1 || len != BLOCK {
                        return Err(ossl_error(&format!("message {i}: EVP_MAC_final")));
                    }
                }
            }
            Contexts::Cipher(ctxs) if matches!(batch.alg, Alg::Gcm | Alg::Ccm) => {
                for (i, out) in batch.outputs.iter_mut().enumerate() {
                    aead_encrypt(
                        ctxs[batch.key_of[i]].0.as_ptr(),
                        batch.alg,
                        &batch.ivs[i][..AEAD_NONCE],
                        &batch.ads[i],
                        &batch.inputs[i],
                        out,
                    )
                    .map_err(|e| format!("{e} (message {i})"))?;
                }
            }
            Contexts::Cipher(ctxs) => {
                let enc = c_int::from(batch.encrypt);
                let uses_iv = batch.alg.uses_iv();
                let unpad = batch.alg == Alg::CbcPkcs7 && !batch.encrypt;
                for (i, out) in batch.outputs.iter_mut().enumerate() {
                    let ctx = ctxs[batch.key_of[i]].0.as_ptr();
                    let input = &batch.inputs[i];
                    if unpad {
                        // A previous run truncated the buffer to the plaintext length.
                        out.resize(input.len(), 0);
                    }
                    let iv = if uses_iv {
                        batch.ivs[i].as_ptr()
                    } else {
                        ptr::null()
                    };
                    // SAFETY: live context keyed in `prepare`; NULL cipher/engine/key keep them;
                    // `iv` is NULL (ECB) or 16 readable bytes.
                    let ok = unsafe {
                        ffi::EVP_CipherInit_ex(
                            ctx,
                            ptr::null(),
                            ptr::null_mut(),
                            ptr::null(),
                            iv,
                            enc,
                        )
                    };
                    if ok != 1 {
                        return Err(ossl_error(&format!("message {i}: EVP_CipherInit_ex (IV)")));
                    }
                    let (mut n1, mut n2): (c_int, c_int) = (0, 0);
                    // `prepare` bounded the length by MAX_LEN < i32::MAX.
                    let in_len = c_int::try_from(input.len()).map_err(|e| e.to_string())?;
                    // SAFETY: `out` has room for the whole output of this single Update + Final:
                    // Batch sized it as the input length (no padding / padded decryption, where
                    // Update holds the last block back and Final writes at most 15 bytes) or
                    // the padded length (PKCS#7 encryption: Update writes the whole blocks of
                    // the input, Final the last padded block). `input` is readable for in_len.
                    let ok = unsafe {
                        ffi::EVP_CipherUpdate(
                            ctx,
                            out.as_mut_ptr(),
                            &mut n1,
                            input.as_ptr(),
                            in_len,
                        )
                    };
                    if ok != 1 {
                        return Err(ossl_error(&format!("message {i}: EVP_CipherUpdate")));
                    }
                    let n1 = usize::try_from(n1).map_err(|e| e.to_string())?;
                    if n1 > out.len() {
                        return Err(format!("{NAME}: message {i}: EVP_CipherUpdate overran"));
                    }
                    // SAFETY: as above; `n1 <= out.len()` so the pointer stays in (or one past)
                    // the buffer, and the remaining space suffices for Final.
                    let ok = unsafe { EVP_CipherFinal_ex(ctx, out.as_mut_ptr().add(n1), &mut n2) };
                    if ok != 1 {
                        return Err(ossl_error(&format!("message {i}: EVP_CipherFinal_ex")));
                    }
                    let total = n1 + usize::try_from(n2).map_err(|e| e.to_string())?;
                    if unpad && total <= out.len() {
                        out.truncate(total);
                    } else if total != out.len() {
                        return Err(format!(
                            "{NAME}: message {i}: produced {total} bytes, expected {}",
                            out.len()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn outputs(&self) -> &[Vec<u8>] {
        match &self.prepared {
            Some((batch, _)) => &batch.outputs,
            None => &self.empty,
        }
    }
}
