// Chaos (issue 20 item 2): the loop with every role as its own `crucible`
// process on ipc (hub, referee, evaluator, exemplar store, learner, two
// rollouts, detector), a driver that kills a random one with SIGKILL at
// random moments (seeded; at least 100 kills) and starts it again, and
// candidates with real code fed to the referee beside the rollouts (the
// loop's random policy writes none, so its own samples settle NoCode without
// an evaluator). At the end, from the durable records (chaos_records.hpp):
// every candidate settled exactly once, every settled clean success in the
// exemplar store once, the learner's versions never going back, no group
// lost or trained twice. A killed evaluator's sandbox workers die with it
// (also on SIGTERM, which one evaluator kill in three is).
//
// CRUCIBLE_CHAOS_SEED, CRUCIBLE_CHAOS_KILLS (100) and CRUCIBLE_CHAOS_GROUPS
// (per rollout, 40) change the run; docs/operations.md, "Chaos".
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "actors/referee/referee_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/job_runner.hpp"
#include "tests/support/chaos_fleet.hpp"
#include "tests/support/chaos_records.hpp"
#include "tests/support/process.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {

const std::string source = CRUCIBLE_SOURCE_DIR;
const std::vector<std::string> tasks = {"cpu/gelu_tanh", "cpu/layernorm_manual", "cpu/scale_relu",
                                        "cpu/softmax_manual"};
constexpr std::uint64_t group_size = 4;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// The quick-start's loop (configs/quickstart.toml) scaled down: groups of 4
// samples of 64 tokens, batches of 2 groups, a checkpoint every version;
// fast liveness; deadlines (settlement, detector) beyond the run, so that
// every outcome comes from the faults and none from a timer.
std::string common_config(const std::string& dir) {
  std::ostringstream c;
  c << "[log]\nlevel = \"info\"\n"
       "[hub]\nheartbeat_ms = 100\ndead_after_ms = 3000\nrecovery_grace_ms = 1000\nredispatch_after_ms = 1500\n"
       "[bus]\nheartbeat_ms = 100\ndead_after_ms = 3000\nretry_ms = 300\naccepted_retry_ms = 600\n"
       "[referee]\nenabled = false\nsecond_device_wait_ms = 1000\n"
       "[learner]\nobjective = \"grpo\"\npolicy = \""
    << dir << "/policy\"\ngroups_per_batch = 2\nlearning_rate = 5e-5\nkl_beta = 0.05\nmax_staleness = 2\n"
    << "temperature = 0.7\nreward_window = 256\ncheckpoint_every = 1\ncheckpoint_dir = \"" << dir
    << "/checkpoints\"\npublish_dir = \"" << dir << "/versions\"\nmetrics_file = \"" << dir << "/metrics.jsonl\"\n";
  return c.str();
}

std::string write_configs(const std::string& dir, const std::vector<std::string>& rollouts) {
  const std::string common = common_config(dir);
  std::ofstream(dir + "/chaos.toml") << common;
  for (std::size_t i = 0; i < rollouts.size(); ++i) {
    std::ofstream(dir + "/" + rollouts[i] + ".toml")
        << common << "[rollout]\ntasks_dir = \"" << source << "/configs/tasks\"\ntasks = [\"" << tasks[0] << "\", \""
        << tasks[1] << "\", \"" << tasks[2] << "\", \"" << tasks[3] << "\"]\nplatform = \"CPU\"\n"
        << "prompt_template = \"" << source << "/configs/prompts/compact.md\"\nexemplars = 2\n"
        << "group_size = " << group_size << "\nmax_new_tokens = 64\ntemperature = 0.7\nmax_staleness = 2\n"
        << "max_pending_groups = 4\nsettle_deadline_ms = 3600000\nseed = " << 1000003 * i << "\nstate_file = \""
        << dir << "/" << rollouts[i] << ".state\"\n";
  }
  return dir + "/chaos.toml";
}

std::uint64_t state_of(const std::string& file) {
  std::ifstream in(file);
  std::uint64_t n = 0;
  in >> n;
  return n;
}

// Real candidates for the referee, evaluator, detector and exemplar store;
// "faster-again" is a copy of "faster" (the same code, another id), which
// takes faster's measurement or waits for it ([referee] reuse_identical)
// while the referee and the evaluator are killed around it.
std::vector<node::job_spec> fed_jobs() {
  std::vector<node::job_spec> jobs;
  for (const auto& task : tasks)
    for (std::string variant : {"faster", "equal", "incorrect", "not_compiling", "faster-again"}) {
      const std::string id = "fed/" + task + "/" + variant;
      const std::string file = variant == "faster-again" ? "faster" : variant;
      jobs.push_back({"settle/" + id, "settle",
                      referee::candidate_envelope(id, task, read_file(source + "/configs/tasks/" + task + "/" + file +
                                                                      ".py"),
                                                  "chaos-feed")});
    }
  return jobs;
}

