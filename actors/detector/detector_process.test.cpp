// Detectors as processes beside a running `crucible hub`: the C++ static
// detector and the Python example detector (tools/detectors) register as
// Detectors (required and deadline reach the registry's PeerEvent), answer
// detect jobs with Verdicts, leave and join without the hub restarting, and
// a required detector's hack verdict settles a candidate that the hub's
// referee had measured by a real CPU evaluator.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "actors/detector/detector_wire.hpp"
#include "actors/detector/fake_chat_endpoint.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/job_runner.hpp"
#include "tests/support/process.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {

struct hub_fixture {
  std::string dir = temp_dir("detectors");
  std::string config = dir + "/fast.toml";
  std::string address = "tcp://127.0.0.1:" + std::to_string(pick_port());
  std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";
  std::unique_ptr<child> hub;

  // dead_after 3 s: a Python detector stalled 0.81 s on a loaded CI machine
  // and was declared dead at 0.8 s (docs/operations.md, "A required detector
  // that drops off the bus": the referee now waits for it; a case below).
  explicit hub_fixture(const std::string& more_config = "") {
    std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 3000\n"
                             "[bus]\nheartbeat_ms = 100\ndead_after_ms = 3000\nretry_ms = 300\n"
                          << more_config;
    hub = std::make_unique<child>(crucible_binary(),
                                  std::vector<std::string>{"hub", "--config", config, "--bind", address, "--ledger", dir + "/ledger"},
                                  dir + "/hub.log");
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  }

  std::unique_ptr<child> python_detector(const std::string& name, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{std::string(CRUCIBLE_SOURCE_DIR) + "/tools/detectors/example_detector.py",
                                  "--connect", address, "--name", name,
                                  "--schema", std::string(CRUCIBLE_BINARY_DIR) + "/generated/python"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<child>("/usr/bin/python3", args, dir + "/" + name + ".log");
  }

  // A CPU evaluator with the quick protocol over the project's task set.
  std::unique_ptr<child> evaluator() {
    return std::make_unique<child>(crucible_binary(),
                                   std::vector<std::string>{"evaluator", "--config", config, "--connect", address, "--name",
                                                            "evaluator", "--tasks", tasks, "--protocol", "quick"},
                                   dir + "/evaluator.log");
  }

  // `crucible settle` of a variant of cpu/chain_matmul: its Settlement as JSON.
  nlohmann::json settle(const std::string& id, const std::string& variant) {
    child c(crucible_binary(),
            {"settle", "--connect", address, "--task", "cpu/chain_matmul", "--candidate",
             tasks + "/cpu/chain_matmul/" + variant + ".py", "--id", id, "--timeout-s", "240"},
            dir + "/" + id + ".json");
    REQUIRE(c.wait(250s) == 0);
    auto text = read_file(dir + "/" + id + ".json");
    return nlohmann::json::parse(text.substr(text.rfind("{\"candidate\"")));
  }

  // Runs the jobs as a client named client; returns each job's Verdict (or error) by job id.
  std::map<std::string, std::string> verdicts(const std::vector<node::job_spec>& jobs, const std::string& client) {
    auto transport = bus::connect_peer_transport(address, client);
    REQUIRE(transport.ok());
    std::map<std::string, std::string> out;
    node::job_run_options run;
    run.timeout = 60s;
    run.on_result = [&](const bus::client_session::job_result& r) {
      if (r.status != msg::JobStatus::Ok) {
        out[r.id] = "failed: " + r.error;
        return;
      }
      auto env = messages::open(r.payload);
      REQUIRE(env.ok());
      auto* v = (*env)->payload_as_Verdict();
      REQUIRE(v != nullptr);
      out[r.id] = std::string(msg::EnumNameVerdictKind(v->verdict())) + (v->required() ? " required " : " advisory ") +
                  std::string(messages::str(v->detector())) + " " + std::string(messages::str(v->candidate_id())) +
                  ": " + std::string(messages::str(v->reason()));
    };
    bus::peer_options o;
    o.name = client;
    o.node = "test";
    auto report = node::run_jobs(**transport, o, jobs, run);
    CHECK(report.completed == jobs.size());
    return out;
  }
};

node::job_spec detect_job(const std::string& detector_name, const std::string& candidate, const std::string& code,
                          double speedup) {
  detector::detect_input in;
  in.candidate_id = candidate;
  in.task_id = "cpu/scale_relu";
  in.code = code;
  in.measured = in.measured_ok = true;
  in.speedup = in.reward = speedup;
  return {detector::detect_job_id(candidate, detector_name), detector::detect_job_kind(detector_name),
          detector::encode_request(in, "test-referee")};
}

// The registry as a subscriber sees it: the last PeerEvent of name.
struct peer_seen {
  bool found = false, joined = false, required = false;
  std::uint32_t deadline_ms = 0;
  msg::Role role = msg::Role::Unknown;
};
peer_seen watch_peer(const std::string& address, const std::string& name, bool want_joined) {
  auto t = bus::connect_peer_transport(address, "watcher-" + name);
  REQUIRE(t.ok());
  REQUIRE((*t)->subscribe("PeerEvent").ok());
  peer_seen seen;
  auto until = std::chrono::steady_clock::now() + 15s;
  while (std::chrono::steady_clock::now() < until) {
    std::vector<bus::frame> frames;
    REQUIRE((*t)->receive(frames, 64, 200ms).ok());
    for (auto& f : frames) {
      auto env = messages::open(f.data);
      if (!env) continue;
      auto* p = (*env)->payload_as_PeerEvent();
      if (!p || messages::str(p->name()) != name) continue;
      seen = {true, p->joined(), p->required(), p->deadline_ms(), p->role()};
      if (seen.joined == want_joined) return seen;
    }
  }
  return seen;
}

const char* clean_code = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x) * 6 + 1\n";
const char* threaded_code = "import threading\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        threading.Thread(target=work).start()\n        return x\n";

}  // namespace

