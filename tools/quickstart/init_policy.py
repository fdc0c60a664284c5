#!/usr/bin/python3
"""Makes a tiny randomly initialised Qwen2-shaped policy as a Hugging Face
folder (config.json, model.safetensors, tokenizer.json) that crucible loads:
the quick-start's policy before stage 1. Uses Debian's python3-torch only for
random numbers; safetensors is written by hand (an 8-byte little-endian
header length, a JSON header, then the tensors' bytes).

    tools/quickstart/init_policy.py --tokenizer configs/quickstart/tokenizer/tokenizer.json --out RUN/policy-v0
"""
import argparse
import json
import pathlib
import shutil
import struct

import torch


def write_safetensors(path, tensors):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        t = tensors[name].contiguous().to(torch.float32)
        data = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json (its vocabulary size sets the model's)")
    ap.add_argument("--out", required=True, help="folder to write")
    ap.add_argument("--hidden", type=int, default=128, help="hidden size (128)")
    ap.add_argument("--layers", type=int, default=2, help="decoder layers (2)")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (4); 2 key/value heads")
    ap.add_argument("--context", type=int, default=1024, help="max_position_embeddings (1024)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    tok = json.loads(pathlib.Path(a.tokenizer).read_text())
    vocab = max(list(tok["model"]["vocab"].values()) + [t["id"] for t in tok["added_tokens"]]) + 1
    eos = next(t["id"] for t in tok["added_tokens"] if t["content"] == "<|endoftext|>")
    h, heads, kv, inter = a.hidden, a.heads, 2, 2 * a.hidden
    hd = h // heads
    config = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": h,
              "intermediate_size": inter, "num_hidden_layers": a.layers, "num_attention_heads": heads,
              "num_key_value_heads": kv, "vocab_size": vocab, "max_position_embeddings": a.context,
              "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "hidden_act": "silu",
              "torch_dtype": "float32", "bos_token_id": eos, "eos_token_id": eos}
    g = torch.Generator().manual_seed(a.seed)
    normal = lambda *shape: torch.randn(*shape, generator=g) * 0.02
    t = {"model.embed_tokens.weight": normal(vocab, h), "model.norm.weight": torch.ones(h)}
    for i in range(a.layers):
        p = f"model.layers.{i}."
        t.update({p + "input_layernorm.weight": torch.ones(h), p + "post_attention_layernorm.weight": torch.ones(h),
                  p + "self_attn.q_proj.weight": normal(heads * hd, h), p + "self_attn.q_proj.bias": torch.zeros(heads * hd),
                  p + "self_attn.k_proj.weight": normal(kv * hd, h), p + "self_attn.k_proj.bias": torch.zeros(kv * hd),
                  p + "self_attn.v_proj.weight": normal(kv * hd, h), p + "self_attn.v_proj.bias": torch.zeros(kv * hd),
                  p + "self_attn.o_proj.weight": normal(h, heads * hd), p + "mlp.gate_proj.weight": normal(inter, h),
                  p + "mlp.up_proj.weight": normal(inter, h), p + "mlp.down_proj.weight": normal(h, inter)})
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    write_safetensors(out / "model.safetensors", t)
    shutil.copy(a.tokenizer, out / "tokenizer.json")
    n = sum(x.numel() for x in t.values())
    print(f"{out}: {n} parameters, vocabulary {vocab}, eos {eos}")


if __name__ == "__main__":
    main()
