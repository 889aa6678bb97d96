//! Wycheproof `aes_cbc_pkcs5`, `aes_cmac` and `aes_gcm`: every test case, through one runner
//! ([`run_set`]): the single-message path, and the batch path (all cases of a test group in one
//! batch, at several lane counts), on every backend.
//!
//! Valid cases must pass; invalid ones must be rejected with the right typed error; the
//! sets contain no "acceptable" cases today, and one would be allowed either outcome as long
//! as a success gives the expected bytes.

mod common;

use comb::{AesKey, Algorithm, Engine, Error, JobResult, Op};
use common::{engines, run_jobs, Hold, JobDesc, PathKind, TagDesc};
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

/// A job that must end with `want`.
fn expect(r: &JobResult, want: &JobResult, name: &str) -> Result<(), String> {
    if r == want {
        Ok(())
    } else {
        Err(format!("{name}: expected {want:?}, got {r:?}"))
    }
}

/// Generation (CMAC tags, GCM encryption): `invalid`, the typed error for bad lengths, if
/// any; else `Ok(n)`, with the output `got` equal to the case's `want` for valid cases and
/// different from it for invalid ones (whose expected output was modified).
fn check_generated(
    result: TestResult,
    r: &JobResult,
    invalid: Option<Error>,
    n: usize,
    got: &[u8],
    want: &[u8],
    name: &str,
) -> Result<(), String> {
    if let Some(err) = invalid {
        return expect(r, &Err(err), name);
    }
    expect(r, &Ok(n), name)?;
    match result {
        TestResult::Valid if got != want => {
            Err(format!("{name}: wrong output {}", hex::encode(got)))
        }
        TestResult::Invalid if got == want => Err(format!("{name}: produced the modified output")),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// One runner for every set

/// A case with its key handle, and the tag length its group asks for (what generation
/// makes; 0 for a cipher).
struct Case<'a, T> {
    t: &'a T,
    key: AesKey,
    tag_len: usize,
}

/// Where a set's cases run: alone (`process_one`) or as one batch (`process`).
struct Path {
    kind: PathKind,
    name: String,
}

impl Path {
    /// How case `tc_id` holds its data in direction `op`: in a batch, alternating between in
    /// place and copied (see [`Hold::alternating`]); alone, `single`.
    fn hold(&self, tc_id: usize, op: Op, single: Hold) -> Hold {
        if self.kind == PathKind::One {
            single
        } else {
            Hold::alternating(tc_id, op)
        }
    }
}

/// What every Wycheproof case has.
trait Vector {
    fn key(&self) -> &[u8];
    fn result(&self) -> TestResult;
    /// `tcId N (comment, result, flags; key K B, ...)`: the case in failure messages, with the
    /// lengths of its fields.
    fn describe(&self) -> String;
}

/// Implements [`Vector`] for case types, each with the fields whose lengths it describes
/// (`label: field`).
macro_rules! impl_vector {
    ($($T:ty { $($label:ident: $field:ident),* })*) => {$(
        impl Vector for $T {
            fn key(&self) -> &[u8] {
                &self.key
            }

            fn result(&self) -> TestResult {
                self.result
            }

            fn describe(&self) -> String {
                let lengths = [$(format!(", {} {} B", stringify!($label), self.$field.len())),*];
                format!(
                    "tcId {} ({:?}, {:?}, {:?}; key {} B{})",
                    self.tc_id,
                    self.comment,
                    self.result,
                    self.flags,
                    self.key.len(),
                    lengths.concat()
                )
            }
        }
    )*};
}

impl_vector! {
    wycheproof::cipher::Test { iv: nonce, msg: pt, ct: ct }
    wycheproof::mac::Test { msg: msg, tag: tag }
    wycheproof::aead::Test { iv: nonce, aad: aad, msg: pt, tag: tag }
}

/// What a job gave: its result, its data buffer as the job got it (`before`) and after
/// (`out`), and its tag buffer.
struct Ran<'a> {
    r: &'a JobResult,
    before: &'a [u8],
    out: &'a [u8],
    tag: &'a [u8],
}