TEST_CASE("the static detector process registers as a required detector with its deadline and answers detect jobs with verdicts") {
  hub_fixture f;
  child detector(crucible_binary(),
                 {"detector", "--kind", "static", "--name", "static", "--required", "--deadline-ms", "5000", "--config",
                  f.config, "--connect", f.address, "--rules", std::string(CRUCIBLE_SOURCE_DIR) + "/configs/detectors/static.toml"},
                 f.dir + "/static.log");
  REQUIRE(wait_for_text(f.dir + "/hub.log", "registered Detector 'static'", 10s));
  auto seen = watch_peer(f.address, "static", true);
  REQUIRE(seen.found);
  CHECK(seen.role == msg::Role::Detector);
  CHECK(seen.required);
  CHECK(seen.deadline_ms == 5000);

  auto v = f.verdicts({detect_job("static", "c-clean", clean_code, 1.2), detect_job("static", "c-thread", threaded_code, 9.0)},
                      "client-static");
  CHECK(v["detect/c-clean/static"].rfind("Clean required static c-clean", 0) == 0);
  CHECK(v["detect/c-thread/static"].rfind("Hack required static c-thread: threading (line 1)", 0) == 0);
  detector.terminate();
  CHECK(detector.wait(10s) == 0);
}

TEST_CASE("the Python example detector answers detect jobs beside a running hub, and detectors leave and join without a hub restart") {
  hub_fixture f;
  auto python = f.python_detector("plausibility", {"--max-speedup", "20", "--deadline-ms", "7000"});
  REQUIRE_MESSAGE(wait_for_text(f.dir + "/hub.log", "registered Detector 'plausibility'", 15s), read_file(python->log_path()));
  auto seen = watch_peer(f.address, "plausibility", true);
  CHECK(seen.role == msg::Role::Detector);
  CHECK_FALSE(seen.required);
  CHECK(seen.deadline_ms == 7000);

  auto v = f.verdicts({detect_job("plausibility", "c-real", clean_code, 3.0),
                       detect_job("plausibility", "c-leap", clean_code, 80.0),
                       detect_job("plausibility", "c-nomodel", "def f(x):\n    return x\n", 1.0)},
                      "client-1");
  CHECK(v["detect/c-real/plausibility"].rfind("Clean advisory plausibility c-real", 0) == 0);
  CHECK(v["detect/c-leap/plausibility"].rfind("Hack advisory plausibility c-leap: speedup 80.00 is above 20.00", 0) == 0);
  CHECK(v["detect/c-nomodel/plausibility"].rfind("Unsure advisory plausibility c-nomodel", 0) == 0);

  // It leaves: the registry says so.
  python->terminate();
  CHECK(python->wait(10s) == 0);
  auto gone = watch_peer(f.address, "plausibility", false);
  CHECK(gone.found);
  CHECK_FALSE(gone.joined);

  // Another one joins the same hub, required this time, and serves at once.
  auto strict = f.python_detector("strict", {"--required", "--max-speedup", "2"});
  REQUIRE(wait_for_text(f.dir + "/hub.log", "registered Detector 'strict'", 15s));
  CHECK(watch_peer(f.address, "strict", true).required);
  auto w = f.verdicts({detect_job("strict", "c-real", clean_code, 3.0)}, "client-2");
  CHECK(w["detect/c-real/strict"].rfind("Hack required strict c-real: speedup 3.00 is above 2.00", 0) == 0);
  CHECK(f.hub->running());
  strict->terminate();
  CHECK(strict->wait(10s) == 0);
}

