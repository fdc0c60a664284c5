// The exemplar store as a service on the bus, with kill -9: inserts
// acknowledged through the hub are all in the store after the exemplar
// process is killed mid-stream and restarted, each exactly once.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "messages/codec.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/job_runner.hpp"
#include "tests/support/process.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {
bus::bytes settlement(const std::string& id, const std::string& task, double reward) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto s = msg::CreateSettlement(fbb, fbb.CreateString(id), fbb.CreateString(task), 0, msg::SettlementStatus::Success,
                                 reward, reward, true, 0, fbb.CreateString("code of " + id));
  return w.finish(s, "test", id);
}
// A hub in dir with fast liveness settings, listening.
struct test_hub {
  std::string config;  // for the roles too
  std::string address;
  std::unique_ptr<child> process;
};
test_hub start_hub(const std::string& dir) {
  std::string config = dir + "/fast.toml";
  std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 800\n"
                           "[bus]\nheartbeat_ms = 100\ndead_after_ms = 800\nretry_ms = 300\n";
  std::string address = "tcp://127.0.0.1:" + std::to_string(pick_port());
  auto hub = std::make_unique<child>(
      crucible_binary(), std::vector<std::string>{"hub", "--config", config, "--bind", address, "--ledger", dir + "/ledger"},
      dir + "/hub.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  return {config, address, std::move(hub)};
}
}  // namespace

TEST_CASE("an exemplar service killed with kill -9 mid-stream loses no acknowledged insert and counts none twice") {
  std::string dir = temp_dir("exemplar-service");
  auto hub = start_hub(dir);
  const std::string config = hub.config, address = hub.address;
  auto exemplar = [&](const std::string& log) {
    return std::make_unique<child>(crucible_binary(),
                                   std::vector<std::string>{"exemplar", "--config", config, "--connect", address,
                                                            "--name", "exemplar", "--db", dir + "/db"},
                                   dir + "/" + log);
  };
  auto first = exemplar("exemplar1.log");
  REQUIRE(wait_for_text(dir + "/hub.log", "registered Exemplar 'exemplar'", 10s));

  const int n = 400;
  std::vector<node::job_spec> jobs;
  for (int i = 0; i < n; ++i) {
    std::string id = "cand-" + std::to_string(i);
    jobs.push_back({"insert/" + id, "exemplar.insert", settlement(id, "task-" + std::to_string(i % 4), 1.0 + (i % 37) * 0.1)});
  }
  auto transport = bus::connect_peer_transport(address, "client");
  REQUIRE(transport.ok());
  std::unique_ptr<child> second;
  int results = 0;
  node::job_run_options run;
  run.in_flight = 32;
  run.timeout = 90s;
  run.on_result = [&](const bus::client_session::job_result& r) {
    CHECK_MESSAGE(r.status == msg::JobStatus::Ok, r.id << ": " << r.error);
    if (++results == n / 4) {  // a quarter acknowledged: kill -9, then a new process on the same store
      first->kill9();
      second = exemplar("exemplar2.log");
    }
  };
  bus::peer_options client;
  client.name = "client";
  client.node = "test";
  auto report = node::run_jobs(**transport, client, jobs, run);
  CHECK(report.completed == static_cast<std::uint64_t>(n));
  CHECK(report.missing == 0);
  REQUIRE(second != nullptr);
  second->terminate();
  REQUIRE(second->wait(10s) == 0);

  child stats(crucible_binary(), {"exemplars", "stats", "--db", dir + "/db", "--json"}, dir + "/stats.json");
  REQUIRE(stats.wait(30s) == 0);
  auto text = read_file(dir + "/stats.json");
  auto j = nlohmann::json::parse(text.substr(text.find('{')));
  int total = 0;
  for (auto& t : j["tasks"]) {
    int in_buckets = 0;
    for (auto& b : t["buckets"]) in_buckets += b["count"].get<int>();
    CHECK(in_buckets == t["exemplars"].get<int>());
    total += t["exemplars"].get<int>();
  }
  CHECK(total == n);
}

TEST_CASE("an exemplar service seeded from CUDA-L1's release holds the verified kernels with the rewards settled here, under the rollouts' task names") {
  std::string dir = temp_dir("exemplar-seed");
  std::filesystem::create_directories(dir + "/kb/level1");
  std::ofstream(dir + "/kb/level1/19_ReLU.py") << "relu reference";
  std::ofstream(dir + "/kb/level1/23_Softmax.py") << "softmax reference";
  auto row = [](int task, const std::string& ref, double claimed) {
    return nlohmann::json{{"level_id", 1}, {"task_id", task}, {"ref_code", ref},
                          {"custom_code", "kernel " + std::to_string(task)}, {"score_default", claimed}}.dump() + "\n";
  };
  // As released: a kernel that settled ok here, one that was a hack here, one
  // without code.
  std::ofstream(dir + "/a100.json") << row(19, "relu reference", 7.5) << row(23, "softmax reference", 12.0)
                                    << R"({"level_id": 1, "task_id": 4, "ref_code": "x", "custom_code": null, "score_default": null})"
                                    << "\n";
  std::ofstream(dir + "/results.jsonl") << R"({"job": "a100/L1-19", "status": "ok", "reward": 1.08})" "\n"
                                        << R"({"job": "a100/L1-23", "status": "hack", "reward": 0.0})" "\n";
  auto hub = start_hub(dir);
  const std::string config = hub.config, address = hub.address;
  for (int start = 0; start < 2; ++start) {  // the second start imports again and changes nothing
    const std::string log = dir + "/exemplar" + std::to_string(start) + ".log";
    child exemplar(crucible_binary(),
                   {"exemplar", "--config", config, "--connect", address, "--name", "exemplar", "--db", dir + "/db",
                    "--seed", dir + "/a100.json", "--seed-settled", dir + "/results.jsonl", "--seed-tasks-dir",
                    dir + "/kb", "--log-level", "info"},
                   log);
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "registered Exemplar 'exemplar'", 10s, start + 1), read_file(log));
    CHECK_MESSAGE(read_file(log).find(start == 0 ? "1 rows, 1 inserted, 0 already present; left out: 1 without code, "
                                                   "0 not measured here, 1 not settled ok"
                                                 : "1 rows, 0 inserted, 1 already present") != std::string::npos,
                  read_file(log));
    exemplar.terminate();
    REQUIRE(exemplar.wait(10s) == 0);
  }
  child sample(crucible_binary(), {"exemplars", "sample", "--db", dir + "/db", "--task", "level1/19_ReLU", "-n", "1", "--json"},
               dir + "/sample.json");
  REQUIRE(sample.wait(30s) == 0);
  auto text = read_file(dir + "/sample.json");
  auto j = nlohmann::json::parse(text.substr(text.find('{')));
  REQUIRE(j["first_draw"].size() == 1);
  CHECK(j["first_draw"][0]["score"] == 1.08);  // settled here, not CUDA-L1's 7.5
  CHECK(j["first_draw"][0]["code"] == "kernel 19");
  child stats(crucible_binary(), {"exemplars", "stats", "--db", dir + "/db", "--json"}, dir + "/stats.json");
  REQUIRE(stats.wait(30s) == 0);
  text = read_file(dir + "/stats.json");
  CHECK(nlohmann::json::parse(text.substr(text.find('{')))["tasks"].size() == 1);  // the hack never entered
}
