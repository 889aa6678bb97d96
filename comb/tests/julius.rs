//! Julius-ECB ("regular" Julius, CAESAR v1 draft, δ = E_K(0) as specified): the genkat known
//! answers on every backend and path (forgeries flip a ciphertext bit: the mode has no
//! detached tag), the batch properties, the expanded ciphertext format, truncation and
//! extension, malformed ciphertexts and bad parameters.

mod common;

use comb::{AesKey, Algorithm, Error, Op};
use common::aead::{assert_zeroed, check_genkat, check_properties, open_both_ways};
use common::{bytes, engine, run_jobs, Hold, JobDesc, PathKind, TagDesc, FILL};

const JULIUS: Algorithm = Algorithm::Aes128Julius;

#[test]
fn genkat() {
    check_genkat(JULIUS, "aes128-julius-ecb-n16.txt");
}

#[test]
fn properties() {
    for seed in [1, 0x5eed, 0xdead_beef] {
        check_properties(JULIUS, seed, 24, 800, &[1, 3, 8, 16]);
    }
    // Messages of many decryption windows (32 blocks) and both block-count parities.
    check_properties(JULIUS, 4, 6, 3000, &[3]);
}

/// Encrypts one message on the default engine.
fn seal(key: &AesKey, nonce: &[u8], ad: &[u8], pt: &[u8]) -> Vec<u8> {
    let e = engine(None);
    let room = JULIUS.output_len(Op::Encrypt, pt.len());
    let d = JobDesc::new(key, pt, Hold::Copy, room)
        .iv(nonce)
        .ad(ad)
        .tag(TagDesc::None);
    let (r, buf, _) = d.run_one(&e, JULIUS, Op::Encrypt);
    let n = r.unwrap();
    assert_eq!(n, 16 * pt.len().div_ceil(16) + 16);
    buf[..n].to_vec()
}

/// [`open_both_ways`] under Julius (no detached tag).
fn open(key: &AesKey, nonce: &[u8], ad: &[u8], ct: &[u8]) -> Result<Vec<u8>, Error> {
    open_both_ways(JULIUS, key, nonce, ad, ct, &[])
}

#[test]
fn round_trip_every_length_near_block_edges() {
    let key = AesKey::new(&bytes(1, 16)).unwrap();
    let nonce = bytes(2, 16);
    for m in (0..=50).chain([255, 256, 257, 511, 512, 513, 528]) {
        let pt = bytes(m as u64 + 3, m);
        let ct = seal(&key, &nonce, b"ad", &pt);
        assert_eq!(open(&key, &nonce, b"ad", &ct), Ok(pt.clone()), "m = {m}");
        // Wrong AD, wrong nonce.
        assert_eq!(
            open(&key, &nonce, b"aD", &ct),
            Err(Error::AuthenticationFailed)
        );
        let mut n2 = nonce.clone();
        n2[15] ^= 1;
        assert_eq!(
            open(&key, &n2, b"ad", &ct),
            Err(Error::AuthenticationFailed)
        );
    }
}

#[test]
fn empty_message_and_ad() {
    let key = AesKey::new(&bytes(5, 16)).unwrap();
    let nonce = bytes(6, 16);
    let ct = seal(&key, &nonce, b"", b"");
    assert_eq!(ct.len(), 16);
    assert_eq!(open(&key, &nonce, b"", &ct), Ok(vec![]));
    let mut bad = ct.clone();
    bad[0] ^= 0x80;
    assert_eq!(
        open(&key, &nonce, b"", &bad),
        Err(Error::AuthenticationFailed)
    );
    assert_eq!(
        open(&key, &nonce, b"x", &ct),
        Err(Error::AuthenticationFailed)
    );
    // Empty AD with a message, and a message with empty AD differing from empty message.
    let ct2 = seal(&key, &nonce, b"", b"m");
    assert_eq!(ct2.len(), 32);
    assert_eq!(open(&key, &nonce, b"", &ct2), Ok(b"m".to_vec()));
}

#[test]
fn leading_zero_bytes_keep_their_length() {
    // The front padding is zeros: a message starting with zero bytes must come back whole
    // (the length is bound through the header, not guessed from the bytes).
    let key = AesKey::new(&bytes(9, 16)).unwrap();
    let nonce = bytes(10, 16);
    for m in [1usize, 5, 15, 16, 17, 31, 32] {
        let pt = vec![0u8; m];
        let ct = seal(&key, &nonce, b"", &pt);
        assert_eq!(open(&key, &nonce, b"", &ct), Ok(pt), "m = {m}");
    }
}

