#include "actors/evaluator/worker_pool.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "actors/evaluator/cores_beside.hpp"

namespace crucible::evaluator {

bool worker_recipe::same_as(const worker_recipe& o) const {
  const auto& a = how.limits;
  const auto& b = o.how.limits;
  return how.env.python == o.how.env.python && how.env.worker_script == o.how.env.worker_script &&
         how.env.generated_python == o.how.env.generated_python &&
         how.env.stream_fence == o.how.env.stream_fence && how.writable == o.how.writable &&
         how.cuda_visible_devices == o.how.cuda_visible_devices && how.threads == o.how.threads &&
         how.extra_env == o.how.extra_env && a.address_space_bytes == b.address_space_bytes &&
         a.max_processes == b.max_processes && a.max_open_files == b.max_open_files &&
         a.cpu_seconds == b.cpu_seconds && a.max_file_bytes == b.max_file_bytes &&
         a.isolate_network == b.isolate_network && a.read_only_filesystem == b.read_only_filesystem &&
         a.cores == b.cores && scratch_root == o.scratch_root && keep_scratch == o.keep_scratch;
}

result<started_worker> worker_pool::start(const worker_recipe& recipe, const std::vector<int>& cores) {
  auto scratch = scratch_dir::create(recipe.scratch_root, "eval");
  if (!scratch) return scratch.error();
  if (recipe.keep_scratch) scratch->keep();
  worker_start how = recipe.how;
  how.scratch = scratch->path();
  how.limits.cores = cores;
  if (cores != recipe.how.limits.cores) how.limits.nice = 10;  // a spare: its start yields to the roles beside it
  auto session = worker_session::start(how);
  if (!session) return session.error();
  return started_worker{std::move(scratch.value()), std::move(session.value()), false};
}

std::vector<int> worker_pool::spare_pids() const {
  std::vector<int> out;
  for (const auto& s : spares_) out.push_back(s.session.process().pid());
  return out;
}

worker_pool::quiet_scope worker_pool::quiet() {
  // .hold first, then .imported: the worker writes .imported first, then
  // looks for .hold, so no spare passes between the two (worker_pool.hpp).
  std::vector<std::filesystem::path> holds;
  for (auto& s : spares_) {
    auto hold = s.scratch.path() / ".hold";
    if (std::ofstream(hold)) holds.push_back(std::move(hold));
  }
  std::vector<int> stopped;
  for (auto& s : spares_) {
    std::error_code ec;
    const int pid = s.session.process().pid();
    if (pid > 0 && s.session.process().alive() && std::filesystem::exists(s.scratch.path() / ".imported", ec) &&
        ::kill(-pid, SIGSTOP) == 0)
      stopped.push_back(pid);
  }
  return quiet_scope(std::move(stopped), std::move(holds));
}

worker_pool::quiet_scope::~quiet_scope() {
  std::error_code ec;
  for (const auto& hold : holds_) std::filesystem::remove(hold, ec);
  for (int pid : stopped_) ::kill(-pid, SIGCONT);
}

void worker_pool::prime(const worker_recipe& recipe) { top_up(recipe, ~0u); }

void worker_pool::top_up(const worker_recipe& recipe, unsigned at_most) {
  if (!spare_recipe_ || !spare_recipe_->same_as(recipe)) spares_.clear();  // another device or limits
  spare_recipe_ = recipe;
  const unsigned want = recipe.how.cuda_visible_devices.empty() ? cpu_spares_ : gpu_spares_;
  for (unsigned i = 0; i < at_most && spares_.size() < want; ++i) {
    auto next = start(recipe, cores_beside(recipe.how.limits.cores));
    if (!next) break;
    spares_.push_back(std::move(next.value()));
  }
}

result<started_worker> worker_pool::take(const worker_recipe& recipe) {
  if (!spare_recipe_ || !spare_recipe_->same_as(recipe)) spares_.clear();  // another device or limits
  std::optional<started_worker> out;
  // A spare that died while it waited (killed from outside, out of memory)
  // is dropped, not handed over.
  while (!out && !spares_.empty()) {
    if (spares_.front().session.process().alive()) {
      out.emplace(std::move(spares_.front()));
      out->warm = true;
      out->session.process().pin(recipe.how.limits.cores);
    }
    spares_.pop_front();
  }
  if (!out) {
    auto fresh = start(recipe, recipe.how.limits.cores);
    if (!fresh) return fresh.error();
    out.emplace(std::move(fresh.value()));
  }
  // Up to two new spares per take, until there are as many as wanted: they
  // start about one evaluation apart, so that one is ready at every take.
  top_up(recipe, 2);
  return std::move(*out);
}

}  // namespace crucible::evaluator
