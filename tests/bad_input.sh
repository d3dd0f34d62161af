#!/usr/bin/env bash
# bad_input.sh — `rlx verify` on broken copies of examples/models/mnist_cnn,
# and `rlx run` on broken .npy inputs.
#
#   tests/bad_input.sh [path/to/rlx]        (default: build/rlx)
#
# Each case breaks one thing (a file truncated, a header corrupted, a weight
# renamed, an op unknown to rlx, ...). rlx must exit with status 2 (an error,
# never a crash: a signal gives >= 128, a sanitizer report another status)
# and its stderr must name the culprit (tensor, op, node, file). Needs only
# bash and python3's standard library. Prints one line per case; exits 1 if
# any case fails.
set -u

here=$(cd "$(dirname "$0")" && pwd)
rlx=${1:-build/rlx}
src=$here/../examples/models/mnist_cnn
if [[ ! -x $rlx ]]; then
  echo "bad_input.sh: $rlx is not an executable (build rlx first, or pass its path)" >&2
  exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rlx_bad_input.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# fresh NAME: a new copy of the model in $tmp/NAME; prints its path.
fresh() {
  rm -rf "${tmp:?}/$1"
  cp -r "$src" "$tmp/$1"
  echo "$tmp/$1"
}

# py SCRIPT ARGS...: runs a python3 snippet (the st_* helpers are defined).
py() {
  local code=$1
  shift
  python3 - "$@" <<EOF
import json, struct, sys

def st_read(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]

def st_write(path, header, data):
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-(8 + len(h)) % 8)
    open(path, 'wb').write(struct.pack('<Q', len(h)) + h + data)

def ir_read(path):
    return json.load(open(path))

def ir_write(path, doc):
    json.dump(doc, open(path, 'w'))

$code
EOF
}

# expect NAME DIR TEXT...: rlx verify DIR must exit 2 with every TEXT in stderr.
expect() {
  local name=$1 dir=$2
  shift 2
  check "$name" "$("$rlx" verify "$dir" 2>&1 >/dev/null)" $? "$@"
}

# expect_npy NAME FILE TEXT...: the same for `rlx run` with input x from FILE.
expect_npy() {
  local name=$1 file=$2
  shift 2
  check "$name" "$("$rlx" run "$src" --input "x=$file" --output-dir "$tmp/out" 2>&1 >/dev/null)" $? "$@"
}

# check NAME STDERR STATUS TEXT...: reports one case.
check() {
  local name=$1 err=$2 rc=$3
  shift 3
  local why=""
  if ((rc != 2)); then
    why="exit status $rc, expected 2"
    ((rc >= 128)) && why="$why (killed by signal $((rc - 128)))"
  else
    for t in "$@"; do
      [[ $err == *"$t"* ]] || why="stderr does not name '$t'"
    done
  fi
  if [[ -z $why ]]; then
    printf 'ok    %-28s %s\n' "$name" "$(head -n 1 <<<"$err" | cut -c1-150)"
  else
    printf 'FAIL  %-28s %s\n' "$name" "$why"
    sed 's/^/        | /' <<<"$err" | head -n 20
    failed=1
  fi
}

# ---- the copy itself must pass ----
d=$(fresh pristine)
if "$rlx" verify "$d" >/dev/null 2>&1; then
  printf 'ok    %-28s %s\n' pristine "the unmodified copy verifies"
else
  printf 'FAIL  %-28s %s\n' pristine "the unmodified copy does not verify"
  failed=1
fi

