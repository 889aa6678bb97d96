//! Integration tests of the `comb` binary: `vectors` over every AES known-answer file of
//! `testdata/`, corrupted and malformed files, `batch` round trips for every algorithm,
//! malformed JSON lines, CMAC tag/verify, `info`, and `ct` (its AEAD tests set up and run).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_comb");
const AES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/kat/ciphers/aes");
const AEAD_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/kat/aead");

/// Runs `comb ARGS` with `stdin` as its standard input.
fn comb(args: &[&str], stdin: &str) -> Output {
    comb_on(None, args, stdin)
}

/// The backends this CPU runs: the commands that run kernels are tested on each
/// (`COMB_BACKEND`), so the xmm code stays tested on a VAES machine.
fn backends() -> Vec<&'static str> {
    comb::Backend::supported(&comb::CpuFeatures::detect())
        .into_iter()
        .map(|b| b.name())
        .collect()
}

/// `comb ARGS` with `COMB_BACKEND` set to `backend` (or left as the environment has it).
fn comb_on(backend: Option<&str>, args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new(BIN);
    if let Some(b) = backend {
        cmd.env("COMB_BACKEND", b);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the comb binary");
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    // A command that fails on its arguments exits without reading its input.
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for comb")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A file in the temporary directory, unique to this process and test, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("comb-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).expect("write temp file");
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn aes_file(name: &str) -> String {
    format!("{AES_DIR}/{name}")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).expect("testdata file")
}

/// A copy of the file at `path` with the first `good` (which it must contain) replaced by
/// `bad`.
fn replaced(name: &str, path: &str, good: &str, bad: &str) -> TempFile {
    let text = read(path);
    assert!(text.contains(good), "{path}: {good}");
    TempFile::new(name, &text.replacen(good, bad, 1))
}

/// `comb vectors --alg ALG PATH` reports `passed` and `failed` records, and exits with 1 if
/// any failed, else 0. Returns its output.
fn vectors(alg: &str, path: &str, passed: usize, failed: usize) -> Output {
    let o = comb(&["vectors", "--alg", alg, path], "");
    assert_eq!(o.status.code(), Some(i32::from(failed > 0)), "{o:?}");
    assert_eq!(
        stdout(&o),
        format!("{alg} {path}: {passed} passed, {failed} failed\n")
    );
    o
}

