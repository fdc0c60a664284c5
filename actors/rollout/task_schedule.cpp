#include "actors/rollout/task_schedule.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace crucible::rollout {

namespace fs = std::filesystem;

namespace {

result<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return make_error(errc::io, "task file '" + p.string() + "' cannot be read");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

result<task_entry> one_task(const fs::path& root, const std::string& id, double weight) {
  for (const auto& candidate : {root / id / "task.py", root / (id + ".py")}) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    auto code = read_text(candidate);
    if (!code) return code.error();
    return task_entry{id, candidate, std::move(*code), weight};
  }
  return make_error(errc::not_found, "task '" + id + "': neither " + (root / id / "task.py").string() + " nor " +
                                         (root / (id + ".py")).string() + " exists");
}

}  // namespace

result<std::vector<task_entry>> load_tasks(const fs::path& root, const std::vector<std::string>& entries) {
  std::vector<task_entry> out;
  std::set<std::string> seen;
  auto add = [&](task_entry t) -> status {
    if (!seen.insert(t.id).second)
      return make_error(errc::invalid_argument, "tasks: '" + t.id + "' is listed twice");
    out.push_back(std::move(t));
    return {};
  };
  for (const auto& entry : entries) {
    std::string id = entry;
    double weight = 1;
    if (auto eq = entry.rfind('='); eq != std::string::npos) {
      id = entry.substr(0, eq);
      const char* b = entry.data() + eq + 1;
      const char* e = entry.data() + entry.size();
      auto [ptr, ec] = std::from_chars(b, e, weight);
      if (ec != std::errc() || ptr != e || !(weight > 0))
        return make_error(errc::invalid_argument, "tasks: '" + entry + "': the weight after '=' must be a positive number");
    }
    if (id.size() >= 2 && id.ends_with("/*")) {
      std::string prefix = id.substr(0, id.size() - 2);
      std::vector<std::string> found;
      std::error_code ec;
      // Folders holding a task.py (the project's task set) and KernelBench's
      // files (level1/12_Matmul_with_diagonal_matrices_.py).
      for (fs::directory_iterator it(root / prefix, ec), end; !ec && it != end; it.increment(ec)) {
        const auto& p = it->path();
        if (fs::is_regular_file(p / "task.py"))
          found.push_back(prefix + "/" + p.filename().string());
        else if (p.extension() == ".py" && fs::is_regular_file(p))
          found.push_back(prefix + "/" + p.stem().string());
      }
      if (found.empty())
        return make_error(errc::not_found, "tasks: '" + entry + "' matches no folder with a task.py and no .py file under " +
                                               (root / prefix).string());
      std::sort(found.begin(), found.end());
      for (const auto& f : found) {
        auto t = one_task(root, f, weight);
        if (!t) return t.error();
        CRUCIBLE_TRY(add(std::move(*t)));
      }
      continue;
    }
    auto t = one_task(root, id, weight);
    if (!t) return t.error();
    CRUCIBLE_TRY(add(std::move(*t)));
  }
  if (out.empty()) return make_error(errc::invalid_argument, "tasks: no task given");
  return out;
}

task_schedule::task_schedule(std::vector<task_entry> tasks, schedule_kind kind, std::uint64_t seed)
    : tasks_(std::move(tasks)), kind_(kind), seed_(seed) {
  CRUCIBLE_CHECK(!tasks_.empty(), "a task schedule has tasks");
}

const task_entry& task_schedule::pick(std::uint64_t group_number) const {
  if (kind_ == schedule_kind::round_robin) return tasks_[group_number % tasks_.size()];
  std::seed_seq seq{static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32),
                    static_cast<std::uint32_t>(group_number), static_cast<std::uint32_t>(group_number >> 32)};
  std::mt19937_64 rng(seq);
  std::vector<double> w;
  for (const auto& t : tasks_) w.push_back(t.weight);
  std::discrete_distribution<std::size_t> d(w.begin(), w.end());
  return tasks_[d(rng)];
}

}  // namespace crucible::rollout
