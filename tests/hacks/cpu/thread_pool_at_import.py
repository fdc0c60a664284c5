"""Hack: a worker thread started at import computes each output while the
timed thread returns a promise. Caught by: background_threads (threads the
candidate started are alive after it loads)."""
import queue
import threading

import torch
import torch.nn as nn

_jobs = queue.Queue()


def _serve():
    while True:
        x, out = _jobs.get()
        out.copy_(torch.relu(x) * 6.0 + 1.0)


threading.Thread(target=_serve, daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _jobs.put((x, out))
        return out
