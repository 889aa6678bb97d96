//! Helpers shared by the integration tests: RustCrypto reference implementations of every
//! algorithm, deterministic test bytes, engine construction, and jobs described by value
//! (run on fresh buffers through any entry point).

#![allow(dead_code)] // each test binary uses a different subset

pub mod aead;

use aes::cipher::block_padding::{NoPadding, Pkcs7};
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit, KeyIvInit,
    StreamCipher,
};
use comb::{AesKey, Algorithm, Backend, CpuFeatures, Data, Engine, Job, JobResult, Op, Tag};

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

/// Defines [`GCM_NONCE_LENS`] and [`reference_gcm`] from one list of `length: typenum`
/// (RustCrypto's `AesGcm` fixes the nonce length in its type).
macro_rules! gcm_reference {
    ($($len:literal: $N:ident),* $(,)?) => {
        /// Nonce lengths the AES-GCM reference ([`reference_gcm`]) takes: 12 and a spread of
        /// others.
        pub const GCM_NONCE_LENS: &[usize] = &[$($len),*];

        /// RustCrypto `aes-gcm`: the ciphertext and the full 16-byte tag of `pt` under `key`,
        /// `nonce` (a length of [`GCM_NONCE_LENS`]) and `ad`. A shorter tag is the first bytes
        /// of this one (SP 800-38D `MSB_t`).
        pub fn reference_gcm(
            key: &[u8],
            nonce: &[u8],
            ad: &[u8],
            pt: &[u8],
        ) -> (Vec<u8>, [u8; 16]) {
            use aes::cipher::consts::{$($N),*};
            use aes_gcm::aead::AeadInOut;
            with_aes!(key, C => match nonce.len() {
                $($len => {
                    let c = <aes_gcm::AesGcm<C, $N> as KeyInit>::new_from_slice(key).unwrap();
                    let n = <&aes_gcm::Nonce<$N>>::try_from(nonce).unwrap();
                    let mut buf = pt.to_vec();
                    let tag = c
                        .encrypt_inout_detached(n, ad, buf.as_mut_slice().into())
                        .expect("reference encryption");
                    let mut t = [0u8; 16];
                    t.copy_from_slice(&tag);
                    (buf, t)
                })*
                n => panic!("reference_gcm: no nonce type for {n} bytes"),
            })
        }
    };
}

gcm_reference!(
    1: U1, 7: U7, 8: U8, 12: U12, 13: U13, 15: U15, 16: U16, 17: U17, 24: U24, 32: U32, 60: U60,
    64: U64, 128: U128,
);

/// The ciphertext and tag (`tag_len` bytes; none for Julius) of an AEAD encryption: RustCrypto
/// `aes-gcm` for AES-GCM, and for the other AEAD modes the library's own single-message path
/// on the xmm backend, which each mode's known-answer tests pin to the designers' vectors
/// (the tests that use this check batches and bad input, not the mode itself).
pub fn reference_aead(
    alg: Algorithm,
    key: &[u8],
    nonce: &[u8],
    ad: &[u8],
    pt: &[u8],
    tag_len: usize,
) -> (Vec<u8>, Vec<u8>) {
    if alg == Algorithm::AesGcm {
        let (ct, t) = reference_gcm(key, nonce, ad, pt);
        return (ct, t[..tag_len].to_vec());
    }
    let e = engine_on(Backend::Ni, None);
    let k = AesKey::new(key).expect("reference key");
    let mut out = vec![0u8; alg.output_len(Op::Encrypt, pt.len())];
    let mut tag = vec![0u8; tag_len];
    let job = Job::copy(&k, pt, &mut out).with_iv(nonce).with_ad(ad);
    let job = if tag_len > 0 {
        job.with_tag(Tag::Out(&mut tag))
    } else {
        job
    };
    let n = e
        .process_one(alg, Op::Encrypt, job)
        .unwrap_or_else(|e| panic!("reference {alg}: {e}"));
    out.truncate(n);
    (out, tag)
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

// ---------------------------------------------------------------------------------------
// Jobs by value

/// Filler of the buffers a test hands the library: output buffers, the room after a message,
/// tag buffers. Bytes a job may not write must still hold it afterwards.
pub const FILL: u8 = 0xA5;

/// How a job holds its data (the [`Data`] variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// `Data::InPlace`: the message is the start of the buffer.
    InPlace,
    /// `Data::Copy`: the message is read, the output buffer written.
    Copy,
    /// `Data::Input`: the message only (MACs); the buffer is not given to the job.
    Input,
}

impl Hold {
    /// The holds of a batch that mixes both: in place for even `id`s when decrypting and odd
    /// ones when encrypting, copied otherwise.
    pub fn alternating(id: usize, op: Op) -> Hold {
        if id.is_multiple_of(2) == (op == Op::Decrypt) {
            Hold::InPlace
        } else {
            Hold::Copy
        }
    }
}

