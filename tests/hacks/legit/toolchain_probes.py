"""Legitimate: what torch.compile's first call runs on a GPU node (CUDA-L1
A100 L2-34, L2-49 and L2-72 on the H200): `file -b` on the interpreter
(platform.architecture()) and a compiler started by absolute path through
os.posix_spawn (Triton's ptxas; Python's subprocess takes posix_spawn for
an absolute path). Here gcc stands for ptxas, which a CPU machine lacks.
Toolchain probes, allowed by sandbox_process; a program the candidate
names that is not a toolchain is still refused (cpu/escape_subprocess).
Must settle ok."""
import platform
import shutil
import subprocess
import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.bits = platform.architecture(sys.executable)[0]

    def forward(self, x):
        self.calls += 1
        if self.calls == 1:
            gcc = shutil.which("gcc")
            if gcc:  # close_fds=False: Python 3.11 takes posix_spawn only then, 3.12 also without
                subprocess.run([gcc, "--version"], capture_output=True, close_fds=False, check=False)
        return torch.relu(x) * 6.0 + 1.0
