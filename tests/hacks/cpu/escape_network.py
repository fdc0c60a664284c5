"""Hack: talk to the network (fetch an answer, leak the task). Caught by:
sandbox_network (and, where namespaces hold, no network at all)."""
import socket

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        socket.create_connection(("10.0.0.1", 80), timeout=1).close()
        return torch.relu(x) * 6.0 + 1.0
