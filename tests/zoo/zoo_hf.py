"""Zoo entries from Hugging Face transformers (random weights, small configurations).

Every model is built from its config class (no hub access) and wrapped so that forward takes
tensors positionally and returns tensors (`last_hidden_state`, `logits`, ...).  Token ids are
int64; attention masks are passed where the model takes them, with padding: the second
sequence of each batch has its last positions masked (right padding, so no causal row is
fully masked).  Configurations are small (hidden 64-128, 2 layers, sequence 16) so reference
kernels stay fast; the structure of every layer is the real one.  `MODELS` holds the
architectures the zoo was specified with, `MORE` further families (decoders with other
attention / position schemes, MoE, state-space, relative-position encoders, seq2seq, vision
and audio transformers).
"""

from __future__ import annotations

import torch

from zoo_common import ZooModel, seeded

HF = "transformers"
VOCAB = 1000
BATCH, SEQ, PAD = 2, 16, 5   # the second sequence ends with PAD padding positions


class Wrap(torch.nn.Module):
    """forward(*tensors) -> model(**dict(zip(names, tensors))).<attr> (a tuple for several)."""

    def __init__(self, model, names, attrs=("last_hidden_state",)):
        super().__init__()
        self.model, self.names, self.attrs = model, tuple(names), tuple(attrs)

    def forward(self, *args):
        out = self.model(**dict(zip(self.names, args)))
        got = tuple(getattr(out, a) for a in self.attrs)
        return got[0] if len(got) == 1 else got


