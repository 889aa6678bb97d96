//! AES-GCM known answers and properties: the GCM specification's test cases 1–18
//! (McGrew–Viega, Appendix B; 1–6 AES-128, 7–12 AES-192, 13–18 AES-256; 8-byte IVs in cases
//! 5, 11, 17 and 60-byte IVs in 6, 12, 18) through every backend, the single path and batches
//! at several lane counts; truncated tags; verify-then-decrypt; the 32-bit counter wrapping
//! inside a message (a nonce chosen so that J0's low word is 2^32 - 2); one key shared by
//! threads on its first GCM use.

mod common;

use comb::gf128::gf_mul;
use comb::{AesKey, Algorithm, Engine, Error, Job, JobResult, Op, Tag};
use common::{
    bytes, engines, reference_gcm, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc, FILL,
};

const GCM: Algorithm = Algorithm::AesGcm;

/// The inputs of a test case of the GCM specification (hex).
struct Input {
    /// The all-zero key, or [`KEY`].
    zero_key: bool,
    iv: &'static str,
    ad: &'static str,
    pt: &'static str,
}

/// Test case 3's plaintext (64 bytes).
const PT64: &str = concat!(
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72",
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
);
/// Its first 60 bytes: the plaintext of test cases 4–6.
const PT60: &str = PT64.split_at(120).0;
/// The AD of test cases 4–6.
const AD: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";

/// The GCM specification's Appendix B, the inputs of test cases 1–6; cases 7–12 and 13–18
/// repeat them with 192- and 256-bit keys.
const INPUTS: [Input; 6] = [
    Input {
        zero_key: true,
        iv: "000000000000000000000000",
        ad: "",
        pt: "",
    },
    Input {
        zero_key: true,
        iv: "000000000000000000000000",
        ad: "",
        pt: "00000000000000000000000000000000",
    },
    Input {
        zero_key: false,
        iv: "cafebabefacedbaddecaf888",
        ad: "",
        pt: PT64,
    },
    Input {
        zero_key: false,
        iv: "cafebabefacedbaddecaf888",
        ad: AD,
        pt: PT60,
    },
    Input {
        zero_key: false,
        iv: "cafebabefacedbad",
        ad: AD,
        pt: PT60,
    },
    Input {
        zero_key: false,
        iv: concat!(
            "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728",
            "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b"
        ),
        ad: AD,
        pt: PT60,
    },
];

/// The non-zero key of the specification's cases, cut to the key size.
const KEY: &str = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";

/// The known answers of test cases 1–18 (public): ciphertext and tag.
const ANSWERS: [(&str, &str); 18] = [
    ("", "58e2fccefa7e3061367f1d57a4e7455a"),
    (
        "0388dace60b6a392f328c2b971b2fe78",
        "ab6e47d42cec13bdf53a67b21257bddf",
    ),
    (
        concat!(
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e",
            "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
        ),
        "4d5c2af327cd64a62cf35abd2ba6fab4",
    ),
    (
        concat!(
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e",
            "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
        ),
        "5bc94fbc3221a5db94fae95ae7121a47",
    ),
    (
        concat!(
            "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423",
            "73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598"
        ),
        "3612d2e79e3b0785561be14aaca2fccb",
    ),
    (
        concat!(
            "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7",
            "01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5"
        ),
        "619cc5aefffe0bfa462af43c1699d050",
    ),
    ("", "cd33b28ac773f74ba00ed1f312572435"),
    (
        "98e7247c07f0fe411c267e4384b0f600",
        "2ff58d80033927ab8ef4d4587514f0fb",
    ),
    (
        concat!(
            "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c",
            "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256"
        ),
        "9924a7c8587336bfb118024db8674a14",
    ),
    (
        concat!(
            "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c",
            "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710"
        ),
        "2519498e80f1478f37ba55bd6d27618c",
    ),
    (
        concat!(
            "0f10f599ae14a154ed24b36e25324db8c566632ef2bbb34f8347280fc4507057",
            "fddc29df9a471f75c66541d4d4dad1c9e93a19a58e8b473fa0f062f7"
        ),
        "65dcc57fcf623a24094fcca40d3533f8",
    ),
    (
        concat!(
            "d27e88681ce3243c4830165a8fdcf9ff1de9a1d8e6b447ef6ef7b79828666e45",
            "81e79012af34ddd9e2f037589b292db3e67c036745fa22e7e9b7373b"
        ),
        "dcf566ff291c25bbb8568fc3d376a6d9",
    ),
    ("", "530f8afbc74536b9a963b4f1c4cb738b"),
    (
        "cea7403d4d606b6e074ec5d3baf39d18",
        "d0d1c8a799996bf0265b98b5d48ab919",
    ),
    (
        concat!(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa",
            "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
        ),
        "b094dac5d93471bdec1a502270e3cc6c",
    ),
    (
        concat!(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa",
            "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
        ),
        "76fc6ece0f4e1768cddf8853bb2d551b",
    ),
    (
        concat!(
            "c3762df1ca787d32ae47c13bf19844cbaf1ae14d0b976afac52ff7d79bba9de0",
            "feb582d33934a4f0954cc2363bc73f7862ac430e64abe499f47c9b1f"
        ),
        "3a337dbf46a792c45e454913fe2ea8f2",
    ),
    (
        concat!(
            "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4",
            "0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f"
        ),
        "a44a8266ee1c8eb0c8b5d4cf5ae9f19a",
    ),
];

