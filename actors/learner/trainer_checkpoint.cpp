// trainer::save_checkpoint / load_checkpoint (trainer.hpp). A checkpoint
// folder step-N holds:
//   policy/       the policy in Hugging Face layout, at the training dtype;
//                 under LoRA instead adapter/, the adapters as a PEFT folder
//                 (the base is the learner's [learner] policy, unchanged)
//   reference/    the frozen reference, when there is one
//   optimizer.pt  AdamW's state (LibTorch archive); under zero_stage 2
//                 optimizer-zero.pt instead: AdamW's moments over the flat
//                 parameter vector, whole (gathered from the ranks), and the
//                 step count, which any number of ranks (one included) reads
//   rng.pt        LibTorch's default CPU generator state
//   state.json    version, optimizer steps, reward window, groups started
// and `latest` (a one-line file) names the newest complete one.
#include <ATen/CPUGeneratorImpl.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "runtime/base/remove_tree.hpp"
#include "runtime/base/write_file.hpp"
#include "actors/learner/adamw_state.hpp"
#include "actors/learner/trainer.hpp"
#include "actors/learner/zero_optimizer.hpp"
#include "actors/policy/lora_adapters.hpp"

namespace crucible::learner {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

policy::save_options exact_dtype(const policy::causal_lm& model) {
  policy::save_options o;
  const auto t = model.compute_dtype();
  o.tensor_dtype = t == torch::kBFloat16 ? policy::dtype::bf16 : t == torch::kHalf ? policy::dtype::f16 : policy::dtype::f32;
  return o;
}

status write_text(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  if (auto s = write_file(tmp, text); !s) {
    std::remove(tmp.c_str());
    return s;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return make_error(errc::io, path.string() + ": cannot rename into place: " + ec.message());
  return status::success();
}

result<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return make_error(errc::not_found, path.string() + ": no such file");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

result<fs::path> latest_step(const fs::path& dir) {
  auto name = read_text(dir / "latest");
  if (!name) return make_error(errc::not_found, dir.string() + ": no checkpoint (no 'latest' file)");
  std::string n = *name;
  while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
  if (n.empty() || n.find('/') != std::string::npos) return make_error(errc::corrupt, (dir / "latest").string() + ": bad step name");
  return dir / n;
}

status load_weights_into(const fs::path& dir, policy::causal_lm& model) {
  policy::model_placement placement;
  placement.device = model.device().str();
  placement.compute_dtype = exact_dtype(model).tensor_dtype;
  auto loaded = policy::load_causal_lm(dir, placement);
  if (!loaded) return loaded.error();
  auto from = (*loaded)->named_parameters();
  for (auto& item : model.named_parameters()) {
    const auto* p = from.find(item.key());
    if (p == nullptr || !p->sizes().equals(item.value().sizes()))
      return make_error(errc::corrupt, dir.string() + ": tensor " + item.key() + " missing or of another shape");
  }
  copy_weights(**loaded, model);
  return status::success();
}

// A LibTorch archive, serialized in memory and written with write_file (whose
// error names the OS's reason; LibTorch's own writer says only that it failed).
status save_archive(torch::serialize::OutputArchive& archive, const fs::path& path) {
  std::ostringstream bytes;
  archive.save_to(bytes);
  return write_file(path, bytes.str());
}

// A whole flat AdamW state (optimizer-zero.pt) into `optimizer`'s
// per-parameter state, for one process resuming a zero_stage 2 checkpoint.
status load_flat_state(torch::optim::AdamW& optimizer, const std::vector<torch::Tensor>& params,
                       const zero_state& saved, const fs::path& file) {
  std::int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  if (saved.exp_avg.numel() != total || saved.exp_avg_sq.numel() != total)
    return make_error(errc::corrupt, file.string() + ": AdamW state of " + std::to_string(saved.exp_avg.numel()) +
                                         " values for " + std::to_string(total) + " trained parameters");
  auto& state = optimizer.state();
  using map = std::decay_t<decltype(state)>;
  std::int64_t offset = 0;
  for (const auto& p : params) {
    const auto key = adamw_state_key<map>(p);
    state.erase(key);
    if (saved.step > 0) {
      auto fresh = std::make_unique<torch::optim::AdamWParamState>();
      fresh->step(saved.step);
      fresh->exp_avg(saved.exp_avg.narrow(0, offset, p.numel()).view(p.sizes()).to(p.options()).clone());
      fresh->exp_avg_sq(saved.exp_avg_sq.narrow(0, offset, p.numel()).view(p.sizes()).to(p.options()).clone());
      state.emplace(key, std::move(fresh));
    }
    offset += p.numel();
  }
  return status::success();
}

}  // namespace

result<fs::path> latest_checkpoint_weights(const fs::path& dir) {
  auto step = latest_step(dir);
  if (!step) return step.error();
  std::error_code ec;
  if (!fs::exists(*step / "policy", ec) && fs::exists(*step / "adapter", ec)) return *step / "adapter";
  return *step / "policy";
}

// Everything of a checkpoint into the folder tmp (save_checkpoint renames it).
status trainer::write_checkpoint(const fs::path& tmp, const zero_state* sharded) const {
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) return make_error(errc::io, tmp.string() + ": cannot create: " + ec.message());
  if (model_->adapters())
    CRUCIBLE_TRY(policy::save_adapters(*model_->adapters(), tmp / "adapter", options_.policy,
                                       *exact_dtype(*model_).tensor_dtype));
  else
    CRUCIBLE_TRY(policy::save_causal_lm(*model_, tmp / "policy", exact_dtype(*model_)));
  if (reference_) CRUCIBLE_TRY(policy::save_causal_lm(*reference_, tmp / "reference", exact_dtype(*reference_)));
  if (sharded) {
    torch::serialize::OutputArchive archive;
    archive.write("exp_avg", sharded->exp_avg);
    archive.write("exp_avg_sq", sharded->exp_avg_sq);
    archive.write("step", torch::tensor({sharded->step}, torch::kInt64));
    CRUCIBLE_TRY(save_archive(archive, tmp / "optimizer-zero.pt"));
  } else {
    torch::serialize::OutputArchive archive;
    optimizer_->save(archive);
    CRUCIBLE_TRY(save_archive(archive, tmp / "optimizer.pt"));
  }
  {
    torch::serialize::OutputArchive archive;
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("cpu", gen.get_state());
    CRUCIBLE_TRY(save_archive(archive, tmp / "rng.pt"));
  }
  json state = {{"version", version_},
                {"optimizer_steps", optimizer_steps_},
                {"objective", to_string(options_.objective)},
                {"reward_window", rewards_.values()},
                {"groups_trained", gate_.trained()},
                {"trained_groups", gate_.trained_groups()}};
  return write_text(tmp / "state.json", state.dump(1));
}

