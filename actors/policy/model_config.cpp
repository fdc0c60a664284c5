#include "actors/policy/model_config.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace crucible::policy {
namespace {

using json = nlohmann::json;

// Reads the fields of one config.json, each error naming the file and field.
class field_reader {
 public:
  field_reader(const json& root, const std::string& source) : root_(root), source_(source) {}

  error fail(const std::string& field, const std::string& what) const {
    return make_error(errc::invalid_argument, source_ + ": field " + field + " " + what);
  }

  result<std::int64_t> positive_int(const std::string& field) const {
    auto it = root_.find(field);
    if (it == root_.end() || it->is_null()) return fail(field, "is missing");
    if (!it->is_number_integer()) return fail(field, "is not an integer");
    auto v = it->get<std::int64_t>();
    if (v <= 0) return fail(field, "must be positive, got " + std::to_string(v));
    return v;
  }

  result<std::int64_t> positive_int_or(const std::string& field, std::int64_t fallback) const {
    auto it = root_.find(field);
    if (it == root_.end() || it->is_null()) return fallback;
    return positive_int(field);
  }

  result<double> positive_number(const json& parent, const std::string& field, const std::string& shown) const {
    auto it = parent.find(field);
    if (it == parent.end() || it->is_null()) return fail(shown, "is missing");
    if (!it->is_number()) return fail(shown, "is not a number");
    auto v = it->get<double>();
    if (!(v > 0)) return fail(shown, "must be positive");
    return v;
  }

  result<bool> boolean_or(const std::string& field, bool fallback) const {
    auto it = root_.find(field);
    if (it == root_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return fail(field, "is not true or false");
    return it->get<bool>();
  }

 private:
  const json& root_;
  const std::string& source_;
};

#define ASSIGN_OR_RETURN(lhs, expr)        \
  do {                                     \
    auto assign_ = (expr);                 \
    if (!assign_.ok()) return assign_.error(); \
    lhs = std::move(assign_.value());      \
  } while (0)

}  // namespace

std::string_view to_string(architecture arch) {
  switch (arch) {
    case architecture::qwen2: return "qwen2";
    case architecture::llama: return "llama";
  }
  return "?";
}

std::string model_config::text() const {
  std::ostringstream s;
  s << architecture_name << " hidden=" << hidden_size << " intermediate=" << intermediate_size
    << " layers=" << num_hidden_layers << " heads=" << num_attention_heads << " kv_heads=" << num_key_value_heads
    << " head_dim=" << head_dim << " vocab=" << vocab_size << " rope_theta=" << rope_theta
    << " rms_norm_eps=" << rms_norm_eps << " tied=" << (tie_word_embeddings ? "yes" : "no")
    << " qkv_bias=" << (attention_bias ? "yes" : "no") << " dtype=" << (torch_dtype.empty() ? "?" : torch_dtype);
  return s.str();
}

namespace {

result<model_config> parse_config_json(std::string_view json_text, const std::string& source) {
  json root = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return make_error(errc::invalid_argument, source + ": not valid JSON");
  if (!root.is_object()) return make_error(errc::invalid_argument, source + ": not a JSON object");
  field_reader f(root, source);
  model_config c;

  // The family: "architectures" first, "model_type" as a fallback.
  std::string model_type = root.value("model_type", std::string());
  auto archs = root.find("architectures");
  if (archs != root.end() && !archs->is_null()) {
    if (!archs->is_array() || archs->size() != 1 || !(*archs)[0].is_string()) {
      return f.fail("architectures", "must list exactly one architecture name");
    }
    c.architecture_name = (*archs)[0].get<std::string>();
    if (c.architecture_name == "Qwen2ForCausalLM") {
      c.arch = architecture::qwen2;
    } else if (c.architecture_name == "LlamaForCausalLM") {
      c.arch = architecture::llama;
    } else {
      return f.fail("architectures", "names " + c.architecture_name +
                                         "; supported: Qwen2ForCausalLM, LlamaForCausalLM");
    }
  } else if (model_type == "qwen2") {
    c.arch = architecture::qwen2;
    c.architecture_name = "Qwen2ForCausalLM";
  } else if (model_type == "llama") {
    c.arch = architecture::llama;
    c.architecture_name = "LlamaForCausalLM";
  } else {
    return f.fail("architectures", "is missing and model_type \"" + model_type + "\" is neither qwen2 nor llama");
  }

  ASSIGN_OR_RETURN(c.hidden_size, f.positive_int("hidden_size"));
  ASSIGN_OR_RETURN(c.intermediate_size, f.positive_int("intermediate_size"));
  ASSIGN_OR_RETURN(c.num_hidden_layers, f.positive_int("num_hidden_layers"));
  ASSIGN_OR_RETURN(c.num_attention_heads, f.positive_int("num_attention_heads"));
  ASSIGN_OR_RETURN(c.num_key_value_heads, f.positive_int_or("num_key_value_heads", c.num_attention_heads));
  ASSIGN_OR_RETURN(c.vocab_size, f.positive_int("vocab_size"));
  ASSIGN_OR_RETURN(c.max_position_embeddings, f.positive_int("max_position_embeddings"));
  ASSIGN_OR_RETURN(c.rms_norm_eps, f.positive_number(root, "rms_norm_eps", "rms_norm_eps"));
  ASSIGN_OR_RETURN(c.tie_word_embeddings, f.boolean_or("tie_word_embeddings", false));

  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    return f.fail("num_key_value_heads", "(" + std::to_string(c.num_key_value_heads) +
                                             ") must divide num_attention_heads (" +
                                             std::to_string(c.num_attention_heads) + ")");
  }
  if (root.contains("head_dim") && !root["head_dim"].is_null()) {
    ASSIGN_OR_RETURN(c.head_dim, f.positive_int("head_dim"));
  } else if (c.hidden_size % c.num_attention_heads != 0) {
    return f.fail("num_attention_heads", "must divide hidden_size when head_dim is absent");
  } else {
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0) return f.fail("head_dim", "must be even for rotary embeddings");