/// One Wycheproof set: its case type, and how a case's job is made and judged in each
/// direction (decryption or verification; encryption or generation).
trait Family {
    type Test: Vector;
    /// The set's name.
    const SET: &str;
    const ALG: Algorithm;
    /// Case `c`'s job in direction `op` on `path`.
    fn job<'a>(c: &'a Case<'a, Self::Test>, op: Op, path: &Path) -> JobDesc<'a>;
    /// Judges what case `c`'s job gave.
    fn check(c: &Case<'_, Self::Test>, op: Op, ran: &Ran<'_>, name: &str) -> Result<(), String>;

    /// A case's name in failure messages.
    fn name(t: &Self::Test) -> String {
        format!("{} {}", Self::SET, t.describe())
    }
}

/// Runs `cases` on `path`, decryption first, then encryption; returns the failures.
fn run_cases<F: Family>(engine: &Engine, cases: &[Case<'_, F::Test>], path: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for op in [Op::Decrypt, Op::Encrypt] {
        let descs: Vec<JobDesc<'_>> = cases.iter().map(|c| F::job(c, op, path)).collect();
        let o = run_jobs(engine, F::ALG, op, path.kind, &descs);
        for (i, (c, d)) in cases.iter().zip(&descs).enumerate() {
            let name = format!("{} {op}, {}", F::name(c.t), path.name);
            let ran = Ran {
                r: &o.results[i],
                before: &d.initial_buf(),
                out: &o.bufs[i],
                tag: &o.tags[i],
            };
            failures.extend(F::check(c, op, &ran, &name).err());
        }
    }
    failures
}

