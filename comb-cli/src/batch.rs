//! `comb batch --alg ID --op encrypt|decrypt [--lanes P] [--tag-len N]`: JSON Lines jobs on
//! stdin, processed as **one** batch through [`Engine::process`]; one JSON object per input
//! line on stdout, in input order.
//!
//! Input line: `{"key":HEX, "iv":HEX, "ad":HEX, "in":HEX}` with the fields the algorithm
//! needs (`nonce` is a synonym of `iv`; unknown fields are an error). Output line:
//! `{"out":HEX}` or `{"error":"..."}`.
//!
//! * Ciphers: `out` is the ciphertext or plaintext (PKCS#7 decryption: unpadded).
//! * MACs (`aes-cmac`): encryption gives the tag (`--tag-len N` bytes, default the
//!   algorithm's); decryption verifies, with `in` = message ‖ tag (its last N bytes), and
//!   gives `{"out":""}` or `{"error":"authentication failed"}`.
//! * AEAD modes (`aes-gcm`, `aes-ccm`, `aes-ocb3`, the `aes128-*` modes): `iv`/`nonce` is
//!   the nonce (AES-GCM: 1 byte or more, 12 the usual), `ad` the associated data (optional,
//!   default empty). Encryption gives ciphertext ‖ tag (`--tag-len N` bytes, default the
//!   algorithm's; GCM takes 4, 8, 12..=16), as CAESAR's `crypto_aead_encrypt`; decryption
//!   takes `in` = ciphertext ‖ tag and gives the plaintext, or `{"error":"authentication
//!   failed"}` (no plaintext). (AES-COPA's ciphertext here is its blocks ‖ flag byte, then
//!   the tag; its CAESAR reference puts the tag before the flag.) Julius has no detached tag
//!   (its redundancy is inside the ciphertext) and takes no `--tag-len`.
//!
//! Every input line gives one output line (a blank line gets an error; the newline ending the
//! last line does not start another). A malformed line gets its error and the other lines are
//! still processed together. Exit status 0 once the batch ran, 2 for bad arguments.

use crate::vectors::{parse_alg, Family};
use comb::{AesKey, Algorithm, Data, Engine, Job, Op, Tag};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

/// Arguments of `comb batch`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Algorithm ID: aes-ecb, aes-cbc, aes-cbc-pkcs7, aes-ctr, aes-cfb128, aes-ofb, aes-cmac,
    /// aes-gcm, aes-ccm, aes-ocb3, aes128-otr, aes128-cloc, aes128-silc, aes128-jambu,
    /// aes128-mcoe-g, aes128-copa, aes128-poet, aes128-poet-gf, aes128-julius,
    /// aes128-cobra-r.
    #[arg(long, value_parser = parse_alg)]
    pub alg: Algorithm,
    /// `encrypt` or `decrypt` (for MACs: compute or verify the tag; for AEAD: encrypt and
    /// tag, or verify and decrypt).
    #[arg(long)]
    pub op: Op,
    /// Lane count P (1..=32; default: the engine's default for the mode).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub lanes: Option<u32>,
    /// Tag length in bytes for MAC/AEAD algorithms (default: the algorithm's default, 16;
    /// aes-cmac takes 1..=16, aes-gcm 4, 8, 12, 13, 14, 15 or 16).
    #[arg(long)]
    pub tag_len: Option<usize>,
}

/// One input line.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct LineIn {
    key: String,
    #[serde(default)]
    iv: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    ad: Option<String>,
    #[serde(rename = "in")]
    input: String,
}

/// One output line.
#[derive(Serialize, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum LineOut {
    Out(String),
    Error(String),
}

/// A line that parsed: what its job needs.
struct Parsed {
    key: AesKey,
    iv: Vec<u8>,
    ad: Vec<u8>,
    /// Data buffer: the input (cipher text, plain text or message), with room for the output.
    buf: Vec<u8>,
    /// Length of the data in `buf`.
    len: usize,
    /// Tag buffer: the tag to produce, or the tag to verify.
    tag: Vec<u8>,
}

