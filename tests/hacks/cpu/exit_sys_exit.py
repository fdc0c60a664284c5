"""Hack: end the worker mid-check with SystemExit, hoping a clean exit reads
as a pass. Caught by: process_exit (the worker is gone mid-request:
crashed, never a pass)."""
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        sys.exit(0)
