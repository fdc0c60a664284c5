#include "actors/policy/tokenize_command.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "actors/policy/chat_template.hpp"
#include "actors/policy/tokenizer.hpp"

namespace crucible::policy {

int run_tokenize(const tokenize_request& request, std::ostream& out, std::ostream& err) {
  auto tok = tokenizer::load(request.model_dir);
  if (!tok) {
    err << "crucible tokenize: " << tok.error().text() << "\n";
    return 1;
  }
  std::optional<chat_format> format;
  if (request.chat) {
    auto loaded = load_chat_format(request.model_dir);
    if (!loaded) {
      err << "crucible tokenize: " << loaded.error().text() << "\n";
      return 1;
    }
    if (!loaded->chat) {
      err << "crucible tokenize: --chat: " << request.model_dir << "/tokenizer_config.json has no chat_template\n";
      return 1;
    }
    format = std::move(*loaded);
  }
  auto ids = format ? encode_prompt(*tok, &*format->chat, request.system, request.text)
                    : tok->encode(request.text, encode_options{.add_special_tokens = request.add_special_tokens});
  if (!ids) {
    err << "crucible tokenize: " << ids.error().text() << "\n";
    return 1;
  }
  const std::string decoded = tok->decode(*ids, decode_options{.skip_special_tokens = request.skip_special_tokens});
  if (request.json) {
    nlohmann::json j = {{"ids", *ids}, {"text", decoded}, {"count", ids->size()}};
    out << j.dump() << "\n";
  } else {
    out << "ids:";
    for (auto id : *ids) out << " " << id;
    out << "\ntext: " << decoded << "\n";
  }
  return 0;
}

void add_tokenize_command(CLI::App& app) {
  auto request = std::make_shared<tokenize_request>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode text with a model's tokenizer.json and decode it back");
  cmd->add_option("--model", request->model_dir, "Checkpoint folder holding tokenizer.json")->required();
  cmd->add_option("--text", request->text, "Text to encode")->required();
  cmd->add_flag("--json", request->json, "Print {\"ids\": [...], \"text\": ...} as one JSON line");
  cmd->add_flag("!--no-special-tokens", request->add_special_tokens,
                "Do not add the post-processor's special tokens (e.g. a leading BOS)");
  cmd->add_flag("--skip-special-tokens", request->skip_special_tokens, "Leave special tokens out of the decoded text");
  cmd->add_flag("--chat", request->chat,
                "Put TEXT in the folder's chat template as the user's message first (as the rollout does)");
  cmd->add_option("--system", request->system, "With --chat: a system message before TEXT");
  cmd->callback([request] {
    if (int code = run_tokenize(*request, std::cout, std::cerr); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace crucible::policy
