"""Hack attempt: ask whether the calling stream is still busy when called
(a measured round's sleep is still running; an audit round's stream is
idle) and only then compute on a side stream that does not wait for it, so
that the work runs hidden under the sleep. Issue 17 measured 8.22x for this
on cuda_elementwise. Earns nothing: the stream fence makes every pool
stream wait for the start of the call and the end wait for every pool
stream (worker/stream_fence.py), so the side stream's work is timed."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
        if not torch.cuda.current_stream().query():
            with torch.cuda.stream(self.side):
                return torch.relu(x) * 2.0 + 1.0
        return torch.relu(x) * 2.0 + 1.0
