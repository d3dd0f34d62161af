"""Models that compute with complex numbers, exported with rlx.export and
verified with `rlx verify` (docs/design.md, "Complex numbers"):

- a Llama decoder with Meta's complex rotary embeddings (tests/models/meta_llama.py),
  its freqs_cis a lifted complex constant, a complex buffer, or computed in
  forward with torch.polar;
- transformers' FNetModel (tests/models/fnet.py): fftn over (sequence, hidden), .real;
- transformers' Llama 4 and DeepSeek-V2, whose rotary embeddings are complex
  in this transformers version (torch.polar, view_as_complex, view_as_real);

each in the decompositions that keep different ops (aten keeps torch.fft's
fft_* ops, high and core leave _fft_r2c / _fft_c2c / _fft_c2r), at
power-of-two and other lengths (Bluestein's path in the fft kernel); the
rotary models and FNet also with a dynamic sequence, and Llama 4 and DeepSeek-V2
generating text through rlx.export_llm as transformers does. Also
what the files hold (a complex weight as real pairs) and the errors: complex
program inputs and outputs, an op rlx does not lower on complex values.
"""

import importlib.util
import json

import pytest
import torch

from conftest import REPO, run_rlx

import rlx  # noqa: E402  (conftest puts python/ on sys.path)


def load(name, **kw):
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "models" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.get_model(**kw)


def export_and_verify(rlx_bin, out, model, inputs, decomposition="high", extra=()):
    summary = rlx.export_program(model, inputs, out, decomposition=decomposition, check=True)
    assert summary["check"] == "passed", summary["check_message"]
    r = run_rlx(rlx_bin, "verify", out, "--json", out / "verify.json", *extra)
    assert r.returncode == 0 and "parity: PASS" in r.stdout, r.stdout + r.stderr
    report = json.loads((out / "verify.json").read_text())
    assert report["pass"] and report["outputs"], report
    for o in report["outputs"]:
        assert o["cosine"] >= 0.99999 and o["pass"], o
    return summary, report


def ops_of(summary):
    return dict(summary["op_histogram"])


@pytest.mark.parametrize("freqs", ["const", "buffer", "polar"])
@pytest.mark.parametrize("decomposition", ["high", "core", "aten"])
def test_meta_llama_complex_rotary(rlx_bin, tmp_path, freqs, decomposition):
    model, inputs = load("meta_llama", freqs=freqs)
    summary, _ = export_and_verify(rlx_bin, tmp_path / "out", model, inputs, decomposition)
    ops = ops_of(summary)
    assert ops["aten.view_as_complex.default"] == 4 and ops["aten.view_as_real.default"] == 4
    assert ops.get("aten.polar.default", 0) == (1 if freqs == "polar" else 0)


def test_meta_llama_other_sizes(rlx_bin, tmp_path):
    """Another seed, odd sequence length, more heads, three layers, no GQA."""
    model, inputs = load("meta_llama", seed=7, batch=1, seq=11, dim=48, layers=3, heads=6, kv_heads=6,
                         freqs="buffer")
    export_and_verify(rlx_bin, tmp_path / "out", model, inputs, "high")


def test_complex_weight_is_stored_as_real_pairs(rlx_bin, tmp_path):
    from safetensors.torch import load_file
    model, inputs = load("meta_llama", freqs="buffer")
    out = tmp_path / "out"
    export_and_verify(rlx_bin, out, model, inputs, "high")
    ir = json.loads((out / "torch-ir.json").read_text())
    (w,) = [w for w in ir["weights"] if w["key"] == "freqs_cis"]
    assert w["dtype"] == "c64" and w["storage"] == "real_pairs" and w["shape"] == [16, 4]
    stored = load_file(str(out / "weights.safetensors"))["freqs_cis"]
    assert stored.dtype == torch.float32 and stored.shape == (16, 4, 2)
    assert torch.equal(stored, torch.view_as_real(model.freqs_cis))
    assert any(n["out"] and n["out"].get("dtype") == "c64" for n in ir["nodes"])


@pytest.mark.parametrize("decomposition", ["high", "core", "aten"])
def test_fnet(rlx_bin, tmp_path, decomposition):
    model, inputs = load("fnet")
    summary, _ = export_and_verify(rlx_bin, tmp_path / "out", model, inputs, decomposition)
    ops = ops_of(summary)
    fft = "aten.fft_fftn.default" if decomposition == "aten" else "aten._fft_c2c.default"
    assert ops[fft] == 2, ops


@pytest.mark.parametrize("seq,hidden", [(12, 48), (7, 20), (1, 16), (100, 24)])
def test_fnet_other_lengths(rlx_bin, tmp_path, seq, hidden):
    """Lengths that are not powers of two (the direct sum up to 16, Bluestein
    above), and a sequence of one token."""
    model, inputs = load("fnet", seed=seq, seq=seq, hidden=hidden, intermediate=2 * hidden, batch=2)
    export_and_verify(rlx_bin, tmp_path / "out", model, inputs, "high", extra=("--reference-kernels",))


