"""hf_qwen3.py: transformers' Qwen3ForCausalLM for a preset shape, with the engine's synthetic
weights made on the device, sharing its storage with the plain PyTorch implementation.

`build(shape, device, seed)` creates the model from a Qwen3Config (bf16, transformers' default
attention, SDPA), then fills every weight with synthetic_weights.fill_synthetic_ under its
checkpoint name. The q/k/v projections of each layer are made as row blocks of one stacked
[q + 2 kv, hidden] tensor and gate/up as blocks of one [2 intermediate, hidden] tensor, and the
model's parameters become views of those blocks: the fused matrices of torch_qwen3.Qwen3Weights
and transformers' separate ones are the same memory, so a 32B model (64 GB) fits once.
Assumes transformers 5 (Qwen3Config's rope_parameters) and no files: nothing is downloaded.
"""
import torch

from synthetic_weights import fill_synthetic_
from torch_qwen3 import LayerWeights, Qwen3Weights


def make_config(shape):
    from transformers import Qwen3Config
    return Qwen3Config(vocab_size=shape.vocab, hidden_size=shape.hidden, intermediate_size=shape.intermediate,
                       num_hidden_layers=shape.layers, num_attention_heads=shape.heads,
                       num_key_value_heads=shape.kv_heads, head_dim=shape.head_dim,
                       max_position_embeddings=shape.max_positions, rms_norm_eps=shape.rms_norm_eps,
                       tie_word_embeddings=shape.tied,
                       rope_parameters={"rope_type": "default", "rope_theta": shape.rope_theta},
                       bos_token_id=151643, eos_token_id=151645)


def build(shape, device, seed):
    """(transformers model, Qwen3Weights) on `device` with the synthetic weights of `seed`."""
    from transformers import Qwen3ForCausalLM
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            model = Qwen3ForCausalLM(make_config(shape))
    finally:
        torch.set_default_dtype(previous)
    model.eval().requires_grad_(False)

    def own(parameter, name):
        """Fills the model's own parameter in place."""
        fill_synthetic_(parameter.data, name, tuple(parameter.shape), seed)
        return parameter.data

    def stacked(parts, prefix):
        """[(module, name suffix)] -> one tensor whose row blocks become the modules' weights."""
        rows = [module.weight.shape[0] for module, _ in parts]
        whole = torch.empty(sum(rows), parts[0][0].weight.shape[1], dtype=torch.bfloat16, device=device)
        for (module, suffix), block in zip(parts, whole.split(rows)):
            fill_synthetic_(block, prefix + suffix, tuple(block.shape), seed)
            module.weight = torch.nn.Parameter(block, requires_grad=False)  # frees the model's own copy
        return whole

    layers = []
    for i, layer in enumerate(model.model.layers):
        p = f"model.layers.{i}."
        attn, mlp = layer.self_attn, layer.mlp
        layers.append(LayerWeights(
            input_norm=own(layer.input_layernorm.weight, p + "input_layernorm.weight"),
            qkv=stacked([(attn.q_proj, "self_attn.q_proj.weight"), (attn.k_proj, "self_attn.k_proj.weight"),
                         (attn.v_proj, "self_attn.v_proj.weight")], p),
            q_norm=own(attn.q_norm.weight, p + "self_attn.q_norm.weight"),
            k_norm=own(attn.k_norm.weight, p + "self_attn.k_norm.weight"),
            o=own(attn.o_proj.weight, p + "self_attn.o_proj.weight"),
            post_norm=own(layer.post_attention_layernorm.weight, p + "post_attention_layernorm.weight"),
            gate_up=stacked([(mlp.gate_proj, "mlp.gate_proj.weight"), (mlp.up_proj, "mlp.up_proj.weight")], p),
            down=own(mlp.down_proj.weight, p + "mlp.down_proj.weight")))
    embed = own(model.model.embed_tokens.weight, "model.embed_tokens.weight")
    if shape.tied:
        if model.lm_head.weight is not model.model.embed_tokens.weight:
            raise RuntimeError("transformers did not tie lm_head.weight to the embedding for a tied config")
        lm_head = embed
    else:
        lm_head = own(model.lm_head.weight, "lm_head.weight")
    norm = own(model.model.norm.weight, "model.norm.weight")
    return model, Qwen3Weights(embed=embed, layers=layers, norm=norm, lm_head=lm_head)
