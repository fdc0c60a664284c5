// ZeRO stage 2 for the trainer (trainer.cpp uses it when [learner]
// zero_stage = 2 and its collective has more than one rank). The trained
// parameters are laid end to end in one flat vector cut into world_size
// equal slices; this rank keeps AdamW's state and the summed gradient of its
// slice alone, while every rank keeps the whole parameters. After the
// backward passes, reduce_gradients reduce-scatters the ranks' gradients
// (each rank receives the sum over ranks of its slice), frees the whole
// ones, and clips the slice by the global norm; the trainer steps AdamW on
// the slice; gather_parameters all-gathers the updated slices into every
// rank's parameters. The same update as one process up to summation order;
// per rank, AdamW's state and the kept gradient are 1/world of the whole.
// The whole gradients exist from the backward pass to the reduce-scatter
// (no bucketed reduction during the backward pass, as DeepSpeed's).
// Includes LibTorch: learner files only.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/learner/trainer.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

// AdamW's state over the whole flat parameter vector (no padding): what a
// checkpoint holds, whatever the number of ranks that wrote it or reads it.
struct zero_state {
  torch::Tensor exp_avg, exp_avg_sq;  // 1-D, the flat vector's length, on the CPU
  std::int64_t step = 0;              // optimizer steps taken (0: no state yet)
};

class zero_optimizer {
 public:
  // `params`: what the trainer trains, all of one dtype and device
  // (invalid_argument otherwise, or for an empty list). `dp` must outlive it.
  static result<std::unique_ptr<zero_optimizer>> create(std::vector<torch::Tensor> params,
                                                         const torch::optim::AdamWOptions& options, collective& dp);

  // Drops every parameter's gradient (before a mini-batch's backward passes).
  void zero_grad();
  // Reduce-scatters the parameters' gradients into this rank's slice (a
  // missing gradient counts as zeros), frees them, and scales the slice so
  // that the global 2-norm is at most max_norm (0: no clipping), as
  // clip_grad_norm_ does. Returns the global norm before clipping. io when a
  // collective fails.
  result<double> reduce_gradients(double max_norm);
  // AdamW over this rank's slice, whose gradient reduce_gradients set: the
  // trainer sets its learning rate and steps it.
  torch::optim::AdamW& optimizer() { return *optimizer_; }
  // Every rank's stepped slice into every rank's parameters. io as above.
  status gather_parameters();

  // Every rank calls it (a collective): the whole state, for a checkpoint.
  result<zero_state> gather_state();
  // This rank's slice of a saved whole state. corrupt when its length is
  // not this model's parameter count.
  status load_state(const zero_state& state);

  // What this rank keeps between steps, in bytes: the gradient slice; AdamW's
  // two moments of the slice and the slice of parameters it steps.
  std::int64_t gradient_bytes() const;
  std::int64_t optimizer_state_bytes() const;

 private:
  zero_optimizer(std::vector<torch::Tensor> params, const torch::optim::AdamWOptions& options, collective& dp);
  // Calls fn(parameter index, offset in the parameter, offset in the slice,
  // length) for each piece of a parameter inside this rank's slice.
  template <class Fn>
  void for_each_piece(Fn fn) const;
  torch::Tensor moment(bool second) const;  // this rank's exp_avg (or exp_avg_sq), zeros before the first step

  std::vector<torch::Tensor> params_;
  std::vector<std::int64_t> offsets_;  // params_[i] starts at offsets_[i] of the flat vector
  std::int64_t total_ = 0;             // the flat vector's length
  std::int64_t slice_ = 0;             // each rank's slice length: ceil(total_ / world)
  collective& dp_;
  torch::Tensor mine_;                 // this rank's slice of the parameters, the tensor AdamW steps
  std::unique_ptr<torch::optim::AdamW> optimizer_;
};

}  // namespace crucible::learner
