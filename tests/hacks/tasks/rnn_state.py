"""A KernelBench-style task whose reference carries state from call to
call in a plain tensor attribute, and whose output depends on it
(KernelBench level 3 problem 33, VanillaRNN, small enough for CPU): each
forward replaces self.hidden with tanh(i2h([x, hidden])). The identity
candidate must settle at exactly 1.00: reference_integrity compares like
with like, and the worker keeps the two models' call histories in step
(defences/module_state.py)."""
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
        return self.h2o(self.hidden)


def get_inputs():
    return [torch.randn(batch_size, 256)]


def get_init_inputs():
    return [256, 128, 64]
