# Known-faster rewrite of KernelBench v0 level 2 problem 40
# (Matmul_Scaling_ResidualAdd): x * s + x.clone() is x * (1 + s), so the
# clone, the multiply and the add become one multiply. Used by
# tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return self.matmul(x) * (1.0 + self.scaling_factor)