// Kills and recovery durations per role, for the summary.
void print_summary(const chaos_fleet& fleet, std::uint64_t seed) {
  std::map<std::string, std::vector<const chaos_kill*>> by_kind;
  for (const auto& k : fleet.kills()) by_kind[k.kind].push_back(&k);
  std::printf("\nchaos: seed %llu, %zu kills in %.0f s\n", static_cast<unsigned long long>(seed), fleet.kills().size(),
              fleet.seconds());
  std::printf("%-16s %8s %8s %10s %11s %28s\n", "role", "SIGKILL", "SIGTERM", "recovered", "killed again",
              "back on the bus (min/median/max s)");
  for (auto& [kind, kills] : by_kind) {
    int sigkill = 0, sigterm = 0, superseded = 0;
    std::vector<double> times;
    for (auto* k : kills) {
      (k->signal == SIGKILL ? sigkill : sigterm) += 1;
      superseded += k->superseded;
      if (k->recovered_s >= 0) times.push_back(k->recovered_s);
    }
    std::sort(times.begin(), times.end());
    std::string span = times.empty() ? "-"
                                     : std::to_string(times.front()).substr(0, 5) + " / " +
                                           std::to_string(times[times.size() / 2]).substr(0, 5) + " / " +
                                           std::to_string(times.back()).substr(0, 5);
    std::printf("%-16s %8d %8d %10zu %11d %28s\n", kind.c_str(), sigkill, sigterm, times.size(), superseded,
                span.c_str());
  }
}

}  // namespace

