#!/usr/bin/env bash
# install_check.sh — rlx as an installed library, used the way a C or C++
# project uses it.
#
#   scripts/install_check.sh [BUILD_DIR]     (default: build; configured
#                                             Release if it is not yet)
#
# Builds BUILD_DIR, installs it with `cmake --install BUILD_DIR --prefix P`
# into a temporary P, checks the layout (library names and links, the
# exported symbols and soname with tests/abi.sh, the package version), and
# builds examples/cpp against P alone, four ways:
#
#   find_package(rlx)  rlx::rlx         cmake -S examples/cpp -DCMAKE_PREFIX_PATH=P
#                      rlx::rlx_static  ... -DRLX_CPP_STATIC=ON
#   pkg-config rlx     librlx.so        PKG_CONFIG_PATH=P/lib/pkgconfig make -f examples/cpp/Makefile
#                      --static         (the same Makefile's rlx_cpp_example_static)
#
# Each binary runs the shipped mnist_cnn and tiny_llama and must print what
# examples/example.c, built in BUILD_DIR, prints for them; the installed CLI
# verifies both. Also checked: the shared binaries load librlx.so.MAJOR from P
# and do not link cJSON (linked with --no-as-needed, and configured with
# cJSON's directory hidden from CMake), the static ones do not need
# librlx.so, and asking for COMPONENTS static without cJSON fails naming it.
# The C++ is compiled with -Werror. Prints one line per check; exits 1 on
# the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
build=${1:-build}
jobs=$(nproc)
unset LD_LIBRARY_PATH
models=(mnist_cnn tiny_llama)

fail() {
  echo "install check: FAILED: $*" >&2
  exit 1
}
ok() { echo "install check: $*: ok"; }

for tool in c++ pkg-config make readelf ldd; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/deps.sh installs it)"
done
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j"$jobs" >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rlx_install_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log" >&2
  fail "cmake --install $build --prefix $prefix"
}

