// `crucible tokenize --model DIR --text TEXT [--json] [--chat [--system S]]`:
// encodes TEXT with DIR/tokenizer.json and prints the ids and the text they
// decode to. With --chat, TEXT is first put in DIR's chat template as the
// rollout puts its prompt (chat_template.hpp, encode_prompt). The CLI
// owner (runtime/cli/main.cpp) calls add_tokenize_command once on its app.
#pragma once

#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace crucible::policy {

struct tokenize_request {
  std::string model_dir;          // holds tokenizer.json
  std::string text;
  bool json = false;              // one JSON object instead of two text lines
  bool add_special_tokens = true; // the post-processor template (--no-special-tokens turns it off)
  bool skip_special_tokens = false;  // when decoding
  bool chat = false;              // apply DIR/tokenizer_config.json's chat template (an error when it has none)
  std::string system;             // with chat: a system message before TEXT; default none
};

// Runs one request: writes the result to `out`, an error to `err`; returns
// the process exit code (0, or 1 on an error).
int run_tokenize(const tokenize_request& request, std::ostream& out, std::ostream& err);

// Adds the `tokenize` subcommand to `app`; its callback runs run_tokenize on
// std::cout / std::cerr and throws CLI::RuntimeError(1) when it fails.
void add_tokenize_command(CLI::App& app);

}  // namespace crucible::policy
