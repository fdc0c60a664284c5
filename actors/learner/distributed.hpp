// Data parallelism over processes with LibTorch's c10d: a collective
// (trainer.hpp) backed by ProcessGroupGloo (CPU tensors; NCCL on GPUs is not
// wired yet). Ranks rendezvous through a FileStore on a file system they
// share. Every rank builds the same trainer around its collective and is given
// the same batches; see collective for how the work is split.
// Includes LibTorch (through trainer.hpp): learner files only.
#pragma once

#include <chrono>
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

// Joins the group (blocks until every rank has joined or the timeout).
// invalid_argument for a bad rank, world size or empty store path;
// unavailable when c10d cannot connect.
result<std::unique_ptr<collective>> join_gloo(const gloo_options& options);

}  // namespace crucible::learner
