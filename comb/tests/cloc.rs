//! AES-CLOC (CAESAR v3, `aes128n12t8clocv3`) and AES-SILC v3 (`aes128n12t8silcv3`): the
//! genkat known answers of both; answers of the
//! designers' reference code for what the genkat file does not reach (AD whose first byte has
//! its top bit set, so `fix0` clears a bit and `h` runs; AD of exactly one block, so `f1`
//! makes `V`; messages of up to 300 bytes, i.e. long message chains); the batch properties at
//! lane counts 1, 3, 8, 16.
//!
//! CLOC and SILC share their lane code (`modes/cloc.rs`), so the checks of that shared
//! machinery run here for both algorithms: validation errors (nonce of 11 or 13 bytes, tag of
//! 16, key of 32), forgeries (a flipped tag or ciphertext bit fails that job only, with its
//! output zeroed, the rest of the batch intact: verify-then-decrypt), empty messages and AD.

mod common;

use comb::{AesKey, Algorithm, Error, Op};
use common::aead::{assert_zeroed, check_genkat, check_properties, check_properties_ad};
use common::{engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc};

const CLOC: Algorithm = Algorithm::Aes128Cloc;
const SILC: Algorithm = Algorithm::Aes128Silc;

/// A known answer for inputs made by [`pattern`]: `(length, first byte)` of the AD and the
/// plaintext; key `pattern(16, 0x2b)`, nonce `pattern(12, 0x5a)`; `ct` = ciphertext ‖ tag.
struct Vector {
    ad: (usize, u8),
    pt: (usize, u8),
    ct: &'static str,
}

/// `n` bytes `start, start + 37, start + 74, ...` (mod 256).
fn pattern(n: usize, start: u8) -> Vec<u8> {
    (0..n).map(|i| start.wrapping_add((37 * i) as u8)).collect()
}

/// Computed with the designers' reference code (SUPERCOP `crypto_aead/aes128n12t8clocv3/ref`,
/// `crypto_aead_encrypt`), which also decrypted each one back.
const CLOC_REF: &[Vector] = &[
    Vector {
        ad: (1, 0x80),
        pt: (20, 0x01),
        ct: "f8922a3bad0932ac83520a5a4058c78f40da0c103e3e63d37956c36b",
    },
    Vector {
        ad: (16, 0xF3),
        pt: (16, 0x02),
        ct: "ed237e3755bb5108e905cccfae8222fe0544a26a0a63d9ef",
    },
    Vector {
        ad: (16, 0x11),
        pt: (0, 0x00),
        ct: "04cb9db2cdbf07f4",
    },
    Vector {
        ad: (16, 0x91),
        pt: (0, 0x00),
        ct: "65e5d08c476d5b4e",
    },
    Vector {
        ad: (17, 0xC5),
        pt: (31, 0x03),
        ct: concat!(
            "d879ff10740669349b7618dcf656de5e39054b0e25217430ea922b877335989c",
            "e55facd823da4d",
        ),
    },
    Vector {
        ad: (40, 0x99),
        pt: (100, 0x04),
        ct: concat!(
            "dfffdefcbca8569845e2f427f4ae40602653f49275ca0f474249289db277f87b",
            "8db5ebd0043c20f089e692b73662277b511b860d09fda1baa266082f7508295a",
            "ef8b93b777900336381d82af8d59b86253e97abddabaf5cbf09e037ff850fde8",
            "9ea4d04d89cc2114c0e7c171",
        ),
    },
    Vector {
        ad: (48, 0x12),
        pt: (48, 0x05),
        ct: concat!(
            "c89d8c664aa1b5ea3058d9623a04681cc5785021da42583ccfcb31ab14b1bdf5",
            "6523b5d36274737cd5a0454a2880b9a1cad885ed6c3ab4d2",
        ),
    },
    Vector {
        ad: (0, 0x00),
        pt: (257, 0x06),
        ct: concat!(
            "6bb75afc58719cbcf17a1666a13ab66c942ef1ee6745f41a9cbe9c02a9dbbc3e",
            "4718e2dc076334c970c39216d42d986beb31b95eea90ce057f94fa0448e078a2",
            "f34ab929ae2f3867ec07d5e9f2fbd9f51a93b63c13d6324792498beba0b24e2b",
            "77b154b8721ce73b13f0ce6dd3e045507fdd109843044665239427e07f7c7f73",
            "25559560f2e5c629cf1702eaa6736da97cd9ca6ce9df649344af61c5adb5ed9c",
            "034ee1f39f58ec08901838a00f163108845a4b34bdf18976ec1ccb6a50147437",
            "a15c6e2c8f2cd1e2d084ddc82704312edc1a0f19bec614212ceaa6ca1b2ef631",
            "d6ab6f817031051908edd404e9d3af88991ec450e64ee987b4352e79e00d0977",
            "1a84530309887fa24b",
        ),
    },
    Vector {
        ad: (33, 0x21),
        pt: (300, 0x07),
        ct: concat!(
            "3dcd781ee6efaaf6a20e36c95fc80e538cbd6eeaac51a2880ef2c9fce32e674a",
            "3b7a21ea26f9a1be1fd84bdd1994ac32796358d3c47297ee252f083caa2ff719",
            "f3715887459e353c3d5726f22c001795c64aa739585804469af7ba2a2592aa73",
            "d89aa666684e7af599797a95ab76994cbbd540eb5b803d60b18838d4d85a5aa2",
            "b58e6d3228a96119fcb52be829f5aefbf17303f7f19233c1ce37b0584cd28a13",
            "a3cde5c21a85e5e2ed58901b2ee8091761c6131f3f184fa0238bf3f4edaa4825",
            "b754617e4c97a31b9e040fa46f71c5a783d74ab617936caa53516c45a91abc28",
            "ed7f7fd94dc7fa0bbaf5f18b7ccd386602f3a36a9a8b1170e5bbe1375039f668",
            "62a159f725859ebcf5a85e03c8ff9023ef3054da94f711bcf0306c0ced46a041",
            "439cd48abe1590643bc88756fc6a6db1aedef73f",
        ),
    },
    Vector {
        ad: (15, 0xFF),
        pt: (1, 0x08),
        ct: "90ccdfb993009d6387",
    },
];