/// `comb vectors --alg ALG PATH` passes all `n` records, quietly, on every backend at the
/// default lane count and at each of `lanes`.
fn vectors_pass_everywhere(alg: &str, path: &str, n: usize, lanes: &[&str]) {
    for backend in backends() {
        for lanes in [None].into_iter().chain(lanes.iter().map(Some)) {
            let mut args = vec!["vectors", "--alg", alg, path];
            if let Some(p) = lanes {
                args.extend(["--lanes", p]);
            }
            let o = comb_on(Some(backend), &args, "");
            assert!(o.status.success(), "{backend} {args:?}: {o:?}");
            assert_eq!(
                stdout(&o),
                format!("{alg} {path}: {n} passed, 0 failed\n"),
                "{backend} {args:?}"
            );
            assert_eq!(stderr(&o), "", "{backend} {args:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// comb vectors

/// Every AES file of testdata with the algorithm it belongs to, and its record count.
const FILES: &[(&str, &str, usize)] = &[
    ("aes-ecb", "sp800_38a_ecb.kat", 3),
    ("aes-ecb", "fips197_appendix_b_c.kat", 4),
    ("aes-cbc", "sp800_38a_cbc.kat", 3),
    ("aes-ctr", "sp800_38a_ctr.kat", 3),
    ("aes-cfb128", "sp800_38a_cfb128.kat", 3),
    ("aes-ofb", "sp800_38a_ofb.kat", 3),
    ("aes-cmac", "rfc4493_cmac.kat", 4),
    ("aes-cmac", "sp800_38b_cmac.kat", 8),
    ("aes-gcm", "gcm_spec_testcases.kat", 18),
    ("aes-ccm", "rfc3610_ccm.kat", 24),
    ("aes-ocb3", "rfc7253_ocb.kat", 17),
];

#[test]
fn vectors_every_aes_file_passes() {
    for &(alg, name, n) in FILES {
        vectors_pass_everywhere(alg, &aes_file(name), n, &["1", "3", "32"]);
    }
}

#[test]
fn vectors_several_files_one_line_each() {
    let a = aes_file("rfc4493_cmac.kat");
    let b = aes_file("sp800_38b_cmac.kat");
    let o = comb(&["vectors", "--alg", "aes-cmac", &a, &b], "");
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o),
        format!("aes-cmac {a}: 4 passed, 0 failed\naes-cmac {b}: 8 passed, 0 failed\n")
    );
}

#[test]
fn vectors_unknown_algorithm() {
    let o = comb(
        &[
            "vectors",
            "--alg",
            "aes-xts",
            &aes_file("sp800_38a_cbc.kat"),
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stderr(&o).contains("unknown algorithm"), "{o:?}");
    assert_eq!(stdout(&o), "");
}

/// The `--alg` help of `vectors` and `batch` names every algorithm the library has (it once
/// listed only the first eight).
#[test]
fn vectors_and_batch_help_name_every_algorithm() {
    for cmd in ["vectors", "batch"] {
        let o = comb(&[cmd, "--help"], "");
        assert!(o.status.success(), "{o:?}");
        let help = stdout(&o);
        for alg in comb::Algorithm::ALL {
            let id = alg.id();
            let named = help
                .split(|c: char| c.is_whitespace() || ",:.()".contains(c))
                .any(|w| w == id);
            assert!(named, "`comb {cmd} --help` does not name {id}");
        }
    }
}

#[test]
fn vectors_flipped_ct_byte_fails() {
    let f = replaced(
        "flipped-ct.kat",
        &aes_file("sp800_38a_cbc.kat"),
        "7649abac8119b246cee98e9b12e9197d",
        "7649abac8119b246cee98e9b12e9197c",
    );
    let o = vectors("aes-cbc", f.path(), 2, 1);
    let err = stderr(&o);
    for what in [
        "single path, encrypt",
        "single path, decrypt",
        "batch path, encrypt",
        "batch path, decrypt",
    ] {
        assert!(err.contains(what), "{what}: {err}");
    }
    assert!(err.contains("F.2.1"), "{err}");
}

#[test]
fn vectors_single_record_file_fails() {
    let f = TempFile::new(
        "one.kat",
        "# kat-v1\n\nKEY = 000102030405060708090a0b0c0d0e0f\nPT = 00112233445566778899aabbccddeeff\nCT = 69c4e0d86a7b0430d8cdb78070b4c55b\n",
    );
    vectors("aes-ecb", f.path(), 0, 1);
    // The correct block passes.
    let f = TempFile::new("one-good.kat", &read(f.path()).replace("c55b", "c55a"));
    vectors("aes-ecb", f.path(), 1, 0);
}

#[test]
fn vectors_wrong_mac_fails_and_invalid_record_is_rejected() {
    let text = read(&aes_file("rfc4493_cmac.kat"));
    let good = "MAC = 070a16b46b4d4144f79bdd9dd04a287c";
    let bad = "MAC = 070a16b46b4d4144f79bdd9dd04a287d";
    let f = TempFile::new("bad-mac.kat", &text.replace(good, bad));
    vectors("aes-cmac", f.path(), 3, 1);

    // The same wrong MAC marked invalid must be rejected, and is.
    let fields = "# fields: ID KEY MSG MAC RESULT";
    let marked = text
        .replace("# fields: ID KEY MSG MAC", fields)
        .replace(good, &format!("{bad}\nRESULT = invalid"));
    let f = TempFile::new("invalid-mac.kat", &marked);
    vectors("aes-cmac", f.path(), 4, 0);

    // A correct MAC marked invalid is accepted by the library: the record fails.
    let marked = text
        .replace("# fields: ID KEY MSG MAC", fields)
        .replace(good, &format!("{good}\nRESULT = invalid"));
    let f = TempFile::new("valid-marked-invalid.kat", &marked);
    vectors("aes-cmac", f.path(), 3, 1);
}

#[test]
fn vectors_truncated_mac() {
    // A 4-byte MAC is a 4-byte tag.
    let text = read(&aes_file("rfc4493_cmac.kat"))
        .replace("MAC = 070a16b46b4d4144f79bdd9dd04a287c", "MAC = 070a16b4");
    let f = TempFile::new("short-mac.kat", &text);
    vectors("aes-cmac", f.path(), 4, 0);
}

#[test]
fn vectors_unreadable_records_are_errors() {
    let text = read(&aes_file("sp800_38a_cbc.kat"));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "bad-hex.kat",
            text.replacen("IV = 0001", "IV = 00z1", 1),
            "bad hex",
        ),
        (
            "odd-hex.kat",
            text.replacen("IV = 0001", "IV = 001", 1),
            "odd number",
        ),
        (
            "no-eq.kat",
            text.replacen("IV = 0001", "IV 0001", 1),
            "NAME = value",
        ),
        (
            "missing-iv.kat",
            text.replacen("IV = ", "# IV = ", 1),
            "missing field IV",
        ),
        (
            "dup.kat",
            text.replacen("IV = ", "PT = 00\nIV = ", 1),
            "duplicate field PT",
        ),
        (
            "header-only.kat",
            text.split("\n\n")
                .next()
                .unwrap_or_default()
                .replace("records: 3", "records: 0"),
            "no records",
        ),
        (
            "count.kat",
            text.replace("records: 3", "records: 4"),
            "says 4 records",
        ),
        ("empty.kat", String::new(), "no records"),
    ];
    for (name, contents, msg) in cases {
        let f = TempFile::new(name, &contents);
        let o = comb(&["vectors", "--alg", "aes-cbc", f.path()], "");
        assert_eq!(o.status.code(), Some(2), "{name}: {o:?}");
        assert_eq!(stdout(&o), "", "{name}");
        assert!(stderr(&o).contains(msg), "{name}: {}", stderr(&o));
    }
    let o = comb(
        &["vectors", "--alg", "aes-cbc", "/nonexistent/comb/file.kat"],
        "",
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

#[test]
fn vectors_wrong_file_for_the_algorithm() {
    let cases = [
        (
            "aes-cbc",
            format!("{AEAD_DIR}/aes128-gcm-n12-t16.txt"),
            "not an AEAD algorithm",
        ),
        (
            "aes-cmac",
            format!("{AEAD_DIR}/aes128-ocb3-n12-t16.txt"),
            "not an AEAD algorithm",
        ),
        (
            "aes-ctr",
            aes_file("gcm_spec_testcases.kat"),
            "does not belong to aes-ctr",
        ),
        (
            "aes-cbc",
            aes_file("rfc3610_ccm.kat"),
            "does not belong to aes-cbc",
        ),
        (
            "aes-ecb",
            aes_file("sp800_38a_cbc.kat"),
            "field IV does not belong to aes-ecb",
        ),
        (
            "aes-cbc",
            aes_file("fips197_appendix_b_c.kat"),
            "missing field IV",
        ),
        (
            "aes-cmac",
            aes_file("sp800_38a_ecb.kat"),
            "does not belong to aes-cmac",
        ),
        (
            "aes-ecb",
            aes_file("rfc4493_cmac.kat"),
            "does not belong to aes-ecb",
        ),
        (
            "aes-ecb",
            aes_file("rfc7253_ocb_iterative.kat"),
            "does not belong to aes-ecb",
        ),
    ];
    for (alg, path, msg) in cases {
        let o = comb(&["vectors", "--alg", alg, &path], "");
        assert_eq!(o.status.code(), Some(2), "{alg} {path}: {o:?}");
        assert!(stderr(&o).contains(msg), "{alg} {path}: {}", stderr(&o));
        assert_eq!(stdout(&o), "");
    }
}

#[test]
fn vectors_bad_lanes() {
    for lanes in ["0", "33", "x"] {
        let o = comb(
            &[
                "vectors",
                "--alg",
                "aes-cbc",
                "--lanes",
                lanes,
                &aes_file("sp800_38a_cbc.kat"),
            ],
            "",
        );
        assert_eq!(o.status.code(), Some(2), "{lanes}: {o:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// comb batch

const K128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const K192: &str = "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b";
const K256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const IV: &str = "000102030405060708090a0b0c0d0e0f";
const CTR0: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
/// SP 800-38A Appendix F plaintext (4 blocks).
const PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";

/// The known answer for `PT` with `K128` (SP 800-38A F.x.1), and the IV it takes.
fn sp800_38a(alg: &str) -> Option<(&'static str, &'static str)> {
    Some(match alg {
        "aes-ecb" => ("", "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4"),
        "aes-cbc" => (IV, "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"),
        "aes-ctr" => (CTR0, "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"),
        "aes-cfb128" => (IV, "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6"),
        "aes-ofb" => (IV, "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed8259740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e"),
        _ => return None,
    })
}

/// Parses the JSON Lines output of `comb batch`: per line, `Ok(out)` or `Err(error)`.
fn parse_outputs(text: &str) -> Vec<Result<String, String>> {
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("output line is JSON");
            let obj = v.as_object().expect("output line is an object");
            assert_eq!(obj.len(), 1, "{l}");
            match (obj.get("out"), obj.get("error")) {
                (Some(o), None) => Ok(o.as_str().expect("out is a string").to_string()),
                (None, Some(e)) => Err(e.as_str().expect("error is a string").to_string()),
                _ => panic!("unexpected output line {l}"),
            }
        })
        .collect()
}

fn batch(args: &[&str], input: &str) -> Vec<Result<String, String>> {
    let mut full = vec!["batch"];
    full.extend_from_slice(args);
    let o = comb(&full, input);
    assert!(o.status.success(), "{full:?}: {o:?}");
    parse_outputs(&stdout(&o))
}

/// A JSON job line of string fields, in order.
fn json_line(fields: &[(&str, &str)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("\"{name}\":\"{value}\""))
        .collect();
    format!("{{{}}}\n", fields.join(","))
}

/// A JSON job line (no `iv` field when `iv` is empty).
fn line(key: &str, iv: &str, input: &str) -> String {
    if iv.is_empty() {
        json_line(&[("key", key), ("in", input)])
    } else {
        json_line(&[("key", key), ("iv", iv), ("in", input)])
    }
}

/// Deterministic test message of `len` bytes.
fn message(len: usize, seed: usize) -> String {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 31 + seed * 7 + 3) as u8).collect();
    hex::encode(bytes)
}

#[test]
fn batch_round_trip_every_cipher() {
    for alg in [
        "aes-ecb",
        "aes-cbc",
        "aes-cbc-pkcs7",
        "aes-ctr",
        "aes-cfb128",
        "aes-ofb",
    ] {
        let whole_blocks = matches!(alg, "aes-ecb" | "aes-cbc");
        let takes_iv = alg != "aes-ecb";
        let lens: Vec<usize> = if whole_blocks {
            (0..=40).map(|b| b * 16).collect()
        } else {
            (0..=100).chain([255, 256, 1000, 1500]).collect()
        };
        let keys = [K128, K192, K256];
        let mut input = String::new();
        let mut plain = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            let m = message(len, i);
            let iv = if takes_iv {
                message(16, i + 1000)
            } else {
                String::new()
            };
            input.push_str(&line(keys[i % 3], &iv, &m));
            plain.push((keys[i % 3], iv, m));
        }
        // The SP 800-38A example as the last job.
        let known = sp800_38a(alg);
        if let Some((iv, _)) = known {
            input.push_str(&line(K128, iv, PT));
        }
        for lanes in ["1", "5", "8", "32"] {
            let enc = batch(&["--alg", alg, "--op", "encrypt", "--lanes", lanes], &input);
            assert_eq!(
                enc.len(),
                lens.len() + usize::from(known.is_some()),
                "{alg}"
            );
            if let Some((_, ct)) = known {
                assert_eq!(enc.last(), Some(&Ok(ct.to_string())), "{alg} lanes {lanes}");
            }
            let mut dec_input = String::new();
            for ((key, iv, m), c) in plain.iter().zip(&enc) {
                let c = c.as_ref().unwrap_or_else(|e| panic!("{alg}: {e}"));
                if alg == "aes-cbc-pkcs7" {
                    assert_eq!(c.len(), (m.len() / 32 + 1) * 32, "{alg}");
                } else {
                    assert_eq!(c.len(), m.len(), "{alg}");
                }
                dec_input.push_str(&line(key, iv, c));
            }
            let dec = batch(
                &["--alg", alg, "--op", "decrypt", "--lanes", lanes],
                &dec_input,
            );
            let want: Vec<Result<String, String>> =
                plain.iter().map(|(_, _, m)| Ok(m.clone())).collect();
            assert_eq!(dec, want, "{alg} lanes {lanes}");
        }
    }
}

#[test]
fn batch_decrypts_known_vectors() {
    for alg in ["aes-ecb", "aes-cbc", "aes-ctr", "aes-cfb128", "aes-ofb"] {
        let Some((iv, ct)) = sp800_38a(alg) else {
            panic!("{alg}")
        };
        let out = batch(&["--alg", alg, "--op", "decrypt"], &line(K128, iv, ct));
        assert_eq!(out, [Ok(PT.to_string())], "{alg}");
    }
}

#[test]
fn batch_malformed_lines_mixed_in() {
    let (_, ct) = sp800_38a("aes-cbc").expect("cbc vector");
    let good = line(K128, IV, PT);
    let input = [
        good.clone(),
        "\n".to_string(),                               // empty line
        "{\"key\":\"2b7e\"\n".to_string(),              // bad JSON
        line(K128, IV, "6bc1zz"),                       // bad hex
        line(K128, IV, "6bc"),                          // odd hex
        line("2b7e151628aed2a6abf7158809cf4f", IV, PT), // 15-byte key
        line(K128, "0001", PT),                         // short IV
        line(K128, "", PT),                             // missing IV
        line(K128, IV, &PT[..30]),                      // not whole blocks
        format!("{{\"key\":\"{K128}\",\"iv\":\"{IV}\",\"in\":\"{PT}\",\"x\":1}}\n"), // unknown field
        format!("{{\"key\":\"{K128}\",\"nonce\":\"{IV}\",\"in\":\"{PT}\"}}\n"),      // nonce = iv
        "   \n".to_string(),         // whitespace line
        "[1,2]\n".to_string(),       // not an object
        good.trim_end().to_string(), // no final newline
    ]
    .concat();
    let out = batch(&["--alg", "aes-cbc", "--op", "encrypt"], &input);
    assert_eq!(out.len(), 14, "{out:?}");
    let ok = Ok(ct.to_string());
    assert_eq!(out[0], ok);
    assert_eq!(out[10], ok);
    assert_eq!(out[13], ok);
    let expect_err = [
        (1, "empty line"),
        (2, "bad job"),
        (3, "bad hex"),
        (4, "bad hex"),
        (5, "key length"),
        (6, "IV/nonce length"),
        (7, "missing \"iv\""),
        (8, "multiple of 16"),
        (9, "unknown field"),
        (11, "empty line"),
        (12, "bad job"),
    ];
    for (i, msg) in expect_err {
        match &out[i] {
            Err(e) => assert!(e.contains(msg), "line {i}: {e}"),
            Ok(o) => panic!("line {i}: expected an error, got {o}"),
        }
    }
}

#[test]
fn batch_empty_input_and_trailing_newline() {
    let o = comb(&["batch", "--alg", "aes-ctr", "--op", "encrypt"], "");
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), "");
    // One line with a final newline: one output; a blank line after it: two.
    let one = line(K128, CTR0, "");
    assert_eq!(
        batch(&["--alg", "aes-ctr", "--op", "encrypt"], &one),
        [Ok(String::new())]
    );
    let two = batch(
        &["--alg", "aes-ctr", "--op", "encrypt"],
        &format!("{one}\n"),
    );
    assert_eq!(two.len(), 2);
    assert!(two[1].is_err());
}

