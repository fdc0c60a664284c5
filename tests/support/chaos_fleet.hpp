// The chaos test's fleet: every role of the loop as its own `crucible`
// process (hub, referee, evaluator, exemplar store, learner, rollouts,
// detector), each of which the driver kills with a signal and starts again
// under the same name, noting when the restarted process is back on the bus
// (the hub's log says it registered; for the hub itself: every running role
// registered with the new hub). A killed evaluator's sandbox workers are
// checked to die with it (none may be left orphaned).
//
// Who calls it: tests/integration/chaos_processes.test.cpp, from its main
// thread only. Not thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.hpp"

namespace crucible::testing {

// One role process and how to start it.
struct chaos_role {
  std::string name;  // its name on the bus, and its log DIR/NAME.log
  std::string kind;  // the role, for the summary: hub, referee, evaluator, exemplar store, ...
  // The crucible arguments of its next start (a rollout's depend on its state file).
  std::function<std::vector<std::string>()> args;
  // Whether it is done and must not start again (a rollout whose groups are all trained).
  std::function<bool()> finished = [] { return false; };
};

// One kill and what came of it.
struct chaos_kill {
  std::string name, kind;
  int signal = 0;
  double at_s = 0;          // since the fleet started
  double recovered_s = -1;  // from the kill until back on the bus; -1: not (yet)
  bool superseded = false;  // killed again before it was back
  bool restarted = true;    // false: a rollout that had finished its groups
  int workers = 0;          // sandbox workers the killed evaluator had
  int orphaned_workers = 0; // of those, alive after it was gone
};

class chaos_fleet {
 public:
  chaos_fleet(std::string dir, std::string hub_name);
  ~chaos_fleet();

  void add(chaos_role role);
  void start(const std::string& name);
  // Starts every role and waits until each is on the bus; false on timeout.
  bool start_all(std::chrono::seconds timeout);

  // Kills the role's process with `signal` (SIGKILL, or SIGTERM and a wait
  // for its exit), checks a killed evaluator's sandbox workers are gone, and
  // starts it again unless it is finished. Returns the kill's index.
  std::size_t kill_and_restart(const std::string& name, int signal);

  // Notes recoveries, and starts again a role that exited on its own (a
  // finished rollout is left down). Call it often.
  void poll();
  // Roles running now (candidates for the next kill), by name.
  std::vector<std::string> running();
  bool all_recovered() const;

  // SIGTERM to every role (the hub last), each waited for.
  void stop_all();

  const std::vector<chaos_kill>& kills() const { return kills_; }
  // Exits nobody asked for: "NAME: status S" (a role that failed by itself).
  const std::vector<std::string>& unexpected_exits() const { return unexpected_; }
  double seconds() const;
  std::string hub_log() const { return dir_ + "/" + hub_name_ + ".log"; }

 private:
  struct member {
    chaos_role role;
    std::unique_ptr<child> proc;
    std::size_t log_offset = 0;   // hub log size when it last started
    std::vector<std::size_t> open_kills;  // kills not yet recovered from
  };
  bool registered_since(const member& m, std::size_t offset) const;
  bool back_on_bus(const member& m) const;
  member& get(const std::string& name);

  std::string dir_, hub_name_;
  std::vector<std::string> order_;
  std::map<std::string, member> members_;
  std::vector<chaos_kill> kills_;
  std::vector<std::string> unexpected_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// Sandbox worker processes (sandbox_worker.py) whose parent is `pid`, as
// "PID:STARTTIME" so that a reused pid is not taken for the same process.
std::vector<std::string> sandbox_workers_of(int pid);
// Which of `workers` still run (not exited, not a zombie).
std::vector<std::string> still_running(const std::vector<std::string>& workers);

}  // namespace crucible::testing
