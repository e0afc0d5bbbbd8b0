#!/usr/bin/env python3
"""hf_reference.py: random Qwen3 checkpoints and Hugging Face transformers' logits for them.

The engine's correctness check against transformers (issue #23, item 7; the C++ side is
apps/qwen3/hf_goldens.h, the tests of apps/qwen3/tests/test_hf_goldens.cpp and the tool
qwen3-check-hf; the tolerances are derived in apps/qwen3/README.md). For each config this script

  1. builds transformers' Qwen3ForCausalLM from a Qwen3Config and gives it random weights from a
     seeded torch.Generator (its own scheme, below, not transformers' initializer, so that norm
     weights are not all ones and the logits have a realistic spread);
  2. saves it with save_pretrained in bfloat16: a Hugging Face folder with config.json and
     model.safetensors (lm_head.weight only when the embeddings are untied);
  3. loads that folder back with dtype=torch.float32 -- the bf16 weights upcast exactly -- and
     computes everything below in float32 (TF32 and reduced-precision reductions off on CUDA), so
     that the reference is the model the checkpoint defines, not a bf16 approximation of it;
  4. writes beside the checkpoint goldens.json (the token ids, the greedy tokens, per-step top-2
     gaps, versions) and logits.safetensors (F32 tensors [positions, vocab]):
       - teacher forcing: one forward pass over a fixed random sequence of 24 token ids, the
         logits of every position ("logits"), and the same again with q and k (after RoPE) and v
         rounded to bf16 as the engine stores them, everything else float32 ("logits_bf16_qkv":
         it shows that this storage is the whole difference between the engine and transformers);
       - greedy generation: model.generate(do_sample=False) of 40 new tokens after a 5-token
         prompt. A greedy path whose two largest logits nearly tie at some step tests only the
         rounding, so prompts are tried in order (prompt seeds 0, 1, ...) until every step's gap
         is at least --min-gap (2^-7, about twice the engine's measured error) of that step's
         largest |logit| (the best one is kept, with a warning, when none is).

Weights (seeded by the config's seed): embedding and lm_head N(0, (4 / sqrt(hidden))^2) -- logits
of standard deviation about 4, as in trained models -- linear layers N(0, 1 / fan_in), which keeps
the residual stream's scale, and every RMSNorm weight (input, post-attention, q/k per head, final)
uniform in [0.5, 1.5].

All configs have head_dim 128 (every Qwen3 model; the engine's kernels are written for it).

Usage (from the repository root; CPU, or CUDA when present; needs no network):
  python3 apps/qwen3/tools/hf_reference.py --out apps/qwen3/tests/data/hf
      the small configs of SMALL_CONFIGS, one folder each (committed)
  python3 apps/qwen3/tools/hf_reference.py --full-0.6b OUTDIR
      one checkpoint with the full Qwen3-0.6B shapes (1.2 GB; not committed), then
      build/apps/qwen3/qwen3-check-hf --model OUTDIR [--target sm_90]
"""
import argparse
import json
import math
import os
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM
from transformers.models.qwen3 import modeling_qwen3 as qwen3_modeling

TEACHER_TOKENS = 24
PROMPT_TOKENS = 5
GREEDY_TOKENS = 40
PROMPT_TRIES = 64

# name -> (Qwen3Config fields, seed). GQA groups 4, 2, 1 and 3 (not a power of two), tied and
# untied, rope_theta 1e4 to 5e6, rms_norm_eps 1e-6 and 1e-5, hidden sizes 32 to 64.
SMALL_CONFIGS = {
    "tied-gqa4": (dict(hidden_size=64, intermediate_size=192, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=1, vocab_size=512, tie_word_embeddings=True, rope_theta=1e6,
                       rms_norm_eps=1e-6), 1),
    "untied-gqa2": (dict(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=1024, tie_word_embeddings=False, rope_theta=1e4,
                         rms_norm_eps=1e-5), 2),
    "untied-mha": (dict(hidden_size=32, intermediate_size=96, num_hidden_layers=2, num_attention_heads=2,
                        num_key_value_heads=2, vocab_size=2048, tie_word_embeddings=False, rope_theta=5e6,
                        rms_norm_eps=1e-6), 3),
    "tied-gqa3": (dict(hidden_size=48, intermediate_size=128, num_hidden_layers=2, num_attention_heads=6,
                       num_key_value_heads=2, vocab_size=768, tie_word_embeddings=True, rope_theta=1e6,
                       rms_norm_eps=1e-6), 4),
}

