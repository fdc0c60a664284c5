// Full disks, the roles that settle candidates (issue 20 item 5): the
// referee's ledger and the exemplar store each on a small file system of the
// test's own (tests/support/small_fs.hpp), filled while the role runs, with
// a hub on the ordinary disk and an evaluator in this process that answers
// when the test says. The role names the path and the error, holds the jobs
// and results it cannot record (none is answered Failed, none acknowledged),
// and records them once space returns, with no restart.
#include <doctest/doctest.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "actors/referee/referee_wire.hpp"
#include "runtime/node/caf_types.hpp"
#include "tests/support/process.hpp"
#include "tests/support/small_fs.hpp"
#include "tests/support/test_worker.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;
using messages::str;

namespace {

constexpr const char* no_space = "No space left on device";

// An evaluator that measures every candidate alike (incorrect by default,
// which settles as a Failure; a speedup of 1.5 settles as a Success with no
// verification), at once, or, for ids starting "held", when release() is
// called.
class held_evaluator final : public node::job_handler {
 public:
  explicit held_evaluator(msg::EvalStatus status = msg::EvalStatus::Incorrect, double speedup = 0)
      : status_(status), speedup_(speedup) {}
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    auto* c = referee::payload_of<msg::Candidate>(job.payload);
    if (!c) return done(msg::JobStatus::Failed, {}, "not a candidate");
    std::string id(str(c->candidate_id()));
    auto m = referee::simple_measurement(id, std::string(str(c->task_id())), status_, speedup_, "held-evaluator",
                                         "cpu");
    std::lock_guard lock(mu_);
    ++measured_[id];
    if (id.rfind("held", 0) != 0) return done(msg::JobStatus::Ok, std::move(m), {});
    held_.emplace_back(std::move(done), std::move(m));
    seen_.notify_all();
  }
  bool wait_held(std::size_t n, std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    return seen_.wait_for(lock, timeout, [&] { return held_.size() >= n; });
  }
  void release() {
    std::lock_guard lock(mu_);
    for (auto& [done, m] : held_) done(msg::JobStatus::Ok, std::move(m), {});
    held_.clear();
  }
  int measured(const std::string& id) {
    std::lock_guard lock(mu_);
    return measured_[id];
  }

 private:
  const msg::EvalStatus status_;
  const double speedup_;
  std::mutex mu_;
  std::condition_variable seen_;
  std::vector<std::pair<done_fn, bus::bytes>> held_;  // GUARDED_BY(mu_)
  std::map<std::string, int> measured_;              // GUARDED_BY(mu_)
};

// A 32 MiB file system of the test's own; the test fails where the kernel
// refuses one (it would pass without testing anything if it skipped).
std::unique_ptr<small_fs> small_disk(const std::string& name) {
  auto fs = small_fs::make(name, 32u << 20);
  REQUIRE_MESSAGE(fs, "no small file system of the test's own: " << small_fs::why());
  return fs;
}

// A hub (no referee of its own) on the ordinary disk, with fast liveness.
struct cluster {
  std::string dir = temp_dir("full-disk-roles");
  std::string config = dir + "/fast.toml";
  int port = pick_port();
  std::string address = "tcp://127.0.0.1:" + std::to_string(port);
  std::unique_ptr<child> hub;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::optional<test_worker> worker;  // stops before sys goes

  cluster() {
    std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 1500\nrecovery_grace_ms = 800\n"
                             "redispatch_after_ms = 1500\n"
                             "[bus]\nheartbeat_ms = 100\ndead_after_ms = 1500\nretry_ms = 300\naccepted_retry_ms = 600\n"
                             "[referee]\nenabled = false\n";
    hub = std::make_unique<child>(crucible_binary(),
                                  std::vector<std::string>{"hub", "--config", config, "--bind", address, "--ledger",
                                                           dir + "/hub-ledger"},
                                  dir + "/hub.log");
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  }
  // An evaluator in this process (its first threads), registered with the hub.
  void evaluator(std::shared_ptr<held_evaluator> handler) {
    node::configure(cfg, 2);
    sys = std::make_unique<caf::actor_system>(cfg);
    auto w = spawn_test_worker(*sys, address, "ev", msg::Role::Evaluator, {"measure"}, std::move(handler));
    REQUIRE(w.ok());
    worker.emplace(std::move(*w));
    REQUIRE(wait_for_text(dir + "/hub.log", "registered Evaluator 'ev'", 10s));
  }
  std::unique_ptr<child> role(const std::string& name, std::vector<std::string> args) {
    args.insert(args.end(), {"--config", config, "--connect", address, "--name", name});
    auto c = std::make_unique<child>(crucible_binary(), args, dir + "/" + name + ".log");
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "'" + name + "'", 20s), read_file(dir + "/" + name + ".log"));
    return c;
  }
  // `crucible settle` of candidate id with this code; its JSON line in id.out.
  std::unique_ptr<child> settle(const std::string& id, const std::string& code) {
    std::ofstream(dir + "/" + id + ".py") << code;
    return std::make_unique<child>(crucible_binary(),
                                   std::vector<std::string>{"settle", "--connect", address, "--task", "cpu/t",
                                                            "--candidate", dir + "/" + id + ".py", "--id", id,
                                                            "--name", "settle-" + id, "--timeout-s", "90"},
                                   dir + "/" + id + ".out");
  }
  nlohmann::json settlement(const std::string& id) {
    auto out = read_file(dir + "/" + id + ".out");
    auto brace = out.rfind("{\"");
    REQUIRE_MESSAGE(brace != std::string::npos, "no settlement in: " << out);
    return nlohmann::json::parse(out.substr(brace));
  }
};

}  // namespace

