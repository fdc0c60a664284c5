// The static side of decoding for one batch size and cache capacity: input
// buffers that every step overwrites in place, a KV cache preallocated to the
// full capacity, and, on CUDA with LibTorch 2 or newer, the CUDA graph of
// causal_lm::decode_step captured at the first step and replayed after (one
// launch instead of a thousand small kernels, which is what bounds a decode
// step of a small model). generate() takes one from the model
// (causal_lm::take_runner), uses it for one call on one thread, and gives it
// back; runners are reused across calls of the same shape. LibTorch inside.
#pragma once

#include <cstdint>
#include <memory>

#include "actors/policy/causal_lm.hpp"

namespace crucible::policy {

// True when this build can capture CUDA graphs (LibTorch >= 2 built with CUDA).
bool cuda_graphs_available();

// The capacity a runner is made with for `capacity` positions: rounded up to
// a multiple of 512, so that calls of nearby lengths share a graph.
std::int64_t runner_capacity(std::int64_t capacity);

struct decode_runner {
  // fused_kernels: decode_step's fused CUDA kernels (causal_lm.hpp).
  decode_runner(causal_lm& model, std::int64_t batch, std::int64_t capacity, bool fused_kernels);
  ~decode_runner();
  decode_runner(const decode_runner&) = delete;
  decode_runner& operator=(const decode_runner&) = delete;

  // Prepares a new generation call: zeroes the cache, sets its length to 0
  // and copies the prompt mask `key_mask` [batch, n <= capacity] bool into the
  // static mask (slots past n: true, the tokens generated later).
  void start(const torch::Tensor& key_mask);

  // One step: writes `tokens` [batch] int64 at cache slot `slot` with RoPE
  // positions `positions` [batch] int64, and returns the next logits
  // [batch, vocab] fp32. With a graph the returned tensor is the graph's
  // output buffer: valid until the next step.
  torch::Tensor step(const torch::Tensor& tokens, const torch::Tensor& positions, std::int64_t slot);

  causal_lm& model;
  const std::int64_t batch, capacity;
  const bool fused_kernels;
  kv_cache cache;
  torch::Tensor ids, positions, slot, key_mask;  // static inputs on the model's device
  torch::Tensor logits;                           // the graph's output
  struct graph_state;                             // the CUDA graph, when captured
  std::unique_ptr<graph_state> graph;
};

}  // namespace crucible::policy
