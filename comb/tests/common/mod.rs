//! Helpers shared by the integration tests: RustCrypto reference implementations of every
//! algorithm, deterministic test bytes, and engine construction.

#![allow(dead_code)] // each test binary uses a different subset

use aes::cipher::block_padding::{NoPadding, Pkcs7};
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit, KeyIvInit,
    StreamCipher,
};
use comb::{Algorithm, Backend, CpuFeatures, Engine, Op};

/// Runs `$body` with `$C` bound to the RustCrypto AES type for a key of `$key.len()` bytes.
macro_rules! with_aes {
    ($key:expr, $C:ident => $body:expr) => {
        match $key.len() {
            16 => {
                type $C = aes::Aes128;
                $body
            }
            24 => {
                type $C = aes::Aes192;
                $body
            }
            32 => {
                type $C = aes::Aes256;
                $body
            }
            n => panic!("reference: AES key of {n} bytes"),
        }
    };
}

/// Deterministic pseudo-random bytes (xorshift64*), so that proptest only has to generate and
/// shrink seeds and lengths, not megabytes of data.
pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    if s == 0 {
        s = 1;
    }
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        out.extend_from_slice(&s.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// 16 deterministic bytes.
pub fn block(seed: u64) -> [u8; 16] {
    bytes(seed, 16).try_into().unwrap()
}

/// Decodes a hex string (test vectors).
pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("valid hex in a test vector")
}

/// The RustCrypto result of `alg`/`op` on `input` (not for CMAC, see [`reference_cmac`]).
/// `None` means the reference rejected the input: bad PKCS#7 padding (or an input that is not
/// a whole number of blocks for a mode that needs them).
pub fn reference(alg: Algorithm, op: Op, key: &[u8], iv: &[u8], input: &[u8]) -> Option<Vec<u8>> {
    if alg.needs_whole_blocks(op) && !input.len().is_multiple_of(16) {
        return None;
    }
    match alg {
        Algorithm::AesEcb => with_aes!(key, C => {
            let c = C::new_from_slice(key).unwrap();
            let mut out = input.to_vec();
            for chunk in out.chunks_exact_mut(16) {
                let b: &mut aes::Block = chunk.try_into().unwrap();
                match op {
                    Op::Encrypt => c.encrypt_block(b),
                    Op::Decrypt => c.decrypt_block(b),
                }
            }
            Some(out)
        }),
        Algorithm::AesCbc => with_aes!(key, C => match op {
            Op::Encrypt => Some(
                cbc::Encryptor::<C>::new_from_slices(key, iv)
                    .unwrap()
                    .encrypt_padded_vec::<NoPadding>(input),
            ),
            Op::Decrypt => cbc::Decryptor::<C>::new_from_slices(key, iv)
                .unwrap()
                .decrypt_padded_vec::<NoPadding>(input)
                .ok(),
        }),
        Algorithm::AesCbcPkcs7 => with_aes!(key, C => match op {
            Op::Encrypt => Some(
                cbc::Encryptor::<C>::new_from_slices(key, iv)
                    .unwrap()
                    .encrypt_padded_vec::<Pkcs7>(input),
            ),
            Op::Decrypt => {
                if input.is_empty() {
                    return None;
                }
                cbc::Decryptor::<C>::new_from_slices(key, iv)
                    .unwrap()
                    .decrypt_padded_vec::<Pkcs7>(input)
                    .ok()
            }
        }),
        Algorithm::AesCtr => with_aes!(key, C => {
            let mut out = input.to_vec();
            ctr::Ctr128BE::<C>::new_from_slices(key, iv)
                .unwrap()
                .apply_keystream(&mut out);
            Some(out)
        }),
        Algorithm::AesCfb128 => with_aes!(key, C => {
            let mut out = input.to_vec();
            match op {
                Op::Encrypt => cfb_mode::Encryptor::<C>::new_from_slices(key, iv)
                    .unwrap()
                    .encrypt(&mut out),
                Op::Decrypt => cfb_mode::Decryptor::<C>::new_from_slices(key, iv)
                    .unwrap()
                    .decrypt(&mut out),
            }
            Some(out)
        }),
        Algorithm::AesOfb => with_aes!(key, C => {
            let mut out = input.to_vec();
            ofb::Ofb::<C>::new_from_slices(key, iv)
                .unwrap()
                .apply_keystream(&mut out);
            Some(out)
        }),
        Algorithm::AesCmac => panic!("reference(): use reference_cmac for CMAC"),
        Algorithm::AesGcm => panic!("reference(): use reference_gcm for AES-GCM"),
        other => panic!("reference(): no reference for {other}"),
    }
}

