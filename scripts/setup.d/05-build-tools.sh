#!/usr/bin/env bash
# Build tools for the local judge (crates/gavel-local): llama-cpp-sys-2 compiles
# the llama.cpp sources it vendors with cmake and generates its bindings with
# bindgen, which needs libclang. Idempotent: installs only what is missing.
set -euo pipefail
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
# bindgen loads libclang.so at build time; Debian ships it in libclang-dev.
if ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 && ! ls /usr/lib/*/libclang.so >/dev/null 2>&1; then
  missing+=(libclang-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
