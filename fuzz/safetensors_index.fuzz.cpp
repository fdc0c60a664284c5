// Feeds: a checkpoint folder's model.safetensors.index.json ({"metadata",
// "weight_map": {tensor: shard file}}; actors/policy/checkpoint_weights.hpp)
// through checkpoint_weights::open, in a folder under /tmp that holds two
// real shards written once by the project's own write_checkpoint_weights
// (tensors a, b in model-00001-of-00002.safetensors, c in -00002-).
// Checks: no crash, uncaught exception or sanitizer report; every name an
// opened checkpoint lists can be fetched, from the shard that has it, with
// its bytes inside that shard's mapping; a shard name can never leave the
// folder (a '/' or '..').
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "actors/policy/checkpoint_weights.hpp"

namespace {

using namespace crucible::policy;
namespace fs = std::filesystem;

const fs::path& folder() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("crucible-fuzz-index-" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit([] { std::error_code ec; fs::remove_all(folder(), ec); });
    static const std::vector<float> a(4, 1.0f), b(2, 2.0f), c(8, 3.0f);
    auto view = [](const char* name, const std::vector<float>& v) {
      return tensor_view{name, dtype::f32, {static_cast<std::int64_t>(v.size())},
                         std::as_bytes(std::span<const float>(v))};
    };
    std::vector<tensor_view> tensors{view("a", a), view("b", b), view("c", c)};
    checkpoint_write_options o;
    o.max_shard_bytes = 24;  // a and b in the first shard, c in the second
    if (!write_checkpoint_weights(d, tensors, o)) std::abort();
    if (!fs::exists(d / "model-00002-of-00002.safetensors")) std::abort();
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& dir = folder();
  {
    std::ofstream out(dir / "model.safetensors.index.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto w = checkpoint_weights::open(dir);
  if (!w) return 0;
  for (const auto& name : w->names()) {
    auto t = w->get(name);
    if (!t) std::abort();
    bool inside = false;
    for (const auto& f : w->files())
      if (const tensor_view* held = f.find(name); held && held->bytes.data() == t->bytes.data()) inside = true;
    if (!inside) std::abort();
  }
  for (const auto& f : w->files()) {
    if (f.path().parent_path() != dir) std::abort();
    auto file = f.path().filename().string();
    if (file == ".." || file == "." || file.empty()) std::abort();
  }
  return 0;
}