#[test]
fn batch_cmac_tag_verify_and_wrong_tag() {
    // RFC 4493 examples 1-4.
    let msgs = ["", &PT[..32], &PT[..80], PT];
    let tags = [
        "bb1d6929e95937287fa37d129b756746",
        "070a16b46b4d4144f79bdd9dd04a287c",
        "dfa66747de9ae63030ca32611497c827",
        "51f0bebf7e3b9d92fc49741779363cfe",
    ];
    let input: String = msgs.iter().map(|m| line(K128, "", m)).collect();
    let out = batch(&["--alg", "aes-cmac", "--op", "encrypt"], &input);
    let want: Vec<Result<String, String>> = tags.iter().map(|t| Ok(t.to_string())).collect();
    assert_eq!(out, want);

    // Truncated tags.
    let out = batch(
        &["--alg", "aes-cmac", "--op", "encrypt", "--tag-len", "8"],
        &input,
    );
    let want8: Vec<Result<String, String>> = tags.iter().map(|t| Ok(t[..16].to_string())).collect();
    assert_eq!(out, want8);

    // Verify: message ‖ tag; the second copy of each has a flipped bit.
    let mut input = String::new();
    for (m, t) in msgs.iter().zip(tags) {
        input.push_str(&line(K128, "", &format!("{m}{t}")));
    }
    for (m, t) in msgs.iter().zip(tags) {
        let mut tb = hex::decode(t).expect("hex");
        tb[5] ^= 0x10;
        input.push_str(&line(K128, "", &format!("{m}{}", hex::encode(tb))));
    }
    input.push_str(&line(K128, "", "00")); // shorter than the tag
    let out = batch(&["--alg", "aes-cmac", "--op", "decrypt"], &input);
    assert_eq!(out.len(), 9);
    for r in &out[..4] {
        assert_eq!(r, &Ok(String::new()));
    }
    for r in &out[4..8] {
        assert_eq!(r, &Err("authentication failed".to_string()));
    }
    assert!(
        matches!(&out[8], Err(e) if e.contains("shorter")),
        "{:?}",
        out[8]
    );

    // Verify with an 8-byte tag.
    let input: String = msgs
        .iter()
        .zip(tags)
        .map(|(m, t)| line(K128, "", &format!("{m}{}", &t[..16])))
        .collect();
    let out = batch(
        &["--alg", "aes-cmac", "--op", "decrypt", "--tag-len", "8"],
        &input,
    );
    assert!(out.iter().all(|r| r == &Ok(String::new())), "{out:?}");
}

