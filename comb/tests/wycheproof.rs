//! Wycheproof `aes_cbc_pkcs5`, `aes_cmac` and `aes_gcm`: every test case, through the batch path (all
//! cases of a test group in one batch, at several lane counts) and the single-message path.
//!
//! Valid cases must pass; invalid ones must be rejected with the right typed error; the
//! sets contain no "acceptable" cases today, and one would be allowed either outcome as long
//! as a success gives the expected bytes.

mod common;

use comb::{AesKey, Algorithm, Engine, Error, Job, JobResult, Op, Tag};
use common::engines;
use wycheproof::TestResult;

/// Lane counts each group's batch runs at (`None`: the engine default).
const LANES: [Option<usize>; 5] = [None, Some(1), Some(3), Some(8), Some(16)];

/// Key handle of a case, or the typed error `AesKey::new` must give for its key.
fn key_of(key: &[u8]) -> Result<AesKey, Error> {
    let r = AesKey::new(key);
    if ![16, 24, 32].contains(&key.len()) {
        assert_eq!(
            r.as_ref().err(),
            Some(&Error::InvalidKeyLength { got: key.len() }),
            "AesKey::new must reject a {}-byte key",
            key.len()
        );
    }
    r
}

/// Checks a result against a case's expectation: `valid` must give `ok`; `invalid` must give
/// `err`; `acceptable` may give either.
fn judge(
    result: TestResult,
    got: &JobResult,
    ok: &JobResult,
    err: &Error,
    what: &str,
) -> Result<(), String> {
    let pass = match result {
        TestResult::Valid => got == ok,
        TestResult::Invalid => got.as_ref().err() == Some(err),
        TestResult::Acceptable => got == ok || got.as_ref().err() == Some(err),
    };
    if pass {
        Ok(())
    } else {
        Err(format!(
            "{what}: expected {result:?} ({ok:?} / {err:?}), got {got:?}"
        ))
    }
}

// ---------------------------------------------------------------------------------------
// AES-CBC-PKCS5

struct CbcCase<'a> {
    t: &'a wycheproof::cipher::Test,
    key: AesKey,
}

fn cbc_case_name(t: &wycheproof::cipher::Test) -> String {
    format!(
        "aes_cbc_pkcs5 tcId {} ({:?}, {:?}, {:?}; key {} B, iv {} B, msg {} B, ct {} B)",
        t.tc_id,
        t.comment,
        t.result,
        t.flags,
        t.key.len(),
        t.nonce.len(),
        t.pt.len(),
        t.ct.len()
    )
}

/// Decryption of every case: valid gives the message, invalid gives `InvalidPadding` (or the
/// typed error for a bad IV length / non-whole-block ciphertext) with the output zeroed.
fn cbc_decrypt_expectation(t: &wycheproof::cipher::Test) -> (JobResult, Error) {
    let err = if t.nonce.len() != 16 {
        Error::InvalidIvLength {
            expected: 16,
            got: t.nonce.len(),
        }
    } else if !t.ct.len().is_multiple_of(16) {
        Error::NotBlockMultiple { len: t.ct.len() }
    } else {
        Error::InvalidPadding
    };
    (Ok(t.pt.len()), err)
}

fn check_cbc_decrypt(
    t: &wycheproof::cipher::Test,
    r: &JobResult,
    out: &[u8],
    path: &str,
) -> Result<(), String> {
    let (ok, err) = cbc_decrypt_expectation(t);
    let name = format!("{} decrypt, {path}", cbc_case_name(t));
    judge(t.result, r, &ok, &err, &name)?;
    match r {
        Ok(n) if out[..*n] != t.pt[..] => Err(format!("{name}: wrong plaintext")),
        Err(Error::InvalidPadding) if out.iter().any(|&b| b != 0) => {
            Err(format!("{name}: output not zeroed after bad padding"))
        }
        _ => Ok(()),
    }
}

