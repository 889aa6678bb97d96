//! McOE-G (the project's specification, `specs/mcoe-g.md`): the model genkat file on both
//! paths and every backend, the specification's worked examples, batch = sequential = one by
//! one over random batches, bad input, forgeries and empty message / AD.

mod common;

use comb::{AesKey, Algorithm, Error, Op};
use common::aead::{check_forgeries, check_genkat, check_properties, seal_everywhere};
use common::{bytes, engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc};

const MCOE: Algorithm = Algorithm::Aes128McoeG;

#[test]
fn genkat() {
    check_genkat(MCOE, "aes128-mcoe-g-k32-n16-t16.txt");
}

#[test]
fn properties() {
    for seed in [1, 2, 3] {
        check_properties(MCOE, seed, 24, 800, &[1, 3, 8, 16]);
    }
}

/// K1 ‖ K2 and N of the specification's section 8.
fn spec_key() -> Vec<u8> {
    unhex("2B7E151628AED2A6ABF7158809CF4F3C3243F6A8885A308D313198A2E0370734")
}
const SPEC_NONCE: &str = "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";
const SPEC_M: &str = "6BC1BEE22E409F96E93D7E117393172AAE";

/// [`seal_everywhere`] under MCOE: `C ‖ T`, the same on every engine and path, and
/// decrypted back.
fn seal(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8]) -> Vec<u8> {
    seal_everywhere(MCOE, &AesKey::new(key).expect("key"), nonce, ad, pt)
}

#[test]
fn specification_examples() {
    let key = spec_key();
    let n = unhex(SPEC_NONCE);
    let m = unhex(SPEC_M);
    let ad17: Vec<u8> = (0u8..=0x10).collect();
    let cases: [(&[u8], &[u8], &str); 4] = [
        (
            &[],
            &m,
            "F027695DAFCD09EE81BA6254A1C3AD382F967680271251F4F3D21083AC64AB7868",
        ),
        (&[], &[], "EB0F250F49F849DC8DF04205D1075388"),
        (
            &[],
            &m[..16],
            "F027695DAFCD09EE81BA6254A1C3AD384C89090F90C35E0BDF5B9C83D699FAEF",
        ),
        (
            &ad17,
            &m,
            "BAA6EF24DE900BEFB02C9B60A2CE67D99FC086A19B2861BE305BFC45C417E5DE5D",
        ),
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

/// The empty message with and without AD, and AD of every length class: the tag alone,
/// different for each AD (the AD is authenticated).
#[test]
fn empty_message_and_ad() {
    let key = spec_key();
    let n = unhex(SPEC_NONCE);
    let mut tags = Vec::new();
    for adlen in [0usize, 1, 15, 16, 17, 32] {
        let ad = bytes(adlen as u64, adlen);
        let t = seal(&key, &n, &ad, &[]);
        assert_eq!(t.len(), 16);
        assert!(!tags.contains(&t), "AD length {adlen}");
        tags.push(t);
        // Empty AD with a message: the ciphertext length is the message length.
        let ct = seal(&key, &n, &[], &bytes(7, adlen));
        assert_eq!(ct.len(), adlen + 16);
    }
    // pad10 is injective: A = 80 differs from empty A, and A = 16 bytes from its prefix.
    let a16 = bytes(9, 16);
    assert_ne!(seal(&key, &n, &a16, &[]), seal(&key, &n, &a16[..15], &[]));
    assert_ne!(seal(&key, &n, &[0x80], &[]), seal(&key, &n, &[], &[]));
}

#[test]
fn bad_input_is_rejected_with_typed_errors() {
    let key16 = AesKey::new(&[7; 16]).expect("key");
    let key = AesKey::new(&spec_key()).expect("key");
    let pt = bytes(3, 40);
    for engine in engines(None) {
        for path in [PathKind::One, PathKind::Batch] {
            // A 16-byte key: McOE-G needs K1 ‖ K2.
            let d = [JobDesc::new(&key16, &pt, Hold::Copy, 40)
                .iv(&[0; 16])
                .tag(TagDesc::Out(16))];
            let o = run_jobs(&engine, MCOE, Op::Encrypt, path, &d);
            assert_eq!(o.results[0], Err(Error::InvalidKeyLength { got: 16 }));
            // A 15-byte nonce.
            let d = [JobDesc::new(&key, &pt, Hold::Copy, 40)
                .iv(&[0; 15])
                .tag(TagDesc::Out(16))];
            let o = run_jobs(&engine, MCOE, Op::Encrypt, path, &d);
            assert_eq!(
                o.results[0],
                Err(Error::InvalidIvLength {
                    expected: 16,
                    got: 15
                })
            );
            // A 12-byte tag.
            let d = [JobDesc::new(&key, &pt, Hold::Copy, 40)
                .iv(&[0; 16])
                .tag(TagDesc::Out(12))];
            let o = run_jobs(&engine, MCOE, Op::Encrypt, path, &d);
            assert_eq!(
                o.results[0],
                Err(Error::InvalidTagLength {
                    got: 12,
                    min: 16,
                    max: 16
                })
            );
        }
    }
}

/// Forged ciphertext (every byte position of a split last block, the tag's both parts) and
/// forged AD / nonce fail with the output zeroed; the other jobs of the batch are intact.
#[test]
fn forgeries_fail_alone() {
    let key = AesKey::new(&spec_key()).expect("key");
    let nonce = unhex(SPEC_NONCE);
    let ad = bytes(5, 20);
    let pts: Vec<Vec<u8>> = (0..8)
        .map(|i| bytes(100 + i, 16 * i as usize + 5))
        .collect();
    let sealed: Vec<Vec<u8>> = pts
        .iter()
        .map(|p| seal(&spec_key(), &nonce, &ad, p))
        .collect();
    check_forgeries(MCOE, &key, &nonce, &ad, &pts, &sealed);
}