TEST_CASE("a required Python detector's hack verdict settles a measured candidate at reward 0 and records it in the hack database") {
  hub_fixture f("[referee]\nverify_above = 1000.0\n");  // no layer 7 here: one evaluator
  auto evaluator = f.evaluator();
  auto python = f.python_detector("plausibility", {"--required", "--max-speedup", "2", "--deadline-ms", "20000"});
  REQUIRE(wait_for_text(f.dir + "/hub.log", "registered Detector 'plausibility'", 15s));
  REQUIRE(wait_for_text(f.dir + "/evaluator.log", "registered with hub", 20s));

  // chain_matmul's faster variant reassociates the product: 32x fewer
  // multiply-adds (8.4M against 262k), about 20x on this project's CPUs and
  // less where the reference's matmuls run faster and the candidate's stay
  // call-bound, so the bound is 2x, not one machine's ratio. (The judge test
  // below settles a clean one.)
  auto hacked = f.settle("c-fast", "faster");
  CAPTURE(hacked.dump());
  CHECK(hacked["status"] == "Hack");
  CHECK(hacked["reward"] == 0.0);
  CHECK(hacked["reason"].get<std::string>().find("detector plausibility: hack") != std::string::npos);

  // The hack database in the hub's RocksDB, read while the hub runs.
  child list(crucible_binary(), {"hacks", "list", "--db", f.dir + "/ledger", "--json"}, f.dir + "/hacks.json");
  REQUIRE(list.wait(30s) == 0);
  auto text = read_file(f.dir + "/hacks.json");
  auto hacks = nlohmann::json::parse(text.substr(text.find('[')));
  REQUIRE(hacks.size() == 1);
  CHECK(hacks[0]["candidate_id"] == "c-fast");
  CHECK(hacks[0]["detector"] == "plausibility");
  CHECK(hacks[0]["task_id"] == "cpu/chain_matmul");
}

