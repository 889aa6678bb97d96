//! AES-CCM (SP 800-38C, RFC 3610): the genkat known answers, the batch properties, RFC 3610's
//! packet vectors 1-24, Wycheproof `aes_ccm`, a differential test against RustCrypto `ccm`
//! over nonce and tag lengths, the three AD length encodings (crossing 2^16 - 2^8 bytes),
//! the longest message a 2-byte length field allows, bad lengths, and forgeries inside a
//! batch.

mod common;

use comb::{AesKey, Algorithm, Error, JobResult, Op};
use common::aead::{assert_zeroed, check_genkat, check_properties};
use common::{bytes, engine, engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc, FILL};

const CCM: Algorithm = Algorithm::AesCcm;

// ---------------------------------------------------------------------------------------
// The RustCrypto reference

/// `(nonce length, tag length)` pairs the reference is instantiated for.
macro_rules! reference {
    ($($n:literal, $t:literal => $N:ident, $T:ident;)*) => {
        /// The `(nonce, tag)` lengths [`reference_seal`] takes.
        const COMBOS: &[(usize, usize)] = &[$(($n, $t)),*];

        /// RustCrypto `ccm`: the ciphertext and tag of `pt` (the nonce and tag lengths one
        /// of [`COMBOS`]).
        fn reference_seal(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8], t: usize)
            -> (Vec<u8>, Vec<u8>)
        {
            use ccm::aead::{AeadInOut, KeyInit};
            use ccm::consts::*;
            macro_rules! seal {
                ($C:ty, $NN:ty, $TT:ty) => {{
                    let c = <ccm::Ccm<$C, $TT, $NN> as KeyInit>::new_from_slice(key).unwrap();
                    let n = <&ccm::Nonce<$NN>>::try_from(nonce).unwrap();
                    let mut buf = pt.to_vec();
                    let tag = c
                        .encrypt_inout_detached(n, ad, buf.as_mut_slice().into())
                        .expect("reference encryption");
                    (buf, tag.to_vec())
                }};
            }
            match (nonce.len(), t) {
                $(($n, $t) => match key.len() {
                    16 => seal!(aes::Aes128, $N, $T),
                    24 => seal!(aes::Aes192, $N, $T),
                    32 => seal!(aes::Aes256, $N, $T),
                    k => panic!("reference: {k}-byte key"),
                },)*
                other => panic!("reference: no instance for (nonce, tag) = {other:?}"),
            }
        }
    };
}

reference! {
    7, 4 => U7, U4;
    7, 16 => U7, U16;
    8, 6 => U8, U6;
    9, 8 => U9, U8;
    10, 10 => U10, U10;
    11, 12 => U11, U12;
    12, 14 => U12, U14;
    12, 16 => U12, U16;
    13, 8 => U13, U8;
    13, 16 => U13, U16;
}

// ---------------------------------------------------------------------------------------
// Jobs

/// One CCM message by value.
#[derive(Clone, Debug)]
struct Msg {
    key: usize,
    nonce: Vec<u8>,
    ad: Vec<u8>,
    pt: Vec<u8>,
    tag_len: usize,
}

/// Encryption jobs of `msgs` (alternating in place and copied).
fn seal_descs<'a>(keys: &'a [AesKey], msgs: &'a [Msg]) -> Vec<JobDesc<'a>> {
    msgs.iter()
        .enumerate()
        .map(|(i, m)| {
            JobDesc::new(
                &keys[m.key],
                &m.pt,
                Hold::alternating(i, Op::Encrypt),
                m.pt.len(),
            )
            .iv(&m.nonce)
            .ad(&m.ad)
            .tag(TagDesc::Out(m.tag_len))
        })
        .collect()
}