#[test]
fn batch_bad_arguments() {
    let cases: &[&[&str]] = &[
        &["batch", "--alg", "aes-xts", "--op", "encrypt"],
        &["batch", "--alg", "aes-cbc", "--op", "sideways"],
        &[
            "batch",
            "--alg",
            "aes-cmac",
            "--op",
            "encrypt",
            "--tag-len",
            "0",
        ],
        &[
            "batch",
            "--alg",
            "aes-cmac",
            "--op",
            "encrypt",
            "--tag-len",
            "17",
        ],
        &[
            "batch",
            "--alg",
            "aes-cbc",
            "--op",
            "encrypt",
            "--tag-len",
            "16",
        ],
        &[
            "batch", "--alg", "aes-cbc", "--op", "encrypt", "--lanes", "0",
        ],
        &[
            "batch", "--alg", "aes-cbc", "--op", "encrypt", "--lanes", "33",
        ],
        &["batch", "--alg", "aes-cbc"],
    ];
    for args in cases {
        let o = comb(args, &line(K128, IV, PT));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// comb info

#[test]
fn info_text_and_json() {
    // The best backend this CPU runs is the one chosen.
    let best = backends()[0];
    let o = comb(&["info"], "");
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    assert!(text.contains("aes "), "{text}");
    assert!(text.contains(&format!("backend: {best} ")), "{text}");
    assert!(text.contains("COMB_BACKEND"), "{text}");
    for alg in [
        "aes-ecb",
        "aes-cbc",
        "aes-cbc-pkcs7",
        "aes-ctr",
        "aes-cfb128",
        "aes-ofb",
        "aes-cmac",
    ] {
        assert!(text.contains(alg), "{alg}: {text}");
    }
    assert!(
        text.contains("chained (comb)") && text.contains("parallel"),
        "{text}"
    );

    let o = comb(&["info", "--json"], "");
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["backend"], best);
    assert_eq!(v["cpu_features"].as_array().map(Vec::len), Some(13));
    let algs = v["algorithms"].as_array().expect("algorithms");
    assert_eq!(algs.len(), comb::Algorithm::ALL.len());
    let cbc = algs.iter().find(|a| a["id"] == "aes-cbc").expect("aes-cbc");
    assert_eq!(cbc["encrypt"]["chained"], true);
    assert_eq!(cbc["decrypt"]["chained"], false);
    assert!(cbc["encrypt"]["lanes"]
        .as_u64()
        .is_some_and(|p| (1..=32).contains(&p)));
}

#[test]
fn info_backend_override() {
    let o = comb_on(Some("ni"), &["info"], "");
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("forced by COMB_BACKEND=ni"),
        "{}",
        stdout(&o)
    );
    let o = comb_on(Some("bogus"), &["info"], "");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(stdout(&o).contains("CPU features"), "{}", stdout(&o));
}

