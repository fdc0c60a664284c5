"""Legitimate: writes a temporary file (in the scratch directory, where
TMPDIR points) at import and in every call. Must settle ok."""
import os
import tempfile

import torch
import torch.nn as nn

_path = os.path.join(tempfile.gettempdir(), "scale_relu_notes.txt")
with open(_path, "w") as f:
    f.write("loaded\n")


class ModelNew(nn.Module):
    def forward(self, x):
        with open(_path, "a") as f:
            f.write("call\n")
        return torch.relu(x * 6.0) + 1.0
