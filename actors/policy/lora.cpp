#include "actors/policy/lora.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace crucible::policy {

namespace {

using json = nlohmann::json;

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::size_t module_index(std::string_view name) {
  for (std::size_t i = 0; i < lora_module_count; ++i)
    if (lora_modules[i] == name) return i;
  return lora_module_count;
}

}  // namespace

bool lora_options::targets_module(std::size_t module) const {
  for (const auto& t : targets)
    if (t == lora_modules[module]) return true;
  return false;
}

std::string lora_options::text() const {
  if (!enabled()) return "no LoRA (full weights)";
  std::string on;
  for (const auto& t : targets) on += (on.empty() ? "" : ",") + t;
  return "LoRA rank " + std::to_string(rank) + ", alpha " + number_text(alpha) + ", dropout " + number_text(dropout) +
         ", on " + on;
}

status validate(const lora_options& o, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& why) {
    return make_error(errc::invalid_argument, where + field + ": " + why);
  };
  if (!(o.alpha > 0)) return bad("alpha", "must be positive");
  if (!(o.dropout >= 0 && o.dropout < 1)) return bad("dropout", "must be in [0, 1)");
  if (o.targets.empty()) return bad("targets", "names no module");
  std::set<std::string> seen;
  for (const auto& t : o.targets) {
    if (module_index(t) == lora_module_count)
      return bad("targets", "\"" + t + "\" is not one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj");
    if (!seen.insert(t).second) return bad("targets", "\"" + t + "\" named twice");
  }
  return status::success();
}

std::string lora_module_path(std::size_t module) {
  return std::string(module < 4 ? "self_attn." : "mlp.") + std::string(lora_modules[module]);
}

std::string peft_tensor_name(std::int64_t layer, std::size_t module, char which) {
  return "base_model.model.model.layers." + std::to_string(layer) + "." + lora_module_path(module) + ".lora_" +
         std::string(1, which) + ".weight";
}

std::string peft_adapter_config(const lora_options& o, const std::string& base_model) {
  json j = {{"peft_type", "LORA"},
            {"task_type", "CAUSAL_LM"},
            {"base_model_name_or_path", base_model},
            {"r", o.rank},
            {"lora_alpha", o.alpha},
            {"lora_dropout", o.dropout},
            {"target_modules", o.targets},
            {"bias", "none"},
            {"fan_in_fan_out", false},
            {"inference_mode", true},
            {"init_lora_weights", true},
            {"modules_to_save", nullptr},
            {"layers_to_transform", nullptr},
            {"layers_pattern", nullptr},
            {"rank_pattern", json::object()},
            {"alpha_pattern", json::object()},
            {"use_rslora", false},
            {"use_dora", false},
            {"revision", nullptr}};
  return j.dump(2) + "\n";
}

result<lora_options> parse_peft_adapter_config(std::string_view text, const std::string& source) {
  auto bad = [&](const std::string& why) { return make_error(errc::invalid_argument, source + ": " + why); };
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  try {
    if (j.value("peft_type", std::string("LORA")) != "LORA")
      return bad("peft_type \"" + j["peft_type"].get<std::string>() + "\" is not LORA");
    if (j.contains("bias") && j["bias"].is_string() && j["bias"] != "none")
      return bad("bias \"" + j["bias"].get<std::string>() + "\": only \"none\" is supported");
    if (j.value("use_dora", false)) return bad("use_dora: DoRA is not supported");
    if (j.value("use_rslora", false)) return bad("use_rslora: rank-stabilised scaling is not supported");
    lora_options o;
    if (!j.contains("r") || !j["r"].is_number_integer() || j["r"].get<std::int64_t>() <= 0)
      return bad("r: expected a positive integer");
    o.rank = j["r"].get<std::uint32_t>();
    o.alpha = j.value("lora_alpha", 8.0);
    o.dropout = j.value("lora_dropout", 0.0);
    o.targets.clear();
    const auto& t = j.value("target_modules", json());
    if (t.is_string()) o.targets.push_back(t.get<std::string>());
    else if (t.is_array()) o.targets = t.get<std::vector<std::string>>();
    else return bad("target_modules: expected a list of module names");
    // PEFT writes them as a set, in any order; crucible keeps its own order.
    std::vector<std::string> ordered;
    for (auto m : lora_modules)
      for (const auto& name : o.targets)
        if (name == m) ordered.emplace_back(m);
    if (auto s = validate(o, source + ": lora_"); !s) return s.error();
    o.targets = std::move(ordered);
    return o;
  } catch (const json::exception& e) {
    return bad(e.what());
  }
}

result<lora_options> read_peft_adapter_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(errc::not_found, file.string() + ": cannot read");
  std::stringstream s;
  s << in.rdbuf();
  return parse_peft_adapter_config(s.str(), file.string());
}

bool is_adapter_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "adapter_config.json", ec);
}

}  // namespace crucible::policy