/// Computed with the designers' reference code (SUPERCOP `crypto_aead/aes128n12t8silcv3/ref`,
/// `crypto_aead_encrypt`), which also decrypted each one back.
const SILC_REF: &[Vector] = &[
    Vector {
        ad: (1, 0x80),
        pt: (20, 0x01),
        ct: "3173990a445c18861697ad8621d63b628d220654ca4de6e64f9921eb",
    },
    Vector {
        ad: (16, 0xF3),
        pt: (16, 0x02),
        ct: "861de61901de0052d88b1fbe80dfe5420c83da77fe825aca",
    },
    Vector {
        ad: (16, 0x11),
        pt: (0, 0x00),
        ct: "49af7d9d5f377ff7",
    },
    Vector {
        ad: (16, 0x91),
        pt: (0, 0x00),
        ct: "97dded9681deb537",
    },
    Vector {
        ad: (17, 0xC5),
        pt: (31, 0x03),
        ct: concat!(
            "84e97064b11216aaa2153acf98acb7145f38f1396ddd46664b40d47276189753",
            "85a73741fe6d7f",
        ),
    },
    Vector {
        ad: (40, 0x99),
        pt: (100, 0x04),
        ct: concat!(
            "9a672b76eac1c7412c1f593026fbc9163d941121e814294fc3e73cb9558c6442",
            "1ed95da0a6ff74eccb50857a6e21214eb417d7fb98d20a2bd61b73ecda88dcd7",
            "0dc4b4f92b949869668794a05dbd8cf24075402e64155c27c66ae4717c79a80e",
            "28cebe3aee3605f4b4fed615",
        ),
    },
    Vector {
        ad: (48, 0x12),
        pt: (48, 0x05),
        ct: concat!(
            "a6a44f00336568a5bf72d501b45a4de284f4f9c529e7e1a92986a0bd837706fc",
            "3678c737cc667c6b8cc1bb6eb23a1522ceb8103b9cdf02d0",
        ),
    },
    Vector {
        ad: (0, 0x00),
        pt: (257, 0x06),
        ct: concat!(
            "56dfe0fbca5037a128c2cf93b460ef1863415d54c3ad388a02b98fa4640278b8",
            "30df0d7b035b38da7d6b006ac7b95f2049af2976234d6c8864894a1f22f97384",
            "4648d6dfb3a1aa4455096f3d21121d1b511630484dce2aa41d7c2f2940aeda96",
            "094617068c6f3e236d8fee95d99cdece5bb37d984079b632d5e25bb7c93243df",
            "aba126c63c8282330e486e44340925189c4cc93068300359223d560eec7cf2e9",
            "03d0762098acf49eec4bc34149948f8596bfa9311c30a56142a16ac293403e37",
            "5d2f97a087b54d9faa8143bf958f3520f27a06f69de36dd694aff5b853aafb1a",
            "12e747b3defec574ac7cd8f6be95ce819a468c8659a9fe89383d9c9bfca4829c",
            "a76eb163610182f1c4",
        ),
    },
    Vector {
        ad: (33, 0x21),
        pt: (300, 0x07),
        ct: concat!(
            "140b781b37e9fcfefdfd358d9c4e030c6adf298af84e2a81298b81d56bf8778d",
            "dfe071d4ec61abb2f9aefc3a80d82c4d87f77e13745faded4cc959c59572d6f4",
            "9845df9b0bb63ffc62aade4e4647affe1612b34ceae87037515da9b85f449876",
            "063fc4f1d9e620602748651ca4a32d70da525737c8b4d6d84f3ee4cd402fb063",
            "f303550b45d9ac5b800d3b01043cb9657c1eae0c88e7ef3c52e6f8aab42feff8",
            "a2aad4ef6e1b932ec106286facedc0aab8ea4fb295b708ad7a1ef2d7dd1274d4",
            "a978f821c916644f6dbd982bc904b0d0a7994e410cc5941fb2e66786f86c46df",
            "29f47b263884a5e0dd3ad24f82ecc3e399e6adfa02f6cb4a6f16183b03ae13ea",
            "cf9f2bcbf5f1c70324f37ef794ec4928029e6f26366d2330ab31fcbc1944d762",
            "ac4b9fcd9316833b045ed0f47197e1bc69d86be1",
        ),
    },
    Vector {
        ad: (15, 0xFF),
        pt: (1, 0x08),
        ct: "feb8712418a3196730",
    },
];