TEST_CASE("chaos: roles killed at random moments and restarted lose nothing and do nothing twice") {
  const std::uint64_t seed = env_number("CRUCIBLE_CHAOS_SEED", std::random_device{}());
  const std::uint64_t kills = env_number("CRUCIBLE_CHAOS_KILLS", 100);
  const std::uint64_t groups = env_number("CRUCIBLE_CHAOS_GROUPS", 40);
  std::printf("chaos: seed %llu (CRUCIBLE_CHAOS_SEED=%llu repeats this run's choices), %llu kills, %llu groups per "
              "rollout\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(kills), static_cast<unsigned long long>(groups));
  std::fflush(stdout);
  std::mt19937_64 rng(seed);

  const std::string dir = temp_dir("chaos");
  const std::vector<std::string> rollouts = {"rollout-0", "rollout-1"};
  const std::string config = write_configs(dir, rollouts);
  const std::string address = "ipc://" + dir + "/hub";
  {
    child init(std::string(CRUCIBLE_BINARY_DIR) + "/bin/crucible-policy",
               {"init", "--model", source + "/configs/quickstart/policy", "--out", dir + "/policy", "--seed", "0"},
               dir + "/init.log");
    REQUIRE_MESSAGE(init.wait(120s) == 0, init.log());
  }

  chaos_fleet fleet(dir, "hub");
  auto role = [&](std::string name, std::string kind, std::vector<std::string> args) {
    fleet.add({name, kind, [args] { return args; }});
  };
  const std::vector<std::string> bus = {"--config", config, "--connect", address};
  auto with_bus = [&](std::vector<std::string> head, const std::string& name, std::vector<std::string> tail) {
    head.insert(head.end(), bus.begin(), bus.end());
    head.insert(head.end(), {"--name", name});
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  role("hub", "hub", {"hub", "--config", config, "--bind", address, "--ledger", dir + "/hub-ledger"});
  role("referee", "referee", with_bus({"referee"}, "referee", {"--ledger", dir + "/referee-ledger"}));
  role("evaluator", "evaluator",
       with_bus({"evaluator"}, "evaluator", {"--tasks", source + "/configs/tasks", "--protocol", "smoke"}));
  role("exemplar", "exemplar store", with_bus({"exemplar"}, "exemplar", {"--db", dir + "/exemplars"}));
  role("learner", "learner", with_bus({"learner"}, "learner", {}));
  role("static", "detector",
       with_bus({"detector"}, "static",
                {"--kind", "static", "--rules", source + "/configs/detectors/static.toml", "--required"}));
  chaos_run run;
  for (const auto& name : rollouts) {
    const std::string state = dir + "/" + name + ".state";
    run.state_files[name] = state;
    run.groups[name] = groups;
    fleet.add({name, "rollout",
               [=] {
                 const std::uint64_t left = groups - std::min(groups, state_of(state));
                 return std::vector<std::string>{"rollout", "--config", dir + "/" + name + ".toml", "--connect",
                                                 address, "--name", name, "--model", dir + "/policy", "--groups",
                                                 std::to_string(left)};
               },
               [=] { return state_of(state) >= groups; }});
  }
  REQUIRE_MESSAGE(fleet.start_all(180s), "the fleet did not come up: see " << dir);

  // The fed candidates, from this process through the hub, beside the loop.
  std::atomic<bool> stop_feeding{false};
  node::job_report fed;
  const auto jobs = fed_jobs();
  std::thread feeder([&] {
    auto transport = bus::connect_peer_transport(address, "chaos-feed");
    if (!transport) return;
    bus::peer_options client;
    client.name = "chaos-feed";
    client.retry = 300ms;
    client.accepted_retry = 600ms;
    client.heartbeat = 100ms;
    client.dead_after = 3000ms;
    node::job_run_options options;
    options.timeout = std::chrono::hours(1);
    options.keep_results = true;
    options.cancelled = [&] { return stop_feeding.load(); };
    fed = node::run_jobs(**transport, client, jobs, options);
  });

  // Kills at random moments: every 0.2 to 1.5 s a random role (each role
  // alike, then one of its processes), with SIGKILL; one evaluator kill in
  // three is a SIGTERM, which does not count towards the kills asked for.
  std::uint64_t sigkills = 0;
  std::uniform_int_distribution<int> pause_ms(200, 1500);
  while (sigkills < kills) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(pause_ms(rng));
    while (std::chrono::steady_clock::now() < until) {
      fleet.poll();
      std::this_thread::sleep_for(50ms);
    }
    std::map<std::string, std::vector<std::string>> by_kind;
    for (const auto& name : fleet.running()) {
      std::string kind = name.rfind("rollout", 0) == 0 ? "rollout" : name;
      by_kind[kind].push_back(name);
    }
    if (by_kind.empty()) continue;
    auto kind = std::next(by_kind.begin(), static_cast<long>(rng() % by_kind.size()));
    const std::string victim = kind->second[rng() % kind->second.size()];
    const int signal = victim == "evaluator" && rng() % 3 == 0 ? SIGTERM : SIGKILL;
    const auto i = fleet.kill_and_restart(victim, signal);
    const auto& k = fleet.kills()[i];
    sigkills += signal == SIGKILL;
    std::printf("kill %zu at %.1f s: %s with %s%s\n", i + 1, k.at_s, victim.c_str(),
                signal == SIGKILL ? "SIGKILL" : "SIGTERM",
                k.workers ? (", " + std::to_string(k.workers) + " sandbox workers, " +
                             std::to_string(k.orphaned_workers) + " left alive")
                                .c_str()
                          : "");
    std::fflush(stdout);
  }
  const double chaos_end = fleet.seconds();

  // Then the loop finishes undisturbed: both rollouts' groups trained, the
  // fed candidates settled, every killed role back.
  const auto drain_until = std::chrono::steady_clock::now() + 20min;
  auto done = [&] {
    for (const auto& name : rollouts)
      if (state_of(run.state_files[name]) < groups) return false;
    return fed.results.size() + fed.failed >= jobs.size() && fleet.all_recovered();
  };
  while (!done() && std::chrono::steady_clock::now() < drain_until) {
    fleet.poll();
    std::this_thread::sleep_for(100ms);
  }
  const bool finished = done();
  stop_feeding = true;
  feeder.join();
  const double drain_s = fleet.seconds() - chaos_end;
  fleet.stop_all();
  print_summary(fleet, seed);
  std::printf("the loop finished %.0f s after the last kill; run folder %s\n", drain_s, dir.c_str());
  REQUIRE_MESSAGE(finished, "the loop did not finish within 20 minutes of the last kill: see " << dir);

  // Each fed candidate answered once, with the ledger's one settlement.
  run.referee_ledger = dir + "/referee-ledger";
  run.exemplar_db = dir + "/exemplars";
  run.learner_metrics = dir + "/metrics.jsonl";
  run.checkpoint_dir = dir + "/checkpoints";
  run.group_size = group_size;
  CHECK(fed.missing == 0);
  for (const auto& r : fed.results) {
    CHECK_MESSAGE(r.status == msg::JobStatus::Ok, r.id << ": " << r.error);
    run.fed.push_back(r.id.substr(std::string("settle/").size()));
    run.fed_answers[run.fed.back()] = r.payload;
  }
  CHECK(run.fed.size() == jobs.size());
  const auto findings = check_chaos_records(run);
  std::printf("checked:\n");
  for (const auto& c : findings.checked) std::printf("  %s\n", c.c_str());
  std::printf("  sandbox workers: %d evaluator kills found workers, none left alive\n",
              static_cast<int>(std::count_if(fleet.kills().begin(), fleet.kills().end(),
                                             [](const chaos_kill& k) { return k.workers > 0; })));
  for (const auto& v : findings.violations) std::printf("VIOLATION: %s\n", v.c_str());
  for (const auto& e : fleet.unexpected_exits()) std::printf("UNEXPECTED EXIT: %s\n", e.c_str());
  std::fflush(stdout);
  CHECK(findings.violations.empty());
  CHECK(fleet.unexpected_exits().empty());
  CHECK(sigkills >= kills);
  for (const auto& k : fleet.kills()) {
    CAPTURE(k.name);
    CHECK(k.orphaned_workers == 0);
    if (k.restarted) CHECK((k.recovered_s >= 0 || k.superseded));
  }
}
