#!/usr/bin/env bash
# Installs every Debian package Strata's build, tests, benchmarks and tools need.
#
# Idempotent and quiet: when everything is present it prints nothing and exits 0.
# Runs `apt-get update` only when something is missing. Exits non-zero, naming the
# packages, when something cannot be installed.
set -euo pipefail

PACKAGES=(
  # Build system (Bazel 4.2.3 and the rules_cc / rules_java shims WORKSPACE points at).
  bazel-bootstrap
  bazel-bootstrap-source
  # Toolchain: g++ 12 for everything, clang-14 + compiler-rt for libFuzzer targets.
  g++
  clang-14
  libclang-rt-14-dev
  pkgconf
  # C++ libraries (see third_party/).
  libabsl-dev
  libhwy-dev
  libbenchmark-dev
  googletest
  libgtest-dev
  nlohmann-json3-dev
  libxxhash-dev
  libtbb-dev
  libsimdjson-dev
  # tools/plot_benchmarks.
  python3
  python3-matplotlib
)

missing=()
for package in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$package")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "tools/setup.sh: missing packages: ${missing[*]}" >&2
  echo "tools/setup.sh: run as root (or install sudo) to install them" >&2
  exit 1
fi

echo "tools/setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "${SUDO[@]}" apt-get update -qq >"$log" 2>&1; then
  cat "$log" >&2
  echo "tools/setup.sh: apt-get update failed" >&2
  exit 1
fi
if ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  echo "tools/setup.sh: could not install: ${missing[*]}" >&2
  exit 1
fi
echo "tools/setup.sh: done" >&2
