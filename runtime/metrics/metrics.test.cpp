// Prometheus metrics with real processes on loopback: `crucible hub`,
// `crucible worker`, `crucible evaluator`, `crucible learner`, `crucible
// rollout` and `crucible run` (the learner and a rollout on its one
// endpoint) serve /metrics
// (--metrics, or [metrics] listen); what they serve parses as Prometheus
// text, holds the families docs/metrics.md names, and its counters move when
// jobs run, groups are sampled and steps trained. A bad address is refused
// naming the option and the value.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "runtime/metrics/endpoint.hpp"
#include "tests/support/process.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {

// One scrape: sample name with its labels ("name{a=\"b\"}") -> value, and
// the families' types (# TYPE lines). Every line must be a comment or a
// sample, and every sample's family must have a type.
struct scrape {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  bool ok = false;
  std::string text, problem;

  double operator[](const std::string& sample) const {
    auto it = samples.find(sample);
    return it == samples.end() ? -1 : it->second;
  }
  bool has_family(const std::string& name) const { return types.count(name) > 0; }
};

scrape get_metrics(int port) {
  scrape s;
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) {
    s.problem = "no answer on port " + std::to_string(port);
    return s;
  }
  s.text = res->body;
  static const std::regex type_line(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample_line(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+))");
  std::istringstream in(s.text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("# HELP ", 0) == 0) continue;
    if (std::regex_match(line, m, type_line)) {
      s.types[m[1]] = m[2];
    } else if (std::regex_match(line, m, sample_line)) {
      std::string name = m[1];
      std::string family = std::regex_replace(name, std::regex("_(bucket|sum|count)$"), "");
      if (!s.types.count(name) && !s.types.count(family)) {
        s.problem = "sample without a TYPE: " + line;
        return s;
      }
      s.samples[name + std::string(m[2])] = std::stod(m[3]);
    } else {
      s.problem = "not Prometheus text: " + line;
      return s;
    }
  }
  s.ok = true;
  return s;
}

// Scrapes until done(scrape) holds or 60 s pass; returns the last scrape.
template <typename Done>
scrape scrape_until(int port, Done done) {
  scrape s;
  for (int i = 0; i < 600; ++i) {
    s = get_metrics(port);
    if (s.ok && done(s)) break;
    std::this_thread::sleep_for(100ms);
  }
  return s;
}

}  // namespace

TEST_CASE("an endpoint refuses an address that is not HOST:PORT, naming where it came from") {
  for (const std::string bad : {"9464", ":9464", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000", "no.such.host.invalid:9464"}) {
    auto e = metrics::endpoint::listen(bad, "--metrics");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == errc::invalid_argument);
    CHECK_MESSAGE(e.error().message.find("--metrics '" + bad + "'") == 0, e.error().message);
  }
}

TEST_CASE("an endpoint on a port another socket listens on is refused, naming the option and the value") {
  auto first = metrics::endpoint::listen("127.0.0.1:0", "[metrics] listen");
  REQUIRE(first);
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = metrics::endpoint::listen(taken, "[metrics] listen");
  REQUIRE_FALSE(second);
  CHECK(second.error().code == errc::io);
  CHECK(second.error().message.find("[metrics] listen '" + taken + "': cannot listen there") == 0);
}

