// Batched generation with a KV cache, and the torch-free policy facade.
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/decode_runner.hpp"
#include "actors/policy/policy.hpp"

namespace crucible::policy {
namespace {

std::string check_options(const generation_options& o) {
  const auto& s = o.sampling;
  if (o.max_new_tokens < 0) return "max_new_tokens is negative";
  if (o.slots < 0) return "slots is negative";
  if (s.greedy) return {};
  if (!(s.temperature > 0)) return "temperature must be > 0 (use greedy for argmax decoding)";
  if (!(s.top_p > 0 && s.top_p <= 1)) return "top_p must be in (0, 1]";
  if (s.top_k < 0) return "top_k must be >= 0";
  return {};
}

// Chooses one token per row of `logits` [batch, vocab] (fp32) and returns
// (tokens [batch] int64, log-probs [batch] fp32) on the logits' device.
// `uniform` [batch] fp32 on the logits' device: one draw per row (sampling only).
// `fused`: on CUDA, greedy or without top_k and top_p cuts, one fused kernel
// (fused_choose) where the build has it.
std::pair<torch::Tensor, torch::Tensor> choose(const torch::Tensor& logits, const sampling_options& s,
                                               const torch::Tensor& uniform, bool fused) {
  const bool cut = !s.greedy && ((s.top_k > 0 && s.top_k < logits.size(-1)) || s.top_p < 1.0);
  if (fused && !cut && logits.is_cuda()) {
    auto chosen = fused_choose(logits, s.greedy ? 1.0 : s.temperature, s.greedy ? torch::Tensor() : uniform);
    if (chosen.first.defined()) return chosen;
  }
  if (s.greedy) {
    auto tokens = logits.argmax(-1);
    auto lp = torch::log_softmax(logits, -1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
    return {tokens, lp};
  }
  auto scaled = s.temperature == 1.0 ? logits : logits / s.temperature;
  auto logp = torch::log_softmax(scaled, -1);
  const std::int64_t vocab = logits.size(-1);
  torch::Tensor candidates, order;  // candidate logits and their token ids
  if (s.top_k > 0 && s.top_k < vocab) {
    std::tie(candidates, order) = scaled.topk(s.top_k, -1, /*largest=*/true, /*sorted=*/true);
  } else if (s.top_p < 1.0) {
    std::tie(candidates, order) = scaled.sort(-1, /*descending=*/true);
  } else {
    candidates = scaled;  // no cut: any order will do
  }
  auto probs = candidates.softmax(-1);
  if (s.top_p < 1.0) {
    // Descending order: drop a token when the tokens before it already
    // reach top_p (transformers' TopPLogitsWarper); the first always stays.
    auto before = probs.cumsum(-1) - probs;
    probs = probs.masked_fill(before >= s.top_p, 0.0);
  }
  // Inverse-CDF draw with the row's uniform.
  const auto& u = uniform;
  auto cdf = probs.cumsum(-1);
  auto target = (u * cdf.select(-1, cdf.size(-1) - 1)).unsqueeze(-1);
  auto index = (cdf < target).sum(-1, /*keepdim=*/true).clamp_max(cdf.size(-1) - 1);
  auto tokens = order.defined() ? order.gather(-1, index) : index;
  auto lp = logp.gather(-1, tokens).squeeze(-1);
  return {tokens.squeeze(-1), lp};
}

// Every row's uniforms for `steps` steps, [steps, batch] fp32 on `device`:
// row i draws from its own torch CPU generator seeded with seed + i, one
// draw per step, so drawing them all up front gives the same sequence as
// drawing one per step (and no host-to-device copy per step).
torch::Tensor draw_uniforms(std::uint64_t seed, std::int64_t batch, std::int64_t steps, const torch::Device& device) {
  auto u = torch::empty({steps, batch}, torch::kFloat32);
  auto a = u.accessor<float, 2>();
  for (std::int64_t b = 0; b < batch; ++b) {
    auto gen = at::detail::createCPUGenerator(seed + static_cast<std::uint64_t>(b));
    auto* impl = gen.get<at::CPUGeneratorImpl>();
    std::lock_guard<std::mutex> lock(gen.mutex());
    for (std::int64_t t = 0; t < steps; ++t) {
      a[t][b] = static_cast<float>(static_cast<double>(impl->random64() >> 11) * 0x1.0p-53);
    }
  }
  return u.to(device);
}

// Per-prompt bookkeeping on the host.
struct row_state {
  generation out;
  bool done = false;
};

// When a row ends: an eos id, a completed stop string, max_new_tokens.
struct stop_rules {
  std::set<std::int32_t> eos;
  const std::vector<std::string>& strings;
  std::size_t longest_string = 0;
  std::int64_t max_new_tokens = 0;
  const tokenizer& tok;

  // Appends one chosen token to `r`; true when it finishes r.
  bool accept(row_state& r, std::int32_t token, float logprob) const {
    r.out.ids.push_back(token);
    r.out.logprobs.push_back(logprob);
    if (eos.count(token)) {
      r.out.finish = finish_reason::eos;
    } else if (longest_string > 0 && completes_stop_string(r.out.ids)) {
      r.out.finish = finish_reason::stop_string;
    } else if (static_cast<std::int64_t>(r.out.ids.size()) == max_new_tokens) {
      r.out.finish = finish_reason::length;
    } else {
      return false;
    }
    r.done = true;
    return true;
  }

 private:
  bool completes_stop_string(const std::vector<std::int32_t>& ids) const {
    // Each token decodes to at least one byte, so the last longest_string
    // tokens hold any stop string completed by this one.
    const std::size_t window = std::min(ids.size(), longest_string);
    const std::string tail = tok.decode(std::span<const std::int32_t>(ids).last(window), {.skip_special_tokens = false});
    for (const auto& stop : strings) {
      if (!stop.empty() && tail.find(stop) != std::string::npos) return true;
    }
    return false;
  }
};

// One batch of rows decoding together over one KV cache (a pass of
// generate). Every row writes its next token at the same cache column; a
// row's prompt sits in the columns just before the column of its first
// token, everything before it masked. When a row finishes and a prompt is
// waiting, that prompt is prefilled alone and its keys and values copied in
// front of the current column (refill), so the slot decodes again at once;
// the prompts refilled at one step are prefilled together.
class decode_pass {
 public:
  decode_pass(causal_lm& model, const std::vector<std::vector<std::int32_t>>& prompts, std::vector<row_state>& rows,
              const generation_options& options, const stop_rules& rules, const torch::Tensor& uniforms,
              std::int64_t longest, std::int64_t capacity, std::int64_t& steps_before)
      : model_(model), prompts_(prompts), rows_(rows), options_(options), rules_(rules), uniforms_(uniforms),
        longest_(longest), capacity_(capacity), steps_before_(steps_before), device_(model.device()),
        flush_every_(device_.is_cuda() ? 16 : 1) {}

  // Decodes prompts[next, next + slots) and, with refills, those after them
  // while the cache has room; advances `next` past every prompt started.
  void run(std::size_t& next, std::int64_t slots) {
    const auto n = static_cast<std::int64_t>(prompts_.size());
    const std::int64_t batch = std::min<std::int64_t>(slots, n - static_cast<std::int64_t>(next));
    row_of_.assign(static_cast<std::size_t>(batch), -1);
    start_of_.assign(static_cast<std::size_t>(batch), 0);
    // Left padding: every prompt of the wave ends at column longest_.
    auto ids = torch::zeros({batch, longest_}, torch::kInt64);
    auto key_mask = torch::ones({batch, capacity_}, torch::kBool);
    auto base = torch::empty({batch}, torch::kInt64);
    auto offsets = torch::empty({batch}, torch::kInt64);
    auto ids_a = ids.accessor<std::int64_t, 2>();
    auto mask_a = key_mask.accessor<bool, 2>();
    for (std::int64_t b = 0; b < batch; ++b, ++next) {
      const auto& p = prompts_[next];
      const std::int64_t pad = longest_ - static_cast<std::int64_t>(p.size());
      for (std::size_t j = 0; j < p.size(); ++j) ids_a[b][pad + static_cast<std::int64_t>(j)] = p[j];
      for (std::int64_t j = 0; j < pad; ++j) mask_a[b][j] = false;
      base.data_ptr<std::int64_t>()[b] = static_cast<std::int64_t>(p.size());
      offsets.data_ptr<std::int64_t>()[b] = static_cast<std::int64_t>(next);  // its k-th draw at k * n + next
      row_of_[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(next);
      rows_[next].out.start_step = steps_before_;
    }
    key_mask_ = key_mask.to(device_);
    base_ = base.to(device_);
    offsets_ = offsets.to(device_);

    // On CUDA with graphs: a runner with a preallocated cache and the decode
    // step captured as a graph; otherwise the cached forward, step by step.
    const bool graphs = device_.is_cuda() && options_.cuda_graphs && cuda_graphs_available();
    struct runner_return {
      causal_lm& model;
      std::shared_ptr<decode_runner>& runner;
      ~runner_return() {
        if (runner) model.return_runner(std::move(runner));
      }
    } give_back{model_, runner_};
    kv_cache own_cache;
    cache_ = &own_cache;
    if (graphs) {
      runner_ = model_.take_runner(batch, capacity_, options_.fused_kernels);
      runner_->start(key_mask_.narrow(1, 0, longest_));
      cache_ = &runner_->cache;
      key_mask_ = runner_->key_mask;  // refills edit the graph's own mask
    } else {
      own_cache = model_.make_cache(batch, capacity_);
    }
    auto prompt_mask = key_mask_.narrow(1, 0, longest_);
    auto hidden = model_.hidden_states(ids.to(device_), positions_from_mask(prompt_mask), prompt_mask, cache_);
    auto logits = model_.logits(hidden.select(1, longest_ - 1));

    // Chosen tokens wait on the device and reach the host every flush_every_
    // steps (one synchronisation instead of one per step on CUDA), and at
    // the step where a row reaches max_new_tokens. Finished rows keep
    // decoding until then or until a prompt takes their slot, so that the
    // batch keeps its shape and the cache its layout; their tokens are
    // ignored.
    const std::int64_t drawn = options_.max_new_tokens * static_cast<std::int64_t>(prompts_.size());
    for (std::int64_t step = 0;; ++step) {
      torch::Tensor u;
      if (uniforms_.defined()) u = uniforms_.index_select(0, (offsets_ + step * n).clamp(0, drawn - 1));
      auto [tokens, logprobs] = choose(logits, options_.sampling, u, runner_ && options_.fused_kernels);
      pending_tokens_.push_back(tokens);
      pending_logprobs_.push_back(logprobs);
      if (static_cast<std::int64_t>(pending_tokens_.size()) >= flush_every_ || step == next_length_stop()) {
        flush();
        tokens = refill(tokens, next, step);
      }
      if (live() == 0) break;
      ++steps_before_;
      // Each live row's next position is base + step (refill resets base).
      auto positions = base_ + step;
      if (runner_) {
        logits = runner_->step(tokens, positions, longest_ + step);
      } else {
        hidden = model_.hidden_states(tokens.unsqueeze(1), positions.unsqueeze(1),
                                      key_mask_.narrow(1, 0, longest_ + step + 1), cache_);
        logits = model_.logits(hidden.select(1, 0));
      }
    }
  }

 private:
  row_state* row_in(std::size_t slot) {
    const auto r = row_of_[slot];
    return r < 0 ? nullptr : &rows_[static_cast<std::size_t>(r)];
  }

  std::int64_t live() {
    std::int64_t count = 0;
    for (std::size_t b = 0; b < row_of_.size(); ++b) {
      if (auto* r = row_in(b); r && !r->done) ++count;
    }
    return count;
  }

  // The step at which the earliest live row chooses its last allowed token.
  std::int64_t next_length_stop() {
    std::int64_t at = std::numeric_limits<std::int64_t>::max();
    for (std::size_t b = 0; b < row_of_.size(); ++b) {
      if (auto* r = row_in(b); r && !r->done) at = std::min(at, start_of_[b] + options_.max_new_tokens - 1);
    }
    return at;
  }

  void flush() {
    auto host_tokens = torch::stack(pending_tokens_).to(torch::kCPU);
    auto host_logprobs = torch::stack(pending_logprobs_).to(torch::kCPU);
    pending_tokens_.clear();
    pending_logprobs_.clear();
    for (std::int64_t k = 0; k < host_tokens.size(0); ++k) {
      const auto* t = host_tokens[k].data_ptr<std::int64_t>();
      const auto* lp = host_logprobs[k].data_ptr<float>();
      for (std::size_t b = 0; b < row_of_.size(); ++b) {
        if (auto* r = row_in(b); r && !r->done) rules_.accept(*r, static_cast<std::int32_t>(t[b]), lp[b]);
      }
    }
  }

  // Gives every finished slot the next waiting prompt whose whole
  // completion fits in the cache from this step's column on (again, for a
  // slot whose new row finished at its first token). Returns the step's
  // tokens with each refilled slot's first token in place.
  torch::Tensor refill(torch::Tensor tokens, std::size_t& next, std::int64_t step) {
    const std::int64_t column = longest_ + step;  // where this step's tokens are written
    if (column + options_.max_new_tokens > capacity_) return tokens;
    bool copied = false;
    while (next < prompts_.size()) {
      std::vector<std::pair<std::size_t, std::size_t>> starts;  // (slot, prompt)
      for (std::size_t b = 0; b < row_of_.size() && next < prompts_.size(); ++b) {
        if (auto* r = row_in(b); !r || r->done) starts.emplace_back(b, next++);
      }
      if (starts.empty()) break;
      if (!copied) tokens = tokens.clone(), copied = true;
      start(starts, step, tokens);
    }
    return tokens;
  }

  // Prefills the prompts of `starts` together (left-padded to the longest
  // of them), copies each one's keys and values into its slot just before
  // this step's column, and chooses their first tokens there: one forward
  // and one host synchronisation for every slot refilled at this step.
  void start(const std::vector<std::pair<std::size_t, std::size_t>>& starts, std::int64_t step, torch::Tensor& tokens) {
    const auto k = static_cast<std::int64_t>(starts.size());
    const std::int64_t column = longest_ + step;
    std::int64_t width = 0;
    for (const auto& [b, index] : starts) width = std::max(width, static_cast<std::int64_t>(prompts_[index].size()));
    auto ids = torch::zeros({k, width}, torch::kInt64);
    auto mask = torch::ones({k, width}, torch::kBool);
    auto row_masks = torch::zeros({k, capacity_}, torch::kBool);
    auto ids_a = ids.accessor<std::int64_t, 2>();
    auto mask_a = mask.accessor<bool, 2>();
    auto row_a = row_masks.accessor<bool, 2>();
    std::vector<std::int64_t> slots, lengths, indices;
    for (std::int64_t j = 0; j < k; ++j) {
      const auto& [b, index] = starts[static_cast<std::size_t>(j)];
      const auto& p = prompts_[index];
      const auto length = static_cast<std::int64_t>(p.size());
      const std::int64_t pad = width - length;
      for (std::int64_t t = 0; t < length; ++t) ids_a[j][pad + t] = p[static_cast<std::size_t>(t)];
      for (std::int64_t t = 0; t < pad; ++t) mask_a[j][t] = false;
      for (std::int64_t t = column - length; t < capacity_; ++t) row_a[j][t] = true;
      slots.push_back(static_cast<std::int64_t>(b));
      lengths.push_back(length);
      indices.push_back(static_cast<std::int64_t>(index));
    }
    mask = mask.to(device_);
    kv_cache fresh = model_.make_cache(k, width);
    auto hidden = model_.hidden_states(ids.to(device_), positions_from_mask(mask), mask, &fresh);
    auto logits = model_.logits(hidden.select(1, width - 1));
    for (std::size_t layer = 0; layer < fresh.keys.size(); ++layer) {
      for (std::int64_t j = 0; j < k; ++j) {
        const auto length = lengths[static_cast<std::size_t>(j)];
        const auto slot = slots[static_cast<std::size_t>(j)];
        cache_->keys[layer][slot].narrow(1, column - length, length).copy_(fresh.keys[layer][j].narrow(1, width - length, length));
        cache_->values[layer][slot].narrow(1, column - length, length).copy_(fresh.values[layer][j].narrow(1, width - length, length));
      }
    }
    const auto n = static_cast<std::int64_t>(prompts_.size());
    auto slot_t = torch::tensor(slots, torch::kInt64).to(device_);
    auto index_t = torch::tensor(indices, torch::kInt64);
    key_mask_.index_put_({slot_t}, row_masks.to(device_));  // in place: a CUDA graph reads this mask
    torch::Tensor u;
    if (uniforms_.defined()) u = uniforms_.index_select(0, index_t.to(uniforms_.device()));  // each row's first draw
    auto [first, logprob] = choose(logits, options_.sampling, u, runner_ && options_.fused_kernels);
    // Each row's k-th token is chosen at step + k with its own k-th draw,
    // and fed at position length + k.
    tokens.index_put_({slot_t}, first);
    base_.index_put_({slot_t}, (torch::tensor(lengths, torch::kInt64) - step).to(device_));
    offsets_.index_put_({slot_t}, (index_t - step * n).to(device_));
    auto host_first = first.to(torch::kCPU);
    auto host_logprob = logprob.to(torch::kCPU);
    for (std::int64_t j = 0; j < k; ++j) {
      const auto b = static_cast<std::size_t>(slots[static_cast<std::size_t>(j)]);
      const auto i = indices[static_cast<std::size_t>(j)];
      row_of_[b] = i;
      start_of_[b] = step;
      auto& r = rows_[static_cast<std::size_t>(i)];
      r.out.start_step = steps_before_;
      rules_.accept(r, static_cast<std::int32_t>(host_first[j].item<std::int64_t>()), host_logprob[j].item<float>());
    }
  }

  causal_lm& model_;
  const std::vector<std::vector<std::int32_t>>& prompts_;
  std::vector<row_state>& rows_;
  const generation_options& options_;
  const stop_rules& rules_;
  const torch::Tensor& uniforms_;  // [max_new_tokens * prompts]: prompt i's k-th draw at k * prompts + i
  const std::int64_t longest_, capacity_;
  std::int64_t& steps_before_;  // decode steps of the call so far
  const torch::Device device_;
  const std::int64_t flush_every_;
  std::vector<std::int64_t> row_of_;    // per slot: the prompt decoding there, -1 none
  std::vector<std::int64_t> start_of_;  // per slot: the pass step of its row's first token
  torch::Tensor key_mask_, base_, offsets_;
  std::shared_ptr<decode_runner> runner_;
  kv_cache* cache_ = nullptr;
  std::vector<torch::Tensor> pending_tokens_, pending_logprobs_;
};

}  // namespace

std::string_view to_string(finish_reason reason) {
  switch (reason) {
    case finish_reason::eos: return "eos";
    case finish_reason::stop_string: return "stop_string";
    case finish_reason::length: return "length";
  }
  return "?";
}

result<std::vector<generation>> generate(causal_lm& model, const tokenizer& tok,
                                         const std::vector<std::vector<std::int32_t>>& prompts,
                                         const generation_options& options) {
  if (auto problem = check_options(options); !problem.empty()) {
    return make_error(errc::invalid_argument, "generate: " + problem);
  }
  const auto& config = model.config();
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty()) return make_error(errc::invalid_argument, "generate: prompt " + std::to_string(i) + " is empty");
    for (auto id : prompts[i]) {
      if (id < 0 || id >= config.vocab_size) {
        return make_error(errc::invalid_argument, "generate: prompt " + std::to_string(i) + " has token id " +
                                                      std::to_string(id) + " outside the vocabulary [0, " +
                                                      std::to_string(config.vocab_size) + ")");
      }
    }
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(prompts[i].size()));
  }
  const auto n = static_cast<std::int64_t>(prompts.size());
  std::vector<row_state> rows(prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) rows[i].out.prompt_ids = prompts[i];
  if (n > 0 && options.max_new_tokens > 0) {
    stop_rules rules{{}, options.stop_strings, 0, options.max_new_tokens, tok};
    for (auto id : options.eos_token_ids ? *options.eos_token_ids
                                         : std::vector<std::int32_t>(config.eos_token_ids.begin(), config.eos_token_ids.end())) {
      rules.eos.insert(id);
    }
    for (const auto& s : options.stop_strings) rules.longest_string = std::max(rules.longest_string, s.size());
    try {
      c10::InferenceMode inference;
      const torch::Device device = model.device();
      const std::int64_t slots = options.slots > 0 ? std::min(options.slots, n) : n;
      // With more prompts than slots, the cache holds two full completions
      // per slot after the prompts, so that finished slots take waiting
      // prompts; a pass ends when none fits and the next starts afresh.
      std::int64_t capacity = longest + options.max_new_tokens * (slots < n ? 2 : 1);
      if (device.is_cuda() && options.cuda_graphs && cuda_graphs_available()) capacity = runner_capacity(capacity);
      const auto uniforms = options.sampling.greedy
                                ? torch::Tensor()
                                : draw_uniforms(options.sampling.seed, n, options.max_new_tokens, device).flatten();
      std::int64_t steps = 0;
      for (std::size_t next = 0; next < prompts.size();) {
        decode_pass(model, prompts, rows, options, rules, uniforms, longest, capacity, steps).run(next, slots);
      }
    } catch (const c10::Error& e) {
      return make_error(errc::internal, std::string("generate: LibTorch: ") + e.what_without_backtrace());
    }
  }
  std::vector<generation> out;
  for (auto& r : rows) {
    r.out.text = tok.decode(r.out.ids, {.skip_special_tokens = true});
    out.push_back(std::move(r.out));
  }
  return out;
}

