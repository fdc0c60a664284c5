#!/usr/bin/python3
"""Trains a small byte-level BPE tokenizer and writes it as a Hugging Face
tokenizer.json that crucible's tokenizer (actors/policy/tokenizer.hpp) reads.

For the quick-start's tiny policy: Hugging Face `tokenizers` is not in Debian
12, so this is a plain BPE trainer with the standard library only.

    tools/quickstart/train_bpe.py --vocab 1024 --out configs/quickstart/policy/tokenizer.json \
        configs/tasks/cpu configs/prompts/contrastive.md

Ids 0..255 are the 256 bytes (as GPT-2's printable characters), merges add
ids 256, 257, ... in order (the most frequent adjacent pair first; ties
broken by the pair's text, so the result is deterministic), and
<|endoftext|> comes last. Words are split with an ASCII version of GPT-2's
pattern (the runtime uses the ByteLevel pre-tokenizer with GPT-2's regex,
which splits ASCII text identically).
"""
import argparse
import collections
import json
import pathlib
import re

# GPT-2's pattern with \p{L} and \p{N} narrowed to ASCII letters and digits.
SPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
EOS = "<|endoftext|>"


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def read_texts(paths):
    texts = []
    for p in map(pathlib.Path, paths):
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        for f in files:
            if not f.is_file():
                continue
            if f.suffix == ".jsonl":  # a corpus: its prompts and completions
                for line in f.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        row = json.loads(line)
                        texts += [row.get("prompt", ""), row.get("completion", "")]
            elif f.suffix in (".py", ".md", ".txt"):
                texts.append(f.read_text(encoding="utf-8"))
    return texts


def train(texts, vocab_size):
    byte_char = bytes_to_unicode()
    words = collections.Counter()
    for t in texts:
        for w in SPLIT.findall(t):
            words[tuple(byte_char[b] for b in w.encode("utf-8"))] += 1
    words = {w: c for w, c in words.items()}
    merges = []
    vocab = {byte_char[b]: b for b in range(256)}
    while len(vocab) < vocab_size - 1:  # one place left for <|endoftext|>
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], [-ord(ch) for ch in kv[0][0] + " " + kv[0][1]]))[0]
        if pairs[best] < 2:
            break
        merged = best[0] + best[1]
        merges.append(best)
        if merged not in vocab:  # two pairs can spell the same token
            vocab[merged] = len(vocab)
        new_words = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + c
        words = new_words
    return vocab, merges


def tokenizer_json(vocab, merges):
    eos_id = len(vocab)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": eos_id, "content": EOS, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": dict(byte_level, trim_offsets=False),
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": dict(vocab, **{EOS: eos_id}), "merges": [[a, b] for a, b in merges]},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", type=int, default=1024, help="vocabulary size, <|endoftext|> included (1024)")
    ap.add_argument("--out", required=True, help="tokenizer.json to write")
    ap.add_argument("inputs", nargs="+", help="files or folders (*.py, *.md, *.txt, *.jsonl) to train on")
    a = ap.parse_args()
    if a.vocab < 258:
        ap.error("--vocab must be at least 258 (256 bytes, one merge, <|endoftext|>)")
    vocab, merges = train(read_texts(a.inputs), a.vocab)
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(tokenizer_json(vocab, merges), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(vocab) + 1} tokens ({len(merges)} merges)")


if __name__ == "__main__":
    main()