status trainer::save_checkpoint(const fs::path& dir) const {
  if (!zero_) {
    if (dp_ && dp_->rank() != 0) return status::success();
    return place_checkpoint(dir, nullptr);
  }
  // zero_stage 2: every rank takes part in the gathering, rank 0 writes, and
  // every rank learns whether it did, so that none goes on (or reads the
  // checkpoint back) before it is in place.
  auto gathered = zero_->gather_state();
  if (!gathered) return gathered.error();
  const status written = dp_->rank() == 0 ? place_checkpoint(dir, &*gathered) : status::success();
  std::vector<torch::Tensor> failed{torch::full({1}, written.ok() ? 0.0 : 1.0, torch::kFloat64)};
  CRUCIBLE_TRY(dp_->all_reduce_sum(failed));
  if (!written) return written;
  if (failed[0].item<double>() > 0)
    return make_error(errc::io, dir.string() + ": rank 0 could not write the checkpoint (its log says why)");
  return status::success();
}

status trainer::place_checkpoint(const fs::path& dir, const zero_state* sharded) const {
  const std::string name = "step-" + std::to_string(optimizer_steps_);
  const fs::path tmp = dir / (name + ".tmp"), final_dir = dir / name;
  remove_tree(tmp);
  status written;
  try {
    written = write_checkpoint(tmp, sharded);
  } catch (const c10::Error& e) {
    written = make_error(errc::internal, dir.string() + ": checkpoint: LibTorch: " + e.what_without_backtrace());
  }
  if (!written) {
    remove_tree(tmp);  // a full disk gets its space back; `latest` still names the previous checkpoint
    return written;
  }
  std::error_code ec;
  remove_tree(final_dir);
  fs::rename(tmp, final_dir, ec);
  if (ec) return make_error(errc::io, final_dir.string() + ": cannot rename into place: " + ec.message());
  return write_text(dir / "latest", name + "\n");
}

