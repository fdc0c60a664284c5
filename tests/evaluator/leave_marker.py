"""A candidate that leaves marks on its process (a builtin, a torch
attribute, a module) and is otherwise correct. evaluate.test.cpp evaluates
it and then find_marker.py with the same evaluator: a worker that served
both would let the second see the marks."""
import builtins
import sys
import types

import torch
import torch.nn as nn

builtins._crucible_marker = True
torch._crucible_marker = True
sys.modules["crucible_marker"] = types.ModuleType("crucible_marker")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 6.0 + 1.0
