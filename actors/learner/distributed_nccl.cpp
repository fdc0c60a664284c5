// The NCCL half of distributed.hpp, in its own file: only builds with a CUDA
// LibTorch and nccl.h define CRUCIBLE_WITH_NCCL (actors/learner/CMakeLists.txt).
#include "actors/learner/distributed.hpp"

#if CRUCIBLE_WITH_NCCL
// The c10d NCCL header is guarded by the macro LibTorch's build defines.
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace crucible::learner {

#if CRUCIBLE_WITH_NCCL

namespace {

class nccl_collective final : public collective {
 public:
  nccl_collective(c10::intrusive_ptr<c10d::ProcessGroupNCCL> group, int rank, int world, int device)
      : group_(std::move(group)), rank_(rank), world_(world), device_(torch::kCUDA, static_cast<c10::DeviceIndex>(device)) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

  // Summed on this rank's GPU (flat_all_reduce), tensors of any device.
  status all_reduce_sum(std::vector<torch::Tensor>& tensors) override try {
    flat_all_reduce(tensors, device_, [this](std::vector<torch::Tensor>& buffer) { group_->allreduce(buffer)->wait(); });
    return status::success();
  } catch (const std::exception& e) {
    return make_error(errc::io, "nccl all-reduce on rank " + std::to_string(rank_) + ": " + e.what());
  }

  // NCCL's own reduce-scatter and all-gather, on this rank's GPU.
  result<torch::Tensor> reduce_scatter_sum(const torch::Tensor& flat) override try {
    if (flat.dim() != 1 || flat.numel() % world_ != 0)
      return make_error(errc::invalid_argument, "nccl reduce-scatter: " + std::to_string(flat.numel()) +
                                                    " elements do not split over " + std::to_string(world_) + " ranks");
    auto input = flat.contiguous().to(device_);
    auto shard = torch::empty({flat.numel() / world_}, input.options());
    group_->_reduce_scatter_base(shard, input)->wait();
    return shard.to(flat.device());
  } catch (const std::exception& e) {
    return make_error(errc::io, "nccl reduce-scatter on rank " + std::to_string(rank_) + ": " + e.what());
  }

  result<torch::Tensor> all_gather(const torch::Tensor& shard) override try {
    auto input = shard.contiguous().to(device_);
    auto output = torch::empty({shard.numel() * world_}, input.options());
    group_->_allgather_base(output, input)->wait();
    return output.to(shard.device());
  } catch (const std::exception& e) {
    return make_error(errc::io, "nccl all-gather on rank " + std::to_string(rank_) + ": " + e.what());
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
  int rank_, world_;
  torch::Device device_;
};

}  // namespace

bool nccl_available() { return true; }

result<std::unique_ptr<collective>> join_nccl(const nccl_options& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    return make_error(errc::invalid_argument, "nccl: rank " + std::to_string(o.rank) + " is not in a world of " +
                                                  std::to_string(o.world_size));
  if (o.store_path.empty()) return make_error(errc::invalid_argument, "nccl: no rendezvous store path");
  if (o.device < 0) return make_error(errc::invalid_argument, "nccl: device " + std::to_string(o.device));
  try {
    auto store = c10::make_intrusive<c10d::FileStore>(o.store_path, o.world_size);
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = o.timeout;
    auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, o.rank, o.world_size, options);
    return std::unique_ptr<collective>(new nccl_collective(std::move(group), o.rank, o.world_size, o.device));
  } catch (const std::exception& e) {
    return make_error(errc::unavailable, "nccl: rank " + std::to_string(o.rank) + " cannot join through " +
                                             o.store_path + ": " + e.what());
  }
}

#else

bool nccl_available() { return false; }

result<std::unique_ptr<collective>> join_nccl(const nccl_options&) {
  return make_error(errc::unavailable,
                    "nccl: this build has no NCCL (LibTorch without CUDA, or nccl.h not found: see "
                    "actors/learner/CMakeLists.txt)");
}

#endif

}  // namespace crucible::learner