status trainer::load_checkpoint(const fs::path& dir) try {
  auto step = latest_step(dir);
  if (!step) return step.error();
  auto text = read_text(*step / "state.json");
  if (!text) return text.error();
  const json state = json::parse(*text, nullptr, false);
  if (state.is_discarded() || !state.contains("version") || !state.contains("optimizer_steps") ||
      !state.contains("reward_window"))
    return make_error(errc::corrupt, (*step / "state.json").string() + ": not a learner state");

  if (model_->adapters()) {
    if (!fs::exists(*step / "adapter"))
      return make_error(errc::corrupt, step->string() + ": LoRA is on but the checkpoint has no adapter folder");
    auto saved = policy::read_peft_adapter_config(*step / "adapter" / "adapter_config.json");
    if (!saved) return saved.error();
    const auto& now = model_->adapters()->options();
    if (saved->rank != now.rank || saved->alpha != now.alpha || saved->targets != now.targets)
      return make_error(errc::corrupt, step->string() + ": the checkpoint's adapters (" + saved->text() +
                                           ") are not this learner's (" + now.text() + ")");
    CRUCIBLE_TRY(policy::load_adapters(*model_, *step / "adapter"));
  } else {
    CRUCIBLE_TRY(load_weights_into(*step / "policy", *model_));
  }
  if (reference_) {
    if (!fs::exists(*step / "reference"))
      return make_error(errc::corrupt, step->string() + ": kl_beta > 0 but the checkpoint has no reference");
    CRUCIBLE_TRY(load_weights_into(*step / "reference", *reference_));
  }
  if (fs::exists(*step / "optimizer-zero.pt")) {
    // Written under zero_stage 2: the whole state, whatever the ranks that wrote it.
    torch::serialize::InputArchive archive;
    archive.load_from((*step / "optimizer-zero.pt").string());
    zero_state saved;
    torch::Tensor count;
    archive.read("exp_avg", saved.exp_avg);
    archive.read("exp_avg_sq", saved.exp_avg_sq);
    archive.read("step", count);
    saved.step = count.item<std::int64_t>();
    if (zero_) CRUCIBLE_TRY(zero_->load_state(saved));
    else CRUCIBLE_TRY(load_flat_state(*optimizer_, trainable(), saved, *step / "optimizer-zero.pt"));
  } else {
    if (zero_)
      return make_error(errc::corrupt, step->string() + ": zero_stage is 2 but the checkpoint has no optimizer-zero.pt "
                                                        "(it was written with zero_stage 0)");
    torch::serialize::InputArchive archive;
    archive.load_from((*step / "optimizer.pt").string());
    optimizer_->load(archive);
  }
  {
    torch::serialize::InputArchive archive;
    archive.load_from((*step / "rng.pt").string());
    torch::Tensor cpu;
    archive.read("cpu", cpu);
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(cpu);
  }
  version_ = state["version"].get<std::uint64_t>();
  optimizer_steps_ = state["optimizer_steps"].get<std::uint64_t>();
  rewards_.restore(state["reward_window"].get<std::vector<double>>());
  gate_.restore(state.value("groups_trained", std::uint64_t{0}),
                state.value("trained_groups", std::map<std::string, std::uint64_t>{}));
  return status::success();
} catch (const c10::Error& e) {
  return make_error(errc::corrupt, dir.string() + ": checkpoint: LibTorch: " + e.what_without_backtrace());
} catch (const json::exception& e) {
  return make_error(errc::corrupt, dir.string() + ": checkpoint state: " + e.what());
}

}  // namespace crucible::learner