token_batch make_token_batch(const std::vector<generation>& generations, const torch::Device& device) {
  std::int64_t prompt = 0, completion = 0;
  for (const auto& g : generations) {
    prompt = std::max<std::int64_t>(prompt, static_cast<std::int64_t>(g.prompt_ids.size()));
    completion = std::max<std::int64_t>(completion, static_cast<std::int64_t>(g.ids.size()));
  }
  const auto batch = static_cast<std::int64_t>(generations.size());
  auto ids = torch::zeros({batch, prompt + completion}, torch::kInt64);
  auto mask = torch::zeros({batch, prompt + completion}, torch::kBool);
  auto behaviour = torch::zeros({batch, completion}, torch::kFloat32);
  auto ids_a = ids.accessor<std::int64_t, 2>();
  auto mask_a = mask.accessor<bool, 2>();
  auto beh_a = behaviour.accessor<float, 2>();
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto& g = generations[static_cast<std::size_t>(b)];
    const std::int64_t pad = prompt - static_cast<std::int64_t>(g.prompt_ids.size());
    for (std::size_t j = 0; j < g.prompt_ids.size(); ++j) {
      ids_a[b][pad + static_cast<std::int64_t>(j)] = g.prompt_ids[j];
      mask_a[b][pad + static_cast<std::int64_t>(j)] = true;
    }
    for (std::size_t j = 0; j < g.ids.size(); ++j) {
      ids_a[b][prompt + static_cast<std::int64_t>(j)] = g.ids[j];
      mask_a[b][prompt + static_cast<std::int64_t>(j)] = true;
      beh_a[b][static_cast<std::int64_t>(j)] = g.logprobs[j];
    }
  }
  token_batch out;
  out.first_target = prompt;
  out.input_ids = ids.to(device);
  out.attention_mask = mask.to(device);
  out.completion_mask = mask.narrow(1, prompt, completion).to(device);
  out.behaviour_logprobs = behaviour.to(device);
  return out;
}

