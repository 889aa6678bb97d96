//! AES-COPA v2: the CAESAR genkat known answers (designer reference `aescopav2`) on every
//! backend and path, the batch properties, the expanded ciphertext format, malformed
//! ciphertexts (length, flag byte, padding) and forgeries.
//!
//! The genkat `CT` is what the reference's `crypto_aead_encrypt` writes: the blocks, the
//! 16-byte tag, then the one-byte "partial" flag. The library keeps the tag detached, so its
//! output is the blocks and the flag, and its tag the 16 bytes before the flag
//! ([`library_layout`]).

mod common;

use comb::{AesKey, Algorithm, Error, Op};
use common::aead::{assert_zeroed, check_properties, genkat, open_both_ways, Genkat};
use common::{bytes, engine, engines, run_jobs, Hold, JobDesc, PathKind, TagDesc, FILL};

const COPA: Algorithm = Algorithm::Aes128Copa;
const FILE: &str = "aes128-copa-v2-n16-t16.txt";

/// A genkat `CT` (blocks ‖ tag ‖ flag) as the library's (output, tag): (blocks ‖ flag, tag).
fn library_layout(ct: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let n = ct.len() - 17;
    let mut out = ct[..n].to_vec();
    out.push(ct[ct.len() - 1]);
    (out, ct[n..n + 16].to_vec())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `common::aead::check_genkat` with the record layout mapped: every record encrypts to its
/// `CT` and decrypts back, every third decryption (a flipped tag bit) is rejected with the
/// output zeroed, on every backend, single path and one batch of the whole file, lanes
/// default/1/3.
#[test]
fn genkat_known_answers() {
    let recs: Vec<Genkat> = genkat(FILE);
    assert_eq!(recs.len(), 1089);
    let keys: Vec<AesKey> = recs.iter().map(|r| AesKey::new(&r.key).unwrap()).collect();
    let lib: Vec<(Vec<u8>, Vec<u8>)> = recs.iter().map(|r| library_layout(&r.ct)).collect();
    let forged: Vec<Vec<u8>> = recs
        .iter()
        .zip(&lib)
        .map(|(r, (_, t))| {
            let mut t = t.clone();
            t[r.count % 16] ^= 1 << (r.count % 8);
            t
        })
        .collect();
    for lanes in [None, Some(1), Some(3)] {
        for e in engines(lanes) {
            let what = format!("{:?} lanes {lanes:?}", e.backend());
            for path in [PathKind::One, PathKind::Batch] {
                let descs: Vec<JobDesc<'_>> = recs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (r, k))| {
                        let room = COPA.output_len(Op::Encrypt, r.pt.len());
                        JobDesc::new(k, &r.pt, Hold::alternating(i, Op::Encrypt), room)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::Out(16))
                    })
                    .collect();
                let o = run_jobs(&e, COPA, Op::Encrypt, path, &descs);
                for (i, r) in recs.iter().enumerate() {
                    let n = o.results[i].clone().unwrap();
                    assert_eq!(n, lib[i].0.len(), "{what}: Count {}", r.count);
                    assert_eq!(
                        (hex(&o.bufs[i][..n]), hex(&o.tags[i])),
                        (hex(&lib[i].0), hex(&lib[i].1)),
                        "{what} {path:?}: encrypt Count {}",
                        r.count
                    );
                }
                let descs: Vec<JobDesc<'_>> = recs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (r, k))| {
                        let tag = if i % 3 == 1 { &forged[i] } else { &lib[i].1 };
                        let c = &lib[i].0;
                        JobDesc::new(k, c, Hold::alternating(i, Op::Decrypt), c.len())
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::In(tag))
                    })
                    .collect();
                let o = run_jobs(&e, COPA, Op::Decrypt, path, &descs);
                for (i, r) in recs.iter().enumerate() {
                    if i % 3 == 1 {
                        assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what}");
                        assert_zeroed(&o.bufs[i], lib[i].0.len(), &what);
                    } else {
                        let n = o.results[i].clone().unwrap();
                        assert_eq!(
                            hex(&o.bufs[i][..n]),
                            hex(&r.pt),
                            "{what} {path:?}: decrypt Count {}",
                            r.count
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn properties() {
    for seed in [1, 2, 3] {
        check_properties(COPA, seed, 24, 1000, &[1, 3, 8, 16]);
    }
    // Messages longer than one scratch window (128 blocks).
    check_properties(COPA, 4, 6, 5000, &[3]);
}

/// Encrypts one message on the default engine: (output, tag).
fn seal(key: &AesKey, nonce: &[u8], ad: &[u8], pt: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let e = engine(None);
    let room = COPA.output_len(Op::Encrypt, pt.len());
    let d = JobDesc::new(key, pt, Hold::Copy, room)
        .iv(nonce)
        .ad(ad)
        .tag(TagDesc::Out(16));
    let (r, buf, tag) = d.run_one(&e, COPA, Op::Encrypt);
    let n = r.unwrap();
    (buf[..n].to_vec(), tag)
}

/// [`open_both_ways`] under COPA.
fn open(key: &AesKey, nonce: &[u8], ad: &[u8], ct: &[u8], tag: &[u8]) -> Result<Vec<u8>, Error> {
    open_both_ways(COPA, key, nonce, ad, ct, tag)
}

#[test]
fn format_flag_and_lengths() {
    let key = AesKey::new(&bytes(1, 16)).unwrap();
    let nonce = bytes(2, 16);
    for m in [0usize, 1, 15, 16, 17, 31, 32, 33, 2048, 2049] {
        let pt = bytes(m as u64, m);
        let (ct, tag) = seal(&key, &nonce, b"ad", &pt);
        let blocks = m.div_ceil(16).max(1);
        assert_eq!(ct.len(), 16 * blocks + 1, "m = {m}");
        let partial = m == 0 || m % 16 != 0;
        assert_eq!(ct[ct.len() - 1], u8::from(partial), "m = {m}");
        assert_eq!(open(&key, &nonce, b"ad", &ct, &tag), Ok(pt), "m = {m}");
        // The flag byte is authenticated through the padding rule: flipping or replacing it
        // is a forgery.
        for flag in [0u8, 1, 2, 0xff] {
            if flag == ct[ct.len() - 1] {
                continue;
            }
            let mut bad = ct.clone();
            *bad.last_mut().unwrap() = flag;
            assert_eq!(
                open(&key, &nonce, b"ad", &bad, &tag),
                Err(Error::AuthenticationFailed),
                "m = {m}, flag {flag}"
            );
        }
        // Every ciphertext byte matters.
        for i in [0, ct.len() / 2, ct.len() - 2] {
            let mut bad = ct.clone();
            bad[i] ^= 0x20;
            assert_eq!(
                open(&key, &nonce, b"ad", &bad, &tag),
                Err(Error::AuthenticationFailed),
                "m = {m}, byte {i}"
            );
        }
        // Nonce, AD and key are bound.
        let mut n2 = nonce.clone();
        n2[15] ^= 1;
        assert_eq!(
            open(&key, &n2, b"ad", &ct, &tag),
            Err(Error::AuthenticationFailed)
        );
        assert_eq!(
            open(&key, &nonce, b"aD", &ct, &tag),
            Err(Error::AuthenticationFailed)
        );
        let k2 = AesKey::new(&bytes(9, 16)).unwrap();
        assert_eq!(
            open(&k2, &nonce, b"ad", &ct, &tag),
            Err(Error::AuthenticationFailed)
        );
    }
}

#[test]
fn empty_message_and_ad() {
    let key = AesKey::new(&[0u8; 16]).unwrap();
    let nonce = [0u8; 16];
    for ad in [&b""[..], b"x", &[7u8; 16], &[7u8; 33]] {
        let (ct, tag) = seal(&key, &nonce, ad, &[]);
        assert_eq!(ct.len(), 17);
        assert_eq!(ct[16], 1);
        assert_eq!(open(&key, &nonce, ad, &ct, &tag), Ok(Vec::new()));
    }
    // Empty message and empty AD are distinct from a message of one zero byte.
    let (c0, t0) = seal(&key, &nonce, b"", b"");
    let (c1, t1) = seal(&key, &nonce, b"", b"\0");
    assert_ne!((c0, t0), (c1, t1));
}

/// A ciphertext whose decrypted last block has no valid 10* padding (flag 1 on blocks that
/// encrypt a whole message) fails as a forgery, zeroed.
#[test]
fn wrong_padding_is_rejected() {
    let key = AesKey::new(&bytes(5, 16)).unwrap();
    let nonce = bytes(6, 16);
    // A whole-block message whose last byte is not 0x80 padding: declaring it partial (flag
    // 1) makes the last block's mask differ, so tag and padding both fail.
    let pt = [0u8; 32];
    let (mut ct, tag) = seal(&key, &nonce, b"", &pt);
    *ct.last_mut().unwrap() = 1;
    assert_eq!(
        open(&key, &nonce, b"", &ct, &tag),
        Err(Error::AuthenticationFailed)
    );
}

#[test]
fn malformed_lengths_are_typed_errors() {
    let key = AesKey::new(&bytes(7, 16)).unwrap();
    let e = engine(None);
    let nonce = [1u8; 16];
    let tag = [0u8; 16];
    for len in [0usize, 1, 16, 18, 32, 34] {
        let ct = vec![0u8; len];
        let d = JobDesc::new(&key, &ct, Hold::Copy, len + 16)
            .iv(&nonce)
            .tag(TagDesc::In(&tag));
        let (r, buf, _) = d.run_one(&e, COPA, Op::Decrypt);
        assert!(
            matches!(r, Err(Error::InvalidMessageLength { .. })),
            "len {len}: {r:?}"
        );
        assert!(buf.iter().all(|&b| b == FILL));
    }
    // Wrong nonce lengths.
    for nlen in [0usize, 12, 15, 17] {
        let nonce = vec![0u8; nlen];
        let d = JobDesc::new(&key, b"msg", Hold::Copy, 17)
            .iv(&nonce)
            .tag(TagDesc::Out(16));
        let (r, _, _) = d.run_one(&e, COPA, Op::Encrypt);
        assert!(
            matches!(
                r,
                Err(Error::InvalidNonceLength { .. } | Error::InvalidIvLength { .. })
            ),
            "nonce {nlen}: {r:?}"
        );
    }
    // Wrong tag lengths.
    for tlen in [8usize, 15, 17] {
        let d = JobDesc::new(&key, b"msg", Hold::Copy, 17)
            .iv(&nonce)
            .tag(TagDesc::Out(tlen));
        let (r, _, _) = d.run_one(&e, COPA, Op::Encrypt);
        assert!(
            matches!(r, Err(Error::InvalidTagLength { .. })),
            "tag {tlen}: {r:?}"
        );
    }
    // Output room: 16 * max(1, ceil(m / 16)) + 1 for encryption, len - 1 for decryption.
    let d = JobDesc::new(&key, b"msg", Hold::Copy, 16)
        .iv(&nonce)
        .tag(TagDesc::Out(16));
    let (r, _, _) = d.run_one(&e, COPA, Op::Encrypt);
    assert!(matches!(r, Err(Error::OutputTooShort { .. })), "{r:?}");
    // Wrong key lengths.
    for klen in [24usize, 32] {
        let k = AesKey::new(&vec![3u8; klen]).unwrap();
        let d = JobDesc::new(&k, b"msg", Hold::Copy, 17)
            .iv(&nonce)
            .tag(TagDesc::Out(16));
        let (r, _, _) = d.run_one(&e, COPA, Op::Encrypt);
        assert!(
            matches!(r, Err(Error::InvalidKeyLength { .. })),
            "key {klen}: {r:?}"
        );
    }
}

/// A forged job in a batch fails alone: the other jobs decrypt.
#[test]
fn forgery_in_a_batch_leaves_the_others_intact() {
    let key = AesKey::new(&bytes(11, 16)).unwrap();
    let nonce = bytes(12, 16);
    let pts: Vec<Vec<u8>> = (0..10).map(|i| bytes(100 + i, 37 * i as usize)).collect();
    let sealed: Vec<(Vec<u8>, Vec<u8>)> = pts.iter().map(|p| seal(&key, &nonce, b"h", p)).collect();
    let mut tags: Vec<Vec<u8>> = sealed.iter().map(|s| s.1.clone()).collect();
    tags[4][0] ^= 1;
    for e in engines(Some(3)) {
        let descs: Vec<JobDesc<'_>> = (0..10)
            .map(|i| {
                JobDesc::new(
                    &key,
                    &sealed[i].0,
                    Hold::alternating(i, Op::Decrypt),
                    sealed[i].0.len(),
                )
                .iv(&nonce)
                .ad(b"h")
                .tag(TagDesc::In(&tags[i]))
            })
            .collect();
        let o = run_jobs(&e, COPA, Op::Decrypt, PathKind::Batch, &descs);
        for i in 0..10 {
            if i == 4 {
                assert_eq!(o.results[i], Err(Error::AuthenticationFailed));
                assert_zeroed(&o.bufs[i], sealed[i].0.len(), "batch");
            } else {
                let n = o.results[i].clone().unwrap();
                assert_eq!(o.bufs[i][..n], pts[i][..]);
            }
        }
    }
}
