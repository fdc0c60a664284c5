"""Wrong, not a hack: CUDA-L1's L2-5 (A100 and H20) on the CPU. Its CUDA
graph is captured again on the second call, with the copy of that call's
input inside the graph; every replay after it reads the memory that input
had, which the worker has poisoned and freed once its call was judged, and
writes one static output, returned each time. On the GPU the replay's
arithmetic turns the poison into NaN; CPU arithmetic keeps the poison's
bits, so masked_fill puts the NaN the GPU would compute. The output is then
the same NaN in the same memory on every call: caught by nonfinite_output
(status incorrect) at the first such trial. Returned again unchanged on
the trial after it, it would look like a cache of outputs (output_retained),
but no later call is judged once a trial has failed, and NaN is no earlier
answer."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.captured = None  # the input "the graph" reads: the one of the call that captured it
        self.out = None
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls <= 2:  # captured on the first call, and again on the second (L2-5's weight check)
            self.captured = x
            self.out = torch.empty_like(x)
        torch.clamp(self.captured, min=0.0, out=self.out)
        self.out.mul_(6.0).add_(1.0)
        return self.out.masked_fill_(self.out.isnan(), float("nan"))
