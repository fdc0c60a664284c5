// Which task a rollout's next group works on. Tasks come from a folder in
// the evaluator's layout (task ID is ROOT/ID/task.py or ROOT/ID.py); the
// schedule is a pure function of the group number, so a restarted rollout
// picks the same task for the same group. Used by the rollout actor; any
// thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::rollout {

struct task_entry {
  std::string id;           // "cpu/gelu_tanh"
  std::filesystem::path file;
  std::string code;         // the task file (the prompt's reference code)
  double weight = 1;        // for the weighted schedule
};

// Resolves entries ("ID", "ID=WEIGHT", "PREFIX/*": every folder under
// ROOT/PREFIX holding a task.py, in name order) and reads each task file.
// invalid_argument naming the entry for a bad weight or a duplicate; not_found
// naming the paths tried for a task file that does not exist or a PREFIX/*
// that matches nothing.
result<std::vector<task_entry>> load_tasks(const std::filesystem::path& root, const std::vector<std::string>& entries);

enum class schedule_kind { round_robin, weighted };

class task_schedule {
 public:
  // tasks must not be empty. weighted: task i with probability weight_i / sum,
  // drawn from a generator seeded by (seed, group number).
  task_schedule(std::vector<task_entry> tasks, schedule_kind kind, std::uint64_t seed);
  const task_entry& pick(std::uint64_t group_number) const;
  const std::vector<task_entry>& tasks() const { return tasks_; }

 private:
  std::vector<task_entry> tasks_;
  schedule_kind kind_;
  std::uint64_t seed_;
};

}  // namespace crucible::rollout