/// Every vector encrypted and decrypted as one batch (mixed in place and copied) at lane
/// counts 1, 3 and the default on every backend, and each alone.
fn check_vectors(alg: Algorithm, vectors: &[Vector]) {
    let key = AesKey::new(&pattern(16, 0x2b)).expect("key");
    let nonce = pattern(12, 0x5a);
    let ads: Vec<Vec<u8>> = vectors.iter().map(|v| pattern(v.ad.0, v.ad.1)).collect();
    let pts: Vec<Vec<u8>> = vectors.iter().map(|v| pattern(v.pt.0, v.pt.1)).collect();
    let cts: Vec<Vec<u8>> = vectors.iter().map(|v| unhex(v.ct)).collect();
    for lanes in [None, Some(1), Some(3)] {
        for engine in engines(lanes) {
            for path in [PathKind::Batch, PathKind::One] {
                let what = format!("{alg} {:?} lanes {lanes:?} {path:?}", engine.backend());
                let descs: Vec<JobDesc<'_>> = (0..vectors.len())
                    .map(|i| {
                        JobDesc::new(
                            &key,
                            &pts[i],
                            Hold::alternating(i, Op::Encrypt),
                            pts[i].len(),
                        )
                        .iv(&nonce)
                        .ad(&ads[i])
                        .tag(TagDesc::Out(8))
                    })
                    .collect();
                let o = run_jobs(&engine, alg, Op::Encrypt, path, &descs);
                for (i, ct) in cts.iter().enumerate() {
                    let n = o.results[i].clone().expect("encrypt");
                    let mut got = o.bufs[i][..n].to_vec();
                    got.extend_from_slice(&o.tags[i]);
                    assert_eq!(&got, ct, "{what}: vector {i}");
                }
                let descs: Vec<JobDesc<'_>> = (0..vectors.len())
                    .map(|i| {
                        let (c, t) = cts[i].split_at(cts[i].len() - 8);
                        JobDesc::new(&key, c, Hold::alternating(i, Op::Decrypt), c.len())
                            .iv(&nonce)
                            .ad(&ads[i])
                            .tag(TagDesc::In(t))
                    })
                    .collect();
                let o = run_jobs(&engine, alg, Op::Decrypt, path, &descs);
                for (i, pt) in pts.iter().enumerate() {
                    let n = o.results[i].clone().expect("decrypt");
                    assert_eq!(&o.bufs[i][..n], &pt[..], "{what}: vector {i}");
                }
            }
        }
    }
}

