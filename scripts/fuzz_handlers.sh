#!/usr/bin/env bash
# Which lowering handlers the torch-ir fuzzer's corpus reaches.
#
#   scripts/fuzz_handlers.sh [CORPUS]     (default build-fuzz/corpus/torch_ir)
#
# Runs build-fuzz/fuzz_torch_ir (scripts/fuzz.sh builds it) once over every
# input of the corpus (-runs=0) with libFuzzer's -print_coverage=1, and
# compares the covered functions with the handlers named in
# src/import/lower/aten_ops.def. Prints "reached N of M handlers" and the
# ones not reached. Nothing is fuzzed; the corpus is not changed.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-build-fuzz/corpus/torch_ir}
bin=build-fuzz/fuzz_torch_ir
[ -x "$bin" ] || { echo "fuzz_handlers.sh: $bin not built (run scripts/fuzz.sh torch_ir 1 first)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "fuzz_handlers.sh: no corpus at $corpus" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ASAN_OPTIONS=detect_leaks=0 "$bin" "$corpus" -runs=0 -print_coverage=1 -rss_limit_mb=2048 -timeout=20 \
  >"$log" 2>&1 || true
grep -q 'COVERED_FUNC' "$log" || { tail -20 "$log" >&2; echo "fuzz_handlers.sh: no coverage printed" >&2; exit 2; }
handlers=$(sed -n 's/^RLX_\(ATEN\|ATEN_DYN\)([^,]*, *\(rlx_lower_[a-z0-9_]*\)).*/\2/p; s/^RLX_LIB_OP\(_DYN\)\{0,1\}([^,]*,[^,]*, *\(rlx_lower_[a-z0-9_]*\)).*/\2/p' \
  src/import/lower/aten_ops.def | sort -u)
# "COVERED_FUNC: hits: N edges: a/b NAME FILE:LINE"
covered=$(awk '$1 == "COVERED_FUNC:" && $3 > 0 {print $6}' "$log" | grep '^rlx_lower_' | sort -u || true)
total=$(printf '%s\n' "$handlers" | wc -l)
hit=$(comm -12 <(printf '%s\n' "$handlers") <(printf '%s\n' "$covered") | wc -l)
echo "corpus: $(ls "$corpus" | wc -l) inputs ($corpus)"
echo "reached $hit of $total lowering handlers"
missing=$(comm -23 <(printf '%s\n' "$handlers") <(printf '%s\n' "$covered") | tr '\n' ' ')
[ -z "$missing" ] || echo "not reached: $missing"
