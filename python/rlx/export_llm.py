"""Export a Hugging Face causal LM for text generation with rlx.

    python3 -m rlx.export_llm MODEL.py -o OUT [--max-seq N]

MODEL.py defines ``model`` (a ``transformers`` causal LM: Llama, Mistral,
Qwen2/3, Gemma/Gemma2, Phi-3, GPT-2, Mixtral, ...) and optionally
``tokenizer`` (a ``transformers`` tokenizer, a ``tokenizers.Tokenizer`` or
the path of a ``tokenizer.json``).

The program written is one forward step over a dynamic number of new tokens
(docs/design.md, "Text generation"):

    inputs   input_ids      i64[1, T]   the new tokens (prefill: the prompt; decode: T = 1)
             position_ids   i64[1, T]   their positions, P .. P+T-1 (the cache position)
             attention_mask i64[1, L]   ones; its length L = P+T is how much of the cache the step reads
    output   logits         f32[1, 1, V]  of the last new token
    state    k<i>, v<i>     the KV cache of layer i, [1, heads, max_seq + 1, head_dim]

The KV cache is torch.export's mutated buffers, which rlx keeps as session
state: each step writes its T rows in place (an index_put into the cache,
never a whole copy) and attends over the first L rows only, so a decode step
costs what the filled part of the cache costs, not the maximum. (The cache
has one spare row: torch.export guards a slice that could span the whole
buffer.)

OUT also holds ``generation.json`` (the inputs' roles, special tokens,
generation defaults, the maximum context and what the cache costs) and
``tokenizer.json`` when a tokenizer is given.
"""
from __future__ import annotations

import argparse
import inspect
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import torch

from .export import ExportError, export_program, format_summary

FORMAT = "rlx-llm"
VERSION = 1
DEFAULT_CACHE_CAP_MB = 2048  # default --max-seq keeps one session's KV cache under this


def load_llm_file(path: str) -> tuple[torch.nn.Module, Any]:
    """(model, tokenizer or None) from MODEL.py."""
    p = Path(path)
    if not p.is_file():
        raise ExportError(f"model file not found: {path}")
    spec = importlib.util.spec_from_file_location(f"rlx_llm_{p.stem}", str(p))
    if spec is None or spec.loader is None:
        raise ExportError(f"cannot load model file {path}")
    mod = importlib.util.module_from_spec(spec)
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    model = getattr(mod, "model", None)
    if model is None and callable(getattr(mod, "get_model", None)):
        model = mod.get_model()
    if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise ExportError(f"{path}: 'model' must be a transformers causal LM (a torch.nn.Module "
                          f"with a config), not {type(model).__name__}")
    return model, getattr(mod, "tokenizer", None)


# --------------------------------------------------------------------------
# The cache rlx keeps as state


def _cache_classes():
    from transformers.cache_utils import Cache, CacheLayerMixin

    class StepInfo:
        """What one step knows: where its rows go and how long the cache is."""

        def __init__(self, positions: torch.Tensor, new: Any, total: Any):
            self.positions, self.new, self.total = positions, new, total

    class Layer(CacheLayerMixin):
        """One layer's keys and values in module buffers (so torch.export
        records their update as a buffer mutation): the step's rows are
        written at their positions, and attention gets the first L rows."""
        is_compileable = True
        is_sliding = False

        def __init__(self, keys: torch.Tensor, values: torch.Tensor, step: StepInfo):
            super().__init__()
            self.keys, self.values, self.step = keys, values, step
            self.is_initialized = True

        def lazy_initialization(self, key_states, value_states):  # the buffers exist already
            pass

        def update(self, key_states, value_states, *args, **kwargs):
            pos = self.step.positions
            self.keys.index_copy_(2, pos, key_states.to(self.keys.dtype))
            self.values.index_copy_(2, pos, value_states.to(self.values.dtype))
            L = self.step.total
            return self.keys.narrow(2, 0, L), self.values.narrow(2, 0, L)

        def get_mask_sizes(self, query_length):
            return self.step.total, 0

        def get_seq_length(self):
            return self.step.total - self.step.new

        def get_max_length(self):
            return self.keys.shape[2] - 1

        def reset(self):
            pass

    class RlxCache(Cache):
        def __init__(self, layers):
            super().__init__(layers=layers)

    return StepInfo, Layer, RlxCache