TEST_CASE("the hub and a worker serve their families, and the job counters move when jobs run") {
  std::string dir = temp_dir("metrics-hub");
  const int bus = pick_port(), http = pick_port();
  const std::string address = "tcp://127.0.0.1:" + std::to_string(bus);
  // The hub's endpoint from the config file, the worker's from --metrics.
  std::ofstream(dir + "/hub.toml") << "[metrics]\nlisten = \"127.0.0.1:" << http << "\"\n";
  child hub(crucible_binary(), {"hub", "--config", dir + "/hub.toml", "--bind", address, "--ledger", dir + "/ledger"},
            dir + "/hub.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  CHECK(count_text(dir + "/hub.log", "metrics at http://127.0.0.1:" + std::to_string(http) + "/metrics") == 1);
  child worker(crucible_binary(),
               {"worker", "--connect", address, "--name", "w1", "--metrics", "127.0.0.1:" + std::to_string(http + 1)},
               dir + "/worker.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "registered Worker 'w1'", 20s), read_file(dir + "/worker.log"));

  auto before = scrape_until(http, [](const scrape& s) { return s["crucible_hub_peers{role=\"worker\"}"] == 1; });
  REQUIRE_MESSAGE(before.ok, before.problem);
  // Families with a series from the start; those by kind appear with the kind's first job.
  for (std::string family : {"crucible_hub_peers", "crucible_hub_messages_total", "crucible_hub_peers_lost_total",
                             "crucible_hub_events_forwarded_total", "crucible_hub_ledger_commit_seconds"})
    CHECK_MESSAGE(before.has_family(family), family);
  CHECK(before.types["crucible_hub_peers"] == "gauge");
  CHECK(before.types["crucible_hub_ledger_commit_seconds"] == "histogram");
  CHECK(before["crucible_hub_peers{role=\"worker\"}"] == 1);
  CHECK(before["crucible_hub_jobs_dispatched_total{kind=\"echo\"}"] == -1);  // no echo job yet

  child submit(crucible_binary(),
               {"submit", "--connect", address, "--count", "3", "--payload", "hi", "--timeout-s", "60"},
               dir + "/submit.out");
  REQUIRE(submit.wait(90s) == 0);
  auto after = scrape_until(http, [](const scrape& s) {
    return s["crucible_hub_jobs_completed_total{kind=\"echo\"}"] == 3;
  });
  REQUIRE_MESSAGE(after.ok, after.problem);
  for (std::string family : {"crucible_hub_jobs_submitted_total", "crucible_hub_jobs_dispatched_total",
                             "crucible_hub_jobs_completed_total", "crucible_hub_jobs_requeued_total",
                             "crucible_hub_jobs_queued", "crucible_hub_jobs_in_flight", "crucible_hub_jobs_awaiting_ack"})
    CHECK_MESSAGE(after.has_family(family), family);
  CHECK(after.types["crucible_hub_jobs_dispatched_total"] == "counter");
  CHECK(after["crucible_hub_jobs_submitted_total{kind=\"echo\"}"] == 3);
  CHECK(after["crucible_hub_jobs_dispatched_total{kind=\"echo\"}"] == 3);
  CHECK(after["crucible_hub_jobs_completed_total{kind=\"echo\"}"] == 3);
  CHECK(after["crucible_hub_jobs_requeued_total{kind=\"echo\"}"] == 0);
  CHECK(after["crucible_hub_jobs_queued{kind=\"echo\"}"] == 0);
  CHECK(after["crucible_hub_ledger_commit_seconds_count"] >= 1);

  auto w = get_metrics(http + 1);
  REQUIRE_MESSAGE(w.ok, w.problem);
  CHECK(w["crucible_worker_jobs_total{kind=\"echo\",status=\"ok\",worker=\"w1\"}"] == 3);
  CHECK(w["crucible_worker_job_seconds_count{kind=\"echo\",worker=\"w1\"}"] == 3);
}

TEST_CASE("a role given a port in use or no port exits, naming --metrics and the value") {
  std::string dir = temp_dir("metrics-bad");
  const int bus = pick_port();
  // A plain listening socket holds the port.
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));

  child in_use(crucible_binary(),
               {"hub", "--bind", "tcp://127.0.0.1:" + std::to_string(bus), "--ledger", dir + "/ledger", "--metrics",
                taken},
               dir + "/in_use.log");
  CHECK(in_use.wait(30s) == 2);
  CHECK_MESSAGE(count_text(dir + "/in_use.log", "--metrics '" + taken + "': cannot listen there") == 1,
                read_file(dir + "/in_use.log"));
  child no_port(crucible_binary(), {"worker", "--connect", "tcp://127.0.0.1:" + std::to_string(bus), "--metrics", "127.0.0.1"},
                dir + "/no_port.log");
  CHECK(no_port.wait(30s) == 2);
  CHECK_MESSAGE(count_text(dir + "/no_port.log", "--metrics '127.0.0.1': no port") == 1, read_file(dir + "/no_port.log"));
  ::close(holder);
}

