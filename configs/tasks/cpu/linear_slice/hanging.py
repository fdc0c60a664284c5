import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Hangs at import time, before ModelNew exists."""


while True:
    pass