def tokens(vocab=VOCAB, batch=BATCH, seq=SEQ, pad_id=0, low=3, seed=1):
    """(input_ids int64, attention_mask int64) with right padding in the second row."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(low, vocab, (batch, seq), generator=g, dtype=torch.int64)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    if batch > 1:
        mask[1, seq - PAD:] = 0
        ids[1, seq - PAD:] = pad_id
    return ids, mask


def pixels(size, channels=3, batch=1, seed=2):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, channels, size, size, generator=g)


def _attn(config, impl):
    if impl:
        config._attn_implementation = impl
    return config


# -- encoders -------------------------------------------------------------------------------

def bert():
    from transformers import BertConfig, BertModel
    seeded(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=256, max_position_embeddings=64)
    ids, mask = tokens()
    tt = torch.zeros_like(ids)
    tt[:, SEQ // 2:] = 1
    model = Wrap(BertModel(cfg), ["input_ids", "attention_mask", "token_type_ids"],
                 ["last_hidden_state", "pooler_output"])
    return model, (ids, mask, tt)


def distilbert():
    from transformers import DistilBertConfig, DistilBertModel
    seeded(0)
    cfg = DistilBertConfig(vocab_size=VOCAB, dim=128, n_layers=2, n_heads=4, hidden_dim=256,
                           max_position_embeddings=64)
    ids, mask = tokens()
    return Wrap(DistilBertModel(cfg), ["input_ids", "attention_mask"]), (ids, mask)


def roberta():
    from transformers import RobertaConfig, RobertaForMaskedLM
    seeded(0)
    cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=256,
                        max_position_embeddings=64, pad_token_id=1)
    ids, mask = tokens(pad_id=1)
    return Wrap(RobertaForMaskedLM(cfg), ["input_ids", "attention_mask"], ["logits"]), (ids, mask)


def albert():
    from transformers import AlbertConfig, AlbertModel
    seeded(0)
    cfg = AlbertConfig(vocab_size=VOCAB, embedding_size=64, hidden_size=128,
                       num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
                       max_position_embeddings=64)
    ids, mask = tokens()
    return Wrap(AlbertModel(cfg), ["input_ids", "attention_mask"]), (ids, mask)


def electra():
    from transformers import ElectraConfig, ElectraForSequenceClassification
    seeded(0)
    cfg = ElectraConfig(vocab_size=VOCAB, embedding_size=64, hidden_size=128,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
                        max_position_embeddings=64, num_labels=3)
    ids, mask = tokens()
    return Wrap(ElectraForSequenceClassification(cfg), ["input_ids", "attention_mask"],
                ["logits"]), (ids, mask)


# -- decoder-only language models ------------------------------------------------------------

def _causal_lm(cls_name, cfg_name, **kw):
    def build():
        import transformers
        seeded(0)
        cfg = getattr(transformers, cfg_name)(vocab_size=VOCAB, use_cache=False, **kw)
        model = getattr(transformers, cls_name)(cfg)
        ids, mask = tokens()
        return Wrap(model, ["input_ids", "attention_mask"], ["logits"]), (ids, mask)
    return build


LLAMA_KW = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)


# -- encoder-decoders ------------------------------------------------------------------------

def t5():
    from transformers import T5Config, T5ForConditionalGeneration
    seeded(0)
    cfg = T5Config(vocab_size=VOCAB, d_model=128, d_kv=32, d_ff=256, num_layers=2,
                   num_decoder_layers=2, num_heads=4, decoder_start_token_id=0, use_cache=False)
    ids, mask = tokens()
    dec, _ = tokens(seq=8, seed=3)
    dec[:, 0] = 0
    model = Wrap(T5ForConditionalGeneration(cfg),
                 ["input_ids", "attention_mask", "decoder_input_ids"], ["logits"])
    return model, (ids, mask, dec)


def bart():
    from transformers import BartConfig, BartForConditionalGeneration
    seeded(0)
    cfg = BartConfig(vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=4, decoder_attention_heads=4,
                     encoder_ffn_dim=256, decoder_ffn_dim=256, max_position_embeddings=64,
                     use_cache=False)
    ids, mask = tokens(pad_id=1)
    dec, _ = tokens(seq=8, seed=3)
    dec[:, 0] = 2
    model = Wrap(BartForConditionalGeneration(cfg),
                 ["input_ids", "attention_mask", "decoder_input_ids"], ["logits"])
    return model, (ids, mask, dec)


# -- vision and audio ------------------------------------------------------------------------

def vit():
    from transformers import ViTConfig, ViTModel
    seeded(0)
    cfg = ViTConfig(image_size=64, patch_size=8, hidden_size=128, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=256)
    return Wrap(ViTModel(cfg), ["pixel_values"], ["last_hidden_state", "pooler_output"]), \
        (pixels(64, batch=2),)


def dinov2():
    from transformers import Dinov2Config, Dinov2Model
    seeded(0)
    # Config for 64 px, run at 48 px: the position embeddings are resized (bicubic), as
    # DINOv2 does whenever the input differs from its pre-training size.
    cfg = Dinov2Config(image_size=64, patch_size=8, hidden_size=128, num_hidden_layers=2,
                       num_attention_heads=4, mlp_ratio=2)
    return Wrap(Dinov2Model(cfg), ["pixel_values"], ["last_hidden_state", "pooler_output"]), \
        (pixels(48),)


def clip_text():
    from transformers import CLIPTextConfig, CLIPTextModel
    seeded(0)
    eos = VOCAB - 1
    cfg = CLIPTextConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=32,
                         eos_token_id=eos, pad_token_id=1, bos_token_id=0)
    ids, mask = tokens(vocab=VOCAB - 1, pad_id=1)
    ids[0, -1] = eos
    ids[1, SEQ - PAD - 1] = eos
    return Wrap(CLIPTextModel(cfg), ["input_ids", "attention_mask"],
                ["last_hidden_state", "pooler_output"]), (ids, mask)


def clip_vision():
    from transformers import CLIPVisionConfig, CLIPVisionModel
    seeded(0)
    cfg = CLIPVisionConfig(image_size=64, patch_size=8, hidden_size=128, intermediate_size=256,
                           num_hidden_layers=2, num_attention_heads=4)
    return Wrap(CLIPVisionModel(cfg), ["pixel_values"], ["last_hidden_state", "pooler_output"]), \
        (pixels(64),)


def whisper_encoder():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    seeded(0)
    cfg = WhisperConfig(d_model=128, encoder_layers=2, encoder_attention_heads=4,
                        encoder_ffn_dim=256, num_mel_bins=80, max_source_positions=50)
    g = torch.Generator().manual_seed(4)
    feats = torch.randn(1, 80, 100, generator=g)   # 2 * max_source_positions frames
    return Wrap(WhisperEncoder(cfg), ["input_features"]), (feats,)


def wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    seeded(0)
    cfg = Wav2Vec2Config(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=256, conv_dim=(64, 64, 64), conv_stride=(5, 2, 2),
                         conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4)
    g = torch.Generator().manual_seed(5)
    audio = torch.randn(1, 4000, generator=g)
    return Wrap(Wav2Vec2Model(cfg), ["input_values"]), (audio,)


def segformer():
    from transformers import SegformerConfig, SegformerForSemanticSegmentation
    seeded(0)
    cfg = SegformerConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1],
                          hidden_sizes=[16, 32, 64, 128], num_attention_heads=[1, 2, 4, 4],
                          decoder_hidden_size=64, num_labels=5)
    return Wrap(SegformerForSemanticSegmentation(cfg), ["pixel_values"], ["logits"]), \
        (pixels(64),)


MODELS: list[ZooModel] = [
    ZooModel("bert", HF, bert, fast=True, note="h128 L2, padded mask, token types"),
    ZooModel("distilbert", HF, distilbert, note="h128 L2"),
    ZooModel("roberta_mlm", HF, roberta, note="h128 L2, masked-LM head"),
    ZooModel("albert", HF, albert, note="e64 h128 L2 (shared layer)"),
    ZooModel("electra_cls", HF, electra, note="e64 h128 L2, sequence classification"),
    ZooModel("gpt2", HF, _causal_lm("GPT2LMHeadModel", "GPT2Config", n_positions=64, n_embd=128,
                                    n_layer=2, n_head=4), fast=True, note="h128 L2"),
    ZooModel("opt", HF, _causal_lm("OPTForCausalLM", "OPTConfig", hidden_size=128,
                                   num_hidden_layers=2, num_attention_heads=4, ffn_dim=256,
                                   max_position_embeddings=64, word_embed_proj_dim=128),
             note="h128 L2"),
    ZooModel("llama", HF, _causal_lm("LlamaForCausalLM", "LlamaConfig", **LLAMA_KW), fast=True,
             note="h128 L2, GQA 4/2"),
    ZooModel("mistral", HF, _causal_lm("MistralForCausalLM", "MistralConfig", sliding_window=8,
                                       **LLAMA_KW), note="h128 L2, GQA, sliding window 8"),
    ZooModel("qwen2", HF, _causal_lm("Qwen2ForCausalLM", "Qwen2Config", **LLAMA_KW),
             note="h128 L2, GQA, qkv bias"),
    ZooModel("qwen3", HF, _causal_lm("Qwen3ForCausalLM", "Qwen3Config", head_dim=32, **LLAMA_KW),
             note="h128 L2, GQA, q/k norm"),
    ZooModel("gemma", HF, _causal_lm("GemmaForCausalLM", "GemmaConfig", head_dim=32,
                                     **{**LLAMA_KW, "num_key_value_heads": 1}),
             note="h128 L2, MQA"),
    ZooModel("phi", HF, _causal_lm("PhiForCausalLM", "PhiConfig", hidden_size=128,
                                   intermediate_size=256, num_hidden_layers=2,
                                   num_attention_heads=4, max_position_embeddings=64,
                                   partial_rotary_factor=0.5),
             note="h128 L2, partial rotary"),
    ZooModel("gpt_neox", HF, _causal_lm("GPTNeoXForCausalLM", "GPTNeoXConfig", hidden_size=128,
                                        intermediate_size=256, num_hidden_layers=2,
                                        num_attention_heads=4, max_position_embeddings=64,
                                        rotary_pct=0.25), note="h128 L2, parallel residual"),
    ZooModel("mixtral_moe", HF, _causal_lm("MixtralForCausalLM", "MixtralConfig",
                                           num_local_experts=4, num_experts_per_tok=2,
                                           experts_implementation="batched_mm", **LLAMA_KW),
             fast=True, note="h128 L2, 4 experts top-2, experts_implementation=batched_mm"),
    ZooModel("mixtral_moe_grouped", HF, _causal_lm("MixtralForCausalLM", "MixtralConfig",
                                                   num_local_experts=4, num_experts_per_tok=2,
                                                   **LLAMA_KW),
             note="h128 L2, 4 experts top-2, transformers' default experts (grouped_mm)"),
    ZooModel("t5", HF, t5, fast=True, note="d128 L2+2, decoder_input_ids"),
    ZooModel("bart", HF, bart, note="d128 L2+2, decoder_input_ids"),
    ZooModel("hf_vit", HF, vit, fast=True, note="64 px, patch 8, h128 L2, batch 2"),
    ZooModel("dinov2", HF, dinov2, note="48 px on a 64 px config (pos-embed resize), h128 L2"),
    ZooModel("clip_text", HF, clip_text, note="h128 L2, eos pooling"),
    ZooModel("clip_vision", HF, clip_vision, note="64 px, patch 8, h128 L2"),
    ZooModel("whisper_encoder", HF, whisper_encoder, note="d128 L2, 80 mels x 100 frames"),
    ZooModel("wav2vec2", HF, wav2vec2, note="h128 L2, 3 conv layers, 4000 samples"),
    ZooModel("segformer", HF, segformer, note="MiT 16-128, depths 1, 64 px"),
]


# -- more architectures ----------------------------------------------------------------------

def _seq2seq(cls_name, cfg_name, dec_start=2, pad_id=1, **kw):
    def build():
        import transformers
        seeded(0)
        cfg = getattr(transformers, cfg_name)(vocab_size=VOCAB, use_cache=False, **kw)
        model = getattr(transformers, cls_name)(cfg)
        ids, mask = tokens(pad_id=pad_id)
        dec, _ = tokens(seq=8, seed=3)
        dec[:, 0] = dec_start
        return Wrap(model, ["input_ids", "attention_mask", "decoder_input_ids"], ["logits"]), \
            (ids, mask, dec)
    return build


def _encoder(cls_name, cfg_name, attrs=("last_hidden_state",), pad_id=0, **kw):
    def build():
        import transformers
        seeded(0)
        cfg = getattr(transformers, cfg_name)(vocab_size=VOCAB, **kw)
        model = getattr(transformers, cls_name)(cfg)
        ids, mask = tokens(pad_id=pad_id)
        return Wrap(model, ["input_ids", "attention_mask"], attrs), (ids, mask)
    return build


def _vision(cls_name, cfg_name, size=64, attrs=("last_hidden_state",), batch=1,
            reset_convs=False, **kw):
    def build():
        import transformers
        seeded(0)
        cfg = getattr(transformers, cfg_name)(**kw)
        model = getattr(transformers, cls_name)(cfg)
        if reset_convs:  # torch's default conv init instead of N(0, 0.02), see its entry
            for m in model.modules():
                if isinstance(m, torch.nn.modules.conv._ConvNd):
                    m.reset_parameters()
        return Wrap(model, ["pixel_values"], attrs), (pixels(size, batch=batch),)
    return build


def _audio(cls_name, cfg_name, samples=4000, **kw):
    def build():
        import transformers
        seeded(0)
        cfg = getattr(transformers, cfg_name)(**kw)
        model = getattr(transformers, cls_name)(cfg)
        g = torch.Generator().manual_seed(5)
        return Wrap(model, ["input_values"]), (torch.randn(1, samples, generator=g),)
    return build


def whisper_full():
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    seeded(0)
    cfg = WhisperConfig(vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4,
                        encoder_ffn_dim=256, decoder_ffn_dim=256, num_mel_bins=80,
                        max_source_positions=50, max_target_positions=32, use_cache=False,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    g = torch.Generator().manual_seed(4)
    feats = torch.randn(1, 80, 100, generator=g)
    dec, _ = tokens(batch=1, seq=8, seed=3)
    dec[:, 0] = 1
    return Wrap(WhisperForConditionalGeneration(cfg),
                ["input_features", "decoder_input_ids"], ["logits"]), (feats, dec)


def siglip_text():
    from transformers import SiglipTextConfig, SiglipTextModel
    seeded(0)
    cfg = SiglipTextConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                           num_hidden_layers=2, num_attention_heads=4,
                           max_position_embeddings=SEQ)
    ids, _ = tokens(batch=2)
    return Wrap(SiglipTextModel(cfg), ["input_ids"], ["last_hidden_state", "pooler_output"]), \
        (ids,)


MOE_KW = dict(experts_implementation="batched_mm")

MORE: list[ZooModel] = [
    # decoders
    ZooModel("phi3", HF, _causal_lm("Phi3ForCausalLM", "Phi3Config", pad_token_id=0,
                                    **LLAMA_KW), note="h128 L2, fused qkv / gate-up"),
    ZooModel("gemma2", HF, _causal_lm("Gemma2ForCausalLM", "Gemma2Config", head_dim=32,
                                      sliding_window=8, **LLAMA_KW),
             note="h128 L2, logit soft-capping, sliding window 8"),
    ZooModel("gemma3_text", HF, _causal_lm("Gemma3ForCausalLM", "Gemma3TextConfig", head_dim=32,
                                           sliding_window=8, **LLAMA_KW),
             note="h128 L2, q/k norm, local+global rope"),
    ZooModel("starcoder2", HF, _causal_lm("Starcoder2ForCausalLM", "Starcoder2Config",
                                          **LLAMA_KW), note="h128 L2, GQA, LayerNorm, bias"),
    ZooModel("olmo2", HF, _causal_lm("Olmo2ForCausalLM", "Olmo2Config", pad_token_id=0,
                                     **LLAMA_KW), note="h128 L2, post-norm, q/k norm"),
    ZooModel("stablelm", HF, _causal_lm("StableLmForCausalLM", "StableLmConfig",
                                        partial_rotary_factor=0.25, **LLAMA_KW),
             note="h128 L2, partial rotary 0.25"),
    ZooModel("granite", HF, _causal_lm("GraniteForCausalLM", "GraniteConfig", **LLAMA_KW),
             note="h128 L2, embedding/residual/logit multipliers"),
    ZooModel("cohere", HF, _causal_lm("CohereForCausalLM", "CohereConfig", **LLAMA_KW),
             note="h128 L2, parallel block, interleaved rope"),
    ZooModel("glm", HF, _causal_lm("GlmForCausalLM", "GlmConfig", pad_token_id=0, head_dim=32,
                                   **LLAMA_KW), note="h128 L2, partial interleaved rope"),
    ZooModel("bloom", HF, _causal_lm("BloomForCausalLM", "BloomConfig", hidden_size=128,
                                     n_layer=2, n_head=4), note="h128 L2, ALiBi"),
    ZooModel("falcon", HF, _causal_lm("FalconForCausalLM", "FalconConfig", hidden_size=128,
                                      num_hidden_layers=2, num_attention_heads=4),
             note="h128 L2, multi-query, parallel attention"),
    ZooModel("gptj", HF, _causal_lm("GPTJForCausalLM", "GPTJConfig", n_embd=128, n_layer=2,
                                    n_head=4, rotary_dim=16, n_positions=64),
             note="h128 L2, interleaved rotary"),
    ZooModel("qwen2_moe", HF, _causal_lm("Qwen2MoeForCausalLM", "Qwen2MoeConfig", num_experts=4,
                                         num_experts_per_tok=2, moe_intermediate_size=64,
                                         shared_expert_intermediate_size=128, **MOE_KW,
                                         **LLAMA_KW), note="h128 L2, 4 experts + shared"),
    ZooModel("deepseek_v3", HF, _causal_lm(
        "DeepseekV3ForCausalLM", "DeepseekV3Config", hidden_size=128, intermediate_size=256,
        moe_intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2, n_group=1,
        topk_group=1, first_k_dense_replace=1, q_lora_rank=32, kv_lora_rank=32,
        qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=32, max_position_embeddings=128,
        **MOE_KW), note="h128 L2, MLA + routed/shared experts"),
    ZooModel("mamba", HF, _causal_lm("MambaForCausalLM", "MambaConfig", hidden_size=64,
                                     state_size=8, num_hidden_layers=2, expand=2),
             note="h64 L2, selective scan (slow path)"),
    # encoders
    ZooModel("deberta_v2", HF, _encoder("DebertaV2Model", "DebertaV2Config", hidden_size=128,
                                        num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=256, max_position_embeddings=64,
                                        relative_attention=True, position_buckets=32,
                                        pos_att_type=["p2c", "c2p"]),
             note="h128 L2, disentangled relative attention"),
    ZooModel("mpnet", HF, _encoder("MPNetModel", "MPNetConfig", pad_id=1, hidden_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=256, max_position_embeddings=64),
             note="h128 L2, relative position buckets"),
    ZooModel("modernbert", HF, _encoder("ModernBertModel", "ModernBertConfig", pad_token_id=0,
                                        hidden_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, intermediate_size=256,
                                        max_position_embeddings=64, local_attention=8),
             note="h128 L2, rope, local/global attention"),
    ZooModel("mobilebert", HF, _encoder("MobileBertModel", "MobileBertConfig", hidden_size=128,
                                        num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=128, embedding_size=64,
                                        intra_bottleneck_size=64, true_hidden_size=64,
                                        max_position_embeddings=64),
             note="h128 L2, bottlenecks, NoNorm"),
    ZooModel("squeezebert", HF, _encoder("SqueezeBertModel", "SqueezeBertConfig",
                                         hidden_size=128, embedding_size=128,
                                         num_hidden_layers=2, num_attention_heads=4,
                                         intermediate_size=256, max_position_embeddings=64),
             note="h128 L2, grouped conv1d"),
    ZooModel("esm", HF, _encoder("EsmModel", "EsmConfig", pad_id=1, pad_token_id=1,
                                 mask_token_id=2, hidden_size=128, num_hidden_layers=2,
                                 num_attention_heads=4, intermediate_size=256,
                                 max_position_embeddings=64, position_embedding_type="rotary"),
             note="h128 L2, rotary, token-dropout scaling"),
    ZooModel("xlnet", HF, _encoder("XLNetModel", "XLNetConfig", d_model=128, n_layer=2,
                                   n_head=4, d_inner=256), note="d128 L2, two-stream relative"),
    # encoder-decoders
    ZooModel("flan_t5", HF, _seq2seq("T5ForConditionalGeneration", "T5Config", dec_start=0,
                                     pad_id=0, d_model=128, d_kv=32, d_ff=256, num_layers=2,
                                     num_heads=4, feed_forward_proj="gated-gelu",
                                     decoder_start_token_id=0, tie_word_embeddings=False),
             note="d128 L2+2, gated-gelu, untied head"),
    ZooModel("mbart", HF, _seq2seq("MBartForConditionalGeneration", "MBartConfig", d_model=128,
                                   encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                   decoder_attention_heads=4, encoder_ffn_dim=256,
                                   decoder_ffn_dim=256, max_position_embeddings=64),
             note="d128 L2+2, pre-norm"),
    ZooModel("pegasus", HF, _seq2seq("PegasusForConditionalGeneration", "PegasusConfig",
                                     dec_start=0, pad_id=0, d_model=128, encoder_layers=2,
                                     decoder_layers=2, encoder_attention_heads=4,
                                     decoder_attention_heads=4, encoder_ffn_dim=256,
                                     decoder_ffn_dim=256, max_position_embeddings=64),
             note="d128 L2+2, sinusoidal positions"),
    ZooModel("marian", HF, _seq2seq("MarianMTModel", "MarianConfig", dec_start=0, pad_id=0,
                                    pad_token_id=0, decoder_start_token_id=0,
                                    decoder_vocab_size=VOCAB, d_model=128,
                                    encoder_layers=2, decoder_layers=2,
                                    encoder_attention_heads=4, decoder_attention_heads=4,
                                    encoder_ffn_dim=256, decoder_ffn_dim=256,
                                    max_position_embeddings=64), note="d128 L2+2"),
    ZooModel("whisper", HF, whisper_full, note="d128 L2+2, encoder-decoder"),
    # vision
    ZooModel("beit", HF, _vision("BeitModel", "BeitConfig", 64, image_size=64, patch_size=8,
                                 hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=256, use_relative_position_bias=True),
             note="64 px, relative position bias"),
    ZooModel("hf_swin", HF, _vision("SwinModel", "SwinConfig", 64, image_size=64, patch_size=4,
                                    embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=4),
             note="64 px, 2 stages, shifted windows"),
    ZooModel("swinv2", HF, _vision("Swinv2Model", "Swinv2Config", 64, image_size=64,
                                   patch_size=4, embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                                   window_size=4), note="64 px, cosine attention, log-CPB"),
    ZooModel("convnextv2", HF, _vision("ConvNextV2Model", "ConvNextV2Config", 64,
                                       hidden_sizes=[32, 64, 128, 256], depths=[1, 1, 2, 1]),
             note="64 px, GRN"),
    ZooModel("deit_distilled", HF, _vision("DeiTForImageClassificationWithTeacher", "DeiTConfig",
                                           64, ("logits",), image_size=64, patch_size=8,
                                           hidden_size=128, num_hidden_layers=2,
                                           num_attention_heads=4, intermediate_size=256),
             note="64 px, distillation token"),
    ZooModel("hf_mobilevit", HF, _vision("MobileViTModel", "MobileViTConfig", 64, image_size=64,
                                         hidden_sizes=[48, 64, 80],
                                         neck_hidden_sizes=[16, 24, 32, 48, 64, 80, 160]),
             note="64 px, unfold/fold patches"),
    ZooModel("levit", HF, _vision("LevitModel", "LevitConfig", 64, image_size=64,
                                  hidden_sizes=[64, 128, 192], num_attention_heads=[2, 4, 6],
                                  depths=[1, 1, 1], key_dim=[16, 16, 16]),
             note="64 px, attention biases, shrinking attention"),
    ZooModel("siglip_vision", HF, _vision("SiglipVisionModel", "SiglipVisionConfig", 64,
                                          ("last_hidden_state", "pooler_output"), image_size=64,
                                          patch_size=8, hidden_size=128, intermediate_size=256,
                                          num_hidden_layers=2, num_attention_heads=4),
             note="64 px, attention-pooling head"),
    ZooModel("siglip_text", HF, siglip_text, note="h128 L2"),
    # N(0, 0.02) conv weights shrink the depth head's output to ~1e-6 (a degenerate check):
    # the convolutions get torch's default initialization instead.
    ZooModel("dpt", HF, _vision("DPTForDepthEstimation", "DPTConfig", 64, ("predicted_depth",),
                                reset_convs=True, image_size=64, patch_size=8, hidden_size=128,
                                num_hidden_layers=4, num_attention_heads=4,
                                intermediate_size=256, backbone_out_indices=[0, 1, 2, 3],
                                neck_hidden_sizes=[32, 64, 128, 128], fusion_hidden_size=64),
             note="64 px, ViT + reassemble/fusion neck, depth head"),
    ZooModel("yolos", HF, _vision("YolosForObjectDetection", "YolosConfig", 64,
                                  ("logits", "pred_boxes"), image_size=[64, 64], patch_size=8,
                                  hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=256, num_detection_tokens=10),
             note="64 px, detection tokens, box head"),
    ZooModel("poolformer", HF, _vision("PoolFormerModel", "PoolFormerConfig", 64,
                                       hidden_sizes=[32, 64, 128, 256], depths=[1, 1, 1, 1]),
             note="64 px, pooling mixer"),
    ZooModel("cvt", HF, _vision("CvtModel", "CvtConfig", 64, embed_dim=[32, 64, 128],
                                depth=[1, 2, 3], num_heads=[1, 2, 4]),
             note="64 px, convolutional projections"),
    ZooModel("pvt_v2", HF, _vision("PvtV2Model", "PvtV2Config", 64,
                                   hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                                   num_attention_heads=[1, 2, 4, 8]),
             note="64 px, spatial-reduction attention"),
    # audio
    ZooModel("hubert", HF, _audio("HubertModel", "HubertConfig", hidden_size=128,
                                  num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=256, conv_dim=(64, 64, 64),
                                  conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                                  num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
             note="h128 L2, 4000 samples"),
    ZooModel("wavlm", HF, _audio("WavLMModel", "WavLMConfig", hidden_size=128,
                                 num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=256, conv_dim=(64, 64, 64),
                                 conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                                 num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                 num_buckets=32, max_bucket_distance=64),
             note="h128 L2, gated relative position bias"),
    ZooModel("wav2vec2_conformer", HF, _audio(
        "Wav2Vec2ConformerModel", "Wav2Vec2ConformerConfig", hidden_size=128,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
        conv_dim=(64, 64, 64), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        position_embeddings_type="rotary", conv_depthwise_kernel_size=7),
             note="h128 L2, conformer blocks, rotary"),
]
