//! # comb-anchors — the reference implementations Comb is benchmarked against
//!
//! Comb encrypts batches of independent messages with AES modes while keeping the AES pipeline
//! full. Its benchmark compares it with three "anchors", each processing the same batch through
//! the [`Anchor`] trait: [`Anchor::prepare`] does the untimed set-up (key expansion, context
//! creation, output allocation, copying the inputs), [`Anchor::run`] is the timed part and redoes
//! the whole batch on every call, [`Anchor::outputs`] returns the results so that every anchor can
//! be checked against every other and against known-answer vectors.
//!
//! | anchor | what it measures | algorithms | limits |
//! | --- | --- | --- | --- |
//! | `"openssl"` | OpenSSL 3 EVP, **one message at a time**: one `EVP_CIPHER_CTX` per distinct key (built in `prepare`); per message `run` re-initialises only the IV (`EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc)`), then `EVP_CipherUpdate` + `EVP_CipherFinal_ex`. CMAC through `EVP_MAC` ("CMAC"), one `EVP_MAC_CTX` per distinct key, re-initialised per message with `EVP_MAC_init(ctx, NULL, 0, NULL)`. This is what an application that loops over its messages with OpenSSL gets. | all seven, both directions (CMAC: generate only); `aes-gcm` and `aes-ccm` encryption (`EVP_CTRL_AEAD_*`: CCM announces the length first, tag read with `GET_TAG`) | message length below 2³¹ bytes |
//! | `"ipsec-mb"` | intel-ipsec-mb 1.3 **job API** (multi-buffer): a manager initialised with `init_mb_mgr_auto` (the best code path for this CPU, see [`ipsec_mb_arch`]); `run` submits one job per message, collects completed jobs, flushes at the end of the batch and checks every job's status. The manager interleaves independent messages across its SIMD lanes, so this is the "other multi-buffer library" baseline; like Comb it gets the whole batch at once. | `aes-ecb`, `aes-cbc` (both directions), `aes-ctr` (both), `aes-cmac` (generate), `aes-gcm` and `aes-ccm` (encryption: `IMB_CIPHER_GCM` with keys from `IMB_AESxxx_GCM_PRE`, `IMB_CIPHER_CCM` hash-then-cipher) | ECB/CBC-encrypt/CMAC messages ≤ 65 534 bytes per job (ECB messages are split into ≤ 65 520-byte jobs, CBC-encrypt and CMAC are refused above that); CMAC with 128- and 256-bit keys only; CTR with a 16-byte IV increments only the low 32 bits of the counter block (checked on 1.3: the block after `…ffffffff` is `…00000000` without carry), so `prepare` refuses a message whose counter would wrap them; zero-length ECB/CBC/CTR messages submit no job (the library rejects empty cipher jobs; the output is empty anyway); no OFB, CFB or PKCS#7 |
//! | `"rustcrypto"` | the pure-Rust RustCrypto crates (`aes` 0.9 with its run-time AES-NI detection, `cbc` 0.2, `ctr` 0.10, `cfb-mode` 0.9, `ofb` 0.7, `cmac` 0.8), **one message at a time**: each distinct key is expanded once in `prepare`; per message `run` builds the mode over a reference to the expanded key with the message's IV. CMAC: one `Cmac` per distinct key, `finalize_reset` per message (the crate derives the subkeys at every finalisation). | all seven, both directions (CMAC: generate only) | none |
//!
//! Algorithm IDs: `"aes-ecb"`, `"aes-cbc"`, `"aes-cbc-pkcs7"`, `"aes-ctr"`, `"aes-cfb128"`,
//! `"aes-ofb"`, `"aes-cmac"`, and the AEAD modes `"aes-gcm"` and `"aes-ccm"` (encryption only:
//! the first 12 bytes of the IV are the nonce, [`Msg::ad`] the associated data, the output is
//! ciphertext ‖ 16-byte tag; ipsec-mb CCM jobs are at most 65 534 bytes with at most 46
//! bytes of associated data). Semantics (byte for byte the same in every anchor): NIST
//! SP 800-38A ECB/CBC/CFB128/OFB/CTR, where the CTR IV is the whole 16-byte initial counter block,
//! incremented as a 128-bit big-endian integer; CMAC per RFC 4493 with a 16-byte tag;
//! `"aes-cbc-pkcs7"` is CBC with PKCS#7 padding. Keys are 16, 24 or 32 bytes; messages of one
//! batch may use different keys (each distinct key is expanded once). ECB/CBC messages are whole
//! blocks; CTR/CFB/OFB/CMAC/PKCS#7-encrypt messages have any length (0 included); PKCS#7-decrypt
//! inputs are whole, non-empty blocks with valid padding. The IV is ignored for ECB and CMAC and
//! must be 16 bytes otherwise.
//!
//! Cargo features: `openssl` (links the system libcrypto through `openssl-sys`; needs
//! `libssl-dev` and `pkg-config`) and `ipsec-mb` (bindgen over `/usr/include/intel-ipsec-mb.h`,
//! links `libIPSec_MB`; needs `libipsec-mb-dev` and `libclang-dev`), both on by default;
//! `scripts/install-anchor-deps.sh` installs the Debian packages. Without a feature, [`open`]
//! reports that anchor as unavailable.
//!
//! ```
//! use comb_anchors::{open, Msg};
//! let key = [0u8; 16];
//! let iv = [0u8; 16];
//! let input = [0u8; 32];
//! let mut anchor = open("rustcrypto")?;
//! anchor.prepare("aes-cbc", true, &[Msg { key: &key, iv: &iv, input: &input, ad: &[] }])?;
//! anchor.run()?;
//! assert_eq!(anchor.outputs()[0].len(), 32);
//! # Ok::<(), String>(())
//! ```

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod common;
#[cfg(feature = "ipsec-mb")]
mod ipsec_mb;
#[cfg(feature = "openssl")]
mod openssl;
mod rustcrypto;

