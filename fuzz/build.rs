//! Makes `comb-cli/src/batch.rs` includable inside a module of the `json_batch` target.
//!
//! The JSON-Lines job parser (`parse_line`, `process`) is private to the CLI's `batch`
//! module, and `comb-cli` has no library target. Instead of changing the CLI, the target
//! compiles the module's source itself: `include!` it into a module that also holds a small
//! public entry point (items of the same module may call private functions). `include!` does
//! not accept inner doc comments (`//!`), so this script copies the file without them.

use std::path::Path;

fn main() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../comb-cli/src/batch.rs");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = std::fs::read_to_string(&src).expect("comb-cli/src/batch.rs");
    let body: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//!"))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("cli_batch.rs");
    std::fs::write(out, body).expect("write OUT_DIR/cli_batch.rs");
}
