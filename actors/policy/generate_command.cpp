#include "actors/policy/generate_command.hpp"

#include <charconv>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "actors/policy/policy.hpp"

namespace crucible::policy {
namespace {

result<std::vector<std::int32_t>> parse_ids(const std::string& text) {
  std::vector<std::int32_t> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string_view part(text.data() + start, comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    std::int32_t id = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      return make_error(errc::invalid_argument, "--prompt-ids: \"" + std::string(part) + "\" is not a token id");
    }
    ids.push_back(id);
    start = comma + 1;
  }
  return ids;
}

result<generation_options> make_options(const generate_request& r) {
  generation_options o;
  o.max_new_tokens = r.max_new_tokens;
  o.stop_strings = r.stop;
  if (r.greedy) {
    if (r.temperature || r.seed || r.top_p != 1.0 || r.top_k != 0) {
      return make_error(errc::invalid_argument, "--greedy excludes --temperature, --top-p, --top-k and --seed");
    }
    o.sampling.greedy = true;
    return o;
  }
  if (!r.temperature) return make_error(errc::invalid_argument, "pass --greedy or --temperature T with --seed S");
  if (!r.seed) return make_error(errc::invalid_argument, "--temperature needs --seed S");
  o.sampling.temperature = *r.temperature;
  o.sampling.top_p = r.top_p;
  o.sampling.top_k = r.top_k;
  o.sampling.seed = *r.seed;
  return o;
}

}  // namespace

int run_generate(const generate_request& request, std::ostream& out, std::ostream& err) {
  auto fail = [&](const error& e) {
    err << "crucible generate: " << e.text() << "\n";
    return 1;
  };
  if (request.prompt.has_value() == request.prompt_ids.has_value()) {
    return fail(make_error(errc::invalid_argument, "pass exactly one of --prompt and --prompt-ids"));
  }
  auto options = make_options(request);
  if (!options) return fail(options.error());
  model_placement placement;
  placement.device = request.device;
  if (!request.dtype.empty()) {
    if (request.dtype == "float32") placement.compute_dtype = dtype::f32;
    else if (request.dtype == "bfloat16") placement.compute_dtype = dtype::bf16;
    else if (request.dtype == "float16") placement.compute_dtype = dtype::f16;
    else return fail(make_error(errc::invalid_argument, "--dtype must be float32, bfloat16 or float16"));
  }
  auto loaded = policy::load(request.model_dir, placement);
  if (!loaded) return fail(loaded.error());
  if (!request.adapter_dir.empty())
    if (auto s = loaded->load_adapters(request.adapter_dir); !s) return fail(s.error());
  std::vector<std::int32_t> ids;
  if (request.prompt_ids) {
    auto parsed = parse_ids(*request.prompt_ids);
    if (!parsed) return fail(parsed.error());
    ids = std::move(*parsed);
  } else {
    auto encoded = loaded->tok().encode(*request.prompt);
    if (!encoded) return fail(encoded.error());
    ids = std::move(*encoded);
  }
  auto generations = loaded->generate({ids}, *options);
  if (!generations) return fail(generations.error());
  const generation& g = generations->front();
  if (request.json) {
    nlohmann::json j = {{"prompt_ids", g.prompt_ids}, {"ids", g.ids},   {"logprobs", g.logprobs},
                        {"text", g.text},             {"finish_reason", std::string(to_string(g.finish))}};
    out << j.dump() << "\n";
  } else {
    out << "prompt_ids:";
    for (auto id : g.prompt_ids) out << " " << id;
    out << "\nids:";
    for (auto id : g.ids) out << " " << id;
    out << "\nlogprobs:";
    for (auto lp : g.logprobs) out << " " << lp;
    out << "\nfinish_reason: " << to_string(g.finish) << "\ntext: " << g.text << "\n";
  }
  return 0;
}

void add_generate_command(CLI::App& app) {
  auto r = std::make_shared<generate_request>();
  CLI::App* cmd = app.add_subcommand("generate", "Complete a prompt with a Hugging Face checkpoint (Qwen2 / Llama)");
  cmd->add_option("--model", r->model_dir, "Checkpoint folder: config.json, safetensors, tokenizer.json")->required();
  cmd->add_option("--prompt", r->prompt, "Prompt text (encoded with special tokens added)");
  cmd->add_option("--prompt-ids", r->prompt_ids, "Prompt token ids, comma-separated");
  cmd->add_option("--max-new-tokens", r->max_new_tokens, "Most tokens to generate")->capture_default_str();
  cmd->add_flag("--greedy", r->greedy, "Pick the most likely token each step");
  cmd->add_option("--temperature", r->temperature, "Sample from softmax(logits / T)");
  cmd->add_option("--top-p", r->top_p, "Nucleus cut (1 = off)")->capture_default_str();
  cmd->add_option("--top-k", r->top_k, "Keep the K most likely tokens (0 = off)")->capture_default_str();
  cmd->add_option("--seed", r->seed, "Sampling seed");
  cmd->add_option("--stop", r->stop, "Stop after a token completing this string (repeatable)");
  cmd->add_option("--device", r->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--adapter", r->adapter_dir, "PEFT adapter folder (LoRA) applied onto the model");
  cmd->add_option("--dtype", r->dtype, "float32, bfloat16 or float16 (default: float32 on CPU, bfloat16 on CUDA)");
  cmd->add_flag("--json", r->json, "Print one JSON object: prompt_ids, ids, logprobs, text, finish_reason");
  cmd->callback([r] {
    if (int code = run_generate(*r, std::cout, std::cerr); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace crucible::policy
