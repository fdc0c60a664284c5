"""Copies of what the worker compares and times with, taken when the
package is imported, before any candidate code runs. namespace_integrity's
fingerprints prove that the public names still point at them; the worker
and the units use these copies, never the public names."""

import os

import torch

equal = torch.equal
isfinite = torch.isfinite
nan_to_num = torch.nan_to_num
uint8 = torch.uint8
tensor_type = torch.Tensor
listdir = os.listdir

try:
    from torch.multiprocessing.reductions import StorageWeakRef
except ImportError:  # pragma: no cover - every torch this runs on has it
    StorageWeakRef = None
