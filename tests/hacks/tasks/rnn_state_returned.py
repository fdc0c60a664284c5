"""A KernelBench-style task whose reference returns its own state
(KernelBench level 3 problem 34, VanillaRNNHidden, small enough for CPU):
each forward replaces self.hidden and returns it. The output is the
model's state until the next call replaces it: it must be neither poisoned
nor judged retained while it is (defences/module_state.py), or the
identity candidate computes its next step from poison."""
import torch
import torch.nn as nn

batch_size = 8


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x):
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = self.tanh(self.i2h(combined))
        self.h2o(self.hidden)
        return self.hidden


def get_inputs():
    return [torch.randn(batch_size, 256)]


def get_init_inputs():
    return [256, 128, 64]