# Qwen3-0.6B's config.json shapes.
FULL_06B = (dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, vocab_size=151936, tie_word_embeddings=True, rope_theta=1e6,
                 rms_norm_eps=1e-6, max_position_embeddings=40960, bos_token_id=151643, eos_token_id=151645), 6)


def make_config(fields):
    base = dict(head_dim=128, max_position_embeddings=4096, hidden_act="silu", attention_bias=False,
                use_sliding_window=False, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    base.update(fields)
    theta = base.pop("rope_theta")
    return Qwen3Config(**base, rope_parameters={"rope_type": "default", "rope_theta": theta})


def randomize(model, config, seed):
    """Fills every parameter from one seeded generator, in state_dict order (see the file comment)."""
    gen = torch.Generator().manual_seed(seed)
    head_std = 4.0 / math.sqrt(config.hidden_size)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                values = 0.5 + torch.rand(p.shape, generator=gen)
            elif "embed_tokens" in name or name == "lm_head.weight":
                values = torch.randn(p.shape, generator=gen) * head_std
            elif p.dim() == 2:
                values = torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1])
            else:
                raise SystemExit(f"hf_reference.py: no rule for parameter {name} {tuple(p.shape)}")
            p.copy_(values.to(p.dtype))


def build_checkpoint(out_dir, fields, seed):
    config = make_config(fields)
    model = Qwen3ForCausalLM(config).to(torch.float32)
    randomize(model, config, seed)
    model = model.to(torch.bfloat16)
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = None
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)


def load_f32(out_dir, device):
    model = Qwen3ForCausalLM.from_pretrained(out_dir, dtype=torch.float32, attn_implementation="eager")
    return model.to(device).eval()


def greedy(model, prompt, device):
    """HF generate, greedy; returns (tokens, per-step gap / max|logit|, per-step gap)."""
    out = model.generate(torch.tensor([prompt], device=device), do_sample=False, max_new_tokens=GREEDY_TOKENS,
                         min_new_tokens=GREEDY_TOKENS, eos_token_id=None, pad_token_id=0, output_logits=True,
                         return_dict_in_generate=True, use_cache=True)
    tokens = out.sequences[0, len(prompt):].tolist()
    if len(tokens) != GREEDY_TOKENS:
        raise SystemExit(f"hf_reference.py: generate gave {len(tokens)} tokens, not {GREEDY_TOKENS}")
    gaps, relative = [], []
    for step, logits in enumerate(out.logits):
        top = torch.topk(logits[0].double(), 2)
        if int(top.indices[0]) != tokens[step]:
            raise SystemExit(f"hf_reference.py: greedy token {step} is not the argmax of its logits")
        gap = float(top.values[0] - top.values[1])
        gaps.append(gap)
        relative.append(gap / float(logits[0].double().abs().max()))
    return tokens, relative, gaps


