"""Where a decode step's time goes on the GPU (issue 21 item 3): every
kernel of the fused decode step (actors/policy/decode_kernels.cu and
decode_product.cu, compiled here from the repository's own files with
PyTorch's extension builder) timed alone at a model shape, and the matrix
products by small_product against cuBLAS (torch's linear, the peer in the
same run), each as CUDA graph replays over one copy of the weights per
layer, so that the weights stream from memory as in a real step instead of
sitting in L2. Prints per kernel the microseconds, the bytes it must move
over them (GB/s), and the sum a step would take, against the memory-bandwidth
floor of the step (weights + KV cache over the copy bandwidth measured
here). Checks small_product against fp32 arithmetic as it goes (the largest
difference, in units of the element type's rounding step).

Usage: python3 tools/gpu/decode_step_probe.py [SHAPE (0.5b)]
  SHAPE: 0.5b (Qwen2.5-0.5B) or 7b (Qwen2-7B); bf16; batch 1 (small_product
  takes one row); the cache at 1,024 slots with 768 used, as the 512 + 512
  bench's mean step.
Needs a CUDA GPU, nvcc and ninja (PyTorch's cpp_extension).
"""
import os
import sys
import tempfile

import torch
from torch.utils import cpp_extension

SHAPES = {
    "0.5b": dict(hidden=896, heads=14, kv=2, d=64, inter=4864, vocab=151936, layers=24),
    "7b": dict(hidden=3584, heads=28, kv=4, d=128, inter=18944, vocab=152064, layers=28),
}
CAPACITY, USED = 1024, 768
REPLAYS = 20

