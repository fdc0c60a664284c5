#include "tests/support/chaos_fleet.hpp"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace crucible::testing {

namespace {
using namespace std::chrono_literals;

std::size_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::size_t>(n);
}

std::string read_from(const std::string& path, std::size_t offset) {
  std::ifstream in(path);
  in.seekg(static_cast<std::streamoff>(offset));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// /proc/PID/stat's state, parent and start time (fields 3, 4 and 22).
struct proc_stat {
  char state = '?';
  int ppid = 0;
  std::string start;
};

bool read_stat(const std::string& pid, proc_stat& out) {
  std::string text = read_file("/proc/" + pid + "/stat");
  auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(text.substr(close + 2));
  in >> out.state >> out.ppid;
  std::string field;
  for (int i = 5; i <= 22 && in >> field; ++i)
    if (i == 22) out.start = field;
  return !out.start.empty();
}
}  // namespace

std::vector<std::string> sandbox_workers_of(int pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string p = entry.path().filename().string();
    if (p.find_first_not_of("0123456789") != std::string::npos) continue;
    proc_stat st;
    if (!read_stat(p, st) || st.ppid != pid) continue;
    if (read_file("/proc/" + p + "/cmdline").find("sandbox_worker.py") == std::string::npos) continue;
    out.push_back(p + ":" + st.start);
  }
  return out;
}

std::vector<std::string> still_running(const std::vector<std::string>& workers) {
  std::vector<std::string> out;
  for (const auto& w : workers) {
    auto colon = w.find(':');
    proc_stat st;
    if (read_stat(w.substr(0, colon), st) && st.start == w.substr(colon + 1) && st.state != 'Z') out.push_back(w);
  }
  return out;
}

chaos_fleet::chaos_fleet(std::string dir, std::string hub_name) : dir_(std::move(dir)), hub_name_(std::move(hub_name)) {}

chaos_fleet::~chaos_fleet() {
  for (auto& [name, m] : members_)
    if (m.proc) m.proc->kill9();
}

void chaos_fleet::add(chaos_role role) {
  order_.push_back(role.name);
  members_[role.name].role = std::move(role);
}

chaos_fleet::member& chaos_fleet::get(const std::string& name) { return members_.at(name); }

double chaos_fleet::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void chaos_fleet::start(const std::string& name) {
  auto& m = get(name);
  m.log_offset = file_size(hub_log());
  m.proc = std::make_unique<child>(crucible_binary(), m.role.args(), dir_ + "/" + name + ".log");
}

bool chaos_fleet::start_all(std::chrono::seconds timeout) {
  start(hub_name_);
  if (!wait_for_text(hub_log(), "hub listening", timeout)) return false;
  for (const auto& name : order_)
    if (name != hub_name_) start(name);
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    bool all = true;
    for (const auto& name : order_) all = all && back_on_bus(get(name));
    if (all) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// A line of the hub's log after `offset` saying that the member registered
// (or re-registered) under its name.
bool chaos_fleet::registered_since(const member& m, std::size_t offset) const {
  std::istringstream in(read_from(hub_log(), offset));
  const std::string quoted = "'" + m.role.name + "' on ";
  for (std::string line; std::getline(in, line);)
    if (line.find("registered ") != std::string::npos && line.find(quoted) != std::string::npos) return true;
  return false;
}

// The hub is back once it listens and every running role registered with
// it; any other role once it registered after its start.
bool chaos_fleet::back_on_bus(const member& m) const {
  if (!m.proc) return false;
  if (m.role.name != hub_name_) return registered_since(m, m.log_offset);
  if (read_from(hub_log(), m.log_offset).find("hub listening") == std::string::npos) return false;
  for (const auto& [name, other] : members_)
    if (name != hub_name_ && other.proc && !registered_since(other, m.log_offset)) return false;
  return true;
}

std::size_t chaos_fleet::kill_and_restart(const std::string& name, int signal) {
  auto& m = get(name);
  chaos_kill k;
  k.name = name;
  k.kind = m.role.kind;
  k.signal = signal;
  k.at_s = seconds();
  const auto workers = m.role.kind == "evaluator" ? sandbox_workers_of(m.proc->pid()) : std::vector<std::string>{};
  ::kill(m.proc->pid(), signal);
  // A SIGTERM is an orderly stop: the role may finish what it is writing.
  if (m.proc->wait(signal == SIGKILL ? 10s : 60s) == 999) {
    unexpected_.push_back(name + ": still running 60 s after SIGTERM");
    m.proc->kill9();
  }
  // The kernel kills the workers as their parent dies (PR_SET_PDEATHSIG);
  // the wait only covers that delivery on a loaded machine.
  for (int i = 0; i < 200 && !still_running(workers).empty(); ++i) std::this_thread::sleep_for(50ms);
  k.workers = static_cast<int>(workers.size());
  k.orphaned_workers = static_cast<int>(still_running(workers).size());
  for (auto i : m.open_kills) kills_[i].superseded = true;
  m.open_kills.clear();
  k.restarted = !m.role.finished();
  kills_.push_back(k);
  m.proc.reset();
  if (k.restarted) {
    m.open_kills.push_back(kills_.size() - 1);
    start(name);
  }
  return kills_.size() - 1;
}

void chaos_fleet::poll() {
  for (const auto& name : order_) {
    auto& m = get(name);
    if (m.proc && !m.proc->running()) {
      const int code = m.proc->wait(0ms);
      m.proc.reset();
      if (m.role.finished() && code == 0) {  // a rollout that did its groups
        // Restarted with its last group left, it may register, finish and
        // exit while the driver is busy with another kill: back on the bus
        // all the same (its open kill would otherwise never close).
        // (The time noted is when the driver saw it, a bound from above.)
        if (!m.open_kills.empty() && registered_since(m, m.log_offset)) {
          for (auto i : m.open_kills) kills_[i].recovered_s = seconds() - kills_[i].at_s;
        } else if (!m.open_kills.empty()) {
          unexpected_.push_back(name + ": finished after a restart without registering with the hub");
        }
        m.open_kills.clear();
        continue;
      }
      unexpected_.push_back(name + ": exited by itself with status " + std::to_string(code) + " at " +
                            std::to_string(static_cast<int>(seconds())) + " s");
      if (!m.role.finished()) start(name);
    }
  }
  const double now = seconds();
  for (const auto& name : order_) {
    auto& m = get(name);
    if (m.open_kills.empty() || !back_on_bus(m)) continue;
    for (auto i : m.open_kills) kills_[i].recovered_s = now - kills_[i].at_s;
    m.open_kills.clear();
  }
}

std::vector<std::string> chaos_fleet::running() {
  std::vector<std::string> out;
  for (const auto& name : order_)
    if (get(name).proc && get(name).proc->running()) out.push_back(name);
  return out;
}

bool chaos_fleet::all_recovered() const {
  for (const auto& [name, m] : members_)
    if (!m.open_kills.empty()) return false;
  return true;
}

void chaos_fleet::stop_all() {
  auto stop = [&](member& m) {
    if (!m.proc) return;
    m.proc->terminate();
    if (m.proc->wait(60s) == 999) {
      unexpected_.push_back(m.role.name + ": still running 60 s after SIGTERM at the end");
      m.proc->kill9();
    }
    m.proc.reset();
  };
  for (const auto& name : order_)
    if (name != hub_name_) stop(get(name));
  stop(get(hub_name_));
}

}  // namespace crucible::testing
