//! `comb vectors --alg ID FILE...`: checks known-answer files through the library's
//! single-message path ([`Engine::process_one`]) **and** its batch path ([`Engine::process`],
//! one batch per operation holding every record of the file, in file order).
//!
//! Each record becomes a [`Case`] (key, IV, AD, plaintext, ciphertext, tag, expectation) by a
//! function per algorithm *family* (plain cipher, MAC, AEAD), and each case a list of
//! [`Check`]s: encrypt and decrypt for ciphers; tag, verify and verify-with-a-flipped-tag-bit
//! for MACs; encrypt, decrypt and decrypt-with-a-flipped-tag-bit for AEAD modes. `RESULT =
//! invalid` records must be rejected instead. A record passes only if every check passes on
//! both paths.
//!
//! Output: one line `ID FILE: N passed, M failed` per file on stdout; the reason for each
//! failure on stderr. Exit status 0 if everything passed, 1 if a record failed; an unknown
//! ID or an unreadable file or record is an error (exit status 2).

use crate::kat::{self, Expectation, GenkatRecord, KatFile, KatV1Record};
use comb::{AesKey, Algorithm, Data, Engine, Error, Job, JobResult, Op, Tag};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `comb vectors`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Algorithm ID: aes-ecb, aes-cbc, aes-cbc-pkcs7, aes-ctr, aes-cfb128, aes-ofb, aes-cmac,
    /// aes-gcm, aes-ccm, aes-ocb3, aes128-otr, aes128-cloc, aes128-silc, aes128-jambu,
    /// aes128-mcoe-g, aes128-copa, aes128-poet, aes128-poet-gf, aes128-julius,
    /// aes128-cobra-r.
    #[arg(long, value_parser = parse_alg)]
    pub alg: Algorithm,
    /// Lane count P of the batch path (default: the engine's default for the mode).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub lanes: Option<u32>,
    /// Known-answer files (`kat-v1` or CAESAR `genkat`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Parses an algorithm ID for clap, listing the known IDs on error.
pub fn parse_alg(s: &str) -> Result<Algorithm, String> {
    Algorithm::from_id(s).map_err(|e| {
        let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.id()).collect();
        format!("{e} (known: {})", known.join(", "))
    })
}

/// Runs `comb vectors`.
pub fn run(a: Args) -> Result<ExitCode, String> {
    let family = Family::of(a.alg)?;
    let mut engine = Engine::new().map_err(|e| format!("cannot create the engine: {e}"))?;
    if let Some(p) = a.lanes {
        engine = engine.with_lanes(p as usize).map_err(|e| e.to_string())?;
    }
    let mut all_passed = true;
    for path in &a.files {
        let shown = path.display();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
        let parsed = kat::parse(&text).map_err(|e| format!("{shown}: {e}"))?;
        let cases = cases_of(a.alg, family, &parsed).map_err(|e| format!("{shown}: {e}"))?;
        let outcome = check_file(&engine, a.alg, &cases);
        let mut passed = 0;
        let mut failed = 0;
        for (case, failures) in cases.iter().zip(&outcome) {
            if failures.is_empty() {
                passed += 1;
            } else {
                failed += 1;
                for f in failures {
                    eprintln!("{} {shown}: {}: {f}", a.alg, case.label);
                }
            }
        }
        println!("{} {shown}: {passed} passed, {failed} failed", a.alg);
        all_passed &= failed == 0;
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

// ---------------------------------------------------------------------------------------------
// Records → cases

/// How an algorithm is driven and which record fields it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Encryption only (ECB, CBC, CTR, ...): `PT` ↔ `CT`, no tag.
    Cipher,
    /// Authentication only (CMAC): `MSG` → `MAC`.
    Mac,
    /// Authenticated encryption with associated data: `PT`, `AD` ↔ ciphertext and tag.
    Aead,
}

impl Family {
    /// The family of `alg`, from its properties (so a new algorithm of a known family needs
    /// no change here).
    pub fn of(alg: Algorithm) -> Result<Family, String> {
        Ok(match (alg.is_mac(), alg.tag_lens()) {
            (true, Some(_)) => Family::Mac,
            // Julius: authenticated encryption whose redundancy is inside the ciphertext.
            (false, None) if alg.is_aead() => Family::Aead,
            (false, None) => Family::Cipher,
            (false, Some(_)) => Family::Aead,
            (true, None) => {
                return Err(format!("{alg}: a MAC without tag lengths is not supported"))
            }
        })
    }
}

/// One record, in the terms of the library's job API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// How messages name the record.
    pub label: String,
    /// The key bytes (validated when the jobs are built: a bad key length is a failure of a
    /// valid record and a rejection of an invalid one).
    pub key: Vec<u8>,
    /// IV, initial counter block (CTR) or nonce; empty for modes without one.
    pub iv: Vec<u8>,
    /// Associated data (AEAD only).
    pub ad: Vec<u8>,
    /// Plaintext, or the MAC's message.
    pub pt: Vec<u8>,
    /// Ciphertext without the tag (empty for MACs).
    pub ct: Vec<u8>,
    /// The tag (MAC and AEAD; empty for plain ciphers).
    pub tag: Vec<u8>,
    /// Whether the record must be accepted, rejected, or may be either.
    pub expect: Expectation,
}

