// Test hosts on one machine for the multi-node test
// (tests/integration/multinode.test.cpp): each host is a network and UTS
// namespace of its own (its own address 10.77.0.N and host name host-N),
// joined to the others through a bridge in the test process's namespace,
// which acts as the switch (10.77.0.254). Processes start inside a host
// through nsenter, so every role is a real `crucible` process that reaches
// the others over TCP only. No root needed: the test process first enters
// a user namespace of its own (`unshare --user --map-root-user --net`
// style), where it may create namespaces, bridges and veth pairs; links
// and addresses are set with iproute2's `ip`.
//
// Who calls it: a test case, on its main thread; enter_switch() before the
// process starts any thread (the kernel lets only a single-threaded process
// enter a user namespace; ctest runs each test case as its own process).
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.hpp"

namespace crucible::testing {

// Puts this process in a new user and network namespace holding the bridge
// br0 at 10.77.0.254/24. False, with why() saying what the kernel or the
// machine refused (no unprivileged user namespaces, no `ip`), when it cannot.
bool enter_switch(const std::string& work_dir);
const std::string& switch_why();

class test_host {
 public:
  // Host N (1..253): a namespace holder process, a veth pair with eth0 in
  // the host at 10.77.0.N/24 and its other end on the bridge, loopback up.
  // Null when a step fails; switch_why() then says which.
  // work_dir holds the logs of the `ip` commands.
  static std::unique_ptr<test_host> make(int n, const std::string& work_dir);
  ~test_host();  // remove()
  test_host(const test_host&) = delete;
  test_host& operator=(const test_host&) = delete;

  int number() const { return n_; }
  std::string address() const { return "10.77.0." + std::to_string(n_); }
  std::string name() const { return "host-" + std::to_string(n_); }

  // program with args inside this host (its network and host name), stdout
  // and stderr to log_path. The child's pid is the program's own; it gets
  // SIGKILL if the test process dies first.
  std::unique_ptr<child> start(const std::string& program, const std::vector<std::string>& args,
                               const std::string& log_path, const std::vector<std::string>& env = {});

  // SIGKILL to the namespace holder: once the processes started here are
  // gone too (kill9() them first), the kernel removes the host's network
  // and its link on the bridge, as a machine that lost power.
  void remove();

 private:
  test_host(int n, int holder) : n_(n), holder_(holder) {}
  int n_;
  int holder_;  // pid; -1 once removed
};

}  // namespace crucible::testing
