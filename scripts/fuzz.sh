#!/usr/bin/env bash
# Runs rlx's libFuzzer targets (tests/fuzz).
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer args...]
#   scripts/fuzz.sh all SECONDS [libFuzzer args...]     each target in turn
#
# TARGET is safetensors, npy, torch_ir or tokenizer. Configures and builds build-fuzz
# with clang (RLX_FUZZ=ON) when needed, then fuzzes one process for SECONDS
# with the target's dictionary (tests/fuzz/TARGET.dict) and a working corpus
# build-fuzz/corpus/TARGET, seeded from tests/fuzz/corpus/TARGET (the repo's
# seeds are never written to). Crash, leak and timeout inputs go to
# build-fuzz/findings/TARGET/; the log is build-fuzz/logs/TARGET.log.
# Prints the executions and the final coverage line; exits 1 on a finding.
#
# Reproduce a finding:  build-fuzz/fuzz_TARGET build-fuzz/findings/TARGET/crash-...
# Minimize it:          build-fuzz/fuzz_TARGET -minimize_crash=1 -max_total_time=60 CRASH
# Keep going past findings (long runs; one child process):
#   scripts/fuzz.sh torch_ir 1800 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
# Which lowering handlers the torch_ir corpus reaches: scripts/fuzz_handlers.sh
# Environment: CLANG (default clang) names the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(safetensors npy torch_ir tokenizer)
if [ $# -lt 2 ]; then
  echo "usage: $0 {${targets[*]// /|}|all} SECONDS [libFuzzer args...]" >&2
  exit 2
fi
which=$1 secs=$2
shift 2
case "$which" in
  all) run=("${targets[@]}") ;;
  safetensors | npy | torch_ir | tokenizer) run=("$which") ;;
  *) echo "fuzz.sh: unknown target '$which' (${targets[*]} or all)" >&2; exit 2 ;;
esac
[[ "$secs" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; exit 2; }

b=build-fuzz
cc=${CLANG:-clang}
command -v "$cc" >/dev/null || { echo "fuzz.sh: $cc not found (scripts/deps.sh installs clang)" >&2; exit 2; }
if [ ! -f "$b/CMakeCache.txt" ]; then
  echo "== configure $b (clang, RLX_FUZZ=ON)"
  cmake -S . -B "$b" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLX_FUZZ=ON \
    -DRLX_BUILD_TESTS=OFF >/dev/null
fi
echo "== build ${run[*]/#/fuzz_}"
mkdir -p "$b/logs"
if ! cmake --build "$b" -j2 --target "${run[@]/#/fuzz_}" >"$b/logs/build.log" 2>&1; then
  tail -30 "$b/logs/build.log" >&2
  echo "fuzz.sh: build failed (full log $b/logs/build.log; libFuzzer ships with clang's compiler-rt)" >&2
  exit 2
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${run[@]}"; do
  corpus=$b/corpus/$t findings=$b/findings/$t log=$b/logs/$t.log
  mkdir -p "$corpus" "$findings" "$b/logs"
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  before=$(ls "$findings" | wc -l)
  echo "== fuzz_$t for ${secs}s (corpus $corpus, log $log)"
  rc=0
  "$b/fuzz_$t" "$corpus" -dict=tests/fuzz/"$t".dict -max_total_time="$secs" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$findings"/ "$@" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  [ -n "$runs" ] || runs=$(printf '%s' "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
  echo "   executions: ${runs:-?}"
  echo "   final: ${last:-no coverage line}"
  new=$(( $(ls "$findings" | wc -l) - before ))
  if [ "$rc" -ne 0 ] || [ "$new" -gt 0 ]; then
    status=1
    echo "   FINDING (exit $rc, $new new input(s) in $findings):"
    pat='runtime error:|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Assertion .* failed|deadly signal'
    grep -E "$pat" "$log" | cut -c1-200 | sort | uniq -c | sort -rn | head -10 | sed 's/^/   /' || true
    echo "   first report's top frames:"
    grep -m1 -A40 -E "$pat" "$log" | grep -E '^ +#[0-9]+ 0x' | grep -vE ' in fuzzer::|libc_start|in _start ' |
      head -6 | cut -c1-200 | sed 's/^/   /' || true
    grep -E 'Test unit written to' "$log" | sed 's/^/   /' || true
    [ "$new" -gt 0 ] && ls -t "$findings" | head -n "$new" | sed "s|^|   input: $findings/|"
  fi
done
exit $status