/// Decryption jobs of `msgs` with ciphertexts and tags `sealed`, 3 bytes of room after each
/// message that must stay untouched.
fn open_descs<'a>(
    keys: &'a [AesKey],
    msgs: &'a [Msg],
    sealed: &'a [(Vec<u8>, Vec<u8>)],
) -> Vec<JobDesc<'a>> {
    msgs.iter()
        .zip(sealed)
        .enumerate()
        .map(|(i, (m, (c, t)))| {
            JobDesc::new(
                &keys[m.key],
                c,
                Hold::alternating(i, Op::Decrypt),
                c.len() + 3,
            )
            .iv(&m.nonce)
            .ad(&m.ad)
            .tag(TagDesc::In(t))
        })
        .collect()
}

/// Every entry point (batch at lane counts 1, 3 and the default, sequential, one by one) on
/// every backend: encryption gives the reference's ciphertexts and tags, decryption of the
/// reference's output gives the plaintexts back and leaves the room after them untouched.
fn check_against_reference(keys: &[AesKey], key_bytes: &[Vec<u8>], msgs: &[Msg], what: &str) {
    let want: Vec<(Vec<u8>, Vec<u8>)> = msgs
        .iter()
        .map(|m| reference_seal(&key_bytes[m.key], &m.nonce, &m.ad, &m.pt, m.tag_len))
        .collect();
    for lanes in [None, Some(1), Some(3)] {
        for e in engines(lanes) {
            for path in [PathKind::Batch, PathKind::Sequential, PathKind::One] {
                let what = format!("{what}: {:?} lanes {lanes:?} {path:?}", e.backend());
                let o = run_jobs(&e, CCM, Op::Encrypt, path, &seal_descs(keys, msgs));
                for (i, (m, (c, t))) in msgs.iter().zip(&want).enumerate() {
                    assert_eq!(o.results[i], Ok(m.pt.len()), "{what}: seal {i}");
                    assert_eq!(hex::encode(&o.bufs[i]), hex::encode(c), "{what}: ct {i}");
                    assert_eq!(hex::encode(&o.tags[i]), hex::encode(t), "{what}: tag {i}");
                }
                let descs = open_descs(keys, msgs, &want);
                let o = run_jobs(&e, CCM, Op::Decrypt, path, &descs);
                for (i, m) in msgs.iter().enumerate() {
                    assert_eq!(o.results[i], Ok(m.pt.len()), "{what}: open {i}");
                    assert_eq!(o.bufs[i][..m.pt.len()], m.pt[..], "{what}: pt {i}");
                    let initial = descs[i].initial_buf();
                    assert_eq!(
                        o.bufs[i][m.pt.len()..],
                        initial[m.pt.len()..],
                        "{what}: wrote past message {i}"
                    );
                }
            }
        }
    }
}

/// Three keys, one of each size, as handles and bytes.
fn three_keys(seed: u64) -> (Vec<AesKey>, Vec<Vec<u8>>) {
    let raw: Vec<Vec<u8>> = [16, 24, 32]
        .iter()
        .enumerate()
        .map(|(i, &l)| bytes(seed + i as u64, l))
        .collect();
    let keys = raw.iter().map(|k| AesKey::new(k).expect("key")).collect();
    (keys, raw)
}

// ---------------------------------------------------------------------------------------
// Known answers and properties

#[test]
fn genkat_aes128_n12_t16() {
    check_genkat(CCM, "aes128-ccm-n12-t16.txt");
}

/// Random mixed batches (nonces of 7..=13 bytes, AD of 0..=40 bytes, three key sizes):
/// batch = sequential = one by one, round trip, forgeries rejected.
#[test]
fn properties() {
    for (seed, n, max_len) in [(1, 40, 600), (2, 33, 2000), (3, 64, 300), (4, 5, 1100)] {
        check_properties(CCM, seed, n, max_len, &[1, 3, 8, 16]);
    }
}

