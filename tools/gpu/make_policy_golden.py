#!/usr/bin/env python3
"""Golden data for crucible's policy (tokenizer, checkpoints, logits).

Run on a machine with transformers, tokenizers, torch and safetensors (no
network needed: everything is built from scratch here):

    python3 tools/gpu/make_policy_golden.py --out tests/data/policy

It writes one folder per name in GOLDEN_NAMES (keep in step with
actors/policy/policy_golden.test.cpp), each with tokenizer.json and golden.json,
and for the two models also config.json and safetensors weights:

  tok_qwen2_style        NFC + Split(Qwen2 regex) + ByteLevel, special tokens
  tok_gpt2_style         ByteLevel (GPT-2 regex), Llama-3 BOS template, ignore_merges
  tok_gpt2_prefix_space  NFKC, ByteLevel(add_prefix_space), lstrip/rstrip/single_word tokens
  qwen2_tiny_sharded     Qwen2, fp32, untied, sharded with model.safetensors.index.json
  llama_tiny_tied        Llama, bf16 weights, tied embeddings

golden.json holds: "encodings" (text, ids with and without special tokens,
decoded text with and without special tokens); for models also "config",
"shards", "tensors" (dtype, shape, float64 sum and abs sum), "prompts" (ids and
fp32 logits at every position, computed on CPU from the saved weights upcast to
fp32) and "greedy" (16 greedy tokens per prompt with their fp32 log-probs and
the top-1/top-2 logit margin). manifest.json is written last; from then on
the C++ golden tests require every folder. Total size is kept under 2 MB.
"""
import argparse
import json
import os
import shutil
import sys

GOLDEN_NAMES = ["qwen2_tiny_sharded", "llama_tiny_tied", "tok_qwen2_style", "tok_gpt2_style", "tok_gpt2_prefix_space"]
MAX_TOTAL_BYTES = 2_000_000
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")

CORPUS = [
    "__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {",
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "    if (i < n) { c[i] = a[i] + b[i]; }",
    "}",
    "__shared__ float tile[32][33]; __syncthreads(); float acc = 0.0f;",
    "for (int k = 0; k < K; k += 32) { acc += tile[threadIdx.y][k] * tile[k][threadIdx.x]; }",
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    "def add(a, b):\n    return a + b\n",
    "## Performance Analysis\nThe kernel is memory bound: 2 loads and 1 store per element.",
    "## Algorithm Design\nUse vectorized float4 loads and a grid-stride loop.",
    "## Code Implementation\n```cpp\n#include <cuda_runtime.h>\n```",
    "The quick brown fox jumps over the lazy dog. It's 12:45 and we'll measure 1234567 ops/s.",
    "They're sure you've seen it; I'm not, she'd say. Don't stop 3.14159 2,718 1e-5.",
    "Hello world! Hello, world? hello WORLD...",
    "漢字と仮名が混じった日本語の文章。中文句子也在这里。한국어 문장도 있습니다.",
    "Ελληνικά και русский текст, עברית, العربية, हिन्दी.",
    "emoji 😀😃👍🏽 and café naïve résumé façade coöperate",
    "\t\tindented with tabs\n    and spaces    \n\n\n",
]
CORPUS = CORPUS * 20

AWKWARD = [
    "", " ", "  ", "\n", "\t", "hello world", " leading space", "trailing space ", "multiple   spaces   here",
    "tabs\tand\t\ttabs", "new\nline\r\nwindows\n\n\nmany\n", "it's I'm we'll they've you'd she'S HE'LL 'tis",
    "digits 0 12 345 6789 1234567890", "3.14159 and 2,718 and 1e-5", "CJK 漢字 中文 日本語 한국어",
    "emoji 😀👍🏽👨‍👩‍👧 🇫🇷", "combining e\u0301 a\u0300 n\u0303 (decomposed)", "precomposed é à ñ",
    "ﬁ ligature ① ² ｆｕｌｌ", "NBSP\u00a0here and\u3000ideographic", "NEL\u0085line", "zero\u200bwidth",
    "nul\u0000byte", "ÀÉÎÕÜ çÇ ß ẞ", "Ελληνικά русский עברית العربية हिन्दी",
    "<|endoftext|>", "<|im_start|>user\nhi<|im_end|>", "text<|endoftext|>text", "<|im_start|",
    "<|begin_of_text|>twice", "<tool_call>{}</tool_call>",
    "__global__ void add(float* a, const float* b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) a[i] += b[i];\n}",
    "a  <mask>  b", "<sep>  x", "say yes, eyes, yes", "Hello World and hello world",
]


