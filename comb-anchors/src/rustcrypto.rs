//! The RustCrypto anchor: the pure-Rust `aes` / `cbc` / `ctr` / `cfb-mode` / `ofb` / `cmac` crates,
//! one message at a time.

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::consts::U16;
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InOutBuf, InnerIvInit, KeyInit, StreamCipher,
};
use aes::{Aes128, Aes192, Aes256};
use cmac::{Cmac, Mac};

use crate::common::{not_prepared, supported_alg, Alg, Batch, BLOCK};
use crate::{Anchor, Msg};

const NAME: &str = "rustcrypto";

/// An expanded AES key (the `aes` crate zeroizes it on drop: feature `zeroize`).
enum Key {
    A128(Aes128),
    A192(Aes192),
    A256(Aes256),
}

impl Key {
    fn new(key: &[u8]) -> Result<Self, String> {
        let bad = |_| format!("invalid AES key length {}", key.len());
        Ok(match key.len() {
            16 => Self::A128(Aes128::new_from_slice(key).map_err(bad)?),
            24 => Self::A192(Aes192::new_from_slice(key).map_err(bad)?),
            _ => Self::A256(Aes256::new_from_slice(key).map_err(bad)?),
        })
    }
}

/// A keyed CMAC instance, reset after every tag.
#[derive(Clone)]
enum MacKey {
    M128(Cmac<Aes128>),
    M192(Cmac<Aes192>),
    M256(Cmac<Aes256>),
}

impl MacKey {
    fn new(key: &[u8]) -> Result<Self, String> {
        let bad = |_| format!("invalid AES key length {}", key.len());
        Ok(match key.len() {
            16 => Self::M128(<Cmac<Aes128> as KeyInit>::new_from_slice(key).map_err(bad)?),
            24 => Self::M192(<Cmac<Aes192> as KeyInit>::new_from_slice(key).map_err(bad)?),
            _ => Self::M256(<Cmac<Aes256> as KeyInit>::new_from_slice(key).map_err(bad)?),
        })
    }

    fn tag(&mut self, msg: &[u8], out: &mut [u8]) {
        fn go<M: Mac + cmac::digest::FixedOutputReset>(m: &mut M, msg: &[u8], out: &mut [u8]) {
            Mac::update(m, msg);
            out.copy_from_slice(&m.finalize_reset().into_bytes());
        }
        match self {
            Self::M128(m) => go(m, msg, out),
            Self::M192(m) => go(m, msg, out),
            Self::M256(m) => go(m, msg, out),
        }
    }
}

enum Keys {
    Cipher(Vec<Key>),
    Mac(Vec<MacKey>),
}

/// The RustCrypto anchor (see the crate documentation).
pub(crate) struct RustCrypto {
    prepared: Option<(Batch, Keys)>,
    empty: Vec<Vec<u8>>,
}

impl RustCrypto {
    pub(crate) fn new() -> Self {
        Self {
            prepared: None,
            empty: Vec::new(),
        }
    }
}

