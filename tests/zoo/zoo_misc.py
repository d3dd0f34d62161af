"""Zoo entries built from torch.nn modules: recurrent nets and the stock Transformer.

Recurrent models are multi-layer, bidirectional and batch_first, as they are used in
practice (tagging, speech features); the token classifier takes int64 ids with padding.
`VARIANTS` are deployment forms of other entries: float16 / bfloat16 casts, and the
static-KV-cache export recipe transformers provides for on-device decoding.
"""

from __future__ import annotations

import torch
from torch import nn

from zoo_common import ZooModel, seeded

NN = "torch.nn"


class RNNTagger(nn.Module):
    """features (B, T, F) -> RNN (L layers, bidirectional) -> per-step logits (B, T, C)."""

    def __init__(self, cell, feat=32, hidden=64, layers=2, classes=10, bidirectional=True):
        super().__init__()
        self.rnn = getattr(nn, cell)(feat, hidden, num_layers=layers, batch_first=True,
                                     bidirectional=bidirectional)
        self.head = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class RNNWithState(nn.Module):
    """x, h0 (and c0) -> (output, final states): the states are outputs too."""

    def __init__(self, cell, feat=24, hidden=48, layers=3):
        super().__init__()
        self.cell = cell
        self.rnn = getattr(nn, cell)(feat, hidden, num_layers=layers, batch_first=True,
                                     bidirectional=True)

    def forward(self, x, h0, c0=None):
        if self.cell == "LSTM":
            y, (h, c) = self.rnn(x, (h0, c0))
            return y, h, c
        y, h = self.rnn(x, h0)
        return y, h


class TokenLSTM(nn.Module):
    """ids (B, T) int64 -> embedding -> 2-layer BiLSTM -> masked mean pool -> logits (B, C)."""

    def __init__(self, vocab=500, dim=64, hidden=64, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, ids, mask):
        y, _ = self.rnn(self.emb(ids))
        m = mask.unsqueeze(-1).to(y.dtype)
        pooled = (y * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(pooled)


def _rnn(cell, **kw):
    def build():
        seeded(0)
        model = RNNTagger(cell, **kw).eval()
        g = torch.Generator().manual_seed(1)
        return model, (torch.randn(2, 20, 32, generator=g),)
    return build


def _rnn_state(cell):
    def build():
        seeded(0)
        model = RNNWithState(cell).eval()
        g = torch.Generator().manual_seed(1)
        x = torch.randn(3, 12, 24, generator=g)
        h0 = torch.randn(6, 3, 48, generator=g)
        if cell == "LSTM":
            return model, (x, h0, torch.randn(6, 3, 48, generator=g))
        return model, (x, h0)
    return build


def token_lstm():
    seeded(0)
    model = TokenLSTM().eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 500, (2, 16), generator=g, dtype=torch.int64)
    mask = torch.ones(2, 16, dtype=torch.int64)
    ids[1, 11:] = 0
    mask[1, 11:] = 0
    return model, (ids, mask)


def nn_transformer():
    seeded(0)
    model = nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                           dim_feedforward=128, dropout=0.0, batch_first=True).eval()
    g = torch.Generator().manual_seed(1)
    src = torch.randn(2, 12, 64, generator=g)
    tgt = torch.randn(2, 7, 64, generator=g)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(7)
    src_pad = torch.zeros(2, 12, dtype=torch.bool)
    src_pad[1, 9:] = True

    class T(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, src, tgt, tgt_mask, src_pad):
            # tgt_is_causal given: otherwise nn.Transformer inspects the mask's values to
            # detect causality, which torch.export cannot trace.
            return self.m(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
                          memory_key_padding_mask=src_pad, tgt_is_causal=False)
    return T(model).eval(), (src, tgt, tgt_mask, src_pad)