fn check_cbc_encrypt(
    t: &wycheproof::cipher::Test,
    r: &JobResult,
    out: &[u8],
    path: &str,
) -> Result<(), String> {
    let name = format!("{} encrypt, {path}", cbc_case_name(t));
    if t.nonce.len() != 16 {
        let err = Error::InvalidIvLength {
            expected: 16,
            got: t.nonce.len(),
        };
        return if r.as_ref().err() == Some(&err) {
            Ok(())
        } else {
            Err(format!("{name}: expected {err:?}, got {r:?}"))
        };
    }
    // Encryption of any message succeeds; for valid cases it must give the ciphertext.
    let want = (t.pt.len() / 16 + 1) * 16;
    if r != &Ok(want) {
        return Err(format!("{name}: expected Ok({want}), got {r:?}"));
    }
    if t.result != TestResult::Invalid && out[..want] != t.ct[..] {
        return Err(format!("{name}: wrong ciphertext"));
    }
    Ok(())
}

fn run_cbc_group(engine: &Engine, cases: &[CbcCase<'_>], lanes: Option<usize>) -> Vec<String> {
    let mut failures = Vec::new();
    let path = format!("batch lanes={lanes:?}");
    // Decrypt the whole group in one batch, alternating in place and out of place.
    let mut bufs: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            if c.t.tc_id % 2 == 0 {
                c.t.ct.to_vec()
            } else {
                vec![0xA5; c.t.ct.len()]
            }
        })
        .collect();
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .zip(bufs.iter_mut())
        .map(|(c, buf)| {
            if c.t.tc_id % 2 == 0 {
                Job::in_place(&c.key, buf).with_iv(&c.t.nonce)
            } else {
                Job::copy(&c.key, &c.t.ct, buf).with_iv(&c.t.nonce)
            }
        })
        .collect();
    let results = engine.process(Algorithm::AesCbcPkcs7, Op::Decrypt, &mut jobs);
    drop(jobs);
    for ((c, r), out) in cases.iter().zip(&results).zip(&bufs) {
        failures.extend(check_cbc_decrypt(c.t, r, out, &path).err());
    }
    // Encrypt every case's message in one batch (room for the padding in place).
    let mut bufs: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            let mut b = c.t.pt.to_vec();
            b.resize(c.t.pt.len() / 16 * 16 + 16, 0xA5);
            b
        })
        .collect();
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .zip(bufs.iter_mut())
        .map(|(c, buf)| {
            if c.t.tc_id % 2 == 1 {
                Job::new(
                    &c.key,
                    comb::Data::InPlace {
                        buf,
                        len: c.t.pt.len(),
                    },
                )
                .with_iv(&c.t.nonce)
            } else {
                Job::copy(&c.key, &c.t.pt, buf).with_iv(&c.t.nonce)
            }
        })
        .collect();
    let results = engine.process(Algorithm::AesCbcPkcs7, Op::Encrypt, &mut jobs);
    drop(jobs);
    for ((c, r), out) in cases.iter().zip(&results).zip(&bufs) {
        failures.extend(check_cbc_encrypt(c.t, r, out, &path).err());
    }
    failures
}

fn run_cbc_single(engine: &Engine, c: &CbcCase<'_>) -> Vec<String> {
    let mut failures = Vec::new();
    let mut out = vec![0xA5; c.t.ct.len()];
    let r = engine.process_one(
        Algorithm::AesCbcPkcs7,
        Op::Decrypt,
        Job::copy(&c.key, &c.t.ct, &mut out).with_iv(&c.t.nonce),
    );
    failures.extend(check_cbc_decrypt(c.t, &r, &out, "single").err());
    let mut out = vec![0xA5; c.t.pt.len() / 16 * 16 + 16];
    let r = engine.process_one(
        Algorithm::AesCbcPkcs7,
        Op::Encrypt,
        Job::copy(&c.key, &c.t.pt, &mut out).with_iv(&c.t.nonce),
    );
    failures.extend(check_cbc_encrypt(c.t, &r, &out, "single").err());
    failures
}