// ---------------------------------------------------------------------------------------------
// AES-GCM

/// The CAESAR genkat file of AES-128-GCM (1089 records, PT and AD of 0..=32 bytes) through
/// `comb vectors` on every backend and several lane counts.
#[test]
fn vectors_gcm_genkat_file_passes() {
    let path = format!("{AEAD_DIR}/aes128-gcm-n12-t16.txt");
    vectors_pass_everywhere("aes-gcm", &path, 1089, &["1", "7", "32"]);
}

/// Every other AEAD mode's genkat file (designer reference code, or for McOE-G an independent
/// implementation of our specification, whose file opens with comment lines) passes on both
/// paths, every backend, at the default lane count and at 1 and 7 lanes.
#[test]
fn vectors_every_aead_genkat_file_passes() {
    for (alg, file, n) in [
        ("aes-ccm", "aes128-ccm-n12-t16.txt", 1089),
        ("aes-ocb3", "aes128-ocb3-n12-t16.txt", 1089),
        ("aes128-otr", "aes128-otr-v3-n12-t16.txt", 1089),
        ("aes128-cloc", "aes128-clocv3-n12-t8.txt", 1089),
        ("aes128-silc", "aes128-silcv3-n12-t8.txt", 1089),
        ("aes128-jambu", "aes128-jambu-v2-n8-t8.txt", 1089),
        ("aes128-mcoe-g", "aes128-mcoe-g-k32-n16-t16.txt", 325),
        ("aes128-copa", "aes128-copa-v2-n16-t16.txt", 1089),
        ("aes128-poet", "aes128-poet-v2-fullaes-n16-t16.txt", 1089),
        ("aes128-poet-gf", "aes128-poet-v1-gf128-n16-t16.txt", 1089),
        ("aes128-julius", "aes128-julius-ecb-n16.txt", 1089),
        ("aes128-cobra-r", "aes128-cobra-r-n16-t16.txt", 15),
    ] {
        vectors_pass_everywhere(alg, &format!("{AEAD_DIR}/{file}"), n, &["1", "7"]);
    }
}

