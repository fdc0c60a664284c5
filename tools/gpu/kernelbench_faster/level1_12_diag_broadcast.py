# Known-faster rewrite of KernelBench v0 level 1 problem 12
# (Matmul_with_diagonal_matrices_): diag(A) @ B builds an N x N matrix and
# multiplies it (N^2 M multiply-adds); row i of the result is A[i] * B[i], a
# broadcast multiply (N M). Used by tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A.unsqueeze(1) * B
