// Feeds: a checkpoint's config.json (actors/policy/model_config.hpp) as the
// policy reads it before building the network, through parse_model_config.
// Checks: no crash, uncaught exception or sanitizer report; a config it
// accepts has positive sizes and heads that divide as the network needs
// (the LibTorch model is built from these numbers without checking again).
#include <cstdlib>

#include "actors/policy/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace crucible::policy;
  auto c = parse_model_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz/config.json");
  if (!c) return 0;
  if (c->hidden_size <= 0 || c->num_hidden_layers <= 0 || c->num_attention_heads <= 0 || c->num_key_value_heads <= 0 ||
      c->head_dim <= 0 || c->vocab_size <= 0 || c->intermediate_size <= 0)
    std::abort();
  if (c->num_attention_heads % c->num_key_value_heads != 0) std::abort();
  (void)c->text();
  return 0;
}
