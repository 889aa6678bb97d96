#!/usr/bin/env bash
# Installs the Debian packages the comb-anchors crate needs to build and run:
#   libssl-dev       OpenSSL 3 headers + libcrypto (the "openssl" anchor, via openssl-sys)
#   pkg-config       how openssl-sys finds the system OpenSSL
#   libipsec-mb-dev  intel-ipsec-mb header + libIPSec_MB (the "ipsec-mb" anchor)
#   libclang-dev     libclang for bindgen, which generates the ipsec-mb bindings at build time
# Idempotent: packages already installed (per `dpkg -s`) are skipped, and apt is not touched
# when nothing is missing. Uses sudo only when not root. Exits non-zero on any failure.
set -euo pipefail

packages=(libssl-dev libipsec-mb-dev libclang-dev pkg-config)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-anchor-deps: all present (${packages[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-anchor-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-anchor-deps: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Verify: fail loudly if apt claimed success but a package is still not installed.
for pkg in "${missing[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    echo "install-anchor-deps: $pkg is still not installed" >&2
    exit 1
  fi
done
echo "install-anchor-deps: done"
