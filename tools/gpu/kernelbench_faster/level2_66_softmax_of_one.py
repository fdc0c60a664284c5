# Known-faster rewrite of KernelBench v0 level 2 problem 66
# (Matmul_Dropout_Mean_Softmax): the mean over dim 1 with keepdim leaves a
# (batch, 1) tensor, and a softmax over a dimension of size 1 is exactly 1
# whatever its input (dropout included). One fill kernel instead of linear,
# dropout, mean and softmax. Used by tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.ones(x.shape[0], 1, device=x.device, dtype=x.dtype)