def kv_shapes(lm: torch.nn.Module) -> list[tuple[tuple[int, ...], tuple[int, ...], torch.dtype]]:
    """Per layer: the key and value shape of one token, [1, heads, 1, dim],
    and dtype, from one eager step with the model's own cache."""
    cfg = lm.config
    ids = torch.zeros(1, 1, dtype=torch.long)
    with torch.no_grad():
        out = lm(input_ids=ids, use_cache=True)
    cache = getattr(out, "past_key_values", None)
    layers = getattr(cache, "layers", None)
    if not layers:
        raise ExportError(f"{type(lm).__name__}: the model returned no KV cache (use_cache=True); rlx "
                          "exports decoder LMs whose attention goes through transformers' Cache")
    shapes = []
    for i, layer in enumerate(layers):
        k, v = getattr(layer, "keys", None), getattr(layer, "values", None)
        if not isinstance(k, torch.Tensor) or not isinstance(v, torch.Tensor) or k.dim() != 4:
            raise ExportError(f"{type(lm).__name__}: cache layer {i} is a {type(layer).__name__} without "
                              "4-d keys and values (linear-attention and other recurrent layers are not "
                              "supported)")
        shapes.append((tuple(k.shape), tuple(v.shape), k.dtype))
    if len(shapes) != getattr(cfg, "num_hidden_layers", len(shapes)):
        raise ExportError(f"{type(lm).__name__}: {len(shapes)} cache layers for "
                          f"{cfg.num_hidden_layers} hidden layers")
    return shapes


class GenerationStep(torch.nn.Module):
    """The causal LM as one generation step with its KV cache in buffers."""

    def __init__(self, lm: torch.nn.Module, max_seq: int):
        super().__init__()
        self.lm = lm
        self.max_seq = max_seq
        self.n_layers = 0
        # transformers 5 renames past_key_values to cache, model by model
        self.cache_kwarg = "cache" if "cache" in inspect.signature(lm.forward).parameters else "past_key_values"
        for i, (ks, vs, dt) in enumerate(kv_shapes(lm)):
            self.register_buffer(f"k{i}", torch.zeros(1, ks[1], max_seq + 1, ks[3], dtype=dt), persistent=False)
            self.register_buffer(f"v{i}", torch.zeros(1, vs[1], max_seq + 1, vs[3], dtype=dt), persistent=False)
            self.n_layers += 1

    def cache_bytes(self) -> int:
        return sum(b.numel() * b.element_size() for b in self.buffers() if b.dim() == 4
                   and b.shape[2] == self.max_seq + 1)

    def forward(self, input_ids, position_ids, attention_mask):
        StepInfo, Layer, RlxCache = _cache_classes()
        step = StepInfo(position_ids[0], input_ids.shape[1], attention_mask.shape[1])
        cache = RlxCache([Layer(getattr(self, f"k{i}"), getattr(self, f"v{i}"), step)
                          for i in range(self.n_layers)])
        kw = {self.cache_kwarg: cache}
        out = self.lm(input_ids=input_ids, position_ids=position_ids, attention_mask=attention_mask,
                      use_cache=True, logits_to_keep=1, **kw)
        return out.logits.float()


# --------------------------------------------------------------------------
# Metadata


def _ids(v) -> list[int]:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v if x is not None]
    return [int(v)]


def generation_meta(lm: torch.nn.Module, step: GenerationStep, tokenizer_file: str | None,
                    notes: list[str]) -> dict:
    cfg, gc = lm.config, getattr(lm, "generation_config", None)

    def pick(name, default=None):
        v = getattr(gc, name, None) if gc is not None else None
        return default if v is None else v

    vocab = int(cfg.vocab_size)

    def in_vocab(name, ids):
        bad = [i for i in ids if not 0 <= i < vocab]
        if bad:  # tiny test configs keep the full model's special ids
            notes.append(f"{name} {bad} is outside the vocab of {vocab}: left out")
        return [i for i in ids if 0 <= i < vocab]

    eos = in_vocab("eos_token_id", _ids(pick("eos_token_id", getattr(cfg, "eos_token_id", None))))
    bos = in_vocab("bos_token_id", _ids(pick("bos_token_id", getattr(cfg, "bos_token_id", None))))
    pad = in_vocab("pad_token_id", _ids(pick("pad_token_id", getattr(cfg, "pad_token_id", None))))
    return {
        "format": FORMAT,
        "version": VERSION,
        "architecture": type(lm).__name__,
        "model_type": getattr(cfg, "model_type", ""),
        "inputs": {"tokens": "input_ids", "positions": "position_ids", "mask": "attention_mask"},
        "logits_output": 0,
        "vocab_size": int(cfg.vocab_size),
        "max_seq": step.max_seq,
        "n_layers": step.n_layers,
        "kv_cache_bytes": step.cache_bytes(),
        "bos_token_id": (bos or [None])[0],
        "eos_token_ids": eos,
        "pad_token_id": (pad or [None])[0],
        "defaults": {
            "do_sample": bool(pick("do_sample", False)),
            "temperature": float(pick("temperature", 1.0)),
            "top_k": int(pick("top_k", 0) or 0),
            "top_p": float(pick("top_p", 1.0)),
            "min_p": float(pick("min_p", 0.0) or 0.0),
            "repetition_penalty": float(pick("repetition_penalty", 1.0)),
            "max_new_tokens": int(pick("max_new_tokens", 0) or 0) or 128,
        },
        "tokenizer": tokenizer_file,
    }


