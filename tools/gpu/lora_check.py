#!/usr/bin/env python3
"""LoRA: crucible's PEFT folders and merged checkpoints against transformers.

Issue 21 item 1: an adapter folder crucible writes (adapter_config.json,
adapter_model.safetensors) loads with peft.PeftModel.from_pretrained, a merged
checkpoint (crucible-policy merge-lora) loads with transformers alone, and
both give the logits of transformers' own LoRA arithmetic; crucible's
forward with the adapters applied onto the frozen base (what a rollout does)
gives the same log-probs.

Steps (each prints a line starting with "==="):
  1. a random Qwen2 base from the quick-start's config and tokenizer
     (crucible-policy init), fresh adapters with random B so that they matter
     (crucible-policy init-lora), and their merge (crucible-policy merge-lora);
  2. transformers: the base with the adapters through PEFT (or, without the
     peft package, the same arithmetic done here: W + lora_alpha / r * B @ A on
     every targeted projection) against the merged checkpoint, logits in fp32;
  3. crucible: greedy generation with --adapter and on the merged checkpoint;
     their log-probs against PEFT's for the same tokens (teacher-forced).

Usage: tools/gpu/lora_check.py --crucible-policy build-gpu/bin/crucible-policy
         [--work DIR] [--device cuda] [--rank 8] [--alpha 16] [--targets q_proj,...]
Exit 0 when every comparison is within tolerance (1e-4 absolute on fp32
logits and log-probs), 1 otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOLERANCE = 1e-4
failures = []


def run(*args):
    print("+", " ".join(args), flush=True)
    out = subprocess.run(args, check=True, capture_output=True, text=True)
    return out.stdout


def check(name, value, limit):
    ok = value <= limit
    print(f"{'ok' if ok else 'FAILED'}: {name}: {value:.3g} (limit {limit:g})", flush=True)
    if not ok:
        failures.append(name)


def with_adapters_by_hand(model, adapter_dir):
    """transformers' model with W += lora_alpha / r * B @ A, without peft."""
    from safetensors.torch import load_file

    config = json.load(open(os.path.join(adapter_dir, "adapter_config.json")))
    scale = config["lora_alpha"] / config["r"]
    tensors = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    params = dict(model.named_parameters())
    done = 0
    with torch.no_grad():
        for name, a in tensors.items():
            if ".lora_A." not in name:
                continue
            b = tensors[name.replace(".lora_A.", ".lora_B.")]
            target = name.replace("base_model.model.", "", 1).replace(".lora_A.weight", ".weight")
            w = params[target]
            w += (scale * (b.double() @ a.double())).to(w.dtype).to(w.device)
            done += 1
    print(f"applied {done} adapters by hand (scale {scale})")
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crucible-policy", required=True)
    ap.add_argument("--work", default="/tmp/crucible-lora-check")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=16)
    ap.add_argument("--targets", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    ap.add_argument("--tokens", type=int, default=24)
    args = ap.parse_args()
    tool = os.path.abspath(args.crucible_policy)
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base, adapter, merged = (os.path.join(work, n) for n in ("base", "adapter", "merged"))

    print("=== 1. base, adapters and merge by crucible")
    run(tool, "init", "--model", os.path.join(REPO, "configs/quickstart/policy"), "--out", base, "--seed", "1")
    run(tool, "init-lora", "--model", base, "--out", adapter, "--rank", str(args.rank), "--alpha", str(args.alpha),
        "--targets", args.targets, "--seed", "3", "--b-std", "0.05")
    run(tool, "merge-lora", "--model", base, "--adapter", adapter, "--out", merged, "--dtype", "float32")
    print(open(os.path.join(adapter, "adapter_config.json")).read())

    print("=== 2. transformers: PEFT on the base against the merged checkpoint")
    import transformers
    from transformers import AutoModelForCausalLM

    def load(path):
        return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32).to(args.device).eval()

    try:
        import peft

        lora_model = peft.PeftModel.from_pretrained(load(base), adapter).to(args.device).eval()
        how = f"peft {peft.__version__}"
    except ImportError:
        lora_model = with_adapters_by_hand(load(base), adapter)
        how = "the arithmetic by hand (no peft package)"
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, LoRA through {how}")
    merged_model = load(merged)
    base_model = load(base)
    gen = torch.Generator().manual_seed(0)
    vocab = merged_model.config.vocab_size
    prompt = torch.randint(3, vocab, (1, 12), generator=gen)
    with torch.no_grad():
        ids = prompt.to(args.device)
        want = lora_model(input_ids=ids).logits.float()
        got = merged_model(input_ids=ids).logits.float()
        plain = base_model(input_ids=ids).logits.float()
    moved = (want - plain).abs().max().item()
    print(f"the adapters move the logits by up to {moved:.3g}")
    if moved < 1e-3:
        failures.append("the adapters change nothing: the check would prove nothing")
        print("FAILED: the adapters change nothing")
    check("merged checkpoint (transformers) vs LoRA (transformers), logits max abs diff",
          (want - got).abs().max().item(), TOLERANCE)

    print("=== 3. crucible with --adapter (a rollout's frozen base) and on the merged checkpoint")
    prompt_ids = ",".join(str(int(t)) for t in prompt[0])
    common = ["--prompt-ids", prompt_ids, "--max-new-tokens", str(args.tokens), "--greedy", "--json",
              "--device", args.device, "--dtype", "float32"]
    with_adapter = json.loads(run(tool, "generate", "--model", base, "--adapter", adapter, *common))
    on_merged = json.loads(run(tool, "generate", "--model", merged, *common))
    full = torch.tensor([with_adapter["prompt_ids"] + with_adapter["ids"]], device=args.device)
    with torch.no_grad():
        logp = torch.log_softmax(lora_model(input_ids=full).logits.float(), -1)[0]
    n = len(with_adapter["prompt_ids"])
    reference = [logp[n - 1 + i, t].item() for i, t in enumerate(with_adapter["ids"])]
    greedy = [int(logp[n - 1 + i].argmax()) for i in range(len(with_adapter["ids"]))]
    print(f"crucible --adapter: {len(with_adapter['ids'])} tokens, greedy ids equal to transformers' argmax: "
          f"{greedy == with_adapter['ids']}")
    if greedy != with_adapter["ids"]:
        failures.append("greedy tokens differ")
    check("crucible --adapter vs transformers LoRA, log-probs max abs diff",
          max(abs(a - b) for a, b in zip(with_adapter["logprobs"], reference)), TOLERANCE)
    check("crucible merged vs crucible --adapter, log-probs max abs diff",
          max(abs(a - b) for a, b in zip(on_merged["logprobs"], with_adapter["logprobs"])) if
          on_merged["ids"] == with_adapter["ids"] else float("inf"), TOLERANCE)

    print("=== result:", "ok" if not failures else "FAILED: " + "; ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