TEST_CASE("a referee whose ledger disk fills holds settle jobs and results naming the path, and settles them when space returns") {
  auto fs = small_disk("referee-ledger");  // first: this process has no thread yet
  const std::string ledger = fs->path() + "/referee";
  cluster c;
  auto referee = c.role("ref", {"referee", "--ledger", ledger});
  auto evaluator = std::make_shared<held_evaluator>();
  c.evaluator(evaluator);

  // Each its own code: a copy of another's would take its measurement
  // ([referee] reuse_identical) instead of a measure job.
  auto code = [](const std::string& id) { return "class ModelNew: pass  # " + id + "\n"; };
  auto before = c.settle("before", code("before"));
  REQUIRE(before->wait(60s) == 0);
  auto held = c.settle("held", code("held"));  // measured once the disk is full
  REQUIRE(evaluator->wait_held(1, 30s));

  fs->fill();
  evaluator->release();
  REQUIRE_MESSAGE(wait_for_text(referee->log_path(), "referee: recording the result of measure/held: ", 20s),
                  referee->log());
  CHECK(count_text(referee->log_path(), std::string("rocksdb ") + ledger + ": write: IO error: " + no_space) >= 1);
  auto fresh = c.settle("fresh", code("fresh"));
  auto nocode = c.settle("nocode", "");
  CHECK(wait_for_text(referee->log_path(), "settle job settle/fresh waits until its ledger can record it", 20s));
  CHECK(wait_for_text(referee->log_path(), "settle job settle/nocode waits until its ledger can record it", 20s));
  CHECK(held->running());  // nothing answered Failed
  CHECK(fresh->running());
  CHECK(nocode->running());
  CHECK(evaluator->measured("fresh") == 0);  // nothing dispatched that is not recorded

  fs->release();
  REQUIRE(held->wait(60s) == 0);
  REQUIRE(fresh->wait(60s) == 0);
  REQUIRE(nocode->wait(60s) == 0);
  CHECK(c.settlement("before")["status"] == "Failure");
  CHECK(c.settlement("held")["status"] == "Failure");
  CHECK(c.settlement("fresh")["status"] == "Failure");
  CHECK(c.settlement("nocode")["status"] == "NoCode");
  CHECK(evaluator->measured("held") == 1);
  CHECK(count_text(referee->log_path(), "referee settled held:") == 1);
  CHECK(wait_for_text(referee->log_path(), "its ledger writes again", 10s));
  CHECK(referee->running());
}

TEST_CASE("an exemplar store whose disk fills holds the inserts it cannot write naming the path, and inserts them when space returns") {
  auto fs = small_disk("exemplar-db");  // first: this process has no thread yet
  const std::string db = fs->path() + "/exemplars";
  cluster c;
  auto exemplars = c.role("exemplars", {"exemplar", "--db", db});
  auto referee = c.role("ref", {"referee", "--ledger", c.dir + "/referee-ledger"});
  c.evaluator(std::make_shared<held_evaluator>(msg::EvalStatus::Ok, 1.5));
  // The referee inserts a success only into an exemplar store it has heard
  // of (the hub republishes its registry every ten heartbeats, 1 s here):
  // waited for, not slept on, so that a slow start cannot leave `before` out.
  REQUIRE_MESSAGE(wait_for_text(referee->log_path(), "referee: exemplar store exemplars known", 60s), referee->log());

  const std::string code = "class ModelNew: pass\n";
  auto before = c.settle("before", code);
  REQUIRE(before->wait(60s) == 0);
  CHECK(c.settlement("before")["status"] == "Success");

  fs->fill();
  auto during = c.settle("during", code + "# " + std::string(256 << 10, 'x') + "\n");  // more than the WAL's last page
  REQUIRE_MESSAGE(wait_for_text(exemplars->log_path(), "exemplar store: cannot insert during: ", 20s),
                  exemplars->log());
  CHECK(count_text(exemplars->log_path(), std::string("rocksdb ") + db + ": write: IO error: " + no_space) >= 1);
  CHECK(during->running());  // the referee answers a settle job after its exemplar's insert
  CHECK(count_text(referee->log_path(), "exemplar insert of during failed") == 0);

  fs->release();
  REQUIRE(during->wait(60s) == 0);
  CHECK(c.settlement("during")["status"] == "Success");
  CHECK(wait_for_text(exemplars->log_path(), "exemplar store: writes again after", 10s));
  CHECK(exemplars->running());
  exemplars->terminate();
  REQUIRE(exemplars->wait(20s) == 0);
  child stats(crucible_binary(), {"exemplars", "stats", "--db", db, "--task", "cpu/t"}, c.dir + "/stats.out");
  REQUIRE(stats.wait(20s) == 0);
  CHECK_MESSAGE(count_text(c.dir + "/stats.out", "task cpu/t: 2 exemplars") == 1, read_file(c.dir + "/stats.out"));
}
