// The live dashboard with real processes: `crucible run` (the loop on the
// quick-start config, made cheap: no stage 1, one rollout, one task, and the
// multi-node test's hand-made policy whose every completion is the task's
// faster or incorrect variant, so that some settle Success and fill the
// exemplar store; until a signal) serves it at --dashboard; its JSON
// endpoints hold the run's fleet, queues, throughput, rewards, exemplar
// buckets and settlements, and the page, rendered by headless Chromium
// (Debian's chromium, tools/setup.sh), shows the peers with their roles, the
// queues, the exemplar buckets of the task and settlement rows with their
// verdicts. A bad address is refused naming the option and the value.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/multinode_policy.hpp"
#include "tests/support/process.hpp"

using namespace crucible::testing;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json get_json(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  auto res = client.Get(path.c_str());
  if (!res || res->status != 200) return json();
  return json::parse(res->body, nullptr, false);
}

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::string answer(const std::string& variant) {
  return "## Code Implementation\n```python\n" +
         read_file(std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks/cpu/gelu_tanh/" + variant + ".py") + "```\n";
}

// Whether every bucket of every task published holds the reward of a
// Success among settled's rows: the buckets are the run's own.
bool buckets_of_the_run(const json& exemplars, const json& settled) {
  int buckets = 0;
  for (const auto& t : exemplars["tasks"])
    for (const auto& b : t["buckets"]) {
      ++buckets;
      bool held = false;
      for (const auto& s : settled["newest"])
        if (s["verdict"] == "Success" && s["task"] == t["task"] && s["reward"].get<double>() >= b["low"].get<double>() - 1e-6 &&
            s["reward"].get<double>() < b["high"].get<double>() + 1e-6)
          held = true;
      if (!held) return false;
    }
  return buckets > 0;
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a bad --dashboard address is refused naming the option and the value") {
  const std::string dir = temp_dir("dashboard_bad");
  for (const std::string bad : {"nonsense", "127.0.0.1:99999"}) {
    CAPTURE(bad);
    child hub(crucible_binary(), {"hub", "--bind", "ipc://" + dir + "/hub", "--ledger", dir + "/ledger", "--dashboard", bad},
              dir + "/hub.out");
    CHECK(hub.wait(30s) == 2);
    CHECK(read_file(dir + "/hub.out").find("--dashboard '" + bad + "'") != std::string::npos);
  }
}

TEST_CASE("a running loop's dashboard shows its fleet, queues, exemplar buckets and settlements, in JSON and in "
          "Chromium") {
  const std::string browser = chromium();
  REQUIRE_MESSAGE(!browser.empty(), "no chromium: tools/setup.sh installs Debian's");
  const std::string dir = temp_dir("dashboard");
  REQUIRE(write_answering_policy(dir + "/policy", {answer("faster"), answer("incorrect")}).ok());
  const std::string config = quickstart_config(dir, {{"policy", "\"" + dir + "/policy\""},
                                               {"sft_data", "\"\""},
                                               {"groups", "0"},
                                               {"rollouts", "1"},
                                               {"tasks", "[\"cpu/gelu_tanh\"]"},
                                               {"group_size", "4"},
                                               {"max_new_tokens", "1"}});
  const int port = pick_port();
  child run(crucible_binary(), {"run", config, "--run-dir", dir + "/run", "--dashboard", "127.0.0.1:" + std::to_string(port)},
            dir + "/run.out");
  REQUIRE_MESSAGE(wait_for_text(dir + "/run.out", "dashboard at http://127.0.0.1:" + std::to_string(port), 60s),
                  run.log());

  // Until the referee has settled a few candidates and every role has joined.
  const std::vector<std::string> roles{"Evaluator", "Exemplar", "Detector", "Learner", "Referee", "Client"};
  json settled, fleet;
  for (int i = 0; i < 240; ++i) {
    settled = get_json(port, "/api/settlements");
    fleet = get_json(port, "/api/fleet");
    if (settled.is_object() && settled["total"].get<int>() >= 4 && fleet.is_object() &&
        fleet["peers"].size() >= roles.size())
      break;
    REQUIRE_MESSAGE(run.running(), run.log());
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(settled.is_object());
  REQUIRE(settled["total"].get<int>() >= 4);
  for (const auto& row : settled["newest"]) {
    CAPTURE(row.dump());
    CHECK(row["candidate"].get<std::string>().rfind("rollout-0/", 0) == 0);
    CHECK(std::set<std::string>{"Success", "Failure", "Void", "Hack", "NoCode"}.count(row["verdict"]) == 1);
    CHECK(row["task"].get<std::string>().rfind("cpu/", 0) == 0);
  }

  // Every role of the run, on this machine's hub (a rollout registers as a
  // client: it serves no job).
  CAPTURE(fleet.dump());
  CHECK(fleet["hub"].get<bool>());
  std::set<std::string> seen, names;
  for (const auto& p : fleet["peers"]) {
    seen.insert(p["role"].get<std::string>());
    names.insert(p["name"].get<std::string>());
    CHECK(std::set<std::string>{"busy", "idle", "client", "silent"}.count(p["state"]) == 1);
  }
  for (const auto& role : roles) CHECK(seen.count(role) == 1);
  CHECK(names.count("rollout-0") == 1);
  const json queues = get_json(port, "/api/queues");
  CAPTURE(queues.dump());
  std::set<std::string> kinds;
  for (const auto& k : queues["kinds"]) kinds.insert(k["kind"].get<std::string>());
  CHECK(kinds.count("settle") == 1);
  CHECK(kinds.count("measure") + kinds.count("learner.group") >= 1);
  CHECK(queues["queued"].is_number());
  const json throughput = get_json(port, "/api/throughput");
  CHECK(throughput["t"].size() >= 1);
  CHECK(throughput["jobs_per_s"].contains("settle"));
  const json rewards = get_json(port, "/api/rewards");
  CHECK(rewards["reward"].size() >= 4);
  CHECK(rewards["mean"].size() == rewards["reward"].size());
  // The exemplar store's buckets of the task, as it published them: each
  // holds the reward of a Success of the run (the store publishes within a
  // second of an insert; the Success's settlement event may come later).
  json exemplars;
  for (int i = 0; i < 240; ++i) {
    exemplars = get_json(port, "/api/exemplars");
    settled = get_json(port, "/api/settlements");
    if (exemplars.is_object() && settled.is_object() && buckets_of_the_run(exemplars, settled)) break;
    REQUIRE_MESSAGE(run.running(), run.log());
    std::this_thread::sleep_for(500ms);
  }
  CAPTURE(exemplars.dump());
  CAPTURE(settled.dump());
  CHECK(buckets_of_the_run(exemplars, settled));
  CHECK(exemplars["available"].get<bool>());
  REQUIRE(exemplars["tasks"].size() == 1);
  const json& task = exemplars["tasks"][0];
  CHECK(task["task"] == "cpu/gelu_tanh");
  CHECK(task["store"] == "exemplar");
  CHECK(task["selector"] == "bucket");
  CHECK(task["bucket_width"].get<double>() == doctest::Approx(0.1));
  std::uint64_t in_buckets = 0;
  double chance = 0;
  for (const auto& b : task["buckets"]) {
    CAPTURE(b.dump());
    CHECK(b["count"].get<std::uint64_t>() >= 1);
    CHECK(b["low"].get<double>() <= b["mean"].get<double>() + 1e-9);
    CHECK(b["mean"].get<double>() < b["high"].get<double>());
    in_buckets += b["count"].get<std::uint64_t>();
    chance += b["probability"].get<double>();
  }
  CHECK(task["exemplars"].get<std::uint64_t>() == in_buckets);
  CHECK(chance == doctest::Approx(1.0));
  // The kernels found: the task's best Success of the settlements shown.
  const json kernels = get_json(port, "/api/kernels");
  CAPTURE(kernels.dump());
  double best = -1;
  for (const auto& s : get_json(port, "/api/settlements")["newest"])
    if (s["verdict"] == "Success") best = std::max(best, s["reward"].get<double>());
  REQUIRE(kernels["kernels"].size() == 1);
  CHECK(kernels["kernels"][0]["task"] == "cpu/gelu_tanh");
  CHECK(kernels["kernels"][0]["verdict"] == "Success");
  CHECK(kernels["kernels"][0]["reward"].get<double>() >= best);

  // The page as a browser renders it, after its script has polled.
  // --no-sandbox: Chromium's sandbox refuses to run as root, which CI and
  // these machines' test users are.
  const std::string profile = dir + "/chromium-profile";
  child page(browser, {"--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                       "--virtual-time-budget=4000", "--dump-dom", "http://127.0.0.1:" + std::to_string(port) + "/"},
             dir + "/dom.html");
  REQUIRE(page.wait(90s) == 0);
  MESSAGE("chromium done");
  const std::string dom = read_file(dir + "/dom.html");
  CAPTURE(dom.substr(0, 4000));
  for (const auto& role : roles) CHECK(dom.find("<td class=\"role\">" + role + "</td>") != std::string::npos);
  CHECK(dom.find("<td class=\"name\">rollout-0</td>") != std::string::npos);
  CHECK(std::regex_search(dom, std::regex("id=\"queue-summary\">queued [0-9]+, in flight [0-9]+<")));
  CHECK(dom.find("<td class=\"kind\">settle</td>") != std::string::npos);
  CHECK(count(dom, "<tr class=\"settlement\">") >= 1);
  CHECK(std::regex_search(dom, std::regex("<td class=\"verdict verdict-(Success|Failure|Void|Hack|NoCode)\">")));
  CHECK(dom.find("<td class=\"task\" colspan=\"3\">cpu/gelu_tanh</td>") != std::string::npos);
  CHECK(count(dom, "<tr class=\"bucket\">") >= 1);
  CHECK(count(dom, "<tr class=\"kernel\">") == 1);
  CHECK(std::regex_search(dom, std::regex("<td class=\"num probability\">[0-9.]+%</td>")));
  CHECK(std::regex_search(dom, std::regex("id=\"exemplar-summary\">1 tasks, [1-9][0-9]* exemplars \\(exemplar: selector bucket")));
  CHECK(dom.find("updated ") != std::string::npos);
  CHECK(dom.find("<polyline") != std::string::npos);

  // `crucible dashboard --connect` beside the loop: the same page from the
  // hub's events, in a process of its own.
  const int second = pick_port();
  child watcher(crucible_binary(),
                {"dashboard", "--connect", "ipc://" + dir + "/run/hub", "--name", "dashboard-test", "--dashboard",
                 "127.0.0.1:" + std::to_string(second)},
                dir + "/dashboard.out");
  REQUIRE_MESSAGE(wait_for_text(dir + "/dashboard.out", "dashboard at http://127.0.0.1:" + std::to_string(second), 30s),
                  watcher.log());
  const std::vector<std::string> served{"Evaluator", "Exemplar", "Detector", "Learner", "Referee"};
  json far_fleet, far_exemplars, far_settled;
  auto heard_all = [&] {
    far_fleet = get_json(second, "/api/fleet");
    far_exemplars = get_json(second, "/api/exemplars");
    far_settled = get_json(second, "/api/settlements");
    if (!far_fleet.is_object() || !far_exemplars.is_object() || !far_settled.is_object()) return false;
    std::set<std::string> roles_heard;
    for (const auto& p : far_fleet["peers"]) roles_heard.insert(p["role"].get<std::string>());
    for (const auto& role : served)
      if (!roles_heard.count(role)) return false;
    return far_settled["total"].get<int>() >= 1 && buckets_of_the_run(far_exemplars, get_json(port, "/api/settlements"));
  };
  for (int i = 0; i < 180 && !heard_all(); ++i) {
    REQUIRE_MESSAGE(watcher.running(), watcher.log());
    REQUIRE_MESSAGE(run.running(), run.log());
    std::this_thread::sleep_for(500ms);
  }
  CAPTURE(far_fleet.dump());
  CAPTURE(far_exemplars.dump());
  CAPTURE(far_settled.dump());
  CHECK(heard_all());
  CHECK_FALSE(far_fleet["hub"].get<bool>());
  CHECK(far_exemplars["tasks"][0]["store"] == "exemplar");
  for (const auto& row : far_settled["newest"]) CHECK(row["candidate"].get<std::string>().rfind("rollout-0/", 0) == 0);
  child far_page(browser, {"--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile + "-far",
                           "--virtual-time-budget=4000", "--dump-dom", "http://127.0.0.1:" + std::to_string(second) + "/"},
                 dir + "/far-dom.html");
  REQUIRE(far_page.wait(90s) == 0);
  const std::string far_dom = read_file(dir + "/far-dom.html");
  CAPTURE(far_dom.substr(0, 4000));
  for (const auto& role : served) CHECK(far_dom.find("<td class=\"role\">" + role + "</td>") != std::string::npos);
  CHECK(far_dom.find("<td class=\"task\" colspan=\"3\">cpu/gelu_tanh</td>") != std::string::npos);
  CHECK(far_dom.find("the queues are the hub's own") != std::string::npos);
  watcher.terminate();
  CHECK(watcher.wait(60s) == 0);

  run.terminate();
  CHECK(run.wait(120s) == 0);
}
