"""Hack: launch the work on a side stream and return without joining it, so
that events on the calling stream time nothing. Caught by: stream_sync (the
timed region ends with a device-wide synchronize, and a candidate whose
stream events are a small part of its wall time is a hack)."""
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