/// A decoded test case.
struct Case {
    case: usize,
    key: AesKey,
    key_bytes: Vec<u8>,
    iv: Vec<u8>,
    ad: Vec<u8>,
    pt: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

impl Case {
    /// This case's job in direction `op`: its plaintext (encryption) or ciphertext (decryption)
    /// held as `hold` in a buffer with `room` bytes after the message, with its nonce and AD
    /// and `tag`.
    fn job<'a>(&'a self, op: Op, hold: Hold, room: usize, tag: TagDesc<'a>) -> JobDesc<'a> {
        let input = match op {
            Op::Encrypt => &self.pt,
            Op::Decrypt => &self.ct,
        };
        JobDesc::new(&self.key, input, hold, input.len() + room)
            .iv(&self.iv)
            .ad(&self.ad)
            .tag(tag)
    }

    /// [`Case::job`] without room, alone through the single path: its result, data buffer and
    /// tag buffer.
    fn run(
        &self,
        e: &Engine,
        op: Op,
        hold: Hold,
        tag: TagDesc<'_>,
    ) -> (JobResult, Vec<u8>, Vec<u8>) {
        self.job(op, hold, 0, tag).run_one(e, GCM, op)
    }
}

fn cases() -> Vec<Case> {
    ANSWERS
        .iter()
        .enumerate()
        .map(|(i, (ct, tag))| {
            let input = &INPUTS[i % 6];
            let key_len = [16, 24, 32][i / 6];
            let key_bytes = if input.zero_key {
                vec![0; key_len]
            } else {
                unhex(&KEY[..2 * key_len])
            };
            Case {
                case: i + 1,
                key: AesKey::new(&key_bytes).unwrap(),
                key_bytes,
                iv: unhex(input.iv),
                ad: unhex(input.ad),
                pt: unhex(input.pt),
                ct: unhex(ct),
                tag: unhex(tag),
            }
        })
        .collect()
}

#[test]
fn spec_table_is_complete_and_agrees_with_rustcrypto() {
    let cs = cases();
    assert_eq!(cs.len(), 18);
    for (i, c) in cs.iter().enumerate() {
        assert_eq!(c.case, i + 1);
        assert_eq!(c.key_bytes.len(), [16, 24, 32][i / 6], "case {}", c.case);
        let iv_len = match i % 6 {
            4 => 8,
            5 => 60,
            _ => 12,
        };
        assert_eq!(c.iv.len(), iv_len, "case {}", c.case);
        let (ct, tag) = reference_gcm(&c.key_bytes, &c.iv, &c.ad, &c.pt);
        assert_eq!(
            (ct, tag.to_vec()),
            (c.ct.clone(), c.tag.clone()),
            "case {}",
            c.case
        );
    }
}

/// Every case alone through the single path, every backend: encryption (copy and in place)
/// gives the ciphertext and tag, decryption (copy and in place) the plaintext, and every
/// allowed truncation of the tag verifies.
#[test]
fn spec_cases_single_path() {
    for e in engines(None) {
        for c in cases() {
            let what = format!("case {} ({})", c.case, e.backend());
            let len = c.pt.len();
            for hold in [Hold::Copy, Hold::InPlace] {
                let what = format!("{what} {hold:?}");
                let (r, out, tag) = c.run(&e, Op::Encrypt, hold, TagDesc::Out(16));
                assert_eq!(r, Ok(len), "{what}");
                assert_eq!(out, c.ct, "{what}: ciphertext");
                assert_eq!(tag, c.tag, "{what}: tag");
                let (r, out, _) = c.run(&e, Op::Decrypt, hold, TagDesc::In(&c.tag));
                assert_eq!((r, out), (Ok(len), c.pt.clone()), "{what}: decrypt");
            }
            for &n in GCM.allowed_tag_lens() {
                let (r, out, _) = c.run(&e, Op::Decrypt, Hold::Copy, TagDesc::In(&c.tag[..n]));
                assert_eq!(r, Ok(len), "{what}: decrypt, {n}-byte tag");
                assert_eq!(out, c.pt, "{what}: plaintext");
                // Generation of the truncated tag gives its prefix.
                let (r, _, t) = c.run(&e, Op::Encrypt, Hold::InPlace, TagDesc::Out(n));
                assert_eq!((r, &t[..]), (Ok(len), &c.tag[..n]), "{what}: {n}-byte tag");
            }
        }
    }
}

/// What a failed verification must leave: `AuthenticationFailed`, and the output's message
/// bytes zeroed (nothing decrypted), the room after it untouched.
fn assert_rejected(r: &JobResult, out: &[u8], len: usize, what: &str) {
    assert_eq!(r, &Err(Error::AuthenticationFailed), "{what}");
    assert!(
        out[..len].iter().all(|&b| b == 0),
        "{what}: output not zeroed"
    );
    assert!(
        out[len..].iter().all(|&b| b == FILL),
        "{what}: wrote past the message"
    );
}

/// All 18 cases as one batch (three key sizes mixed, three nonce lengths), encryption then
/// decryption, at several lane counts on every backend; then the same batch with a flipped
/// bit in the tag, the ciphertext or the AD of every other job: those fail, the others pass.
#[test]
fn spec_cases_as_one_batch() {
    let cs = cases();
    for lanes in [None, Some(1), Some(3), Some(8), Some(16), Some(32)] {
        for e in engines(lanes) {
            let what = |c: &Case| format!("case {} ({}, lanes {lanes:?})", c.case, e.backend());
            // Encryption, odd cases in place.
            let descs: Vec<JobDesc<'_>> = cs
                .iter()
                .map(|c| {
                    let hold = Hold::alternating(c.case, Op::Encrypt);
                    c.job(Op::Encrypt, hold, 0, TagDesc::Out(16))
                })
                .collect();
            let o = run_jobs(&e, GCM, Op::Encrypt, PathKind::Batch, &descs);
            for (i, c) in cs.iter().enumerate() {
                assert_eq!(o.results[i], Ok(c.pt.len()), "{}", what(c));
                assert_eq!(o.bufs[i], c.ct, "{}: ciphertext", what(c));
                assert_eq!(o.tags[i], c.tag, "{}: tag", what(c));
            }

            // Decryption, even cases in place; every third job corrupted (tag, ciphertext or
            // AD), in rotation.
            for corrupt in [false, true] {
                let mut inputs: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = Vec::new(); // ct, ad, tag
                let mut bad = Vec::new();
                for (i, c) in cs.iter().enumerate() {
                    let (mut ct, mut ad, mut tag) = (c.ct.clone(), c.ad.clone(), c.tag.clone());
                    let this_bad = corrupt && i % 3 != 1;
                    if this_bad {
                        match i % 3 {
                            0 => tag[i % 16] ^= 0x80,
                            _ if !ct.is_empty() => {
                                let at = i % ct.len();
                                ct[at] ^= 1
                            }
                            _ if !ad.is_empty() => ad[0] ^= 0x10,
                            _ => tag[15] ^= 1,
                        }
                    }
                    bad.push(this_bad);
                    inputs.push((ct, ad, tag));
                }
                let descs: Vec<JobDesc<'_>> = cs
                    .iter()
                    .zip(&inputs)
                    .map(|(c, (ct, ad, tag))| {
                        let hold = Hold::alternating(c.case, Op::Decrypt);
                        JobDesc::new(&c.key, ct, hold, ct.len() + 5)
                            .iv(&c.iv)
                            .ad(ad)
                            .tag(TagDesc::In(tag))
                    })
                    .collect();
                let o = run_jobs(&e, GCM, Op::Decrypt, PathKind::Batch, &descs);
                let (r, bufs) = (&o.results, &o.bufs);
                for (i, c) in cs.iter().enumerate() {
                    let w = format!("{} corrupt={}", what(c), bad[i]);
                    if bad[i] {
                        assert_rejected(&r[i], &bufs[i], c.ct.len(), &w);
                    } else {
                        assert_eq!(r[i], Ok(c.pt.len()), "{w}");
                        assert_eq!(bufs[i][..c.pt.len()], c.pt[..], "{w}: plaintext");
                        assert!(bufs[i][c.pt.len()..].iter().all(|&b| b == FILL), "{w}");
                    }
                }
            }
        }
    }
}

/// Every job shares one key handle (the shared-key fast path of the batched E(J0) call), with
/// 12-byte and hashed nonces mixed; batch == single == RustCrypto.
#[test]
fn shared_key_batch() {
    let kb = bytes(5, 24);
    let key = AesKey::new(&kb).unwrap();
    let n = 70; // more than one chunk of the batched E(J0) call
    let nonces: Vec<Vec<u8>> = (0..n)
        .map(|i| bytes(100 + i as u64, if i % 3 == 0 { 16 } else { 12 }))
        .collect();
    let ads: Vec<Vec<u8>> = (0..n).map(|i| bytes(200 + i as u64, i % 40)).collect();
    let msgs: Vec<Vec<u8>> = (0..n)
        .map(|i| bytes(300 + i as u64, (i * 37) % 600))
        .collect();
    for e in [None, Some(4), Some(16)].into_iter().flat_map(engines) {
        let mut bufs = msgs.clone();
        let mut tags = vec![[0u8; 16]; n];
        let mut jobs: Vec<Job<'_>> = bufs
            .iter_mut()
            .zip(tags.iter_mut())
            .enumerate()
            .map(|(i, (b, t))| {
                Job::in_place(&key, b)
                    .with_iv(&nonces[i])
                    .with_ad(&ads[i])
                    .with_tag(Tag::Out(t))
            })
            .collect();
        let r = e.process(GCM, Op::Encrypt, &mut jobs);
        drop(jobs);
        for i in 0..n {
            let (ct, tag) = reference_gcm(&kb, &nonces[i], &ads[i], &msgs[i]);
            assert_eq!(r[i], Ok(msgs[i].len()), "job {i}");
            assert_eq!(
                (&bufs[i], &tags[i]),
                (&ct, &tag),
                "job {i} ({})",
                e.backend()
            );
        }
    }
}

/// The inverse of `a` in the GCM field: `a^(2^128 - 2)`.
fn gf_inv(a: &[u8; 16]) -> [u8; 16] {
    let mut one = [0u8; 16];
    one[0] = 0x80;
    let mut r = one;
    for bit in (0..128).rev() {
        r = gf_mul(&r, &r);
        if bit != 0 {
            r = gf_mul(&r, a);
        }
    }
    r
}

/// A 16-byte nonce whose J0 = GHASH_H(IV || 0^64 || [128]_64) = `target`: J0 = IV·H^2 ^ L·H,
/// so IV = (target ^ L·H) · (H^2)^-1.
fn nonce_for_j0(key: &AesKey, target: &[u8; 16]) -> [u8; 16] {
    let mut h = [0u8; 16];
    key.encrypt_block(&mut h);
    let mut l = [0u8; 16];
    l[15] = 128; // [0]_64 || [128 bits]_64
    let lh = gf_mul(&l, &h);
    let x: [u8; 16] = core::array::from_fn(|i| target[i] ^ lh[i]);
    gf_mul(&x, &gf_inv(&gf_mul(&h, &h)))
}

/// GCM's counter is `inc32`: with J0's low word at 2^32 - 2 (made so by choosing the nonce),
/// the first data block uses low word 2^32 - 1 and the second wraps to 0 with the 96 fixed
/// bits unchanged. Lengths put the wrap in the wide kernels' main loops, their tails and the
/// partial block; every backend, batch and single path, against RustCrypto (which also
/// increments 32 bits) and against the block cipher directly.
#[test]
fn counter_wraps_mod_2_32_inside_a_message() {
    for klen in [16usize, 24, 32] {
        let kb = bytes(klen as u64 + 77, klen);
        let key = AesKey::new(&kb).unwrap();
        for low in [0xffff_fffeu32, 0xffff_fff0, 0xffff_ff80, 0xffff_ffff] {
            let mut target = [0xffu8; 16];
            target[..4].copy_from_slice(&[0x12, 0x34, 0x56, 0x78]);
            target[12..].copy_from_slice(&low.to_be_bytes());
            let nonce = nonce_for_j0(&key, &target);
            // The block after the wrap, by the block cipher: E(fixed || 00000000).
            let mut after = target;
            after[12..].copy_from_slice(&[0; 4]);
            let blocks_before = u32::MAX - low; // data blocks before the wrap
            key.encrypt_block(&mut after);
            for len in [1usize, 16, 17, 32, 33, 100, 255, 256, 257, 300, 1000, 4100] {
                let msg = bytes(len as u64, len);
                let (want_ct, want_tag) = reference_gcm(&kb, &nonce, b"ad", &msg);
                let at = 16 * blocks_before as usize;
                if len >= at + 16 {
                    let ks: Vec<u8> = (0..16).map(|i| want_ct[at + i] ^ msg[at + i]).collect();
                    assert_eq!(ks, after, "the reference wraps within 32 bits");
                }
                for e in [None, Some(1), Some(16)].into_iter().flat_map(engines) {
                    let what = format!("key {klen} low {low:#x} len {len} ({})", e.backend());
                    let mut a = msg.clone();
                    let mut other = bytes(9, 50);
                    let (mut ta, mut to) = ([0u8; 16], [0u8; 16]);
                    let mut jobs = vec![
                        Job::in_place(&key, &mut other)
                            .with_iv(&[7; 12])
                            .with_tag(Tag::Out(&mut to)),
                        Job::in_place(&key, &mut a)
                            .with_iv(&nonce)
                            .with_ad(b"ad")
                            .with_tag(Tag::Out(&mut ta)),
                    ];
                    let r = e.process(GCM, Op::Encrypt, &mut jobs);
                    drop(jobs);
                    assert_eq!(r, vec![Ok(50), Ok(len)], "{what}");
                    assert!(
                        a == want_ct,
                        "{what}: first difference at {:?}",
                        a.iter().zip(&want_ct).position(|(x, y)| x != y)
                    );
                    assert_eq!(ta, want_tag, "{what}: tag");
                    // Single path, decryption.
                    let mut p = vec![0u8; len];
                    let r = e.process_one(
                        GCM,
                        Op::Decrypt,
                        Job::copy(&key, &want_ct, &mut p)
                            .with_iv(&nonce)
                            .with_ad(b"ad")
                            .with_tag(Tag::In(&want_tag)),
                    );
                    assert_eq!((r, &p), (Ok(len), &msg), "{what}: decrypt");
                }
            }
        }
    }
}

/// A fresh key shared by several threads whose first GCM jobs race to make its hash key: all
/// results agree with RustCrypto.
#[test]
fn hash_key_made_once_under_contention() {
    let kb = bytes(1234, 32);
    let key = AesKey::new(&kb).unwrap();
    let (want_ct, want_tag) = reference_gcm(&kb, &[3; 12], b"x", &bytes(8, 100));
    let e = &engines(None)[0];
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut m = bytes(8, 100);
                    let mut t = [0u8; 16];
                    let r = e.process_one(
                        GCM,
                        Op::Encrypt,
                        Job::in_place(&key, &mut m)
                            .with_iv(&[3; 12])
                            .with_ad(b"x")
                            .with_tag(Tag::Out(&mut t)),
                    );
                    assert_eq!((r, &m, t), (Ok(100), &want_ct, want_tag));
                }
            });
        }
    });
}

