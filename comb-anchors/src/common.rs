//! What every anchor shares: algorithm IDs, batch validation, key de-duplication, owned copies of
//! the inputs and the output buffers.

use std::collections::HashMap;

use crate::Msg;

/// AES block size in bytes.
pub(crate) const BLOCK: usize = 16;

/// The algorithms of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alg {
    Ecb,
    Cbc,
    CbcPkcs7,
    Ctr,
    Cfb128,
    Ofb,
    Cmac,
    /// AES-GCM with a 12-byte nonce (the first 12 bytes of the 16-byte IV), the message's
    /// associated data, a 16-byte tag; output = ciphertext ‖ tag. Encryption only.
    Gcm,
    /// AES-CCM (SP 800-38C) with a 12-byte nonce (the first 12 bytes of the IV), the
    /// message's associated data, a 16-byte tag; output = ciphertext ‖ tag. Encryption only.
    Ccm,
}

/// Nonce length of the AEAD anchors' GCM and CCM (RFC 5116's recommended 12 bytes).
pub(crate) const AEAD_NONCE: usize = 12;
/// Tag length of the AEAD anchors.
pub(crate) const AEAD_TAG: usize = 16;

impl Alg {
    /// Parses an algorithm ID ("aes-ecb", …).
    pub(crate) fn parse(id: &str) -> Result<Self, String> {
        Ok(match id {
            "aes-ecb" => Self::Ecb,
            "aes-cbc" => Self::Cbc,
            "aes-cbc-pkcs7" => Self::CbcPkcs7,
            "aes-ctr" => Self::Ctr,
            "aes-cfb128" => Self::Cfb128,
            "aes-ofb" => Self::Ofb,
            "aes-cmac" => Self::Cmac,
            "aes-gcm" => Self::Gcm,
            "aes-ccm" => Self::Ccm,
            other => {
                return Err(format!(
                    "unknown algorithm {other:?}; known: aes-ecb, aes-cbc, aes-cbc-pkcs7, \
                     aes-ctr, aes-cfb128, aes-ofb, aes-cmac, aes-gcm, aes-ccm"
                ))
            }
        })
    }

    /// Whether the mode authenticates associated data (the AEAD modes).
    pub(crate) fn takes_ad(self) -> bool {
        matches!(self, Self::Gcm | Self::Ccm)
    }

    /// Whether the mode takes a 16-byte IV.
    pub(crate) fn uses_iv(self) -> bool {
        !matches!(self, Self::Ecb | Self::Cmac)
    }
}

/// A prepared batch: owned copies of the inputs and IVs, which distinct key each message uses,
/// and the output buffers (allocated at their final size; for PKCS#7 decryption at the input
/// size, truncated to the plaintext by `run`).
pub(crate) struct Batch {
    pub(crate) alg: Alg,
    pub(crate) encrypt: bool,
    /// Per message: index into the list of distinct keys returned by [`Batch::new`].
    pub(crate) key_of: Vec<usize>,
    pub(crate) inputs: Vec<Vec<u8>>,
    /// Per message; all zero for ECB and CMAC.
    pub(crate) ivs: Vec<[u8; BLOCK]>,
    /// Per message: the associated data (empty for the modes without).
    pub(crate) ads: Vec<Vec<u8>>,
    pub(crate) outputs: Vec<Vec<u8>>,
}

impl Batch {
    /// Validates `msgs` for `alg`/`encrypt` and copies them. Returns the batch and the distinct
    /// keys (first-occurrence order, borrowed from `msgs`).
    pub(crate) fn new<'m>(
        alg: Alg,
        encrypt: bool,
        msgs: &[Msg<'m>],
    ) -> Result<(Self, Vec<&'m [u8]>), String> {
        let mut distinct: Vec<&'m [u8]> = Vec::new();
        let mut index: HashMap<&'m [u8], usize> = HashMap::new();
        let mut key_of = Vec::with_capacity(msgs.len());
        let mut inputs = Vec::with_capacity(msgs.len());
        let mut ivs = Vec::with_capacity(msgs.len());
        let mut ads = Vec::with_capacity(msgs.len());
        let mut outputs = Vec::with_capacity(msgs.len());
        for (i, m) in msgs.iter().enumerate() {
            if !matches!(m.key.len(), 16 | 24 | 32) {
                return Err(format!(
                    "message {i}: key is {} bytes, AES keys are 16, 24 or 32 bytes",
                    m.key.len()
                ));
            }
            let mut iv = [0u8; BLOCK];
            if alg.uses_iv() {
                iv = m
                    .iv
                    .try_into()
                    .map_err(|_| format!("message {i}: IV is {} bytes, expected 16", m.iv.len()))?;
            }
            if !m.ad.is_empty() && !alg.takes_ad() {
                return Err(format!(
                    "message {i}: {} bytes of associated data, but {alg:?} is not an AEAD mode",
                    m.ad.len()
                ));
            }
            let n = m.input.len();
            let out_len = match alg {
                Alg::Ecb | Alg::Cbc => {
                    if n % BLOCK != 0 {
                        return Err(format!(
                            "message {i}: {n} bytes is not a whole number of 16-byte blocks \
                             ({alg:?} has no padding)"
                        ));
                    }
                    n
                }
                Alg::CbcPkcs7 if encrypt => (n / BLOCK + 1) * BLOCK,
                Alg::CbcPkcs7 => {
                    if n == 0 || n % BLOCK != 0 {
                        return Err(format!(
                            "message {i}: a PKCS#7-padded CBC ciphertext is a non-zero whole \
                             number of 16-byte blocks, got {n} bytes"
                        ));
                    }
                    n
                }
                Alg::Ctr | Alg::Cfb128 | Alg::Ofb => n,
                Alg::Cmac => BLOCK,
                Alg::Gcm | Alg::Ccm => n + AEAD_TAG,
            };
            let k = *index.entry(m.key).or_insert_with(|| {
                distinct.push(m.key);
                distinct.len() - 1
            });
            key_of.push(k);
            inputs.push(m.input.to_vec());
            ivs.push(iv);
            ads.push(m.ad.to_vec());
            outputs.push(vec![0u8; out_len]);
        }
        let batch = Self {
            alg,
            encrypt,
            key_of,
            inputs,
            ivs,
            ads,
            outputs,
        };
        Ok((batch, distinct))
    }
}

/// The error `prepare` returns for an algorithm/direction the anchor does not implement.
/// The algorithm of a `prepare` call, or the error for an algorithm/direction `anchor` does
/// not support (the common start of every anchor's `prepare`).
pub(crate) fn supported_alg(
    anchor: &dyn crate::Anchor,
    alg: &str,
    encrypt: bool,
) -> Result<Alg, String> {
    if !anchor.supports(alg, encrypt) {
        return Err(unsupported(anchor.name(), alg, encrypt));
    }
    Alg::parse(alg)
}

pub(crate) fn unsupported(anchor: &str, alg: &str, encrypt: bool) -> String {
    let dir = if encrypt { "encrypt" } else { "decrypt" };
    format!("anchor {anchor:?} does not support {alg} ({dir})")
}

/// The error `run` returns before a successful `prepare`.
pub(crate) fn not_prepared(anchor: &str) -> String {
    format!("anchor {anchor:?}: run() called without a successful prepare()")
}
