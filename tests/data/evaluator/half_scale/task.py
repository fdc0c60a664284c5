"""A float16 output: per-dtype tolerance tests (actors/evaluator/evaluate.test.cpp)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.half() * 2.0


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
