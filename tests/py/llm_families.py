"""Tiny configs of the causal-LM families rlx.export_llm supports, with random
weights (nothing is downloaded). Special ids are kept inside the tiny vocab."""
import torch


def _small(**kw):
    base = dict(vocab_size=320, hidden_size=64, intermediate_size=112, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                bos_token_id=1, eos_token_id=2, pad_token_id=0)
    base.update(kw)
    return base


def _families():
    import transformers as T
    return {
        "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(**_small())),
        "mistral": lambda: T.MistralForCausalLM(T.MistralConfig(**_small(sliding_window=None))),
        "qwen2": lambda: T.Qwen2ForCausalLM(T.Qwen2Config(**_small())),
        "qwen3": lambda: T.Qwen3ForCausalLM(T.Qwen3Config(**_small(head_dim=16))),
        "gemma": lambda: T.GemmaForCausalLM(T.GemmaConfig(**_small(head_dim=16))),
        "gemma2": lambda: T.Gemma2ForCausalLM(T.Gemma2Config(**_small(head_dim=16, sliding_window=8))),
        "phi3": lambda: T.Phi3ForCausalLM(T.Phi3Config(**_small())),
        "gpt2": lambda: T.GPT2LMHeadModel(T.GPT2Config(vocab_size=320, n_embd=64, n_layer=2, n_head=4,
                                                       n_positions=256, bos_token_id=1, eos_token_id=2)),
        "mixtral": lambda: T.MixtralForCausalLM(T.MixtralConfig(**_small(num_local_experts=4,
                                                                         num_experts_per_tok=2))),
        # beyond the list: other configs and families whose attention goes through Cache
        "llama_rope3_tied": lambda: T.LlamaForCausalLM(T.LlamaConfig(**_small(
            tie_word_embeddings=True, rope_scaling={
                "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64}))),
        "qwen3_moe": lambda: T.Qwen3MoeForCausalLM(T.Qwen3MoeConfig(**_small(
            head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32))),
        "gemma3": lambda: T.Gemma3ForCausalLM(T.Gemma3TextConfig(**_small(head_dim=16, sliding_window=8))),
        "gpt_neox": lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(
            vocab_size=320, hidden_size=64, intermediate_size=112, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=256, bos_token_id=1, eos_token_id=2)),
        "falcon": lambda: T.FalconForCausalLM(T.FalconConfig(
            vocab_size=320, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, bos_token_id=1,
            eos_token_id=2)),
        "opt": lambda: T.OPTForCausalLM(T.OPTConfig(
            vocab_size=320, hidden_size=64, ffn_dim=112, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=256, bos_token_id=1, eos_token_id=2, pad_token_id=0, word_embed_proj_dim=64)),
    }


NAMES = ["llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "gpt2", "mixtral",
         "llama_rope3_tied", "qwen3_moe", "gemma3", "gpt_neox", "falcon", "opt"]


def build(name: str, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return _families()[name]().eval()