/// Turns every record of a parsed file into a case for `alg`; the first record that does
/// not fit `alg` is an error.
pub fn cases_of(alg: Algorithm, family: Family, file: &KatFile) -> Result<Vec<Case>, String> {
    match file {
        KatFile::KatV1(f) => f
            .records
            .iter()
            .map(|r| case_from_kat_v1(alg, family, r).map_err(|e| format!("{}: {e}", r.label())))
            .collect(),
        KatFile::Genkat(_) if family != Family::Aead => Err(format!(
            "this is a genkat (CAESAR AEAD) file, and {alg} is not an AEAD algorithm"
        )),
        KatFile::Genkat(records) => records
            .iter()
            .map(|r| case_from_genkat(alg, family, r).map_err(|e| format!("{}: {e}", r.label())))
            .collect(),
    }
}

/// The IV-like field names a `kat-v1` record may use for `alg`, in order of preference.
fn iv_field_names(alg: Algorithm, family: Family) -> &'static [&'static str] {
    match family {
        _ if alg.iv_len() == 0 => &[],
        Family::Aead => &["NONCE", "IV"],
        // SP 800-38A CTR files give the whole initial counter block as CTR.
        _ if alg == Algorithm::AesCtr => &["CTR", "IV"],
        _ => &["IV"],
    }
}

/// A `kat-v1` record as a case of `alg`: only the fields of the family are allowed.
pub fn case_from_kat_v1(alg: Algorithm, family: Family, r: &KatV1Record) -> Result<Case, String> {
    let iv_names = iv_field_names(alg, family);
    let data_names: &[&str] = match family {
        Family::Cipher => &["KEY", "PT", "CT"],
        Family::Mac => &["KEY", "MSG", "MAC"],
        Family::Aead => &["KEY", "AAD", "PT", "CT", "TAG"],
    };
    for name in r.names() {
        let ok = name == "ID"
            || name == "RESULT"
            || data_names.contains(&name)
            || iv_names.contains(&name);
        if !ok {
            return Err(format!("field {name} does not belong to {alg}"));
        }
    }
    let bytes = |name: &str| -> Result<Vec<u8>, String> {
        r.bytes(name)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| format!("missing field {name} (needed by {alg})"))
    };
    let present: Vec<&str> = iv_names
        .iter()
        .copied()
        .filter(|n| r.get(n).is_some())
        .collect();
    let iv = match present.as_slice() {
        [] if iv_names.is_empty() => Vec::new(),
        [] => {
            return Err(format!(
                "missing field {} (needed by {alg})",
                iv_names.join(" or ")
            ))
        }
        [one] => bytes(one)?,
        _ => return Err(format!("both {} given; give one", present.join(" and "))),
    };
    let expect = r.expectation();
    let label = r.label();
    let key = bytes("KEY")?;
    Ok(match family {
        Family::Cipher => Case {
            label,
            key,
            iv,
            ad: Vec::new(),
            pt: bytes("PT")?,
            ct: bytes("CT")?,
            tag: Vec::new(),
            expect,
        },
        Family::Mac => Case {
            label,
            key,
            iv,
            ad: Vec::new(),
            pt: bytes("MSG")?,
            ct: Vec::new(),
            tag: bytes("MAC")?,
            expect,
        },
        Family::Aead => Case {
            label,
            key,
            iv,
            ad: bytes("AAD")?,
            pt: bytes("PT")?,
            ct: bytes("CT")?,
            tag: bytes("TAG")?,
            expect,
        },
    })
}