def byte_level_bpe(vocab_size, normalizer, pre_tokenizer, post_processor, special, added=(), ignore_merges=False):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(CORPUS, trainer=trainer)
    # Like Qwen2 and Llama 3: special tokens come after the trained vocabulary.
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in special])
    if added:
        tok.add_tokens(list(added))
    if post_processor is not None:
        tok.post_processor = post_processor(tok)
    j = json.loads(tok.to_str())
    if ignore_merges:
        j["model"]["ignore_merges"] = True
        tok = Tokenizer.from_str(json.dumps(j))
    return tok


def make_tokenizers():
    from tokenizers import AddedToken, Regex, normalizers, pre_tokenizers, processors

    qwen = byte_level_bpe(
        480, normalizers.NFC(),
        pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        lambda t: processors.ByteLevel(trim_offsets=False),
        ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        added=[AddedToken("<tool_call>", special=False, normalized=False),
               AddedToken("</tool_call>", special=False, normalized=False)])
    gpt2 = byte_level_bpe(
        480, None, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        lambda t: processors.TemplateProcessing(
            single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
            special_tokens=[("<|begin_of_text|>", t.token_to_id("<|begin_of_text|>"))]),
        ["<|begin_of_text|>", "<|end_of_text|>"], ignore_merges=True)
    prefix = byte_level_bpe(
        400, normalizers.Sequence([normalizers.NFKC()]), pre_tokenizers.ByteLevel(add_prefix_space=True),
        None, ["<|endoftext|>"],
        added=[AddedToken("<mask>", lstrip=True, special=True, normalized=False),
               AddedToken("<sep>", rstrip=True, special=True, normalized=False),
               AddedToken("yes", single_word=True, special=False, normalized=False),
               AddedToken("Hello World", special=False, normalized=True)])
    return {"tok_qwen2_style": qwen, "tok_gpt2_style": gpt2, "tok_gpt2_prefix_space": prefix}


def encodings(tok):
    out = []
    for text in AWKWARD:
        ids = tok.encode(text).ids
        out.append({
            "text": text,
            "ids": ids,
            "ids_no_special": tok.encode(text, add_special_tokens=False).ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
        })
    return out


def tensor_summary(folder):
    import torch
    from safetensors import safe_open

    files = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    tensors = {}
    for f in files:
        with safe_open(os.path.join(folder, f), framework="pt") as st:
            for name in st.keys():
                t = st.get_tensor(name)
                d = t.to(torch.float64)
                tensors[name] = {"dtype": {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}[t.dtype],
                                 "shape": list(t.shape), "sum": d.sum().item(), "abs_sum": d.abs().sum().item()}
    return len(files), dict(sorted(tensors.items()))


def logits_and_greedy(folder, tok, prompts, new_tokens=16):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder).float().eval()  # saved weights, upcast to fp32, CPU
    out_prompts, out_greedy = [], []
    with torch.no_grad():
        for text in prompts:
            ids = tok.encode(text).ids
            logits = model(torch.tensor([ids])).logits[0].float()
            out_prompts.append({"text": text, "ids": ids,
                                "logits": [[float(f"{v:.7g}") for v in row] for row in logits.tolist()]})
            seq, chosen, logprobs, margins = list(ids), [], [], []
            for _ in range(new_tokens):  # greedy, full recompute each step: the reference
                last = model(torch.tensor([seq])).logits[0, -1].float()
                top2 = torch.topk(last, 2)
                nxt = int(top2.indices[0])
                logprobs.append(float(torch.log_softmax(last, -1)[nxt]))
                margins.append(float(top2.values[0] - top2.values[1]))
                chosen.append(nxt)
                seq.append(nxt)
            out_greedy.append({"prompt_ids": ids, "ids": chosen, "logprobs": logprobs, "top2_margin": margins})
    return out_prompts, out_greedy


def randomise_all_parameters(model):
    """Every parameter random, biases and norms included (transformers
    initialises biases to 0 and norms to 1, which would test nothing)."""
    import torch

    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p, dtype=torch.float32).to(p.dtype))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn_like(p, dtype=torch.float32).to(p.dtype))
            else:
                p.copy_(0.1 * torch.randn_like(p, dtype=torch.float32).to(p.dtype))
        for name, p in model.named_parameters():
            flat = p.detach().float().flatten()
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                sys.exit(f"parameter {name} is constant after randomisation")


