"""Hack: switch CPU autocast on inside the call and leave it on, so that
the reference's next call would run in bfloat16. Autocast is not one of the
candidate's own settings (worker/settings.py): it would change the other
side's numerics. Caught by: global_state."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        torch.set_autocast_cpu_enabled(True)
        return torch.relu(x) * 6.0 + 1.0
