// Feeds: a tokenizer.json (Hugging Face; actors/policy/tokenizer.hpp) as
// the policy loads it with a checkpoint, through tokenizer::parse; when it
// loads, a fixed prompt-like text (code, non-ASCII, special-looking tokens)
// is encoded and decoded with it, and every id looked up both ways.
// Checks: no crash, uncaught exception, hang or sanitizer report; ids the
// encoder returns are never negative (the policy's embedding lookup takes
// them as they are; a template's ids need not be in the vocabulary, as with
// Hugging Face's tokenizers).
#include <cstdlib>
#include <string>

#include "actors/policy/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace crucible::policy;
  auto t = tokenizer::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz/tokenizer.json");
  if (!t) return 0;
  (void)t->text();
  static const std::string sample =
      "<|im_start|>user\ndef forward(self, x):\n    return torch.relu(x) * 2  # \u00e9\u00df \U0001F600\n\n<|im_end|>";
  for (bool special : {true, false}) {
    auto ids = t->encode(sample, {.add_special_tokens = special});
    if (!ids) continue;
    for (auto id : *ids) {
      if (id < 0) std::abort();
      (void)t->id_to_token(id);
      (void)t->is_special(id);
    }
    (void)t->decode(*ids);
    (void)t->decode(*ids, {.skip_special_tokens = true});
  }
  (void)t->token_to_id("a");
  return 0;
}
