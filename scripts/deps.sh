#!/usr/bin/env bash
# Installs what rlx builds with, when missing (Debian/Ubuntu): a C compiler,
# cmake, cJSON (libcjson-dev), clang with libFuzzer (scripts/fuzz.sh), and a
# C++ compiler and pkg-config (the C++ consumer of scripts/install_check.sh),
# and Graphviz (rlx inspect --dot renders SVG/PNG with it).
# With --python, also the Python packages the exporter and the test suite use
# (python/requirements-test.txt; ray[serve] among them, for
# tests/py/test_serve.py) and venv, with which the test suite installs the
# rlx package (pip install ./python; scikit-build-core comes from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v clang >/dev/null 2>&1 || need+=(clang) # libFuzzer, for scripts/fuzz.sh
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v dot >/dev/null 2>&1 || need+=(graphviz) # rlx inspect --dot FILE.svg renders with it
[ -f /usr/include/cjson/cJSON.h ] || need+=(libcjson-dev)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "deps: installing ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
# clang's sanitizer runtimes (for the build-clang step of scripts/test.sh and
# for libFuzzer) are a package of their own on Debian 12, only recommended by
# clang: install it when clang cannot find its ASan runtime.
if [ ! -f "$(clang -print-file-name="libclang_rt.asan-$(uname -m).a")" ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "deps: installing libclang-rt-dev (clang's sanitizer runtimes)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libclang-rt-dev >/dev/null
fi

if [ "${1:-}" = "--python" ]; then
  if ! python3 -c "import torch, torchvision, transformers, numpy, safetensors, pytest, timm, expecttest, ray.serve" 2>/dev/null; then
    echo "deps: installing Python packages (torch, torchvision, transformers, ray[serve], ...)"
    python3 -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
  fi
  # tests/py/test_package.py pip-installs the package into a virtual
  # environment: Debian's python3 keeps venv's pip bootstrap in python3-venv
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "deps: installing python3-venv"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
  fi
fi
