#!/usr/bin/env bash
# run.sh — the hostile-input corpus: crafted export directories that break
# one rule each (tests/hostile/make_cases.py writes them; the docstring of
# each case says which rule), plus special files made here (FIFOs, links to
# /dev/zero, directories where files belong).
#
#   tests/hostile/run.sh [path/to/rlx] [NAME_SUBSTRING]   (default: build/rlx)
#
# rlx must exit with the expected status (2 for an error: never a signal,
# a sanitizer report or a hang) and name the culprit (node, op, tensor,
# file). Every command runs under `timeout 20` and a memory cap (ulimit -v,
# or ASan's allocation limit in a sanitizer build), so a case that tries to
# allocate terabytes fails instead of taking the machine. Prints one line per
# case; exits 1 if any case fails. Needs bash, coreutils and python3's
# standard library.
set -u

here=$(cd "$(dirname "$0")" && pwd)
rlx=${1:-build/rlx}
only=${2:-}
if [[ ! -x $rlx ]]; then
  echo "run.sh: $rlx is not an executable (build rlx first, or pass its path)" >&2
  exit 2
fi
rlx=$(cd "$(dirname "$rlx")" && pwd)/$(basename "$rlx")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rlx_hostile.XXXXXX")
cleanup() {
  local p
  for p in "${fifo_writers[@]:-}"; do [[ -n $p ]] && kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
fifo_writers=()
trap cleanup EXIT
if ! python3 "$here/make_cases.py" "$tmp/cases" >"$tmp/gen.log" 2>&1; then
  echo "run.sh: make_cases.py failed:" >&2
  cat "$tmp/gen.log" >&2
  exit 2
fi

# The memory cap: ASan reserves terabytes of address space, so ulimit -v
# would stop it from starting; it gets an allocation limit instead (and
# returns NULL past it, as malloc does under ulimit).
if grep -q __asan_init "$rlx" 2>/dev/null; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=4096:hard_rss_limit_mb=6144"
  memcap() { "$@"; }
else
  memcap() { (ulimit -v 8388608 && exec "$@"); }
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"

failed=0 passed=0 total=0

# check NAME RCS OUT STATUS RULE TEXT...: reports one case. RCS lists the
# accepted statuses (comma-separated); each TEXT must occur in OUT when the
# status is not 0 ("a||b": either; "!t": t must not occur).
check() {
  local name=$1 rcs=$2 out=$3 rc=$4 rule=$5
  shift 5
  local why="" ok=0 r
  total=$((total + 1))
  for r in ${rcs//,/ }; do ((rc == r)) && ok=1; done
  if ((rc == 124 || rc == 137)); then
    why="timed out (over 20 s): a hang"
  elif ((rc >= 128)); then
    why="killed by signal $((rc - 128))"
  elif [[ $out == *"ERROR: AddressSanitizer"* || $out == *"ERROR: LeakSanitizer"* ||
          $out == *"runtime error:"* || $out == *"UndefinedBehaviorSanitizer"* ]]; then
    why="sanitizer report (exit $rc)"
  elif ((!ok)); then
    why="exit status $rc, expected $rcs"
  elif ((rc != 0)); then
    local t alt found
    for t in "$@"; do
      if [[ $t == '!'* ]]; then
        [[ $out == *"${t:1}"* ]] && why="output contains '${t:1}'"
        continue
      fi
      found=0
      IFS='|' read -r -a alt <<<"${t//||/|}"
      for a in "${alt[@]}"; do [[ -n $a && $out == *"$a"* ]] && found=1; done
      ((found)) || why="output does not name '$t'"
    done
  fi
  if [[ -z $why ]]; then
    passed=$((passed + 1))
    printf 'PASS  %-40s %s\n' "$name" "$(grep -m1 -E 'error|FAIL|PASS' <<<"$out" | cut -c1-140)"
  else
    failed=1
    printf 'FAIL  %-40s %s\n' "$name" "$why"
    printf '        rule: %s\n' "$rule"
    grep -v '^ *$' <<<"$out" | grep -E -A12 'ERROR: AddressSanitizer|runtime error:|error|FAIL|PASS' |
      head -n 16 | cut -c1-220 | sed 's/^/        | /'
  fi
}

# run_case NAME RCS RULE "ARGS" TEXT...: runs rlx ARGS ({dir} is the case directory).
run_case() {
  local name=$1 rcs=$2 rule=$3 cmdline=$4
  shift 4
  [[ -n $only && $name != *"$only"* ]] && return
  local dir=$tmp/cases/$name argv=() a out rc
  read -r -a argv <<<"$cmdline"
  for a in "${!argv[@]}"; do argv[a]=${argv[a]//\{dir\}/$dir}; done
  out=$(cd "$tmp" && memcap timeout -k 5 20 "$rlx" "${argv[@]}" 2>&1)
  rc=$?
  check "$name" "$rcs" "$out" "$rc" "$rule" "$@"
}

# ---- the generated cases
while IFS= read -r line; do
  IFS=$'\t' read -r -a f <<<"$line"
  run_case "${f[@]}"
done <"$tmp/cases/cases.tsv"

# ---- special files, made from the pristine case (item 4 of issue 8)
base=$tmp/cases/pristine
special() { # special NAME: a fresh copy of the pristine case
  rm -rf "${tmp:?}/special/$1"
  mkdir -p "$tmp/special"
  cp -r "$base" "$tmp/special/$1"
  echo "$tmp/special/$1"
}
# fifo FILE: replaces FILE with a FIFO. A writer that never writes is kept
# open, so a reader blocks on read, not only on open.
fifo() {
  rm -f "$1"
  mkfifo "$1"
  (exec 3>"$1" && exec sleep 60) &
  fifo_writers+=($!)
}
# special_case NAME RULE "ARGS" TEXT...: a case with its paths spelled out (no {dir})
special_case() {
  local name=$1 rule=$2 cmdline=$3
  shift 3
  run_case "$name" 2 "$rule" "$cmdline" "$@"
}
d=$(special ir_fifo) && fifo "$d/torch-ir.json"
special_case ir_fifo "torch-ir.json is a FIFO (a read that never ends)" "verify $d" torch-ir.json
d=$(special weights_fifo) && fifo "$d/weights.safetensors"
special_case weights_fifo "weights.safetensors is a FIFO" "verify $d" weights.safetensors
d=$(special reference_fifo) && fifo "$d/reference.safetensors"
special_case reference_fifo "reference.safetensors is a FIFO" "verify $d" reference.safetensors
d=$(special npy_fifo) && fifo "$d/x.npy"
special_case npy_fifo "an --input .npy that is a FIFO" "run $d --input x=$d/x.npy --output-dir $d/out" x.npy

d=$(special ir_dev_zero) && ln -sf /dev/zero "$d/torch-ir.json"
special_case ir_dev_zero "torch-ir.json links to /dev/zero (read until out of memory)" \
  "verify $d" torch-ir.json "!out of memory"
d=$(special weights_dev_zero) && ln -sf /dev/zero "$d/weights.safetensors"
special_case weights_dev_zero "weights.safetensors links to /dev/zero" "verify $d" \
  weights.safetensors "!out of memory"
d=$(special reference_dev_zero) && ln -sf /dev/zero "$d/reference.safetensors"
special_case reference_dev_zero "reference.safetensors links to /dev/zero" "verify $d" \
  reference.safetensors "!out of memory"
d=$(special npy_dev_zero) && ln -sf /dev/zero "$d/x.npy"
special_case npy_dev_zero "an --input .npy that links to /dev/zero" \
  "run $d --input x=$d/x.npy --output-dir $d/out" x.npy "!out of memory"
d=$(special npy_dev_urandom) && ln -sf /dev/urandom "$d/x.npy"
special_case npy_dev_urandom "an --input .npy that links to /dev/urandom" \
  "run $d --input x=$d/x.npy --output-dir $d/out" x.npy

d=$(special intermediates_fifo) && fifo "$d/intermediates.safetensors"
special_case intermediates_fifo "intermediates.safetensors is a FIFO (rlx verify --localize)" \
  "verify $d --localize" intermediates.safetensors
d=$(special intermediates_dev_zero) && ln -sf /dev/zero "$d/intermediates.safetensors"
special_case intermediates_dev_zero "intermediates.safetensors links to /dev/zero" \
  "verify $d --localize" intermediates.safetensors "!out of memory"

d=$(special ir_directory) && rm "$d/torch-ir.json" && mkdir "$d/torch-ir.json"
special_case ir_directory "torch-ir.json is a directory" "verify $d" torch-ir.json
d=$(special weights_directory) && rm "$d/weights.safetensors" && mkdir "$d/weights.safetensors"
special_case weights_directory "weights.safetensors is a directory" "verify $d" \
  weights.safetensors
d=$(special reference_directory) && rm "$d/reference.safetensors" && mkdir "$d/reference.safetensors"
special_case reference_directory "reference.safetensors is a directory" "verify $d" \
  reference.safetensors
d=$(special npy_directory) && mkdir "$d/x.npy"
special_case npy_directory "an --input .npy that is a directory" \
  "run $d --input x=$d/x.npy --output-dir $d/out" x.npy
d=$(special weights_dangling_link) && rm "$d/weights.safetensors" && ln -s "$d/nowhere" "$d/weights.safetensors"
special_case weights_dangling_link "weights.safetensors is a dangling symlink" \
  "verify $d" weights.safetensors

# A well-formed 36 MB torch-ir.json under a 256 MiB address-space limit: the
# JSON parser runs out of memory, which must be reported as such, not as
# malformed JSON (issue 8, item 7). Not under ASan: it cannot run under ulimit -v.
if ! grep -q __asan_init "$rlx" 2>/dev/null && [[ -z $only || json_parse_out_of_memory == *"$only"* ]]; then
  d=$(special json_parse_out_of_memory)
  python3 - "$d/torch-ir.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc['junk'] = [{'a': [1, 2]} for _ in range(3000000)]
open(sys.argv[1], 'w').write(json.dumps(doc, separators=(',', ':')))
EOF
  out=$( (ulimit -v 262144 && exec timeout -k 5 20 "$rlx" verify "$d") 2>&1)
  check json_parse_out_of_memory 2 "$out" $? "cJSON out of memory on a well-formed torch-ir.json" \
    "out of memory" "!malformed"
fi

echo "run.sh: $passed of $total cases passed"
if ((failed)); then
  echo "run.sh: some cases failed"
  exit 1
fi
echo "run.sh: all cases passed"
