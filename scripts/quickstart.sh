#!/usr/bin/env bash
# rlx's main job on the model shipped in the repo, on a fresh machine:
# install build deps, build, then import -> run -> verify against PyTorch's
# reference outputs (parity) and measure latency. No Python needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== rlx verify examples/models/tiny_llama  (transformers LlamaForCausalLM, int64 token ids)"
build/rlx verify examples/models/tiny_llama
echo
echo "== rlx bench examples/models/tiny_llama"
build/rlx bench examples/models/tiny_llama --iters 50
echo
echo "== rlx verify examples/models/mnist_cnn  (LeNet-style CNN)"
build/rlx verify examples/models/mnist_cnn
echo
echo "== rlx generate examples/models/tiny_llm  (text generation: KV cache as session state; random weights, so the text is noise)"
build/rlx generate examples/models/tiny_llm --prompt "The quick brown fox" --max-new-tokens 24 --no-stop
