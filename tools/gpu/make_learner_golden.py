#!/usr/bin/env python3
"""Golden values for the learner's objectives, computed with PyTorch.

Writes tests/data/learner/objectives_golden.json: a fixed batch (rewards of two
groups, a reward window, per-token log-probs of the current, proximal,
behaviour and reference policies, a completion mask) and, for several
settings, the GRPO loss, its gradient with respect to the current log-probs,
the KL and clip-fraction diagnostics; plus SFT and REINFORCE losses and
gradients. The formulas are written here from the paper and AReaL
independently of crucible's C++ (actors/learner/objectives.cpp), which the
test learner_test compares against these numbers (1e-6).

Usage: python3 tools/gpu/make_learner_golden.py [--device cuda] [--out FILE]
(fp64 throughout, so CPU and GPU give the same digits.)
"""
import argparse
import json
import math
import os

import torch


def smooth(rewards, window, k):
    mu = sum(window) / len(window)
    sigma = math.sqrt(sum((r - mu) ** 2 for r in window) / len(window))
    r = torch.tensor(rewards, dtype=torch.float64)
    if sigma > 0:
        return ((r - mu) / sigma).clamp(-k, k), mu, sigma
    return (torch.sign(r - mu) * k), mu, sigma


def group_adv(r):
    if r.numel() < 2 or r.std().item() < 1e-6:
        return torch.zeros_like(r)
    return (r - r.mean()) / r.std()


def aggregate(x, mask, mode):
    m = mask.to(x.dtype)
    if mode == "token_mean":
        return (x * m).sum() / m.sum()
    lengths = m.sum(-1)
    per_seq = (x * m).sum(-1) / lengths.clamp_min(1)
    return per_seq.sum() / (lengths > 0).sum()


def grpo(logp, prox, behav, ref, adv, mask, eps_low, eps_high, beta, cap, mode):
    ratio = torch.exp(logp - prox)
    a = adv.unsqueeze(-1)
    unclipped = ratio * a
    clipped = ratio.clamp(1 - eps_low, 1 + eps_high) * a
    surrogate = -torch.min(unclipped, clipped)
    w = torch.exp(prox - behav)
    if cap is not None:
        w = w.clamp(max=cap)
    per_token = w * surrogate
    d = ref - logp
    kl = torch.exp(d) - d - 1
    if beta:
        per_token = per_token + beta * kl
    loss = aggregate(per_token, mask, mode)
    m = mask.bool()
    return loss, kl[m].mean().item(), (clipped < unclipped)[m].double().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "learner",
                                                  "objectives_golden.json"))
    args = ap.parse_args()
    dev = torch.device(args.device)
    g = torch.Generator().manual_seed(20261129)

    B, T = 6, 7
    lengths = [7, 5, 3, 7, 1, 4]
    mask = torch.zeros(B, T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    logp = -torch.rand(B, T, generator=g, dtype=torch.float64) * 3 - 0.05
    prox = logp + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.3
    behav = prox + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.5
    ref = logp + torch.randn(B, T, generator=g, dtype=torch.float64) * 0.4
    groups = [[0.0, 1.12, 2.5], [0.0, 0.0, 3.9]]  # two groups of three, speedup-like rewards
    window = [0.0, 1.0, 1.3, 0.0, 2.1, 0.9, 1.05, 0.0] + groups[0] + groups[1]
    k = 1.5
    adv = []
    smoothed_all = []
    for rewards in groups:
        s, mu, sigma = smooth(rewards, window, k)
        smoothed_all += s.tolist()
        adv += group_adv(s).tolist()
    adv = torch.tensor(adv, dtype=torch.float64)

    cases = []
    settings = [
        dict(name="paper defaults", eps_low=0.2, eps_high=0.2, beta=0.0, cap=None, mode="sequence_mean"),
        dict(name="asymmetric clip, token mean", eps_low=0.2, eps_high=0.28, beta=0.0, cap=None, mode="token_mean"),
        dict(name="truncated behaviour weight and KL", eps_low=0.2, eps_high=0.2, beta=0.04, cap=1.5,
             mode="sequence_mean"),
        dict(name="tight clip, cap, KL, token mean", eps_low=0.05, eps_high=0.1, beta=0.1, cap=1.2, mode="token_mean"),
    ]
    for s in settings:
        x = logp.clone().to(dev).requires_grad_(True)
        loss, kl, clip = grpo(x, prox.to(dev), behav.to(dev), ref.to(dev), adv.to(dev), mask.to(dev), s["eps_low"],
                              s["eps_high"], s["beta"], s["cap"], s["mode"])
        loss.backward()
        cases.append(dict(s, loss=loss.item(), kl=kl, clip_fraction=clip, grad=x.grad.cpu().tolist()))

    rewards01 = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    extra = {}
    for mode in ("sequence_mean", "token_mean"):
        x = logp.clone().to(dev).requires_grad_(True)
        sft = aggregate(-x, mask.to(dev), mode)
        sft.backward()
        extra["sft_" + mode] = dict(loss=sft.item(), grad=x.grad.cpu().tolist())
        x = logp.clone().to(dev).requires_grad_(True)
        rf = aggregate(-rewards01.to(dev).unsqueeze(-1) * x, mask.to(dev), mode)
        rf.backward()
        extra["reinforce_" + mode] = dict(loss=rf.item(), grad=x.grad.cpu().tolist())

    out = dict(
        made_by="tools/gpu/make_learner_golden.py with torch " + torch.__version__ + " on " + args.device,
        reward_clip=k, window=window, groups=groups, smoothed=smoothed_all, advantages=adv.tolist(),
        mask=mask.int().tolist(), logp=logp.tolist(), proximal=prox.tolist(), behaviour=behav.tolist(),
        reference=ref.tolist(), rewards01=rewards01.tolist(), grpo=cases, **extra)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
