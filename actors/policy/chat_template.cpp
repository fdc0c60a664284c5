#include "actors/policy/chat_template.hpp"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace crucible::policy {

namespace {

using json = nlohmann::json;

jinja::value from_json(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return jinja::value::none();
    case json::value_t::boolean: return jinja::value::boolean(j.get<bool>());
    case json::value_t::number_integer: return jinja::value::integer(j.get<std::int64_t>());
    case json::value_t::number_unsigned: return jinja::value::integer(static_cast<std::int64_t>(j.get<std::uint64_t>()));
    case json::value_t::number_float: return jinja::value::number(j.get<double>());
    case json::value_t::string: return jinja::value::string(j.get<std::string>());
    case json::value_t::array: {
      jinja::value_list items;
      for (const auto& x : j) items.push_back(from_json(x));
      return jinja::value::list(std::move(items));
    }
    case json::value_t::object: {
      jinja::value_dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.set(it.key(), from_json(it.value()));
      return jinja::value::dict(std::move(d));
    }
    default: return jinja::value::none();
  }
}

// transformers' globals: raise_exception and strftime_now.
void add_transformers_globals(jinja::value_dict& vars) {
  vars.set("raise_exception", jinja::value::function([](const jinja::value_list& args, const jinja::keyword_args&) -> jinja::value {
             throw jinja::raised{args.empty() ? std::string("raise_exception") : args[0].str()};
           }));
  vars.set("strftime_now", jinja::value::function([](const jinja::value_list& args, const jinja::keyword_args&) {
             if (args.empty() || !args[0].is_string()) throw jinja::raised{"strftime_now takes a format string"};
             std::time_t now = std::time(nullptr);
             std::tm local{};
             localtime_r(&now, &local);
             char buf[256];
             std::size_t n = std::strftime(buf, sizeof buf, args[0].as_string().c_str(), &local);
             return jinja::value::string(std::string(buf, n));
           }));
}

// A special token of tokenizer_config.json: a string, {"content": ...}
// (an AddedToken), or null.
result<std::optional<std::string>> token_text(const json& j, const std::string& field, const std::string& source) {
  if (j.is_null()) return std::optional<std::string>();
  if (j.is_string()) return std::optional<std::string>(j.get<std::string>());
  if (j.is_object() && j.contains("content") && j["content"].is_string())
    return std::optional<std::string>(j["content"].get<std::string>());
  return make_error(errc::invalid_argument, fmt::format("{}: {} is neither a string nor a token object", source, field));
}

result<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::io, path.string() + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return make_error(errc::io, path.string() + ": cannot read");
  return buffer.str();
}

result<std::optional<std::vector<std::int32_t>>> parse_stop_ids(std::string_view text, const std::string& source) {
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded() || !root.is_object())
    return make_error(errc::invalid_argument, source + ": not a JSON object");
  auto eos = root.find("eos_token_id");
  if (eos == root.end() || eos->is_null()) return std::optional<std::vector<std::int32_t>>();
  std::vector<std::int32_t> ids;
  auto add = [&](const json& id) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      return false;
    ids.push_back(static_cast<std::int32_t>(id.get<std::int64_t>()));
    return true;
  };
  bool ok = eos->is_array() ? std::all_of(eos->begin(), eos->end(), add) : add(*eos);
  if (!ok) return make_error(errc::invalid_argument, source + ": eos_token_id is neither a token id nor a list of them");
  return std::optional<std::vector<std::int32_t>>(std::move(ids));
}

}  // namespace

result<chat_template> chat_template::parse(std::string_view source, const std::string& name,
                                           std::vector<std::pair<std::string, std::string>> special_tokens) {
  auto parsed = jinja::parsed_template::parse(source, name);
  if (!parsed) return parsed.error();
  chat_template t;
  t.template_ = std::move(*parsed);
  t.special_tokens_ = std::move(special_tokens);
  return t;
}

