"""Tensor helpers the units share: a tensor's storage, its bytes, the
tensors in an output, and the device-side digest of values that the
fingerprints, input_mutation and output_aliasing compare. Not a defence."""

import hashlib

import torch

from .copies import tensor_type, uint8


def storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


def bytes_view(t):
    """All of a tensor's storage as uint8 (views included: the whole buffer)."""
    return torch.tensor([], dtype=uint8, device=t.device).set_(storage(t))


def tensors_of(x):
    if type(x) is tensor_type:
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if type(t) is tensor_type]
    return []


# The digest is a keyed sum of 64-bit words, computed where the tensor lives:
# copying every output to the host for a CPU hash made a KernelBench
# evaluation on an H200 five times slower (64 MiB per output, 64 outputs per
# evaluation). Each word is multiplied by a pseudo-random odd weight of its
# position and the products summed modulo 2^64 (integer sums are exact, so the
# order of the device's reduction does not matter); the sums of each chunk of
# _DIGEST_CHUNK words, with the shape and dtype, go through blake2b on the
# host. Two different tensors collide with probability about 2^-64 unless the
# difference is built against the weights (docs/defences.md).
_DIGEST_CHUNK = 1 << 20  # words per weighted sum: bounds the temporary memory (8 MiB)
_DIGEST_KEY = 0x2545F4914F6CDD1D
_digest_weights = {}  # device -> int64 weights of positions 0.._DIGEST_CHUNK-1


def _int64(x):
    """A 64-bit pattern as the signed value torch's int64 arithmetic takes."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


def _weights(device):
    w = _digest_weights.get(device)
    if w is None:
        x = torch.arange(_DIGEST_CHUNK, dtype=torch.int64, device=device) * _int64(0x9E3779B97F4A7C15) + _DIGEST_KEY
        x = x ^ ((x >> 30) & ((1 << 34) - 1))  # splitmix64's mixing, logical shifts
        x = x * _int64(0xBF58476D1CE4E5B9)
        x = x ^ ((x >> 27) & ((1 << 37) - 1))
        w = _digest_weights[device] = x | 1
    return w


def _words(t):
    """t's bytes in logical order as int64 words, the last one zero-padded."""
    b = t.detach().reshape(-1).view(uint8)
    pad = -b.numel() % 8
    if pad or b.storage_offset() % 8:
        b = torch.cat([b, b.new_zeros(pad)])
    return b.view(torch.int64)


def digest(tensors):
    """A 64-bit digest of tensors' values (bytes in logical order), shapes
    and dtypes; one host synchronization per call."""
    h = hashlib.blake2b(digest_size=8)
    sums = []
    for t in tensors:
        if type(t) is not tensor_type:
            h.update(repr(t).encode())
            continue
        h.update(repr((tuple(t.shape), str(t.dtype))).encode())
        if t.numel():
            w = _weights(t.device)
            sums += [(c * w[:c.numel()]).sum() for c in _words(t).split(_DIGEST_CHUNK)]
    for s in (torch.stack([s.to(sums[0].device) for s in sums]).tolist() if sums else []):
        h.update((s & ((1 << 64) - 1)).to_bytes(8, "little"))
    return int.from_bytes(h.digest(), "little")