/// A flipped byte of one genkat record's CT (ciphertext or tag) fails that record only; the
/// GCM spec file with a wrong tag fails, and passes again when the record says `RESULT =
/// invalid`.
#[test]
fn vectors_gcm_corrupted_records_fail() {
    let f = replaced(
        "gcm-bad-tag.txt",
        &format!("{AEAD_DIR}/aes128-gcm-n12-t16.txt"),
        "CT = F1087338ECA49A01C084CDDBB5F4A0B6",
        "CT = F1087338ECA49A01C084CDDBB5F4A0B7",
    );
    let o = vectors("aes-gcm", f.path(), 1088, 1);
    assert!(stderr(&o).contains("Count = 2"), "{}", stderr(&o));

    let spec = read(&aes_file("gcm_spec_testcases.kat"));
    let tag = "TAG = 5bc94fbc3221a5db94fae95ae7121a47";
    let bad = "TAG = 5bc94fbc3221a5db94fae95ae7121a46";
    let f = TempFile::new("gcm-spec-bad.kat", &spec.replace(tag, bad));
    vectors("aes-gcm", f.path(), 17, 1);
    let marked = spec
        .replace(
            "# fields: ID KEY IV AAD PT CT TAG",
            "# fields: ID KEY IV AAD PT CT TAG RESULT",
        )
        .replace(tag, &format!("{bad}\nRESULT = invalid"));
    let f = TempFile::new("gcm-spec-invalid.kat", &marked);
    vectors("aes-gcm", f.path(), 18, 0);
    // A cipher file is not a GCM file.
    let o = comb(
        &[
            "vectors",
            "--alg",
            "aes-gcm",
            &aes_file("sp800_38a_ctr.kat"),
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o).contains("does not belong to aes-gcm"),
        "{}",
        stderr(&o)
    );
}