# ---- weights.safetensors ----
d=$(fresh truncated_weights)
py "
import os
p = sys.argv[1]
os.truncate(p, os.path.getsize(p) // 2)" "$d/weights.safetensors"
expect truncated_weights "$d" weights.safetensors "out of range" "tensor '"

d=$(fresh weights_under_8_bytes)
printf '\x10\x00\x00' >"$d/weights.safetensors"
expect weights_under_8_bytes "$d" weights.safetensors truncated

d=$(fresh header_length)
py "
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[0:8] = struct.pack('<Q', 1 << 40)
open(p, 'wb').write(b)" "$d/weights.safetensors"
expect header_length "$d" weights.safetensors "header length 1099511627776" exceeds

d=$(fresh header_not_json)
off=$(py "
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
i = b.index(b'},', 8)  # the end of the first entry
b[i + 1] = ord('#')
open(p, 'wb').write(b)
print(i + 1 - 8)" "$d/weights.safetensors")
expect header_not_json "$d" weights.safetensors "malformed JSON" "(byte offset $off)"

d=$(fresh data_offsets)
py "
h, data = st_read(sys.argv[1])
h['c2.bias']['data_offsets'][1] = len(data) + 4
st_write(sys.argv[1], h, data)" "$d/weights.safetensors"
expect data_offsets_out_of_range "$d" weights.safetensors "tensor 'c2.bias'" "out of range"

d=$(fresh overlap)
py "
h, data = st_read(sys.argv[1])
b, e = h['c1.weight']['data_offsets']
h['c1.weight']['data_offsets'] = [b - 4, e - 4]
st_write(sys.argv[1], h, data)" "$d/weights.safetensors"
expect overlapping_tensors "$d" weights.safetensors "c1.weight" overlap

d=$(fresh weight_dtype)
py "
h, data = st_read(sys.argv[1])
h['f3.bias']['dtype'] = 'F8_E5M2'
st_write(sys.argv[1], h, data)" "$d/weights.safetensors"
expect unknown_weight_dtype "$d" "tensor 'f3.bias'" F8_E5M2

d=$(fresh missing_weight)
py "
h, data = st_read(sys.argv[1])
h['c1.bias_renamed'] = h.pop('c1.bias')
st_write(sys.argv[1], h, data)" "$d/weights.safetensors"
expect missing_weight "$d" "weight 'c1.bias'" "missing from" weights.safetensors

d=$(fresh empty_weights)
: >"$d/weights.safetensors"
expect empty_weights_file "$d" "weight 'c1.weight'" "missing from"

d=$(fresh weight_shape)
py "
p = sys.argv[1]
doc = ir_read(p)
w = [w for w in doc['weights'] if w['key'] == 'f2.weight'][0]
w['shape'] = [120, 84]
ir_write(p, doc)" "$d/torch-ir.json"
expect weight_shape_mismatch "$d" "weight 'f2.weight'" "[84, 120]" "[120, 84]"

# ---- torch-ir.json ----
d=$(fresh malformed_ir)
py "
import os
p = sys.argv[1]
os.truncate(p, os.path.getsize(p) - 30)" "$d/torch-ir.json"
expect malformed_torch_ir "$d" torch-ir.json "malformed JSON at line"

d=$(fresh ir_not_rlx)
echo '{"format": "onnx", "version": 1}' >"$d/torch-ir.json"
expect torch_ir_wrong_format "$d" torch-ir.json "'format'"

d=$(fresh ir_dtype)
py "
p = sys.argv[1]
doc = ir_read(p)
doc['inputs'][0]['dtype'] = 'c32'
ir_write(p, doc)" "$d/torch-ir.json"
expect unknown_dtype_in_ir "$d" torch-ir.json "inputs[0]" "unknown dtype 'c32'"

d=$(fresh unknown_op)
py "
p = sys.argv[1]
doc = ir_read(p)
for n in doc['nodes']:
    if n['id'] in ('relu', 'relu_2'):
        n['op'] = 'aten.frobnicate.default'
ir_write(p, doc)" "$d/torch-ir.json"
expect unknown_op "$d" "aten.frobnicate.default (nodes: relu, relu_2)" "does not yet support 1 op(s)"

d=$(fresh node_shape)
py "
p = sys.argv[1]
doc = ir_read(p)
n = [n for n in doc['nodes'] if n['id'] == 'linear_1'][0]
n['out']['shape'] = [4, 85]
ir_write(p, doc)" "$d/torch-ir.json"
expect recorded_shape_mismatch "$d" "node 'linear_1'" "[4, 84]" "[4, 85]"

d=$(fresh dangling_ref)
py "
p = sys.argv[1]
doc = ir_read(p)
n = [n for n in doc['nodes'] if n['id'] == 'relu_1'][0]
n['args'][0] = {'ref': 'no_such_value'}
ir_write(p, doc)" "$d/torch-ir.json"
expect dangling_reference "$d" "node 'relu_1'" "no_such_value"

d=$(fresh missing_ir)
rm "$d/torch-ir.json"
expect missing_torch_ir "$d" torch-ir.json

# ---- reference.safetensors ----
d=$(fresh missing_reference)
rm "$d/reference.safetensors"
expect missing_reference "$d" reference.safetensors missing

d=$(fresh reference_input_shape)
py "
h, data = st_read(sys.argv[1])
b, e = h['in::x']['data_offsets']
h['in::x']['shape'] = [2, 1, 28, 28]
h['in::x']['data_offsets'] = [b, b + (e - b) // 2]
for k, v in h.items():
    if k != '__metadata__' and k != 'in::x' and v['data_offsets'][0] >= e:
        v['data_offsets'] = [o - (e - b) // 2 for o in v['data_offsets']]
data = data[:b + (e - b) // 2] + data[e:]
st_write(sys.argv[1], h, data)" "$d/reference.safetensors"
expect reference_input_shape "$d" "input 'x'" "[4, 1, 28, 28]" "[2, 1, 28, 28]" reference.safetensors

d=$(fresh reference_missing_input)
py "
h, data = st_read(sys.argv[1])
h['in::y'] = h.pop('in::x')
st_write(sys.argv[1], h, data)" "$d/reference.safetensors"
expect reference_missing_input "$d" "in::x" reference.safetensors

d=$(fresh reference_corrupt)
printf 'garbage!garbage!' >"$d/reference.safetensors"
expect reference_corrupt "$d" reference.safetensors

# ---- .npy inputs (rlx run) ----
npy() { # npy FILE HEADER [DATA_BYTES]: a version 1.0 .npy file with zero data
  py "
h = sys.argv[2].encode()
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + bytes(int(sys.argv[3])))" "$@"
}
npy "$tmp/good.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1, 28, 28), }" 12544
if "$rlx" run "$src" --input "x=$tmp/good.npy" --output-dir "$tmp/out" >/dev/null 2>&1; then
  printf 'ok    %-28s %s\n' npy_good "a well-formed .npy input runs"
else
  printf 'FAIL  %-28s %s\n' npy_good "a well-formed .npy input does not run"
  failed=1
fi
npy "$tmp/shape.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 28, 28), }" 3136
expect_npy npy_wrong_shape "$tmp/shape.npy" "input 'x'" "[1, 1, 28, 28]" shape.npy
npy "$tmp/short.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1, 28, 28), }" 100
expect_npy npy_truncated_data "$tmp/short.npy" short.npy "truncated data"
npy "$tmp/huge.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }" 0
expect_npy npy_shape_overflow "$tmp/huge.npy" huge.npy overflows
npy "$tmp/fortran.npy" "{'descr': '<f4', 'shape': (4, 1, 28, 28), 'fortran_order'}" 0
expect_npy npy_no_fortran_value "$tmp/fortran.npy" fortran.npy fortran_order
npy "$tmp/descr.npy" "{'descr': '>c16', 'fortran_order': False, 'shape': (2,), }" 32
expect_npy npy_unknown_descr "$tmp/descr.npy" descr.npy "'>c16'"
printf 'NUMPY?' >"$tmp/magic.npy"
expect_npy npy_bad_magic "$tmp/magic.npy" magic.npy "not a .npy file"

# ---- the directory ----
expect not_a_directory "$src/torch-ir.json" "is not a directory"

if ((failed)); then
  echo "bad_input.sh: some cases failed"
  exit 1
fi
echo "bad_input.sh: all cases passed"