/// Runs a whole set, group by group (`(cases, tag length)`): every case alone through the
/// single path on every backend, then the group as one batch at each of [`LANES`] on every
/// backend. Asserts that every case passed and that the set was run whole, with valid and
/// invalid cases; returns how many cases had a key `AesKey::new` rejects.
fn run_set<'t, F: Family>(
    groups: impl IntoIterator<Item = (&'t [F::Test], usize)>,
    number_of_tests: usize,
) -> usize
where
    F::Test: 't,
{
    let mut failures = Vec::new();
    let (mut seen, mut valid, mut invalid, mut bad_keys) = (0, 0, 0, 0);
    for (tests, tag_len) in groups {
        let mut cases = Vec::new();
        for t in tests {
            seen += 1;
            match t.result() {
                TestResult::Valid => valid += 1,
                TestResult::Invalid => invalid += 1,
                TestResult::Acceptable => {}
            }
            match key_of(t.key()) {
                Ok(key) => cases.push(Case { t, key, tag_len }),
                Err(e) => {
                    bad_keys += 1;
                    if t.result() != TestResult::Invalid {
                        failures.push(format!("{}: key rejected: {e}", F::name(t)));
                    }
                }
            }
        }
        for e in engines(None) {
            let path = Path {
                kind: PathKind::One,
                name: format!("single {}", e.backend()),
            };
            failures.extend(run_cases::<F>(&e, &cases, &path));
        }
        for lanes in LANES {
            for e in engines(lanes) {
                let path = Path {
                    kind: PathKind::Batch,
                    name: format!("batch {} lanes={lanes:?}", e.backend()),
                };
                failures.extend(run_cases::<F>(&e, &cases, &path));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(seen, number_of_tests, "every case of the set was run");
    assert!(
        seen > 0 && valid > 0 && invalid > 0,
        "{seen} cases, {valid} valid, {invalid} invalid"
    );
    bad_keys
}

// ---------------------------------------------------------------------------------------
// AES-CBC-PKCS5

struct CbcPkcs5;

impl Family for CbcPkcs5 {
    type Test = wycheproof::cipher::Test;
    const SET: &str = "aes_cbc_pkcs5";
    const ALG: Algorithm = Algorithm::AesCbcPkcs7;

    /// Out of place when alone; encryption with room for the padding.
    fn job<'a>(c: &'a Case<'a, Self::Test>, op: Op, path: &Path) -> JobDesc<'a> {
        let t = c.t;
        let (input, room) = match op {
            Op::Decrypt => (&t.ct[..], t.ct.len()),
            Op::Encrypt => (&t.pt[..], t.pt.len() / 16 * 16 + 16),
        };
        JobDesc::new(&c.key, input, path.hold(t.tc_id, op, Hold::Copy), room).iv(&t.nonce)
    }

    fn check(c: &Case<'_, Self::Test>, op: Op, ran: &Ran<'_>, name: &str) -> Result<(), String> {
        match op {
            Op::Decrypt => check_cbc_decrypt(c.t, ran.r, ran.out, name),
            Op::Encrypt => check_cbc_encrypt(c.t, ran.r, ran.out, name),
        }
    }
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
    name: &str,
) -> Result<(), String> {
    let (ok, err) = cbc_decrypt_expectation(t);
    judge(t.result, r, &ok, &err, name)?;
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
    name: &str,
) -> Result<(), String> {
    if t.nonce.len() != 16 {
        let err = Error::InvalidIvLength {
            expected: 16,
            got: t.nonce.len(),
        };
        return expect(r, &Err(err), name);
    }
    // Encryption of any message succeeds; for valid cases it must give the ciphertext.
    let want = (t.pt.len() / 16 + 1) * 16;
    expect(r, &Ok(want), name)?;
    if t.result != TestResult::Invalid && out[..want] != t.ct[..] {
        return Err(format!("{name}: wrong ciphertext"));
    }
    Ok(())
}

#[test]
fn wycheproof_aes_cbc_pkcs5() {
    let set = wycheproof::cipher::TestSet::load(wycheproof::cipher::TestName::AesCbcPkcs5)
        .expect("the aes_cbc_pkcs5 test set loads");
    let groups = set.test_groups.iter().map(|g| (&g.tests[..], 0));
    run_set::<CbcPkcs5>(groups, set.number_of_tests);
}

// ---------------------------------------------------------------------------------------
// AES-CMAC

struct Cmac;

impl Family for Cmac {
    type Test = wycheproof::mac::Test;
    const SET: &str = "aes_cmac";
    const ALG: Algorithm = Algorithm::AesCmac;

    /// Verification of the case's tag, generation of the group's tag length.
    fn job<'a>(c: &'a Case<'a, Self::Test>, op: Op, _path: &Path) -> JobDesc<'a> {
        let tag = match op {
            Op::Decrypt => TagDesc::In(&c.t.tag),
            Op::Encrypt => TagDesc::Out(c.tag_len),
        };
        JobDesc::new(&c.key, &c.t.msg, Hold::Input, 0).tag(tag)
    }

    fn check(c: &Case<'_, Self::Test>, op: Op, ran: &Ran<'_>, name: &str) -> Result<(), String> {
        match op {
            Op::Decrypt => check_cmac_verify(c, ran.r, name),
            // The tag of the group's length.
            Op::Encrypt => {
                let invalid = tag_len_error(c.tag_len);
                check_generated(c.t.result, ran.r, invalid, 0, ran.tag, &c.t.tag, name)
            }
        }
    }
}

fn tag_len_error(len: usize) -> Option<Error> {
    (!(1..=16).contains(&len)).then_some(Error::InvalidTagLength {
        got: len,
        min: 1,
        max: 16,
    })
}

/// Verification: valid gives Ok(0), invalid gives AuthenticationFailed (or InvalidTagLength).
fn check_cmac_verify(
    c: &Case<'_, wycheproof::mac::Test>,
    r: &JobResult,
    name: &str,
) -> Result<(), String> {
    let err = tag_len_error(c.t.tag.len()).unwrap_or(Error::AuthenticationFailed);
    judge(c.t.result, r, &Ok(0), &err, name)
}

#[test]
fn wycheproof_aes_cmac() {
    let set = wycheproof::mac::TestSet::load(wycheproof::mac::TestName::AesCmac)
        .expect("the aes_cmac test set loads");
    let groups = set
        .test_groups
        .iter()
        .map(|g| (&g.tests[..], g.tag_size / 8));
    let bad_keys = run_set::<Cmac>(groups, set.number_of_tests);
    assert!(bad_keys > 0, "{bad_keys} cases with invalid keys");
}

// ---------------------------------------------------------------------------------------
// AES-GCM

struct Gcm;

impl Family for Gcm {
    type Test = wycheproof::aead::Test;
    const SET: &str = "aes_gcm";
    const ALG: Algorithm = Algorithm::AesGcm;

    /// Decryption with 3 bytes of room after the message that must stay untouched (out of
    /// place when alone); encryption in place when alone.
    fn job<'a>(c: &'a Case<'a, Self::Test>, op: Op, path: &Path) -> JobDesc<'a> {
        let t = c.t;
        let (input, room, single, tag) = match op {
            Op::Decrypt => (&t.ct[..], t.ct.len() + 3, Hold::Copy, TagDesc::In(&t.tag)),
            Op::Encrypt => (
                &t.pt[..],
                t.pt.len(),
                Hold::InPlace,
                TagDesc::Out(c.tag_len),
            ),
        };
        JobDesc::new(&c.key, input, path.hold(t.tc_id, op, single), room)
            .iv(&t.nonce)
            .ad(&t.aad)
            .tag(tag)
    }

    fn check(c: &Case<'_, Self::Test>, op: Op, ran: &Ran<'_>, name: &str) -> Result<(), String> {
        match op {
            Op::Decrypt => check_gcm_decrypt(c.t, ran.r, ran.out, ran.before, name),
            // The ciphertext and the tag of the group's length.
            Op::Encrypt => {
                let (t, n) = (c.t, c.t.pt.len());
                let invalid = gcm_validation_error(t.nonce.len(), c.tag_len);
                let got = [&ran.out[..n], ran.tag].concat();
                let want = [&t.ct[..], &t.tag[..]].concat();
                check_generated(t.result, ran.r, invalid, n, &got, &want, name)
            }
        }
    }
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
    t: &wycheproof::aead::Test,
    r: &JobResult,
    out: &[u8],
    before: &[u8],
    name: &str,
) -> Result<(), String> {
    let err =
        gcm_validation_error(t.nonce.len(), t.tag.len()).unwrap_or(Error::AuthenticationFailed);
    judge(t.result, r, &Ok(t.pt.len()), &err, name)?;
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

#[test]
fn wycheproof_aes_gcm() {
    let set = wycheproof::aead::TestSet::load(wycheproof::aead::TestName::AesGcm)
        .expect("the aes_gcm test set loads");
    let groups = set
        .test_groups
        .iter()
        .map(|g| (&g.tests[..], g.tag_size / 8));
    run_set::<Gcm>(groups, set.number_of_tests);
    // The set exercises hashed nonces (not only 12 bytes) and a rejected nonce length.
    let tests = || set.test_groups.iter().flat_map(|g| &g.tests);
    let nonce_lens: std::collections::BTreeSet<usize> = tests().map(|t| t.nonce.len()).collect();
    let bad_lengths = tests()
        .filter(|t| gcm_validation_error(t.nonce.len(), t.tag.len()).is_some())
        .count();
    assert!(
        nonce_lens.len() > 2 && bad_lengths > 0,
        "nonce lengths {nonce_lens:?}, {bad_lengths} cases with a bad length"
    );
}
