"""A tiny Llama for text generation with a byte-level BPE tokenizer trained
here (nothing downloaded): the source of examples/models/tiny_llm.

    PYTHONPATH=python python3 -m rlx.export_llm tests/models/tiny_llm.py -o examples/models/tiny_llm --max-seq 128
"""
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "rlx runs PyTorch models from C, and proves that it computes what PyTorch computes.",
    "def main():\n    return 42\n",
    "Numbers: 3.14159, 2718, 1e-5; dates 2026-12-01.",
    "Les élèves étudient à l'école. Привет, мир! 你好，世界。",
] * 20


def _tokenizer():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(_CORPUS, trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|pad|>", "<|bos|>", "<|eos|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|eos|>",
                                   pad_token="<|pad|>")


tokenizer = _tokenizer()
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(
    vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
    pad_token_id=0, bos_token_id=1, eos_token_id=2)).eval()
