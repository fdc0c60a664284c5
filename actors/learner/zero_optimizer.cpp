#include "actors/learner/zero_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "actors/learner/adamw_state.hpp"

namespace crucible::learner {

result<std::unique_ptr<zero_optimizer>> zero_optimizer::create(std::vector<torch::Tensor> params,
                                                               const torch::optim::AdamWOptions& options,
                                                               collective& dp) {
  if (params.empty()) return make_error(errc::invalid_argument, "zero_stage 2: no parameters to train");
  for (const auto& p : params) {
    if (p.scalar_type() != params[0].scalar_type() || p.device() != params[0].device())
      return make_error(errc::invalid_argument, "zero_stage 2: the trained parameters mix dtypes or devices (" +
                                                    std::string(c10::toString(p.scalar_type())) + " on " +
                                                    p.device().str() + " beside " +
                                                    std::string(c10::toString(params[0].scalar_type())) + " on " +
                                                    params[0].device().str() + ")");
  }
  return std::unique_ptr<zero_optimizer>(new zero_optimizer(std::move(params), options, dp));
}

zero_optimizer::zero_optimizer(std::vector<torch::Tensor> params, const torch::optim::AdamWOptions& options,
                               collective& dp)
    : params_(std::move(params)), dp_(dp) {
  for (const auto& p : params_) {
    offsets_.push_back(total_);
    total_ += p.numel();
  }
  const std::int64_t world = dp_.world_size();
  slice_ = (total_ + world - 1) / world;
  mine_ = torch::zeros({slice_}, params_[0].options().requires_grad(false));
  torch::NoGradGuard no_grad;
  for_each_piece([&](std::size_t i, std::int64_t from, std::int64_t to, std::int64_t n) {
    mine_.narrow(0, to, n).copy_(params_[i].detach().reshape({-1}).narrow(0, from, n));
  });
  optimizer_ = std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{mine_}, options);
}

template <class Fn>
void zero_optimizer::for_each_piece(Fn fn) const {
  const std::int64_t lo = dp_.rank() * slice_, hi = lo + slice_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::int64_t a = std::max(lo, offsets_[i]), b = std::min(hi, offsets_[i] + params_[i].numel());
    if (a < b) fn(i, a - offsets_[i], a - lo, b - a);
  }
}

void zero_optimizer::zero_grad() {
  for (auto& p : params_) p.mutable_grad() = torch::Tensor();
  mine_.mutable_grad() = torch::Tensor();
}

result<double> zero_optimizer::reduce_gradients(double max_norm) {
  torch::NoGradGuard no_grad;
  auto flat = torch::zeros({slice_ * dp_.world_size()}, params_[0].options().requires_grad(false));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (p.grad().defined()) flat.narrow(0, offsets_[i], p.numel()).copy_(p.grad().reshape({-1}));
    p.mutable_grad() = torch::Tensor();  // the whole gradient goes; the slice's sum stays
  }
  auto reduced = dp_.reduce_scatter_sum(flat);
  if (!reduced) return reduced.error();
  flat = torch::Tensor();
  auto grad = *reduced;
  std::vector<torch::Tensor> squares{grad.to(torch::kFloat64).pow(2).sum().reshape({1})};
  CRUCIBLE_TRY(dp_.all_reduce_sum(squares));
  const double norm = std::sqrt(squares[0].item<double>());
  if (max_norm > 0) {
    const double coef = max_norm / (norm + 1e-6);  // clip_grad_norm_'s rule
    if (coef < 1) grad.mul_(coef);
  }
  // The slice AdamW steps starts from the parameters as they are now.
  for_each_piece([&](std::size_t i, std::int64_t from, std::int64_t to, std::int64_t n) {
    mine_.narrow(0, to, n).copy_(params_[i].detach().reshape({-1}).narrow(0, from, n));
  });
  mine_.mutable_grad() = grad;
  return norm;
}

status zero_optimizer::gather_parameters() {
  torch::NoGradGuard no_grad;
  auto gathered = dp_.all_gather(mine_.detach());
  if (!gathered) return gathered.error();
  for (std::size_t i = 0; i < params_.size(); ++i)
    params_[i].detach().copy_(gathered->narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes()));
  mine_.mutable_grad() = torch::Tensor();
  return status::success();
}

torch::Tensor zero_optimizer::moment(bool second) const {
  auto& state = optimizer_->state();
  using map = std::decay_t<decltype(state)>;
  auto it = state.find(adamw_state_key<map>(mine_));
  if (it == state.end()) return torch::zeros_like(mine_);
  auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
  return second ? s.exp_avg_sq() : s.exp_avg();
}

result<zero_state> zero_optimizer::gather_state() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> steps{torch::zeros({1}, torch::kFloat64)};
  auto& state = optimizer_->state();
  using map = std::decay_t<decltype(state)>;
  auto it = state.find(adamw_state_key<map>(mine_));
  if (it != state.end())
    steps[0].fill_(static_cast<double>(static_cast<torch::optim::AdamWParamState&>(*it->second).step()));
  zero_state out;
  auto avg = dp_.all_gather(moment(false).detach());
  if (!avg) return avg.error();
  auto sq = dp_.all_gather(moment(true).detach());
  if (!sq) return sq.error();
  out.exp_avg = avg->narrow(0, 0, total_).to(torch::kCPU).clone();
  out.exp_avg_sq = sq->narrow(0, 0, total_).to(torch::kCPU).clone();
  out.step = static_cast<std::int64_t>(steps[0].item<double>());  // the same on every rank
  return out;
}

status zero_optimizer::load_state(const zero_state& saved) {
  if (saved.exp_avg.numel() != total_ || saved.exp_avg_sq.numel() != total_)
    return make_error(errc::corrupt, "optimizer-zero.pt: AdamW state of " + std::to_string(saved.exp_avg.numel()) +
                                         " values for " + std::to_string(total_) + " trained parameters");
  torch::NoGradGuard no_grad;
  auto& state = optimizer_->state();
  using map = std::decay_t<decltype(state)>;
  const auto key = adamw_state_key<map>(mine_);
  state.erase(key);
  if (saved.step == 0) return status::success();
  // This rank's slice of the flat moments; the padding past the end stays zero.
  auto slice_of = [&](const torch::Tensor& whole) {
    auto padded = torch::zeros({slice_ * dp_.world_size()}, whole.options());
    padded.narrow(0, 0, total_).copy_(whole.reshape({-1}));
    return padded.narrow(0, dp_.rank() * slice_, slice_).to(mine_.options()).clone();
  };
  auto fresh = std::make_unique<torch::optim::AdamWParamState>();
  fresh->step(saved.step);
  fresh->exp_avg(slice_of(saved.exp_avg));
  fresh->exp_avg_sq(slice_of(saved.exp_avg_sq));
  state.emplace(key, std::move(fresh));
  return status::success();
}

std::int64_t zero_optimizer::gradient_bytes() const { return slice_ * mine_.element_size(); }

std::int64_t zero_optimizer::optimizer_state_bytes() const { return 3 * slice_ * mine_.element_size(); }

}  // namespace crucible::learner
