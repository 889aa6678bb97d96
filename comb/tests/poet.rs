//! `aes128-poet` (POET v2, full AES-128 hash; SUPERCOP `aes128poetv2aes128`) and
//! `aes128-poet-gf` (POET v1, GF(2^128)-multiplication hash; SUPERCOP `aes128poetv1gf128mul`,
//! 2014-05-25), the same checks on both: the designers' genkat file on every backend and path;
//! batch = sequential = single, round trips and forgeries on random batches; the
//! tag-splitting cases (empty message, one byte, exactly one block, one block and a byte)
//! alone; bad parameters; forgeries anywhere in the ciphertext, the tag's head (which
//! decrypts to `τ`) or its tail, rejected with the output zeroed and the rest of the batch
//! intact.

mod common;

/// The checks of this file for one POET variant, as a module `$name`.
macro_rules! poet_checks {
    ($name:ident, $alg:expr, $kat:expr) => {
        mod $name {
            use crate::common::aead::{assert_zeroed, genkat, Genkat};
            use crate::common::{bytes, engines, run_jobs, Hold, JobDesc, PathKind, TagDesc};
            use comb::{AesKey, Algorithm, Error, Op};

            const ALG: Algorithm = $alg;
            const KAT: &str = $kat;

            #[test]
            fn genkat_file() {
                crate::common::aead::check_genkat(ALG, KAT);
            }

            #[test]
            fn random_batches() {
                for seed in 1..4 {
                    crate::common::aead::check_properties(ALG, seed, 29, 800, &[1, 3, 8, 16]);
                }
            }

            /// A batch of long and short messages sharing one key: every window and tail shape of the
            /// comb plan at P = 3 and the default, equal to the single path.
            #[test]
            fn long_messages_batch_equals_single() {
                let key = AesKey::new(&bytes(7, 16)).unwrap();
                let pts: Vec<Vec<u8>> = [
                    0usize, 1, 15, 16, 17, 31, 32, 33, 255, 256, 1000, 2049, 4096,
                ]
                .iter()
                .enumerate()
                .map(|(i, &n)| bytes(100 + i as u64, n))
                .collect();
                let nonces: Vec<Vec<u8>> =
                    (0..pts.len()).map(|i| bytes(200 + i as u64, 16)).collect();
                let ads: Vec<Vec<u8>> = (0..pts.len())
                    .map(|i| bytes(300 + i as u64, i * 5))
                    .collect();
                for lanes in [None, Some(3)] {
                    for e in engines(lanes) {
                        let descs: Vec<JobDesc<'_>> = (0..pts.len())
                            .map(|i| {
                                JobDesc::new(
                                    &key,
                                    &pts[i],
                                    Hold::alternating(i, Op::Encrypt),
                                    pts[i].len(),
                                )
                                .iv(&nonces[i])
                                .ad(&ads[i])
                                .tag(TagDesc::Out(16))
                            })
                            .collect();
                        let batch = run_jobs(&e, ALG, Op::Encrypt, PathKind::Batch, &descs);
                        let one = run_jobs(&e, ALG, Op::Encrypt, PathKind::One, &descs);
                        assert_eq!(batch.results, one.results);
                        assert_eq!(batch.bufs, one.bufs);
                        assert_eq!(batch.tags, one.tags);
                        let dec: Vec<JobDesc<'_>> = (0..pts.len())
                            .map(|i| {
                                let ct = &batch.bufs[i][..pts[i].len()];
                                JobDesc::new(&key, ct, Hold::alternating(i, Op::Decrypt), ct.len())
                                    .iv(&nonces[i])
                                    .ad(&ads[i])
                                    .tag(TagDesc::In(&batch.tags[i]))
                            })
                            .collect();
                        let o = run_jobs(&e, ALG, Op::Decrypt, PathKind::Batch, &dec);
                        for (i, pt) in pts.iter().enumerate() {
                            assert_eq!(o.results[i], Ok(pt.len()));
                            assert_eq!(o.bufs[i][..pt.len()], pt[..]);
                        }
                    }
                }
            }

            /// The genkat record with these lengths.
            fn record(recs: &[Genkat], pt: usize, ad: usize) -> &Genkat {
                recs.iter()
                    .find(|r| r.pt.len() == pt && r.ad.len() == ad)
                    .expect("the genkat file covers lengths 0..=32")
            }

            /// Tag splitting: a message of 0, 1, 15, 16 or 17 bytes, with and without AD, alone through
            /// `process_one`: ciphertext = the message's length, then the 16-byte tag.
            #[test]
            fn tag_splitting_cases_alone() {
                let recs = genkat(KAT);
                for e in engines(None) {
                    for (pt, ad) in [
                        (0, 0),
                        (0, 3),
                        (1, 0),
                        (1, 16),
                        (15, 1),
                        (16, 0),
                        (16, 16),
                        (17, 32),
                    ] {
                        let r = record(&recs, pt, ad);
                        let key = AesKey::new(&r.key).unwrap();
                        let (res, out, tag) = JobDesc::new(&key, &r.pt, Hold::Copy, pt)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::Out(16))
                            .run_one(&e, ALG, Op::Encrypt);
                        assert_eq!(res, Ok(pt), "pt {pt} ad {ad}");
                        assert_eq!([&out[..pt], &tag[..]].concat(), r.ct, "pt {pt} ad {ad}");
                        let (res, out, _) = JobDesc::new(&key, &r.ct[..pt], Hold::InPlace, pt)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::In(&r.ct[pt..]))
                            .run_one(&e, ALG, Op::Decrypt);
                        assert_eq!((res, &out[..pt]), (Ok(pt), &r.pt[..]), "pt {pt} ad {ad}");
                    }
                }
            }

            /// Wrong key, nonce and tag lengths: typed errors from validation.
            #[test]
            fn bad_parameters() {
                let e = crate::common::engine(None);
                let k16 = AesKey::new(&[1; 16]).unwrap();
                let k24 = AesKey::new(&[1; 24]).unwrap();
                let msg = [0u8; 20];
                let run = |key: &AesKey, nonce: &[u8], tag: usize| {
                    JobDesc::new(key, &msg, Hold::Copy, msg.len())
                        .iv(nonce)
                        .tag(TagDesc::Out(tag))
                        .run_one(&e, ALG, Op::Encrypt)
                        .0
                };
                assert_eq!(
                    run(&k24, &[0; 16], 16),
                    Err(Error::InvalidKeyLength { got: 24 })
                );
                assert_eq!(
                    run(&k16, &[0; 12], 16),
                    Err(Error::InvalidIvLength {
                        expected: 16,
                        got: 12
                    })
                );
                assert_eq!(
                    run(&k16, &[0; 16], 8),
                    Err(Error::InvalidTagLength {
                        got: 8,
                        min: 16,
                        max: 16
                    })
                );
                let t8 = [0u8; 8];
                let r = JobDesc::new(&k16, &msg, Hold::Copy, msg.len())
                    .iv(&[0; 16])
                    .tag(TagDesc::In(&t8))
                    .run_one(&e, ALG, Op::Decrypt)
                    .0;
                assert!(matches!(r, Err(Error::InvalidTagLength { got: 8, .. })));
            }

            /// A decryption input: ciphertext, tag, nonce, AD, and whether it is authentic.
            type Case<'a> = (Vec<u8>, Vec<u8>, &'a [u8], &'a [u8], bool);

            /// One batch: authentic messages and forgeries (a flipped bit in a whole ciphertext block, in
            /// the last partial block, in the tag's head, in its tail; a wrong nonce; a wrong AD; a
            /// ciphertext one byte short): the forgeries fail with their output zeroed, the others
            /// decrypt.
            #[test]
            fn forgeries_fail_alone_in_a_batch() {
                let key = AesKey::new(&bytes(9, 16)).unwrap();
                let pt = bytes(10, 45); // two whole blocks and 13 bytes
                let nonce = bytes(11, 16);
                let ad = bytes(12, 7);
                for e in engines(Some(3)) {
                    let (_, ct, tag) = JobDesc::new(&key, &pt, Hold::Copy, pt.len())
                        .iv(&nonce)
                        .ad(&ad)
                        .tag(TagDesc::Out(16))
                        .run_one(&e, ALG, Op::Encrypt);
                    let flip = |v: &[u8], i: usize| {
                        let mut v = v.to_vec();
                        v[i] ^= 0x10;
                        v
                    };
                    let other_nonce = flip(&nonce, 0);
                    let other_ad = flip(&ad, 6);
                    let cases: Vec<Case<'_>> = vec![
                        (ct.clone(), tag.clone(), &nonce, &ad, true),
                        (flip(&ct, 3), tag.clone(), &nonce, &ad, false),
                        (ct.clone(), tag.clone(), &nonce, &ad, true),
                        (flip(&ct, 44), tag.clone(), &nonce, &ad, false),
                        (ct.clone(), flip(&tag, 0), &nonce, &ad, false),
                        (ct.clone(), flip(&tag, 15), &nonce, &ad, false),
                        (ct.clone(), tag.clone(), &other_nonce, &ad, false),
                        (ct.clone(), tag.clone(), &nonce, &other_ad, false),
                        (ct[..44].to_vec(), tag.clone(), &nonce, &ad, false),
                        (ct.clone(), tag.clone(), &nonce, &ad, true),
                    ];
                    let descs: Vec<JobDesc<'_>> = cases
                        .iter()
                        .enumerate()
                        .map(|(i, (c, t, n, a, _))| {
                            JobDesc::new(&key, c, Hold::alternating(i, Op::Decrypt), c.len())
                                .iv(n)
                                .ad(a)
                                .tag(TagDesc::In(t))
                        })
                        .collect();
                    for path in [PathKind::Batch, PathKind::Sequential, PathKind::One] {
                        let o = run_jobs(&e, ALG, Op::Decrypt, path, &descs);
                        for (i, case) in cases.iter().enumerate() {
                            if case.4 {
                                assert_eq!(o.results[i], Ok(pt.len()), "{path:?} case {i}");
                                assert_eq!(o.bufs[i][..pt.len()], pt[..], "{path:?} case {i}");
                            } else {
                                assert_eq!(
                                    o.results[i],
                                    Err(Error::AuthenticationFailed),
                                    "{path:?} case {i}"
                                );
                                assert_zeroed(
                                    &o.bufs[i],
                                    case.0.len(),
                                    &format!("{path:?} case {i}"),
                                );
                            }
                        }
                    }
                }
            }
        }
    };
}

poet_checks!(
    v2_full_aes,
    Algorithm::Aes128Poet,
    "aes128-poet-v2-fullaes-n16-t16.txt"
);
poet_checks!(
    v1_gf,
    Algorithm::Aes128PoetGf,
    "aes128-poet-v1-gf128-n16-t16.txt"
);