#[test]
fn truncated_extended_and_reordered_ciphertexts_fail() {
    let key = AesKey::new(&bytes(11, 16)).unwrap();
    let nonce = bytes(12, 16);
    let pt = bytes(13, 70);
    let ct = seal(&key, &nonce, b"h", &pt);
    assert_eq!(
        open(&key, &nonce, b"h", &ct[..ct.len() - 16]),
        Err(Error::AuthenticationFailed)
    );
    assert_eq!(
        open(&key, &nonce, b"h", &ct[16..]),
        Err(Error::AuthenticationFailed)
    );
    let mut ext = ct.clone();
    ext.extend_from_slice(&ct[16..32]);
    assert_eq!(
        open(&key, &nonce, b"h", &ext),
        Err(Error::AuthenticationFailed)
    );
    let mut swap = ct.clone();
    swap[16..32].copy_from_slice(&ct[32..48]);
    swap[32..48].copy_from_slice(&ct[16..32]);
    assert_eq!(
        open(&key, &nonce, b"h", &swap),
        Err(Error::AuthenticationFailed)
    );
    // Every single-bit flip of every block is caught.
    for i in (0..ct.len()).step_by(7) {
        let mut f = ct.clone();
        f[i] ^= 1 << (i % 8);
        assert_eq!(
            open(&key, &nonce, b"h", &f),
            Err(Error::AuthenticationFailed),
            "byte {i}"
        );
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let key = AesKey::new(&bytes(7, 16)).unwrap();
    let e = engine(None);
    let nonce = [1u8; 16];
    for len in [0usize, 1, 15, 17, 31, 33] {
        let ct = vec![0u8; len];
        let d = JobDesc::new(&key, &ct, Hold::Copy, len + 16)
            .iv(&nonce)
            .tag(TagDesc::None);
        let (r, buf, _) = d.run_one(&e, JULIUS, Op::Decrypt);
        assert!(
            matches!(r, Err(Error::InvalidMessageLength { .. })),
            "len {len}: {r:?}"
        );
        assert!(buf.iter().all(|&b| b == FILL));
    }
    for nlen in [0usize, 12, 15, 17] {
        let nonce = vec![0u8; nlen];
        let d = JobDesc::new(&key, b"msg", Hold::Copy, 32)
            .iv(&nonce)
            .tag(TagDesc::None);
        let (r, _, _) = d.run_one(&e, JULIUS, Op::Encrypt);
        assert!(
            matches!(
                r,
                Err(Error::InvalidNonceLength { .. } | Error::InvalidIvLength { .. })
            ),
            "nonce {nlen}: {r:?}"
        );
    }
    // Julius has no detached tag: giving one (either direction) is misuse.
    let d = JobDesc::new(&key, b"msg", Hold::Copy, 32)
        .iv(&nonce)
        .tag(TagDesc::Out(16));
    assert_eq!(d.run_one(&e, JULIUS, Op::Encrypt).0, Err(Error::TagMisuse));
    let ct = [0u8; 32];
    let tag = [0u8; 16];
    let d = JobDesc::new(&key, &ct, Hold::Copy, 32)
        .iv(&nonce)
        .tag(TagDesc::In(&tag));
    assert_eq!(d.run_one(&e, JULIUS, Op::Decrypt).0, Err(Error::TagMisuse));
    // Output room: 16 * ceil(m / 16) + 16.
    let d = JobDesc::new(&key, b"msg", Hold::Copy, 31)
        .iv(&nonce)
        .tag(TagDesc::None);
    assert!(matches!(
        d.run_one(&e, JULIUS, Op::Encrypt).0,
        Err(Error::OutputTooShort { .. })
    ));
    for klen in [24usize, 32] {
        let k = AesKey::new(&vec![3u8; klen]).unwrap();
        let d = JobDesc::new(&k, b"msg", Hold::Copy, 32)
            .iv(&nonce)
            .tag(TagDesc::None);
        let (r, _, _) = d.run_one(&e, JULIUS, Op::Encrypt);
        assert!(
            matches!(r, Err(Error::InvalidKeyLength { .. })),
            "key {klen}: {r:?}"
        );
    }
}

/// A forged job in a batch fails alone: the other jobs decrypt.
#[test]
fn forgery_in_a_batch_leaves_the_others_intact() {
    let key = AesKey::new(&bytes(21, 16)).unwrap();
    let nonce = bytes(22, 16);
    let pts: Vec<Vec<u8>> = (0..9).map(|i| bytes(i + 40, 37 * i as usize)).collect();
    let mut cts: Vec<Vec<u8>> = pts.iter().map(|p| seal(&key, &nonce, b"h", p)).collect();
    for i in [1usize, 4, 8] {
        let last = cts[i].len() - 1;
        cts[i][last] ^= 0x10;
    }
    let e = engine(None);
    for path in [PathKind::Batch, PathKind::Sequential, PathKind::One] {
        let descs: Vec<JobDesc> = cts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                JobDesc::new(&key, c, Hold::alternating(i, Op::Decrypt), c.len())
                    .iv(&nonce)
                    .ad(b"h")
                    .tag(TagDesc::None)
            })
            .collect();
        let o = run_jobs(&e, JULIUS, Op::Decrypt, path, &descs);
        for i in 0..cts.len() {
            if [1, 4, 8].contains(&i) {
                assert_eq!(o.results[i], Err(Error::AuthenticationFailed));
                assert_zeroed(&o.bufs[i], cts[i].len(), "batch");
            } else {
                let n = o.results[i].clone().unwrap();
                assert_eq!(o.bufs[i][..n], pts[i][..], "job {i}");
            }
        }
    }
}
