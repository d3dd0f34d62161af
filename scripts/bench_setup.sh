#!/usr/bin/env bash
# Installs what bench/compare.py measures rlx against, when missing:
#   - into the current python3: onnxruntime, onnx, onnxscript, openvino and
#     matplotlib (python/requirements-bench.txt);
#   - ExecuTorch in a venv of its own (it pins its own torch), with the
#     torchvision and transformers that the benchmark models need, at
#     $RLX_BENCH_VENVS/executorch (default /tmp/rlx-bench-venvs/executorch).
# Idempotent: a package already importable is not installed again. Every
# install is optional: one that fails is reported and the script goes on
# (bench/compare.py then reports that runtime as n/a). Exits 0 unless the base
# torch/torchvision/transformers are missing and cannot be installed.
#
#   scripts/bench_setup.sh [--no-executorch]
set -uo pipefail
cd "$(dirname "$0")/.."

py=${PYTHON:-python3}
venvs=${RLX_BENCH_VENVS:-/tmp/rlx-bench-venvs}
pipq=(-m pip install -q --disable-pip-version-check)
installed=()
failed=()

have() { "$1" -c "import $2" >/dev/null 2>&1; }

# module name -> pip name
want() {
  local mod=$1 pkg=$2
  if have "$py" "$mod"; then
    return
  fi
  echo "bench_setup: pip install $pkg"
  if "$py" "${pipq[@]}" "$pkg"; then installed+=("$pkg"); else failed+=("$pkg"); fi
}

if ! have "$py" "torch, torchvision, transformers"; then
  echo "bench_setup: pip install -r python/requirements-test.txt"
  "$py" "${pipq[@]}" -r python/requirements-test.txt || { echo "bench_setup: torch stack failed"; exit 1; }
  installed+=("requirements-test.txt")
fi
want onnxruntime onnxruntime
want onnx onnx
want onnxscript onnxscript
want openvino openvino
want matplotlib matplotlib

# llama.cpp for bench/generate.py: llama-cpp-python built from its sdist for
# this CPU (GGML_NATIVE: AVX-512), and the sdist's llama.cpp sources, whose
# convert_hf_to_gguf.py converts the benchmark's checkpoint (it needs
# sentencepiece and the sdist's gguf-py). $RLX_LLAMA_CPP_SRC/vendor/llama.cpp
# is what `bench/generate.py --llama-cpp-src` takes.
lcp_src=${RLX_LLAMA_CPP_SRC:-$venvs/llama-cpp-src}
want diskcache diskcache
want sentencepiece sentencepiece
if ! have "$py" llama_cpp || [ ! -f "$lcp_src"/*/vendor/llama.cpp/convert_hf_to_gguf.py ]; then
  mkdir -p "$lcp_src"
  echo "bench_setup: llama-cpp-python (builds llama.cpp: several minutes on 2 cores)"
  if "$py" -m pip download -q --no-deps --no-binary :all: llama-cpp-python -d "$lcp_src" &&
     tar xzf "$lcp_src"/llama_cpp_python-*.tar.gz -C "$lcp_src" &&
     CMAKE_ARGS="-DGGML_NATIVE=ON" "$py" "${pipq[@]}" --no-deps "$lcp_src"/llama_cpp_python-*.tar.gz; then
    installed+=("llama-cpp-python")
  else
    failed+=("llama-cpp-python")
  fi
fi

if [ "${1:-}" != "--no-executorch" ]; then
  et="$venvs/executorch"
  if [ -x "$et/bin/python" ] && have "$et/bin/python" "executorch.extension.pybindings.portable_lib, torchvision, transformers"; then
    :
  else
    echo "bench_setup: venv $et with executorch, torchvision, transformers"
    mkdir -p "$venvs"
    if { [ -x "$et/bin/python" ] || "$py" -m venv "$et"; } &&
       "$et/bin/python" "${pipq[@]}" --upgrade pip &&
       "$et/bin/python" "${pipq[@]}" executorch torchvision transformers safetensors; then
      installed+=("executorch venv ($et)")
    else
      failed+=("executorch venv ($et)")
    fi
  fi
fi

echo "bench_setup: installed: ${installed[*]:-nothing (all present)}"
[ ${#failed[@]} -gt 0 ] && echo "bench_setup: failed (optional, reported as n/a): ${failed[*]}"
for m in torch onnxruntime openvino matplotlib; do
  "$py" -c "import $m; print('bench_setup:', '$m', $m.__version__)" 2>/dev/null || echo "bench_setup: $m missing"
done
[ -x "${venvs}/executorch/bin/python" ] &&
  "${venvs}/executorch/bin/python" -c "import executorch, torch; from importlib.metadata import version; print('bench_setup: executorch', version('executorch'), 'torch', torch.__version__)" 2>/dev/null
exit 0