#[test]
fn genkat() {
    check_genkat(CLOC, "aes128-clocv3-n12-t8.txt");
}

#[test]
fn reference_code_answers() {
    check_vectors(CLOC, CLOC_REF);
}

#[test]
fn properties() {
    for seed in 1..=3 {
        check_properties(CLOC, seed, 40, 1000, &[1, 3, 8, 16]);
    }
}

/// Batches whose AD/nonce phase is one cipher call per job (no AD, or at most one block of
/// it) take the batch path's short encryption route: the same properties there, at lengths
/// with and without partial last blocks.
#[test]
fn properties_one_ad_block() {
    for (seed, max_ad) in [(4, 0), (5, 16), (6, 1)] {
        check_properties_ad(CLOC, seed, 40, 1000, max_ad, &[1, 3, 8, 16]);
    }
    check_properties_ad(CLOC, 7, 70, 40, 16, &[16]);
}

/// One job's result under `alg`/`op` with the given lengths (validation errors).
fn result_with(alg: Algorithm, op: Op, key_len: usize, nonce_len: usize, tag_len: usize) -> Error {
    let key = AesKey::new(&vec![7u8; key_len]).expect("key");
    let msg = [1u8; 20];
    let nonce = vec![2u8; nonce_len];
    let tag = vec![3u8; tag_len];
    let t = match op {
        Op::Encrypt => TagDesc::Out(tag_len),
        Op::Decrypt => TagDesc::In(&tag),
    };
    let d = JobDesc::new(&key, &msg, Hold::Copy, msg.len())
        .iv(&nonce)
        .ad(b"ad")
        .tag(t);
    let engine = &engines(None)[0];
    let (r, buf, _) = d.run_one(engine, alg, op);
    assert!(
        buf.iter().all(|&b| b == common::FILL),
        "{alg}: output written"
    );
    r.expect_err("invalid job accepted")
}

#[test]
fn bad_lengths_are_typed_errors() {
    for alg in [CLOC, SILC] {
        for op in [Op::Encrypt, Op::Decrypt] {
            for nonce_len in [11, 13] {
                assert_eq!(
                    result_with(alg, op, 16, nonce_len, 8),
                    Error::InvalidIvLength {
                        expected: 12,
                        got: nonce_len
                    },
                    "{alg} {op:?}"
                );
            }
            assert_eq!(
                result_with(alg, op, 16, 12, 16),
                Error::InvalidTagLength {
                    got: 16,
                    min: 8,
                    max: 8
                },
                "{alg} {op:?}"
            );
            assert_eq!(
                result_with(alg, op, 32, 12, 8),
                Error::InvalidKeyLength { got: 32 },
                "{alg} {op:?}"
            );
        }
    }
}