/// The full 16-byte RustCrypto CMAC tag of `msg`.
pub fn reference_cmac(key: &[u8], msg: &[u8]) -> [u8; 16] {
    use cmac::Mac;
    with_aes!(key, C => {
        let mut m = <cmac::Cmac<C> as KeyInit>::new_from_slice(key).unwrap();
        m.update(msg);
        let tag = m.finalize().into_bytes();
        let mut out = [0u8; 16];
        out.copy_from_slice(&tag);
        out
    })
}

/// Nonce lengths the AES-GCM reference ([`reference_gcm`]) takes: 12 and a spread of others
/// (RustCrypto's `AesGcm` fixes the nonce length in its type).
pub const GCM_NONCE_LENS: &[usize] = &[1, 7, 8, 12, 13, 15, 16, 17, 24, 32, 60, 64, 128];

/// RustCrypto `aes-gcm`: the ciphertext and the full 16-byte tag of `pt` under `key`, `nonce`
/// (a length of [`GCM_NONCE_LENS`]) and `ad`. A shorter tag is the first bytes of this one
/// (SP 800-38D `MSB_t`).
pub fn reference_gcm(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    use aes::cipher::consts::{U1, U12, U128, U13, U15, U16, U17, U24, U32, U60, U64, U7, U8};
    use aes_gcm::aead::AeadInOut;
    macro_rules! run {
        ($C:ty, $N:ty) => {{
            let c = <aes_gcm::AesGcm<$C, $N> as KeyInit>::new_from_slice(key).unwrap();
            let n = <&aes_gcm::Nonce<$N>>::try_from(nonce).unwrap();
            let mut buf = pt.to_vec();
            let tag = c
                .encrypt_inout_detached(n, ad, buf.as_mut_slice().into())
                .expect("reference encryption");
            let mut t = [0u8; 16];
            t.copy_from_slice(&tag);
            (buf, t)
        }};
    }
    with_aes!(key, C => match nonce.len() {
        1 => run!(C, U1),
        7 => run!(C, U7),
        8 => run!(C, U8),
        12 => run!(C, U12),
        13 => run!(C, U13),
        15 => run!(C, U15),
        16 => run!(C, U16),
        17 => run!(C, U17),
        24 => run!(C, U24),
        32 => run!(C, U32),
        60 => run!(C, U60),
        64 => run!(C, U64),
        128 => run!(C, U128),
        n => panic!("reference_gcm: no nonce type for {n} bytes"),
    })
}

/// CBC without padding, for building ciphertexts with chosen (bad) padding.
pub fn cbc_raw_encrypt(key: &[u8], iv: &[u8], input: &[u8]) -> Vec<u8> {
    reference(Algorithm::AesCbc, Op::Encrypt, key, iv, input).unwrap()
}

/// Every backend this CPU runs, best first: the tests' backend parameter. Each test runs on
/// all of them, so the xmm kernels stay tested on a machine that has VAES.
pub fn backends() -> Vec<Backend> {
    let b = Backend::supported(&CpuFeatures::detect());
    assert!(!b.is_empty(), "these tests need an AES-NI CPU");
    b
}

/// The engine of `backend` with a lane override (`None`: the backend's default). Untuned: a
/// tuning file on the test machine must not change what is tested.
pub fn engine_on(backend: Backend, lanes: Option<usize>) -> Engine {
    let e = Engine::untuned(backend).expect("a supported backend");
    match lanes {
        Some(p) => e.with_lanes(p).expect("lane count in 1..=32"),
        None => e,
    }
}

/// The best backend's engine: for checks that end before any kernel runs (validation).
pub fn engine(lanes: Option<usize>) -> Engine {
    engine_on(backends()[0], lanes)
}

/// One engine per backend this CPU runs, with a lane override.
pub fn engines(lanes: Option<usize>) -> Vec<Engine> {
    backends()
        .into_iter()
        .map(|b| engine_on(b, lanes))
        .collect()
}

pub const OPS: [Op; 2] = [Op::Encrypt, Op::Decrypt];
