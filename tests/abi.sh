#!/usr/bin/env bash
# abi.sh — librlx.so exports the API of include/rlx.h, all of it and nothing
# else, under the soname librlx.so.MAJOR.
#
#   tests/abi.sh LIBRLX_SO RLX_H VERSION [CC] [NM] [READELF]
#
# LIBRLX_SO is the built library (librlx.so.VERSION), VERSION the project's
# (MAJOR.MINOR.PATCH). The declared functions are read from the header after
# the C preprocessor (macros expanded, comments gone): every `rlx_name(` left
# is a function declaration. The exported ones are the defined dynamic
# symbols (nm -D --defined-only). Fails, naming them, on a symbol exported
# but not declared (an internal function or a variable leaking out), on a
# declared function not exported (a declaration without RLX_API), on an
# exported symbol that is not a function, and on a wrong soname or file name.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 LIBRLX_SO RLX_H VERSION [CC] [NM] [READELF]" >&2
  exit 2
fi
so=$1 header=$2 version=$3 cc=${4:-cc} nm=${5:-nm} readelf=${6:-readelf}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rlx_abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

"$cc" -E -P -x c "$header" >"$tmp/header.i"
grep -oE '\brlx_[A-Za-z0-9_]+[[:space:]]*\(' "$tmp/header.i" | tr -d ' \t(' | sort -u >"$tmp/declared"
if [[ ! -s $tmp/declared ]]; then
  echo "abi: no function declarations found in $header" >&2
  exit 1
fi

"$nm" -D --defined-only "$so" >"$tmp/nm"
# "ADDRESS TYPE NAME[@VERSION]"
awk '{ sub(/@.*/, "", $3); print $3 }' "$tmp/nm" | sort -u >"$tmp/exported"

extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
not_code=$(awk '$2 !~ /^[TtWi]$/ { print $3 " (nm type " $2 ")" }' "$tmp/nm")
if [[ -n $extra ]]; then
  echo "abi: $so exports symbols include/rlx.h does not declare:" >&2
  sed 's/^/  /' <<<"$extra" >&2
  failed=1
fi
if [[ -n $missing ]]; then
  echo "abi: functions include/rlx.h declares that $so does not export (RLX_API missing?):" >&2
  sed 's/^/  /' <<<"$missing" >&2
  failed=1
fi
if [[ -n $not_code ]]; then
  echo "abi: $so exports symbols that are not functions:" >&2
  sed 's/^/  /' <<<"$not_code" >&2
  failed=1
fi

major=${version%%.*}
soname=$("$readelf" -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [[ $soname != "librlx.so.$major" ]]; then
  echo "abi: $so has soname '${soname}', expected 'librlx.so.$major'" >&2
  failed=1
fi
if [[ $(basename "$so") != "librlx.so.$version" ]]; then
  echo "abi: the library file is $(basename "$so"), expected librlx.so.$version" >&2
  failed=1
fi

if [[ $failed -eq 0 ]]; then
  echo "abi: $(wc -l <"$tmp/declared") functions declared in rlx.h, all exported and nothing" \
    "else; soname $soname"
fi
exit $failed