def make_model(kind, folder, tok, seed):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    common = dict(vocab_size=tok.get_vocab_size(with_added_tokens=True), hidden_size=64, intermediate_size=128,
                  num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                  initializer_range=0.1)
    if kind == "qwen2":
        config = Qwen2Config(**common, rope_theta=1_000_000.0, rms_norm_eps=1e-6, tie_word_embeddings=False,
                             bos_token_id=None, eos_token_id=tok.token_to_id("<|endoftext|>"))
        model = Qwen2ForCausalLM(config).float()
        randomise_all_parameters(model)
        model.save_pretrained(folder, safe_serialization=True, max_shard_size="150KB")
        if not os.path.exists(os.path.join(folder, "model.safetensors.index.json")):
            sys.exit(f"{folder}: expected a sharded checkpoint")
    else:
        config = LlamaConfig(**common, rope_theta=10_000.0, rms_norm_eps=1e-5, tie_word_embeddings=True,
                             bos_token_id=tok.token_to_id("<|begin_of_text|>"),
                             eos_token_id=[tok.token_to_id("<|end_of_text|>")])
        model = LlamaForCausalLM(config)
        randomise_all_parameters(model)
        model = model.to(torch.bfloat16)
        model.save_pretrained(folder, safe_serialization=True)
    from transformers import AutoConfig

    saved = AutoConfig.from_pretrained(folder)  # what transformers itself reads back
    theta = getattr(saved, "rope_theta", None)
    if theta is None:  # transformers 5 keeps it in rope_parameters
        theta = saved.rope_parameters["rope_theta"]
    return {"arch": kind, "hidden_size": saved.hidden_size, "num_hidden_layers": saved.num_hidden_layers,
            "num_attention_heads": saved.num_attention_heads, "num_key_value_heads": saved.num_key_value_heads,
            "vocab_size": saved.vocab_size, "tie_word_embeddings": bool(saved.tie_word_embeddings),
            "rope_theta": float(theta), "rms_norm_eps": float(saved.rms_norm_eps)}


PROMPTS = {
    "qwen2": ["<|im_start|>user\nWrite a CUDA kernel<|im_end|>\n", "def add(a, b):", "Hello"],
    "llama": ["__global__ void", "The quick brown fox", "x"],
}


def roundtrip(saved_root, golden_root):
    """Loads each checkpoint crucible saved under saved_root/<name> (for the
    model names of GOLDEN_NAMES) into transformers and compares, on CPU in
    fp32, its prompt logits with golden_root/<name>/golden.json and its
    tensors with the original ones. Prints one JSON line per model; exits 1
    when any differs."""
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    def tensors(folder):
        out = {}
        for f in sorted(os.listdir(folder)):
            if f.endswith(".safetensors"):
                with safe_open(os.path.join(folder, f), framework="pt") as st:
                    for k in st.keys():
                        out[k] = st.get_tensor(k)
        return out

    failed = False
    for name in ("qwen2_tiny_sharded", "llama_tiny_tied"):
        saved = os.path.join(saved_root, name)
        if not os.path.isdir(saved):
            print(json.dumps({"roundtrip": name, "ok": False, "error": f"{saved} is missing"}))
            failed = True
            continue
        with open(os.path.join(golden_root, name, "golden.json"), encoding="utf-8") as f:
            golden = json.load(f)
        model = AutoModelForCausalLM.from_pretrained(saved).float().eval()
        worst = 0.0
        with torch.no_grad():
            for prompt in golden["prompts"]:
                logits = model(torch.tensor([prompt["ids"]])).logits[0].float()
                worst = max(worst, float((logits - torch.tensor(prompt["logits"])).abs().max()))
        original, written = tensors(os.path.join(golden_root, name)), tensors(saved)
        same_names = sorted(original) == sorted(written)
        same_tensors = same_names and all(original[k].dtype == written[k].dtype and torch.equal(original[k], written[k])
                                          for k in original)
        ok = worst <= 1e-4 and same_tensors
        failed |= not ok
        print(json.dumps({"roundtrip": name, "ok": ok, "max_abs_logit_error": worst, "same_tensor_names": same_names,
                          "identical_tensors": same_tensors}))
    return 1 if failed else 0


# The benchmarks' shapes, random bf16 weights: Qwen2.5-0.5B's (issue 6), and
# Qwen2.5-3B's, Qwen2-7B's, Qwen2.5-14B's and -32B's (issue 21's real sizes).
def qwen2_shape(vocab, hidden, intermediate, layers, heads, kv_heads, tied):
    """A Qwen2 config's sizes, with what the family shares (positions, RoPE, norm)."""
    return dict(vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
                num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=32768,
                rope_theta=1_000_000.0, rms_norm_eps=1e-6, tie_word_embeddings=tied)


