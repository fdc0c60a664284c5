// Instruct models' prompts: the chat template of a Hugging Face checkpoint's
// tokenizer_config.json, rendered as transformers' apply_chat_template renders
// it, and the stop tokens of its generation_config.json. The rollout wraps
// its prompt in the template when the model folder has one (see
// actors/rollout/README.md); `crucible tokenize --chat` shows the result.
//
// The render follows transformers: ImmutableSandboxedEnvironment with
// trim_blocks and lstrip_blocks (jinja_template.hpp); variables messages,
// add_generation_prompt, tools = None, documents = None, the special tokens
// of tokenizer_config.json (bos_token, eos_token, unk_token, pad_token,
// additional_special_tokens; those that are null are left undefined);
// globals raise_exception(message) and strftime_now(format) (local time);
// tojson as json.dumps(ensure_ascii=False). The rendered text is then encoded
// WITHOUT the tokenizer's own special tokens, as apply_chat_template does.
//
// Pure, any thread; a chat_template is immutable and cheap to copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/policy/jinja_template.hpp"
#include "actors/policy/tokenizer.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy {

struct chat_message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class chat_template {
 public:
  // The template of tokenizer_config.json's text: "chat_template" is a
  // string, or a list of {"name", "template"} of which "default" is taken.
  // nullopt when the config has no template. invalid_argument naming
  // `source` for bad JSON, an ill-typed field, a list without "default", or
  // a template that does not parse (with its line and column).
  static result<std::optional<chat_template>> from_tokenizer_config(std::string_view json_text,
                                                                    const std::string& source);

  // A template given directly; `special_tokens` are the variables bos_token,
  // eos_token and so on.
  static result<chat_template> parse(std::string_view source, const std::string& name,
                                     std::vector<std::pair<std::string, std::string>> special_tokens = {});

  // The prompt text for `messages`; add_generation_prompt opens the
  // assistant's turn. invalid_argument "NAME:LINE:COL: ..." when the
  // template raises (raise_exception, e.g. roles that do not alternate) or
  // fails as Python would.
  result<std::string> apply(const std::vector<chat_message>& messages, bool add_generation_prompt) const;

  // The same with every variable given as a JSON object (messages with any
  // fields, add_generation_prompt, tools, extra keyword arguments); for tests
  // and tools. invalid_argument for bad JSON or as apply().
  result<std::string> render_json(std::string_view variables_json) const;

  const std::string& name() const { return template_.name(); }

 private:
  jinja::parsed_template template_;
  std::vector<std::pair<std::string, std::string>> special_tokens_;
  std::vector<std::string> additional_special_tokens_;
};

// What a model folder says about chatting with it.
struct chat_format {
  std::optional<chat_template> chat;  // tokenizer_config.json's template; none: prompts go in as plain text
  // generation_config.json's eos_token_id (one id or a list); nullopt when
  // the file or the field is absent (then config.json's eos_token_id stands).
  std::optional<std::vector<std::int32_t>> stop_token_ids;
};

// Reads DIR/tokenizer_config.json and DIR/generation_config.json; a missing
// file is no error. io when one cannot be read; invalid_argument naming the
// file and field when one is malformed.
result<chat_format> load_chat_format(const std::filesystem::path& dir);

// The token ids of a prompt. With a template: a system message when
// `system` is not empty, the prompt as the user's message, rendered with
// add_generation_prompt and encoded without the tokenizer's own special
// tokens, as apply_chat_template(tokenize=True) does. Without one (nullptr):
// the prompt encoded with them, as policy::generate_text does. Errors: the
// template's, or the tokenizer's for text that is not UTF-8.
result<std::vector<std::int32_t>> encode_prompt(const tokenizer& tok, const chat_template* chat,
                                                const std::string& system, const std::string& prompt);

// "chat template NAME, stop ids [..]" or "no chat template" for logs.
std::string describe(const chat_format& format);

}  // namespace crucible::policy
