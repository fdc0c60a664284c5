"""Hack: capture a CUDA graph on the first call and replay it ever after
without copying the new inputs in (a stale result, very fast). Caught by:
tolerance (every trial has fresh inputs)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None

    def forward(self, A, B):
        if self.graph is None:
            self.a, self.b = A.clone(), B.clone()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                self.out = self.a @ self.b
            torch.cuda.current_stream().wait_stream(s)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.a @ self.b
        self.graph.replay()
        return self.out.clone()
