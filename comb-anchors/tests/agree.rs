//! Every anchor agrees with every other, with the Comb library and with published vectors
//! (NIST SP 800-38A, RFC 4493, SP 800-38B), on random batches of every algorithm it supports.
//!
//! Needs all three anchors, i.e. the default features (`openssl`, `ipsec-mb`).
#![cfg(all(feature = "openssl", feature = "ipsec-mb"))]

use comb_anchors::{ipsec_mb_arch, open, Anchor, Msg, NAMES};

const ALGS: &[&str] = &[
    "aes-ecb",
    "aes-cbc",
    "aes-cbc-pkcs7",
    "aes-ctr",
    "aes-cfb128",
    "aes-ofb",
    "aes-cmac",
];

fn h(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).expect("test vector hex")
}

/// splitmix64: deterministic test data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// An owned message (the anchors take borrowed [`Msg`]s).
#[derive(Clone)]
struct Owned {
    key: Vec<u8>,
    iv: Vec<u8>,
    input: Vec<u8>,
    /// Associated data (AEAD modes; empty otherwise).
    ad: Vec<u8>,
}

fn borrow(msgs: &[Owned]) -> Vec<Msg<'_>> {
    msgs.iter()
        .map(|m| Msg {
            key: &m.key,
            iv: &m.iv,
            input: &m.input,
            ad: &m.ad,
        })
        .collect()
}

fn open_all() -> Vec<Box<dyn Anchor>> {
    NAMES
        .iter()
        .map(|n| open(n).unwrap_or_else(|e| panic!("open({n}): {e}")))
        .collect()
}

/// Prepares and runs `msgs` twice on `a`; both runs must give the same outputs.
fn run(
    a: &mut dyn Anchor,
    alg: &str,
    encrypt: bool,
    msgs: &[Owned],
) -> Result<Vec<Vec<u8>>, String> {
    a.prepare(alg, encrypt, &borrow(msgs))?;
    a.run()?;
    let first = a.outputs().to_vec();
    a.run()?;
    assert_eq!(
        a.outputs(),
        &first[..],
        "{}: {alg} encrypt={encrypt}: a second run() changed the outputs",
        a.name()
    );
    assert_eq!(first.len(), msgs.len());
    Ok(first)
}

/// The Comb library's answer for one message.
fn comb_one(alg: &str, encrypt: bool, m: &Owned) -> Vec<u8> {
    let engine = comb::Engine::new().expect("comb engine");
    let a = comb::Algorithm::from_id(alg).expect("comb algorithm");
    let key = comb::AesKey::new(&m.key).expect("comb key");
    let iv: &[u8] = if a.iv_len() == 0 { &[] } else { &m.iv };
    if alg == "aes-cmac" {
        let mut tag = [0u8; 16];
        engine
            .process_one(
                a,
                comb::Op::Encrypt,
                comb::Job::mac(&key, &m.input).with_tag(comb::Tag::Out(&mut tag)),
            )
            .expect("comb cmac");
        return tag.to_vec();
    }
    let op = if encrypt {
        comb::Op::Encrypt
    } else {
        comb::Op::Decrypt
    };
    let mut out = vec![0u8; m.input.len() + 16];
    let n = engine
        .process_one(a, op, comb::Job::copy(&key, &m.input, &mut out).with_iv(iv))
        .expect("comb process_one");
    out.truncate(n);
    out
}

/// Whether `anchor` is expected to refuse this batch although it supports the algorithm.
fn expected_refusal(anchor: &str, alg: &str, msgs: &[Owned]) -> bool {
    let wraps32 = |m: &Owned| {
        let low = u32::from_be_bytes([m.iv[12], m.iv[13], m.iv[14], m.iv[15]]);
        let blocks = m.input.len().div_ceil(16) as u64;
        blocks > 0 && u64::from(low) + blocks - 1 > u64::from(u32::MAX)
    };
    anchor == "ipsec-mb"
        && match alg {
            // ipsec-mb's CMAC has 128- and 256-bit key variants only.
            "aes-cmac" => msgs.iter().any(|m| m.key.len() == 24),
            // ipsec-mb's CTR increments only the low 32 bits of the counter block.
            "aes-ctr" => msgs.iter().any(wraps32),
            _ => false,
        }
}

