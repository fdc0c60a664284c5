#include "actors/evaluator/sandbox.hpp"

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/worker_session.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible::evaluator;
using namespace std::chrono_literals;

namespace {

sandbox_spec shell(const std::filesystem::path& scratch, const std::string& script) {
  sandbox_spec s;
  s.program = "/bin/sh";
  s.args = {"-c", script};
  s.env = {"PATH=/usr/bin:/bin"};
  s.scratch = scratch;
  s.log = scratch / "log";
  return s;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Dead or a zombie waiting for init: either way it runs no more.
bool gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

}  // namespace

TEST_CASE("a frame sent to the child comes back through its fds 3 and 4") {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-sandbox-test", "echo");
  REQUIRE(dir.ok());
  auto p = sandbox_process::start(shell(dir->path(), "exec cat <&3 >&4"));
  REQUIRE(p.ok());
  const std::vector<std::uint8_t> frame{1, 2, 3, 250, 0, 7};
  REQUIRE(p->send(frame).ok());
  auto back = p->receive(std::chrono::steady_clock::now() + 10s);
  REQUIRE(back.ok());
  CHECK(*back == frame);
}

TEST_CASE("a child past its deadline is killed with its whole process group") {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-sandbox-test", "hang");
  REQUIRE(dir.ok());
  auto p = sandbox_process::start(shell(dir->path(), "sleep 1000 & echo $! > bg; sleep 1000"));
  REQUIRE(p.ok());
  // Waits for the shell to write the background pid (a namespace's start can
  // take seconds on a loaded machine), then gives it a deadline it misses.
  for (int i = 0; i < 1500 && slurp(dir->path() / "bg").find('\n') == std::string::npos; ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE_MESSAGE(slurp(dir->path() / "bg").find('\n') != std::string::npos, "the shell never wrote bg");
  auto r = p->receive(std::chrono::steady_clock::now() + 300ms);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == crucible::errc::timeout);
  REQUIRE(p->exit_info().has_value());
  CHECK(p->exit_info()->deadline);
  CHECK(p->exit_info()->signal == SIGKILL);
  const int bg = std::stoi(slurp(dir->path() / "bg"));
  for (int i = 0; i < 50 && !gone(bg); ++i) std::this_thread::sleep_for(20ms);
  CHECK(gone(bg));
}

TEST_CASE("a child that dies is reported with its signal") {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-sandbox-test", "segv");
  REQUIRE(dir.ok());
  auto p = sandbox_process::start(shell(dir->path(), "kill -SEGV $$"));
  REQUIRE(p.ok());
  auto r = p->receive(std::chrono::steady_clock::now() + 10s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == crucible::errc::unavailable);
  CHECK(p->exit_info()->signal == SIGSEGV);
  CHECK_FALSE(p->exit_info()->deadline);
}

TEST_CASE("the child runs under the limits, core set and directory it was given") {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-sandbox-test", "limits");
  REQUIRE(dir.ok());
  auto spec = shell(dir->path(),
                    "ulimit -v > as; ulimit -n > files; ulimit -t > cpu; pwd > cwd; "
                    "grep Cpus_allowed_list /proc/self/status | cut -f2 > cores; echo done >&4");
  spec.limits.address_space_bytes = 3ull << 30;
  spec.limits.max_open_files = 77;
  spec.limits.cpu_seconds = 123;
  spec.limits.cores = {0};
  auto p = sandbox_process::start(spec);
  REQUIRE(p.ok());
  // "done\n" arrives as the first 4 bytes of a frame header; just wait for it.
  auto r = p->receive(std::chrono::steady_clock::now() + 10s);
  p->kill();
  CHECK(std::stoull(slurp(dir->path() / "as")) == (3ull << 30) / 1024);
  CHECK(std::stoi(slurp(dir->path() / "files")) == 77);
  CHECK(std::stoi(slurp(dir->path() / "cpu")) == 123);
  CHECK(slurp(dir->path() / "cores") == "0\n");
  CHECK(std::filesystem::equivalent(std::filesystem::path(slurp(dir->path() / "cwd").substr(0, slurp(dir->path() / "cwd").size() - 1)), dir->path()));
}

TEST_CASE("inside the namespaces the child has no network and writes only to its scratch directory") {
  const auto root = std::filesystem::temp_directory_path() / "crucible-sandbox-test";
  auto dir = scratch_dir::create(root, "isolated");
  auto outside = scratch_dir::create(root, "outside");
  REQUIRE(dir.ok());
  REQUIRE(outside.ok());
  auto p = sandbox_process::start(shell(dir->path(), "cat /proc/net/dev > net; echo x > inside; echo x > " +
                                                          (outside->path() / "escaped").string() + "; exec sleep 1000"));
  REQUIRE(p.ok());
  const auto iso = p->isolation();
  for (int i = 0; i < 1500 && !std::filesystem::exists(dir->path() / "inside"); ++i) std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(100ms);
  p->kill();
  CHECK(std::filesystem::exists(dir->path() / "inside"));
  if (has(iso, "netns")) {
    std::istringstream net(slurp(dir->path() / "net"));
    std::string line;
    int interfaces = 0;
    while (std::getline(net, line))
      if (line.find(':') != std::string::npos && line.find('|') == std::string::npos) {
        ++interfaces;
        CHECK(line.find("lo:") != std::string::npos);
      }
    CHECK(interfaces == 1);
  } else {
    MESSAGE("kernel refused an unprivileged network namespace: network isolation not checked");
  }
  if (has(iso, "mountns-readonly")) {
    CHECK_FALSE(std::filesystem::exists(outside->path() / "escaped"));
  } else {
    MESSAGE("no read-only mount namespace here: writes outside scratch not checked");
  }
}

TEST_CASE("a program that cannot be executed is an error, not a child") {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-sandbox-test", "noexec");
  REQUIRE(dir.ok());
  auto spec = shell(dir->path(), "");
  spec.program = "/nonexistent/python";
  auto p = sandbox_process::start(spec);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().code == crucible::errc::io);
}

TEST_CASE("a worker reply with its doubles off their 8-byte boundary is refused as corrupt, not read") {
  // Found by fuzz/sandbox_reply.fuzz.cpp: the FlatBuffers verifier checks
  // only a vector's length for alignment, and reading the doubles was undefined.
  std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/fuzz/regressions/sandbox_reply/reply_misaligned_seconds",
                   std::ios::binary);
  REQUIRE(in);
  const std::vector<std::uint8_t> frame(std::istreambuf_iterator<char>(in), {});
  auto reply = decode_reply(frame, 1);
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.error().code == crucible::errc::corrupt);
  CHECK(reply.error().message.find("worker reply: Reply.") != std::string::npos);
  CHECK(reply.error().message.find("8-byte boundary") != std::string::npos);

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<double> seconds{0.5, 0.25};
  auto ok = crucible::sandbox::CreateReply(fbb, true, crucible::sandbox::ErrorKind::None, 0, 0, fbb.CreateVector(seconds));
  crucible::sandbox::SandboxMessageBuilder m(fbb);
  m.add_seq(1);
  m.add_reply(ok);
  fbb.Finish(m.Finish(), crucible::sandbox::SandboxMessageIdentifier());
  auto good = decode_reply({fbb.GetBufferPointer(), fbb.GetSize()}, 1);
  REQUIRE_MESSAGE(good.ok(), crucible::error_text(good));
  CHECK(good->ref_seconds == seconds);
}