BINDINGS = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include "actors/policy/decode_kernels.hpp"
namespace dk = crucible::policy::decode_kernels;
static void* stream() { return at::cuda::getCurrentCUDAStream().stream(); }
static dk::element type_of(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? dk::element::bf16
       : t.scalar_type() == torch::kFloat16 ? dk::element::f16 : dk::element::f32;
}
static void ok(const char* e) { TORCH_CHECK(e == nullptr, e ? e : ""); }
void small_product(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor y) {
  ok(dk::small_product(type_of(x), x.data_ptr(), w.data_ptr(), b.numel() ? b.data_ptr() : nullptr, y.data_ptr(),
                       y.scalar_type() == torch::kFloat32 && x.scalar_type() != torch::kFloat32,
                       x.size(0), x.size(1), w.size(0), stream()));
}
void add_rms_norm(torch::Tensor x, torch::Tensor delta, torch::Tensor w, torch::Tensor out) {
  ok(dk::add_rms_norm(type_of(x), x.data_ptr(), delta.data_ptr(), w.data_ptr(), out.data_ptr(), x.size(0), x.size(1),
                      1e-6f, stream()));
}
void rope_cache(torch::Tensor qkv, torch::Tensor pos, torch::Tensor slot, torch::Tensor inv_freq, torch::Tensor q,
                torch::Tensor keys, torch::Tensor values, int64_t heads, int64_t kv, int64_t d) {
  ok(dk::rope_cache(type_of(qkv), qkv.data_ptr(), pos.data_ptr<int64_t>(), slot.data_ptr<int64_t>(),
                    inv_freq.data_ptr<float>(), q.data_ptr(), keys.data_ptr(), values.data_ptr(), qkv.size(0), heads,
                    kv, d, keys.size(2), stream()));
}
void attention(torch::Tensor q, torch::Tensor keys, torch::Tensor values, torch::Tensor mask, torch::Tensor slot,
               torch::Tensor out, torch::Tensor scratch, int64_t heads, int64_t kv, int64_t d) {
  ok(dk::decode_attention(type_of(q), q.data_ptr(), keys.data_ptr(), values.data_ptr(), mask.data_ptr<bool>(),
                          slot.data_ptr<int64_t>(), out.data_ptr(), scratch.data_ptr<float>(), q.size(0), heads, kv, d,
                          keys.size(2), 0.125f, stream()));
}
int64_t attention_scratch(int64_t batch, int64_t heads, int64_t d, int64_t capacity) {
  return dk::decode_attention_scratch(batch, heads, d, capacity);
}
void silu_mul(torch::Tensor gate_up, torch::Tensor out) {
  ok(dk::silu_mul(type_of(out), gate_up.data_ptr(), out.data_ptr(), out.size(0), out.size(1), stream()));
}
void choose(torch::Tensor logits, torch::Tensor uniform, torch::Tensor tokens, torch::Tensor logprobs,
            torch::Tensor scratch) {
  ok(dk::choose_tokens(logits.data_ptr<float>(), uniform.numel() ? uniform.data_ptr<float>() : nullptr, 1.0f,
                       tokens.data_ptr<int64_t>(), logprobs.data_ptr<float>(), scratch.data_ptr<float>(),
                       logits.size(0), logits.size(1), stream()));
}
int64_t choose_scratch(int64_t batch) { return dk::choose_tokens_scratch(batch); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("small_product", &small_product); m.def("add_rms_norm", &add_rms_norm); m.def("rope_cache", &rope_cache);
  m.def("attention", &attention); m.def("attention_scratch", &attention_scratch); m.def("silu_mul", &silu_mul);
  m.def("choose", &choose); m.def("choose_scratch", &choose_scratch);
}
"""


def build():
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    folder = tempfile.mkdtemp(prefix="decode-probe-")
    bindings = os.path.join(folder, "bindings.cpp")
    with open(bindings, "w") as f:
        f.write(BINDINGS)
    policy = os.path.join(repo, "actors", "policy")
    return cpp_extension.load(
        name="decode_probe", build_directory=folder, verbose=False, extra_include_paths=[repo],
        sources=[bindings, os.path.join(policy, "decode_kernels.cu"), os.path.join(policy, "decode_product.cu")],
        extra_cflags=["-O2", "-std=c++17"], extra_cuda_cflags=["-O3", "-std=c++17", "-gencode=arch=compute_90,code=sm_90"])


def replay_us(calls, per_graph):
    """Microseconds per call of `calls` (a function launching per_graph
    kernels' worth of work) captured once as a CUDA graph, replayed."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        calls()  # warm (cuBLAS picks its kernel, the extension loads)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        calls()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPLAYS):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / REPLAYS / per_graph


def copy_bandwidth():
    a = torch.empty(1 << 29, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        b.copy_(a)
    end.record()
    torch.cuda.synchronize()
    return 2 * a.numel() * 10 / (start.elapsed_time(end) / 1000)  # bytes read + written per second


def main():
    shape = sys.argv[1] if len(sys.argv) > 1 else "0.5b"
    batch = 1
    s = SHAPES[shape]
    ext = build()
    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(0)
    bandwidth = copy_bandwidth()
    L, H, h, kv, d, I, V = s["layers"], s["hidden"], s["heads"], s["kv"], s["d"], s["inter"], s["vocab"]
    products = {"qkv": ((h + 2 * kv) * d, H, True), "o": (H, h * d, False), "gate_up": (2 * I, H, False),
                "down": (H, I, False), "lm_head": (V, H, False)}
    print(f"=== {shape}: layers {L}, hidden {H}, heads {h}/{kv}x{d}, intermediate {I}, vocab {V}; "
          f"copy bandwidth {bandwidth / 1e9:.0f} GB/s")
    weight_bytes = 2 * (L * sum(n * k for name, (n, k, _) in products.items() if name != "lm_head") + V * H)
    step = {"cublas": 0.0, "small_product": 0.0}
    worst = 0.0
    for name, (n, k, has_bias) in products.items():
        # Enough copies that they cannot stay in L2 (50 MB) between replays.
        copies = max(1 if name == "lm_head" else L, -(-(256 << 20) // (2 * n * k)))
        ws = [torch.randn(n, k, device=dev, dtype=dt) * k ** -0.5 for _ in range(copies)]
        bs = [torch.randn(n, device=dev, dtype=dt) if has_bias else None for _ in range(copies)]
        x = torch.randn(batch, k, device=dev, dtype=dt)
        fp32_out = name == "lm_head"
        ys = [torch.empty(batch, n, device=dev, dtype=torch.float32 if fp32_out else dt) for _ in range(copies)]
        rounded = torch.empty(batch, n, device=dev, dtype=dt)
        empty = torch.empty(0, device=dev, dtype=dt)

        def cublas():  # what LibTorch's linear runs (and .to(float) for the logits)
            for w, b, y in zip(ws, bs, ys):
                target = rounded if fp32_out else y
                if b is None:
                    torch.matmul(x, w.t(), out=target)
                else:
                    torch.addmm(b, x, w.t(), out=target)
                if fp32_out:
                    y.copy_(rounded)

        def ours():
            for w, b, y in zip(ws, bs, ys):
                ext.small_product(x, w, b if b is not None else empty, y)

        t_cublas = replay_us(cublas, copies)
        ours()
        want = torch.nn.functional.linear(x.float(), ws[-1].float(), bs[-1].float() if bs[-1] is not None else None)
        step_size = want.pow(2).mean().sqrt() * 2 ** -8  # bf16's rounding step at the values' scale
        worst = max(worst, ((ys[-1].float() - want).abs() / step_size).max().item())
        t_ours = replay_us(ours, copies)
        per_step = 1 if name == "lm_head" else L
        step["cublas"] += t_cublas * per_step
        # The step's rule (fused_decode.cpp's product): small_product where n >= k.
        step["small_product"] += (t_ours if n >= k else t_cublas) * per_step
        gbps = lambda t: 2 * n * k / (t * 1e-6) / 1e9
        print(f"{name:8s} [{batch}x{k}] x [{k}x{n}]^T: cuBLAS {t_cublas:7.2f} us ({gbps(t_cublas):5.0f} GB/s), "
              f"small_product {t_ours:7.2f} us ({gbps(t_ours):5.0f} GB/s), {t_cublas / t_ours:.2f}x")
    print(f"small_product against fp32: largest difference {worst:.2f} bf16 rounding steps at the outputs' scale")

    # The kernels between the products, one per layer (the attention over its own cache).
    x = torch.randn(batch, H, device=dev, dtype=dt)
    delta, out = torch.randn_like(x), torch.empty_like(x)
    norm_w = torch.ones(H, device=dev, dtype=dt)
    qkv = torch.randn(batch, (h + 2 * kv) * d, device=dev, dtype=dt)
    pos = torch.full((batch,), USED - 1, device=dev, dtype=torch.int64)
    slot = torch.tensor([USED - 1], device=dev, dtype=torch.int64)
    inv_freq = 1.0 / (1e6 ** (torch.arange(0, d, 2, device=dev, dtype=torch.float32) / d))
    q = torch.empty(batch, h * d, device=dev, dtype=dt)
    caches = [(torch.randn(batch, kv, CAPACITY, d, device=dev, dtype=dt),
               torch.randn(batch, kv, CAPACITY, d, device=dev, dtype=dt)) for _ in range(L)]
    mask = torch.ones(batch, CAPACITY, device=dev, dtype=torch.bool)
    attended = torch.empty(batch, h * d, device=dev, dtype=dt)
    scratch = torch.empty(ext.attention_scratch(batch, h, d, CAPACITY), device=dev, dtype=torch.float32)
    gate_up, act = torch.randn(batch, 2 * I, device=dev, dtype=dt), torch.empty(batch, I, device=dev, dtype=dt)
    logits = torch.randn(batch, V, device=dev, dtype=torch.float32)
    uniform = torch.rand(batch, device=dev)
    tokens = torch.empty(batch, device=dev, dtype=torch.int64)
    logprobs = torch.empty(batch, device=dev, dtype=torch.float32)
    choose_scratch = torch.empty(ext.choose_scratch(batch), device=dev, dtype=torch.float32)
    ext.choose(logits, torch.empty(0, device=dev), tokens, logprobs, choose_scratch)
    torch.cuda.synchronize()
    want = torch.log_softmax(logits, dim=-1)
    print(f"greedy choice: tokens {'equal' if torch.equal(tokens, logits.argmax(-1)) else 'DIFFER'} to argmax, "
          f"log-probs within {(logprobs - want.gather(1, tokens[:, None])[:, 0]).abs().max().item():.2e}")
    others = {
        "add_rms_norm (x2 a layer)": (lambda: [ext.add_rms_norm(x, delta, norm_w, out) for _ in range(L)], 2),
        "rope_cache": (lambda: [ext.rope_cache(qkv, pos, slot, inv_freq, q, k_, v_, h, kv, d) for k_, v_ in caches], 1),
        "decode_attention (2 kernels)": (
            lambda: [ext.attention(q, k_, v_, mask, slot, attended, scratch, h, kv, d) for k_, v_ in caches], 1),
        "silu_mul": (lambda: [ext.silu_mul(gate_up, act) for _ in range(L)], 1),
    }
    between = 0.0
    for name, (calls, per_layer) in others.items():
        t = replay_us(calls, L)
        between += t * per_layer * L
        print(f"{name:30s} {t:7.2f} us")
    chosen = {}
    for name, u in (("choose_tokens greedy", torch.empty(0, device=dev)), ("choose_tokens sampled", uniform)):
        chosen[name] = replay_us(lambda: ext.choose(logits, u, tokens, logprobs, choose_scratch), 1)
        print(f"{name:30s} {chosen[name]:7.2f} us")
    kv_bytes = 2 * L * batch * kv * USED * d * 2
    floor_us = (weight_bytes + kv_bytes) / bandwidth * 1e6
    for peer in ("cublas", "small_product"):  # every product by cuBLAS; by the step's rule
        total = step[peer] + between + chosen["choose_tokens greedy"]  # the bench's greedy steps
        print(f"step, products by {peer}: {total:.0f} us as the sum of its kernels "
              f"(products {step[peer]:.0f}, the rest {total - step[peer]:.0f}); floor {floor_us:.0f} us "
              f"= {100 * floor_us / total:.1f}% of it")
    print(f"small_product over cuBLAS, the products of a step: {step['cublas'] / step['small_product']:.2f}x")


if __name__ == "__main__":
    main()
