#include "actors/evaluator/cpu_stage.hpp"

#include <chrono>

#include "actors/evaluator/cores_beside.hpp"
#include "actors/evaluator/syntax_check.hpp"

namespace crucible::evaluator {
namespace {

std::string key_of(const std::string& candidate_source, const std::string& task_source) {
  return sha256_hex(std::to_string(task_source.size()) + ":" + task_source + candidate_source);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

cpu_stage::cpu_stage(std::shared_ptr<compile_cache> cache, worker_environment env, sandbox_limits limits,
                     std::filesystem::path scratch_root)
    : cache_(std::move(cache)), env_(std::move(env)), limits_(std::move(limits)),
      scratch_root_(std::move(scratch_root)) {
  // The syntax check and the compiles: any core but the measuring ones.
  limits_.cores = cores_beside(limits_.cores);
}

cpu_stage::~cpu_stage() {
  std::lock_guard lock(mutex_);
  for (auto& [key, f] : held_) f.wait();
}

cpu_verdict cpu_stage::run(const std::string& candidate_source, const std::string& task_source) const {
  cpu_verdict v;
  auto t = std::chrono::steady_clock::now();
  v.syntax = syntax_error_of(candidate_source, env_, limits_, scratch_root_);
  v.syntax_s = seconds_since(t);
  if (v.syntax && *v.syntax) return v;
  t = std::chrono::steady_clock::now();
  v.compiled = cache_->prepare(candidate_source, task_source, env_, scratch_root_, limits_.cores);
  v.compile_s = seconds_since(t);
  return v;
}

void cpu_stage::ahead(const std::string& candidate_source, const std::string& task_source) {
  const std::string key = key_of(candidate_source, task_source);
  std::lock_guard lock(mutex_);
  if (held_.count(key)) return;
  held_.emplace(key, std::async(std::launch::async, [this, candidate_source, task_source] {
                  auto v = run(candidate_source, task_source);
                  v.ahead = true;
                  return v;
                }));
}

cpu_verdict cpu_stage::take(const std::string& candidate_source, const std::string& task_source) {
  std::future<cpu_verdict> f;
  {
    std::lock_guard lock(mutex_);
    auto it = held_.find(key_of(candidate_source, task_source));
    if (it != held_.end()) {
      f = std::move(it->second);
      held_.erase(it);
    }
  }
  return f.valid() ? f.get() : run(candidate_source, task_source);
}

bool cpu_stage::ready(const std::string& candidate_source, const std::string& task_source) const {
  std::lock_guard lock(mutex_);
  auto it = held_.find(key_of(candidate_source, task_source));
  return it == held_.end() || it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::size_t cpu_stage::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

}  // namespace crucible::evaluator
