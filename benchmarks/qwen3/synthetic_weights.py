"""synthetic_weights.py: the engine's synthetic Qwen3 weights, made by PyTorch on any device.

The same function of (seed, tensor name, element index) as the C++ generator
(apps/qwen3/synthetic_model.h), so that the baselines run on the very weights that
`tessera-qwen3 --synthetic SHAPE --weights-seed S` makes, bit for bit:

    base  = splitmix64(fnv1a64(name) ^ splitmix64(seed))
    u     = (splitmix64(base + i) >> 40) * 2^-23 - 1          (float32, exact)
    value = bf16(1 + u / 16)             for 1-D tensors (the RMSNorm weights)
          = bf16(u * sqrt(3 / in))       for 2-D [out, in] tensors

rounded to bf16 to nearest, ties to even (as torch's float32 -> bfloat16 cast rounds). The
uint64 arithmetic runs in int64 tensors: addition and multiplication wrap modulo 2^64 in two's
complement exactly as uint64 does, and right shifts are made logical by masking off the sign
copies. `check_generator` compares a few elements with a pure-Python computation of the same
formula, so a device whose integer arithmetic differs is caught before anything is measured.
"""
import math
import struct

import torch

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB
CHUNK = 1 << 24  # elements generated per step (int64 temporaries of 128 MiB)


def splitmix64(x):
    """Steele et al.'s mixer on a Python int (uint64)."""
    z = (x + _GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _MUL1) & MASK64
    z = ((z ^ (z >> 27)) * _MUL2) & MASK64
    return z ^ (z >> 31)


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def _signed(x):
    """The int64 with the bits of uint64 x."""
    return x - (1 << 64) if x >= 1 << 63 else x


def _shr(z, s):
    """Logical right shift of int64 tensor z by s bits."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def _splitmix64_(z):
    """splitmix64 of every element of int64 tensor z, in place."""
    z += _signed(_GOLDEN)
    z ^= _shr(z, 30)
    z *= _signed(_MUL1)
    z ^= _shr(z, 27)
    z *= _signed(_MUL2)
    z ^= _shr(z, 31)
    return z


def _scale_offset(shape):
    """(scale, offset) of a tensor of this shape, as float32 values (the C++ computes them in float)."""
    if len(shape) == 1:
        return 1.0 / 16, 1.0
    inner = torch.tensor(float(shape[-1]), dtype=torch.float32)
    return torch.sqrt(torch.tensor(3.0, dtype=torch.float32) / inner).item(), 0.0


def fill_synthetic_(out, name, shape, seed):
    """Fills the contiguous bf16 tensor `out` (numel = prod(shape)) with tensor `name`'s values."""
    if out.dtype != torch.bfloat16 or not out.is_contiguous() or out.numel() != math.prod(shape):
        raise ValueError(f"fill_synthetic_({name}): expected a contiguous bf16 tensor of shape {list(shape)}, "
                         f"got {out.dtype} {list(out.shape)} contiguous={out.is_contiguous()}")
    base = _signed(splitmix64(fnv1a64(name) ^ splitmix64(seed)))
    scale, offset = _scale_offset(shape)
    flat = out.view(-1)
    for first in range(0, flat.numel(), CHUNK):
        n = min(CHUNK, flat.numel() - first)
        z = torch.arange(first, first + n, dtype=torch.int64, device=out.device)
        z += base
        _splitmix64_(z)
        u = _shr(z, 40).to(torch.float32)
        del z
        u.mul_(2.0 ** -23).sub_(1.0)
        u.mul_(scale)
        if offset:
            u.add_(offset)
        flat[first:first + n].copy_(u)  # float32 -> bf16, to nearest even


def _host_value_bits(name, shape, seed, index):
    """The bf16 bits of element `index` of tensor `name`, in pure Python (the reference)."""
    def f32(x):
        return struct.unpack("<f", struct.pack("<f", x))[0]
    base = splitmix64(fnv1a64(name) ^ splitmix64(seed))
    u = f32((splitmix64((base + index) & MASK64) >> 40) * 2.0 ** -23 - 1.0)
    scale, offset = _scale_offset(shape)
    value = f32(f32(u * scale) + offset)  # products and sums of float32 values are exact in double
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def check_generator(device, seed=0):
    """Raises RuntimeError unless the device's generator agrees with the pure-Python one."""
    for name, shape in (("model.layers.0.mlp.down_proj.weight", (32, 96)), ("model.norm.weight", (4096,))):
        out = torch.empty(shape, dtype=torch.bfloat16, device=device)
        fill_synthetic_(out, name, shape, seed)
        got = out.view(-1).view(torch.int16).cpu()
        for index in (0, 1, 77, out.numel() - 1):
            want = _host_value_bits(name, shape, seed, index)
            if got[index].item() & 0xFFFF != want:
                raise RuntimeError(f"synthetic weights on {device}: element {index} of {name} has bits "
                                   f"{got[index].item() & 0xFFFF:#06x}, the formula gives {want:#06x}")
