#include "actors/learner/distributed.hpp"

// PyTorch's wheels ship c10d's Gloo header but not gloo's own headers: Gloo
// builds where they are (Debian's LibTorch), join_gloo says unavailable elsewhere.
#if __has_include(<gloo/algorithm.h>)
#define CRUCIBLE_WITH_GLOO 1
// The c10d Gloo headers are guarded by the macro LibTorch's build defines.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#else
#define CRUCIBLE_WITH_GLOO 0
#endif

#include <map>

namespace crucible::learner {

void flat_all_reduce(std::vector<torch::Tensor>& tensors, const torch::Device& staging,
                     const std::function<void(std::vector<torch::Tensor>&)>& reduce) {
  std::map<c10::ScalarType, std::vector<std::size_t>> by_type;
  for (std::size_t i = 0; i < tensors.size(); ++i) by_type[tensors[i].scalar_type()].push_back(i);
  for (auto& [type, indices] : by_type) {
    std::vector<torch::Tensor> flat;
    for (auto i : indices) flat.push_back(tensors[i].detach().reshape({-1}).to(staging));
    std::vector<torch::Tensor> buffer{torch::cat(flat)};
    reduce(buffer);
    std::int64_t offset = 0;
    torch::NoGradGuard no_grad;
    for (auto i : indices) {
      const auto n = tensors[i].numel();
      tensors[i].copy_(buffer[0].narrow(0, offset, n).view(tensors[i].sizes()));
      offset += n;
    }
  }
}

#if CRUCIBLE_WITH_GLOO

namespace {

class gloo_collective final : public collective {
 public:
  gloo_collective(c10::intrusive_ptr<c10d::ProcessGroupGloo> group, int rank, int world)
      : group_(std::move(group)), rank_(rank), world_(world) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  // Summed on the CPU (flat_all_reduce).
  status all_reduce_sum(std::vector<torch::Tensor>& tensors) override try {
    flat_all_reduce(tensors, torch::kCPU, [this](std::vector<torch::Tensor>& buffer) { group_->allreduce(buffer)->wait(); });
    return status::success();
  } catch (const std::exception& e) {
    return make_error(errc::io, "gloo all-reduce on rank " + std::to_string(rank_) + ": " + e.what());
  }

  // LibTorch 1.13's Gloo group has no reduce-scatter: an all-to-all sends
  // slice j to rank j (the same bytes a reduce-scatter moves), and this rank
  // sums the world_size slices it receives, in rank order.
  result<torch::Tensor> reduce_scatter_sum(const torch::Tensor& flat) override try {
    if (flat.dim() != 1 || flat.numel() % world_ != 0)
      return make_error(errc::invalid_argument, "gloo reduce-scatter: " + std::to_string(flat.numel()) +
                                                    " elements do not split over " + std::to_string(world_) + " ranks");
    auto input = flat.contiguous().to(torch::kCPU);
    auto received = torch::empty_like(input);
    std::vector<std::int64_t> equal;  // empty: equal slices
    group_->alltoall_base(received, input, equal, equal)->wait();
    return received.view({world_, -1}).sum(0).to(flat.device());
  } catch (const std::exception& e) {
    return make_error(errc::io, "gloo reduce-scatter on rank " + std::to_string(rank_) + ": " + e.what());
  }

  result<torch::Tensor> all_gather(const torch::Tensor& shard) override try {
    std::vector<torch::Tensor> input{shard.contiguous().to(torch::kCPU)};
    std::vector<std::vector<torch::Tensor>> output(1);
    for (int r = 0; r < world_; ++r) output[0].push_back(torch::empty_like(input[0]));
    group_->allgather(output, input)->wait();
    return torch::cat(output[0]).to(shard.device());
  } catch (const std::exception& e) {
    return make_error(errc::io, "gloo all-gather on rank " + std::to_string(rank_) + ": " + e.what());
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  int rank_, world_;
};

}  // namespace

result<std::unique_ptr<collective>> join_gloo(const gloo_options& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    return make_error(errc::invalid_argument, "gloo: rank " + std::to_string(o.rank) + " is not in a world of " +
                                                  std::to_string(o.world_size));
  if (o.store_path.empty()) return make_error(errc::invalid_argument, "gloo: no rendezvous store path");
  try {
    auto store = c10::make_intrusive<c10d::FileStore>(o.store_path, o.world_size);
    auto options = c10d::ProcessGroupGloo::Options::create(o.timeout);
    options->devices.push_back(o.host.empty() ? c10d::ProcessGroupGloo::createDefaultDevice()
                                              : c10d::ProcessGroupGloo::createDeviceForHostname(o.host));
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, o.rank, o.world_size, options);
    return std::unique_ptr<collective>(new gloo_collective(std::move(group), o.rank, o.world_size));
  } catch (const std::exception& e) {
    return make_error(errc::unavailable, "gloo: rank " + std::to_string(o.rank) + " cannot join through " +
                                             o.store_path + ": " + e.what());
  }
}

bool gloo_available() { return true; }

#else

bool gloo_available() { return false; }

result<std::unique_ptr<collective>> join_gloo(const gloo_options&) {
  return make_error(errc::unavailable, "gloo: this build's LibTorch ships no gloo headers (PyTorch's wheels)");
}

#endif

}  // namespace crucible::learner