/// A `genkat` record as a case of `alg`. Only AEAD algorithms take genkat files; `CT` is
/// ciphertext ‖ tag, the ciphertext being [`Algorithm::output_len`] bytes (as long as the
/// plaintext except for AES-COPA and Julius) and the tag the algorithm's default length
/// (none for Julius).
pub fn case_from_genkat(alg: Algorithm, family: Family, r: &GenkatRecord) -> Result<Case, String> {
    if family != Family::Aead {
        return Err(format!(
            "this is a genkat (CAESAR AEAD) file, and {alg} is not an AEAD algorithm"
        ));
    }
    let ct_len = alg.output_len(Op::Encrypt, r.pt.len());
    let tag_len = alg.tag_lens().map_or(0, |(_, _, default)| default);
    if r.ct.len() != ct_len.saturating_add(tag_len) {
        return Err(format!(
            "CT is {} bytes; {alg} makes {ct_len} bytes of ciphertext and a {tag_len}-byte tag \
             from a {}-byte plaintext",
            r.ct.len(),
            r.pt.len()
        ));
    }
    // AES-COPA's reference writes the tag *before* its one-byte partial flag (blocks ‖ tag ‖
    // flag); the library's ciphertext is blocks ‖ flag with the tag detached.
    let (ct, tag) = if alg == Algorithm::Aes128Copa && tag_len > 0 && ct_len > 0 {
        let blocks = ct_len - 1;
        let mut ct = r.ct[..blocks].to_vec();
        ct.push(r.ct[r.ct.len() - 1]);
        (ct, r.ct[blocks..blocks + tag_len].to_vec())
    } else {
        let (ct, tag) = r.ct.split_at(ct_len);
        (ct.to_vec(), tag.to_vec())
    };
    Ok(Case {
        label: r.label(),
        key: r.key.clone(),
        iv: r.nonce.clone(),
        ad: r.ad.clone(),
        pt: r.pt.clone(),
        ct,
        tag,
        expect: Expectation::Valid,
    })
}

// ---------------------------------------------------------------------------------------------
// Cases → checks

/// The tag side of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagSpec {
    /// No tag (plain ciphers).
    None,
    /// Produce a tag of this many bytes.
    Out(usize),
    /// Verify this tag.
    In(Vec<u8>),
}

/// What one check must see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Want {
    /// Success, with this output and (if `Some`) this tag.
    Accept { out: Vec<u8>, tag: Option<Vec<u8>> },
    /// An error (a bad key, a failed authentication, a bad padding, ...).
    Reject,
    /// Either of the above (Wycheproof `acceptable`).
    Either { out: Vec<u8>, tag: Option<Vec<u8>> },
}

/// One operation on one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Name for messages ("encrypt", "verify flipped tag", ...).
    pub name: &'static str,
    /// The operation.
    pub op: Op,
    /// The input data (plaintext, ciphertext or message).
    pub input: Vec<u8>,
    /// The tag to produce or verify.
    pub tag: TagSpec,
    /// The expected outcome.
    pub want: Want,
}

