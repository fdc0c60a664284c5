// Batched generation with a KV cache, and the torch-free policy facade.
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
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
  if (s.greedy) return {};
  if (!(s.temperature > 0)) return "temperature must be > 0 (use greedy for argmax decoding)";
  if (!(s.top_p > 0 && s.top_p <= 1)) return "top_p must be in (0, 1]";
  if (s.top_k < 0) return "top_k must be >= 0";
  return {};
}

// Chooses one token per row of `logits` [batch, vocab] (fp32) and returns
// (tokens [batch] int64, log-probs [batch] fp32) on the logits' device.
// `uniform` [batch] fp32 on the logits' device: one draw per row (sampling only).
std::pair<torch::Tensor, torch::Tensor> choose(const torch::Tensor& logits, const sampling_options& s,
                                               const torch::Tensor& uniform) {
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

// Per-row bookkeeping on the host.
struct row_state {
  generation out;
  bool done = false;
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
  const std::int64_t batch = static_cast<std::int64_t>(prompts.size());
  std::vector<row_state> rows(prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) rows[i].out.prompt_ids = prompts[i];
  if (batch == 0 || options.max_new_tokens == 0) {
    std::vector<generation> out;
    for (auto& r : rows) out.push_back(std::move(r.out));
    return out;
  }
  std::vector<std::int32_t> eos_list;
  for (auto id : options.eos_token_ids ? *options.eos_token_ids
                                       : std::vector<std::int32_t>(config.eos_token_ids.begin(), config.eos_token_ids.end())) {
    eos_list.push_back(id);
  }
  const std::set<std::int32_t> eos(eos_list.begin(), eos_list.end());
  std::size_t longest_stop = 0;
  for (const auto& s : options.stop_strings) longest_stop = std::max(longest_stop, s.size());

  try {
    c10::InferenceMode inference;
    const torch::Device device = model.device();
    const std::int64_t new_tokens = options.max_new_tokens, capacity = longest + new_tokens;
    // Left padding: every prompt ends at column `longest`.
    auto ids = torch::zeros({batch, longest}, torch::kInt64);
    auto key_mask = torch::ones({batch, capacity}, torch::kBool);
    auto lengths = torch::empty({batch}, torch::kInt64);
    auto ids_a = ids.accessor<std::int64_t, 2>();
    auto mask_a = key_mask.accessor<bool, 2>();
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto& p = prompts[static_cast<std::size_t>(b)];
      const std::int64_t pad = longest - static_cast<std::int64_t>(p.size());
      for (std::size_t j = 0; j < p.size(); ++j) ids_a[b][pad + static_cast<std::int64_t>(j)] = p[j];
      for (std::int64_t j = 0; j < pad; ++j) mask_a[b][j] = false;
      lengths.data_ptr<std::int64_t>()[b] = static_cast<std::int64_t>(p.size());
    }
    key_mask = key_mask.to(device);
    lengths = lengths.to(device);
    const bool sampling = !options.sampling.greedy;
    auto uniforms = sampling ? draw_uniforms(options.sampling.seed, batch, new_tokens, device) : torch::Tensor();

    // On CUDA with graphs: a runner with a preallocated cache and the decode
    // step captured as a graph; otherwise the cached forward, step by step.
    const bool graphs = device.is_cuda() && options.cuda_graphs && cuda_graphs_available();
    std::shared_ptr<decode_runner> runner;
    struct runner_return {
      causal_lm& model;
      std::shared_ptr<decode_runner>& runner;
      ~runner_return() {
        if (runner) model.return_runner(std::move(runner));
      }
    } give_back{model, runner};
    kv_cache own_cache;
    kv_cache* cache = &own_cache;
    if (graphs) {
      runner = model.take_runner(batch, runner_capacity(capacity));
      runner->start(key_mask.narrow(1, 0, longest));
      cache = &runner->cache;
    } else {
      own_cache = model.make_cache(batch, capacity);
    }
    auto positions = positions_from_mask(key_mask.narrow(1, 0, longest));
    auto hidden = model.hidden_states(ids.to(device), positions, key_mask.narrow(1, 0, longest), cache);
    auto logits = model.logits(hidden.select(1, longest - 1));

    // Chosen tokens wait on the device and reach the host every `flush_every`
    // steps (one synchronisation instead of one per step on CUDA). Rows keep
    // decoding after they finish, so checking late changes no result: it only
    // costs the steps after the last row finished.
    const std::size_t flush_every = device.is_cuda() ? 16 : 1;
    std::vector<torch::Tensor> pending_tokens, pending_logprobs;
    std::size_t active = rows.size();
    auto flush = [&] {
      auto host_tokens = torch::stack(pending_tokens).to(torch::kCPU);
      auto host_logprobs = torch::stack(pending_logprobs).to(torch::kCPU);
      pending_tokens.clear();
      pending_logprobs.clear();
      for (std::int64_t k = 0; k < host_tokens.size(0); ++k) {
        const auto* t = host_tokens[k].data_ptr<std::int64_t>();
        const auto* lp = host_logprobs[k].data_ptr<float>();
        for (std::size_t b = 0; b < rows.size(); ++b) {
          auto& r = rows[b];
          if (r.done) continue;
          const auto token = static_cast<std::int32_t>(t[b]);
          r.out.ids.push_back(token);
          r.out.logprobs.push_back(lp[b]);
          if (eos.count(token)) {
            r.done = true;
            r.out.finish = finish_reason::eos;
          } else if (longest_stop > 0) {
            // Each token decodes to at least one byte, so the last longest_stop
            // tokens hold any stop string completed by this one.
            const std::size_t window = std::min(r.out.ids.size(), longest_stop);
            const std::string tail =
                tok.decode(std::span<const std::int32_t>(r.out.ids).last(window), {.skip_special_tokens = false});
            for (const auto& stop : options.stop_strings) {
              if (!stop.empty() && tail.find(stop) != std::string::npos) {
                r.done = true;
                r.out.finish = finish_reason::stop_string;
                break;
              }
            }
          }
          if (!r.done && static_cast<std::int64_t>(r.out.ids.size()) == new_tokens) {
            r.done = true;
            r.out.finish = finish_reason::length;
          }
          if (r.done) --active;
        }
      }
    };
    for (std::int64_t step = 0; step < new_tokens; ++step) {
      auto [tokens, logprobs] =
          choose(logits, options.sampling, sampling ? uniforms[step] : torch::Tensor());
      pending_tokens.push_back(tokens);
      pending_logprobs.push_back(logprobs);
      if (pending_tokens.size() >= flush_every || step + 1 == new_tokens) {
        flush();
        if (active == 0) break;
      }
      if (step + 1 == new_tokens) break;
      // Finished rows keep decoding (their tokens are ignored) so that the
      // batch keeps its shape and the cache its layout.
      auto step_positions = lengths + step;
      if (runner) {
        logits = runner->step(tokens, step_positions, longest + step);
      } else {
        hidden = model.hidden_states(tokens.unsqueeze(1), step_positions.unsqueeze(1),
                                     key_mask.narrow(1, 0, longest + step + 1), cache);
        logits = model.logits(hidden.select(1, 0));
      }
    }
  } catch (const c10::Error& e) {
    return make_error(errc::internal, std::string("generate: LibTorch: ") + e.what_without_backtrace());
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

std::string policy::text() const {
  std::ostringstream s;
  s << "policy " << model_->config().text() << " on " << model_->device() << " in " << model_->compute_dtype();
  return s.str();
}

}  // namespace crucible::policy
