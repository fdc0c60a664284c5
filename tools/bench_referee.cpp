// Referee benchmark: what the referee costs per candidate. In one process
// over the real bus (ZeroMQ ipc): a hub, its referee on the hub's RocksDB,
// and instant evaluators (worker actors that answer a measure job with a
// Measurement at once, so that only the bus, the referee and its ledger are
// timed). The same candidates go through the hub twice: as plain measure
// jobs (the peer: what `crucible run` did before the referee) and as settle
// jobs (the referee submits the measure job itself, records each step,
// publishes the settlement). Prints a table for docs/benchmarks.md
// ("Referee").
//
//   crucible-bench-referee [--candidates 5000] [--evaluators 2] [--in-flight 256] [--dir DIR]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/referee/referee_host.hpp"
#include "actors/referee/referee_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/hub_actor.hpp"
#include "runtime/node/job_runner.hpp"
#include "runtime/node/worker_actor.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace std::chrono_literals;
using messages::str;

namespace {

// Answers measure jobs at once with a 1.5x Ok measurement (below every
// verification threshold).
class instant_evaluator final : public node::job_handler {
 public:
  explicit instant_evaluator(std::string name) : name_(std::move(name)) {}
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    auto* c = referee::payload_of<msg::Candidate>(job.payload);
    if (!c) return done(msg::JobStatus::Failed, {}, "not a candidate");
    done(msg::JobStatus::Ok,
         referee::simple_measurement(std::string(str(c->candidate_id())), std::string(str(c->task_id())),
                                     msg::EvalStatus::Ok, 1.5, name_, "none"),
         {});
  }

 private:
  std::string name_;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t candidates = 5000, evaluators = 2, in_flight = 256;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--candidates") candidates = std::stoul(v);
    else if (k == "--evaluators") evaluators = std::stoul(v);
    else if (k == "--in-flight") in_flight = std::stoul(v);
    else if (k == "--dir") dir = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  storage::temp_dir tmp("bench-referee");
  if (dir.empty()) dir = tmp.path();
  std::string bind = "ipc://" + dir + "/hub";
  auto kv = storage::open_rocksdb(dir + "/ledger");
  auto hub_t = bus::bind_hub_transport(bind);
  if (!kv || !hub_t) {
    std::fprintf(stderr, "cannot open the ledger or bind %s\n", bind.c_str());
    return 1;
  }
  spdlog::set_level(spdlog::level::warn);
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  std::shared_ptr<storage::kv_store> store(std::move(*kv));
  hub::hub_options ho;
  ho.bind = bind;
  ho.ledger_dir = dir + "/ledger";  // the job log goes beside the RocksDB files
  std::vector<caf::actor> actors{node::spawn_hub(sys, ho, store, std::shared_ptr<bus::transport>(std::move(*hub_t)))};
  bus::peer_options rp;
  rp.name = "referee";
  auto ref = referee::start_referee(sys, referee::referee_options{}, store, rp, bind);
  if (!ref) {
    std::fprintf(stderr, "referee: %s\n", ref.error().text().c_str());
    return 1;
  }
  actors.push_back(ref->referee);
  actors.push_back(ref->worker);
  for (std::size_t i = 0; i < evaluators; ++i) {
    bus::peer_options ep;
    ep.name = "instant-" + std::to_string(i);
    ep.role = msg::Role::Evaluator;
    ep.job_kinds = {"measure"};
    ep.slots = 64;
    auto t = bus::connect_peer_transport(bind, ep.name);
    if (!t) return 1;
    actors.push_back(node::spawn_worker(sys, ep, std::make_shared<instant_evaluator>(ep.name),
                                        std::shared_ptr<bus::transport>(std::move(*t))));
  }

  std::vector<node::job_spec> measure, settle;
  for (std::size_t i = 0; i < candidates; ++i) {
    std::string task = "task-" + std::to_string(i % 50), code = "class ModelNew: pass  # " + std::to_string(i);
    measure.push_back({"measure/direct-" + std::to_string(i), "measure",
                       referee::candidate_envelope("direct-" + std::to_string(i), task, code, "bench")});
    std::string id = "c-" + std::to_string(i);
    settle.push_back({"settle/" + id, "settle", referee::candidate_envelope(id, task, code, "bench")});
  }
  auto client_t = bus::connect_peer_transport(bind, "bench-client");
  if (!client_t) return 1;
  bus::peer_options cp;
  cp.name = "bench-client";
  node::job_run_options run;
  run.in_flight = in_flight;
  run.timeout = std::chrono::duration<double>(600);
  auto direct = node::run_jobs(**client_t, cp, measure, run);
  auto refereed = node::run_jobs(**client_t, cp, settle, run);

  std::printf("| path | candidates | done | s | per s | p50 ms | p99 ms |\n|---|---|---|---|---|---|---|\n");
  for (auto [name, r] : {std::pair{"measure jobs, no referee", &direct}, std::pair{"settle jobs via the referee", &refereed}})
    std::printf("| %s | %zu | %llu | %.2f | %.0f | %.2f | %.2f |\n", name, candidates,
                static_cast<unsigned long long>(r->completed), r->elapsed_s, r->jobs_per_s, r->p50_us / 1000,
                r->p99_us / 1000);
  std::printf("\nsettlements per second / measure jobs per second: %.2f (evaluators %zu, in flight %zu)\n",
              direct.jobs_per_s > 0 ? refereed.jobs_per_s / direct.jobs_per_s : 0, evaluators, in_flight);
  caf::scoped_actor self{sys};
  for (auto& a : actors) self->send_exit(a, caf::exit_reason::user_shutdown);
  return direct.missing == 0 && refereed.missing == 0 ? 0 : 1;
}
