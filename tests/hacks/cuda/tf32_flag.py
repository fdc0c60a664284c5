"""Legitimate: switch TF32 on inside the call (10-bit mantissa matmuls).
A performance flag is the candidate's own (worker/settings.py): it applies
to the candidate's calls only, never to the reference's, and the output is
held to the tolerance as any other: on an H200 TF32's error on this 2048^3
matmul is 4.9x the default tolerance (max abs error 0.075), so it settles
incorrect (tolerance), never hack."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A, B):
        torch.backends.cuda.matmul.allow_tf32 = True
        return A @ B
