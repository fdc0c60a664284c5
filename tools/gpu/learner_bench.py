#!/usr/bin/env python3
"""The PyTorch eager peer of crucible's GRPO step, and the learner's tables.

  learner_bench.py grpo --model DIR [same options as `learner_bench grpo`]
      The GRPO step that actors/learner/trainer.cpp takes, written in PyTorch
      eager Python over transformers' Qwen2 (sdpa attention): reward smoothing
      over a window, group advantages, proximal and reference log-probs
      recomputed without gradients, per-token clipped ratio with the truncated
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


def grpo(args):
    import torch
    from transformers import Qwen2ForCausalLM

    dev = torch.device("cuda")
    model = Qwen2ForCausalLM.from_pretrained(args.model, dtype=torch.float32, attn_implementation="sdpa").to(dev)
    model.config.use_cache = False
    model.train()
    reference = copy.deepcopy(model).eval() if args.kl_beta > 0 else None
    if reference is not None:
        for p in reference.parameters():
            p.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
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
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for idx in micro:
                x = ids[idx].to(dev, non_blocking=True)
                prox = logprobs(model, x).float()
                ref = logprobs(reference, x).float() if reference is not None else None
                parts.append((x, prox, ref, behav[idx].to(dev), adv[idx].to(dev)))
        opt.zero_grad(set_to_none=False)
        total = 0.0
        for x, prox, ref, b, a in parts:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logp = logprobs(model, x).float()
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
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
    print(json.dumps(dict(bench="grpo", impl="pytorch-eager", world=1, groups=args.groups, group_size=args.group_size,
                          prompt=args.prompt, completion=args.completion, micro_batches=args.micro_batches,
                          kl_beta=args.kl_beta, steps=args.steps, tokens_per_step=tokens / args.steps,
                          seconds_per_step=sum(times) / args.steps, tokens_per_second=tokens / sum(times),
                          step_seconds=times, losses=losses, torch=torch.__version__)), flush=True)


def table(path):
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    g = [r for r in rows if r["bench"] == "grpo"]
    one = {r["impl"]: r for r in g if r["world"] == 1}
    if g:
        r0 = g[0]
        print(f"GRPO step, 0.5B-shaped Qwen2 (random weights), bf16 autocast over fp32 weights, "
              f"{r0['groups']} groups x {r0['group_size']} samples per GPU, {r0['prompt']} prompt + "
              f"{r0['completion']} completion tokens, {r0['micro_batches']} micro-batches, kl_beta {r0['kl_beta']}")
        print(f"| implementation | GPUs | tokens/step | s/step | tokens/s | first loss |")
        print(f"|---|---|---|---|---|---|")
        for r in g:
            print(f"| {r['impl']} | {r['world']} | {r['tokens_per_step']:.0f} | {r['seconds_per_step']:.3f} | "
                  f"{r['tokens_per_second']:.0f} | {r['losses'][0]:.6f} |")
        if "crucible" in one and "pytorch-eager" in one:
            print(f"crucible / PyTorch eager tokens/s on one H200: "
                  f"{one['crucible']['tokens_per_second'] / one['pytorch-eager']['tokens_per_second']:.3f}x")
        dp = sorted((r for r in g if r["impl"] == "crucible"), key=lambda r: r["world"])
        if len(dp) > 1:
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
        print(f"Publication to a rollout's loader on the same node ({p[0]['bytes'] / 1e9:.2f} GB of bf16 safetensors)")
        print("| mode | version | learner s | rollout receive s | rollout load s | total s |")
        print("|---|---|---|---|---|---|")
        for r in p:
            print(f"| {r['mode']} | {r['version']} | {r['learner_seconds']:.3f} | {r['receive_seconds']:.3f} | "
                  f"{r['load_seconds']:.3f} | {r['total_seconds']:.3f} |")


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
    t = sub.add_parser("table")
    t.add_argument("file")
    args = ap.parse_args()
    if args.cmd == "grpo":
        grpo(args)
    else:
        table(args.file)


if __name__ == "__main__":
    sys.exit(main())
