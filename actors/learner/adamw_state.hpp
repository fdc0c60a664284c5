// Where torch::optim::AdamW keeps a parameter's state: under the address of
// its TensorImpl (a string of it in older LibTorch). trainer.cpp's fused
// step and zero_optimizer.cpp's checkpoint state reach it through this key,
// so that state they make or restore is the state AdamW's own step uses.
// Includes LibTorch: learner files only.
#pragma once

#include <torch/torch.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace crucible::learner {

template <class Map>
typename Map::key_type adamw_state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename Map::key_type, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

}  // namespace crucible::learner
