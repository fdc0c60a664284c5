// Feeds: a .safetensors file (an 8-byte header length, the JSON header, the
// tensor bytes; actors/policy/safetensors.hpp) as the policy and the
// rollout's weight loader map it, through safetensors_file::open on a memory
// file.
// Checks: no crash, uncaught exception or sanitizer report; every tensor it
// accepts has a known dtype, an element count that fits (numel), bytes that
// match shape and dtype and lie inside the file (its first and last byte are
// read), and is found by name.
#include <cstdlib>

#include "actors/policy/safetensors.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace crucible::policy;
  static crucible::fuzz::memory_file file;
  file.set(data, size);
  auto f = safetensors_file::open(file.path());
  if (!f) return 0;
  volatile std::uint8_t sink = 0;
  for (const auto& t : f->tensors()) {
    if (dtype_size(t.type) == 0) std::abort();
    std::int64_t n = t.numel();
    if (n < 0 || static_cast<std::uint64_t>(n) * dtype_size(t.type) != t.bytes.size()) std::abort();
    if (!t.bytes.empty()) sink = sink + static_cast<std::uint8_t>(t.bytes.front()) + static_cast<std::uint8_t>(t.bytes.back());
    if (f->find(t.name) == nullptr) std::abort();
    (void)t.text();
  }
  return 0;
}
