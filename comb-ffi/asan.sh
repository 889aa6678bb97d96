#!/usr/bin/env bash
# Builds the C tests of comb-ffi (tests/c/*.c) and the packet example with AddressSanitizer
# and UndefinedBehaviorSanitizer against the library, and runs them. LeakSanitizer (part of
# ASan on Linux) also checks that every key and engine handle is freed.
#
#   bash comb-ffi/asan.sh            # debug build of the library
#   PROFILE=release bash comb-ffi/asan.sh
#
# The C side is instrumented; the Rust library is not (that needs a nightly compiler's
# -Zsanitizer), but its heap goes through the intercepted malloc, so out-of-bounds accesses to
# C-allocated buffers, use-after-free of handles and leaks are still caught.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

profile="${PROFILE:-debug}"
if [ "$profile" = release ]; then
    cargo build --release -p comb-ffi
else
    cargo build -p comb-ffi
fi
lib="$root/target/$profile/libcomb_ffi.a"
out="$root/target/$profile/comb-ffi-asan"
mkdir -p "$out"

cc="${CC:-cc}"
flags=(-std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer
       -fsanitize=address,undefined -fno-sanitize-recover=undefined -pthread
       -I "$here/include" -I "$here/tests/c")
libs=(-lpthread -ldl -lm -lrt -lutil)

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

failed=0
for src in "$here"/tests/c/*.c "$root"/examples/c/encrypt_packets.c; do
    name="$(basename "$src" .c)"
    echo "== $name"
    "$cc" "${flags[@]}" "$src" "$lib" "${libs[@]}" -o "$out/$name"
    if "$out/$name" > "$out/$name.log" 2>&1; then
        tail -n 1 "$out/$name.log"
    else
        echo "FAILED ($out/$name.log):"
        cat "$out/$name.log"
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "asan.sh: failures"
    exit 1
fi
echo "asan.sh: all C programs passed under AddressSanitizer + UBSan"