// ---- policy ----------------------------------------------------------------

policy::policy(std::shared_ptr<causal_lm> model, tokenizer tok) : model_(std::move(model)), tokenizer_(std::move(tok)) {
  CRUCIBLE_CHECK(model_ != nullptr, "a policy needs a network");
}

result<policy> policy::load(const std::filesystem::path& dir, const model_placement& placement) {
  auto tok = tokenizer::load(dir / "tokenizer.json");
  if (!tok) return tok.error();
  auto model = load_causal_lm(dir, placement);
  if (!model) return model.error();
  return policy(std::move(*model), std::move(*tok));
}

result<std::vector<generation>> policy::generate(const std::vector<std::vector<std::int32_t>>& prompts,
                                                 const generation_options& options) const {
  return crucible::policy::generate(*model_, tokenizer_, prompts, options);
}

result<std::vector<generation>> policy::generate_text(const std::vector<std::string>& prompts,
                                                      const generation_options& options) const {
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& p : prompts) {
    auto encoded = tokenizer_.encode(p);
    if (!encoded) return encoded.error();
    ids.push_back(std::move(*encoded));
  }
  return generate(ids, options);
}

status policy::save(const std::filesystem::path& dir, save_options options) const {
  if (!options.tokenizer_from) {
    const std::filesystem::path source(tokenizer_.source());
    std::error_code ec;
    if (std::filesystem::is_regular_file(source, ec)) options.tokenizer_from = source.parent_path();
  }
  return save_causal_lm(*model_, dir, options);
}

const model_config& policy::config() const { return model_->config(); }

bool policy::fused_decode() const { return model_->fused_decode_available(); }

std::string policy::text() const {
  std::ostringstream s;
  s << "policy " << model_->config().text() << " on " << model_->device() << " in " << model_->compute_dtype();
  return s.str();
}

}  // namespace crucible::policy