def nn_transformer_encoder_gelu_norm_first():
    seeded(0)
    layer = nn.TransformerEncoderLayer(d_model=96, nhead=6, dim_feedforward=192, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(1)
    return model, (torch.randn(2, 10, 96, generator=g),)


MODELS: list[ZooModel] = [
    ZooModel("lstm_bi2", NN, _rnn("LSTM"), fast=True,
             note="2 layers, bidirectional, batch_first, h64, T=20"),
    ZooModel("gru_bi2", NN, _rnn("GRU"), fast=True,
             note="2 layers, bidirectional, batch_first, h64, T=20"),
    ZooModel("lstm_bi3_state", NN, _rnn_state("LSTM"), batch_axes=(0, 1, 1),
             note="3 layers, bidirectional, given (h0, c0), returns states"),
    ZooModel("gru_bi3_state", NN, _rnn_state("GRU"), batch_axes=(0, 1),
             note="3 layers, bidirectional, given h0, returns state"),
    ZooModel("token_bilstm", NN, token_lstm, note="embedding + 2-layer BiLSTM + masked pool"),
    ZooModel("nn_transformer", NN, nn_transformer, batch_axes=(0, 0, None, 0),
             note="d64 2+2 layers, causal tgt mask, key padding masks"),
    ZooModel("nn_transformer_encoder", NN, nn_transformer_encoder_gelu_norm_first,
             note="d96 2 layers, gelu, norm_first"),
]


# -- deployment variants: half precision, KV-cache decoding ----------------------------------

def _half(base: str, dtype: str):
    """A registry model cast to float16 / bfloat16 (weights and float inputs)."""
    def build():
        import models
        model, inputs = models.BY_NAME[base].build()
        dt = getattr(torch, dtype)
        model = model.to(dt)
        return model, tuple(x.to(dt) if x.is_floating_point() else x for x in inputs)
    return build


def llama_static_cache(decode: bool):
    """transformers' export recipe for decoder-only LMs (TorchExportableModuleWithStaticCache,
    what ExecuTorch uses): the KV cache is a set of buffers updated in place.  The cache is
    pre-filled with random keys/values for 6 earlier positions; `decode` runs one new token at
    position 6, otherwise a 6-token prefill from position 0."""
    def build():
        from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
        seeded(0)
        cfg = LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=256,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          max_position_embeddings=128, use_cache=True)
        lm = LlamaForCausalLM(cfg).eval()
        lm.generation_config = GenerationConfig(use_cache=True, cache_implementation="static",
                                                cache_config={"batch_size": 1,
                                                              "max_cache_len": 32})
        model = TorchExportableModuleWithStaticCache(lm, batch_size=1, max_cache_len=32).eval()
        g = torch.Generator().manual_seed(1)
        if decode:
            for name, buf in model.named_buffers():
                if name.startswith(("key_cache", "value_cache")):
                    buf[:, :, :6].copy_(torch.randn(buf[:, :, :6].shape, generator=g))
            ids = torch.randint(3, 1000, (1, 1), generator=g)
            pos = torch.tensor([6], dtype=torch.int64)
        else:
            ids = torch.randint(3, 1000, (1, 6), generator=g)
            pos = torch.arange(6, dtype=torch.int64)

        class Step(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, cache_position):
                return self.m(input_ids=input_ids, cache_position=cache_position)
        return Step(model).eval(), (ids, pos)
    return build


VARIANTS: list[ZooModel] = [
    ZooModel("llama_bf16", "transformers", _half("llama", "bfloat16"),
             note="the llama entry in bfloat16"),
    ZooModel("llama_f16", "transformers", _half("llama", "float16"),
             note="the llama entry in float16"),
    ZooModel("resnet18_f16", "torchvision", _half("resnet18", "float16"),
             note="the resnet18 entry in float16"),
    ZooModel("bert_bf16", "transformers", _half("bert", "bfloat16"),
             note="the bert entry in bfloat16"),
    ZooModel("llama_static_cache_prefill", "transformers", llama_static_cache(False),
             batch_axes=(0, None),
             note="transformers' ExecuTorch recipe: static KV cache buffers, 6-token prefill"),
    ZooModel("llama_static_cache_decode", "transformers", llama_static_cache(True),
             batch_axes=(0, None),
             note="static KV cache pre-filled for 6 positions, one decode step", fast=True),
]
