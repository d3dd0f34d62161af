#!/usr/bin/env bash
# The whole test suite: C unit tests and CLI bad-input tests (ctest) in a
# Release build, that build installed and used from C++ (find_package and
# pkg-config, shared and static: scripts/install_check.sh), the ctest suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer (gcc, then clang,
# which also checks float -> int casts), the threaded tests under
# ThreadSanitizer, then the Python end-to-end tests (export with torch,
# verify with rlx; tests/py/test_package.py also pip-installs ./python into a
# fresh virtual environment and runs the installed package).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/deps.sh --python

echo "== build (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" >/dev/null
echo "== ctest (Release)"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== install check"
scripts/install_check.sh build

echo "== build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRLX_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
echo "== ctest (ASan + UBSan)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs")

echo "== build (ThreadSanitizer)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DRLX_TSAN=ON >/dev/null
cmake --build build-tsan -j"$jobs" >/dev/null
echo "== ctest (ThreadSanitizer): the tests that run thread pools or threads"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 \
  ctest --output-on-failure -j"$jobs" -R 'test_threads|test_api|test_gemm|test_cpu_kernels|test_generate|verify_')

echo "== build (clang: ASan + UBSan + float-cast-overflow, no recovery)"
CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Debug -DRLX_SANITIZE=ON >/dev/null
cmake --build build-clang -j"$jobs" >/dev/null
echo "== ctest (clang: ASan + UBSan + float-cast-overflow)"
(cd build-clang && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs")

echo "== fuzz smoke: each libFuzzer target for 20 s (clang; build-fuzz)"
scripts/fuzz.sh all 20

echo "== pytest: end to end (export with torch, verify with rlx)"
RLX_BIN="$PWD/build/rlx" python3 -m pytest -q tests/py "$@"

echo "== pytest: op conformance against eager torch"
RLX_BIN="$PWD/build/rlx" python3 -m pytest -q tests/conformance "$@"
RLX_BIN="$PWD/build/rlx" python3 scripts/op_coverage.py --quiet

echo "== pytest: model zoo, fast subset (RLX_ZOO=full runs all models)"
RLX_BIN="$PWD/build/rlx" python3 -m pytest -q tests/zoo "$@"
