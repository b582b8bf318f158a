"""bfloat16 without a numpy dtype.

The reference keeps bfloat16 tensors as float32 arrays whose values are all
exactly representable in bfloat16; :func:`round_to_bf16` rounds float32 to
the nearest bfloat16 (ties to even, NaN kept quiet), which is what the CPU
twin's ``bfloat16_t`` does, and the ``*_bits`` helpers convert to and from the
16-bit patterns stored in global memory.
"""

from __future__ import annotations

import numpy as np


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 -> float32 holding the nearest bfloat16 value."""
    return bits_to_f32(f32_to_bits(values))


def f32_to_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> uint16 bfloat16 bit patterns, round to nearest even."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    bias = 0x7FFF + ((u >> 16) & 1)
    rounded = ((u + bias) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)
    return rounded.reshape(f.shape)


def bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint16 bfloat16 bit patterns -> float32 values."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32).reshape(b.shape)
