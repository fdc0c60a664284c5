#include "actors/learner/weight_publisher.hpp"

#include <torch/torch.h>

#include <cstring>
#include <map>
#include <filesystem>
#include <vector>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "runtime/base/write_file.hpp"
#include "runtime/base/remove_tree.hpp"

namespace crucible::learner {

namespace fs = std::filesystem;

struct weight_publisher::buffers {
  torch::Tensor device_flat;  // CUDA only: every parameter in the saved dtype, in file order
  torch::Tensor host;         // uint8, at least `size` bytes; pinned on CUDA
  std::uint64_t size = 0;     // bytes of the latest image
};

weight_publisher::weight_publisher(weight_publisher_options options)
    : options_(std::move(options)), buffers_(std::make_unique<buffers>()) {}

weight_publisher::~weight_publisher() = default;

std::span<const std::uint8_t> weight_publisher::bytes() const {
  if (!buffers_->host.defined()) return {};
  return {buffers_->host.data_ptr<std::uint8_t>(), buffers_->size};
}

result<publication> weight_publisher::publish(const policy::causal_lm& model, std::uint64_t version) try {
  auto saved = policy::saved_dtype(model);
  if (!saved) return saved.error();
  const auto type = policy::to_torch(*saved);
  const auto elem = static_cast<std::int64_t>(policy::dtype_size(*saved));
  torch::NoGradGuard no_grad;
  // Under LoRA the adapters alone, named as PEFT names them, with their
  // adapter_config.json in the header's metadata (for chunks) and beside
  // the file (for a path): a PEFT folder.
  const auto* adapters = model.adapters().get();
  const auto params = adapters ? adapters->named_parameters() : model.named_parameters();
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (adapters) metadata[adapter_config_key] = policy::peft_adapter_config(adapters->options(), options_.base_model);
  std::vector<policy::tensor_view> views;
  views.reserve(params.size());
  for (const auto& item : params) {
    policy::tensor_view v;
    v.name = item.key();
    v.type = *saved;
    v.shape.assign(item.value().sizes().begin(), item.value().sizes().end());
    views.push_back(std::move(v));
  }
  auto layout = policy::plan_safetensors(views, metadata);
  if (!layout) return layout.error();
  const auto header = static_cast<std::int64_t>(layout->header.size());
  const auto total = static_cast<std::int64_t>(layout->total_bytes);
  const std::int64_t elements = (total - header) / elem;

  auto& b = *buffers_;
  const torch::Device device = model.device();
  if (!b.host.defined() || b.host.numel() < total) {
    b.host = torch::Tensor();
    auto options = torch::TensorOptions().dtype(torch::kUInt8);
    b.host = torch::empty({total}, device.is_cuda() ? options.pinned_memory(true) : options);
  }
  b.size = 0;
  auto* image = b.host.data_ptr<std::uint8_t>();
  std::memcpy(image, layout->header.data(), layout->header.size());
  // The data section as one tensor of the saved dtype (offsets are multiples
  // of the element size: every tensor has the same dtype).
  auto host_data = torch::from_blob(image + header, {elements}, torch::TensorOptions().dtype(type));
  torch::Tensor flat = host_data;
  if (device.is_cuda()) {
    if (!b.device_flat.defined() || b.device_flat.numel() != elements || b.device_flat.device() != device ||
        b.device_flat.scalar_type() != type)
      b.device_flat = torch::empty({elements}, torch::TensorOptions().dtype(type).device(device));
    flat = b.device_flat;
  }
  std::size_t i = 0;
  for (const auto& item : params) {
    const auto& p = item.value();
    const auto start = (static_cast<std::int64_t>(layout->offsets[i++]) - header) / elem;
    flat.narrow(0, start, p.numel()).view(p.sizes()).copy_(p.detach());
  }
  if (device.is_cuda()) host_data.copy_(flat);  // one device-to-host copy; synchronous
  b.size = static_cast<std::uint64_t>(total);
  const auto bytes = this->bytes();

  if (options_.publish_dir.empty())
    return describe_weights(version, bytes.size(), weights_digest(bytes), options_.chunk_bytes);
  const fs::path folder = fs::path(options_.publish_dir) / ("v-" + std::to_string(version));
  remove_tree(folder);  // a version of an earlier run
  if (adapters) {  // a PEFT folder
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) return make_error(errc::io, folder.string() + ": cannot create: " + ec.message());
    CRUCIBLE_TRY(write_file(folder / "adapter_config.json", metadata[adapter_config_key]));
  } else {
    policy::save_options files;
    if (!options_.tokenizer_from.empty()) files.tokenizer_from = fs::path(options_.tokenizer_from);
    CRUCIBLE_TRY(policy::save_causal_lm_files(model, folder, *saved, files));
  }
  auto digest = write_weights(bytes, folder / (adapters ? "adapter_model.safetensors" : "model.safetensors"), true);
  if (!digest) return digest.error();
  auto p = describe_weights(version, bytes.size(), std::move(*digest), options_.chunk_bytes);
  p.path = folder.string();
  p.chunks = 0;
  return p;
} catch (const c10::Error& e) {
  return make_error(errc::internal, "publishing version " + std::to_string(version) +
                                        ": LibTorch: " + e.what_without_backtrace());
}

}  // namespace crucible::learner