/// Runs `msgs` on every anchor supporting `alg`/`encrypt`, checks that all of them (and Comb)
/// agree, and returns the common outputs.
fn agree(
    anchors: &mut [Box<dyn Anchor>],
    alg: &str,
    encrypt: bool,
    msgs: &[Owned],
) -> Vec<Vec<u8>> {
    let mut reference: Option<(&'static str, Vec<Vec<u8>>)> = None;
    let mut ran = 0;
    for a in anchors.iter_mut() {
        if !a.supports(alg, encrypt) {
            assert!(a.prepare(alg, encrypt, &borrow(msgs)).is_err());
            continue;
        }
        let name = a.name();
        let result = run(a.as_mut(), alg, encrypt, msgs);
        if expected_refusal(name, alg, msgs) {
            assert!(result.is_err(), "{name}: {alg}: expected a refusal");
            continue;
        }
        let out = result.unwrap_or_else(|e| panic!("{name}: {alg} encrypt={encrypt}: {e}"));
        ran += 1;
        match &reference {
            None => reference = Some((name, out)),
            Some((rname, rout)) => {
                for (i, (x, y)) in out.iter().zip(rout).enumerate() {
                    assert_eq!(
                        hex::encode(x),
                        hex::encode(y),
                        "{alg} encrypt={encrypt} message {i} ({} bytes, key {} bytes): {name} \
                         disagrees with {rname}",
                        msgs[i].input.len(),
                        msgs[i].key.len()
                    );
                }
            }
        }
    }
    assert!(
        ran >= 2,
        "{alg} encrypt={encrypt}: fewer than two anchors ran"
    );
    let (_, out) = reference.expect("at least one anchor");
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(
            hex::encode(&out[i]),
            hex::encode(comb_one(alg, encrypt, m)),
            "{alg} encrypt={encrypt} message {i}: anchors disagree with comb"
        );
    }
    out
}

fn lengths(alg: &str, encrypt: bool) -> &'static [usize] {
    match (alg, encrypt) {
        ("aes-ecb" | "aes-cbc", _) => &[0, 16, 32, 48, 64, 128, 256, 1024, 4096, 4112],
        ("aes-cbc-pkcs7", false) => &[16, 32, 48, 256, 1024],
        _ => &[0, 1, 15, 16, 17, 31, 33, 64, 100, 255, 1000, 4097],
    }
}

/// A batch of `count` messages. `key`: one shared key, else a fresh key (of a random size) per
/// message. For PKCS#7 decryption the inputs are valid ciphertexts.
fn batch(rng: &mut Rng, alg: &str, encrypt: bool, count: usize, key: Option<&[u8]>) -> Vec<Owned> {
    (0..count)
        .map(|i| {
            let key = match key {
                Some(k) => k.to_vec(),
                None => {
                    let n = rng.pick(&[16, 24, 32]);
                    rng.bytes(n)
                }
            };
            let iv = rng.bytes(16);
            let lens = lengths(alg, encrypt);
            let n = lens[i % lens.len()];
            let mut input = rng.bytes(n);
            if alg == "aes-cbc-pkcs7" && !encrypt {
                // Encrypt a plaintext 1..=16 bytes shorter so that every padding length occurs.
                let pt = Owned {
                    key: key.clone(),
                    iv: iv.clone(),
                    input: rng.bytes(n - 1 - i % 16),
                    ad: Vec::new(),
                };
                input = comb_one(alg, true, &pt);
                assert_eq!(input.len(), n);
            }
            Owned {
                key,
                iv,
                input,
                ad: Vec::new(),
            }
        })
        .collect()
}

#[test]
fn open_names_and_arch() {
    assert!(open("nope").is_err());
    for n in NAMES {
        let a = open(n).unwrap_or_else(|e| panic!("open({n}): {e}"));
        assert_eq!(a.name(), *n);
        assert!(!a.supports("aes-xts", true));
        assert!(a.outputs().is_empty());
    }
    let arch = ipsec_mb_arch();
    println!("ipsec-mb manager: {arch}");
    assert!(!arch.starts_with("unavailable"), "{arch}");
}

