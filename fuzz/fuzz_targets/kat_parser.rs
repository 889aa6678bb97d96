//! `kat_parser`: the CLI's known-answer-file parsers (`comb-cli/src/kat.rs`: `kat-v1` and
//! CAESAR `genkat`) on arbitrary text, and what `comb vectors` does with a file that parsed
//! (`vectors::cases_of` for every algorithm, then `vectors::check_file` through the library's
//! single and batch paths).
//!
//! The CLI's modules are compiled here from their source files (`#[path]`), so the fuzzed code
//! is exactly the CLI's. Checked: no panic; a `ParseError` names a line of the input (or 0);
//! a parsed file has records whose line numbers are lines of the input; `parse` agrees with
//! the format-specific parser it dispatches to.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../comb-cli/src/kat.rs"]
mod kat;
#[allow(dead_code)]
#[path = "../../comb-cli/src/vectors.rs"]
mod vectors;

use comb::{Algorithm, Engine};
use kat::KatFile;
use std::sync::OnceLock;

fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        let b = comb::Backend::best(&comb::CpuFeatures::detect()).expect("AES-NI");
        Engine::untuned(b).expect("engine")
    })
}

/// Bounds the work of `check_file` on one input (it runs every record through the engine).
const MAX_CHECKED_BYTES: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let n_lines = text.lines().count();

    let parsed = kat::parse(&text);
    let v1 = kat::parse_kat_v1(&text);
    let gk = kat::parse_genkat(&text);
    for e in [parsed.as_ref().err(), v1.as_ref().err(), gk.as_ref().err()]
        .into_iter()
        .flatten()
    {
        assert!(
            e.line <= n_lines,
            "error at line {} of {n_lines}: {e}",
            e.line
        );
        let _ = e.to_string();
    }
    match &parsed {
        Ok(KatFile::KatV1(f)) => {
            assert_eq!(v1.as_ref().ok(), Some(f), "parse and parse_kat_v1 disagree");
            assert!(!f.records.is_empty());
            for r in &f.records {
                assert!(r.line >= 1 && r.line <= n_lines);
                assert!(!r.fields.is_empty());
                let _ = (r.label(), r.expectation());
            }
        }
        Ok(KatFile::Genkat(records)) => {
            assert_eq!(
                gk.as_ref().ok(),
                Some(records),
                "parse and parse_genkat disagree"
            );
            assert!(!records.is_empty());
            for r in records {
                assert!(r.line >= 1 && r.line <= n_lines);
                let _ = r.label();
            }
        }
        Err(_) => {}
    }

    // What `comb vectors --alg ID` does with the parsed file.
    let Ok(file) = parsed else { return };
    for &alg in Algorithm::ALL {
        let Ok(family) = vectors::Family::of(alg) else {
            continue;
        };
        let Ok(cases) = vectors::cases_of(alg, family, &file) else {
            continue;
        };
        let bytes: usize = cases
            .iter()
            .map(|c| c.key.len() + c.iv.len() + c.ad.len() + c.pt.len() + c.ct.len() + c.tag.len())
            .sum();
        if bytes > MAX_CHECKED_BYTES {
            continue;
        }
        let failures = vectors::check_file(engine(), alg, &cases);
        assert_eq!(failures.len(), cases.len(), "one failure list per case");
    }
});
