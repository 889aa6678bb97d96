//! Drift check: the hand-written `include/comb.h` against the Rust code.
//!
//! * every `#define COMB_*` of the header has the value of the Rust constant of that name, and
//!   every Rust constant is in the header;
//! * the header's prototypes are exactly the library's `#[no_mangle]` functions, each with the
//!   Rust signature (C types translated, compared with the type of the Rust function);
//! * the `comb_job` fields have the Rust names, order and types.
//!
//! (`tests/c/abi.c`, run by `c_programs.rs`, compares `sizeof`/`offsetof` of the compiled
//! header with the library's `comb_job_layout`.)

use comb_ffi::*;
use core::ffi::{c_char, c_int, c_void};
use std::any::type_name;
use std::collections::BTreeMap;

fn header() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/comb.h");
    std::fs::read_to_string(path).expect("read include/comb.h")
}

/// The text without `/* */` and `//` comments.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b..].find("*/").expect("unterminated comment") + b + 2;
                out.push(' ');
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Single spaces, and `*` glued to what follows (`const char *` stays `const char *`).
fn squash(s: &str) -> String {
    s.replace('*', " * ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("* *", "**")
}

/// `a::b::C` → `C` inside a type name.
fn strip_paths(s: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
        } else {
            out.push_str(&word);
            word.clear();
            out.push(c);
        }
    }
    out + &word
}

/// A C type of the header (squashed) as Rust's `type_name` spells the Rust type.
fn c_to_rust(c: &str) -> String {
    let c = squash(c);
    let (base, stars) = match c.find('*') {
        Some(i) => (c[..i].trim().to_string(), c[i..].matches('*').count()),
        None => (c.clone(), 0),
    };
    let (is_const, base) = match base.strip_prefix("const ") {
        Some(b) => (true, b.to_string()),
        None => (false, base),
    };
    let char_ty = type_name::<c_char>();
    let rust_base = match base.as_str() {
        "uint8_t" => "u8",
        "uint32_t" => "u32",
        "int32_t" | "int" => type_name::<c_int>(),
        "size_t" => "usize",
        "char" => char_ty,
        "void" if stars == 0 => "()",
        "void" => "c_void",
        "comb_key" => "CombKey",
        "comb_engine" => "CombEngine",
        "comb_job" => "CombJob",
        other => panic!("no Rust type for C type {other:?}"),
    };
    let mut t = rust_base.to_string();
    for i in 0..stars {
        // The innermost pointer carries the `const` of the base type.
        let q = if i == 0 && is_const {
            "*const "
        } else {
            "*mut "
        };
        t = format!("{q}{t}");
    }
    t
}

/// Every `#define COMB_*` with its value text.
fn defines(h: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in strip_comments(h).lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("#define ") {
            let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            assert!(name.starts_with("COMB_"), "non-COMB define {name}");
            let old = m.insert(name.to_string(), value.trim().to_string());
            assert!(old.is_none(), "{name} defined twice");
        }
    }
    m
}

