//! `json_batch`: the `comb batch` JSON-Lines job parser and batch runner
//! (`comb-cli/src/batch.rs`: `lines`, `parse_line`, `process`) on arbitrary input.
//!
//! The first two bytes choose the algorithm, the op, the lane count and the tag length (within
//! the range `comb batch` accepts, as its argument check does); the rest is stdin. The CLI's
//! module is compiled here from its source (see `build.rs`), wrapped in a module that adds one
//! public entry point. Checked: no panic; one output line per input line; every output line
//! serialises to JSON as `comb batch` prints it.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../comb-cli/src/kat.rs"]
mod kat;
#[allow(dead_code)]
#[path = "../../comb-cli/src/vectors.rs"]
mod vectors;

#[allow(dead_code, unused_imports)]
mod batch {
    include!(concat!(env!("OUT_DIR"), "/cli_batch.rs"));

    /// `comb batch --alg alg --op op --tag-len tag_len` on `input`: the JSON output lines.
    pub fn fuzz_process(
        engine: &Engine,
        alg: Algorithm,
        op: Op,
        tag_len: usize,
        input: &[u8],
    ) -> Result<Vec<String>, String> {
        let family = Family::of(alg)?;
        let setup = Setup {
            alg,
            op,
            family,
            tag_len,
        };
        let n_lines = lines(input).len();
        let outputs = process(engine, setup, input);
        assert_eq!(outputs.len(), n_lines, "one output line per input line");
        Ok(outputs
            .iter()
            .map(|o| serde_json::to_string(o).expect("an output line serialises"))
            .collect())
    }
}

use comb::{Algorithm, Engine, Op};
use std::sync::OnceLock;

fn base_engine() -> Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    *E.get_or_init(|| {
        let b = comb::Backend::best(&comb::CpuFeatures::detect()).expect("AES-NI");
        Engine::untuned(b).expect("engine")
    })
}

fuzz_target!(|data: &[u8]| {
    let [a, b, input @ ..] = data else { return };
    let alg = Algorithm::ALL[usize::from(a & 0x0f) % Algorithm::ALL.len()];
    let op = if a & 0x10 == 0 {
        Op::Encrypt
    } else {
        Op::Decrypt
    };
    let mut engine = base_engine();
    if a & 0x20 != 0 {
        engine = engine
            .with_lanes(usize::from(b >> 3) + 1)
            .expect("1..=32 lanes");
    }
    let tag_len = match alg.tag_lens() {
        None => 0,
        Some((min, max, default)) => match b & 7 {
            0..=3 => default,
            x => (min + usize::from(x)).min(max),
        },
    };
    let _ = batch::fuzz_process(&engine, alg, op, tag_len, input);
});
