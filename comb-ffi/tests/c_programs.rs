//! Compiles the C programs of `tests/c/` and `examples/c/` against this crate's static
//! library and runs them: `cargo test -p comb-ffi` is the C test suite.
//!
//! `cargo test` builds the library's declared crate types (`staticlib` included) into
//! `target/<profile>/deps/`, next to this test binary (see [`static_lib`]); the programs link
//! it statically, so they need no `LD_LIBRARY_PATH`.
//! Compiler: `$CC`, else `cc`. Flags: `-std=c99 -Wall -Wextra -Werror -pedantic`.

use std::path::{Path, PathBuf};
use std::process::Command;

const CFLAGS: &[&str] = &[
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-O1",
    "-g",
];

/// The system libraries Rust's std needs in a static link on Linux (`rustc --print
/// native-static-libs`).
const LIBS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>/`: the parent of `deps/`, where this test binary lives.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    assert_eq!(
        deps.file_name().and_then(|n| n.to_str()),
        Some("deps"),
        "{exe:?}"
    );
    deps.parent().expect("profile dir").to_path_buf()
}

/// The static library this `cargo test` built. The library is a dependency of the test
/// targets, not a requested artifact, so cargo leaves it in `deps/` (as `libcomb_ffi.a` or
/// `libcomb_ffi-<hash>.a`) and does not copy it up to `target/<profile>/`; that copy exists
/// only after a `cargo build` and may be older. Take the newest candidate.
fn static_lib() -> PathBuf {
    let deps = profile_dir().join("deps");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&deps)
        .expect("read deps dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n == "libcomb_ffi.a" || (n.starts_with("libcomb_ffi-") && n.ends_with(".a"))
            })
        })
        .collect();
    candidates.push(profile_dir().join("libcomb_ffi.a"));
    candidates
        .into_iter()
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no libcomb_ffi.a under {deps:?}: the staticlib crate type?"))
}

/// A scratch directory for the executables, under the profile directory.
fn out_dir() -> PathBuf {
    let d = profile_dir().join("comb-ffi-c-tests");
    std::fs::create_dir_all(&d).expect("create output dir");
    d
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Runs a command, panicking with its output when it fails; returns its stdout.
fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    print!("{stdout}");
    eprint!("{stderr}");
    stdout
}

/// Compiles `sources` into `name` with the strict flags and links the static library.
fn build(name: &str, sources: &[PathBuf], extra: &[&str]) -> PathBuf {
    let exe = out_dir().join(name);
    let mut cmd = Command::new(cc());
    cmd.args(CFLAGS)
        .args(extra)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg("-I")
        .arg(crate_dir().join("tests/c"))
        .args(sources)
        .arg(static_lib())
        .args(LIBS)
        .arg("-o")
        .arg(&exe);
    run(&mut cmd, &format!("compiling {name}"));
    exe
}

/// Builds `tests/c/<name>.c` and runs it twice: on the engine's own choice of backend
/// (`COMB_BACKEND` as the environment has it) and forced to `ni`, so both the AES-NI and the
/// best backend of this CPU go through the C interface.
fn c_test(name: &str, extra: &[&str]) {
    let src = crate_dir().join("tests/c").join(format!("{name}.c"));
    let exe = build(name, &[src], extra);
    run(&mut Command::new(&exe), name);
    let mut ni = Command::new(&exe);
    ni.env("COMB_BACKEND", "ni");
    run(&mut ni, &format!("{name} (COMB_BACKEND=ni)"));
}

/// One test per program of `tests/c/`: `test_name: "program" [, extra compiler flags]`.
macro_rules! c_tests {
    ($($test:ident: $name:literal $(, $flag:literal)*;)*) => {$(
        #[test]
        fn $test() {
            c_test($name, &[$($flag),*]);
        }
    )*};
}

c_tests! {
    c_abi: "abi";
    c_kat: "kat";
    c_aead: "aead";
    c_mixed: "mixed";
    c_inplace: "inplace";
    c_threads: "threads", "-pthread";
}

/// The header is also valid C++ (compiled, not linked: `extern "C"`, no C-only syntax).
#[test]
fn header_compiles_as_cpp() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("no C++ compiler ({cxx}); skipped");
        return;
    }
    let src = out_dir().join("header_check.cpp");
    std::fs::write(
        &src,
        "#include \"comb.h\"\nint main() { comb_job j; comb_job_init(&j); return (int)j.flags; }\n",
    )
    .expect("write C++ source");
    let obj = out_dir().join("header_check.o");
    let mut cmd = Command::new(&cxx);
    cmd.args([
        "-std=c++11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-c",
    ])
    .arg("-I")
    .arg(crate_dir().join("include"))
    .arg(&src)
    .arg("-o")
    .arg(&obj);
    run(&mut cmd, "compiling the header as C++");
}

/// The packet example builds with the strict flags and runs; and its Makefile works against
/// this build of the library.
#[test]
fn c_example_encrypt_packets() {
    let example = crate_dir().join("../examples/c");
    let exe = build("encrypt_packets", &[example.join("encrypt_packets.c")], &[]);
    let out = run(&mut Command::new(&exe), "encrypt_packets");
    assert!(out.contains("0 failed"), "unexpected output:\n{out}");

    if Command::new("make").arg("--version").output().is_err() {
        eprintln!("no make; the Makefile was not exercised");
        return;
    }
    let build_dir = out_dir().join("make-example");
    std::fs::create_dir_all(&build_dir).expect("mkdir");
    let mut make = Command::new("make");
    make.arg("-C")
        .arg(&example)
        .arg(format!("COMB_LIB={}", dir(&static_lib())))
        .arg(format!("BUILDDIR={}", dir(&build_dir)))
        .arg(format!("CC={}", cc()));
    run(&mut make, "make -C examples/c");
    run(
        &mut Command::new(build_dir.join("encrypt_packets")),
        "encrypt_packets (make)",
    );
}

fn dir(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}