#[test]
fn every_define_matches_the_rust_constant() {
    let expected: BTreeMap<&str, i64> = [
        ("COMB_ABI_VERSION", COMB_ABI_VERSION as i64),
        ("COMB_JOB_SIZE_MAX", COMB_JOB_SIZE_MAX as i64),
        ("COMB_ALG_AES_ECB", COMB_ALG_AES_ECB as i64),
        ("COMB_ALG_AES_CBC", COMB_ALG_AES_CBC as i64),
        ("COMB_ALG_AES_CBC_PKCS7", COMB_ALG_AES_CBC_PKCS7 as i64),
        ("COMB_ALG_AES_CTR", COMB_ALG_AES_CTR as i64),
        ("COMB_ALG_AES_CFB128", COMB_ALG_AES_CFB128 as i64),
        ("COMB_ALG_AES_OFB", COMB_ALG_AES_OFB as i64),
        ("COMB_ALG_AES_CMAC", COMB_ALG_AES_CMAC as i64),
        ("COMB_ALG_AES_GCM", COMB_ALG_AES_GCM as i64),
        ("COMB_ALG_AES_CCM", COMB_ALG_AES_CCM as i64),
        ("COMB_ALG_AES_OCB3", COMB_ALG_AES_OCB3 as i64),
        ("COMB_ALG_AES128_OTR", COMB_ALG_AES128_OTR as i64),
        ("COMB_ALG_AES128_CLOC", COMB_ALG_AES128_CLOC as i64),
        ("COMB_ALG_AES128_SILC", COMB_ALG_AES128_SILC as i64),
        ("COMB_ALG_AES128_JAMBU", COMB_ALG_AES128_JAMBU as i64),
        ("COMB_ALG_AES128_MCOE_G", COMB_ALG_AES128_MCOE_G as i64),
        ("COMB_ALG_AES128_COPA", COMB_ALG_AES128_COPA as i64),
        ("COMB_ALG_AES128_POET", COMB_ALG_AES128_POET as i64),
        ("COMB_ALG_AES128_POET_GF", COMB_ALG_AES128_POET_GF as i64),
        ("COMB_ALG_AES128_JULIUS", COMB_ALG_AES128_JULIUS as i64),
        ("COMB_ALG_AES128_COBRA_R", COMB_ALG_AES128_COBRA_R as i64),
        ("COMB_OP_ENCRYPT", COMB_OP_ENCRYPT as i64),
        ("COMB_OP_DECRYPT", COMB_OP_DECRYPT as i64),
        ("COMB_OP_MAC_GENERATE", COMB_OP_MAC_GENERATE as i64),
        ("COMB_OP_MAC_VERIFY", COMB_OP_MAC_VERIFY as i64),
    ]
    .into_iter()
    .chain(
        ERROR_MESSAGES
            .iter()
            .map(|&(code, _)| (error_name(code), code as i64)),
    )
    .collect();
    // Every algorithm of comb has its COMB_ALG_* define (named after its string ID).
    let mut expected: BTreeMap<String, i64> = expected
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for &alg in comb::Algorithm::ALL {
        let name = format!("COMB_ALG_{}", alg.id().to_uppercase().replace('-', "_"));
        let id = algorithm_to_id(alg).unwrap_or_else(|| panic!("{alg} has no C ID"));
        let old = expected.insert(name.clone(), id as i64);
        assert!(old.is_none_or(|v| v == id as i64), "{name}");
    }

    let found = defines(&header());
    for (name, value) in &found {
        match name.as_str() {
            "COMB_H" => assert_eq!(value, "", "include guard"),
            "COMB_JOB_SIZE_V1" => {
                assert_eq!(value, "(16 + 13 * sizeof(void *))");
                assert_eq!(COMB_JOB_SIZE_V1, 16 + 13 * size_of::<*const c_void>());
            }
            _ => {
                let want = expected
                    .get(name.as_str())
                    .unwrap_or_else(|| panic!("{name} is in the header but not in Rust"));
                let v = value.trim_start_matches('(').trim_end_matches(')');
                let got: i64 = v
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}: value {value:?} is not an integer"));
                assert_eq!(got, *want, "{name}");
            }
        }
    }
    for name in expected.keys() {
        assert!(
            found.contains_key(name),
            "{name} is missing from the header"
        );
    }
}

