#include "actors/policy/checkpoint_weights.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace crucible::policy {
namespace {

using json = nlohmann::json;

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

}  // namespace

result<checkpoint_weights> checkpoint_weights::open(const std::filesystem::path& dir) {
  checkpoint_weights weights;
  weights.dir_ = dir;
  const auto index_path = dir / kIndexFile;
  std::error_code ec;
  if (!std::filesystem::exists(index_path, ec)) {
    const auto single = dir / kSingleFile;
    if (!std::filesystem::exists(single, ec)) {
      return make_error(errc::not_found, dir.string() + ": neither " + kSingleFile + " nor " + kIndexFile + " exists");
    }
    auto file = safetensors_file::open(single);
    if (!file) return file.error();
    weights.files_.push_back(std::move(*file));
    for (const auto& t : weights.files_.back().tensors()) weights.file_of_.emplace(t.name, 0);
    return weights;
  }

  std::ifstream in(index_path);
  if (!in) return make_error(errc::io, index_path.string() + ": cannot open");
  json index = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object()) {
    return make_error(errc::corrupt, index_path.string() + ": not a JSON object");
  }
  auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) {
    return make_error(errc::corrupt, index_path.string() + ": field weight_map is missing or not an object");
  }
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [name, shard] : map->items()) {
    if (!shard.is_string()) {
      return make_error(errc::corrupt, index_path.string() + ": field weight_map." + name + " is not a file name");
    }
    const auto shard_name = shard.get<std::string>();
    if (shard_name.find('/') != std::string::npos || shard_name == ".." || shard_name.empty()) {
      return make_error(errc::corrupt, index_path.string() + ": field weight_map." + name +
                                           " names a file outside the folder: " + shard_name);
    }
    by_shard[shard_name].push_back(name);
  }
  weights.files_.reserve(by_shard.size());
  for (const auto& [shard_name, names] : by_shard) {
    auto file = safetensors_file::open(dir / shard_name);
    if (!file) {
      return make_error(file.error().code, file.error().message + " (shard listed in " + index_path.string() + ")");
    }
    weights.files_.push_back(std::move(*file));
    const auto& opened = weights.files_.back();
    for (const auto& n : names) {
      if (!opened.find(n)) {
        return make_error(errc::corrupt, index_path.string() + ": field weight_map." + n + " says " + shard_name +
                                             " but that file has no such tensor");
      }
    }
    for (const auto& t : opened.tensors()) {
      auto [it, inserted] = weights.file_of_.emplace(t.name, weights.files_.size() - 1);
      if (!inserted) {
        return make_error(errc::corrupt, dir.string() + ": tensor " + t.name + " is in two shards, " + shard_name +
                                             " and another; " + kIndexFile + " must name one");
      }
    }
  }
  return weights;
}

const tensor_view* checkpoint_weights::find(std::string_view name) const {
  auto it = file_of_.find(name);
  return it == file_of_.end() ? nullptr : files_[it->second].find(name);
}

result<tensor_view> checkpoint_weights::get(std::string_view name) const {
  if (const tensor_view* t = find(name)) return *t;
  return make_error(errc::not_found, dir_.string() + ": no tensor named " + std::string(name));
}

std::vector<std::string> checkpoint_weights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : file_of_) out.push_back(name);
  return out;
}

status write_checkpoint_weights(const std::filesystem::path& dir, std::span<const tensor_view> tensors,
                                const checkpoint_write_options& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(errc::io, dir.string() + ": cannot create: " + ec.message());

  std::vector<const tensor_view*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  std::vector<std::vector<tensor_view>> shards(1);
  std::uint64_t in_shard = 0, total = 0;
  for (const tensor_view* t : order) {
    if (in_shard > 0 && in_shard + t->bytes.size() > options.max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(*t);
    in_shard += t->bytes.size();
    total += t->bytes.size();
  }

  if (shards.size() == 1) {
    std::filesystem::remove(dir / kIndexFile, ec);
    return write_safetensors(dir / kSingleFile, shards[0], options.metadata);
  }
  json weight_map = json::object();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    CRUCIBLE_TRY(write_safetensors(dir / name, shards[i], options.metadata));
    for (const auto& t : shards[i]) weight_map[t.name] = name;
  }
  json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  std::ofstream out(dir / kIndexFile, std::ios::trunc);
  out << index.dump(2) << "\n";
  out.flush();
  if (!out) return make_error(errc::io, (dir / kIndexFile).string() + ": write failed");
  std::filesystem::remove(dir / kSingleFile, ec);
  return status::success();
}

}  // namespace crucible::policy
