// Real child processes for integration tests: start `crucible` with
// arguments and a log file, kill it, wait for it, and wait (with a deadline)
// until its log says something. Linux only; used by tests/integration.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace crucible::testing {

class child {
 public:
  // Starts program with args; stdout and stderr go to log_path.
  child(const std::string& program, const std::vector<std::string>& args, const std::string& log_path,
        const std::vector<std::string>& env = {});
  ~child();  // SIGKILLs a child still running
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  void kill9();
  void terminate();
  // Waits for exit; returns the exit status, or -signal, or 999 on timeout.
  int wait(std::chrono::milliseconds timeout);
  bool running();
  int pid() const { return pid_; }
  const std::string& log_path() const { return log_; }
  std::string log() const;

 private:
  int pid_ = -1;
  std::string log_;
  int status_ = 999;
};

// Waits until the file contains needle (at least `times` times).
bool wait_for_text(const std::string& path, const std::string& needle, std::chrono::milliseconds timeout,
                   int times = 1);
int count_text(const std::string& path, const std::string& needle);
std::string read_file(const std::string& path);

// A fresh temporary directory (temp_dirs.cpp: removed after a run with no
// failure) and a free-looking base port (3 consecutive).
std::string temp_dir(const std::string& name);
int pick_port();

// build/bin/crucible
std::string crucible_binary();

// configs/quickstart.toml written to DIR/quickstart.toml with its relative
// paths made absolute and `set` (KEY = VALUE lines, KEY unique in the file)
// replacing lines; the path written. Throws std::runtime_error naming a key
// the file lacks. Used by the loop and dashboard tests.
std::string quickstart_config(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& set);

// `crucible worker` (echo, sleep jobs) joined to the hub at address, logging
// at debug level to log; null when it did not register within 10 s.
std::unique_ptr<child> start_worker(const std::string& config, const std::string& address, const std::string& name,
                                    int slots, const std::string& log);

}  // namespace crucible::testing