/// A batch of messages of 0..=70 bytes (every tail length, one to five blocks), some
/// forged: a flipped tag bit, or a flipped ciphertext bit in the first, a middle or the last
/// block. Forged jobs fail with their output zeroed (in place: the ciphertext is gone too);
/// every other job decrypts. On both paths, every backend, several lane counts.
#[test]
fn forgeries_fail_alone_with_zeroed_output() {
    for alg in [CLOC, SILC] {
        let keys = [
            AesKey::new(&[0x11; 16]).expect("key"),
            AesKey::new(&[0x22; 16]).expect("key"),
        ];
        let n = 71;
        let nonces: Vec<Vec<u8>> = (0..n).map(|i| pattern(12, i as u8)).collect();
        let ads: Vec<Vec<u8>> = (0..n).map(|i| pattern(i % 35, 0x80 ^ i as u8)).collect();
        let pts: Vec<Vec<u8>> = (0..n).map(|i| pattern(i, 3 * i as u8)).collect();
        let engine = &engines(Some(4))[0];
        let descs: Vec<JobDesc<'_>> = (0..n)
            .map(|i| {
                JobDesc::new(&keys[i % 2], &pts[i], Hold::alternating(i, Op::Encrypt), i)
                    .iv(&nonces[i])
                    .ad(&ads[i])
                    .tag(TagDesc::Out(8))
            })
            .collect();
        let enc = run_jobs(engine, alg, Op::Encrypt, PathKind::Batch, &descs);
        let forged = |i: usize| i % 3 == 1;
        let inputs: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| {
                let (mut c, mut t) = (enc.bufs[i].clone(), enc.tags[i].clone());
                if forged(i) {
                    match (i / 3) % 4 {
                        0 if !c.is_empty() => c[0] ^= 0x01,
                        1 if !c.is_empty() => {
                            let mid = c.len() / 2;
                            c[mid] ^= 0x40
                        }
                        2 if !c.is_empty() => *c.last_mut().expect("byte") ^= 0x80,
                        _ => t[i % 8] ^= 0x10,
                    }
                }
                (c, t)
            })
            .collect();
        for engine in engines(Some(3)).iter().chain(&engines(None)) {
            for path in [PathKind::Batch, PathKind::Sequential] {
                let descs: Vec<JobDesc<'_>> = (0..n)
                    .map(|i| {
                        let (c, t) = &inputs[i];
                        JobDesc::new(&keys[i % 2], c, Hold::alternating(i, Op::Decrypt), i)
                            .iv(&nonces[i])
                            .ad(&ads[i])
                            .tag(TagDesc::In(t))
                    })
                    .collect();
                let o = run_jobs(engine, alg, Op::Decrypt, path, &descs);
                for (i, pt) in pts.iter().enumerate().take(n) {
                    let what = format!("{alg} {:?} {path:?} job {i}", engine.backend());
                    if forged(i) {
                        assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what}");
                        assert_zeroed(&o.bufs[i], i, &what);
                        if Hold::alternating(i, Op::Decrypt) == Hold::InPlace && i > 0 {
                            assert!(o.bufs[i].iter().all(|&b| b == 0), "{what}: not zeroed");
                        }
                    } else {
                        assert_eq!(o.results[i], Ok(i), "{what}");
                        assert_eq!(&o.bufs[i], pt, "{what}");
                    }
                }
            }
        }
    }
}

/// Empty message and/or empty AD: the tag depends on every input (nonce, AD, key), an empty
/// message decrypts to nothing, and a wrong tag on it fails.
#[test]
fn empty_message_and_empty_ad() {
    for alg in [CLOC, SILC] {
        let key = AesKey::new(&[0x42; 16]).expect("key");
        let key2 = AesKey::new(&[0x43; 16]).expect("key");
        let engine = &engines(None)[0];
        let tag_of = |key: &AesKey, nonce: &[u8], ad: &[u8], pt: &[u8]| -> (Vec<u8>, Vec<u8>) {
            let d = JobDesc::new(key, pt, Hold::Copy, pt.len())
                .iv(nonce)
                .ad(ad)
                .tag(TagDesc::Out(8));
            let (r, buf, tag) = d.run_one(engine, alg, Op::Encrypt);
            assert_eq!(r, Ok(pt.len()));
            (buf, tag)
        };
        let n0 = [0u8; 12];
        let mut n1 = [0u8; 12];
        n1[11] = 1;
        let base = tag_of(&key, &n0, &[], &[]);
        assert_ne!(base.1, tag_of(&key2, &n0, &[], &[]).1, "{alg}: key");
        assert_ne!(base.1, tag_of(&key, &n1, &[], &[]).1, "{alg}: nonce");
        assert_ne!(base.1, tag_of(&key, &n0, &[0], &[]).1, "{alg}: AD 00");
        assert_ne!(base.1, tag_of(&key, &n0, &[0x80], &[]).1, "{alg}: AD 80");
        assert_ne!(base.1, tag_of(&key, &n0, &[], &[0]).1, "{alg}: message 00");
        // Empty AD, non-empty message; and the AD/message boundary matters.
        let (c, t) = tag_of(&key, &n0, &[], b"sixteen byte msg");
        assert_ne!(c, b"sixteen byte msg");
        assert_ne!(t, tag_of(&key, &n0, b"sixteen byte msg", &[]).1, "{alg}");
        for (tag, ok) in [(base.1.clone(), true), (vec![0; 8], false)] {
            let d = JobDesc::new(&key, &[], Hold::Copy, 0)
                .iv(&n0)
                .tag(TagDesc::In(&tag));
            let (r, _, _) = d.run_one(engine, alg, Op::Decrypt);
            let want = if ok {
                Ok(0)
            } else {
                Err(Error::AuthenticationFailed)
            };
            assert_eq!(r, want, "{alg}: empty message, tag ok = {ok}");
        }
    }
}

