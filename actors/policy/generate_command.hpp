// `crucible generate --model DIR (--prompt TEXT | --prompt-ids 1,2,3)
//   --max-new-tokens N (--greedy | --temperature T [--top-p P] [--top-k K] --seed S)
//   [--stop STR]... [--device cpu|cuda] [--adapter PEFT_DIR] [--json]`:
// loads the checkpoint folder DIR (with the LoRA adapters of PEFT_DIR), completes one prompt and prints the prompt
// ids, the new ids, their log-probs (see sampling_options in policy.hpp) and
// the decoded text. The CLI owner (runtime/cli/main.cpp) calls
// add_generate_command once on its app. No LibTorch in this header.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace crucible::policy {

struct generate_request {
  std::string model_dir;
  std::string adapter_dir;  // a PEFT adapter folder applied onto the model; "" = none
  std::optional<std::string> prompt;  // text, encoded with special tokens added
  std::optional<std::string> prompt_ids;  // "1,2,3"
  std::int64_t max_new_tokens = 64;
  bool greedy = false;
  std::optional<double> temperature;  // required unless greedy
  double top_p = 1.0;
  std::int64_t top_k = 0;
  std::optional<std::uint64_t> seed;  // required with temperature
  std::vector<std::string> stop;
  std::string device = "cpu";
  std::string dtype;  // "", "float32", "bfloat16", "float16"
  bool json = false;
};

// Runs one request: writes the result to `out`, an error to `err`; returns
// the process exit code (0, or 1 on an error).
int run_generate(const generate_request& request, std::ostream& out, std::ostream& err);

// Adds the `generate` subcommand to `app`; its callback runs run_generate on
// std::cout / std::cerr and throws CLI::RuntimeError(1) when it fails.
void add_generate_command(CLI::App& app);

}  // namespace crucible::policy