# ---- layout ----------------------------------------------------------------
pc=$(find "$prefix" -name rlx.pc -path '*/pkgconfig/*')
[[ -n $pc ]] || fail "no pkgconfig/rlx.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion rlx)
major=${version%%.*}
header_version=$(sed -n 's/^#define RLX_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$prefix/include/rlx.h" | paste -sd.)
[[ $version == "$header_version" ]] ||
  fail "rlx.pc says version $version, the installed rlx.h $header_version"
for f in include/rlx.h bin/rlx; do
  [[ -f $prefix/$f ]] || fail "$prefix/$f is missing"
done
for f in librlx.a "librlx.so.$version" cmake/rlx/rlxConfig.cmake cmake/rlx/rlxConfigVersion.cmake; do
  [[ -f $libdir/$f ]] || fail "$libdir/$f is missing"
done
[[ $(readlink "$libdir/librlx.so.$major") == "librlx.so.$version" ]] ||
  fail "$libdir/librlx.so.$major is not a link to librlx.so.$version"
[[ $(readlink "$libdir/librlx.so") == "librlx.so.$major" ]] ||
  fail "$libdir/librlx.so is not a link to librlx.so.$major"
bash tests/abi.sh "$libdir/librlx.so.$version" "$prefix/include/rlx.h" "$version" >/dev/null ||
  fail "the installed librlx.so (tests/abi.sh, above)"
ok "layout under $prefix (rlx $version; soname librlx.so.$major, exports = rlx.h)"

for m in "${models[@]}"; do
  "$build/examples/rlx_example" "examples/models/$m" >"$tmp/expected.$m" ||
    fail "$build/examples/rlx_example examples/models/$m"
  "$prefix/bin/rlx" verify "examples/models/$m" >"$tmp/verify.$m" 2>&1 || {
    cat "$tmp/verify.$m" >&2
    fail "the installed rlx verify examples/models/$m"
  }
done
ok "installed CLI: rlx verify ${models[*]}"

# needed BINARY: its DT_NEEDED libraries, one a line.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# check_binary BINARY shared|static: links, and the models' output.
check_binary() {
  local bin=$1 kind=$2
  if [[ $kind == shared ]]; then
    needed "$bin" | grep -qx "librlx.so.$major" || fail "$bin does not need librlx.so.$major"
    ! needed "$bin" | grep -q cjson || fail "$bin links cJSON itself (librlx.so should bring it)"
    local loaded
    loaded=$(ldd "$bin" | sed -n "s/^[[:space:]]*librlx.so.$major => \([^ ]*\).*/\1/p")
    [[ -n $loaded && $(realpath "$loaded") == $(realpath "$libdir/librlx.so.$major") ]] ||
      fail "$bin loads librlx.so.$major from '${loaded}', not from $libdir"
  else
    ! needed "$bin" | grep -q librlx || fail "$bin needs librlx.so, though linked statically"
  fi
  for m in "${models[@]}"; do
    "$bin" "examples/models/$m" >"$tmp/got" || fail "$bin examples/models/$m"
    diff -u "$tmp/expected.$m" "$tmp/got" >&2 ||
      fail "$bin examples/models/$m prints other than examples/example.c (diff above)"
  done
}

# ---- find_package ----------------------------------------------------------
# cJSON's directory, also under its other name on a merged /usr (/lib = /usr/lib).
cjson_dir=$(dirname "$(sed -n 's/^CJSON_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")")
if [[ $cjson_dir == /usr/* ]]; then
  cjson_dirs="$cjson_dir;${cjson_dir#/usr}"
else
  cjson_dirs="$cjson_dir;/usr$cjson_dir"
fi
cmake_example() { # DIR ARGS...: configure and build examples/cpp against the prefix
  local dir=$1
  shift
  cmake -S examples/cpp -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS=-Werror "$@" >"$dir.log" 2>&1 &&
    cmake --build "$dir" >>"$dir.log" 2>&1 || {
    cat "$dir.log" >&2
    return 1
  }
}
# rlx::rlx with cJSON's directory hidden from find_library: a shared
# consumer must not need cJSON's development files.
cmake_example "$tmp/cmake-shared" -DCMAKE_IGNORE_PATH="$cjson_dirs" \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--no-as-needed || fail "find_package(rlx) with rlx::rlx"
check_binary "$tmp/cmake-shared/rlx_cpp_example" shared
ok "find_package(rlx): rlx::rlx, without cJSON's files"

cmake_example "$tmp/cmake-static" -DRLX_CPP_STATIC=ON ||
  fail "find_package(rlx COMPONENTS static) with rlx::rlx_static"
check_binary "$tmp/cmake-static/rlx_cpp_example" static
ok "find_package(rlx COMPONENTS static): rlx::rlx_static"

if cmake -S examples/cpp -B "$tmp/cmake-nocjson" -DCMAKE_PREFIX_PATH="$prefix" -DRLX_CPP_STATIC=ON \
  -DCMAKE_IGNORE_PATH="$cjson_dirs" >"$tmp/nocjson.log" 2>&1; then
  fail "find_package(rlx COMPONENTS static) succeeded with cJSON hidden"
fi
grep -q 'RLX_CJSON_LIBRARY' "$tmp/nocjson.log" || {
  cat "$tmp/nocjson.log" >&2
  fail "find_package(rlx COMPONENTS static) without cJSON does not say what is missing"
}
ok "find_package(rlx COMPONENTS static) without cJSON: an error naming it"

# ---- pkg-config ------------------------------------------------------------
mkdir "$tmp/pc"
make -C "$tmp/pc" -f "$repo/examples/cpp/Makefile" CXXFLAGS="-O2 -Wall -Wextra -Wpedantic -Werror" \
  >"$tmp/pc.log" 2>&1 || {
  cat "$tmp/pc.log" >&2
  fail "make -f examples/cpp/Makefile (pkg-config rlx)"
}
check_binary "$tmp/pc/rlx_cpp_example" shared
ok "pkg-config rlx: $(pkg-config --libs rlx | sed "s|$prefix|P|g")"
check_binary "$tmp/pc/rlx_cpp_example_static" static
ok "pkg-config --static rlx: $(pkg-config --static --libs rlx | sed "s|$prefix|P|g")"