  // RoPE: transformers 4 writes rope_theta (+ rope_scaling), 5 writes rope_parameters.
  auto params = root.find("rope_parameters");
  if (params != root.end() && params->is_object()) {
    std::string type = params->value("rope_type", std::string("default"));
    if (type != "default") return f.fail("rope_parameters.rope_type", "is \"" + type + "\"; only default RoPE is supported");
    ASSIGN_OR_RETURN(c.rope_theta, f.positive_number(*params, "rope_theta", "rope_parameters.rope_theta"));
  } else {
    ASSIGN_OR_RETURN(c.rope_theta, f.positive_number(root, "rope_theta", "rope_theta"));
  }
  if (root.contains("rope_scaling") && !root["rope_scaling"].is_null()) {
    return f.fail("rope_scaling", "is set; scaled RoPE is not supported");
  }

  std::string act = root.value("hidden_act", std::string("silu"));
  if (act != "silu") return f.fail("hidden_act", "is \"" + act + "\"; only silu is supported");
  if (root.value("use_sliding_window", false)) return f.fail("use_sliding_window", "is true; sliding-window attention is not supported");

  if (c.arch == architecture::qwen2) {
    c.attention_bias = true;
  } else {
    ASSIGN_OR_RETURN(c.attention_bias, f.boolean_or("attention_bias", false));
    c.o_proj_bias = c.attention_bias;
    ASSIGN_OR_RETURN(c.mlp_bias, f.boolean_or("mlp_bias", false));
  }

  for (const char* key : {"torch_dtype", "dtype"}) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) continue;
    if (!it->is_string()) return f.fail(key, "is not a string");
    c.torch_dtype = it->get<std::string>();
    if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float16") {
      return f.fail(key, "is \"" + c.torch_dtype + "\"; supported: float32, bfloat16, float16");
    }
    break;
  }

  auto bos = root.find("bos_token_id");
  if (bos != root.end() && !bos->is_null()) {
    if (!bos->is_number_integer()) return f.fail("bos_token_id", "is not an integer");
    c.bos_token_id = bos->get<std::int64_t>();
  }
  auto eos = root.find("eos_token_id");
  if (eos != root.end() && !eos->is_null()) {
    if (eos->is_number_integer()) {
      c.eos_token_ids.push_back(eos->get<std::int64_t>());
    } else if (eos->is_array()) {
      for (const auto& id : *eos) {
        if (!id.is_number_integer()) return f.fail("eos_token_id", "holds a value that is not an integer");
        c.eos_token_ids.push_back(id.get<std::int64_t>());
      }
    } else {
      return f.fail("eos_token_id", "is neither an integer nor a list of integers");
    }
  }
  return c;
}

}  // namespace

result<model_config> parse_model_config(std::string_view json_text, const std::string& source) {
  try {
    return parse_config_json(json_text, source);
  } catch (const nlohmann::json::exception& e) {  // a field of an unexpected JSON type
    return make_error(errc::invalid_argument, source + ": " + e.what());
  }
}

result<model_config> read_model_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    std::error_code ec;
    return make_error(std::filesystem::exists(path, ec) ? errc::io : errc::not_found, path.string() + ": cannot open");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_model_config(buffer.str(), path.string());
}

}  // namespace crucible::policy