result<std::optional<chat_template>> chat_template::from_tokenizer_config(std::string_view json_text,
                                                                          const std::string& source) {
  json root = json::parse(json_text, nullptr, false);
  if (root.is_discarded() || !root.is_object())
    return make_error(errc::invalid_argument, source + ": not a JSON object");
  auto field = root.find("chat_template");
  if (field == root.end() || field->is_null()) return std::optional<chat_template>();
  std::string text;
  if (field->is_string()) {
    text = field->get<std::string>();
  } else if (field->is_array()) {
    bool found = false;
    for (const auto& entry : *field) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string()) {
        text = entry["template"].get<std::string>();
        found = true;
      }
    }
    if (!found) return make_error(errc::invalid_argument, source + ": chat_template lists no template named \"default\"");
  } else {
    return make_error(errc::invalid_argument, source + ": chat_template is neither a string nor a list of templates");
  }
  std::vector<std::pair<std::string, std::string>> tokens;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (!root.contains(key)) continue;
    auto token = token_text(root[key], key, source);
    if (!token) return token.error();
    if (*token) tokens.emplace_back(key, **token);
  }
  auto parsed = parse(text, source + " chat_template", std::move(tokens));
  if (!parsed) return parsed.error();
  if (auto extra = root.find("additional_special_tokens"); extra != root.end() && extra->is_array()) {
    for (const auto& x : *extra) {
      auto token = token_text(x, "additional_special_tokens", source);
      if (!token) return token.error();
      if (*token) parsed->additional_special_tokens_.push_back(**token);
    }
  }
  return std::optional<chat_template>(std::move(*parsed));
}

result<std::string> chat_template::render_json(std::string_view variables_json) const {
  json root = json::parse(variables_json, nullptr, false);
  if (root.is_discarded() || !root.is_object())
    return make_error(errc::invalid_argument, name() + ": the variables are not a JSON object");
  jinja::value_dict vars;
  vars.set("tools", jinja::value::none());
  vars.set("documents", jinja::value::none());
  for (const auto& [key, text] : special_tokens_) vars.set(key, jinja::value::string(text));
  if (!additional_special_tokens_.empty()) {
    jinja::value_list extra;
    for (const auto& t : additional_special_tokens_) extra.push_back(jinja::value::string(t));
    vars.set("additional_special_tokens", jinja::value::list(std::move(extra)));
  }
  add_transformers_globals(vars);
  for (auto it = root.begin(); it != root.end(); ++it) vars.set(it.key(), from_json(it.value()));
  return template_.render(vars);
}

result<std::string> chat_template::apply(const std::vector<chat_message>& messages, bool add_generation_prompt) const {
  json conversation = json::array();
  for (const auto& m : messages) conversation.push_back({{"role", m.role}, {"content", m.content}});
  json vars = {{"messages", conversation}, {"add_generation_prompt", add_generation_prompt}};
  return render_json(vars.dump());
}

result<chat_format> load_chat_format(const std::filesystem::path& dir) {
  chat_format format;
  std::error_code ec;
  const auto tokenizer_config = dir / "tokenizer_config.json";
  if (std::filesystem::exists(tokenizer_config, ec)) {
    auto text = read_text(tokenizer_config);
    if (!text) return text.error();
    auto chat = chat_template::from_tokenizer_config(*text, tokenizer_config.string());
    if (!chat) return chat.error();
    format.chat = std::move(*chat);
  }
  const auto generation_config = dir / "generation_config.json";
  if (std::filesystem::exists(generation_config, ec)) {
    auto text = read_text(generation_config);
    if (!text) return text.error();
    auto stops = parse_stop_ids(*text, generation_config.string());
    if (!stops) return stops.error();
    format.stop_token_ids = std::move(*stops);
  }
  return format;
}

result<std::vector<std::int32_t>> encode_prompt(const tokenizer& tok, const chat_template* chat,
                                                const std::string& system, const std::string& prompt) {
  if (!chat) return tok.encode(prompt);
  std::vector<chat_message> conversation;
  if (!system.empty()) conversation.push_back({"system", system});
  conversation.push_back({"user", prompt});
  auto text = chat->apply(conversation, true);
  if (!text) return text.error();
  return tok.encode(*text, encode_options{.add_special_tokens = false});
}

std::string describe(const chat_format& format) {
  std::string out = format.chat ? "chat template " + format.chat->name() : "no chat template";
  if (format.stop_token_ids) out += fmt::format(", stop ids [{}]", fmt::join(*format.stop_token_ids, ", "));
  return out;
}

}  // namespace crucible::policy