/// The header name of an error code, from the Rust constants.
fn error_name(code: c_int) -> &'static str {
    const NAMES: &[(c_int, &str)] = &[
        (COMB_OK, "COMB_OK"),
        (COMB_ERR_UNSUPPORTED, "COMB_ERR_UNSUPPORTED"),
        (COMB_ERR_UNKNOWN_BACKEND, "COMB_ERR_UNKNOWN_BACKEND"),
        (COMB_ERR_UNKNOWN_ALGORITHM, "COMB_ERR_UNKNOWN_ALGORITHM"),
        (COMB_ERR_INVALID_KEY_LENGTH, "COMB_ERR_INVALID_KEY_LENGTH"),
        (COMB_ERR_INVALID_IV_LENGTH, "COMB_ERR_INVALID_IV_LENGTH"),
        (COMB_ERR_NOT_BLOCK_MULTIPLE, "COMB_ERR_NOT_BLOCK_MULTIPLE"),
        (COMB_ERR_OUTPUT_TOO_SHORT, "COMB_ERR_OUTPUT_TOO_SHORT"),
        (COMB_ERR_INVALID_PADDING, "COMB_ERR_INVALID_PADDING"),
        (COMB_ERR_INVALID_TAG_LENGTH, "COMB_ERR_INVALID_TAG_LENGTH"),
        (COMB_ERR_TAG_MISUSE, "COMB_ERR_TAG_MISUSE"),
        (COMB_ERR_AD_NOT_SUPPORTED, "COMB_ERR_AD_NOT_SUPPORTED"),
        (COMB_ERR_AUTH_FAILED, "COMB_ERR_AUTH_FAILED"),
        (COMB_ERR_INVALID_LANE_COUNT, "COMB_ERR_INVALID_LANE_COUNT"),
        (
            COMB_ERR_INVALID_NONCE_LENGTH,
            "COMB_ERR_INVALID_NONCE_LENGTH",
        ),
        (
            COMB_ERR_TAG_LENGTH_NOT_ALLOWED,
            "COMB_ERR_TAG_LENGTH_NOT_ALLOWED",
        ),
        (COMB_ERR_MESSAGE_TOO_LONG, "COMB_ERR_MESSAGE_TOO_LONG"),
        (
            COMB_ERR_INVALID_MESSAGE_LENGTH,
            "COMB_ERR_INVALID_MESSAGE_LENGTH",
        ),
        (COMB_ERR_NULL_POINTER, "COMB_ERR_NULL_POINTER"),
        (COMB_ERR_OVERLAP, "COMB_ERR_OVERLAP"),
        (COMB_ERR_JOB_SIZE, "COMB_ERR_JOB_SIZE"),
        (COMB_ERR_UNKNOWN_OP, "COMB_ERR_UNKNOWN_OP"),
        (COMB_ERR_PANIC, "COMB_ERR_PANIC"),
        (COMB_ERR_JOBS_FAILED, "COMB_ERR_JOBS_FAILED"),
        (COMB_ERR_INVALID_ARGUMENT, "COMB_ERR_INVALID_ARGUMENT"),
        (COMB_ERR_OTHER, "COMB_ERR_OTHER"),
    ];
    assert_eq!(
        NAMES.len(),
        ERROR_MESSAGES.len(),
        "an error code has no name here"
    );
    NAMES
        .iter()
        .find(|n| n.0 == code)
        .unwrap_or_else(|| panic!("error code {code} has no name in this test"))
        .1
}

/// `(name, C return type, C parameter types)` of every prototype in the header (the
/// `static inline` helpers excluded).
fn prototypes(h: &str) -> Vec<(String, String, Vec<String>)> {
    let text = strip_comments(h);
    // Drop preprocessor lines and the inline helper's body.
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let text = match text.find("static inline") {
        Some(s) => {
            let end = text[s..].find("\n}").expect("inline body") + s + 2;
            format!("{}{}", &text[..s], &text[end..])
        }
        None => text,
    };
    let mut out = Vec::new();
    for stmt in text.split(';') {
        let stmt = squash(stmt);
        if stmt.starts_with("typedef") || stmt.contains('{') || stmt.contains('}') {
            continue;
        }
        let Some(open) = stmt.find('(') else { continue };
        let before = stmt[..open].trim();
        let split = before.rfind([' ', '*']).expect("return type");
        let name = before[split + 1..].to_string();
        let ret = before[..=split].trim().to_string();
        let params = stmt[open + 1..stmt.rfind(')').expect(")")].trim();
        let params: Vec<String> = if params == "void" {
            vec![]
        } else {
            params
                .split(',')
                .map(|p| {
                    // Drop the parameter name: the last identifier.
                    let p = p.trim();
                    let cut = p.rfind([' ', '*']).expect("parameter");
                    p[..=cut].trim().to_string()
                })
                .collect()
        };
        out.push((name, ret, params));
    }
    out
}

/// `(name, type of the Rust function as a fn pointer)`; the coercion is the compile-time
/// check that the Rust function has exactly this signature.
macro_rules! sigs {
    ($($name:ident: $ty:ty;)*) => {
        vec![$({
            let f: $ty = $name;
            let _ = f;
            (stringify!($name), type_name::<$ty>())
        }),*]
    };
}

