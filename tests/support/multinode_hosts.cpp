#include "tests/support/multinode_hosts.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/user_namespace.hpp"

namespace crucible::testing {

namespace {

using namespace std::chrono_literals;

std::string& reason() {
  static std::string r;
  return r;
}

// The first of paths that exists, or "".
std::string first_existing(std::initializer_list<const char*> paths) {
  for (const char* p : paths)
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::string ip_tool() { return first_existing({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}); }
std::string nsenter_tool() { return first_existing({"/usr/bin/nsenter", "/bin/nsenter"}); }
std::string setpriv_tool() { return first_existing({"/usr/bin/setpriv", "/bin/setpriv"}); }

// `ip ARGS` in this process's namespace, or inside the host whose holder is
// `inside` (> 0); its output appended to work_dir/ip.log. False, with
// reason() naming the command and its output, when it fails.
bool ip(const std::string& work_dir, const std::vector<std::string>& args, int inside = 0) {
  const std::string log = work_dir + "/ip.log";
  const auto before = read_file(log).size();
  std::vector<std::string> all;
  std::string program = ip_tool();
  if (inside > 0) {
    all = {"--net=/proc/" + std::to_string(inside) + "/ns/net", "--", program};
    program = nsenter_tool();
  }
  all.insert(all.end(), args.begin(), args.end());
  child c(program, all, log);
  const int code = c.wait(30s);
  if (code == 0) return true;
  std::string command = "ip";
  for (const auto& a : args) command += " " + a;
  reason() = command + (inside > 0 ? " (in host of pid " + std::to_string(inside) + ")" : "") + " exited " +
             std::to_string(code) + ": " + read_file(log).substr(before);
  return false;
}

}  // namespace

const std::string& switch_why() { return reason(); }

bool enter_switch(const std::string& work_dir) {
  if (ip_tool().empty() || nsenter_tool().empty() || setpriv_tool().empty()) {
    reason() = "iproute2's ip or util-linux's nsenter or setpriv is not installed (tools/setup.sh installs iproute2)";
    return false;
  }
  if (!enter_user_namespace(CLONE_NEWNET, "CLONE_NEWUSER | CLONE_NEWNET", reason())) return false;
  return ip(work_dir, {"link", "set", "lo", "up"}) && ip(work_dir, {"link", "add", "br0", "type", "bridge"}) &&
         ip(work_dir, {"addr", "add", "10.77.0.254/24", "dev", "br0"}) &&
         ip(work_dir, {"link", "set", "br0", "up"});
}

std::unique_ptr<test_host> test_host::make(int n, const std::string& work_dir) {
  int ready[2];
  if (::pipe(ready) != 0) {
    reason() = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  const std::string hostname = "host-" + std::to_string(n);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The holder: only async-signal-safe calls (the test may run threads).
    // It dies with the test, also when the test crashes.
    ::close(ready[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int err = 0;
    if (::unshare(CLONE_NEWNET | CLONE_NEWUTS) != 0 || ::sethostname(hostname.data(), hostname.size()) != 0)
      err = errno;
    (void)!::write(ready[1], &err, sizeof err);
    ::close(ready[1]);
    if (err) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  int err = pid < 0 ? errno : 0;
  if (pid > 0 && ::read(ready[0], &err, sizeof err) != static_cast<ssize_t>(sizeof err)) err = EIO;
  ::close(ready[0]);
  if (err) {
    reason() = "host " + std::to_string(n) + ": fork, unshare(CLONE_NEWNET | CLONE_NEWUTS) or sethostname: " +
               std::strerror(err);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    return nullptr;
  }
  std::unique_ptr<test_host> host(new test_host(n, pid));
  const std::string link = "veth-h" + std::to_string(n);
  const std::string p = std::to_string(pid);
  bool ok = ip(work_dir, {"link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", p}) &&
            ip(work_dir, {"link", "set", link, "master", "br0"}) && ip(work_dir, {"link", "set", link, "up"}) &&
            ip(work_dir, {"addr", "add", host->address() + "/24", "dev", "eth0"}, pid) &&
            ip(work_dir, {"link", "set", "eth0", "up"}, pid) && ip(work_dir, {"link", "set", "lo", "up"}, pid);
  if (!ok) return nullptr;
  return host;
}

test_host::~test_host() { remove(); }

std::unique_ptr<child> test_host::start(const std::string& program, const std::vector<std::string>& args,
                                        const std::string& log_path, const std::vector<std::string>& env) {
  const std::string ns = "/proc/" + std::to_string(holder_) + "/ns/";
  // setpriv: the program dies with the test, also when the test crashes
  // (its host would otherwise live on with it).
  std::vector<std::string> all{"--net=" + ns + "net", "--uts=" + ns + "uts", "--", setpriv_tool(), "--pdeathsig",
                               "KILL", "--", program};
  all.insert(all.end(), args.begin(), args.end());
  return std::make_unique<child>(nsenter_tool(), all, log_path, env);
}

void test_host::remove() {
  if (holder_ <= 0) return;
  ::kill(holder_, SIGKILL);
  ::waitpid(holder_, nullptr, 0);
  holder_ = -1;
}

}  // namespace crucible::testing