/// Decryption verifies before it decrypts: a wrong tag leaves no plaintext anywhere — out of
/// place the output holds zeros, in place the ciphertext is replaced by zeros — and a
/// generated tag is never written by a failed job (nor by any decryption).
#[test]
fn failed_verification_writes_no_plaintext() {
    let c = &cases()[2]; // 64-byte message
    for e in engines(None) {
        for n in [16usize, 12, 8, 4] {
            let mut tag = c.tag[..n].to_vec();
            tag[n - 1] ^= 1;
            for hold in [Hold::Copy, Hold::InPlace] {
                let (r, out, _) =
                    c.job(Op::Decrypt, hold, 3, TagDesc::In(&tag))
                        .run_one(&e, GCM, Op::Decrypt);
                assert_rejected(&r, &out, c.ct.len(), &format!("{hold:?}"));
            }
        }
        // Wrong nonce, wrong key, wrong AD, truncated ciphertext: all rejected.
        let other_key = AesKey::new(&bytes(1, 16)).unwrap();
        // (key, nonce, AD, ciphertext)
        let variants: Vec<Variant<'_>> = vec![
            (&c.key, bytes(2, 12), c.ad.clone(), c.ct.clone()),
            (&other_key, c.iv.clone(), c.ad.clone(), c.ct.clone()),
            (&c.key, c.iv.clone(), b"x".to_vec(), c.ct.clone()),
            (&c.key, c.iv.clone(), c.ad.clone(), c.ct[..63].to_vec()),
            (
                &c.key,
                c.iv.clone(),
                c.ad.clone(),
                [&c.ct[..], &[0]].concat(),
            ),
        ];
        for (i, (k, iv, ad, ct)) in variants.iter().enumerate() {
            let (r, out, _) = JobDesc::new(k, ct, Hold::Copy, ct.len())
                .iv(iv)
                .ad(ad)
                .tag(TagDesc::In(&c.tag))
                .run_one(&e, GCM, Op::Decrypt);
            assert_rejected(&r, &out, ct.len(), &format!("variant {i}"));
        }
    }
}

