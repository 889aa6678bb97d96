#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ one after another, each for MINUTES minutes on one core,
# and prints one summary line per target.
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]
#
#   MINUTES   per target, default 20 (a decimal such as 0.5 is fine)
#   TARGET    default: every target `cargo fuzz list` shows (batch_api, kat_parser, json_batch,
#             and c_api once it exists)
#
# Environment:
#   FUZZ_ARGS     extra libFuzzer arguments, e.g. FUZZ_ARGS="-max_len=16384"
#   FUZZ_NO_BUILD set to skip the (incremental) build step
#
# Each target reads its committed seeds (fuzz/seeds/TARGET/) and its working corpus
# (fuzz/corpus/TARGET/, git-ignored, grows from run to run) and writes new inputs to the
# working corpus only. Crashes go to fuzz/artifacts/TARGET/, libFuzzer's output to
# fuzz/logs/TARGET/fuzz-0.log, the summary lines to fuzz/logs/summary.txt (all git-ignored).
# Running it again continues from the working corpus; nothing else is kept between runs.
#
# Needs the nightly toolchain and cargo-fuzz (installed from crates.io when missing). One
# fuzzer runs at a time, with -jobs=1 -workers=1 (one core: libFuzzer then runs the fuzzer as
# one child process and writes its output to fuzz-0.log). Targets are built with debug
# assertions (-a), so integer overflow and debug_assert! in the library are checked too.
#
# Exit status: 0 if no target crashed, 1 if one did (the others still run), 2 on a usage or
# build error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz_dir="$root/fuzz"

minutes="${1:-20}"
if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    echo "usage: scripts/fuzz.sh [MINUTES] [TARGET...]" >&2
    exit 2
fi
shift || true
secs=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60 + 0.5); print (s < 1 ? 1 : s) }')

if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

cd "$fuzz_dir"
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
    for t in "${targets[@]}"; do
        cargo +nightly fuzz build -a "$t" 2>"$fuzz_dir/build.log" || {
            cat "$fuzz_dir/build.log" >&2
            echo "fuzz.sh: building $t failed" >&2
            exit 2
        }
    done
fi

mkdir -p "$fuzz_dir/logs"
summary="$fuzz_dir/logs/summary.txt"
status=0
for t in "${targets[@]}"; do
    corpus="$fuzz_dir/corpus/$t"
    seeds="$fuzz_dir/seeds/$t"
    artifacts="$fuzz_dir/artifacts/$t"
    logdir="$fuzz_dir/logs/$t"
    mkdir -p "$corpus" "$seeds" "$artifacts" "$logdir"
    rm -f "$logdir/fuzz-0.log"
    before=$(find "$artifacts" -type f | wc -l)
    echo "== $t: ${secs}s (corpus $corpus, seeds $seeds)" >&2
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of arguments
    (cd "$logdir" && cargo +nightly fuzz run --fuzz-dir "$fuzz_dir" -a "$t" "$corpus" "$seeds" -- \
        -max_total_time="$secs" -jobs=1 -workers=1 -print_final_stats=1 ${FUZZ_ARGS:-} \
        >"$logdir/cargo-fuzz.out" 2>&1) || rc=$?
    elapsed=$(( $(date +%s) - start ))
    log="$logdir/fuzz-0.log"
    [ -f "$log" ] || log="$logdir/cargo-fuzz.out"
    runs=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}')
    cov=$(grep -aoE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | awk '{print $2 "/" $4}')
    corp_n=$(find "$corpus" -type f | wc -l)
    after=$(find "$artifacts" -type f | wc -l)
    crashes=$((after - before))
    if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        status=1
    fi
    line=$(printf '%-11s %5ss  runs %-10s cov/ft %-13s corpus %-6s crashes %s  exit %s' \
        "$t" "$elapsed" "${runs:-?}" "${cov:-?}" "$corp_n" "$crashes" "$rc")
    echo "$(date -u +%FT%TZ) $line" >>"$summary"
    echo "$line"
    if [ "$crashes" -gt 0 ]; then
        find "$artifacts" -type f -newermt "@$start" -printf '    new artifact: %p\n'
        grep -a -m1 -A3 -E "panicked at|ERROR: AddressSanitizer|ERROR: libFuzzer" "$log" | sed 's/^/    /' || true
    fi
done
exit "$status"