#[test]
fn every_prototype_matches_a_rust_function() {
    let rust: BTreeMap<&str, &str> = sigs! {
        comb_abi_version: unsafe extern "C" fn() -> u32;
        comb_version: unsafe extern "C" fn() -> *const c_char;
        comb_strerror: unsafe extern "C" fn(c_int) -> *const c_char;
        comb_alg_name: unsafe extern "C" fn(u32) -> *const c_char;
        comb_alg_from_name: unsafe extern "C" fn(*const c_char, *mut u32) -> c_int;
        comb_iv_len: unsafe extern "C" fn(u32, *mut usize) -> c_int;
        comb_iv_len_range: unsafe extern "C" fn(u32, *mut usize, *mut usize) -> c_int;
        comb_tag_len_allowed: unsafe extern "C" fn(u32, usize) -> c_int;
        comb_tag_len_range: unsafe extern "C" fn(u32, *mut usize, *mut usize) -> c_int;
        comb_output_len: unsafe extern "C" fn(u32, u32, usize, *mut usize) -> c_int;
        comb_key_new: unsafe extern "C" fn(*const u8, usize, *mut *mut CombKey) -> c_int;
        comb_key_free: unsafe extern "C" fn(*mut CombKey);
        comb_engine_new: unsafe extern "C" fn(*mut *mut CombEngine) -> c_int;
        comb_engine_free: unsafe extern "C" fn(*mut CombEngine);
        comb_engine_backend: unsafe extern "C" fn(*const CombEngine) -> *const c_char;
        comb_job_layout: unsafe extern "C" fn(*mut usize, usize) -> usize;
        comb_process:
            unsafe extern "C" fn(*const CombEngine, u32, u32, *mut CombJob, usize) -> c_int;
    }
    .into_iter()
    .collect();

    // The list above is every exported function of the library source.
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"))
        .expect("read src/lib.rs");
    let mut exported = Vec::new();
    let mut lines = src.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "#[no_mangle]" {
            let decl = lines.next().expect("item after #[no_mangle]");
            let name = decl
                .split("fn ")
                .nth(1)
                .expect("fn")
                .split('(')
                .next()
                .unwrap();
            exported.push(name.trim().to_string());
        }
    }
    let mut listed: Vec<String> = rust.keys().map(|s| s.to_string()).collect();
    exported.sort();
    listed.sort();
    assert_eq!(
        exported, listed,
        "#[no_mangle] functions vs this test's list"
    );

    let protos = prototypes(&header());
    let mut declared: Vec<String> = protos.iter().map(|p| p.0.clone()).collect();
    declared.sort();
    assert_eq!(declared, listed, "header prototypes vs library functions");

    for (name, ret, params) in &protos {
        let params: Vec<String> = params.iter().map(|p| c_to_rust(p)).collect();
        let mut want = format!("unsafe extern \"C\" fn({})", params.join(", "));
        let ret = c_to_rust(ret);
        if ret != "()" {
            want = format!("{want} -> {ret}");
        }
        let got = strip_paths(rust[name.as_str()]);
        assert_eq!(strip_paths(&want), got, "signature of {name}");
    }
}

/// The Rust type of each `comb_job` field, in declaration order.
macro_rules! field_types {
    ($($field:ident),*) => {{
        fn ty<T>(_: *const T) -> &'static str {
            type_name::<T>()
        }
        let j = core::mem::MaybeUninit::<CombJob>::uninit();
        let p = j.as_ptr();
        // SAFETY: addr_of! computes field addresses without reading the uninitialised job.
        vec![$((
            stringify!($field).trim_start_matches("r#"),
            ty(unsafe { core::ptr::addr_of!((*p).$field) }),
        )),*]
    }};
}

#[test]
fn job_fields_match_in_name_order_and_type() {
    let h = header();
    let start = h
        .find("typedef struct comb_job {")
        .expect("comb_job definition");
    let end = h[start..].find("} comb_job;").expect("end of comb_job") + start;
    let body = strip_comments(&h[start + "typedef struct comb_job {".len()..end]);
    let fields: Vec<(String, String)> = body
        .split(';')
        .map(squash)
        .filter(|f| !f.is_empty())
        .map(|f| {
            let cut = f.rfind([' ', '*']).expect("field");
            (f[cut + 1..].to_string(), f[..=cut].trim().to_string())
        })
        .collect();

    let rust = field_types!(
        size, flags, r#in, out, len, out_cap, key, iv, iv_len, ad, ad_len, tag, tag_len, status,
        reserved, out_len, user_data
    );
    let names: Vec<&str> = JOB_FIELDS.iter().map(|f| f.0).collect();
    let rust_names: Vec<&str> = rust.iter().map(|f| f.0).collect();
    assert_eq!(rust_names, names, "this test's field list vs JOB_FIELDS");
    let c_names: Vec<&str> = fields.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(c_names, names, "comb_job fields in the header vs Rust");
    for ((name, c_ty), (_, rust_ty)) in fields.iter().zip(&rust) {
        assert_eq!(
            strip_paths(&c_to_rust(c_ty)),
            strip_paths(rust_ty),
            "type of comb_job.{name}"
        );
    }
    // Offsets strictly increase in declaration order (what C does, so the header's order is
    // the layout; abi.c checks the actual numbers).
    assert!(JOB_FIELDS.windows(2).all(|w| w[0].1 < w[1].1));
}
