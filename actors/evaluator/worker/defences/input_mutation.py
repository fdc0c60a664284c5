"""input_mutation (incorrect): a kernel that writes its inputs (in-place
compute, zeroing after use).

Catches: the candidate's inputs compared bitwise (NaN-safe) with a copy
made before the call, in correctness trials and spot checks
(sandbox_worker.py calls same_values). The reference never sees the
candidate's tensors, so this deceives nothing: incorrect with that reason
(CUDA-L1's in-place activations on the input). Allows: outputs that are
views of unmodified inputs. Cannot catch: mutation only in unchecked timed
rounds (then the outputs of spot-checked rounds are still checked).
"""

from .copies import equal, tensor_type, uint8

NAMES = ("input_mutation",)
CASES = ("tests/hacks/cpu/mutate_inputs.py", "tests/hacks/cpu/zero_inputs.py")


def _bits(t):
    return t.detach().reshape(-1).contiguous().view(uint8)


def same_values(a, b):
    """Bitwise equality (NaN-safe) of two input lists."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if type(x) is tensor_type or type(y) is tensor_type:
            if type(x) is not type(y) or x.shape != y.shape or x.dtype != y.dtype:
                return False
            if x.numel() and not equal(_bits(x), _bits(y)):
                return False
        elif x != y:
            return False
    return True