TEST_CASE("a settled candidate moves the referee's settlements, the evaluator's evaluations and the hub's measure jobs") {
  std::string dir = temp_dir("metrics-evaluator");
  const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";
  const int bus = pick_port(), http = pick_port(), hub_http = http + 1;
  const std::string address = "tcp://127.0.0.1:" + std::to_string(bus);
  // The hub runs the referee, whose families share the hub's endpoint.
  child hub(crucible_binary(),
            {"hub", "--bind", address, "--ledger", dir + "/ledger", "--metrics", "127.0.0.1:" + std::to_string(hub_http)},
            dir + "/hub.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  child evaluator(crucible_binary(),
                  {"evaluator", "--connect", address, "--name", "ev", "--tasks", tasks, "--protocol", "quick",
                   "--metrics", "127.0.0.1:" + std::to_string(http)},
                  dir + "/evaluator.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "registered Evaluator 'ev'", 30s), read_file(dir + "/evaluator.log"));
  auto idle = get_metrics(http);
  REQUIRE_MESSAGE(idle.ok, idle.problem);
  CHECK(idle.has_family("crucible_evaluator_busy_seconds_total"));
  CHECK(idle["crucible_evaluator_busy_seconds_total{device=\"cpu\",evaluator=\"ev\"}"] == 0);

  child settle(crucible_binary(),
               {"settle", "--connect", address, "--task", "cpu/gelu_tanh", "--candidate",
                tasks + "/cpu/gelu_tanh/incorrect.py", "--id", "wrong-1", "--timeout-s", "120"},
               dir + "/settle.out");
  REQUIRE_MESSAGE(settle.wait(150s) == 0, read_file(dir + "/settle.out"));
  auto s = scrape_until(http, [](const scrape& x) {
    return x["crucible_evaluator_evaluations_total{device=\"cpu\",evaluator=\"ev\",status=\"incorrect\"}"] == 1;
  });
  REQUIRE_MESSAGE(s.ok, s.problem);
  CHECK(s["crucible_evaluator_evaluations_total{device=\"cpu\",evaluator=\"ev\",status=\"incorrect\"}"] == 1);
  CHECK(s["crucible_evaluator_busy_seconds_total{device=\"cpu\",evaluator=\"ev\"}"] > 0);
  CHECK(s["crucible_evaluator_phase_seconds_count{device=\"cpu\",evaluator=\"ev\",phase=\"correctness\"}"] == 1);
  CHECK(s["crucible_worker_jobs_total{kind=\"measure\",status=\"ok\",worker=\"ev\"}"] == 1);

  auto h = scrape_until(hub_http, [](const scrape& x) {
    return x["crucible_hub_jobs_completed_total{kind=\"settle\"}"] == 1;
  });
  REQUIRE_MESSAGE(h.ok, h.problem);
  CHECK(h["crucible_referee_settlements_total{verdict=\"failure\",verified=\"false\"}"] == 1);
  CHECK(h["crucible_hub_jobs_dispatched_total{kind=\"measure\"}"] == 1);
  CHECK(h["crucible_hub_jobs_completed_total{kind=\"measure\"}"] == 1);
  CHECK(h["crucible_hub_peers{role=\"evaluator\"}"] == 1);
  CHECK(h["crucible_hub_peers{role=\"referee\"}"] == 1);
}

namespace {

const std::string source = CRUCIBLE_SOURCE_DIR;

// [rollout] of a small fast loop: a tiny policy writes two 16-token
// completions a group, which settle at once as NoCode (no code in them).
std::string small_rollout_section(const std::string& more) {
  return "[rollout]\ntasks_dir = \"" + source + "/configs/tasks\"\ntasks = [\"cpu/gelu_tanh\", \"cpu/scale_relu\"]\n"
         "platform = \"CPU\"\nprompt_template = \"" + source + "/configs/prompts/compact.md\"\nexemplars = 0\n"
         "group_size = 2\nmax_new_tokens = 16\ntemperature = 0.7\nmax_staleness = 2\n" + more;
}

}  // namespace

TEST_CASE("crucible run serves the learner's and the rollout's families on its one endpoint, moving with each step and group") {
  std::string dir = temp_dir("metrics-run");
  const int http = pick_port();
  // Stage 3 only, never ending (groups = 0): the test stops it.
  std::ofstream(dir + "/run.toml") << "[log]\nlevel = \"warn\"\n[run]\njob = \"loop\"\npolicy = \"" << source
                                   << "/configs/quickstart/policy\"\nrollouts = 1\ngroups = 0\nevaluators = 1\n"
                                      "protocol = \"smoke\"\ntasks_dir = \"" << source << "/configs/tasks\"\n"
                                   << "[learner]\nobjective = \"grpo\"\ngroups_per_batch = 2\ntemperature = 0.7\n"
                                      "max_staleness = 2\n"
                                   << small_rollout_section("");
  child run(crucible_binary(),
            {"run", dir + "/run.toml", "--run-dir", dir + "/run", "--metrics", "127.0.0.1:" + std::to_string(http)},
            dir + "/run.out");
  const std::string rollout = "{rollout=\"rollout-0\"}";
  auto first = scrape_until(http, [&](const scrape& s) {
    return s["crucible_learner_step_seconds_count"] >= 1 && s["crucible_rollout_policy_version" + rollout] >= 1;
  });
  REQUIRE_MESSAGE(first.ok, first.problem << run.log());
  REQUIRE_MESSAGE(first["crucible_learner_step_seconds_count"] >= 1, first.text);
  const std::map<std::string, std::string> types{
      {"crucible_learner_step_seconds", "histogram"},
      {"crucible_learner_loss", "gauge"},
      {"crucible_learner_kl", "gauge"},
      {"crucible_learner_version", "gauge"},
      {"crucible_learner_publication_seconds", "histogram"},
      {"crucible_learner_tokens_trained_total", "counter"},
      {"crucible_learner_groups_trained_total", "counter"},
      {"crucible_rollout_completions_total", "counter"},
      {"crucible_rollout_tokens_generated_total", "counter"},
      {"crucible_rollout_generation_seconds_total", "counter"},
      {"crucible_rollout_groups_total", "counter"},
      {"crucible_rollout_groups_refused_total", "counter"},
      {"crucible_rollout_staleness_versions", "histogram"},
      {"crucible_rollout_policy_version", "gauge"},
  };
  for (const auto& [family, type] : types) CHECK_MESSAGE(first.types[family] == type, family);
  // The rest of the run's roles share the endpoint.
  CHECK(first["crucible_worker_jobs_total{kind=\"learner.group\",status=\"ok\",worker=\"learner\"}"] >= 2);

  // A step trains groups_per_batch groups, and each version is published
  // (version 0 at the start too) after its step is recorded.
  const double steps = first["crucible_learner_step_seconds_count"];
  CHECK(first["crucible_learner_groups_trained_total"] >= 2 * steps);
  CHECK(first["crucible_learner_tokens_trained_total"] > 0);
  CHECK(first["crucible_learner_publication_seconds_count"] >= steps);
  CHECK(first["crucible_learner_version"] >= 1);
  CHECK(first["crucible_rollout_completions_total" + rollout] >= 2 * 2);
  CHECK(first["crucible_rollout_tokens_generated_total" + rollout] >= first["crucible_rollout_completions_total" + rollout]);
  CHECK(first["crucible_rollout_generation_seconds_total" + rollout] > 0);
  CHECK(first["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"rollout-0\"}"] >= 2);
  CHECK(first["crucible_rollout_groups_total{outcome=\"dropped\",rollout=\"rollout-0\"}"] == 0);
  CHECK(first["crucible_rollout_groups_refused_total" + rollout] == 0);
  // Every group the learner answered: within max_staleness.
  CHECK(first["crucible_rollout_staleness_versions_count" + rollout] >= 2);
  CHECK(first["crucible_rollout_staleness_versions_bucket{rollout=\"rollout-0\",le=\"2\"}"] ==
        first["crucible_rollout_staleness_versions_count" + rollout]);

  // Later steps and groups move them on.
  // (The hub's families are updated once a second.)
  auto later = scrape_until(http, [&](const scrape& s) {
    return s["crucible_learner_step_seconds_count"] >= steps + 2 && s["crucible_hub_peers{role=\"learner\"}"] == 1;
  });
  REQUIRE_MESSAGE(later.ok, later.problem);
  CHECK(later["crucible_hub_peers{role=\"learner\"}"] == 1);
  CHECK(later["crucible_learner_step_seconds_count"] >= steps + 2);
  CHECK(later["crucible_learner_version"] > first["crucible_learner_version"]);
  CHECK(later["crucible_learner_groups_trained_total"] > first["crucible_learner_groups_trained_total"]);
  CHECK(later["crucible_learner_tokens_trained_total"] > first["crucible_learner_tokens_trained_total"]);
  CHECK(later["crucible_rollout_tokens_generated_total" + rollout] >
        first["crucible_rollout_tokens_generated_total" + rollout]);
  CHECK(later["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"rollout-0\"}"] >
        first["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"rollout-0\"}"]);
  CHECK(later["crucible_rollout_policy_version" + rollout] >= 1);
  run.terminate();
  CHECK(run.wait(60s) != 999);
}

TEST_CASE("crucible rollout serves its families from [metrics] listen, and a stand-in learner's answers count no staleness") {
  std::string dir = temp_dir("metrics-rollout");
  const int bus = pick_port(), http = pick_port();
  const std::string address = "tcp://127.0.0.1:" + std::to_string(bus);
  child hub(crucible_binary(), {"hub", "--bind", address, "--ledger", dir + "/ledger"}, dir + "/hub.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  // An echo worker stands in for the learner.
  child learner(crucible_binary(), {"worker", "--connect", address, "--name", "stand-in"}, dir + "/worker.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "registered Worker 'stand-in'", 20s), read_file(dir + "/worker.log"));
  std::ofstream(dir + "/rollout.toml") << "[metrics]\nlisten = \"127.0.0.1:" << http << "\"\n"
                                       << small_rollout_section("learner_admission = false\nlearner_job_kind = \"echo\"\n");
  child rollout(crucible_binary(),
                {"rollout", "--config", dir + "/rollout.toml", "--connect", address, "--name", "r1", "--model",
                 source + "/tests/data/policy/llama_tiny_tied"},
                dir + "/rollout.log");
  const std::string r1 = "{rollout=\"r1\"}";
  auto s = scrape_until(http, [&](const scrape& x) {
    return x["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"r1\"}"] >= 2;
  });
  REQUIRE_MESSAGE(s.ok, s.problem << rollout.log());
  CHECK(s["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"r1\"}"] >= 2);
  CHECK(s["crucible_rollout_completions_total" + r1] >= 2 * 2);
  CHECK(s["crucible_rollout_tokens_generated_total" + r1] >= s["crucible_rollout_completions_total" + r1]);
  CHECK(s["crucible_rollout_generation_seconds_total" + r1] > 0);
  CHECK(s["crucible_rollout_policy_version" + r1] == 0);
  CHECK(s["crucible_rollout_groups_refused_total" + r1] == 0);
  CHECK(s["crucible_rollout_staleness_versions_count" + r1] == 0);
  rollout.terminate();
  CHECK(rollout.wait(60s) == 0);
}

TEST_CASE("crucible learner and crucible rollout as processes each serve their families, which move as groups are trained") {
  std::string dir = temp_dir("metrics-learner");
  const int bus = pick_port(), learner_http = pick_port(), rollout_http = learner_http + 1;
  const std::string address = "tcp://127.0.0.1:" + std::to_string(bus);
  const std::string policy = source + "/tests/data/policy/llama_tiny_tied";
  child hub(crucible_binary(), {"hub", "--bind", address, "--ledger", dir + "/ledger"}, dir + "/hub.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  std::ofstream(dir + "/loop.toml") << "[learner]\ngroups_per_batch = 2\ntemperature = 0.7\nmax_staleness = 2\n"
                                    << small_rollout_section("");
  child learner(crucible_binary(),
                {"learner", "--config", dir + "/loop.toml", "--connect", address, "--name", "learner", "--policy", policy,
                 "--metrics", "127.0.0.1:" + std::to_string(learner_http)},
                dir + "/learner.log");
  REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "registered Learner 'learner'", 60s), read_file(dir + "/learner.log"));
  // Version 0 is published at the start, before any step.
  auto idle = get_metrics(learner_http);
  REQUIRE_MESSAGE(idle.ok, idle.problem);
  CHECK(idle["crucible_learner_version"] == 0);
  CHECK(idle["crucible_learner_publication_seconds_count"] == 1);
  CHECK(idle["crucible_learner_step_seconds_count"] == 0);
  CHECK(idle["crucible_learner_groups_trained_total"] == 0);

  child rollout(crucible_binary(),
                {"rollout", "--config", dir + "/loop.toml", "--connect", address, "--name", "r1", "--model", policy,
                 "--metrics", "127.0.0.1:" + std::to_string(rollout_http)},
                dir + "/rollout.log");
  auto l = scrape_until(learner_http, [](const scrape& x) { return x["crucible_learner_step_seconds_count"] >= 2; });
  REQUIRE_MESSAGE(l.ok, l.problem << read_file(dir + "/learner.log") << read_file(dir + "/rollout.log"));
  CHECK(l["crucible_learner_step_seconds_count"] >= 2);
  CHECK(l["crucible_learner_version"] >= 2);
  CHECK(l["crucible_learner_groups_trained_total"] >= 4);
  CHECK(l["crucible_learner_tokens_trained_total"] > 0);
  CHECK(l["crucible_worker_jobs_total{kind=\"learner.group\",status=\"ok\",worker=\"learner\"}"] >= 4);
  const std::string r1 = "{rollout=\"r1\"}";
  auto r = scrape_until(rollout_http, [&](const scrape& x) {
    return x["crucible_rollout_staleness_versions_count" + r1] >= 4 && x["crucible_rollout_policy_version" + r1] >= 1;
  });
  REQUIRE_MESSAGE(r.ok, r.problem);
  CHECK(r["crucible_rollout_staleness_versions_count" + r1] >= 4);
  CHECK(r["crucible_rollout_policy_version" + r1] >= 1);
  CHECK(r["crucible_rollout_groups_total{outcome=\"sent\",rollout=\"r1\"}"] >= 4);
  CHECK(r["crucible_rollout_tokens_generated_total" + r1] > 0);
  rollout.terminate();
  learner.terminate();
  CHECK(rollout.wait(60s) == 0);
  CHECK(learner.wait(60s) == 0);
}