/// Processes one message with cipher `c`; returns the output length.
fn process<C>(
    c: &C,
    alg: Alg,
    encrypt: bool,
    iv: &[u8; BLOCK],
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<usize, String>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>,
{
    let mismatch = |_| "input and output lengths differ".to_owned();
    let iv = iv.into();
    match (alg, encrypt) {
        (Alg::Ecb, _) | (Alg::Cbc, _) => {
            let (blocks, tail) = InOutBuf::new(input, out).map_err(mismatch)?.into_chunks();
            if !tail.is_empty() {
                return Err("ECB/CBC input is not a whole number of blocks".to_owned());
            }
            match (alg, encrypt) {
                (Alg::Ecb, true) => c.encrypt_blocks_inout(blocks),
                (Alg::Ecb, false) => c.decrypt_blocks_inout(blocks),
                (_, true) => {
                    cbc::Encryptor::<&C>::inner_iv_init(c, iv).encrypt_blocks_inout(blocks)
                }
                (_, false) => {
                    cbc::Decryptor::<&C>::inner_iv_init(c, iv).decrypt_blocks_inout(blocks)
                }
            }
            Ok(input.len())
        }
        (Alg::CbcPkcs7, true) => cbc::Encryptor::<&C>::inner_iv_init(c, iv)
            .encrypt_padded_b2b::<Pkcs7>(input, out)
            .map(<[u8]>::len)
            .map_err(|_| "PKCS#7 output buffer too small".to_owned()),
        (Alg::CbcPkcs7, false) => {
            // A previous run may have truncated the buffer to the plaintext length.
            out.resize(input.len(), 0);
            cbc::Decryptor::<&C>::inner_iv_init(c, iv)
                .decrypt_padded_b2b::<Pkcs7>(input, out)
                .map(<[u8]>::len)
                .map_err(|_| "invalid PKCS#7 padding".to_owned())
        }
        (Alg::Ctr, _) => ctr::Ctr128BE::<&C>::from_core(ctr::CtrCore::inner_iv_init(c, iv))
            .try_apply_keystream_b2b(input, out)
            .map(|()| input.len())
            .map_err(|e| format!("CTR: {e}")),
        (Alg::Ofb, _) => ofb::Ofb::<&C>::from_core(ofb::OfbCore::inner_iv_init(c, iv))
            .try_apply_keystream_b2b(input, out)
            .map(|()| input.len())
            .map_err(|e| format!("OFB: {e}")),
        (Alg::Cfb128, true) => cfb_mode::Encryptor::<&C>::inner_iv_init(c, iv)
            .encrypt_b2b(input, out)
            .map(|()| input.len())
            .map_err(mismatch),
        (Alg::Cfb128, false) => cfb_mode::Decryptor::<&C>::inner_iv_init(c, iv)
            .decrypt_b2b(input, out)
            .map(|()| input.len())
            .map_err(mismatch),
        (Alg::Cmac, _) => Err("CMAC is not a cipher mode".to_owned()),
        (Alg::Gcm | Alg::Ccm, _) => Err("this anchor has no AEAD modes".to_owned()),
    }
}

impl Anchor for RustCrypto {
    fn name(&self) -> &'static str {
        NAME
    }

    fn supports(&self, alg: &str, encrypt: bool) -> bool {
        match Alg::parse(alg) {
            Ok(Alg::Cmac) => encrypt,
            Ok(Alg::Gcm | Alg::Ccm) => false,
            Ok(_) => true,
            Err(_) => false,
        }
    }

    fn prepare(&mut self, alg_id: &str, encrypt: bool, msgs: &[Msg<'_>]) -> Result<(), String> {
        self.prepared = None;
        let alg = supported_alg(self, alg_id, encrypt)?;
        let (batch, distinct) = Batch::new(alg, encrypt, msgs)?;
        let keys = if alg == Alg::Cmac {
            Keys::Mac(
                distinct
                    .iter()
                    .map(|k| MacKey::new(k))
                    .collect::<Result<_, _>>()?,
            )
        } else {
            Keys::Cipher(
                distinct
                    .iter()
                    .map(|k| Key::new(k))
                    .collect::<Result<_, _>>()?,
            )
        };
        self.prepared = Some((batch, keys));
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let (batch, keys) = self.prepared.as_mut().ok_or_else(|| not_prepared(NAME))?;
        let Batch {
            alg,
            encrypt,
            key_of,
            inputs,
            ivs,
            outputs,
            // No AEAD mode here, so every message's associated data is empty.
            ads: _,
        } = batch;
        match keys {
            Keys::Mac(macs) => {
                for ((k, input), out) in key_of.iter().zip(inputs.iter()).zip(outputs.iter_mut()) {
                    macs[*k].tag(input, out);
                }
            }
            Keys::Cipher(ciphers) => {
                for (i, out) in outputs.iter_mut().enumerate() {
                    let (input, iv) = (&inputs[i], &ivs[i]);
                    let n = match &ciphers[key_of[i]] {
                        Key::A128(c) => process(c, *alg, *encrypt, iv, input, out),
                        Key::A192(c) => process(c, *alg, *encrypt, iv, input, out),
                        Key::A256(c) => process(c, *alg, *encrypt, iv, input, out),
                    }
                    .map_err(|e| format!("{NAME}: message {i}: {e}"))?;
                    out.truncate(n);
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