/// One `kat-v1` record: field name to value.
fn kat_records(file: &str) -> Vec<std::collections::HashMap<String, String>> {
    let path = format!(
        "{}/../testdata/kat/ciphers/aes/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(text.starts_with("# kat-v1"), "{path}: not kat-v1");
    text.split("\n\n")
        .map(|rec| {
            rec.lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect::<std::collections::HashMap<_, _>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// RFC 3610 §8, packet vectors 1-24 (AES-128, 13-byte nonces, 8- and 10-byte tags; the
/// RFC's cleartext header is the AD): every vector alone and all 24 as one batch, on every
/// backend; each decrypts back, and with a flipped tag bit fails with the output zeroed.
#[test]
fn rfc3610_packet_vectors() {
    let recs = kat_records("rfc3610_ccm.kat");
    assert_eq!(recs.len(), 24);
    let f = |r: &std::collections::HashMap<String, String>, k: &str| unhex(&r[k]);
    let keys: Vec<AesKey> = recs
        .iter()
        .map(|r| AesKey::new(&f(r, "KEY")).unwrap())
        .collect();
    let vecs: Vec<[Vec<u8>; 5]> = recs
        .iter()
        .map(|r| ["NONCE", "AAD", "PT", "CT", "TAG"].map(|k| f(r, k)))
        .collect();
    assert!(vecs
        .iter()
        .all(|v| v[0].len() == 13 && [8, 10].contains(&v[4].len())));
    let forged: Vec<Vec<u8>> = vecs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut t = v[4].clone();
            let n = t.len();
            t[i % n] ^= 1 << (i % 8);
            t
        })
        .collect();
    for lanes in [None, Some(1), Some(3)] {
        for e in engines(lanes) {
            for path in [PathKind::Batch, PathKind::One] {
                let what = format!("{:?} lanes {lanes:?} {path:?}", e.backend());
                let seal: Vec<JobDesc<'_>> = vecs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (v, k))| {
                        JobDesc::new(k, &v[2], Hold::alternating(i, Op::Encrypt), v[2].len())
                            .iv(&v[0])
                            .ad(&v[1])
                            .tag(TagDesc::Out(v[4].len()))
                    })
                    .collect();
                let o = run_jobs(&e, CCM, Op::Encrypt, path, &seal);
                for (i, v) in vecs.iter().enumerate() {
                    assert_eq!(o.results[i], Ok(v[2].len()), "{what} #{}", i + 1);
                    assert_eq!(o.bufs[i], v[3], "{what} #{} ciphertext", i + 1);
                    assert_eq!(o.tags[i], v[4], "{what} #{} tag", i + 1);
                }
                // Every other vector with its tag forged.
                let open: Vec<JobDesc<'_>> = vecs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (v, k))| {
                        let tag = if i % 2 == 1 { &forged[i] } else { &v[4] };
                        JobDesc::new(k, &v[3], Hold::alternating(i, Op::Decrypt), v[3].len())
                            .iv(&v[0])
                            .ad(&v[1])
                            .tag(TagDesc::In(tag))
                    })
                    .collect();
                let o = run_jobs(&e, CCM, Op::Decrypt, path, &open);
                for (i, v) in vecs.iter().enumerate() {
                    if i % 2 == 1 {
                        assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what}");
                        assert_zeroed(&o.bufs[i], v[3].len(), &what);
                    } else {
                        assert_eq!(o.results[i], Ok(v[2].len()), "{what} #{}", i + 1);
                        assert_eq!(o.bufs[i], v[2], "{what} #{} plaintext", i + 1);
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Wycheproof

/// The typed validation error a CCM job with these lengths must get, if any (the nonce is
/// checked before the tag).
fn validation_error(nonce_len: usize, tag_len: usize) -> Option<Error> {
    let (min, max) = CCM.iv_lens();
    if !(min..=max).contains(&nonce_len) {
        Some(Error::InvalidNonceLength {
            got: nonce_len,
            min,
            max,
        })
    } else if !CCM.tag_len_allowed(tag_len) {
        Some(Error::TagLengthNotAllowed {
            got: tag_len,
            allowed: CCM.allowed_tag_lens(),
        })
    } else {
        None
    }
}

/// Judges one Wycheproof case's decryption: a parameter validation rejects gives its typed
/// error with the buffer untouched; otherwise `valid` gives the plaintext, `invalid`
/// AuthenticationFailed with the output zeroed and the room after it untouched.
fn judge_open(
    t: &wycheproof::aead::Test,
    r: &JobResult,
    out: &[u8],
    before: &[u8],
) -> Result<(), String> {
    let n = t.ct.len();
    match (validation_error(t.nonce.len(), t.tag.len()), t.result) {
        (Some(err), _) if r == &Err(err.clone()) && out == before => Ok(()),
        (Some(err), _) => Err(format!("expected {err:?} untouched, got {r:?}")),
        (None, wycheproof::TestResult::Invalid) => {
            if r != &Err(Error::AuthenticationFailed) {
                Err(format!("forgery accepted: {r:?}"))
            } else if out[..n].iter().any(|&b| b != 0) || out[n..] != before[n..] {
                Err("output not zeroed, or written past the message".into())
            } else {
                Ok(())
            }
        }
        (None, _) if r == &Ok(t.pt.len()) && out[..n] == t.pt[..] => Ok(()),
        (None, _) => Err(format!("expected the plaintext, got {r:?}")),
    }
}

/// Judges one case's encryption with the group's tag length: a parameter validation rejects
/// gives its typed error; otherwise the ciphertext, and the tag for `valid` (a different tag
/// for `invalid`, whose expected tag was modified).
fn judge_seal(
    t: &wycheproof::aead::Test,
    tag_len: usize,
    r: &JobResult,
    out: &[u8],
    tag: &[u8],
) -> Result<(), String> {
    if let Some(err) = validation_error(t.nonce.len(), tag_len) {
        return if r == &Err(err.clone()) {
            Ok(())
        } else {
            Err(format!("expected {err:?}, got {r:?}"))
        };
    }
    let n = t.pt.len();
    if r != &Ok(n) || out[..n] != t.ct[..] {
        return Err(format!("expected the ciphertext, got {r:?}"));
    }
    match t.result {
        wycheproof::TestResult::Invalid if tag == &t.tag[..] => {
            Err("produced the modified tag".into())
        }
        wycheproof::TestResult::Invalid => Ok(()),
        _ if tag == &t.tag[..] => Ok(()),
        _ => Err(format!("wrong tag {}", hex::encode(tag))),
    }
}

/// Wycheproof `aes_ccm`, every case: alone on every backend, and each group as one batch at
/// lane counts 1, 3 and the default. Cases whose nonce or tag length we do not support (all
/// of them `invalid` in the set) must get the typed validation error; they are counted.
#[test]
fn wycheproof_aes_ccm() {
    use wycheproof::TestResult;
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::AesCcm)
        .expect("the aes_ccm test set loads");
    let (mut seen, mut valid, mut invalid, mut unsupported) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for g in &set.test_groups {
        let tag_len = g.tag_size / 8;
        let keys: Vec<AesKey> = g
            .tests
            .iter()
            .map(|t| AesKey::new(&t.key).expect("Wycheproof CCM keys are AES keys"))
            .collect();
        for t in &g.tests {
            seen += 1;
            match t.result {
                TestResult::Valid => valid += 1,
                TestResult::Invalid => invalid += 1,
                TestResult::Acceptable => {}
            }
            if validation_error(t.nonce.len(), t.tag.len()).is_some()
                || validation_error(t.nonce.len(), tag_len).is_some()
            {
                unsupported += 1;
                if t.result != TestResult::Invalid {
                    failures.push(format!("tcId {}: a valid case we reject", t.tc_id));
                }
            }
        }
        let runs = engines(None).into_iter().map(|e| (e, PathKind::One)).chain(
            [None, Some(1), Some(3)]
                .into_iter()
                .flat_map(engines)
                .map(|e| (e, PathKind::Batch)),
        );
        for (e, path) in runs {
            let what = format!(
                "{:?} lanes {} {path:?}",
                e.backend(),
                e.lanes(CCM, Op::Encrypt)
            );
            let open: Vec<JobDesc<'_>> = g
                .tests
                .iter()
                .zip(&keys)
                .map(|(t, k)| {
                    let hold = Hold::alternating(t.tc_id, Op::Decrypt);
                    JobDesc::new(k, &t.ct, hold, t.ct.len() + 3)
                        .iv(&t.nonce)
                        .ad(&t.aad)
                        .tag(TagDesc::In(&t.tag))
                })
                .collect();
            let o = run_jobs(&e, CCM, Op::Decrypt, path, &open);
            for (i, t) in g.tests.iter().enumerate() {
                let before = open[i].initial_buf();
                if let Err(m) = judge_open(t, &o.results[i], &o.bufs[i], &before) {
                    failures.push(format!("tcId {} decrypt, {what}: {m}", t.tc_id));
                }
            }
            let seal: Vec<JobDesc<'_>> = g
                .tests
                .iter()
                .zip(&keys)
                .map(|(t, k)| {
                    let hold = Hold::alternating(t.tc_id, Op::Encrypt);
                    JobDesc::new(k, &t.pt, hold, t.pt.len())
                        .iv(&t.nonce)
                        .ad(&t.aad)
                        .tag(TagDesc::Out(tag_len))
                })
                .collect();
            let o = run_jobs(&e, CCM, Op::Encrypt, path, &seal);
            for (i, t) in g.tests.iter().enumerate() {
                if let Err(m) = judge_seal(t, tag_len, &o.results[i], &o.bufs[i], &o.tags[i]) {
                    failures.push(format!("tcId {} encrypt, {what}: {m}", t.tc_id));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(seen, set.number_of_tests, "every case of the set was run");
    assert!(valid > 0 && invalid > 0, "{valid} valid, {invalid} invalid");
    // Nonces of 0..=6 and 14..=268 bytes and tags of 2, 3, 5, .., 15 bytes.
    assert!(
        unsupported > 0 && unsupported < invalid,
        "{unsupported} unsupported"
    );
    eprintln!("aes_ccm: {seen} cases, {unsupported} with parameters validation rejects");
}

// ---------------------------------------------------------------------------------------
// RustCrypto differential

/// Every `(nonce, tag)` pair of [`COMBOS`] with random data: mixed key sizes, messages of
/// 0..=700 bytes including the block-boundary lengths, AD of 0..=40 bytes plus a few long
/// ones (whose formatted prefix no longer fits the stack buffer), all in one batch.
#[test]
fn differential_against_rustcrypto_ccm() {
    let (keys, raw) = three_keys(0xCC);
    let fixed = [0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257];
    let mut msgs = Vec::new();
    let mut s = 0u64;
    for &(n, t) in COMBOS {
        for j in 0..8 {
            s += 1;
            let r = bytes(s, 4);
            let len = if j < 4 {
                fixed[(s as usize) % fixed.len()]
            } else {
                (usize::from(r[0]) << 8 | usize::from(r[1])) % 701
            };
            let ad_len = match j {
                0 => 0,
                1 => 600,
                2 => 14,
                _ => usize::from(r[2]) % 41,
            };
            msgs.push(Msg {
                key: usize::from(r[3]) % 3,
                nonce: bytes(s * 3, n),
                ad: bytes(s * 5, ad_len),
                pt: bytes(s * 7, len),
                tag_len: t,
            });
        }
    }
    check_against_reference(&keys, &raw, &msgs, "differential");
    // The same messages without AD, in one batch: its prefixes are B0 alone (a batched cipher
    // call instead of a comb pass).
    let no_ad: Vec<Msg> = msgs
        .iter()
        .map(|m| Msg {
            ad: Vec::new(),
            ..m.clone()
        })
        .collect();
    check_against_reference(&keys, &raw, &no_ad, "differential, no AD");
    // Each message alone as well (the single path with and without a heap prefix).
    for (i, m) in msgs.iter().enumerate().step_by(7) {
        check_against_reference(&keys, &raw, core::slice::from_ref(m), &format!("alone {i}"));
    }
}

/// AD lengths around 2^16 - 2^8 = 65280, where the 2-byte length encoding gives way to
/// `0xFF 0xFE` + 4 bytes, in batches of two (one shorter, one longer AD) and alone.
#[test]
fn ad_length_encoding_boundary() {
    let (keys, raw) = three_keys(0xAD);
    let msg = |i: u64, ad_len: usize, len: usize, n: usize, t: usize| Msg {
        key: i as usize % 3,
        nonce: bytes(100 + i, n),
        ad: bytes(200 + i, ad_len),
        pt: bytes(300 + i, len),
        tag_len: t,
    };
    let pairs = [
        [msg(0, 65279, 40, 12, 16), msg(1, 65280, 17, 13, 8)],
        [msg(2, 65281, 0, 7, 4), msg(3, 65278, 100, 11, 12)],
    ];
    for pair in &pairs {
        check_against_reference(&keys, &raw, pair, "AD boundary");
    }
}

/// The longest message a nonce of 13 bytes allows (q = 2: 65535 bytes, the counter reaching
/// 4096), and longer messages under a 12-byte nonce (q = 3), against the reference.
#[test]
fn longest_messages_of_a_short_length_field() {
    let (keys, raw) = three_keys(0x10);
    let msgs = [
        Msg {
            key: 0,
            nonce: bytes(1, 13),
            ad: bytes(2, 5),
            pt: bytes(3, 65535),
            tag_len: 16,
        },
        Msg {
            key: 2,
            nonce: bytes(4, 12),
            ad: Vec::new(),
            pt: bytes(5, 65536 + 21),
            tag_len: 14,
        },
    ];
    check_against_reference(&keys, &raw, &msgs, "long");
}

// ---------------------------------------------------------------------------------------
// Bad input

/// A job of [`bad_lengths_give_typed_errors`]: input, nonce, tag length, the error expected
/// (`None`: a valid job).
type BadCase<'a> = (&'a [u8], &'a [u8], usize, Option<Error>);

/// Lengths validation rejects with a typed error, the good jobs of the same batch intact:
/// a message longer than the length field allows (13-byte nonce: 65536 bytes), nonces of 6
/// and 14 bytes, tags of 2, 5 and 18 bytes.
#[test]
fn bad_lengths_give_typed_errors() {
    let key = AesKey::new(&[7; 16]).unwrap();
    let long = vec![0x11u8; 65536];
    let short = bytes(9, 40);
    let tag_buf = [0u8; 18];
    let n13 = bytes(1, 13);
    let n6 = bytes(2, 6);
    let n14 = bytes(3, 14);
    let n12 = bytes(4, 12);
    let allowed = CCM.allowed_tag_lens();
    // (input, nonce, tag length, expected error or None)
    let cases: Vec<BadCase<'_>> = vec![
        (
            &long,
            &n13,
            16,
            Some(Error::MessageTooLong {
                len: 65536,
                max: 65535,
            }),
        ),
        (&short, &n13, 16, None),
        (&long, &n12, 16, None),
        (
            &short,
            &n6,
            16,
            Some(Error::InvalidNonceLength {
                got: 6,
                min: 7,
                max: 13,
            }),
        ),
        (
            &short,
            &n14,
            16,
            Some(Error::InvalidNonceLength {
                got: 14,
                min: 7,
                max: 13,
            }),
        ),
        (
            &short,
            &n12,
            5,
            Some(Error::TagLengthNotAllowed { got: 5, allowed }),
        ),
        (
            &short,
            &n12,
            18,
            Some(Error::TagLengthNotAllowed { got: 18, allowed }),
        ),
        (
            &short,
            &n12,
            2,
            Some(Error::TagLengthNotAllowed { got: 2, allowed }),
        ),
        (&short, &n12, 4, None),
    ];
    for op in [Op::Encrypt, Op::Decrypt] {
        let descs: Vec<JobDesc<'_>> = cases
            .iter()
            .enumerate()
            .map(|(i, &(input, nonce, t, _))| {
                let tag = match op {
                    Op::Encrypt => TagDesc::Out(t),
                    Op::Decrypt => TagDesc::In(&tag_buf[..t]),
                };
                JobDesc::new(&key, input, Hold::alternating(i, op), input.len())
                    .iv(nonce)
                    .tag(tag)
            })
            .collect();
        for path in [PathKind::Batch, PathKind::One] {
            let o = run_jobs(&engine(None), CCM, op, path, &descs);
            for (i, (input, _, _, err)) in cases.iter().enumerate() {
                let what = format!("{op:?} {path:?} case {i}");
                match (err, op) {
                    (Some(e), _) => {
                        assert_eq!(o.results[i].as_ref().err(), Some(e), "{what}");
                        assert_eq!(o.bufs[i], descs[i].initial_buf(), "{what}: untouched");
                    }
                    (None, Op::Encrypt) => assert_eq!(o.results[i], Ok(input.len()), "{what}"),
                    // A zero tag is (overwhelmingly likely) wrong: rejected, zeroed.
                    (None, Op::Decrypt) => {
                        assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what}");
                        assert_zeroed(&o.bufs[i], input.len(), &what);
                    }
                }
            }
        }
    }
}

/// A batch where some decryptions are forged (tag bit, ciphertext bit in a whole block and
/// in the partial block, AD byte, nonce byte, a tag cut to another allowed length): exactly
/// those fail with their outputs zeroed, and every other job gives its plaintext.
#[test]
fn forgeries_fail_alone_in_a_batch() {
    let (keys, raw) = three_keys(0xF0);
    let msgs: Vec<Msg> = (0..14)
        .map(|i| Msg {
            key: i % 3,
            nonce: bytes(10 + i as u64, 7 + i % 7),
            ad: bytes(20 + i as u64, (i * 5) % 23),
            pt: bytes(30 + i as u64, 33 + 19 * i),
            tag_len: [4, 6, 8, 10, 12, 14, 16][i % 7],
        })
        .collect();
    // Sealed by the library itself (checked against the reference elsewhere).
    let e = engine(None);
    let o = run_jobs(
        &e,
        CCM,
        Op::Encrypt,
        PathKind::Batch,
        &seal_descs(&keys, &msgs),
    );
    let sealed: Vec<(Vec<u8>, Vec<u8>)> = o.bufs.into_iter().zip(o.tags).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = msgs
        .iter()
        .filter(|m| COMBOS.contains(&(m.nonce.len(), m.tag_len)))
        .map(|m| reference_seal(&raw[m.key], &m.nonce, &m.ad, &m.pt, m.tag_len))
        .collect();
    let ours: Vec<(Vec<u8>, Vec<u8>)> = msgs
        .iter()
        .zip(&sealed)
        .filter(|(m, _)| COMBOS.contains(&(m.nonce.len(), m.tag_len)))
        .map(|(_, s)| s.clone())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(ours, want);
    let mut forged_msgs = msgs.clone();
    let mut forged = sealed.clone();
    forged[1].1[0] ^= 0x01; // tag
    forged[3].0[5] ^= 0x80; // ciphertext, first block
    let l = forged[5].0.len();
    forged[5].0[l - 1] ^= 0x04; // ciphertext, partial last block
    forged_msgs[8].ad.push(0); // AD
    forged_msgs[10].nonce[0] ^= 1; // nonce
    forged[12].1.truncate(4); // a 14-byte tag cut to 4 (another allowed length, another B0)
    let bad = [1, 3, 5, 8, 10, 12];
    for lanes in [None, Some(1), Some(3)] {
        for e in engines(lanes) {
            for path in [PathKind::Batch, PathKind::Sequential] {
                let what = format!("{:?} lanes {lanes:?} {path:?}", e.backend());
                let descs = open_descs(&keys, &forged_msgs, &forged);
                let o = run_jobs(&e, CCM, Op::Decrypt, path, &descs);
                for (i, m) in msgs.iter().enumerate() {
                    if bad.contains(&i) {
                        assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what} {i}");
                        assert_zeroed(&o.bufs[i], m.pt.len(), &what);
                        assert!(o.bufs[i][m.pt.len()..].iter().all(|&b| b == FILL));
                    } else {
                        assert_eq!(o.results[i], Ok(m.pt.len()), "{what} {i}");
                        assert_eq!(o.bufs[i][..m.pt.len()], m.pt[..], "{what} {i}");
                    }
                }
            }
        }
    }
}
