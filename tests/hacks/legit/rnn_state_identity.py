"""Legitimate: the identity of a task whose reference carries its state
from call to call in a plain tensor attribute (tests/hacks/tasks/rnn_state.py,
KernelBench L3-33 VanillaRNN): the reference's code as ModelNew, built from
the same seed. Its own hidden state evolves as the reference's does when
both are called in step; neither is a hack nor incorrect."""
import torch
import torch.nn as nn

batch_size = 8


class ModelNew(nn.Module):
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

