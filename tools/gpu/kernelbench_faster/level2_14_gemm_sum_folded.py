# Known-faster rewrite of KernelBench v0 level 2 problem 14
# (Gemm_Divide_Sum_Scaling): sum_j (x W^T)_j / 2 * s = x (sum_j W_j)^T * s/2,
# a matrix-vector product instead of a matrix product, and one scale instead
# of a divide and a multiply. Used by tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return (x @ self.weight.sum(dim=0, keepdim=True).T) * (self.scaling_factor / 2)
