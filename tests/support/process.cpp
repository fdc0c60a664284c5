#include "tests/support/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <stdexcept>
#include <sstream>
#include <thread>


extern char** environ;

namespace crucible::testing {

child::child(const std::string& program, const std::vector<std::string>& args, const std::string& log_path,
             const std::vector<std::string>& env)
    : log_(log_path) {
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_copy;
  for (char** e = environ; *e; ++e) env_copy.emplace_back(*e);
  for (auto& e : env) env_copy.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_copy) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (posix_spawn(&pid_, program.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

child::~child() {
  if (running()) kill9();
}

void child::kill9() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

void child::terminate() {
  if (pid_ > 0) ::kill(pid_, SIGTERM);
}

int child::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
      pid_ = -1;
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 999;
}

bool child::running() {
  if (pid_ <= 0) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    pid_ = -1;
    return false;
  }
  return true;
}

std::string child::log() const { return read_file(log_); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int count_text(const std::string& path, const std::string& needle) {
  auto text = read_file(path);
  int n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

bool wait_for_text(const std::string& path, const std::string& needle, std::chrono::milliseconds timeout, int times) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (count_text(path, needle) >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

namespace {
// The kernel's ephemeral range (client sockets' local ports): a test's hub
// must not draw from it, or a connection elsewhere on the machine may already
// hold its port and the hub exits on a failed bind.
std::pair<int, int> ephemeral_ports() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768, high = 60999;
  in >> low >> high;
  return {low, high};
}

// Whether nothing listens on or holds 127.0.0.1:port now.
bool port_free(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}
}  // namespace

// Three consecutive free ports below the ephemeral range (above it where the
// range starts too low to leave room), checked free now; tests running in
// parallel draw at random, so two rarely meet, and a bound port is skipped.
int pick_port() {
  auto [low, high] = ephemeral_ports();
  int first = 10000, last = low - 3;
  if (last - first < 3000) first = high + 1, last = 65532;
  std::random_device rd;
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = first + static_cast<int>(rd() % static_cast<unsigned>((last - first) / 3)) * 3;
    if (port_free(port) && port_free(port + 1) && port_free(port + 2)) return port;
  }
  return first;
}

std::string crucible_binary() { return std::string(CRUCIBLE_BINARY_DIR) + "/bin/crucible"; }

std::string quickstart_config(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& set) {
  const std::string source = CRUCIBLE_SOURCE_DIR;
  std::string text = read_file(source + "/configs/quickstart.toml");
  text = std::regex_replace(text, std::regex("\"configs/"), "\"" + source + "/configs/");
  for (const auto& [key, value] : set) {
    std::regex line("(^|\n)" + key + " = [^\n]*");
    if (!std::regex_search(text, line)) throw std::runtime_error("configs/quickstart.toml has no key " + key);
    text = std::regex_replace(text, line, "$1" + key + " = " + value);
  }
  const std::string path = dir + "/quickstart.toml";
  std::ofstream(path) << text;
  return path;
}

std::unique_ptr<child> start_worker(const std::string& config, const std::string& address, const std::string& name,
                                    int slots, const std::string& log) {
  auto c = std::make_unique<child>(crucible_binary(),
                                   std::vector<std::string>{"worker", "--config", config, "--connect", address,
                                                            "--name", name, "--slots", std::to_string(slots)},
                                   log, std::vector<std::string>{"CRUCIBLE_LOG=debug"});
  if (!wait_for_text(log, "registered with hub", std::chrono::seconds(10))) return nullptr;
  return c;
}

}  // namespace crucible::testing
