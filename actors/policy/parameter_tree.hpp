// Parameters registered under Hugging Face's dotted names
// ("model.layers.0.mlp.up_proj.weight") through torch::nn::Module's
// hierarchy, so that named_parameters() yields them as a checkpoint names
// them. Used by causal_lm and lora_adapters (LibTorch; policy-internal).
#pragma once

#include <torch/torch.h>

#include <string>

namespace crucible::policy {

// A node of the parameter tree; its only purpose is to give parameters their
// dotted names.
struct parameter_node : torch::nn::Module {};

// Registers `value` as the parameter called `dotted` under `root`, creating
// the intermediate nodes.
inline torch::Tensor add_parameter(torch::nn::Module& root, const std::string& dotted, torch::Tensor value) {
  torch::nn::Module* node = &root;
  std::size_t start = 0;
  for (std::size_t dot = dotted.find('.'); dot != std::string::npos; dot = dotted.find('.', start)) {
    const std::string part = dotted.substr(start, dot - start);
    auto children = node->named_children();
    if (auto* child = children.find(part)) {
      node = child->get();
    } else {
      node = node->register_module(part, std::make_shared<parameter_node>()).get();
    }
    start = dot + 1;
  }
  return node->register_parameter(dotted.substr(start), std::move(value));
}

}  // namespace crucible::policy
