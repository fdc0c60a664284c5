// Full disks with real processes (issue 20 item 5): each role's store on a
// small file system of the test's own (tests/support/small_fs.hpp), filled
// to the last page while the role runs. The role says what failed and
// where, takes no work it cannot record, keeps what it acknowledged, and
// works again once space returns.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"
#include "tests/support/small_fs.hpp"

using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* no_space = "No space left on device";

std::unique_ptr<small_fs> small_disk(const std::string& name, std::size_t bytes) {
  auto fs = small_fs::make(name, bytes);
  if (!fs) MESSAGE("skipped: no small file system of the test's own: " << small_fs::why());
  return fs;
}

// A hub whose ledger lives on `ledger`, workers and clients, with fast
// liveness (as tests/integration/bus_processes.test.cpp).
struct cluster {
  std::string dir = temp_dir("full-disk");
  std::string ledger;
  std::string config = dir + "/fast.toml";
  int port = pick_port();
  std::string address = "tcp://127.0.0.1:" + std::to_string(port);
  std::string bin = crucible_binary();

  explicit cluster(std::string ledger_dir) : ledger(std::move(ledger_dir)) {
    std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 800\nrecovery_grace_ms = 800\n"
                             "redispatch_after_ms = 800\n"
                             "[bus]\nheartbeat_ms = 100\ndead_after_ms = 800\nretry_ms = 300\naccepted_retry_ms = 600\n";
  }
  std::unique_ptr<child> hub(const std::string& log) {
    return std::make_unique<child>(bin, std::vector<std::string>{"hub", "--config", config, "--bind", address,
                                                                 "--ledger", ledger},
                                   dir + "/" + log);
  }
  std::unique_ptr<child> listening_hub(const std::string& log) {
    auto c = hub(log);
    REQUIRE_MESSAGE(wait_for_text(dir + "/" + log, "hub listening", 30s), read_file(dir + "/" + log));
    return c;
  }
  std::unique_ptr<child> worker(const std::string& name, int slots) {
    auto c = start_worker(config, address, name, slots, dir + "/" + name + ".log");
    REQUIRE(c);
    return c;
  }
  std::unique_ptr<child> submit(const std::string& name, int count, const std::vector<std::string>& job) {
    std::vector<std::string> args{"submit", "--connect", address, "--name", name, "--count", std::to_string(count),
                                  "--timeout-s", "90", "--json", "--log-level", "warn", "--id-prefix", name + "-"};
    args.insert(args.end(), job.begin(), job.end());
    return std::make_unique<child>(bin, args, dir + "/" + name + ".out");
  }
  nlohmann::json summary(const std::string& name) {
    auto text = read_file(dir + "/" + name + ".out");
    auto brace = text.rfind("{\"");
    REQUIRE_MESSAGE(brace != std::string::npos, "no summary in: " << text);
    return nlohmann::json::parse(text.substr(brace));
  }
};

}  // namespace

TEST_CASE("a hub whose ledger disk fills refuses new jobs naming the path, keeps every accepted job through a kill -9, and takes jobs again when space returns") {
  auto fs = small_disk("hub-ledger", 32u << 20);
  if (!fs) return;
  cluster c(fs->path() + "/ledger");
  auto hub = c.listening_hub("hub1.log");
  auto w = c.worker("w", 1);
  // Accepted before the disk fills; one slot, so most wait in the hub's queue.
  auto slow = c.submit("slow", 4, {"--kind", "sleep", "--payload", "1000"});
  REQUIRE(wait_for_text(c.dir + "/w.log", "job slow-0 finished", 20s));

  fs->fill();
  auto late = c.submit("late", 3, {"--kind", "echo", "--payload-bytes", "65536"});
  REQUIRE_MESSAGE(wait_for_text(c.dir + "/late.out", no_space, 20s), read_file(c.dir + "/late.out"));
  CHECK(count_text(c.dir + "/late.out", "hub refused job") >= 1);
  CHECK(count_text(c.dir + "/late.out", c.ledger) >= 1);
  CHECK(wait_for_text(c.dir + "/hub1.log", "job ledger in " + c.ledger + " cannot write", 10s));
  CHECK(count_text(c.dir + "/hub1.log", no_space) >= 1);

  // A kill -9 while the disk is full; a restart on the full disk says why it cannot start.
  hub->kill9();
  auto refused = c.hub("hub2.log");
  CHECK(refused->wait(30s) != 0);
  CHECK_MESSAGE(count_text(c.dir + "/hub2.log", no_space) >= 1, read_file(c.dir + "/hub2.log"));
  CHECK(count_text(c.dir + "/hub2.log", c.ledger) >= 1);

  fs->release();
  auto hub3 = c.listening_hub("hub3.log");
  REQUIRE(slow->wait(60s) == 0);
  REQUIRE(late->wait(60s) == 0);
  CHECK(c.summary("slow")["completed"] == 4);
  CHECK(c.summary("late")["completed"] == 3);
  CHECK(count_text(c.dir + "/hub3.log", "hub recovered") == 1);
}

TEST_CASE("a hub whose ledger disk fills and empties again takes jobs without a restart") {
  auto fs = small_disk("hub-ledger-live", 32u << 20);
  if (!fs) return;
  cluster c(fs->path() + "/ledger");
  auto hub = c.listening_hub("hub.log");
  auto w = c.worker("w", 4);
  auto before = c.submit("before", 20, {"--kind", "echo", "--payload", "x"});
  REQUIRE(before->wait(30s) == 0);
  fs->fill();
  auto during = c.submit("during", 5, {"--kind", "echo", "--payload-bytes", "65536"});
  REQUIRE_MESSAGE(wait_for_text(c.dir + "/during.out", no_space, 20s), read_file(c.dir + "/during.out"));
  CHECK(during->running());  // nothing accepted, nothing answered
  fs->release();
  REQUIRE(during->wait(60s) == 0);
  CHECK(c.summary("during")["completed"] == 5);
  CHECK(wait_for_text(c.dir + "/hub.log", "writes again", 10s));
  CHECK(hub->running());
}