/// A GCM job line: key, nonce, AD (omitted when `None`), input.
fn gcm_line(key: &str, nonce: &str, ad: Option<&str>, input: &str) -> String {
    match ad {
        Some(ad) => json_line(&[("key", key), ("nonce", nonce), ("ad", ad), ("in", input)]),
        None => json_line(&[("key", key), ("iv", nonce), ("in", input)]),
    }
}

/// `comb batch --alg aes-gcm`: the GCM spec's test cases 3–5 as known answers (ciphertext ‖
/// tag), then a round trip over many lengths, nonce lengths, AD and tag lengths on every
/// backend and several lane counts; flipped tags and ciphertexts fail line by line.
#[test]
fn batch_gcm_round_trip_and_known_answers() {
    let key = "feffe9928665731c6d6a8f9467308308";
    let ad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
    let pt3 = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
    let known = [
        (
            gcm_line(key, "cafebabefacedbaddecaf888", None, pt3),
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f59854d5c2af327cd64a62cf35abd2ba6fab4",
        ),
        (
            gcm_line(key, "cafebabefacedbaddecaf888", Some(ad), &pt3[..120]),
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47",
        ),
        (
            gcm_line(key, "cafebabefacedbad", Some(ad), &pt3[..120]),
            "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c742373806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f45983612d2e79e3b0785561be14aaca2fccb",
        ),
    ];
    let input: String = known.iter().map(|(l, _)| l.as_str()).collect();
    let out = batch(&["--alg", "aes-gcm", "--op", "encrypt"], &input);
    let want: Vec<Result<String, String>> = known.iter().map(|(_, c)| Ok(c.to_string())).collect();
    assert_eq!(out, want);

    let keys = [K128, K192, K256];
    let lens: Vec<usize> = (0..=70).chain([255, 256, 257, 1000, 1500]).collect();
    let mut input = String::new();
    let mut plain = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let m = message(len, i);
        let nonce = message([12, 12, 1, 8, 16, 60][i % 6], i + 500);
        let ad = (i % 4 != 0).then(|| message((i * 7) % 50, i + 900));
        input.push_str(&gcm_line(keys[i % 3], &nonce, ad.as_deref(), &m));
        plain.push((keys[i % 3], nonce, ad, m));
    }
    for backend in backends() {
        for (tag_len, lanes) in [("16", "1"), ("12", "8"), ("8", "32"), ("4", "5")] {
            let args = |op| {
                [
                    "batch",
                    "--alg",
                    "aes-gcm",
                    "--op",
                    op,
                    "--tag-len",
                    tag_len,
                    "--lanes",
                    lanes,
                ]
            };
            let eargs = args("encrypt");
            let o = comb_on(Some(backend), &eargs, &input);
            assert!(o.status.success(), "{eargs:?}: {o:?}");
            let enc = parse_outputs(&stdout(&o));
            assert_eq!(enc.len(), lens.len());
            let t: usize = tag_len.parse().expect("number");
            let mut dec_input = String::new();
            let mut bad_input = String::new();
            for ((key, nonce, ad, m), c) in plain.iter().zip(&enc) {
                let c = c.as_ref().unwrap_or_else(|e| panic!("{backend}: {e}"));
                assert_eq!(c.len(), m.len() + 2 * t, "ciphertext ‖ {t}-byte tag");
                dec_input.push_str(&gcm_line(key, nonce, ad.as_deref(), c));
                // Flip the low bit of the last byte (the tag's) or of the first (ciphertext's).
                let mut b = hex::decode(c).expect("hex");
                let at = if m.len() % 2 == 0 { b.len() - 1 } else { 0 };
                b[at] ^= 1;
                bad_input.push_str(&gcm_line(key, nonce, ad.as_deref(), &hex::encode(b)));
            }
            let dargs = args("decrypt");
            let o = comb_on(Some(backend), &dargs, &dec_input);
            assert!(o.status.success(), "{dargs:?}: {o:?}");
            let dec = parse_outputs(&stdout(&o));
            let want: Vec<Result<String, String>> =
                plain.iter().map(|(_, _, _, m)| Ok(m.clone())).collect();
            assert_eq!(dec, want, "{backend} tag {tag_len} lanes {lanes}");
            let o = comb_on(Some(backend), &dargs, &bad_input);
            assert!(o.status.success(), "{dargs:?}: {o:?}");
            for r in parse_outputs(&stdout(&o)) {
                assert_eq!(r, Err("authentication failed".to_string()), "{backend}");
            }
        }
    }
}

