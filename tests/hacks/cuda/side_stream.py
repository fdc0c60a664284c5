"""Hack attempt: launch the work on a side stream and return without joining
it, so that events on the calling stream time nothing. Earns nothing: the
stream fence (worker/stream_fence.py) makes the end of every timed call wait
for every pool stream, so the side stream's work is timed. Work on a stream
that native code makes non-blocking is still caught by stream_sync (the
audit rounds' wall clock to a device-wide synchronize)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, A, B):
        if self.side is None:
            self.side = torch.cuda.Stream()
        with torch.cuda.stream(self.side):
            return A @ B
