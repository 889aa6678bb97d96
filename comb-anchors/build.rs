//! Build script: generates the intel-ipsec-mb FFI bindings with bindgen (feature `ipsec-mb`).
//!
//! The bindings are generated from the installed header (default
//! `/usr/include/intel-ipsec-mb.h`, override with `IPSEC_MB_HEADER`) so that the `IMB_MGR` /
//! `IMB_JOB` layouts always match the library that is linked; bindgen also emits compile-time
//! size/offset assertions for every generated struct.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "ipsec-mb")]
    ipsec_mb::generate();
}

#[cfg(feature = "ipsec-mb")]
mod ipsec_mb {
    use std::env;
    use std::path::{Path, PathBuf};

    const DEFAULT_HEADER: &str = "/usr/include/intel-ipsec-mb.h";
    const HINT: &str = "install it with `scripts/install-anchor-deps.sh` (Debian packages \
                        libipsec-mb-dev and libclang-dev), or build comb-anchors with \
                        `--no-default-features --features openssl` to leave the ipsec-mb anchor out";

    pub fn generate() {
        println!("cargo:rerun-if-env-changed=IPSEC_MB_HEADER");
        let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        if target_arch != "x86_64" {
            panic!(
                "comb-anchors: intel-ipsec-mb is x86_64-only (target is {target_arch}); \
                 build without the `ipsec-mb` feature"
            );
        }
        let header = env::var("IPSEC_MB_HEADER").unwrap_or_else(|_| DEFAULT_HEADER.to_owned());
        if !Path::new(&header).is_file() {
            panic!("comb-anchors: intel-ipsec-mb header {header} not found; {HINT}");
        }
        println!("cargo:rerun-if-changed={header}");

        let bindings = bindgen::Builder::default()
            .header(header.as_str())
            // Manager life cycle and diagnostics.
            .allowlist_function("alloc_mb_mgr")
            .allowlist_function("free_mb_mgr")
            .allowlist_function("init_mb_mgr_auto")
            .allowlist_function("imb_get_errno")
            .allowlist_function("imb_get_strerror")
            .allowlist_function("imb_get_version_str")
            // The manager (its function-pointer table: get_next_job, submit_job, keyexp_*,
            // cmac_subkey_gen_*) and the job.
            .allowlist_type("IMB_MGR")
            .allowlist_type("IMB_JOB")
            .allowlist_type("IMB_ARCH")
            .allowlist_type("IMB_STATUS")
            .allowlist_type("IMB_CIPHER_MODE")
            .allowlist_type("IMB_CIPHER_DIRECTION")
            .allowlist_type("IMB_HASH_ALG")
            .allowlist_type("IMB_CHAIN_ORDER")
            .allowlist_type("gcm_key_data")
            .allowlist_var("IMB_FEATURE_.*")
            .allowlist_var("IMB_CPUFLAGS_.*")
            // Enums as plain integer constants: job fields written by C are read back from Rust,
            // and a Rust enum holding an unexpected value would be undefined behaviour.
            .default_enum_style(bindgen::EnumVariation::Consts)
            .prepend_enum_name(false)
            .layout_tests(true)
            .derive_debug(false)
            .generate()
            .unwrap_or_else(|e| panic!("comb-anchors: bindgen failed on {header}: {e}; {HINT}"));

        let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
        bindings
            .write_to_file(out.join("ipsec_mb_bindings.rs"))
            .expect("comb-anchors: cannot write the ipsec-mb bindings");
        println!("cargo:rustc-link-lib=IPSec_MB");
    }
}