def save_tokenizer(tokenizer, out_dir: Path) -> str | None:
    if tokenizer is None:
        return None
    dst = out_dir / "tokenizer.json"
    if isinstance(tokenizer, (str, Path)):
        src = Path(tokenizer)
        if not src.is_file():
            raise ExportError(f"tokenizer file not found: {tokenizer}")
        dst.write_bytes(src.read_bytes())
        return dst.name
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is None and hasattr(tokenizer, "to_str"):
        backend = tokenizer  # a tokenizers.Tokenizer
    if backend is None or not hasattr(backend, "to_str"):
        raise ExportError(f"tokenizer: a {type(tokenizer).__name__} has no tokenizers backend to save as "
                          "tokenizer.json (give a fast tokenizer, a tokenizers.Tokenizer or a path)")
    dst.write_text(backend.to_str(), encoding="utf-8")
    return dst.name


def default_max_seq(lm: torch.nn.Module, cap_mb: float) -> tuple[int, str]:
    """The config's context, capped so that one session's cache fits cap_mb."""
    cfg = lm.config
    ctx = int(getattr(cfg, "max_position_embeddings", 0) or getattr(cfg, "n_positions", 0) or 2048)
    per_tok = sum((ks[1] * ks[3] + vs[1] * vs[3]) * torch.empty(0, dtype=dt).element_size()
                  for ks, vs, dt in kv_shapes(lm))
    cap = max(16, int(cap_mb * 1024 * 1024 // max(per_tok, 1)))
    if ctx > cap:
        return cap, (f"max_seq {cap} (the config allows {ctx}; capped so that one session's KV cache stays "
                     f"under {cap_mb:.0f} MiB: {per_tok} bytes a token; --max-seq to choose)")
    return ctx, f"max_seq {ctx} (the config's context)"


# --------------------------------------------------------------------------


def export_llm(lm: torch.nn.Module, out_dir, *, tokenizer=None, max_seq: int | None = None,
               prompt_len: int = 5, check: bool = True, cache_cap_mb: float = DEFAULT_CACHE_CAP_MB,
               quiet: bool = True) -> dict:
    """Export ``lm`` for generation into ``out_dir``; returns export_program's summary plus
    ``generation`` (the generation.json document)."""
    lm = lm.eval()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    note = None
    if max_seq is None:
        max_seq, note = default_max_seq(lm, cache_cap_mb)
    if max_seq < 2:
        raise ExportError(f"--max-seq {max_seq}: must be at least 2")
    step = GenerationStep(lm, max_seq).eval()
    T = max(2, min(prompt_len, max_seq - 1))
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, int(lm.config.vocab_size), (1, T), generator=gen)
    pos = torch.arange(T).unsqueeze(0)
    mask = torch.ones(1, T, dtype=torch.long)
    dynamic = [f"input_ids:1:T:1:{max_seq}", f"position_ids:1:T:1:{max_seq}",
               f"attention_mask:1:L:1:{max_seq}"]
    summary = export_program(step, (ids, pos, mask), out_dir, model_name=type(lm).__name__.lower(),
                             dynamic=dynamic, check=check, reference64_cap_mb=0, quiet=quiet)
    tok = save_tokenizer(tokenizer, out_dir)
    notes = [note] if note else []
    meta = generation_meta(lm, step, tok, notes)
    (out_dir / "generation.json").write_text(json.dumps(meta, indent=1) + "\n")
    summary["generation"] = meta
    summary["notes"] = notes + list(summary.get("notes", []))
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m rlx.export_llm",
                                 description="Export a transformers causal LM for `rlx generate`.")
    ap.add_argument("model_file", help="a Python file defining `model` (and optionally `tokenizer`)")
    ap.add_argument("-o", "--out", required=True, help="output directory")
    ap.add_argument("--max-seq", type=int, default=None,
                    help="maximum context in tokens (default: the config's, capped so one session's "
                         f"KV cache stays under {DEFAULT_CACHE_CAP_MB} MiB)")
    ap.add_argument("--no-check", action="store_true", help="do not run `rlx inspect --check`")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        lm, tok = load_llm_file(a.model_file)
        s = export_llm(lm, a.out, tokenizer=tok, max_seq=a.max_seq, check=not a.no_check, quiet=a.quiet)
    except ExportError as e:
        print(f"rlx.export_llm: error: {e}", file=sys.stderr)
        return 2
    g = s["generation"]
    if not a.quiet:
        print(format_summary(s))
        for n in s["notes"]:
            print(f"  note: {n}")
        print(f"  generation: {g['architecture']}, {g['n_layers']} layers, vocab {g['vocab_size']}, "
              f"max_seq {g['max_seq']}, KV cache {g['kv_cache_bytes'] / 2**20:.1f} MiB per session, "
              f"eos {g['eos_token_ids']}, tokenizer {'tokenizer.json' if g['tokenizer'] else 'none'}")
    return 0 if s.get("check") != "failed" else 1


if __name__ == "__main__":
    sys.exit(main())
