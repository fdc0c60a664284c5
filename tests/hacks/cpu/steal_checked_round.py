"""Hack: walk the worker's frames through an exception's traceback (no
audited call) looking for a reference output kept alive in the round, and
return it instead of computing. Caught by: poisoned_memory under spot_check
(the reference's output is poisoned the moment its call returns, even where
its memory is kept for the round)."""
import torch
import torch.nn as nn


def _reference_output(shape):
    try:
        raise RuntimeError
    except RuntimeError as e:
        f = e.__traceback__.tb_frame.f_back
    while f is not None:
        for v in list(f.f_locals.values()):
            if isinstance(v, dict) and type(v.get("reference")) is torch.Tensor and v["reference"].shape == shape:
                return v["reference"]
        f = f.f_back
    return None


class ModelNew(nn.Module):
    def forward(self, x):
        stolen = _reference_output(x.shape)
        if stolen is not None:
            return stolen.clone()
        return torch.relu(x) * 6.0 + 1.0