/// A decryption input: key, nonce, AD, ciphertext.
type Variant<'a> = (&'a AesKey, Vec<u8>, Vec<u8>, Vec<u8>);

/// Zero-length messages with and without AD, every allowed tag length, both directions.
#[test]
fn empty_messages() {
    let kb = bytes(4, 16);
    let key = AesKey::new(&kb).unwrap();
    for e in engines(None) {
        for ad_len in [0usize, 1, 16, 17, 300] {
            let ad = bytes(ad_len as u64, ad_len);
            let (_, full) = reference_gcm(&kb, &[9; 12], &ad, &[]);
            for &n in GCM.allowed_tag_lens() {
                let mut t = vec![0u8; n];
                let r = e.process_one(
                    GCM,
                    Op::Encrypt,
                    Job::in_place(&key, &mut [])
                        .with_iv(&[9; 12])
                        .with_ad(&ad)
                        .with_tag(Tag::Out(&mut t)),
                );
                assert_eq!((r, &t[..]), (Ok(0), &full[..n]));
                let r = e.process_one(
                    GCM,
                    Op::Decrypt,
                    Job::copy(&key, &[], &mut [])
                        .with_iv(&[9; 12])
                        .with_ad(&ad)
                        .with_tag(Tag::In(&t)),
                );
                assert_eq!(r, Ok(0));
            }
        }
    }
}

