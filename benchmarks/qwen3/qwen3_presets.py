"""qwen3_presets.py: the Qwen3 shapes the engine builds with --synthetic SHAPE.

A mirror of the table in apps/qwen3/model_presets.cpp (keep the two equal): hidden size,
intermediate size, layers, query heads, KV heads and whether the LM head is tied to the
embedding; every preset has head_dim 128, vocabulary 151936, rope_theta 1e6, rms_norm_eps 1e-6
and 40960 positions. "tiny" is the engine's test shape (real vocabulary and head size).
"""
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Qwen3Shape:
    name: str
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    tied: bool
    head_dim: int = 128
    vocab: int = 151936
    rope_theta: float = 1e6
    rms_norm_eps: float = 1e-6
    max_positions: int = 40960

    @property
    def q_width(self):
        return self.heads * self.head_dim

    @property
    def kv_width(self):
        return self.kv_heads * self.head_dim

    def tensors(self):
        """(name, shape) of every weight, in the order and with the names of the Hugging Face
        checkpoint (apps/qwen3/model_weights.cpp, expected_tensors)."""
        h, q, kv, ff = self.hidden, self.q_width, self.kv_width, self.intermediate
        out = [("model.embed_tokens.weight", (self.vocab, h))]
        for i in range(self.layers):
            p = f"model.layers.{i}."
            out += [(p + "input_layernorm.weight", (h,)), (p + "self_attn.q_proj.weight", (q, h)),
                    (p + "self_attn.k_proj.weight", (kv, h)), (p + "self_attn.v_proj.weight", (kv, h)),
                    (p + "self_attn.o_proj.weight", (h, q)), (p + "self_attn.q_norm.weight", (self.head_dim,)),
                    (p + "self_attn.k_norm.weight", (self.head_dim,)),
                    (p + "post_attention_layernorm.weight", (h,)), (p + "mlp.gate_proj.weight", (ff, h)),
                    (p + "mlp.up_proj.weight", (ff, h)), (p + "mlp.down_proj.weight", (h, ff))]
        out.append(("model.norm.weight", (h,)))
        if not self.tied:
            out.append(("lm_head.weight", (self.vocab, h)))
        return out

    def weight_bytes(self):
        """bf16 bytes of the weights (a tied LM head counted once): what one decode step reads."""
        total = 0
        for _, shape in self.tensors():
            n = 1
            for d in shape:
                n *= d
            total += n
        return 2 * total


PRESETS = {p.name: p for p in (
    Qwen3Shape("tiny", 32, 96, 2, 2, 1, True),
    Qwen3Shape("0.6B", 1024, 3072, 28, 16, 8, True),
    Qwen3Shape("1.7B", 2048, 6144, 28, 16, 8, True),
    Qwen3Shape("4B", 2560, 9728, 36, 32, 8, True),
    Qwen3Shape("8B", 4096, 12288, 36, 32, 8, False),
    Qwen3Shape("14B", 5120, 17408, 40, 40, 8, False),
    Qwen3Shape("32B", 5120, 25600, 64, 64, 8, False),
)}


def preset(name, layers=None):
    """The preset `name`, with `layers` layers if given (the widths kept, as --layers does)."""
    if name not in PRESETS:
        raise ValueError(f"unknown model shape '{name}' (known: {', '.join(PRESETS)})")
    shape = PRESETS[name]
    return replace(shape, layers=layers) if layers else shape