/// Bad GCM input to `comb batch`: tag lengths outside {4, 8, 12..=16} are argument errors;
/// an empty or missing nonce, input shorter than the tag, AD given to a cipher are line
/// errors.
#[test]
fn batch_gcm_bad_input() {
    for n in ["0", "3", "5", "9", "11", "17"] {
        let args = [
            "batch",
            "--alg",
            "aes-gcm",
            "--op",
            "encrypt",
            "--tag-len",
            n,
        ];
        let o = comb(&args, &gcm_line(K128, "000102030405060708090a0b", None, PT));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
        assert!(
            stderr(&o).contains("4, 8, 12, 13, 14, 15, 16"),
            "{}",
            stderr(&o)
        );
    }
    let input = [
        gcm_line(K128, "", Some("00"), PT),
        format!("{{\"key\":\"{K128}\",\"in\":\"{PT}\"}}\n"),
        gcm_line(K128, "000102030405060708090a0b", None, "00"),
        gcm_line("00", "000102030405060708090a0b", None, PT),
    ]
    .concat();
    let out = batch(&["--alg", "aes-gcm", "--op", "decrypt"], &input);
    let expect = [
        "IV/nonce length 0",
        "missing \"iv\"",
        "shorter than the 16-byte tag",
        "key length",
    ];
    assert_eq!(out.len(), expect.len());
    for (r, msg) in out.iter().zip(expect) {
        assert!(matches!(r, Err(e) if e.contains(msg)), "{msg}: {r:?}");
    }
    let out = batch(
        &["--alg", "aes-ctr", "--op", "encrypt"],
        &gcm_line(K128, CTR0, Some("00"), PT),
    );
    assert!(
        matches!(&out[0], Err(e) if e.contains("associated data")),
        "{out:?}"
    );
}

/// `comb ct` runs a chosen AEAD test (past its set-up checks: exit 0 or 1 is a verdict, 2 an
/// error) and lists the AEAD tests when asked for an unknown one.
#[test]
fn ct_runs_an_aead_test_and_names_them() {
    for b in backends() {
        let name = format!("aes128-otr-tag-{b}");
        let o = comb(&["ct", "--samples", "1000", "--tests", &name], "");
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
        let row = stdout(&o);
        assert!(row.lines().any(|l| l.starts_with(&name)), "{row}");
    }
    let o = comb(
        &["ct", "--samples", "1000", "--tests", "aes128-otr-nope"],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    for t in [
        "aes128-cloc-dec-",
        "aes128-jambu-keys-",
        "aes-gcm-tag-",
        "aes128-cobra-r-",
    ] {
        assert!(err.contains(t), "{t} in {err}");
    }
}