/// The CAESAR genkat file of AES-128-GCM (1089 records) on both paths and every backend.
#[test]
fn genkat_file() {
    common::aead::check_genkat(Algorithm::AesGcm, "aes128-gcm-n12-t16.txt");
}

/// Batch = sequential = one by one, round trip and forgeries on random mixed batches.
#[test]
fn random_batches() {
    for seed in 1..4 {
        common::aead::check_properties(Algorithm::AesGcm, seed, 37, 700, &[1, 4, 8, 16]);
    }
}

/// Associated data of every length class the GHASH kernels distinguish (none, a partial
/// block, whole blocks, up to and past sixteen blocks and their multiples, where the zmm
/// backend switches from its one-reduction tail to sixteen-block groups) beside messages of
/// several lengths: batch path and single path, every backend, against RustCrypto; and
/// decryption of each gives the plaintext back.
#[test]
fn associated_data_lengths_against_rustcrypto() {
    let kb = bytes(77, 16);
    let key = AesKey::new(&kb).unwrap();
    let ad_lens = [
        0usize, 1, 12, 13, 15, 16, 17, 31, 32, 33, 240, 241, 255, 256, 257, 300, 511, 512, 513,
        1000,
    ];
    let msg_lens = [0usize, 1, 16, 64, 100, 255, 256, 1500];
    let mut cases = Vec::new();
    for (i, &a) in ad_lens.iter().enumerate() {
        for (j, &m) in msg_lens.iter().enumerate() {
            let seed = (i * 100 + j) as u64;
            cases.push((
                bytes(seed, 12),
                bytes(seed + 5000, a),
                bytes(seed + 9000, m),
            ));
        }
    }
    let want: Vec<(Vec<u8>, [u8; 16])> = cases
        .iter()
        .map(|(n, a, p)| reference_gcm(&kb, n, a, p))
        .collect();
    for e in engines(None) {
        for path in [PathKind::Batch, PathKind::One] {
            let descs: Vec<JobDesc<'_>> = cases
                .iter()
                .enumerate()
                .map(|(i, (n, a, p))| {
                    JobDesc::new(&key, p, Hold::alternating(i, Op::Encrypt), p.len())
                        .iv(n)
                        .ad(a)
                        .tag(TagDesc::Out(16))
                })
                .collect();
            let what = |i: usize| {
                let (_, a, p) = &cases[i];
                let b = e.backend();
                format!("{b} {path:?}: AD {} B, message {} B", a.len(), p.len())
            };
            let o = run_jobs(&e, GCM, Op::Encrypt, path, &descs);
            for (i, ((_, _, p), (ct, tag))) in cases.iter().zip(&want).enumerate() {
                let what = what(i);
                assert_eq!(o.results[i], Ok(p.len()), "{what}");
                assert_eq!(&o.bufs[i][..p.len()], &ct[..], "{what}: ciphertext");
                assert_eq!(&o.tags[i][..], &tag[..], "{what}: tag");
            }
            let descs: Vec<JobDesc<'_>> = cases
                .iter()
                .zip(&want)
                .enumerate()
                .map(|(i, ((n, a, _), (ct, tag)))| {
                    JobDesc::new(&key, ct, Hold::alternating(i, Op::Decrypt), ct.len())
                        .iv(n)
                        .ad(a)
                        .tag(TagDesc::In(tag))
                })
                .collect();
            let o = run_jobs(&e, GCM, Op::Decrypt, path, &descs);
            for (i, (_, _, p)) in cases.iter().enumerate() {
                let what = what(i);
                assert_eq!(o.results[i], Ok(p.len()), "{what}");
                assert_eq!(&o.bufs[i][..p.len()], &p[..], "{what}: plaintext");
            }
        }
    }
}
