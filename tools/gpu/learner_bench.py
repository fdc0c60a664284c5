#!/usr/bin/env python3
"""The PyTorch eager peer of crucible's GRPO step, and the learner's tables.

  learner_bench.py grpo --model DIR [same options as `learner_bench grpo`]
      The GRPO step that actors/learner/trainer.cpp takes, written in PyTorch
      eager Python over transformers' Qwen2 (sdpa attention): reward smoothing
      over a window, group advantages, reference log-probs recomputed without
      gradients and the proximal ones taken from the trained forward (one
      optimizer step a batch), per-token clipped ratio with the truncated
      behaviour weight and beta * k3, sequence-mean loss over micro-batches,
      gradient clipping at 1.0 and torch.optim.AdamW (PyTorch's default
      multi-tensor implementation). bf16 autocast over fp32 weights, as the
      trainer on CUDA. Same synthetic batch as learner_bench.cpp. One JSON line.
  learner_bench.py table FILE
      Prints the tables of tools/gpu/learner_gpu.sh from its JSON lines.
"""
import argparse
import collections
import copy
import json
import math
import sys
import time


def batch(groups, group_size, prompt, completion, vocab):
    """learner_bench.cpp's synthetic_batch: (prompt ids, completion ids, behaviour log-probs, reward) per sample."""
    out = []
    for g in range(groups):
        for i in range(group_size):
            s = g * group_size + i
            p = [(1000003 * g + 7919 * t + 17) % vocab for t in range(prompt)]
            c = [(104729 * s + 31337 * t + 5) % vocab for t in range(completion)]
            b = [-12.0 + ((s * 131 + t * 71) % 1000) / 1000.0 for t in range(completion)]
            out.append((p, c, b, ((g * 7 + i * 3) % 5) / 4.0))
    return out


LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def add_lora(model, rank, alpha):
    """Adapters on every attention and MLP projection, the base frozen.
    Through PEFT where it is installed; else PEFT's Linear arithmetic by hand
    (y = W x + alpha / r * B A x, A Kaiming-uniform, B zero). Returns the
    implementation's name and a context manager that leaves the adapters out
    (the KL reference: the base)."""
    import contextlib

    import torch

    for p in model.parameters():
        p.requires_grad_(False)
    try:
        from peft import LoraConfig, get_peft_model

        wrapped = get_peft_model(model, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0,
                                                   target_modules=LORA_TARGETS, bias="none"))
        return "peft-eager", wrapped.disable_adapter
    except ImportError:
        pass

    class LoraLinear(torch.nn.Module):
        off = False

        def __init__(self, base):
            super().__init__()
            self.base = base
            self.lora_A = torch.nn.Linear(base.in_features, rank, bias=False, device=base.weight.device)
            self.lora_B = torch.nn.Linear(rank, base.out_features, bias=False, device=base.weight.device)
            torch.nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
            torch.nn.init.zeros_(self.lora_B.weight)

        def forward(self, x):
            y = self.base(x)
            return y if LoraLinear.off else y + self.lora_B(self.lora_A(x)) * (alpha / rank)

    for name, module in list(model.named_modules()):
        for child, sub in list(module.named_children()):
            if child in LORA_TARGETS and isinstance(sub, torch.nn.Linear):
                setattr(module, child, LoraLinear(sub))

    @contextlib.contextmanager
    def base_only():
        LoraLinear.off = True
        try:
            yield
        finally:
            LoraLinear.off = False

    return "lora-eager (PEFT's arithmetic by hand: peft is not installed)", base_only


