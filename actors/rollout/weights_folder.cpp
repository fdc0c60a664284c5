#include "actors/rollout/weights_folder.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "actors/learner/publication.hpp"
#include "actors/learner/weight_publisher.hpp"
#include "actors/policy/lora.hpp"
#include "runtime/base/write_file.hpp"
#include "runtime/base/remove_tree.hpp"

namespace crucible::rollout {

namespace fs = std::filesystem;

namespace {

// The files a policy folder takes from the original model besides weights.
constexpr const char* model_files[] = {"config.json", "tokenizer.json", "tokenizer_config.json",
                                       "generation_config.json", "special_tokens_map.json"};

result<fs::path> fresh_folder(const fs::path& model, const std::string& weights_dir, const std::string& rollout,
                              std::uint64_t version) {
  fs::path root = weights_dir.empty() ? fs::temp_directory_path() / "crucible-rollout-weights" : fs::path(weights_dir);
  std::string safe = rollout;
  for (auto& c : safe)
    if (c == '/') c = '_';
  fs::path dir = root / safe / ("v" + std::to_string(version));
  remove_tree(dir);  // not fs::remove_all: the rollout links LibTorch (runtime/base/remove_tree.hpp)
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io, "cannot make weights folder " + dir.string() + ": " + ec.message());
  for (const char* f : model_files) {
    if (!fs::exists(model / f)) continue;
    fs::copy_file(model / f, dir / f, ec);
    if (ec) return make_error(errc::io, "cannot copy " + (model / f).string() + ": " + ec.message());
  }
  return dir;
}

// The adapter_config.json a LoRA publication's safetensors image carries in
// its metadata (weight_publisher.hpp), or "" for full weights.
std::string adapter_config_of(std::span<const std::uint8_t> image) {
  std::uint64_t length = 0;
  if (image.size() < 8) return {};
  std::memcpy(&length, image.data(), 8);  // little-endian, as every machine crucible runs on
  if (length > image.size() - 8) return {};
  const auto header = nlohmann::json::parse(image.begin() + 8, image.begin() + 8 + static_cast<std::ptrdiff_t>(length),
                                            nullptr, false);
  if (header.is_discarded() || !header.contains("__metadata__")) return {};
  const auto& meta = header["__metadata__"];
  if (!meta.is_object() || !meta.contains(learner::adapter_config_key) || !meta[learner::adapter_config_key].is_string())
    return {};
  return meta[learner::adapter_config_key].get<std::string>();
}

}  // namespace

result<fs::path> weights_folder(const fs::path& published, const fs::path& model, const std::string& weights_dir,
                                const std::string& rollout, std::uint64_t version) {
  if (fs::exists(published / "config.json") && fs::exists(published / "tokenizer.json")) return published;
  if (policy::is_adapter_folder(published)) return published;  // LoRA: applied onto the rollout's base
  auto dir = fresh_folder(model, weights_dir, rollout, version);
  if (!dir) return dir;
  std::error_code ec;
  int linked = 0;
  for (fs::directory_iterator it(published, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (!name.ends_with(".safetensors") && name != "model.safetensors.index.json") continue;
    fs::create_symlink(fs::absolute(it->path()), *dir / name, ec);
    if (ec) break;
    ++linked;
  }
  if (ec || linked == 0)
    return make_error(errc::io, "published weights folder " + published.string() + " holds no safetensors" +
                                    (ec ? ": " + ec.message() : std::string()));
  return dir;
}

result<fs::path> unpack_weights(std::span<const std::uint8_t> safetensors, const fs::path& model,
                                const std::string& weights_dir, const std::string& rollout, std::uint64_t version) {
  auto dir = fresh_folder(model, weights_dir, rollout, version);
  if (!dir) return dir;
  // LoRA: a PEFT folder of the adapters.
  const std::string adapter_config = adapter_config_of(safetensors);
  if (!adapter_config.empty()) CRUCIBLE_TRY(write_file(*dir / "adapter_config.json", adapter_config));
  // Written on several threads, not hashed again (weight_assembler did).
  auto written = learner::write_weights(
      safetensors, *dir / (adapter_config.empty() ? "model.safetensors" : "adapter_model.safetensors"), false);
  if (!written) return written.error();
  return dir;
}

}  // namespace crucible::rollout