#[test]
fn supports_matrix() {
    for a in open_all() {
        for alg in ALGS {
            let expect_enc = a.name() != "ipsec-mb"
                || matches!(*alg, "aes-ecb" | "aes-cbc" | "aes-ctr" | "aes-cmac");
            let expect_dec = *alg != "aes-cmac"
                && (a.name() != "ipsec-mb" || matches!(*alg, "aes-ecb" | "aes-cbc" | "aes-ctr"));
            assert_eq!(
                a.supports(alg, true),
                expect_enc,
                "{} {alg} encrypt",
                a.name()
            );
            assert_eq!(
                a.supports(alg, false),
                expect_dec,
                "{} {alg} decrypt",
                a.name()
            );
        }
    }
}

#[test]
fn known_answers() {
    let key = h("2b7e151628aed2a6abf7158809cf4f3c");
    let iv = h("000102030405060708090a0b0c0d0e0f");
    let pt = h(
        "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 \
                30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710",
    );
    // (alg, iv, ciphertext): SP 800-38A F.1.1, F.2.1, F.5.1, F.3.13, F.4.1.
    let cases = [
        ("aes-ecb", iv.clone(), "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf 43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4"),
        ("aes-cbc", iv.clone(), "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2 73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7"),
        ("aes-ctr", h("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff 5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee"),
        ("aes-cfb128", iv.clone(), "3b3fd92eb72dad20333449f8e83cfb4a c8a64537a0b3a93fcde3cdad9f1ce58b 26751f67a3cbb140b1808cf187a4f4df c04b05357c5d1c0eeac4c66f9ff7f2e6"),
        ("aes-ofb", iv.clone(), "3b3fd92eb72dad20333449f8e83cfb4a 7789508d16918f03f53c52dac54ed825 9740051e9c5fecf64344f7a82260edcc 304c6528f659c77866a510d9c1d6ae5e"),
    ];
    let mut anchors = open_all();
    for (alg, iv, ct) in cases {
        let ct = h(ct);
        let enc = [Owned {
            key: key.clone(),
            iv: iv.clone(),
            input: pt.clone(),
            ad: Vec::new(),
        }];
        assert_eq!(agree(&mut anchors, alg, true, &enc)[0], ct, "{alg} encrypt");
        let dec = [Owned {
            key: key.clone(),
            iv: iv.clone(),
            input: ct.clone(),
            ad: Vec::new(),
        }];
        assert_eq!(
            agree(&mut anchors, alg, false, &dec)[0],
            pt,
            "{alg} decrypt"
        );
    }

    // RFC 4493 examples 1, 2 and 4 (AES-128), SP 800-38B D.3 examples 9 and 10 (AES-256).
    let key256 = h("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    let cmac = [
        (&key, &pt[..0], "bb1d6929e95937287fa37d129b756746"),
        (&key, &pt[..16], "070a16b46b4d4144f79bdd9dd04a287c"),
        (&key, &pt[..], "51f0bebf7e3b9d92fc49741779363cfe"),
        (&key256, &pt[..0], "028962f61b7bf89efc6b551f4667d983"),
        (&key256, &pt[..16], "28a7023f452e8f82bd4bf28d8c37c35c"),
    ];
    let msgs: Vec<Owned> = cmac
        .iter()
        .map(|(k, m, _)| Owned {
            key: k.to_vec(),
            iv: Vec::new(),
            input: m.to_vec(),
            ad: Vec::new(),
        })
        .collect();
    let tags = agree(&mut anchors, "aes-cmac", true, &msgs);
    for (i, (_, _, tag)) in cmac.iter().enumerate() {
        assert_eq!(hex::encode(&tags[i]), *tag, "CMAC vector {i}");
    }
}

#[test]
fn random_batches_agree() {
    let mut rng = Rng(0x00c0_ffee);
    let mut anchors = open_all();
    for alg in ALGS {
        for encrypt in [true, false] {
            if *alg == "aes-cmac" && !encrypt {
                continue;
            }
            for key_len in [16, 24, 32] {
                let key = rng.bytes(key_len);
                let msgs = batch(&mut rng, alg, encrypt, 12, Some(&key));
                agree(&mut anchors, alg, encrypt, &msgs);
            }
            // Distinct keys of mixed sizes.
            let msgs = batch(&mut rng, alg, encrypt, 16, None);
            agree(&mut anchors, alg, encrypt, &msgs);
            // Mixed 128/256-bit keys, so that ipsec-mb's CMAC runs on a mixed batch too.
            let mut msgs = batch(&mut rng, alg, encrypt, 16, None);
            for m in msgs.iter_mut().filter(|m| m.key.len() == 24) {
                m.key.truncate(16);
                if *alg == "aes-cbc-pkcs7" && !encrypt {
                    // Re-encrypt under the new key so the padding stays valid.
                    let pt = Owned {
                        input: rng.bytes(m.input.len() - 3),
                        ..m.clone()
                    };
                    m.input = comb_one(alg, true, &pt);
                }
            }
            agree(&mut anchors, alg, encrypt, &msgs);
            // Consecutive runs of equal keys, alternating with others.
            let k1 = rng.bytes(16);
            let k2 = rng.bytes(32);
            let mut msgs = batch(
                &mut rng,
                alg,
                if *alg == "aes-cbc-pkcs7" {
                    true
                } else {
                    encrypt
                },
                10,
                None,
            );
            for (i, m) in msgs.iter_mut().enumerate() {
                m.key = if (i / 3) % 2 == 0 {
                    k1.clone()
                } else {
                    k2.clone()
                };
            }
            if *alg == "aes-cbc-pkcs7" && !encrypt {
                for m in msgs.iter_mut() {
                    m.input = comb_one(alg, true, m);
                }
            }
            agree(&mut anchors, alg, encrypt, &msgs);
            // Empty batch.
            for a in anchors.iter_mut().filter(|a| a.supports(alg, encrypt)) {
                assert!(run(a.as_mut(), alg, encrypt, &[])
                    .expect("empty batch")
                    .is_empty());
            }
        }
    }
}

#[test]
fn round_trips() {
    let mut rng = Rng(7);
    let mut anchors = open_all();
    for alg in ALGS.iter().filter(|a| **a != "aes-cmac") {
        let msgs = batch(&mut rng, alg, true, 16, None);
        let ct = agree(&mut anchors, alg, true, &msgs);
        let back: Vec<Owned> = msgs
            .iter()
            .zip(ct)
            .map(|(m, c)| Owned {
                input: c,
                ..m.clone()
            })
            .collect();
        let pt = agree(&mut anchors, alg, false, &back);
        for (m, p) in msgs.iter().zip(pt) {
            assert_eq!(m.input, p, "{alg} round trip");
        }
    }
}

#[test]
fn ctr_counter_carries() {
    let mut rng = Rng(99);
    let mut anchors = open_all();
    let key = rng.bytes(16);
    // Low 32 bits about to wrap: SP 800-38A carries into bit 32; ipsec-mb must refuse.
    let wraps32 = Owned {
        key: key.clone(),
        iv: h("000102030405060708090a0bfffffffe"),
        input: rng.bytes(80),
        ad: Vec::new(),
    };
    // The whole 128-bit counter wraps to zero.
    let wraps128 = Owned {
        key: key.clone(),
        iv: vec![0xff; 16],
        input: rng.bytes(50),
        ad: Vec::new(),
    };
    // Ends exactly on the last low-32-bit counter value: no wrap, ipsec-mb must accept.
    let edge = Owned {
        key,
        iv: h("000000000000000000000000fffffffd"),
        input: rng.bytes(48),
        ad: Vec::new(),
    };
    for msgs in [vec![wraps32], vec![wraps128], vec![edge.clone()]] {
        let out = agree(&mut anchors, "aes-ctr", true, &msgs);
        // Cross-check with a hand-built keystream from ECB on the explicit counter blocks.
        let m = &msgs[0];
        let mut ctr = u128::from_be_bytes(m.iv.clone().try_into().expect("16-byte IV"));
        let mut counters = Vec::new();
        for _ in 0..m.input.len().div_ceil(16) {
            counters.extend_from_slice(&ctr.to_be_bytes());
            ctr = ctr.wrapping_add(1);
        }
        let ks = comb_one(
            "aes-ecb",
            true,
            &Owned {
                key: m.key.clone(),
                iv: Vec::new(),
                input: counters,
                ad: Vec::new(),
            },
        );
        let expect: Vec<u8> = m.input.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
        assert_eq!(out[0], expect);
    }
    let mut ipsec = open("ipsec-mb").expect("ipsec-mb");
    assert!(run(ipsec.as_mut(), "aes-ctr", true, &[edge]).is_ok());
}

#[test]
fn ipsec_mb_long_messages() {
    let mut rng = Rng(5);
    let mut anchors = open_all();
    let key = rng.bytes(32);
    // ECB longer than one ipsec-mb job (split into several jobs), CBC decryption (no limit).
    let long = |rng: &mut Rng| Owned {
        key: key.clone(),
        iv: rng.bytes(16),
        input: rng.bytes(100_000 / 16 * 16),
        ad: Vec::new(),
    };
    let msgs = vec![long(&mut rng), long(&mut rng)];
    agree(&mut anchors, "aes-ecb", true, &msgs);
    agree(&mut anchors, "aes-ecb", false, &msgs);
    agree(&mut anchors, "aes-cbc", false, &msgs);
    agree(&mut anchors, "aes-ctr", true, &msgs);
    // CBC encryption and CMAC jobs are limited to 65534 bytes: refused, not silently wrong.
    let mut ipsec = open("ipsec-mb").expect("ipsec-mb");
    assert!(ipsec.prepare("aes-cbc", true, &borrow(&msgs)).is_err());
    assert!(ipsec.prepare("aes-cmac", true, &borrow(&msgs)).is_err());
    assert!(ipsec.run().is_err(), "a failed prepare leaves no batch");
    let at_limit = vec![Owned {
        key: key.clone(),
        iv: rng.bytes(16),
        input: rng.bytes(65534),
        ad: Vec::new(),
    }];
    agree(&mut anchors, "aes-cmac", true, &at_limit);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut rng = Rng(3);
    for mut a in open_all() {
        let name = a.name();
        assert!(a.run().is_err(), "{name}: run before prepare");
        let ok = Owned {
            key: rng.bytes(16),
            iv: rng.bytes(16),
            input: rng.bytes(32),
            ad: Vec::new(),
        };
        let bad_key = Owned {
            key: rng.bytes(20),
            ..ok.clone()
        };
        let bad_iv = Owned {
            iv: rng.bytes(8),
            ..ok.clone()
        };
        let partial = Owned {
            input: rng.bytes(17),
            ..ok.clone()
        };
        assert!(
            a.prepare("aes-cbc", true, &borrow(&[bad_key])).is_err(),
            "{name}: key length"
        );
        assert!(
            a.prepare("aes-cbc", true, &borrow(&[bad_iv])).is_err(),
            "{name}: IV length"
        );
        assert!(
            a.prepare("aes-ecb", true, &borrow(&[partial])).is_err(),
            "{name}: partial block"
        );
        assert!(
            a.prepare("aes-xts", true, &borrow(std::slice::from_ref(&ok)))
                .is_err(),
            "{name}: unknown alg"
        );
        assert!(a.run().is_err(), "{name}: run after a failed prepare");
        let with_ad = Owned {
            ad: rng.bytes(13),
            ..ok.clone()
        };
        assert!(
            a.prepare("aes-cbc", true, &borrow(std::slice::from_ref(&with_ad)))
                .is_err(),
            "{name}: associated data for a mode without"
        );
        if name == "ipsec-mb" {
            // The library's CCM takes at most 46 bytes of associated data (status "Invalid
            // AAD length" above); `prepare` says so before anything runs.
            let long_ad = Owned {
                ad: rng.bytes(47),
                ..ok.clone()
            };
            let e = a
                .prepare("aes-ccm", true, &borrow(std::slice::from_ref(&long_ad)))
                .unwrap_err();
            assert!(e.contains("46"), "{e}");
            let gcm = run(a.as_mut(), "aes-gcm", true, std::slice::from_ref(&long_ad)).unwrap();
            assert_eq!(
                gcm[0],
                comb_aead("aes-gcm", &long_ad),
                "GCM has no such limit"
            );
        }
        if a.supports("aes-cbc-pkcs7", false) {
            let empty = Owned {
                input: Vec::new(),
                ..ok.clone()
            };
            assert!(
                a.prepare("aes-cbc-pkcs7", false, &borrow(&[empty]))
                    .is_err(),
                "{name}: empty"
            );
            // Random ciphertext: the padding is invalid unless its last byte happens to be 1.
            let mut bad_pad = ok.clone();
            for seed in 0.. {
                let pt = comb_one("aes-cbc", false, &bad_pad);
                let p = usize::from(pt[31]);
                let valid =
                    (1..=16).contains(&p) && pt[32 - p..].iter().all(|&b| usize::from(b) == p);
                if !valid {
                    break;
                }
                bad_pad.input = Rng(seed).bytes(32);
            }
            a.prepare("aes-cbc-pkcs7", false, &borrow(&[bad_pad]))
                .expect("prepare");
            assert!(a.run().is_err(), "{name}: invalid padding");
        }
        if name == "ipsec-mb" {
            let k24 = Owned {
                key: rng.bytes(24),
                ..ok.clone()
            };
            assert!(
                a.prepare("aes-cmac", true, &borrow(&[k24])).is_err(),
                "{name}: CMAC-192"
            );
            assert!(
                a.prepare("aes-ofb", true, &borrow(std::slice::from_ref(&ok)))
                    .is_err(),
                "{name}: OFB"
            );
        }
    }
}

/// Comb's AEAD encryption of one message as the anchors define it: the first 12 bytes of the
/// IV as the nonce, the message's associated data, ciphertext ‖ 16-byte tag.
fn comb_aead(alg: &str, m: &Owned) -> Vec<u8> {
    let engine = comb::Engine::new().expect("comb engine");
    let a = comb::Algorithm::from_id(alg).expect("comb algorithm");
    let key = comb::AesKey::new(&m.key).expect("comb key");
    let mut out = vec![0u8; m.input.len()];
    let mut tag = [0u8; 16];
    let job = comb::Job::copy(&key, &m.input, &mut out)
        .with_iv(&m.iv[..12])
        .with_ad(&m.ad)
        .with_tag(comb::Tag::Out(&mut tag));
    engine
        .process_one(a, comb::Op::Encrypt, job)
        .expect("comb AEAD encryption");
    out.extend_from_slice(&tag);
    out
}

/// AES-GCM and AES-CCM (encryption, 12-byte nonce, 16-byte tag): OpenSSL and intel-ipsec-mb
/// agree with Comb on random batches of mixed keys, lengths and associated data (0..=46
/// bytes, ipsec-mb's CCM limit); neither decrypts (`supports` says so) and RustCrypto has no
/// AEAD anchor.
#[test]
fn aead_anchors_agree_with_comb() {
    let mut rng = Rng(0x6165_6164);
    for alg in ["aes-gcm", "aes-ccm"] {
        let lens = [0usize, 1, 15, 16, 17, 64, 100, 1500, 2048, 33, 0, 40];
        let ad_lens = [0usize, 0, 1, 8, 12, 13, 16, 17, 20, 32, 46, 13];
        let msgs: Vec<Owned> = lens
            .iter()
            .zip(ad_lens)
            .map(|(&n, a)| {
                let key_len = rng.pick(&[16usize, 32]);
                Owned {
                    key: rng.bytes(key_len),
                    iv: rng.bytes(16),
                    input: rng.bytes(n),
                    ad: rng.bytes(a),
                }
            })
            .collect();
        let want: Vec<Vec<u8>> = msgs.iter().map(|m| comb_aead(alg, m)).collect();
        for mut a in open_all() {
            assert!(!a.supports(alg, false), "{} {alg} decrypt", a.name());
            if a.name() == "rustcrypto" {
                assert!(!a.supports(alg, true));
                continue;
            }
            assert!(a.supports(alg, true), "{} {alg}", a.name());
            let got = run(a.as_mut(), alg, true, &msgs)
                .unwrap_or_else(|e| panic!("{} {alg}: {e}", a.name()));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g,
                    w,
                    "{} {alg} message {i} ({} bytes)",
                    a.name(),
                    msgs[i].input.len()
                );
            }
        }
    }
}
