"""torch_qwen3.py: a plain PyTorch implementation of Qwen3's batch-1 decode step, replayed as one
CUDA graph per token (the baseline "PyTorch, one graph" of issue #23).

The step: embedding; per layer RMSNorm, one fused QKV matrix-vector product, per-head q/k
RMSNorm, RoPE (rotate-half, cos/sin tables computed once as transformers computes them), the K
and V rows written into a static preallocated bf16 KV cache at the position, GQA attention over
the whole cache masked to the valid prefix (float32 products and softmax, as SDPA's fused kernels
accumulate), the output projection and residual, RMSNorm, a fused gate/up product, SwiGLU, the
down projection and residual; the final norm, the LM head and a greedy argmax. The other
operations round as transformers' Qwen3 modules do (bf16 tensors, RMSNorm in float32 rounded to
bf16 before the weight), so that its logits can be compared with transformers' on the same
weights; kernels are saved where that costs no rounding: F.rms_norm, q and k normalized and
rotated as one tensor, rotate-half as a roll against a sign-folded sin table, one attention mask
per step. That is under 30 kernels per layer, all in the one graph.

The state lives in device tensors: `token` and its `position` are the inputs, and the step itself
writes the argmax into `token`, advances `position` and records the token in
`generated[position]`, so that decoding N tokens is N replays of one captured graph with no host
work between them. On a device without CUDA graphs (the CPU smoke test) the same step runs
eagerly. `prefill` runs a whole prompt at once (causal SDPA), fills the cache and returns the
first token. Assumes batch 1 and at most `context` positions.
"""
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class LayerWeights:
    input_norm: torch.Tensor  # [hidden]
    qkv: torch.Tensor         # [q + 2 kv, hidden]: q_proj, k_proj, v_proj stacked
    q_norm: torch.Tensor      # [head_dim]
    k_norm: torch.Tensor      # [head_dim]
    o: torch.Tensor           # [hidden, q]
    post_norm: torch.Tensor   # [hidden]
    gate_up: torch.Tensor     # [2 intermediate, hidden]: gate_proj, up_proj stacked
    down: torch.Tensor        # [hidden, intermediate]


@dataclass
class Qwen3Weights:
    embed: torch.Tensor    # [vocab, hidden]
    layers: list           # of LayerWeights
    norm: torch.Tensor     # [hidden]
    lm_head: torch.Tensor  # [vocab, hidden]; the embedding itself when tied


def rms_norm(x, weight, eps):
    """transformers' Qwen3RMSNorm: normalized in float32 (F.rms_norm computes in float32 for bf16
    input), rounded to the input's dtype, then times the weight in that dtype."""
    return weight * F.rms_norm(x, (x.shape[-1],), eps=eps)


