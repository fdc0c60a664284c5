# Known-faster rewrite of KernelBench v0 level 2 problem 18
# (Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp): after the sum over dim 1 with
# keepdim the tensor is (batch, 1); max, mean and logsumexp over a dimension
# of size 1 return their input, so the model is linear(x).sum(1, keepdim).
# Two kernels instead of six. Used by tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x).sum(dim=1, keepdim=True)
