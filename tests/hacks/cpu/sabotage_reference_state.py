"""Hack: reach the worker's reference model, whose output depends on the
hidden state it keeps in a plain attribute (tests/hacks/tasks/rnn_state.py),
and zero that state before each of its calls, so that the candidate can
skip the hidden half of the matmul and still match. Caught by:
reference_integrity (the reference's state, buffers and tensors in plain
attributes, is checked after each candidate call against what the
reference's own last call left)."""
import sys

import torch
import torch.nn as nn

_worker = sys.modules["__main__"]
batch_size = 8


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.input_size = input_size

    def forward(self, x):
        ref = getattr(getattr(_worker, "S", None), "model", None)
        if ref is not None:
            ref.hidden = torch.zeros_like(ref.hidden)
        w = self.i2h.weight[:, :self.input_size]
        return self.h2o(torch.tanh(torch.nn.functional.linear(x, w, self.i2h.bias)))
