#!/usr/bin/env bash
# Instructions per byte of the comb engine's timed calls, counted by valgrind's callgrind.
#
# The count is deterministic, so a change to the code around the cipher kernels (job
# handling, tails, finalisations, scheduling) can be compared on a host whose timings drift
# from minute to minute, as the shared development VMs' do. It is not a substitute for
# `comb bench`: it counts instructions, not cycles (stalls, latency and the AES unit's
# throughput do not show), and valgrind presents a CPU without VAES, so the xmm (`ni`)
# kernels run.
#
# Usage: scripts/count-instructions.sh [-b BINARY] ALG[,ALG...] [BENCH ARGS...]
#   BINARY     the comb binary (default: the workspace's target/release/comb, built if
#              missing but not rebuilt: build it after a change)
#   ALG        `comb bench --alg` IDs, one configuration measured per valgrind run
#   BENCH ARGS passed to `comb bench` (say `--dist fixed --lengths 72` or `--op decrypt`;
#              default: the realistic mix, batch 64, encryption); they must make one
#              configuration per algorithm (one length, one operation, one lane count)
#
# Prints one line per algorithm: instructions in the timed calls and per message byte.
# Example:
#   scripts/count-instructions.sh aes-cbc,aes128-cloc
#   scripts/count-instructions.sh aes128-cloc --dist fixed --lengths 72
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/release/comb
if [ "${1:-}" = "-b" ]; then
  bin=$2
  shift 2
fi
if [ $# -lt 1 ]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
algs=$1
shift

if ! command -v valgrind >/dev/null 2>&1; then
  echo "count-instructions: valgrind is not installed (Debian: apt-get install valgrind)" >&2
  exit 1
fi
if [ ! -x "$bin" ]; then
  cargo build --release -p comb-cli --manifest-path "$root/Cargo.toml" >&2
fi

samples=3
calls=20
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

IFS=, read -r -a list <<<"$algs"
for alg in "${list[@]}"; do
  # One configuration, no warm-up and no gate: the toggled function runs exactly
  # samples x calls batches.
  valgrind --tool=callgrind --toggle-collect='*BatchSampler*Sampler*timed*' \
    --callgrind-out-file="$work/out" \
    "$bin" bench --alg "$alg" --engines comb --samples "$samples" --calls "$calls" \
    --warmup 0 --no-gate --no-report --json "$work/r.json" "$@" \
    >"$work/log" 2>&1 || {
    cat "$work/log" >&2
    exit 1
  }
  configs=$(grep -c '"alg":' "$work/r.json" || true)
  if [ "$configs" != 1 ]; then
    echo "count-instructions: $alg: $configs configurations measured; pass arguments that make one" >&2
    exit 2
  fi
  ir=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$work/log" | tr -d ,)
  batch=$(grep -o '"batch": *[0-9]*' "$work/r.json" | head -1 | grep -o '[0-9]*$')
  mean=$(grep -o '"mean_len": *[0-9.]*' "$work/r.json" | head -1 | grep -o '[0-9.]*$')
  workload=$(grep -o '"workload": *"[^"]*"' "$work/r.json" | head -1 | sed 's/.*: *"\(.*\)"/\1/')
  awk -v a="$alg" -v w="$workload" -v ir="$ir" -v c=$((samples * calls)) -v b="$batch" -v m="$mean" \
    'BEGIN { printf "%s (%s, batch %d): %d instructions in %d calls, %.2f per byte\n", a, w, b, ir, c, ir / (c * b * m) }'
done