BENCH_SHAPES = {
    "0.5b": qwen2_shape(151936, 896, 4864, 24, 14, 2, True),
    "3b": qwen2_shape(151936, 2048, 11008, 36, 16, 2, True),
    "7b": qwen2_shape(152064, 3584, 18944, 28, 28, 4, False),
    "14b": qwen2_shape(152064, 5120, 13824, 48, 40, 8, False),
    "32b": qwen2_shape(152064, 5120, 27648, 64, 40, 8, False),
}


def bench_model(folder, shape="0.5b"):
    """Makes (once) a random model of a BENCH_SHAPES shape in bf16 under
    folder, with the small Qwen2-style tokenizer (the benchmark feeds token
    ids); made in bf16, on the GPU where there is one (a 32B is 65 GB)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    if os.path.exists(os.path.join(folder, "config.json")):
        return folder
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    config = Qwen2Config(**BENCH_SHAPES[shape], initializer_range=0.02, eos_token_id=0, bos_token_id=None)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    randomise_all_parameters(model)
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizers()["tok_qwen2_style"].save(os.path.join(folder, "tokenizer.json"))
    return folder


def bench_transformers(folder, batches, prompt_tokens, new_tokens, shape="0.5b"):
    """transformers' generate() (greedy, always new_tokens long) on the bench
    model in bf16 on CUDA, one JSON line per batch size in the format of
    `crucible-policy bench-generate`; then the device's copy bandwidth."""
    import time

    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).cuda().eval()
    gen = torch.Generator().manual_seed(1234)

    def run(ids, n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    for batch in batches:
        ids = torch.randint(0, BENCH_SHAPES[shape]["vocab_size"], (batch, prompt_tokens), generator=gen).cuda()
        torch.cuda.reset_peak_memory_stats()
        run(ids, 4)
        first = run(ids, 1)
        full = run(ids, new_tokens)
        free, total = torch.cuda.mem_get_info()
        print(json.dumps({"impl": "transformers", "device": "cuda", "batch": batch, "prompt_tokens": prompt_tokens,
                          "new_tokens": new_tokens, "seconds": full, "tokens_per_s": batch * new_tokens / full,
                          "prefill_s": first, "decode_step_ms": 1000 * (full - first) / (new_tokens - 1),
                          "device_memory_used_gib": (total - free) / 2**30,
                          "torch_max_allocated_gib": torch.cuda.max_memory_allocated() / 2**30}), flush=True)
    # Copy bandwidth: read + write of a 1 GiB buffer, best of 10.
    a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(10):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        b.copy_(a)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"impl": "copy", "bandwidth_gb_s": 2 * a.numel() / best / 1e9}), flush=True)


