// Data parallelism over processes with LibTorch's c10d: a collective
// (trainer.hpp) backed by ProcessGroupGloo (any tensors, summed on the CPU)
// or, where LibTorch was built with CUDA and NCCL (PyTorch's wheels, not
// Debian's CPU LibTorch), ProcessGroupNCCL (summed on the GPU). Ranks
// rendezvous through a FileStore on a file system they share. Every rank builds the same trainer around its collective and is given
// the same batches; see collective for how the work is split.
// Includes LibTorch (through trainer.hpp): learner files only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "actors/learner/trainer.hpp"

namespace crucible::learner {

struct gloo_options {
  int rank = 0;
  int world_size = 1;
  std::string store_path;          // rendezvous file; every rank names the same one, absent or empty beforehand
  std::string host = "127.0.0.1";  // address this rank's Gloo device binds; "" resolves the host name
  std::chrono::milliseconds timeout{60000};  // a collective that waits longer fails; default 60 s
};

// Whether this build has ProcessGroupGloo (Debian's LibTorch does; PyTorch's
// wheels lack gloo's headers).
bool gloo_available();

// Joins the group (blocks until every rank has joined or the timeout).
// invalid_argument for a bad rank, world size or empty store path;
// unavailable when c10d cannot connect or this build has no Gloo.
result<std::unique_ptr<collective>> join_gloo(const gloo_options& options);

struct nccl_options {
  int rank = 0;
  int world_size = 1;
  std::string store_path;  // rendezvous file, as gloo_options::store_path
  int device = 0;          // this rank's CUDA device index (0 when each rank sees one GPU); default 0
  std::chrono::milliseconds timeout{600000};  // a collective that waits longer fails; default 10 min
};

// Whether this build has ProcessGroupNCCL (distributed_nccl.cpp; CMake's
// CRUCIBLE_WITH_NCCL).
bool nccl_available();

// Joins an NCCL group. The collective sums tensors of any device on
// options.device (CPU tensors are copied there and back), one all-reduce per
// dtype. invalid_argument as join_gloo; unavailable without NCCL in this
// build or when c10d cannot connect.
result<std::unique_ptr<collective>> join_nccl(const nccl_options& options);

// What the Gloo and NCCL collectives share: sums `tensors` across ranks with
// one `reduce` (the backend's in-place all-reduce of one buffer) per dtype,
// over a flat copy of that dtype's tensors on `staging`; the sums are copied
// back into the tensors, whatever their device.
void flat_all_reduce(std::vector<torch::Tensor>& tensors, const torch::Device& staging,
                     const std::function<void(std::vector<torch::Tensor>&)>& reduce);

}  // namespace crucible::learner
