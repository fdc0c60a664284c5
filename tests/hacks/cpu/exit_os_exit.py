"""Hack: end the worker process with exit code 0 mid-check. Caught by:
process_exit (the evaluator sees the worker gone in the middle of a request:
crashed, never a pass)."""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os._exit(0)