def rope_tables(shape, context, device, dtype):
    """cos and sin [context, head_dim] as transformers' Qwen3RotaryEmbedding computes them (float32
    frequencies, cast to the activations' dtype); sin with its first half negated, so that
    rotate_half(x) * sin is x.roll(head_dim / 2) times it (the same products, one kernel fewer)."""
    d = shape.head_dim
    inv_freq = 1.0 / (shape.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float) / d))
    inv_freq = inv_freq.to(device)
    positions = torch.arange(context, device=device, dtype=torch.float32)
    freqs = (inv_freq[:, None] @ positions[None, :]).transpose(0, 1)
    emb = torch.cat((freqs, freqs), dim=-1)
    sin = emb.sin().to(dtype)
    sin[:, :d // 2].neg_()
    return emb.cos().to(dtype), sin


class TorchQwen3:
    """The decode step of `shape` on `weights`, with its own KV cache of `context` positions."""

    def __init__(self, shape, weights, context, device):
        self.shape, self.w, self.context, self.device = shape, weights, context, torch.device(device)
        s = shape
        cache_shape = (s.layers, s.kv_heads, context, s.head_dim)
        self.k_cache = torch.zeros(cache_shape, dtype=torch.bfloat16, device=device)
        self.v_cache = torch.zeros(cache_shape, dtype=torch.bfloat16, device=device)
        self.cos, self.sin = rope_tables(s, context, device, torch.bfloat16)
        # Per layer, the q_norm weight for each query head and the k_norm weight for each KV head:
        # q and k are adjacent in the QKV product, so both are normalized as one [heads + kv, d].
        self.qk_norm = [torch.cat((lw.q_norm.expand(s.heads, -1), lw.k_norm.expand(s.kv_heads, -1)))
                        for lw in weights.layers]
        self.slots = torch.arange(context, device=device)
        self.token = torch.zeros(1, dtype=torch.int64, device=device)
        self.position = torch.zeros(1, dtype=torch.int64, device=device)
        self.generated = torch.zeros(context + 1, dtype=torch.int64, device=device)
        self.graph = None
        self.logits = None  # [1, vocab] bf16, of the last step or prefill

    def _layer(self, x, i, lw, cos, sin, attend):
        """One decoder layer on x [T, hidden] (cos, sin: [T, 1, head_dim]); attend(q [T, heads, d],
        k and v [T, kv_heads, d], i) writes the cache and returns the attention [T, heads, d]."""
        s = self.shape
        t, d = x.shape[0], s.head_dim
        qkv = F.linear(rms_norm(x, lw.input_norm, s.rms_norm_eps), lw.qkv)
        qk = qkv[:, :s.q_width + s.kv_width].view(t, s.heads + s.kv_heads, d)
        qk = F.rms_norm(qk, (d,), eps=s.rms_norm_eps) * self.qk_norm[i]
        qk = qk * cos + qk.roll(d // 2, dims=-1) * sin  # RoPE, rotate-half (rope_tables)
        q, k = qk.split([s.heads, s.kv_heads], dim=1)
        attn = attend(q, k, qkv[:, s.q_width + s.kv_width:].view(t, s.kv_heads, d), i)
        x = x + F.linear(attn.reshape(t, s.q_width), lw.o)
        h = rms_norm(x, lw.post_norm, s.rms_norm_eps)
        gate, up = F.linear(h, lw.gate_up).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, lw.down)

    def _logits(self, x):
        return F.linear(rms_norm(x, self.w.norm, self.shape.rms_norm_eps), self.w.lm_head)

    def _step(self):
        """One decode step from the device state (token, position) to the next token, in place."""
        s, pos = self.shape, self.position
        cos, sin = self.cos.index_select(0, pos)[:, None], self.sin.index_select(0, pos)[:, None]
        # 0 for the cache slots holding the prefix (this position included), -inf for the others.
        bias = torch.where(self.slots <= pos, 0.0, float("-inf"))

        def attend(q, k, v, i):
            self.k_cache[i].index_copy_(1, pos, k.transpose(0, 1))
            self.v_cache[i].index_copy_(1, pos, v.transpose(0, 1))
            # GQA: query head h reads KV head h // G (transformers' repeat_kv order); in float32,
            # as SDPA's fused kernels accumulate.
            qg = q.reshape(s.kv_heads, s.heads // s.kv_heads, s.head_dim).float()
            scores = torch.baddbmm(bias, qg, self.k_cache[i].transpose(1, 2).float(), alpha=s.head_dim ** -0.5)
            out = torch.bmm(torch.softmax(scores, dim=-1), self.v_cache[i].float())
            return out.to(q.dtype).view(1, s.heads, s.head_dim)

        x = F.embedding(self.token, self.w.embed)
        for i, lw in enumerate(self.w.layers):
            x = self._layer(x, i, lw, cos, sin, attend)
        self.logits = self._logits(x)
        nxt = self.logits.argmax(dim=-1)
        self.token.copy_(nxt)
        self.position.add_(1)
        self.generated.index_copy_(0, self.position, nxt)

    def capture(self):
        """Captures the step as one CUDA graph (on a CUDA device; elsewhere steps run eagerly).
        Call before prefill: the warm-up steps write cache slot 0, which prefill overwrites."""
        if self.device.type != "cuda":
            return
        self.position.zero_()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # library handles, workspaces and kernels chosen outside the capture
                self.position.zero_()
                self._step()
        torch.cuda.current_stream().wait_stream(side)
        self.position.zero_()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()
        self._graph_logits = self.logits  # the graph's output buffer, rewritten by each replay

    def prefill(self, prompt):
        """Runs the prompt (int64 [T] on the device) from position 0, fills the cache; returns the
        first new token as a device tensor [1] and sets the decode state to it."""
        t = prompt.numel()
        if t > self.context:
            raise ValueError(f"a prompt of {t} tokens is longer than the context of {self.context} positions")

        def attend(q, k, v, i):
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
            self.k_cache[i, :, :t] = k
            self.v_cache[i, :, :t] = v
            out = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=t > 1,
                                                 scale=self.shape.head_dim ** -0.5, enable_gqa=True)[0]
            return out.transpose(0, 1)

        x = F.embedding(prompt, self.w.embed)
        cos, sin = self.cos[:t, None], self.sin[:t, None]
        for i, lw in enumerate(self.w.layers):
            x = self._layer(x, i, lw, cos, sin, attend)
        self.logits = self._logits(x[-1:])
        first = self.logits.argmax(dim=-1)
        self.token.copy_(first)
        self.position.fill_(t)
        self.generated.index_copy_(0, self.position, first)
        return first

    def decode(self, steps):
        """`steps` decode steps after prefill (graph replays when captured). The tokens are in
        `generated` (see tokens()); `logits` [1, vocab] are the last step's."""
        for _ in range(steps):
            if self.graph is not None:
                self.graph.replay()
                self.logits = self._graph_logits
            else:
                self._step()

    def tokens(self, prompt_tokens, count):
        """The `count` new tokens, the first from prefill, as a list (synchronizes)."""
        return self.generated[prompt_tokens:prompt_tokens + count].tolist()