/// One message of a batch, as the benchmark gives it.
#[derive(Clone, Copy)]
pub struct Msg<'a> {
    /// AES key: 16, 24 or 32 bytes.
    pub key: &'a [u8],
    /// 16-byte IV (the initial counter block for CTR); ignored (may be empty) for ECB and CMAC.
    pub iv: &'a [u8],
    /// Plaintext (encrypt), ciphertext (decrypt) or the message to authenticate (CMAC).
    pub input: &'a [u8],
    /// Associated data, authenticated but not encrypted: AEAD modes only (`"aes-gcm"`,
    /// `"aes-ccm"`); must be empty for the others.
    pub ad: &'a [u8],
}

/// A reference AES implementation that processes a prepared batch of messages.
pub trait Anchor {
    /// "openssl" | "ipsec-mb" | "rustcrypto"
    fn name(&self) -> &'static str;
    /// Whether this anchor implements `alg` (IDs: "aes-ecb", "aes-cbc", "aes-cbc-pkcs7", "aes-ctr", "aes-cfb128", "aes-ofb", "aes-cmac") in this direction.
    fn supports(&self, alg: &str, encrypt: bool) -> bool;
    /// Untimed set-up for one batch: expand keys, allocate outputs, build contexts. May be called again with another batch.
    ///
    /// The inputs and IVs are copied, so `msgs` need not outlive the call. On error the anchor
    /// holds no batch and [`Anchor::run`] fails until the next successful `prepare`.
    fn prepare(&mut self, alg: &str, encrypt: bool, msgs: &[Msg<'_>]) -> Result<(), String>;
    /// Timed: process the prepared batch once, writing `outputs()`. Callable many times in a row (the benchmark calls it 200 times per sample); each call must redo the full work (IV re-initialised per message), not cache results.
    fn run(&mut self) -> Result<(), String>;
    /// Per message: ciphertext (encrypt) / plaintext (decrypt) for cipher modes; the 16-byte tag for "aes-cmac" (encrypt = generate; decrypt = verify is not needed: `supports("aes-cmac", false)` may return false).
    fn outputs(&self) -> &[Vec<u8>];
}

/// Constructs an anchor by name; a clear error for an unknown name or when the library is unavailable at run time.
pub fn open(name: &str) -> Result<Box<dyn Anchor>, String> {
    match name {
        "openssl" => open_openssl(),
        "ipsec-mb" => open_ipsec_mb(),
        "rustcrypto" => Ok(Box::new(rustcrypto::RustCrypto::new())),
        other => Err(format!(
            "unknown anchor {other:?}; known anchors: {}",
            NAMES.join(", ")
        )),
    }
}

/// The names [`open`] accepts.
pub const NAMES: &[&str] = &["openssl", "ipsec-mb", "rustcrypto"];

/// The intel-ipsec-mb code path `init_mb_mgr_auto` selects on this CPU, e.g. `"avx2_t1"` or
/// `"avx512_t2 (VAES)"` (the `_tN` tier follows the library's `IMB_CPUFLAGS_*_Tn` sets; tier 2 of
/// AVX2/AVX-512 is the VAES/VPCLMULQDQ code), or `"unavailable: …"` when the library cannot be
/// used (feature off, allocation failure).
pub fn ipsec_mb_arch() -> &'static str {
    #[cfg(feature = "ipsec-mb")]
    {
        ipsec_mb::arch()
    }
    #[cfg(not(feature = "ipsec-mb"))]
    {
        "unavailable: comb-anchors was built without the `ipsec-mb` feature"
    }
}

#[cfg(feature = "openssl")]
fn open_openssl() -> Result<Box<dyn Anchor>, String> {
    Ok(Box::new(openssl::OpenSsl::new()?))
}

#[cfg(not(feature = "openssl"))]
fn open_openssl() -> Result<Box<dyn Anchor>, String> {
    Err(
        "anchor \"openssl\" is unavailable: comb-anchors was built without the `openssl` \
         feature"
            .to_owned(),
    )
}

#[cfg(feature = "ipsec-mb")]
fn open_ipsec_mb() -> Result<Box<dyn Anchor>, String> {
    Ok(Box::new(ipsec_mb::IpsecMb::new()?))
}

#[cfg(not(feature = "ipsec-mb"))]
fn open_ipsec_mb() -> Result<Box<dyn Anchor>, String> {
    Err(
        "anchor \"ipsec-mb\" is unavailable: comb-anchors was built without the `ipsec-mb` \
         feature"
            .to_owned(),
    )
}
