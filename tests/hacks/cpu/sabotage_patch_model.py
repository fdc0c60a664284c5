"""Hack: slow the reference down by patching the task's Model. Caught by:
task_fingerprint."""
import sys
import time

import torch
import torch.nn as nn

for _m in list(sys.modules.values()):
    if _m is not None and hasattr(_m, "get_inputs") and hasattr(_m, "Model"):
        _orig = _m.Model.forward

        def _slow(self, *args, _orig=_orig):
            time.sleep(0.002)
            return _orig(self, *args)

        _m.Model.forward = _slow


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 6.0 + 1.0