/// A job's tag, by value.
#[derive(Clone, Copy, Debug)]
pub enum TagDesc<'a> {
    /// No tag.
    None,
    /// A tag to verify.
    In(&'a [u8]),
    /// A tag of this many bytes to generate.
    Out(usize),
}

/// A job by value: [`run_jobs`] makes its buffers and runs it. The data buffer is `buf_len`
/// bytes: in place, the message followed by [`FILL`]; otherwise [`FILL`] only. A tag buffer
/// (as long as the tag) holds [`FILL`].
#[derive(Clone, Copy, Debug)]
pub struct JobDesc<'a> {
    pub key: &'a AesKey,
    pub input: &'a [u8],
    pub hold: Hold,
    pub buf_len: usize,
    pub iv: &'a [u8],
    pub ad: &'a [u8],
    pub tag: TagDesc<'a>,
}

impl<'a> JobDesc<'a> {
    /// `input` held as `hold` in a buffer of `buf_len` bytes; no IV, AD or tag.
    pub fn new(key: &'a AesKey, input: &'a [u8], hold: Hold, buf_len: usize) -> JobDesc<'a> {
        assert!(
            hold != Hold::InPlace || buf_len >= input.len(),
            "room for the message"
        );
        JobDesc {
            key,
            input,
            hold,
            buf_len,
            iv: &[],
            ad: &[],
            tag: TagDesc::None,
        }
    }

    pub fn iv(self, iv: &'a [u8]) -> JobDesc<'a> {
        JobDesc { iv, ..self }
    }

    pub fn ad(self, ad: &'a [u8]) -> JobDesc<'a> {
        JobDesc { ad, ..self }
    }

    pub fn tag(self, tag: TagDesc<'a>) -> JobDesc<'a> {
        JobDesc { tag, ..self }
    }

    /// The data buffer as the job gets it.
    pub fn initial_buf(&self) -> Vec<u8> {
        let mut b = match self.hold {
            Hold::InPlace => self.input.to_vec(),
            Hold::Copy | Hold::Input => Vec::new(),
        };
        b.resize(self.buf_len, FILL);
        b
    }

    /// The tag buffer as the job gets it (empty without a tag).
    pub fn initial_tag(&self) -> Vec<u8> {
        match self.tag {
            TagDesc::None => Vec::new(),
            TagDesc::In(t) => vec![FILL; t.len()],
            TagDesc::Out(n) => vec![FILL; n],
        }
    }

    /// This job alone through `process_one`: its result, data buffer and tag buffer.
    pub fn run_one(
        &self,
        engine: &Engine,
        alg: Algorithm,
        op: Op,
    ) -> (JobResult, Vec<u8>, Vec<u8>) {
        let mut o = run_jobs(engine, alg, op, PathKind::One, core::slice::from_ref(self));
        (o.results.remove(0), o.bufs.remove(0), o.tags.remove(0))
    }
}

/// Which entry point runs the jobs: `process`, `process_sequential`, or `process_one` per job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    Batch,
    Sequential,
    One,
}

/// Results, data buffers and tag buffers of a run, per job.
pub struct Outcome {
    pub results: Vec<JobResult>,
    pub bufs: Vec<Vec<u8>>,
    pub tags: Vec<Vec<u8>>,
}

/// Runs `descs` (all `alg`/`op`) through `path` on fresh buffers.
pub fn run_jobs(
    engine: &Engine,
    alg: Algorithm,
    op: Op,
    path: PathKind,
    descs: &[JobDesc<'_>],
) -> Outcome {
    let mut bufs: Vec<Vec<u8>> = descs.iter().map(JobDesc::initial_buf).collect();
    let mut tags: Vec<Vec<u8>> = descs.iter().map(JobDesc::initial_tag).collect();
    let mut jobs: Vec<Job<'_>> = descs
        .iter()
        .zip(bufs.iter_mut().zip(tags.iter_mut()))
        .map(|(d, (buf, tag))| {
            let data = match d.hold {
                Hold::InPlace => Data::InPlace {
                    buf,
                    len: d.input.len(),
                },
                Hold::Copy => Data::Copy {
                    input: d.input,
                    output: buf,
                },
                Hold::Input => Data::Input(d.input),
            };
            let tag = match d.tag {
                TagDesc::None => Tag::None,
                TagDesc::In(t) => Tag::In(t),
                TagDesc::Out(_) => Tag::Out(tag),
            };
            Job::new(d.key, data)
                .with_iv(d.iv)
                .with_ad(d.ad)
                .with_tag(tag)
        })
        .collect();
    let results = match path {
        PathKind::Batch => engine.process(alg, op, &mut jobs),
        PathKind::Sequential => engine.process_sequential(alg, op, &mut jobs),
        PathKind::One => jobs
            .into_iter()
            .map(|j| engine.process_one(alg, op, j))
            .collect(),
    };
    Outcome {
        results,
        bufs,
        tags,
    }
}
