"""Legitimate: the identity of a task whose reference returns its own
state (tests/hacks/tasks/rnn_state_returned.py, KernelBench L3-34
VanillaRNNHidden): the candidate returns its hidden state, which it keeps
until its next call replaces it. Not a cache of outputs, not poison."""
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
        self.h2o(self.hidden)
        return self.hidden