def bench_table(lines, shape="0.5b"):
    """One table from the JSON lines of both benchmarks: tokens/s, decode step,
    memory, speed-up over transformers, and the fraction of the
    memory-bandwidth floor (weights + KV cache read per decode step, at the
    mean context length, over the measured copy bandwidth)."""
    rows = [json.loads(line) for line in lines if line.strip().startswith("{")]
    bandwidth = next((r["bandwidth_gb_s"] for r in rows if r.get("impl") == "copy"), None)
    c = BENCH_SHAPES[shape]
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    per_layer = (c["hidden_size"] * head_dim * (c["num_attention_heads"] + 2 * c["num_key_value_heads"]) +
                 head_dim * (c["num_attention_heads"] + 2 * c["num_key_value_heads"]) +
                 c["num_attention_heads"] * head_dim * c["hidden_size"] + 3 * c["hidden_size"] * c["intermediate_size"] +
                 2 * c["hidden_size"])
    weight_bytes = 2 * (c["num_hidden_layers"] * per_layer + c["vocab_size"] * c["hidden_size"] + c["hidden_size"])
    hf = {r["batch"]: r for r in rows if r.get("impl") == "transformers"}
    print(f"{'impl':<17}{'batch':>6}{'tokens/s':>11}{'step ms':>9}{'prefill s':>10}{'mem GiB':>9}{'x HF':>7}{'floor':>8}")
    for r in sorted((r for r in rows if r.get("impl") in ("crucible", "crucible-fused", "crucible-eager", "transformers")), key=lambda r: (r["batch"], r["impl"])):
        context = r["prompt_tokens"] + r["new_tokens"] / 2
        kv_bytes = r["batch"] * context * c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * head_dim * 2
        floor_ms = 1000 * (weight_bytes + kv_bytes) / (bandwidth * 1e9) if bandwidth else float("nan")
        speedup = r["tokens_per_s"] / hf[r["batch"]]["tokens_per_s"] if r["batch"] in hf else float("nan")
        print(f"{r['impl']:<17}{r['batch']:>6}{r['tokens_per_s']:>11.1f}{r['decode_step_ms']:>9.2f}{r['prefill_s']:>10.3f}"
              f"{r['device_memory_used_gib']:>9.2f}{speedup:>7.2f}{floor_ms / r['decode_step_ms']:>8.1%}")
    if bandwidth:
        print(f"copy bandwidth {bandwidth:.0f} GB/s; weights {weight_bytes / 1e9:.3f} GB read per decode step")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "policy"))
    parser.add_argument("--roundtrip", metavar="DIR",
                        help="compare checkpoints crucible saved under DIR/<model name> with the golden data in --out")
    parser.add_argument("--bench", metavar="DIR", help="make the bench model (--bench-shape) in DIR (once) and "
                                                      "run transformers' generate() on it")
    parser.add_argument("--bench-shape", choices=sorted(BENCH_SHAPES), default="0.5b",
                        help="the bench model's shape: Qwen2.5-0.5B's or Qwen2-7B's (also for --bench-table)")
    parser.add_argument("--bench-model-only", action="store_true", help="with --bench: only make the model")
    parser.add_argument("--batches", default="1,8,64",
                        help="transformers' batch sizes; empty: only the copy bandwidth")
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--new-tokens", type=int, default=512)
    parser.add_argument("--bench-table", metavar="JSONL", help="print the benchmark table from JSON lines")
    args = parser.parse_args()
    if args.roundtrip:
        sys.exit(roundtrip(os.path.abspath(args.roundtrip), os.path.abspath(args.out)))
    if args.bench:
        bench_model(os.path.abspath(args.bench), args.bench_shape)
        if not args.bench_model_only:
            bench_transformers(os.path.abspath(args.bench), [int(b) for b in args.batches.split(",") if b],
                               args.prompt_tokens, args.new_tokens, args.bench_shape)
        return
    if args.bench_table:
        with open(args.bench_table, encoding="utf-8") as f:
            bench_table(f.readlines(), args.bench_shape)
        return
    make_golden(os.path.abspath(args.out))


def make_golden(out):
    import tokenizers
    import torch
    import transformers

    os.makedirs(out, exist_ok=True)
    versions = {"tokenizers": tokenizers.__version__, "transformers": transformers.__version__, "torch": torch.__version__}
    toks = make_tokenizers()
    models = {"qwen2_tiny_sharded": ("qwen2", "tok_qwen2_style"), "llama_tiny_tied": ("llama", "tok_gpt2_style")}

    for name in GOLDEN_NAMES:
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        golden = {"name": name, "versions": versions}
        if name in models:
            kind, tok_name = models[name]
            tok = toks[tok_name]
            for seed in range(100):  # a seed whose greedy steps are not near-ties
                golden["config"] = make_model(kind, folder, tok, seed)
                tok.save(os.path.join(folder, "tokenizer.json"))
                prompts, greedy = logits_and_greedy(folder, tok, PROMPTS[kind])
                if min(m for g in greedy for m in g["top2_margin"]) > 1e-3:
                    break
                for f in os.listdir(folder):
                    os.remove(os.path.join(folder, f))
            golden.update(kind="model", seed=seed, tokenizer=tok_name, prompts=prompts, greedy=greedy)
            golden["shards"], golden["tensors"] = tensor_summary(folder)
        else:
            tok = toks[name]
            tok.save(os.path.join(folder, "tokenizer.json"))
            golden["kind"] = "tokenizer"
        golden["encodings"] = encodings(tok)
        with open(os.path.join(folder, "golden.json"), "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")

    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    if total > MAX_TOTAL_BYTES:
        sys.exit(f"{out}: {total} bytes, more than the {MAX_TOTAL_BYTES} allowed; shrink the models or prompts")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"names": GOLDEN_NAMES, "versions": versions, "total_bytes": total}, f, indent=2)
        f.write("\n")
    print(f"wrote {len(GOLDEN_NAMES)} golden folders, {total} bytes, under {out}")


if __name__ == "__main__":
    main()
