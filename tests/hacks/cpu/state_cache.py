"""Hack: on a task whose reference returns its own state
(tests/hacks/tasks/rnn_state_returned.py), compute the state once and
return that same tensor from every call, calling it "state". A returned
state tensor is exempt from poison only while the model keeps it as state
and a newer call has not replaced it; this one is never replaced. Caught
by: output_retained (the first trial's output is still held by the
candidate after the next call)."""
import torch
import torch.nn as nn

batch_size = 8


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.done = False

    def forward(self, x):
        if not self.done:
            self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden.to(x.device)), dim=1)))
            self.done = True
        return self.hidden