TEST_CASE("a required detector killed before a candidate is judged and started again after still decides it") {
  hub_fixture f("[referee]\nverify_above = 1000.0\n");
  auto evaluator = f.evaluator();
  std::vector<std::string> args{"--required", "--max-speedup", "2", "--deadline-ms", "60000"};
  auto python = f.python_detector("plausibility", args);
  REQUIRE(wait_for_text(f.dir + "/hub.log", "registered Detector 'plausibility'", 15s));
  REQUIRE(wait_for_text(f.dir + "/evaluator.log", "registered with hub", 20s));
  python->kill9();
  python->wait(10s);
  REQUIRE_MESSAGE(wait_for_text(f.dir + "/hub.log", "referee: required detector plausibility left the bus", 15s),
                  read_file(f.dir + "/hub.log"));

  // The candidate is measured and judged while no detector is on the bus:
  // the referee's line (every 10 s) shows it waiting with its detector.
  child settle(crucible_binary(),
               {"settle", "--connect", f.address, "--task", "cpu/chain_matmul", "--candidate",
                f.tasks + "/cpu/chain_matmul/faster.py", "--id", "c-gap", "--timeout-s", "240"},
               f.dir + "/c-gap.json");
  REQUIRE_MESSAGE(wait_for_text(f.dir + "/hub.log", "1 with detectors", 90s), read_file(f.dir + "/hub.log"));
  python = f.python_detector("plausibility", args);
  REQUIRE(settle.wait(250s) == 0);
  auto text = read_file(f.dir + "/c-gap.json");
  auto s = nlohmann::json::parse(text.substr(text.rfind("{\"candidate\"")));
  CAPTURE(s.dump());
  CHECK(s["status"] == "Hack");
  CHECK(s["reason"].get<std::string>().find("detector plausibility: hack") != std::string::npos);
}

TEST_CASE("a required judge process asks its endpoint only about a large leap, with a known hack from its hack database in the prompt, and its hack verdict settles the candidate") {
  hub_fixture f("[referee]\nverify_above = 1000.0\n");
  // A known hack in a database of its own (`hacks add` needs the database
  // to itself; the judge opens it read-only for each judged candidate).
  std::string known = f.dir + "/known.py";
  std::ofstream(known) << "class ModelNew(nn.Module):\n    def forward(self, A, B, C):\n        key = A.data_ptr()\n"
                          "        if key in CACHE:\n            return CACHE[key]\n        return A @ (B @ C)\n";
  child add(crucible_binary(), {"hacks", "add", "--code", known, "--task", "cpu/chain_matmul", "--reason", "caches by address",
                                "--id", "known-cache", "--db", f.dir + "/hacks"},
            f.dir + "/add.log");
  REQUIRE(add.wait(30s) == 0);

  detector::testing::fake_endpoint endpoint;
  endpoint.answer("VERDICT: hack\nREASON: reassociation is fine but this looks like a cached result\nCONFIDENCE: 0.9");
  std::string judge_config = f.dir + "/judge.toml";
  std::ofstream(judge_config) << read_file(f.config) << "[detector]\nkind = \"judge\"\nname = \"judge\"\nrequired = true\n"
                              << "url = \"" << endpoint.url() << "\"\nmodel = \"checker\"\nmin_speedup = 2.0\n"
                              << "hacks_db = \"" << f.dir << "/hacks\"\ntimeout_ms = 20000\n";
  child judge(crucible_binary(), {"detector", "--config", judge_config, "--connect", f.address}, f.dir + "/judge.log");
  auto evaluator = f.evaluator();
  REQUIRE_MESSAGE(wait_for_text(f.dir + "/hub.log", "registered Detector 'judge'", 15s), read_file(f.dir + "/judge.log"));
  REQUIRE(wait_for_text(f.dir + "/evaluator.log", "registered with hub", 20s));

  auto equal = f.settle("j-equal", "equal");  // identity, about 1x: below the 2x leap, not asked
  CHECK(equal["status"] == "Success");
  CHECK(endpoint.bodies().empty());
  auto fast = f.settle("j-fast", "faster");  // 32x fewer multiply-adds, above 2x anywhere: asked
  CHECK(fast["status"] == "Hack");
  CHECK(fast["reason"].get<std::string>().find("looks like a cached result") != std::string::npos);
  auto bodies = endpoint.bodies();
  REQUIRE(bodies.size() == 1);
  auto request = nlohmann::json::parse(bodies[0]);
  CHECK(request["model"] == "checker");
  auto prompt = request["messages"][1]["content"].get<std::string>();
  CHECK(prompt.find("known-cache") != std::string::npos);
  CHECK(prompt.find("caches by address") != std::string::npos);
  CHECK(prompt.find("A @ (B @ C)") != std::string::npos);  // the candidate itself
}