#[test]
fn silc_genkat() {
    check_genkat(SILC, "aes128-silcv3-n12-t8.txt");
}

#[test]
fn silc_reference_code_answers() {
    check_vectors(SILC, SILC_REF);
}

/// SILC batches without AD take the short encryption route (see `properties_one_ad_block`).
#[test]
fn silc_properties_no_ad() {
    for seed in [4, 5] {
        check_properties_ad(SILC, seed, 40, 1000, 0, &[1, 3, 8, 16]);
    }
    check_properties_ad(SILC, 7, 70, 40, 0, &[16]);
}

#[test]
fn silc_properties() {
    for seed in 11..=13 {
        check_properties(SILC, seed, 40, 1000, &[1, 3, 8, 16]);
    }
}

/// In-place decryption at every size of the keystream scratch (one comb group's in-place
/// bytes: the 1, 4 and 32 KiB stack arrays and the heap past them), in batches whose groups
/// reuse it (groups of 3, 16 and 20 lanes) and on the single path: every job decrypts to its
/// plaintext as the same job out of place does, and a forged job in each group of 16 fails
/// alone with its buffer zeroed.
#[test]
fn in_place_decryption_at_every_scratch_size() {
    for alg in [CLOC, SILC] {
        let key = AesKey::new(&[0x5e; 16]).expect("key");
        // (messages, bytes each): single messages of 1, 4, 32 KiB and more of keystream;
        // batches whose 16-lane groups hold 30 KiB and 48 KiB in place.
        for (n, len) in [
            (1, 1000),
            (1, 4000),
            (1, 32000),
            (1, 40000),
            (40, 1900),
            (40, 3001),
        ] {
            let nonces: Vec<Vec<u8>> = (0..n).map(|i| pattern(12, (7 * i) as u8)).collect();
            let pts: Vec<Vec<u8>> = (0..n).map(|i| pattern(len - i % 5, i as u8)).collect();
            let engine = &engines(None)[0];
            let enc_descs: Vec<JobDesc<'_>> = (0..n)
                .map(|i| {
                    JobDesc::new(&key, &pts[i], Hold::Copy, len)
                        .iv(&nonces[i])
                        .tag(TagDesc::Out(8))
                })
                .collect();
            let enc = run_jobs(engine, alg, Op::Encrypt, PathKind::Batch, &enc_descs);
            // One forgery in each group of 16 (and the single message left intact).
            let forged = |i: usize| n > 1 && i % 16 == 5;
            let cts: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    let mut c = enc.bufs[i][..pts[i].len()].to_vec();
                    if forged(i) {
                        c[len / 2] ^= 0x04;
                    }
                    c
                })
                .collect();
            // Default lanes (16), 3, and 20 (groups wider than 16).
            let all: Vec<_> = [None, Some(3), Some(20)]
                .into_iter()
                .flat_map(engines)
                .collect();
            for engine in &all {
                for path in [PathKind::Batch, PathKind::Sequential] {
                    for hold in [Hold::InPlace, Hold::Copy] {
                        let descs: Vec<JobDesc<'_>> = (0..n)
                            .map(|i| {
                                JobDesc::new(&key, &cts[i], hold, len)
                                    .iv(&nonces[i])
                                    .tag(TagDesc::In(&enc.tags[i]))
                            })
                            .collect();
                        let o = run_jobs(engine, alg, Op::Decrypt, path, &descs);
                        for (i, pt) in pts.iter().enumerate() {
                            let what = format!(
                                "{alg} {:?} {path:?} {hold:?} {n} x {len}: job {i}",
                                engine.backend()
                            );
                            let m = pt.len();
                            if forged(i) {
                                assert_eq!(
                                    o.results[i],
                                    Err(Error::AuthenticationFailed),
                                    "{what}"
                                );
                                assert_zeroed(&o.bufs[i], m, &what);
                            } else {
                                assert_eq!(o.results[i], Ok(m), "{what}");
                                assert_eq!(&o.bufs[i][..m], &pt[..], "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
}