/// `tag` with one bit flipped (which bit depends on `salt`, to vary over records).
fn flip_bit(tag: &[u8], salt: usize) -> Vec<u8> {
    let mut t = tag.to_vec();
    if !t.is_empty() {
        let i = salt % t.len();
        t[i] ^= 1 << (salt % 8);
    }
    t
}

/// The checks of one case. `index` (the record's position) only varies the flipped bit.
pub fn checks_of(family: Family, case: &Case, index: usize) -> Vec<Check> {
    let want = |out: &[u8], tag: Option<&[u8]>| {
        let (out, tag) = (out.to_vec(), tag.map(<[u8]>::to_vec));
        match case.expect {
            Expectation::Valid => Want::Accept { out, tag },
            Expectation::Acceptable => Want::Either { out, tag },
            Expectation::Invalid => Want::Reject,
        }
    };
    let invalid = case.expect == Expectation::Invalid;
    let flipped = flip_bit(&case.tag, index);
    // A mode without a detached tag (Julius) gets a flipped ciphertext bit instead.
    let flipped_ct = flip_bit(&case.ct, index);
    let mut v = Vec::new();
    match family {
        Family::Cipher => {
            // An invalid cipher record (e.g. a bad PKCS#7 padding) must fail to decrypt; its
            // plaintext need not encrypt to its ciphertext.
            if !invalid {
                v.push(Check {
                    name: "encrypt",
                    op: Op::Encrypt,
                    input: case.pt.clone(),
                    tag: TagSpec::None,
                    want: want(&case.ct, None),
                });
            }
            v.push(Check {
                name: "decrypt",
                op: Op::Decrypt,
                input: case.ct.clone(),
                tag: TagSpec::None,
                want: want(&case.pt, None),
            });
        }
        Family::Mac => {
            if !invalid {
                v.push(Check {
                    name: "tag",
                    op: Op::Encrypt,
                    input: case.pt.clone(),
                    tag: TagSpec::Out(case.tag.len()),
                    want: want(&[], Some(&case.tag)),
                });
            }
            v.push(Check {
                name: "verify",
                op: Op::Decrypt,
                input: case.pt.clone(),
                tag: TagSpec::In(case.tag.clone()),
                want: want(&[], None),
            });
            if !invalid {
                v.push(Check {
                    name: "verify with a flipped tag bit",
                    op: Op::Decrypt,
                    input: case.pt.clone(),
                    tag: TagSpec::In(flipped),
                    want: Want::Reject,
                });
            }
        }
        Family::Aead => {
            // No detached tag (Julius): the jobs take none.
            let tagless = case.tag.is_empty();
            if !invalid {
                v.push(Check {
                    name: "encrypt",
                    op: Op::Encrypt,
                    input: case.pt.clone(),
                    tag: if tagless {
                        TagSpec::None
                    } else {
                        TagSpec::Out(case.tag.len())
                    },
                    want: want(&case.ct, (!tagless).then_some(&case.tag[..])),
                });
            }
            v.push(Check {
                name: "decrypt",
                op: Op::Decrypt,
                input: case.ct.clone(),
                tag: if tagless {
                    TagSpec::None
                } else {
                    TagSpec::In(case.tag.clone())
                },
                want: want(&case.pt, None),
            });
            if !invalid && case.tag.is_empty() {
                v.push(Check {
                    name: "decrypt with a flipped ciphertext bit",
                    op: Op::Decrypt,
                    input: flipped_ct,
                    tag: TagSpec::None,
                    want: Want::Reject,
                });
            } else if !invalid {
                v.push(Check {
                    name: "decrypt with a flipped tag bit",
                    op: Op::Decrypt,
                    input: case.ct.clone(),
                    tag: TagSpec::In(flipped),
                    want: Want::Reject,
                });
            }
        }
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Running checks

/// How a job holds its data (the two paths use different ones, to cover both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// `Data::Copy`: separate input and output buffers.
    Copy,
    /// `Data::InPlace`: the output overwrites the input (with room to grow).
    InPlace,
}

/// Output and tag buffers of one job.
struct Buffers {
    out: Vec<u8>,
    tag: Vec<u8>,
}

impl Buffers {
    fn new(alg: Algorithm, check: &Check, layout: Layout) -> Buffers {
        let room = alg.output_len(check.op, check.input.len());
        let out = match layout {
            // A MAC job reads `check.input` and writes no output.
            _ if alg.is_mac() => Vec::new(),
            Layout::Copy => vec![0; room],
            Layout::InPlace => {
                let mut b = check.input.clone();
                b.resize(room.max(check.input.len()), 0);
                b
            }
        };
        let tag = match check.tag {
            TagSpec::Out(n) => vec![0; n],
            _ => Vec::new(),
        };
        Buffers { out, tag }
    }
}

/// Builds the job of `check` over `bufs`.
fn job<'a>(
    alg: Algorithm,
    key: &'a AesKey,
    case: &'a Case,
    check: &'a Check,
    bufs: &'a mut Buffers,
    layout: Layout,
) -> Job<'a> {
    let job = if alg.is_mac() {
        Job::mac(key, &check.input)
    } else {
        match layout {
            Layout::Copy => Job::copy(key, &check.input, &mut bufs.out),
            Layout::InPlace => Job::new(
                key,
                Data::InPlace {
                    buf: &mut bufs.out,
                    len: check.input.len(),
                },
            ),
        }
    };
    let tag = match &check.tag {
        TagSpec::None => Tag::None,
        TagSpec::Out(_) => Tag::Out(&mut bufs.tag),
        TagSpec::In(t) => Tag::In(t),
    };
    job.with_iv(&case.iv).with_ad(&case.ad).with_tag(tag)
}

