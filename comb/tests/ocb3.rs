//! AES-OCB3 (RFC 7253): the CAESAR genkat known answers (designer reference
//! `aeadaes128ocbtaglen128v1`, equal to OpenSSL) on every backend and path, the batch
//! properties, a differential test against RustCrypto `ocb3` for several nonce and tag sizes
//! and all key sizes, and bad input. RFC 7253's sample and iterative vectors run through
//! `comb vectors` in the CLI tests.

mod common;

use aes::cipher::consts::{U12, U13, U15, U16, U6, U8};
use aes::cipher::KeyInit;
use aes_gcm::aead::AeadInOut;
use comb::{AesKey, Algorithm, Error, Job, Op, Tag};
use common::aead::{assert_zeroed, check_genkat, check_properties};
use common::{bytes, engines};

const OCB: Algorithm = Algorithm::AesOcb3;

/// One differential case: key index, nonce, AD, plaintext.
type DiffCase = (usize, Vec<u8>, Vec<u8>, Vec<u8>);

#[test]
fn genkat() {
    check_genkat(OCB, "aes128-ocb3-n12-t16.txt");
}

#[test]
fn properties() {
    for seed in 1..4 {
        check_properties(OCB, seed, 30, 1500, &[1, 3, 8, 16]);
    }
}

/// RustCrypto `ocb3`: ciphertext and tag of `pt`.
macro_rules! reference {
    ($C:ty, $N:ty, $T:ty, $key:expr, $nonce:expr, $ad:expr, $pt:expr) => {{
        let c = <ocb3::Ocb3<$C, $N, $T> as KeyInit>::new_from_slice($key).unwrap();
        let n = <&ocb3::Nonce<$N>>::try_from($nonce).unwrap();
        let mut buf = $pt.to_vec();
        let tag = c
            .encrypt_inout_detached(n, $ad, buf.as_mut_slice().into())
            .expect("reference");
        (buf, tag.to_vec())
    }};
}

fn reference(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8], t: usize) -> (Vec<u8>, Vec<u8>) {
    macro_rules! by_nonce_tag {
        ($C:ty) => {
            match (nonce.len(), t) {
                (12, 16) => reference!($C, U12, U16, key, nonce, ad, pt),
                (6, 8) => reference!($C, U6, U8, key, nonce, ad, pt),
                (13, 12) => reference!($C, U13, aes::cipher::consts::U12, key, nonce, ad, pt),
                (15, 16) => reference!($C, U15, U16, key, nonce, ad, pt),
                other => panic!("no reference type for {other:?}"),
            }
        };
    }
    match key.len() {
        16 => by_nonce_tag!(aes::Aes128),
        24 => by_nonce_tag!(aes::Aes192),
        _ => by_nonce_tag!(aes::Aes256),
    }
}

/// Random batches against RustCrypto, batch and single path, every backend, both directions.
#[test]
fn agrees_with_rustcrypto() {
    let params = [(12usize, 16usize), (6, 8), (13, 12), (15, 16)];
    let lens = [
        0usize, 1, 15, 16, 17, 31, 32, 33, 64, 100, 127, 128, 129, 255, 256, 1000, 1500,
    ];
    for engine in engines(None) {
        for (round, &(nl, t)) in params.iter().enumerate() {
            let keys: Vec<Vec<u8>> = [16usize, 24, 32]
                .iter()
                .map(|&l| bytes(round as u64 * 7 + l as u64, l))
                .collect();
            let aes_keys: Vec<AesKey> = keys.iter().map(|k| AesKey::new(k).unwrap()).collect();
            let cases: Vec<DiffCase> = lens
                .iter()
                .enumerate()
                .map(|(i, &l)| {
                    let s = (round * 100 + i) as u64;
                    (
                        i % 3,
                        bytes(s, nl),
                        bytes(s + 1000, (i * 13) % 70),
                        bytes(s + 2000, l),
                    )
                })
                .collect();
            let want: Vec<(Vec<u8>, Vec<u8>)> = cases
                .iter()
                .map(|(k, n, a, p)| reference(&keys[*k], n, a, p, t))
                .collect();
            // Encryption as one batch.
            let mut outs: Vec<Vec<u8>> = cases.iter().map(|c| vec![0; c.3.len()]).collect();
            let mut tags: Vec<Vec<u8>> = vec![vec![0; t]; cases.len()];
            let mut jobs: Vec<Job<'_>> = cases
                .iter()
                .zip(outs.iter_mut().zip(tags.iter_mut()))
                .map(|((k, n, a, p), (o, tg))| {
                    Job::copy(&aes_keys[*k], p, o)
                        .with_iv(n)
                        .with_ad(a)
                        .with_tag(Tag::Out(tg))
                })
                .collect();
            let r = engine.process(OCB, Op::Encrypt, &mut jobs);
            drop(jobs);
            for (i, w) in want.iter().enumerate() {
                assert_eq!(r[i], Ok(cases[i].3.len()));
                assert_eq!(
                    (&outs[i], &tags[i]),
                    (&w.0, &w.1),
                    "encrypt case {i} {nl}/{t}"
                );
            }
            // Decryption as one batch, every fourth tag forged.
            let mut bufs: Vec<Vec<u8>> = want.iter().map(|w| w.0.clone()).collect();
            let forged: Vec<Vec<u8>> = want
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let mut tg = w.1.clone();
                    if i % 4 == 3 {
                        tg[i % t] ^= 1;
                    }
                    tg
                })
                .collect();
            let mut jobs: Vec<Job<'_>> = cases
                .iter()
                .zip(bufs.iter_mut().zip(&forged))
                .map(|((k, n, a, _), (b, tg))| {
                    Job::in_place(&aes_keys[*k], b)
                        .with_iv(n)
                        .with_ad(a)
                        .with_tag(Tag::In(tg))
                })
                .collect();
            let r = engine.process(OCB, Op::Decrypt, &mut jobs);
            drop(jobs);
            for (i, c) in cases.iter().enumerate() {
                if i % 4 == 3 {
                    assert_eq!(r[i], Err(Error::AuthenticationFailed));
                    assert_zeroed(&bufs[i], c.3.len(), "ocb3 forged");
                } else {
                    assert_eq!(r[i], Ok(c.3.len()));
                    assert_eq!(bufs[i], c.3, "decrypt case {i}");
                }
            }
        }
    }
}

#[test]
fn bad_lengths_are_typed_errors() {
    let key = AesKey::new(&[1; 16]).unwrap();
    let e = &engines(None)[0];
    let run = |nonce: &[u8], tag_len: usize| {
        let mut buf = vec![0u8; 20];
        let mut tag = vec![0u8; tag_len];
        let job = Job::in_place(&key, &mut buf)
            .with_iv(nonce)
            .with_tag(Tag::Out(&mut tag));
        e.process_one(OCB, Op::Encrypt, job)
    };
    assert_eq!(
        run(&[], 16),
        Err(Error::InvalidNonceLength {
            got: 0,
            min: 1,
            max: 15
        })
    );
    assert_eq!(
        run(&[0; 16], 16),
        Err(Error::InvalidNonceLength {
            got: 16,
            min: 1,
            max: 15
        })
    );
    for t in [7usize, 17] {
        assert_eq!(
            run(&[0; 12], t),
            Err(Error::InvalidTagLength {
                got: t,
                min: 8,
                max: 16
            })
        );
    }
    for n in 1..=15 {
        assert_eq!(run(&vec![7; n], 16), Ok(20), "nonce of {n} bytes");
    }
}