#[test]
fn wycheproof_aes_cbc_pkcs5() {
    let set = wycheproof::cipher::TestSet::load(wycheproof::cipher::TestName::AesCbcPkcs5)
        .expect("the aes_cbc_pkcs5 test set loads");
    let mut failures = Vec::new();
    let (mut seen, mut valid, mut invalid) = (0, 0, 0);
    for group in &set.test_groups {
        let mut cases = Vec::new();
        for t in &group.tests {
            seen += 1;
            match t.result {
                TestResult::Valid => valid += 1,
                TestResult::Invalid => invalid += 1,
                TestResult::Acceptable => {}
            }
            match key_of(&t.key) {
                Ok(key) => cases.push(CbcCase { t, key }),
                Err(e) => {
                    if t.result != TestResult::Invalid {
                        failures.push(format!("{}: key rejected: {e}", cbc_case_name(t)));
                    }
                }
            }
        }
        for e in engines(None) {
            for c in &cases {
                failures.extend(run_cbc_single(&e, c));
            }
        }
        for lanes in LANES {
            for e in engines(lanes) {
                failures.extend(run_cbc_group(&e, &cases, lanes));
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
    assert!(
        seen > 0 && valid > 0 && invalid > 0,
        "{seen} cases, {valid} valid, {invalid} invalid"
    );
}

// ---------------------------------------------------------------------------------------
// AES-CMAC

struct CmacCase<'a> {
    t: &'a wycheproof::mac::Test,
    key: AesKey,
    /// Tag length the group asks for, in bytes.
    tag_len: usize,
}

fn cmac_case_name(t: &wycheproof::mac::Test) -> String {
    format!(
        "aes_cmac tcId {} ({:?}, {:?}, {:?}; key {} B, msg {} B, tag {} B)",
        t.tc_id,
        t.comment,
        t.result,
        t.flags,
        t.key.len(),
        t.msg.len(),
        t.tag.len()
    )
}

fn tag_len_error(len: usize) -> Option<Error> {
    (!(1..=16).contains(&len)).then_some(Error::InvalidTagLength {
        got: len,
        min: 1,
        max: 16,
    })
}

/// Verification: valid gives Ok(0), invalid gives AuthenticationFailed (or InvalidTagLength).
fn check_cmac_verify(c: &CmacCase<'_>, r: &JobResult, path: &str) -> Result<(), String> {
    let err = tag_len_error(c.t.tag.len()).unwrap_or(Error::AuthenticationFailed);
    judge(
        c.t.result,
        r,
        &Ok(0),
        &err,
        &format!("{} verify, {path}", cmac_case_name(c.t)),
    )
}

/// Generation: the computed tag equals the expected one exactly for valid cases and differs
/// from it for invalid ones (whose tags were modified).
fn check_cmac_generate(
    c: &CmacCase<'_>,
    r: &JobResult,
    tag: &[u8],
    path: &str,
) -> Result<(), String> {
    let name = format!("{} generate, {path}", cmac_case_name(c.t));
    if let Some(err) = tag_len_error(c.tag_len) {
        return if r.as_ref().err() == Some(&err) {
            Ok(())
        } else {
            Err(format!("{name}: expected {err:?}, got {r:?}"))
        };
    }
    if r != &Ok(0) {
        return Err(format!("{name}: expected Ok(0), got {r:?}"));
    }
    let equal = tag == &c.t.tag[..];
    match c.t.result {
        TestResult::Valid if !equal => Err(format!("{name}: wrong tag {}", hex::encode(tag))),
        TestResult::Invalid if equal => Err(format!("{name}: modified tag was produced")),
        _ => Ok(()),
    }
}

fn run_cmac_group(engine: &Engine, cases: &[CmacCase<'_>], lanes: Option<usize>) -> Vec<String> {
    let mut failures = Vec::new();
    let path = format!("batch lanes={lanes:?}");
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .map(|c| Job::mac(&c.key, &c.t.msg).with_tag(Tag::In(&c.t.tag)))
        .collect();
    let results = engine.process(Algorithm::AesCmac, Op::Decrypt, &mut jobs);
    for (c, r) in cases.iter().zip(&results) {
        failures.extend(check_cmac_verify(c, r, &path).err());
    }
    let mut tags: Vec<Vec<u8>> = cases.iter().map(|c| vec![0; c.tag_len]).collect();
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .zip(tags.iter_mut())
        .map(|(c, tag)| Job::mac(&c.key, &c.t.msg).with_tag(Tag::Out(tag)))
        .collect();
    let results = engine.process(Algorithm::AesCmac, Op::Encrypt, &mut jobs);
    drop(jobs);
    for ((c, r), tag) in cases.iter().zip(&results).zip(&tags) {
        failures.extend(check_cmac_generate(c, r, tag, &path).err());
    }
    failures
}

fn run_cmac_single(engine: &Engine, c: &CmacCase<'_>) -> Vec<String> {
    let mut failures = Vec::new();
    let r = engine.process_one(
        Algorithm::AesCmac,
        Op::Decrypt,
        Job::mac(&c.key, &c.t.msg).with_tag(Tag::In(&c.t.tag)),
    );
    failures.extend(check_cmac_verify(c, &r, "single").err());
    let mut tag = vec![0; c.tag_len];
    let r = engine.process_one(
        Algorithm::AesCmac,
        Op::Encrypt,
        Job::mac(&c.key, &c.t.msg).with_tag(Tag::Out(&mut tag)),
    );
    failures.extend(check_cmac_generate(c, &r, &tag, "single").err());
    failures
}

#[test]
fn wycheproof_aes_cmac() {
    let set = wycheproof::mac::TestSet::load(wycheproof::mac::TestName::AesCmac)
        .expect("the aes_cmac test set loads");
    let mut failures = Vec::new();
    let (mut seen, mut valid, mut invalid, mut bad_keys) = (0, 0, 0, 0);
    for group in &set.test_groups {
        let mut cases = Vec::new();
        for t in &group.tests {
            seen += 1;
            match t.result {
                TestResult::Valid => valid += 1,
                TestResult::Invalid => invalid += 1,
                TestResult::Acceptable => {}
            }
            match key_of(&t.key) {
                Ok(key) => cases.push(CmacCase {
                    t,
                    key,
                    tag_len: group.tag_size / 8,
                }),
                Err(e) => {
                    bad_keys += 1;
                    if t.result != TestResult::Invalid {
                        failures.push(format!("{}: key rejected: {e}", cmac_case_name(t)));
                    }
                }
            }
        }
        for e in engines(None) {
            for c in &cases {
                failures.extend(run_cmac_single(&e, c));
            }
        }
        for lanes in LANES {
            for e in engines(lanes) {
                failures.extend(run_cmac_group(&e, &cases, lanes));
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
    assert!(
        seen > 0 && valid > 0 && invalid > 0 && bad_keys > 0,
        "{seen} cases, {valid} valid, {invalid} invalid, {bad_keys} with invalid keys"
    );
}

// ---------------------------------------------------------------------------------------
// AES-GCM

struct GcmCase<'a> {
    t: &'a wycheproof::aead::Test,
    key: AesKey,
    /// Tag length the group asks for, in bytes (what encryption generates).
    tag_len: usize,
}

fn gcm_case_name(t: &wycheproof::aead::Test) -> String {
    format!(
        "aes_gcm tcId {} ({:?}, {:?}, {:?}; key {} B, iv {} B, aad {} B, msg {} B, tag {} B)",
        t.tc_id,
        t.comment,
        t.result,
        t.flags,
        t.key.len(),
        t.nonce.len(),
        t.aad.len(),
        t.pt.len(),
        t.tag.len()
    )
}

/// The typed validation error a GCM job with these lengths must get, if any (the nonce is
/// checked before the tag).
fn gcm_validation_error(nonce_len: usize, tag_len: usize) -> Option<Error> {
    let alg = Algorithm::AesGcm;
    if !alg.iv_len_allowed(nonce_len) {
        let (min, max) = alg.iv_lens();
        Some(Error::InvalidNonceLength {
            got: nonce_len,
            min,
            max,
        })
    } else if !alg.tag_len_allowed(tag_len) {
        Some(Error::TagLengthNotAllowed {
            got: tag_len,
            allowed: alg.allowed_tag_lens(),
        })
    } else {
        None
    }
}

/// Decryption: valid gives the message; invalid gives AuthenticationFailed with the output
/// zeroed (or the typed validation error, with the output untouched).
fn check_gcm_decrypt(
    c: &GcmCase<'_>,
    r: &JobResult,
    out: &[u8],
    before: &[u8],
    path: &str,
) -> Result<(), String> {
    let t = c.t;
    let name = format!("{} decrypt, {path}", gcm_case_name(t));
    let err =
        gcm_validation_error(t.nonce.len(), t.tag.len()).unwrap_or(Error::AuthenticationFailed);
    judge(t.result, r, &Ok(t.pt.len()), &err, &name)?;
    match r {
        Ok(_) if out[..t.pt.len()] != t.pt[..] => Err(format!("{name}: wrong plaintext")),
        Err(Error::AuthenticationFailed) if out[..t.ct.len()].iter().any(|&b| b != 0) => Err(
            format!("{name}: output not zeroed after a failed verification"),
        ),
        Err(Error::AuthenticationFailed) if out[t.ct.len()..] != before[t.ct.len()..] => {
            Err(format!("{name}: wrote past the message"))
        }
        Err(e) if !matches!(e, Error::AuthenticationFailed) && out != before => {
            Err(format!("{name}: rejected ({e}) but the buffer changed"))
        }
        _ => Ok(()),
    }
}

/// Encryption: a valid case gives its ciphertext and tag; an invalid one either fails
/// validation (bad nonce or tag length) or gives something other than its (modified)
/// ciphertext and tag.
fn check_gcm_encrypt(
    c: &GcmCase<'_>,
    r: &JobResult,
    out: &[u8],
    tag: &[u8],
    path: &str,
) -> Result<(), String> {
    let t = c.t;
    let name = format!("{} encrypt, {path}", gcm_case_name(t));
    if let Some(err) = gcm_validation_error(t.nonce.len(), c.tag_len) {
        return if r.as_ref().err() == Some(&err) {
            Ok(())
        } else {
            Err(format!("{name}: expected {err:?}, got {r:?}"))
        };
    }
    if r != &Ok(t.pt.len()) {
        return Err(format!("{name}: expected Ok({}), got {r:?}", t.pt.len()));
    }
    let equal = out[..t.pt.len()] == t.ct[..] && tag == &t.tag[..];
    match t.result {
        TestResult::Valid if !equal => Err(format!(
            "{name}: wrong output {} / tag {}",
            hex::encode(&out[..t.pt.len()]),
            hex::encode(tag)
        )),
        TestResult::Invalid if equal => Err(format!("{name}: produced the modified ct/tag")),
        _ => Ok(()),
    }
}

fn run_gcm_group(engine: &Engine, cases: &[GcmCase<'_>], lanes: Option<usize>) -> Vec<String> {
    let mut failures = Vec::new();
    let path = format!("batch {} lanes={lanes:?}", engine.backend());
    // Decrypt the whole group in one batch, alternating in place and out of place, with 3
    // bytes of room after each message that must stay untouched.
    let befores: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            let mut b = if c.t.tc_id % 2 == 0 {
                c.t.ct.to_vec()
            } else {
                vec![0xA5; c.t.ct.len()]
            };
            b.extend_from_slice(&[0xA5; 3]);
            b
        })
        .collect();
    let mut bufs = befores.clone();
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .zip(bufs.iter_mut())
        .map(|(c, buf)| {
            let job = if c.t.tc_id % 2 == 0 {
                Job::new(
                    &c.key,
                    comb::Data::InPlace {
                        buf,
                        len: c.t.ct.len(),
                    },
                )
            } else {
                Job::copy(&c.key, &c.t.ct, buf)
            };
            job.with_iv(&c.t.nonce)
                .with_ad(&c.t.aad)
                .with_tag(Tag::In(&c.t.tag))
        })
        .collect();
    let results = engine.process(Algorithm::AesGcm, Op::Decrypt, &mut jobs);
    drop(jobs);
    for (((c, r), out), before) in cases.iter().zip(&results).zip(&bufs).zip(&befores) {
        failures.extend(check_gcm_decrypt(c, r, out, before, &path).err());
    }
    // Encrypt every case's message in one batch, in place for odd IDs.
    let mut bufs: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            if c.t.tc_id % 2 == 1 {
                c.t.pt.to_vec()
            } else {
                vec![0xA5; c.t.pt.len()]
            }
        })
        .collect();
    let mut tags: Vec<Vec<u8>> = cases.iter().map(|c| vec![0; c.tag_len]).collect();
    let mut jobs: Vec<Job<'_>> = cases
        .iter()
        .zip(bufs.iter_mut().zip(tags.iter_mut()))
        .map(|(c, (buf, tag))| {
            let job = if c.t.tc_id % 2 == 1 {
                Job::in_place(&c.key, buf)
            } else {
                Job::copy(&c.key, &c.t.pt, buf)
            };
            job.with_iv(&c.t.nonce)
                .with_ad(&c.t.aad)
                .with_tag(Tag::Out(tag))
        })
        .collect();
    let results = engine.process(Algorithm::AesGcm, Op::Encrypt, &mut jobs);
    drop(jobs);
    for (((c, r), out), tag) in cases.iter().zip(&results).zip(&bufs).zip(&tags) {
        failures.extend(check_gcm_encrypt(c, r, out, tag, &path).err());
    }
    failures
}

fn run_gcm_single(engine: &Engine, c: &GcmCase<'_>) -> Vec<String> {
    let mut failures = Vec::new();
    let path = format!("single {}", engine.backend());
    let before = vec![0xA5; c.t.ct.len() + 3];
    let mut out = before.clone();
    let r = engine.process_one(
        Algorithm::AesGcm,
        Op::Decrypt,
        Job::copy(&c.key, &c.t.ct, &mut out)
            .with_iv(&c.t.nonce)
            .with_ad(&c.t.aad)
            .with_tag(Tag::In(&c.t.tag)),
    );
    failures.extend(check_gcm_decrypt(c, &r, &out, &before, &path).err());
    let mut out = c.t.pt.to_vec();
    let mut tag = vec![0; c.tag_len];
    let r = engine.process_one(
        Algorithm::AesGcm,
        Op::Encrypt,
        Job::in_place(&c.key, &mut out)
            .with_iv(&c.t.nonce)
            .with_ad(&c.t.aad)
            .with_tag(Tag::Out(&mut tag)),
    );
    failures.extend(check_gcm_encrypt(c, &r, &out, &tag, &path).err());
    failures
}

#[test]
fn wycheproof_aes_gcm() {
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::AesGcm)
        .expect("the aes_gcm test set loads");
    let mut failures = Vec::new();
    let (mut seen, mut valid, mut invalid, mut bad_lengths) = (0, 0, 0, 0);
    let mut nonce_lens = std::collections::BTreeSet::new();
    for group in &set.test_groups {
        let mut cases = Vec::new();
        for t in &group.tests {
            seen += 1;
            nonce_lens.insert(t.nonce.len());
            match t.result {
                TestResult::Valid => valid += 1,
                TestResult::Invalid => invalid += 1,
                TestResult::Acceptable => {}
            }
            if gcm_validation_error(t.nonce.len(), t.tag.len()).is_some() {
                bad_lengths += 1;
            }
            match key_of(&t.key) {
                Ok(key) => cases.push(GcmCase {
                    t,
                    key,
                    tag_len: group.tag_size / 8,
                }),
                Err(e) => {
                    if t.result != TestResult::Invalid {
                        failures.push(format!("{}: key rejected: {e}", gcm_case_name(t)));
                    }
                }
            }
        }
        for e in engines(None) {
            for c in &cases {
                failures.extend(run_gcm_single(&e, c));
            }
        }
        for lanes in LANES {
            for e in engines(lanes) {
                failures.extend(run_gcm_group(&e, &cases, lanes));
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
    assert!(
        seen > 0 && valid > 0 && invalid > 0,
        "{seen} cases, {valid} valid, {invalid} invalid"
    );
    // The set exercises hashed nonces (not only 12 bytes) and a rejected nonce length.
    assert!(
        nonce_lens.len() > 2 && bad_lengths > 0,
        "nonce lengths {nonce_lens:?}, {bad_lengths} cases with a bad length"
    );
}