def grpo(args):
    import contextlib

    import torch
    from transformers import Qwen2ForCausalLM

    dev = torch.device("cuda")
    model = Qwen2ForCausalLM.from_pretrained(args.model, dtype=torch.float32, attn_implementation="sdpa").to(dev)
    model.config.use_cache = False
    parameters = sum(p.numel() for p in model.parameters())
    impl, base_only = "pytorch-eager", None
    if args.lora_rank:
        impl, base_only = add_lora(model, args.lora_rank, args.lora_alpha)
    if args.activation_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    reference = None
    if args.kl_beta > 0 and base_only is None:
        reference = copy.deepcopy(model).eval()
        for p in reference.parameters():
            p.requires_grad_(False)
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trained, lr=1e-6, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    vocab = model.config.vocab_size
    samples = batch(args.groups, args.group_size, args.prompt, args.completion, vocab)
    window = collections.deque(maxlen=1024)
    eps_low = eps_high = 0.2
    cap, k = 5.0, 1.5
    first = args.prompt

    def logprobs(m, ids):
        hidden = m.model(input_ids=ids, use_cache=False).last_hidden_state
        logits = m.lm_head(hidden[:, first - 1:-1]).float()
        return torch.log_softmax(logits, -1).gather(-1, ids[:, first:].unsqueeze(-1)).squeeze(-1)

    def step():
        rewards = [s[3] for s in samples]
        window.extend(rewards)
        mu = sum(window) / len(window)
        sigma = math.sqrt(sum((r - mu) ** 2 for r in window) / len(window))
        adv = []
        for g in range(args.groups):
            r = torch.tensor(rewards[g * args.group_size:(g + 1) * args.group_size], dtype=torch.float64)
            sm = ((r - mu) / sigma).clamp(-k, k) if sigma > 0 else torch.sign(r - mu) * k
            a = torch.zeros_like(sm) if sm.numel() < 2 or sm.std().item() < 1e-6 else (sm - sm.mean()) / sm.std()
            adv += a.tolist()
        ids = torch.tensor([s[0] + s[1] for s in samples], dtype=torch.int64)
        behav = torch.tensor([s[2] for s in samples], dtype=torch.float32)
        adv = torch.tensor(adv, dtype=torch.float32)
        n = len(samples)
        micro = [list(range(j * n // args.micro_batches, (j + 1) * n // args.micro_batches))
                 for j in range(args.micro_batches)]
        parts = []
        # One optimizer step a batch: the proximal policy is the one trained,
        # before its step, so its log-probabilities are the trained
        # forward's, detached (TRL's GRPO with one iteration; crucible's
        # trainer likewise): no forward of its own.
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for idx in micro:
                x = ids[idx].to(dev, non_blocking=True)
                ref = None
                if args.kl_beta > 0:
                    with base_only() if base_only else contextlib.nullcontext():
                        ref = logprobs(reference if reference is not None else model, x).float()
                parts.append((x, ref, behav[idx].to(dev), adv[idx].to(dev)))
        opt.zero_grad(set_to_none=False)
        total = 0.0
        for x, ref, b, a in parts:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logp = logprobs(model, x).float()
                prox = logp.detach()
                ratio = torch.exp(logp - prox)
                au = a.unsqueeze(-1)
                surrogate = -torch.min(ratio * au, ratio.clamp(1 - eps_low, 1 + eps_high) * au)
                per_token = torch.exp(prox - b).clamp(max=cap) * surrogate
                if ref is not None:
                    d = ref - logp
                    per_token = per_token + args.kl_beta * (torch.exp(d) - d - 1)
                loss = per_token.mean(-1).sum() / n  # every token real: the sequence mean
            loss.backward()
            total += loss.item()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        return total, int(ids.numel())

    losses, times, tokens = [], [], 0
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss, n_tokens = step()
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        losses.append(loss)
        if i >= args.warmup:
            times.append(dt)
            tokens += n_tokens
    free, total = torch.cuda.mem_get_info()
    print(json.dumps(dict(bench="grpo", impl=impl, world=1, groups=args.groups, group_size=args.group_size,
                          prompt=args.prompt, completion=args.completion, micro_batches=args.micro_batches,
                          kl_beta=args.kl_beta, steps=args.steps, tokens_per_step=tokens / args.steps,
                          seconds_per_step=sum(times) / args.steps, tokens_per_second=tokens / sum(times),
                          step_seconds=times, losses=losses, torch=torch.__version__, lora_rank=args.lora_rank,
                          lora_alpha=args.lora_alpha, activation_checkpointing=args.activation_checkpointing,
                          proximal_forward=False, parameters=parameters, device_memory_used_gib=(total - free) / 2**30,
                          torch_max_allocated_gib=torch.cuda.max_memory_allocated() / 2**30)), flush=True)


BF16_ROOF = 989e12  # H100/H200 SXM dense bf16 FLOP/s, the roof the model-FLOPs share is counted against


def work_per_token(r):
    """FLOPs a token the step really does, in units of N (the parameters):
    the proximal forward (2, where the step runs one: rows before the
    fifteenth session all did), the reference forward for the KL (2, when
    kl_beta > 0), the trained forward (2), its backward (4; 2 with LoRA,
    where the frozen base gets no weight gradients) and the recomputed
    forward under activation checkpointing (2). The model-FLOPs share
    counts 6 whatever the configuration, as MFU figures do."""
    return ((2 if r.get("proximal_forward", True) else 0) + (2 if r.get("kl_beta", 0) > 0 else 0) + 2 +
            (2 if r.get("lora_rank") else 4) + (2 if r.get("activation_checkpointing") else 0))


def table(path):
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    g = [r for r in rows if r["bench"] == "grpo"]
    if g:
        r0 = g[0]
        print(f"GRPO step, Qwen2-shaped (random weights), bf16 autocast over fp32 weights, "
              f"{r0['groups']} groups x {r0['group_size']} samples per GPU, {r0['prompt']} prompt + "
              f"{r0['completion']} completion tokens, {r0['micro_batches']} micro-batches, kl_beta {r0['kl_beta']}; "
              f"model FLOPs share = 6 N tokens/s over {BF16_ROOF / 1e12:.0f} TFLOP/s; hardware FLOPs share = "
              f"the step's own k N a token (work_per_token) over the same roof")
        print("| implementation | parameters | LoRA rank | checkpointing | GPUs | tokens/step | s/step | tokens/s | "
              "model FLOPs share | hardware FLOPs share (k) | device memory GiB | first loss |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in g:
            n = r.get("parameters", 0)
            per_gpu = r["tokens_per_second"] / r["world"] / BF16_ROOF
            share = 6 * n * per_gpu if n else float("nan")
            k = work_per_token(r)
            hardware = k * n * per_gpu if n else float("nan")
            print(f"| {r['impl']} | {n / 1e9:.2f} B | {r.get('lora_rank', 0)} | "
                  f"{'yes' if r.get('activation_checkpointing') else 'no'} | {r['world']} | "
                  f"{r['tokens_per_step']:.0f} | {r['seconds_per_step']:.3f} | {r['tokens_per_second']:.0f} | "
                  f"{share:.3f} | {hardware:.3f} ({k}) | {r.get('device_memory_used_gib', float('nan')):.1f} | "
                  f"{r['losses'][0]:.6f} |")
        # crucible against its peer of the same configuration, one GPU.
        key = lambda r: (r.get("parameters", 0), r.get("lora_rank", 0), bool(r.get("activation_checkpointing")))
        ones = [r for r in g if r["world"] == 1]
        for r in ones:
            if r["impl"] != "crucible":
                continue
            peers = [q for q in ones if q["impl"] != "crucible" and key(q) == key(r)]
            for q in peers:
                print(f"crucible / {q['impl']} tokens/s, {key(r)[0] / 1e9:.2f} B, LoRA rank {key(r)[1]}, "
                      f"checkpointing {'on' if key(r)[2] else 'off'}: "
                      f"{r['tokens_per_second'] / q['tokens_per_second']:.3f}x")
        # Data-parallel scaling: the full-weight rows of the shape the NCCL ranks ran.
        multi = [r for r in g if r["world"] > 1]
        dp = sorted((r for r in g if r["impl"] == "crucible" and not r.get("lora_rank") and
                     not r.get("activation_checkpointing") and multi and key(r)[0] == key(multi[0])[0]),
                    key=lambda r: r["world"])
        if len(dp) > 1 and dp[0]["world"] == 1:
            base = dp[0]["tokens_per_second"] / dp[0]["world"]
            print()
            print("| GPUs (NCCL ranks) | global batch (sequences) | tokens/s | per GPU | scaling efficiency |")
            print("|---|---|---|---|---|")
            for r in dp:
                eff = r["tokens_per_second"] / (r["world"] * base)
                print(f"| {r['world']} | {r['groups'] * r['group_size']} | {r['tokens_per_second']:.0f} | "
                      f"{r['tokens_per_second'] / r['world']:.0f} | {eff:.3f} |")
    p = [r for r in rows if r["bench"] == "publish"]
    if p:
        print()
        print("Publication to a rollout's loader on the same node (bf16 safetensors)")
        print("| what | mode | version | bytes | learner s | rollout receive s | rollout load s | total s |")
        print("|---|---|---|---|---|---|---|---|")
        for r in p:
            what = f"LoRA rank {r['lora_rank']} adapters" if r.get("lora_rank") else "full weights"
            print(f"| {what} | {r['mode']} | {r['version']} | {r['bytes'] / 1e6:.1f} MB | {r['learner_seconds']:.3f} | "
                  f"{r['receive_seconds']:.3f} | {r['load_seconds']:.3f} | {r['total_seconds']:.3f} |")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grpo")
    g.add_argument("--model", required=True)
    g.add_argument("--groups", type=int, default=8)
    g.add_argument("--group-size", type=int, default=4)
    g.add_argument("--prompt", type=int, default=256)
    g.add_argument("--completion", type=int, default=768)
    g.add_argument("--micro-batches", type=int, default=4)
    g.add_argument("--kl-beta", type=float, default=0.04)
    g.add_argument("--steps", type=int, default=5)
    g.add_argument("--warmup", type=int, default=2)
    g.add_argument("--lora-rank", type=int, default=0, help="LoRA on every projection, the base frozen (0: full)")
    g.add_argument("--lora-alpha", type=float, default=16.0)
    g.add_argument("--activation-checkpointing", action="store_true")
    t = sub.add_parser("table")
    t.add_argument("file")
    args = ap.parse_args()
    if args.cmd == "grpo":
        grpo(args)
    else:
        table(args.file)


if __name__ == "__main__":
    sys.exit(main())