class _CausalLM(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


def test_llama4_text(rlx_bin, tmp_path):
    from transformers import Llama4ForCausalLM, Llama4TextConfig
    torch.manual_seed(0)
    cfg = Llama4TextConfig(vocab_size=64, hidden_size=32, intermediate_size=64, intermediate_size_mlp=64,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                           num_local_experts=2, max_position_embeddings=64)
    m = _CausalLM(Llama4ForCausalLM(cfg).eval()).eval()
    summary, _ = export_and_verify(rlx_bin, tmp_path / "out", m, (torch.randint(0, 64, (1, 9)),))
    ops = ops_of(summary)
    assert ops["aten.polar.default"] == 1 and ops["aten.view_as_complex.default"] == 4


def test_deepseek_v2(rlx_bin, tmp_path):
    from transformers import DeepseekV2Config, DeepseekV2ForCausalLM
    torch.manual_seed(0)
    cfg = DeepseekV2Config(vocab_size=64, hidden_size=32, intermediate_size=64, moe_intermediate_size=16,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4,
                           num_experts_per_tok=2, n_shared_experts=1, kv_lora_rank=16, q_lora_rank=None,
                           qk_rope_head_dim=8, v_head_dim=8, qk_nope_head_dim=8, first_k_dense_replace=1,
                           max_position_embeddings=64)
    m = _CausalLM(DeepseekV2ForCausalLM(cfg).eval()).eval()
    summary, _ = export_and_verify(rlx_bin, tmp_path / "out", m, (torch.randint(0, 64, (2, 7)),))
    ops = ops_of(summary)
    assert ops["aten.polar.default"] == 1 and ops["aten.view_as_complex.default"] == 4


def test_meta_llama_dynamic_sequence(rlx_bin, tmp_path):
    """Complex rotary embeddings at symbolic shapes: a dynamic sequence axis,
    verified at four bindings besides the example."""
    for freqs in ("const", "polar"):
        model, inputs = load("meta_llama", freqs=freqs)
        out = tmp_path / freqs
        summary = rlx.export_program(model, inputs, out, decomposition="high", dynamic=["tokens:1:seq:1:16"],
                                     reference_shapes=True, check=True)
        assert summary["check"] == "passed", summary["check_message"]
        assert len(summary["reference_bindings"]) >= 3
        r = run_rlx(rlx_bin, "verify", out)
        assert r.returncode == 0 and "parity: PASS" in r.stdout and "binding 3" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("decomposition", ["high", "aten"])
def test_fnet_dynamic_sequence(rlx_bin, tmp_path, decomposition):
    """FFTs at symbolic lengths: FNet with a dynamic sequence (radix-2,
    direct and Bluestein lengths among the bindings)."""
    model, inputs = load("fnet", seq=12, hidden=20, intermediate=40)
    summary = rlx.export_program(model, inputs, tmp_path, decomposition=decomposition,
                                 dynamic=["ids:1:seq:2:32"], reference_shapes=True, check=True)
    assert summary["check"] == "passed", summary["check_message"]
    r = run_rlx(rlx_bin, "verify", tmp_path)
    assert r.returncode == 0 and "parity: PASS" in r.stdout and "binding 4" in r.stdout, r.stdout + r.stderr


class _RfftRoundTrip(torch.nn.Module):
    """irfft's default length 2 (L - 1) of a symbolic L, and sym_size of a complex tensor."""
    def forward(self, x):
        z = torch.fft.rfft(x, dim=1)
        return torch.fft.irfft(z, dim=1) + torch.fft.fft(x, dim=1).abs().sum(1, keepdim=True) / z.shape[1]


@pytest.mark.parametrize("decomposition", ["high", "aten"])
def test_rfft_irfft_dynamic(rlx_bin, tmp_path, decomposition):
    summary = rlx.export_program(_RfftRoundTrip(), (torch.randn(2, 10, 3),), tmp_path, decomposition=decomposition,
                                 dynamic=["x:1:2*H:1:16"], reference_shapes=True, check=True)
    assert summary["check"] == "passed", summary["check_message"]
    r = run_rlx(rlx_bin, "verify", tmp_path)
    assert r.returncode == 0 and "parity: PASS" in r.stdout and "binding 4" in r.stdout, r.stdout + r.stderr


class _ComplexPad(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_real(torch.nn.functional.pad(torch.view_as_complex(x), (0, 1)))


def test_complex_pad_at_symbolic_shapes_is_refused(tmp_path):
    summary = rlx.export_program(_ComplexPad(), (torch.randn(3, 5, 2),), tmp_path, dynamic=["x:0:B:1:8"],
                                 check=True)
    assert summary["check"] == "failed"
    assert "rlx lowers this op on complex values at static shapes only" in summary["check_message"], \
        summary["check_message"]


def _llama4_lm():
    from transformers import Llama4ForCausalLM, Llama4TextConfig
    torch.manual_seed(0)
    return Llama4ForCausalLM(Llama4TextConfig(
        vocab_size=320, hidden_size=32, intermediate_size=64, intermediate_size_mlp=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, num_local_experts=2,
        max_position_embeddings=128)).eval()


def _deepseek_v2_lm():
    from transformers import DeepseekV2Config, DeepseekV2ForCausalLM
    torch.manual_seed(0)
    return DeepseekV2ForCausalLM(DeepseekV2Config(
        vocab_size=320, hidden_size=32, intermediate_size=64, moe_intermediate_size=16, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
        n_shared_experts=1, kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8, v_head_dim=8,
        qk_nope_head_dim=8, first_k_dense_replace=1, max_position_embeddings=128)).eval()


@pytest.mark.parametrize("make", [_llama4_lm, _deepseek_v2_lm], ids=["llama4", "deepseek_v2"])
def test_generate_with_complex_rotary(rlx_bin, tmp_path, make):
    """rlx.export_llm (dynamic T and L, the KV cache as state) of a model with
    complex rotary embeddings: every step's logits within the f32 bar of
    transformers' greedy generate() (following torch's tokens), and the same
    free-running tokens."""
    import numpy as np
    from rlx.export_llm import export_llm
    lm = make()
    out = tmp_path / "llm"
    s = export_llm(lm, out, max_seq=48, check=True)
    assert s["check"] == "passed", s["check_message"]
    prompt = torch.randint(3, 320, (1, 7), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        g = lm.generate(prompt, max_new_tokens=24, do_sample=False, output_logits=True,
                        return_dict_in_generate=True, pad_token_id=0)
    want = g.sequences[0, 7:].tolist()
    ref = torch.cat([x.float() for x in g.logits]).numpy()
    p = ",".join(map(str, prompt[0].tolist()))
    npy = tmp_path / "logits.npy"
    r = run_rlx(rlx_bin, "generate", out, "--prompt-ids", p, "--max-new-tokens", len(want), "--force-ids",
                ",".join(map(str, want)), "--logits-out", npy, "--quiet")
    assert r.returncode == 0, r.stderr
    got = np.load(npy)
    assert got.shape == ref.shape
    for i, (a, b) in enumerate(zip(got, ref)):
        assert float(np.abs(a - b).max()) <= 1e-4 + 1e-4 * float(np.abs(b).max()), f"step {i}"
    r = run_rlx(rlx_bin, "generate", out, "--prompt-ids", p, "--max-new-tokens", len(want), "--quiet")
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("ids:")][0]
    assert [int(x) for x in line[4:].split(",")] == want


def test_localize_through_complex_values(rlx_bin, tmp_path):
    """Complex intermediates are stored as real pairs, so the localizer
    compares every node, complex ones included."""
    model, inputs = load("meta_llama", freqs="polar", layers=1)
    out = tmp_path / "out"
    rlx.export_program(model, inputs, out, decomposition="core", intermediates=True)
    r = run_rlx(rlx_bin, "verify", out, "--localize")
    assert r.returncode == 0 and "every compared node is within tolerance" in r.stdout, r.stdout + r.stderr


# --------------------------------------------------------------------------
# Errors


class _ComplexIn(torch.nn.Module):
    def forward(self, z):
        return torch.view_as_real(z * 2)


class _ComplexOut(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_complex(x) * 2


class _Exp(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_real(torch.exp(torch.view_as_complex(x)))


def test_complex_input_is_refused(tmp_path):
    with pytest.raises(rlx.ExportError, match=r"input 'z' is complex64: .*pass torch.view_as_real"):
        rlx.export_program(_ComplexIn(), (torch.randn(3, dtype=torch.complex64),), tmp_path)


def test_complex_output_is_refused(tmp_path):
    with pytest.raises(rlx.ExportError, match=r"output 0 \('mul'\) is complex64: .*return torch.view_as_real"):
        rlx.export_program(_ComplexOut(), (torch.randn(3, 2),), tmp_path)


def test_unlowered_complex_op_names_op_and_node(rlx_bin, tmp_path):
    summary = rlx.export_program(_Exp(), (torch.randn(3, 2),), tmp_path, decomposition="aten", check=True)
    assert summary["check"] == "failed"
    r = run_rlx(rlx_bin, "verify", tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "node 'exp' (aten.exp.default): rlx does not lower this op on complex values" in r.stderr, r.stderr
