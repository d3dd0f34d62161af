"""The benchmark models, defined once for every worker in bench/peers/.

Every model is batch 1, fp32, random weights: ``build(name)`` seeds torch
with 0 before constructing it, so each worker process (and each venv, as far
as its torch and transformers draw the same numbers) builds the same
weights.  ``inputs(name)`` draws the example inputs from a generator of its
own (seed 0), so they do not depend on how many numbers the model's
initialization consumed, and a worker that only loads a cached export gets
the same inputs without building the model.

Only torch, torchvision and transformers are imported here, and lazily: the
ExecuTorch venv has its own copies of them.
"""

from __future__ import annotations

import torch

IMAGE = (1, 3, 224, 224)
SEQ = 128

# name -> (kind, description); kind picks the inputs
MODELS = {
    "resnet18": ("image", "torchvision resnet18, 1x3x224x224"),
    "resnet50": ("image", "torchvision resnet50, 1x3x224x224"),
    "mobilenet_v3_large": ("image", "torchvision mobilenet_v3_large, 1x3x224x224"),
    "efficientnet_b0": ("image", "torchvision efficientnet_b0, 1x3x224x224"),
    "convnext_tiny": ("image", "torchvision convnext_tiny, 1x3x224x224"),
    "vit_b_16": ("image", "torchvision vit_b_16, 1x3x224x224"),
    "bert_base": ("bert", "BERT-base (BertConfig()), seq 128, input_ids + attention_mask"),
    "gpt2": ("ids", "GPT-2 small (GPT2Config(use_cache=False)), prefill 128"),
    "llama_1b": ("ids", "Llama-style decoder, 1.04B params (hidden 2048, MLP 8192, 16 layers, "
                        "32 heads, 8 KV heads, vocab 32000), prefill 128"),
}


def _torchvision_classifier(name: str) -> bool:
    """Whether ``name`` is a torchvision classification model (any of them can be
    benchmarked as an "image" model besides the set above: models the benchmark
    was not tuned on)."""
    try:
        import torchvision
        return name in torchvision.models.list_models(module=torchvision.models)
    except Exception:  # noqa: BLE001 - no torchvision: not a model here
        return False


# transformers models outside the benchmark (not run by default: `--models`
# names them), built from their default configs like the ones above
EXTRA = {
    "distilbert": ("bert", "DistilBERT (DistilBertConfig()), seq 128, input_ids + attention_mask"),
    "roberta": ("bert", "RoBERTa-base (RobertaConfig()), seq 128, input_ids + attention_mask"),
    "opt_125m": ("ids", "OPT-125m-shaped decoder (OPTConfig()), prefill 128"),
    "t5_encoder": ("ids", "T5-small encoder (T5Config()), seq 128"),
}


def describe(name: str) -> tuple[str, str]:
    """(kind, description) of ``name``: a MODELS or EXTRA entry, or any
    torchvision classification model, batch 1 at 224x224 (KeyError if
    none)."""
    if name in MODELS:
        return MODELS[name]
    if name in EXTRA:
        return EXTRA[name]
    if _torchvision_classifier(name):
        return ("image", f"torchvision {name}, 1x3x224x224")
    raise KeyError(f"unknown model '{name}' (known: {', '.join(MODELS)}, or any torchvision classifier)")


# vocabulary sizes, for the token ids
_VOCAB = {"bert_base": 30522, "gpt2": 50257, "llama_1b": 32000, "distilbert": 30522, "roberta": 50265,
          "opt_125m": 50272, "t5_encoder": 32128}

# the larger models get fewer timed runs (see bench/compare.py --max-iters-large)
LARGE = {"llama_1b"}


class _LastHidden(torch.nn.Module):
    """A transformers model returning only ``last_hidden_state`` (one tensor)."""

    def __init__(self, m: torch.nn.Module, with_mask: bool):
        super().__init__()
        self.m = m
        self.with_mask = with_mask

    def forward(self, input_ids, attention_mask=None):
        if self.with_mask:
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.m(input_ids=input_ids).last_hidden_state


def build(name: str) -> torch.nn.Module:
    """The model ``name`` in eval mode, weights drawn after torch.manual_seed(0)."""
    kind = describe(name)[0]
    torch.manual_seed(0)
    if kind == "image":
        import torchvision
        m = getattr(torchvision.models, name)(weights=None)
    elif name == "bert_base":
        from transformers import BertConfig, BertModel
        m = _LastHidden(BertModel(BertConfig(), add_pooling_layer=False), with_mask=True)
    elif name == "gpt2":
        from transformers import GPT2Config, GPT2Model
        m = _LastHidden(GPT2Model(GPT2Config(use_cache=False)), with_mask=False)
    elif name == "distilbert":
        from transformers import DistilBertConfig, DistilBertModel
        m = _LastHidden(DistilBertModel(DistilBertConfig()), with_mask=True)
    elif name == "roberta":
        from transformers import RobertaConfig, RobertaModel
        m = _LastHidden(RobertaModel(RobertaConfig(), add_pooling_layer=False), with_mask=True)
    elif name == "opt_125m":
        from transformers import OPTConfig, OPTModel
        m = _LastHidden(OPTModel(OPTConfig(use_cache=False)), with_mask=False)
    elif name == "t5_encoder":
        from transformers import T5Config, T5EncoderModel
        m = _LastHidden(T5EncoderModel(T5Config(use_cache=False)), with_mask=False)
    elif name == "llama_1b":
        from transformers import LlamaConfig, LlamaModel
        cfg = LlamaConfig(vocab_size=_VOCAB[name], hidden_size=2048, intermediate_size=8192,
                          num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                          max_position_embeddings=2048, use_cache=False)
        m = _LastHidden(LlamaModel(cfg), with_mask=False)
    else:
        raise AssertionError(name)
    return m.eval()


def inputs(name: str) -> tuple[torch.Tensor, ...]:
    """The example inputs of ``name`` (a tuple, in forward's order), seed 0."""
    g = torch.Generator().manual_seed(0)
    kind = describe(name)[0]
    if kind == "image":
        return (torch.randn(IMAGE, generator=g),)
    ids = torch.randint(0, _VOCAB[name], (1, SEQ), generator=g)
    if kind == "bert":
        return ids, torch.ones(1, SEQ, dtype=torch.int64)
    return (ids,)


def input_names(name: str) -> list[str]:
    kind = describe(name)[0]
    return ["input_ids", "attention_mask"] if kind == "bert" else (["input_ids"] if kind == "ids" else ["x"])
