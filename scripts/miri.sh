#!/usr/bin/env bash
# Runs the pure modules under Miri (undefined-behaviour checker): the comb planner, the lane
# tuning file, the constant-time PKCS#7 check, and the CLI's parsers (kat-v1 / genkat files,
# JSON Lines jobs). The AES kernels are intrinsics, which Miri does not interpret; they are
# covered by the guard-page test (comb/tests/guard_page.rs) and the differential tests.
#
# Needs the nightly toolchain with the miri component (installed here if missing). Isolation is
# off because proptest looks at the working directory; proptest runs 16 cases per property.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
fi
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
export PROPTEST_CASES="${PROPTEST_CASES:-16}"

cargo +nightly miri test -p comb --lib -- sched::plan tune:: modes::cbc::tests
# The CLI's parser tests (the ones that run the engine need AES instructions Miri lacks).
cargo +nightly miri test -p comb-cli --bin comb -- kat:: vectors::tests::families \
    vectors::tests::genkat vectors::tests::wrong_fields vectors::tests::mac_checks \
    batch::tests::line_splitting batch::tests::describe_lengths batch::tests::output_json_shape