/// Compares a job's outcome with what the check wants; `Err` describes the difference.
fn evaluate(check: &Check, result: &JobResult, bufs: &Buffers) -> Result<(), String> {
    let matches = |n: usize, out: &[u8], tag: &Option<Vec<u8>>| -> Result<(), String> {
        let got = bufs.out.get(..n).unwrap_or(&bufs.out);
        if got != out {
            return Err(format!(
                "output {} != expected {}",
                hex::encode(got),
                hex::encode(out)
            ));
        }
        if let Some(t) = tag {
            if &bufs.tag != t {
                return Err(format!(
                    "tag {} != expected {}",
                    hex::encode(&bufs.tag),
                    hex::encode(t)
                ));
            }
        }
        Ok(())
    };
    match (&check.want, result) {
        (Want::Accept { out, tag }, Ok(n)) => matches(*n, out, tag),
        (Want::Accept { .. }, Err(e)) => Err(format!("failed: {e}")),
        (Want::Reject, Ok(_)) => Err("accepted, but must be rejected".to_string()),
        (Want::Reject, Err(e)) | (Want::Either { .. }, Err(e)) => no_leak(check, e, bufs),
        (Want::Either { out, tag }, Ok(n)) => matches(*n, out, tag),
    }
}

/// After a failed padding or tag check nothing may leak: the library zeroes the output.
fn no_leak(check: &Check, e: &Error, bufs: &Buffers) -> Result<(), String> {
    if matches!(e, Error::InvalidPadding | Error::AuthenticationFailed) {
        let n = check.input.len().min(bufs.out.len());
        if bufs.out[..n].iter().any(|&b| b != 0) {
            return Err(format!("rejected ({e}), but the output was not zeroed"));
        }
    }
    Ok(())
}

/// The outcome of a check whose key could not be made.
fn key_failure(check: &Check, e: &Error) -> Result<(), String> {
    match check.want {
        Want::Accept { .. } => Err(format!("key: {e}")),
        Want::Reject | Want::Either { .. } => Ok(()),
    }
}

