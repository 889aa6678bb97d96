//! COBRA-R (the project's reconstruction of COBRA, `specs/cobra.md`): the genkat file on both
//! paths and every backend, the specification's worked examples, batch = sequential = one by
//! one over random batches, bad input, forgeries and empty message / AD.

mod common;

use comb::{AesKey, Algorithm, Error, Op};
use common::aead::{check_forgeries, check_genkat, check_properties, seal_everywhere};
use common::{bytes, engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc};

const COBRA: Algorithm = Algorithm::Aes128CobraR;

#[test]
fn genkat() {
    check_genkat(COBRA, "aes128-cobra-r-n16-t16.txt");
}

#[test]
fn properties() {
    for seed in [1, 2, 3] {
        check_properties(COBRA, seed, 20, 800, &[1, 3, 8, 16]);
    }
}

const SPEC_KEY: &str = "2B7E151628AED2A6ABF7158809CF4F3C";
const SPEC_NONCE: &str = "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";
/// The SP 800-38A F.1 plaintext (64 bytes).
const SPEC_M: &str = concat!(
    "6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E51",
    "30C81C46A35CE411E5FBC1191A0A52EFF69F2445DF4F9B17AD2B417BE66C3710"
);

/// [`seal_everywhere`] under COBRA: `C ‖ T`, the same on every engine and path, and
/// decrypted back.
fn seal(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8]) -> Vec<u8> {
    seal_everywhere(COBRA, &AesKey::new(key).expect("key"), nonce, ad, pt)
}

/// The specification's section 9.
#[test]
fn specification_examples() {
    let key = unhex(SPEC_KEY);
    let n = unhex(SPEC_NONCE);
    let m = unhex(SPEC_M);
    let ad17: Vec<u8> = (0u8..=0x10).collect();
    let c1 = concat!(
        "C314A9B9829EB52E5BD2F7E1536C4960873EE33FB86E2D8F66791B9CDF6035A7",
        "7CAEADD07FDD4AFED64D0C178E8236E3"
    );
    let c2 = concat!(
        "C314A9B9829EB52E5BD2F7E1536C4960873EE33FB86E2D8F66791B9CDF6035A7",
        "5208BC0AAEA5D6223E3398D01F647BE10664E3552D4FEBC487AEE0CECA13869B",
        "B2A9DE5B6A3C5E895D32621F0E593E60"
    );
    let cases: [(&[u8], &[u8], &str); 3] = [
        (&[], &m[..32], c1),
        (&[], &[], "A068C4E165B68604E5F8C699A2FE9507"),
        (&ad17, &m, c2),
    ];
    for (ad, pt, want) in cases {
        assert_eq!(
            seal(&key, &n, ad, pt),
            unhex(want),
            "|A| {} |M| {}",
            ad.len(),
            pt.len()
        );
    }
}

/// The empty message with AD of every length class: the tag alone, different for each AD;
/// empty AD with messages of 0..4 pairs; and the AD only enters the tag.
#[test]
fn empty_message_and_ad() {
    let key = unhex(SPEC_KEY);
    let n = unhex(SPEC_NONCE);
    let mut tags = Vec::new();
    for adlen in [0usize, 1, 15, 16, 17, 32, 33, 300] {
        let ad = bytes(adlen as u64, adlen);
        let t = seal(&key, &n, &ad, &[]);
        assert_eq!(t.len(), 16);
        assert!(!tags.contains(&t), "AD length {adlen}");
        tags.push(t);
    }
    for pairs in 0..5usize {
        let pt = bytes(7, 32 * pairs);
        let ct = seal(&key, &n, &[], &pt);
        assert_eq!(ct.len(), pt.len() + 16);
        let ct2 = seal(&key, &n, &[1], &pt);
        assert_eq!(ct[..pt.len()], ct2[..pt.len()]);
        assert_ne!(ct[pt.len()..], ct2[pt.len()..]);
    }
    // pad10 is injective: A = 80 differs from empty A, and A = 16 bytes from its prefix.
    let a16 = bytes(9, 16);
    assert_ne!(seal(&key, &n, &a16, &[]), seal(&key, &n, &a16[..15], &[]));
    assert_ne!(seal(&key, &n, &[0x80], &[]), seal(&key, &n, &[], &[]));
}

#[test]
fn bad_input_is_rejected_with_typed_errors() {
    let key = AesKey::new(&unhex(SPEC_KEY)).expect("key");
    let pt = bytes(3, 64);
    for engine in engines(None) {
        for path in [PathKind::One, PathKind::Batch] {
            // An odd number of blocks, both directions.
            for len in [16usize, 48] {
                for op in [Op::Encrypt, Op::Decrypt] {
                    let tag = [0u8; 16];
                    let t = match op {
                        Op::Encrypt => TagDesc::Out(16),
                        Op::Decrypt => TagDesc::In(&tag),
                    };
                    let d = [JobDesc::new(&key, &pt[..len], Hold::Copy, 64)
                        .iv(&[0; 16])
                        .tag(t)];
                    let o = run_jobs(&engine, COBRA, op, path, &d);
                    assert!(
                        matches!(o.results[0], Err(Error::InvalidMessageLength { len: l, .. }) if l == len),
                        "{len}: {:?}",
                        o.results[0]
                    );
                }
            }
            // A 12-byte nonce.
            let d = [JobDesc::new(&key, &pt, Hold::Copy, 64)
                .iv(&[0; 12])
                .tag(TagDesc::Out(16))];
            let o = run_jobs(&engine, COBRA, Op::Encrypt, path, &d);
            assert_eq!(
                o.results[0],
                Err(Error::InvalidIvLength {
                    expected: 16,
                    got: 12
                })
            );
            // An 8-byte tag.
            let d = [JobDesc::new(&key, &pt, Hold::Copy, 64)
                .iv(&[0; 16])
                .tag(TagDesc::Out(8))];
            let o = run_jobs(&engine, COBRA, Op::Encrypt, path, &d);
            assert_eq!(
                o.results[0],
                Err(Error::InvalidTagLength {
                    got: 8,
                    min: 16,
                    max: 16
                })
            );
        }
    }
}

/// Forged ciphertext (any position, the tag included) and forged AD / nonce fail with the
/// output zeroed; the other jobs of the batch are intact.
#[test]
fn forgeries_fail_alone() {
    let key = AesKey::new(&unhex(SPEC_KEY)).expect("key");
    let nonce = unhex(SPEC_NONCE);
    let ad = bytes(5, 20);
    let pts: Vec<Vec<u8>> = (0..10).map(|i| bytes(100 + i, 32 * i as usize)).collect();
    let sealed: Vec<Vec<u8>> = pts
        .iter()
        .map(|p| seal(&unhex(SPEC_KEY), &nonce, &ad, p))
        .collect();
    check_forgeries(COBRA, &key, &nonce, &ad, &pts, &sealed);
}