class BF16QKV:
    """Within it, the model rounds q and k after RoPE, and v, to bf16 -- what the engine stores (q
    and the KV cache in bf16), everything else staying float32."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.original = getattr(qwen3_modeling, "apply_rotary_pos_emb", None)
        if self.original is None:
            raise SystemExit("hf_reference.py: transformers' modeling_qwen3 has no apply_rotary_pos_emb to wrap "
                             f"(transformers {transformers.__version__})")

        def rounded(q, k, *args, **kwargs):
            q, k = self.original(q, k, *args, **kwargs)
            return q.to(torch.bfloat16).to(q.dtype), k.to(torch.bfloat16).to(k.dtype)

        qwen3_modeling.apply_rotary_pos_emb = rounded
        self.hooks = [layer.self_attn.v_proj.register_forward_hook(
            lambda module, inputs, v: v.to(torch.bfloat16).to(v.dtype)) for layer in self.model.model.layers]
        return self

    def __exit__(self, *exc):
        qwen3_modeling.apply_rotary_pos_emb = self.original
        for hook in self.hooks:
            hook.remove()


def teacher_forced_logits(model, tokens, device):
    with torch.no_grad():
        return model(torch.tensor([tokens], device=device), use_cache=False).logits[0].float().cpu().contiguous()


def record_goldens(out_dir, name, seed, min_gap, device):
    model = load_f32(out_dir, device)
    config = model.config
    vocab = config.vocab_size
    gen = torch.Generator().manual_seed(1000 + seed)
    teacher = torch.randint(0, vocab, (TEACHER_TOKENS,), generator=gen).tolist()
    logits = teacher_forced_logits(model, teacher, device)
    with BF16QKV(model):
        logits_bf16_qkv = teacher_forced_logits(model, teacher, device)

    best = None
    for attempt in range(PROMPT_TRIES):
        pgen = torch.Generator().manual_seed(2000 + 100 * seed + attempt)
        prompt = torch.randint(0, vocab, (PROMPT_TOKENS,), generator=pgen).tolist()
        with torch.no_grad():
            tokens, relative, gaps = greedy(model, prompt, device)
        if best is None or min(relative) > min(best[3]):
            best = (attempt, prompt, tokens, relative, gaps)
        if min(relative) >= min_gap:
            break
    attempt, prompt, tokens, relative, gaps = best
    if min(relative) < min_gap:
        print(f"hf_reference.py: warning: {name}: no prompt of {PROMPT_TRIES} has every greedy gap >= {min_gap} of "
              f"the largest |logit|; kept the best ({min(relative):.4g})", file=sys.stderr)

    save_file({"logits": logits, "logits_bf16_qkv": logits_bf16_qkv}, os.path.join(out_dir, "logits.safetensors"),
              metadata={"logits": "transformers' float32 logits of the teacher-forced tokens [position, vocab]",
                        "logits_bf16_qkv": "the same with q, k (after RoPE) and v rounded to bf16"})
    goldens = {
        "name": name,
        "note": "transformers Qwen3ForCausalLM, bf16 checkpoint loaded as float32, computed in float32 "
                f"(eager attention, {device.type}, TF32 off)",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "weights_seed": seed,
        "vocab_size": vocab,
        "teacher_tokens": teacher,
        "logits_file": "logits.safetensors",
        "prompt": prompt,
        "prompt_attempt": attempt,
        "greedy_tokens": tokens,
        "greedy_gaps": [round(g, 6) for g in gaps],
        "greedy_min_relative_gap": round(min(relative), 6),
    }
    with open(os.path.join(out_dir, "goldens.json"), "w") as f:
        json.dump(goldens, f, indent=1)
        f.write("\n")
    emulated = float((logits - logits_bf16_qkv).abs().max() / logits.abs().max())
    print(f"{name}: {config.num_hidden_layers} layers, hidden {config.hidden_size}, heads "
          f"{config.num_attention_heads}/{config.num_key_value_heads}, vocab {vocab}, tied "
          f"{config.tie_word_embeddings}; max |logit| {float(logits.abs().max()):.3f}, bf16 q/k/v moves them by "
          f"{emulated:.2e} of it; greedy prompt try {attempt}, smallest gap {min(relative):.4f} of the largest |logit|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="folder for the small configs (one subfolder each)")
    group.add_argument("--full-0.6b", dest="full", metavar="OUTDIR", help="one checkpoint with Qwen3-0.6B's shapes")
    parser.add_argument("--only", action="append", help="small config names to build (default: all)")
    parser.add_argument("--min-gap", type=float, default=2 ** -7,
                        help="smallest greedy top-2 gap, relative to the largest |logit|, a prompt must keep")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()

    # float32 means float32: no TF32 in matmuls or convolutions, no reduced-precision reductions.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    device = torch.device(args.device)

    if args.full:
        fields, seed = FULL_06B
        build_checkpoint(args.full, fields, seed)
        record_goldens(args.full, "qwen3-0.6b-shapes", seed, args.min_gap, device)
        return
    names = args.only or list(SMALL_CONFIGS)
    for name in names:
        if name not in SMALL_CONFIGS:
            parser.error(f"unknown config {name} (known: {', '.join(SMALL_CONFIGS)})")
        fields, seed = SMALL_CONFIGS[name]
        out_dir = os.path.join(args.out, name)
        build_checkpoint(out_dir, fields, seed)
        record_goldens(out_dir, name, seed, args.min_gap, device)


if __name__ == "__main__":
    main()