/// Runs every check of every case on both paths; per case, the failures (empty: passed).
pub fn check_file(engine: &Engine, alg: Algorithm, cases: &[Case]) -> Vec<Vec<String>> {
    let family = match Family::of(alg) {
        Ok(f) => f,
        Err(e) => return cases.iter().map(|_| vec![e.clone()]).collect(),
    };
    let checks: Vec<Vec<Check>> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| checks_of(family, c, i))
        .collect();
    let keys: Vec<Result<AesKey, Error>> = cases.iter().map(|c| AesKey::new(&c.key)).collect();
    let mut failures: Vec<Vec<String>> = vec![Vec::new(); cases.len()];

    // Single-message path: each check alone.
    for (i, case) in cases.iter().enumerate() {
        for check in &checks[i] {
            let outcome = match &keys[i] {
                Err(e) => key_failure(check, e),
                Ok(key) => {
                    let mut bufs = Buffers::new(alg, check, Layout::Copy);
                    let j = job(alg, key, case, check, &mut bufs, Layout::Copy);
                    let r = engine.process_one(alg, check.op, j);
                    evaluate(check, &r, &bufs)
                }
            };
            if let Err(e) = outcome {
                failures[i].push(format!("single path, {}: {e}", check.name));
            }
        }
    }

    // Batch path: one batch per operation, holding the checks of every record in file order.
    for op in [Op::Encrypt, Op::Decrypt] {
        let mut slots: Vec<(usize, &Check, Buffers)> = Vec::new();
        for (i, cs) in checks.iter().enumerate() {
            for check in cs.iter().filter(|c| c.op == op) {
                match &keys[i] {
                    Err(e) => {
                        if let Err(msg) = key_failure(check, e) {
                            failures[i].push(format!("batch path, {}: {msg}", check.name));
                        }
                    }
                    Ok(_) => slots.push((i, check, Buffers::new(alg, check, Layout::InPlace))),
                }
            }
        }
        if slots.is_empty() {
            continue;
        }
        let results = {
            let mut jobs: Vec<Job<'_>> = Vec::with_capacity(slots.len());
            for (i, check, bufs) in slots.iter_mut() {
                if let Ok(key) = &keys[*i] {
                    jobs.push(job(alg, key, &cases[*i], check, bufs, Layout::InPlace));
                }
            }
            engine.process(alg, op, &mut jobs)
        };
        for ((i, check, bufs), r) in slots.iter().zip(&results) {
            if let Err(e) = evaluate(check, r, bufs) {
                failures[*i].push(format!("batch path, {}: {e}", check.name));
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::parse;

    fn engine() -> Engine {
        Engine::new().expect("AES-NI engine")
    }

    const CBC: &str = "# kat-v1
# fields: ID KEY IV PT CT

ID = F.2.1
KEY = 2b7e151628aed2a6abf7158809cf4f3c
IV = 000102030405060708090a0b0c0d0e0f
PT = 6bc1bee22e409f96e93d7e117393172a
CT = 7649abac8119b246cee98e9b12e9197d
";

    fn cases(alg: Algorithm, text: &str) -> Result<Vec<Case>, String> {
        let f = parse(text).map_err(|e| e.to_string())?;
        cases_of(alg, Family::of(alg)?, &f)
    }

    #[test]
    fn families() {
        assert_eq!(Family::of(Algorithm::AesCbc), Ok(Family::Cipher));
        assert_eq!(Family::of(Algorithm::AesCmac), Ok(Family::Mac));
        assert_eq!(Family::of(Algorithm::AesGcm), Ok(Family::Aead));
    }

    #[test]
    fn cbc_record_passes_and_corruption_fails() {
        let c = cases(Algorithm::AesCbc, CBC).expect("parses");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].iv.len(), 16);
        let r = check_file(&engine(), Algorithm::AesCbc, &c);
        assert!(r[0].is_empty(), "{r:?}");

        let bad = cases(Algorithm::AesCbc, &CBC.replace("9197d\n", "9197e\n")).expect("parses");
        let r = check_file(&engine(), Algorithm::AesCbc, &bad);
        // encrypt and decrypt fail on both paths
        assert_eq!(r[0].len(), 4, "{r:?}");
    }

    #[test]
    fn wrong_fields_are_errors() {
        let e = cases(Algorithm::AesEcb, CBC).expect_err("IV under ECB");
        assert!(e.contains("field IV does not belong to aes-ecb"), "{e}");
        let e = cases(Algorithm::AesCmac, CBC).expect_err("cipher record under CMAC");
        assert!(e.contains("does not belong to aes-cmac"), "{e}");
        let e = cases(
            Algorithm::AesCbc,
            &CBC.replace("IV = 000102030405060708090a0b0c0d0e0f\n", ""),
        )
        .expect_err("missing IV");
        assert!(e.contains("missing field IV"), "{e}");
        let e = cases(Algorithm::AesCtr, CBC).expect("IV accepted for CTR");
        assert_eq!(e[0].iv.len(), 16);
        let text = CBC
            .replace("fields: ID KEY IV", "fields: ID KEY CTR IV")
            .replace("IV = ", "CTR = 00\nIV = ");
        let e = cases(Algorithm::AesCtr, &text).expect_err("CTR and IV");
        assert!(e.contains("both CTR and IV"), "{e}");
    }

    const GENKAT: &str = "Count = 1
Key = 000102030405060708090A0B0C0D0E0F
Nonce = 000102030405060708090A0B
PT = 0001
AD = 00
CT = AABBF780C1B3403B81E4A8BF86F3FD9DBACC
";

    #[test]
    fn genkat_needs_an_aead_algorithm() {
        for alg in Algorithm::ALL {
            if Family::of(*alg) == Ok(Family::Aead) {
                // Accepted, or refused for its lengths only (an 8-byte-tag mode, COPA's
                // longer ciphertext).
                if let Err(e) = cases(*alg, GENKAT) {
                    assert!(
                        e.contains("-byte tag from a 2-byte plaintext"),
                        "{alg}: {e}"
                    );
                }
                continue;
            }
            let e = cases(*alg, GENKAT).expect_err("not an AEAD algorithm");
            assert!(e.contains("is not an AEAD algorithm"), "{e}");
        }
    }

    /// The first records of the project's AES-128-GCM genkat file, and the GCM spec's test
    /// case 4 as a `kat-v1` record: they pass; a wrong tag fails every check that uses it,
    /// and is accepted as `RESULT = invalid`.
    #[test]
    fn gcm_records() {
        let genkat = "Count = 1
Key = 000102030405060708090A0B0C0D0E0F
Nonce = 000102030405060708090A0B
PT = 
AD = 
CT = 435B9BA12D75A4BE8A977EA3CD011890

Count = 2
Key = 000102030405060708090A0B0C0D0E0F
Nonce = 000102030405060708090A0B
PT = 
AD = 00
CT = F1087338ECA49A01C084CDDBB5F4A0B6
";
        let c = cases(Algorithm::AesGcm, genkat).expect("parses");
        assert_eq!(c.len(), 2);
        let r = check_file(&engine(), Algorithm::AesGcm, &c);
        assert!(r.iter().all(Vec::is_empty), "{r:?}");
        let bad = cases(Algorithm::AesGcm, &genkat.replace("1890", "1891")).expect("parses");
        let r = check_file(&engine(), Algorithm::AesGcm, &bad);
        // encrypt (tag) and decrypt fail on both paths; the flipped-bit decryption still fails.
        assert_eq!(r[0].len(), 4, "{r:?}");
        assert!(r[1].is_empty(), "{r:?}");

        let kat = "# kat-v1
# fields: ID KEY IV AAD PT CT TAG

ID = GCM spec Test Case 4
KEY = feffe9928665731c6d6a8f9467308308
IV = cafebabefacedbaddecaf888
AAD = feedfacedeadbeeffeedfacedeadbeefabaddad2
PT = d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39
CT = 42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091
TAG = 5bc94fbc3221a5db94fae95ae7121a47
";
        let c = cases(Algorithm::AesGcm, kat).expect("parses");
        assert_eq!((c[0].iv.len(), c[0].ad.len(), c[0].tag.len()), (12, 20, 16));
        let r = check_file(&engine(), Algorithm::AesGcm, &c);
        assert!(r[0].is_empty(), "{r:?}");
        let invalid = kat
            .replace("AAD PT CT TAG", "AAD PT CT TAG RESULT")
            .replace("1a47\n", "1a46\nRESULT = invalid\n");
        let c = cases(Algorithm::AesGcm, &invalid).expect("parses");
        let r = check_file(&engine(), Algorithm::AesGcm, &c);
        assert!(r[0].is_empty(), "{r:?}");
    }

    #[test]
    fn genkat_aead_mapping() {
        let Ok(KatFile::Genkat(r)) = parse(GENKAT) else {
            panic!("genkat")
        };
        let c = case_from_genkat(Algorithm::AesGcm, Family::Aead, &r[0]).expect("maps");
        assert_eq!(c.pt, [0, 1]);
        assert_eq!(c.ct, [0xaa, 0xbb]);
        assert_eq!(c.tag.len(), 16);
        assert_eq!(c.iv.len(), 12);
        assert_eq!(c.ad, [0]);
        let checks = checks_of(Family::Aead, &c, 0);
        assert_eq!(checks.len(), 3);
        assert_eq!(checks[0].tag, TagSpec::Out(16));
        assert_eq!(checks[2].want, Want::Reject);
        assert_ne!(checks[2].tag, checks[1].tag);
    }

    #[test]
    fn mac_checks_include_a_flipped_tag() {
        let c = Case {
            label: "x".into(),
            key: vec![0; 16],
            iv: vec![],
            ad: vec![],
            pt: vec![1, 2, 3],
            ct: vec![],
            tag: vec![0; 4],
            expect: Expectation::Valid,
        };
        let checks = checks_of(Family::Mac, &c, 9);
        assert_eq!(checks.len(), 3);
        assert_eq!(checks[2].tag, TagSpec::In(vec![0, 2, 0, 0]));
        assert_eq!(checks[2].want, Want::Reject);
        let invalid = Case {
            expect: Expectation::Invalid,
            ..c
        };
        let checks = checks_of(Family::Mac, &invalid, 0);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].want, Want::Reject);
    }

    #[test]
    fn invalid_records_must_be_rejected() {
        // A CMAC record with a wrong MAC marked invalid passes; marked valid it fails.
        let text = "# kat-v1

KEY = 2b7e151628aed2a6abf7158809cf4f3c
MSG =
MAC = bb1d6929e95937287fa37d129b756747
RESULT = invalid

KEY = 2b7e151628aed2a6abf7158809cf4f3c
MSG =
MAC = bb1d6929e95937287fa37d129b756747

KEY = 2b7e151628aed2a6abf7158809cf4f3c
MSG =
MAC = bb1d6929e95937287fa37d129b756746
RESULT = invalid

KEY = 2b7e151628aed2a6abf7158809cf4f
MSG =
MAC = bb1d6929e95937287fa37d129b756746
RESULT = invalid

KEY = 2b7e151628aed2a6abf7158809cf4f3c
MSG =
MAC = bb1d6929e95937287fa37d129b756746
RESULT = acceptable
";
        let c = cases(Algorithm::AesCmac, text).expect("parses");
        let r = check_file(&engine(), Algorithm::AesCmac, &c);
        assert!(r[0].is_empty(), "{r:?}");
        assert!(!r[1].is_empty(), "{r:?}");
        assert!(
            !r[2].is_empty(),
            "a correct MAC marked invalid must fail: {r:?}"
        );
        assert!(r[3].is_empty(), "a bad key length is a rejection: {r:?}");
        assert!(r[4].is_empty(), "{r:?}");
    }
}