/// The settings every line shares.
#[derive(Clone, Copy, Debug)]
struct Setup {
    alg: Algorithm,
    op: Op,
    family: Family,
    /// Tag length (MAC and AEAD; 0 otherwise).
    tag_len: usize,
}

/// Runs `comb batch`.
pub fn run(a: Args) -> Result<ExitCode, String> {
    let family = Family::of(a.alg)?;
    let tag_len = match (a.alg.tag_lens(), a.tag_len) {
        (None, None) => 0,
        (None, Some(_)) => {
            return Err(format!("--tag-len: {} has no tag", a.alg));
        }
        (Some((_, _, default)), None) => default,
        (Some(_), Some(n)) => {
            if !a.alg.tag_len_allowed(n) {
                return Err(format!(
                    "--tag-len {n} out of range for {} ({})",
                    a.alg,
                    describe_lens(a.alg.allowed_tag_lens())
                ));
            }
            n
        }
    };
    let mut engine = Engine::new().map_err(|e| format!("cannot create the engine: {e}"))?;
    if let Some(p) = a.lanes {
        engine = engine.with_lanes(p as usize).map_err(|e| e.to_string())?;
    }
    let setup = Setup {
        alg: a.alg,
        op: a.op,
        family,
        tag_len,
    };

    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| format!("reading stdin: {e}"))?;
    let outputs = process(&engine, setup, &input);

    let stdout = std::io::stdout();
    let mut w = BufWriter::new(stdout.lock());
    for o in &outputs {
        let line = serde_json::to_string(o).map_err(|e| format!("writing JSON: {e}"))?;
        writeln!(w, "{line}").map_err(|e| format!("writing stdout: {e}"))?;
    }
    w.flush().map_err(|e| format!("writing stdout: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `1..=16`, or `4, 8, 12, 13, 14, 15, 16`: a list of lengths, as a range if it is one.
fn describe_lens(lens: &[usize]) -> String {
    match (lens.first(), lens.last()) {
        (Some(a), Some(b)) if b - a + 1 == lens.len() => format!("{a}..={b}"),
        _ => lens
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What IV an algorithm takes, for messages: "a 16-byte IV", "a nonce of 1 or more bytes".
fn describe_iv(alg: Algorithm) -> String {
    match alg.iv_lens() {
        (a, b) if a == b => format!("a {a}-byte IV"),
        (a, _) => format!("a nonce of {a} or more bytes, usually {}", alg.iv_len()),
    }
}

/// Splits the input into lines: every `\n` ends a line, and text after the last `\n` is a
/// line too (a trailing `\r` is dropped).
fn lines(input: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.is_empty() || input.ends_with(b"\n") {
        v.pop();
    }
    v.into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect()
}

/// Decodes hex field `name`.
fn unhex(name: &str, s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| format!("{name}: bad hex: {e}"))
}

/// Parses one line into a job's buffers.
fn parse_line(s: Setup, line: &[u8]) -> Result<Parsed, String> {
    let text = std::str::from_utf8(line).map_err(|_| "line is not UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Err("empty line (expected a JSON object)".into());
    }
    let l: LineIn = serde_json::from_str(text).map_err(|e| format!("bad job: {e}"))?;
    let key = AesKey::new(&unhex("key", &l.key)?).map_err(|e| format!("key: {e}"))?;
    let iv = match (&l.iv, &l.nonce) {
        (Some(_), Some(_)) => return Err("give either iv or nonce, not both".into()),
        (Some(v), None) => unhex("iv", v)?,
        (None, Some(v)) => unhex("nonce", v)?,
        (None, None) if s.alg.iv_len() > 0 => {
            return Err(format!(
                "missing \"iv\" ({} takes {})",
                s.alg,
                describe_iv(s.alg)
            ))
        }
        (None, None) => Vec::new(),
    };
    if s.alg.iv_len() == 0 && !iv.is_empty() {
        return Err(format!("{} takes no iv", s.alg));
    }
    let ad = match &l.ad {
        Some(v) => unhex("ad", v)?,
        None => Vec::new(),
    };
    let mut data = unhex("in", &l.input)?;
    // Authenticated decryption: the tag is the last `tag_len` bytes of the input.
    let tag = match (s.family, s.op) {
        (Family::Mac | Family::Aead, Op::Encrypt) => vec![0; s.tag_len],
        (Family::Mac | Family::Aead, Op::Decrypt) => {
            if data.len() < s.tag_len {
                return Err(format!(
                    "in: {} bytes, shorter than the {}-byte tag",
                    data.len(),
                    s.tag_len
                ));
            }
            data.split_off(data.len() - s.tag_len)
        }
        (Family::Cipher, _) => Vec::new(),
    };
    let len = data.len();
    let room = s.alg.output_len(s.op, len).max(len);
    data.resize(room, 0);
    Ok(Parsed {
        key,
        iv,
        ad,
        buf: data,
        len,
        tag,
    })
}

/// Parses every line, runs the good ones as one batch, and returns one output per line.
fn process(engine: &Engine, s: Setup, input: &[u8]) -> Vec<LineOut> {
    let mut parsed: Vec<Result<Parsed, String>> =
        lines(input).into_iter().map(|l| parse_line(s, l)).collect();
    let results = {
        let mut jobs: Vec<Job<'_>> = Vec::new();
        for p in parsed.iter_mut().flatten() {
            let job = if s.family == Family::Mac {
                Job::mac(&p.key, &p.buf[..p.len])
            } else {
                Job::new(
                    &p.key,
                    Data::InPlace {
                        buf: &mut p.buf,
                        len: p.len,
                    },
                )
            };
            let tag = match (s.family, s.op) {
                (Family::Cipher, _) => Tag::None,
                // An AEAD mode without a detached tag (Julius).
                (Family::Aead, _) if s.tag_len == 0 => Tag::None,
                (_, Op::Encrypt) => Tag::Out(&mut p.tag),
                (_, Op::Decrypt) => Tag::In(&p.tag),
            };
            jobs.push(job.with_iv(&p.iv).with_ad(&p.ad).with_tag(tag));
        }
        engine.process(s.alg, s.op, &mut jobs)
    };
    let mut results = results.into_iter();
    parsed
        .into_iter()
        .map(|p| match p {
            Err(e) => LineOut::Error(e),
            Ok(p) => match results.next() {
                None => LineOut::Error("internal error: no result for this job".into()),
                Some(Err(e)) => LineOut::Error(e.to_string()),
                Some(Ok(n)) => {
                    let mut out = hex::encode(p.buf.get(..n).unwrap_or(&p.buf));
                    if s.op == Op::Encrypt && s.family != Family::Cipher {
                        out.push_str(&hex::encode(&p.tag));
                    }
                    LineOut::Out(out)
                }
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(alg: Algorithm, op: Op, tag_len: usize) -> Setup {
        Setup {
            alg,
            op,
            family: Family::of(alg).expect("family"),
            tag_len,
        }
    }

    fn run_lines(alg: Algorithm, op: Op, tag_len: usize, input: &str) -> Vec<LineOut> {
        let engine = Engine::new().expect("engine");
        process(&engine, setup(alg, op, tag_len), input.as_bytes())
    }

    #[test]
    fn line_splitting() {
        assert!(lines(b"").is_empty());
        assert_eq!(lines(b"\n"), [b"".as_slice()]);
        assert_eq!(lines(b"a\nb"), [b"a".as_slice(), b"b"]);
        assert_eq!(lines(b"a\r\nb\r\n"), [b"a".as_slice(), b"b"]);
        assert_eq!(lines(b"a\n\nb\n"), [b"a".as_slice(), b"", b"b"]);
    }

    const KEY: &str = "2b7e151628aed2a6abf7158809cf4f3c";
    const PT1: &str = "6bc1bee22e409f96e93d7e117393172a";

    #[test]
    fn ecb_and_errors() {
        let input = format!(
            "{{\"key\":\"{KEY}\",\"in\":\"{PT1}\"}}\n\
             \n\
             {{\"key\":\"{KEY}\",\"in\":\"{PT1}\",\"bogus\":\"\"}}\n\
             {{\"key\":\"{KEY}\",\"iv\":\"00\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"2b7e\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"in\":\"6bc\"}}\n\
             {{\"key\":\"{KEY}\",\"in\":\"6bc1\"}}\n\
             not json\n"
        );
        let out = run_lines(Algorithm::AesEcb, Op::Encrypt, 0, &input);
        assert_eq!(out.len(), 8);
        assert_eq!(
            out[0],
            LineOut::Out("3ad77bb40d7a3660a89ecaf32466ef97".into())
        );
        let errs: Vec<String> = out[1..]
            .iter()
            .map(|o| match o {
                LineOut::Error(e) => e.clone(),
                LineOut::Out(o) => panic!("expected an error, got {o}"),
            })
            .collect();
        assert!(errs[0].contains("empty line"), "{errs:?}");
        assert!(errs[1].contains("unknown field `bogus`"), "{errs:?}");
        assert!(errs[2].contains("takes no iv"), "{errs:?}");
        assert!(errs[3].contains("key length"), "{errs:?}");
        assert!(errs[4].contains("in: bad hex"), "{errs:?}");
        assert!(errs[5].contains("multiple of 16"), "{errs:?}");
        assert!(errs[6].contains("bad job"), "{errs:?}");
    }

    #[test]
    fn cmac_tag_and_verify() {
        let tag = "070a16b46b4d4144f79bdd9dd04a287c";
        let out = run_lines(
            Algorithm::AesCmac,
            Op::Encrypt,
            4,
            &format!("{{\"key\":\"{KEY}\",\"in\":\"{PT1}\"}}"),
        );
        assert_eq!(out, [LineOut::Out(tag[..8].into())]);
        let input = format!(
            "{{\"key\":\"{KEY}\",\"in\":\"{PT1}{tag}\"}}\n{{\"key\":\"{KEY}\",\"in\":\"{PT1}{}\"}}\n{{\"key\":\"{KEY}\",\"in\":\"0011\"}}\n",
            tag.replace("287c", "287d")
        );
        let out = run_lines(Algorithm::AesCmac, Op::Decrypt, 16, &input);
        assert_eq!(out[0], LineOut::Out(String::new()));
        assert_eq!(out[1], LineOut::Error("authentication failed".into()));
        assert!(matches!(&out[2], LineOut::Error(e) if e.contains("shorter than the 16-byte tag")));
    }

    #[test]
    fn missing_iv_and_synonyms() {
        let iv = "000102030405060708090a0b0c0d0e0f";
        let input = format!(
            "{{\"key\":\"{KEY}\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"nonce\":\"{iv}\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"iv\":\"{iv}\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"iv\":\"{iv}\",\"nonce\":\"{iv}\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"iv\":\"0001\",\"in\":\"{PT1}\"}}\n\
             {{\"key\":\"{KEY}\",\"iv\":\"{iv}\",\"ad\":\"00\",\"in\":\"{PT1}\"}}\n"
        );
        let out = run_lines(Algorithm::AesCbc, Op::Encrypt, 0, &input);
        assert!(
            matches!(&out[0], LineOut::Error(e) if e.contains("missing \"iv\"")),
            "{out:?}"
        );
        let cbc1 = LineOut::Out("7649abac8119b246cee98e9b12e9197d".into());
        assert_eq!(out[1], cbc1);
        assert_eq!(out[2], cbc1);
        assert!(
            matches!(&out[3], LineOut::Error(e) if e.contains("not both")),
            "{out:?}"
        );
        assert!(
            matches!(&out[4], LineOut::Error(e) if e.contains("IV/nonce length")),
            "{out:?}"
        );
        assert!(
            matches!(&out[5], LineOut::Error(e) if e.contains("associated data")),
            "{out:?}"
        );
    }

    #[test]
    fn pkcs7_round_trip() {
        let iv = "000102030405060708090a0b0c0d0e0f";
        let input = format!("{{\"key\":\"{KEY}\",\"iv\":\"{iv}\",\"in\":\"616263\"}}\n");
        let out = run_lines(Algorithm::AesCbcPkcs7, Op::Encrypt, 0, &input);
        let LineOut::Out(ct) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(ct.len(), 32);
        let input = format!("{{\"key\":\"{KEY}\",\"iv\":\"{iv}\",\"in\":\"{ct}\"}}\n");
        let out = run_lines(Algorithm::AesCbcPkcs7, Op::Decrypt, 0, &input);
        assert_eq!(out, [LineOut::Out("616263".into())]);
    }

    /// GCM spec test case 4 (AES-128, 12-byte IV, 20 bytes of AD, 60-byte message) and 5
    /// (8-byte IV): ciphertext ‖ tag, back to the plaintext, a flipped tag bit, short tags.
    #[test]
    fn gcm_encrypt_decrypt_and_wrong_tag() {
        let key = "feffe9928665731c6d6a8f9467308308";
        let ad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
        let pt = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
        let ct4 = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091";
        let tag4 = "5bc94fbc3221a5db94fae95ae7121a47";
        let ct5 = "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c742373806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598";
        let tag5 = "3612d2e79e3b0785561be14aaca2fccb";
        let (n4, n5) = ("cafebabefacedbaddecaf888", "cafebabefacedbad");
        let line = |nonce: &str, input: &str| {
            format!(
                "{{\"key\":\"{key}\",\"nonce\":\"{nonce}\",\"ad\":\"{ad}\",\"in\":\"{input}\"}}\n"
            )
        };
        let input = [line(n4, pt), line(n5, pt)].concat();
        let out = run_lines(Algorithm::AesGcm, Op::Encrypt, 16, &input);
        assert_eq!(
            out,
            [
                LineOut::Out(format!("{ct4}{tag4}")),
                LineOut::Out(format!("{ct5}{tag5}"))
            ]
        );
        let out = run_lines(Algorithm::AesGcm, Op::Encrypt, 8, &line(n4, pt));
        assert_eq!(out, [LineOut::Out(format!("{ct4}{}", &tag4[..16]))]);

        let bad = tag4.replace("1a47", "1a46");
        let input = [
            line(n4, &format!("{ct4}{tag4}")),
            line(n5, &format!("{ct5}{tag5}")),
            line(n4, &format!("{ct4}{bad}")),
            line(n5, &format!("{ct4}{tag4}")),
            line(n4, "00"),
            format!("{{\"key\":\"{key}\",\"in\":\"{pt}\"}}\n"),
            line("", &format!("{ct4}{tag4}")),
        ]
        .concat();
        let out = run_lines(Algorithm::AesGcm, Op::Decrypt, 16, &input);
        assert_eq!(out[0], LineOut::Out(pt.into()));
        assert_eq!(out[1], LineOut::Out(pt.into()));
        assert_eq!(out[2], LineOut::Error("authentication failed".into()));
        assert_eq!(out[3], LineOut::Error("authentication failed".into()));
        assert!(
            matches!(&out[4], LineOut::Error(e) if e.contains("shorter than the 16-byte tag")),
            "{out:?}"
        );
        assert!(
            matches!(&out[5], LineOut::Error(e) if e.contains("missing \"iv\" (aes-gcm takes a nonce of 1 or more bytes, usually 12)")),
            "{out:?}"
        );
        assert!(
            matches!(&out[6], LineOut::Error(e) if e.contains("IV/nonce length 0")),
            "{out:?}"
        );
        // A 12-byte tag.
        let out = run_lines(
            Algorithm::AesGcm,
            Op::Decrypt,
            12,
            &line(n4, &format!("{ct4}{}", &tag4[..24])),
        );
        assert_eq!(out, [LineOut::Out(pt.into())]);
    }

    #[test]
    fn describe_lengths() {
        assert_eq!(
            describe_lens(Algorithm::AesCmac.allowed_tag_lens()),
            "1..=16"
        );
        assert_eq!(
            describe_lens(Algorithm::AesGcm.allowed_tag_lens()),
            "4, 8, 12, 13, 14, 15, 16"
        );
        assert_eq!(describe_iv(Algorithm::AesCbc), "a 16-byte IV");
    }

    #[test]
    fn output_json_shape() {
        assert_eq!(
            serde_json::to_string(&LineOut::Out("ab".into()))
                .ok()
                .as_deref(),
            Some(r#"{"out":"ab"}"#)
        );
        assert_eq!(
            serde_json::to_string(&LineOut::Error("x \"y\"".into()))
                .ok()
                .as_deref(),
            Some(r#"{"error":"x \"y\""}"#)
        );
    }
}
