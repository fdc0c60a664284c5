#include "actors/learner/learner_role.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>

#include "actors/learner/learner_actor.hpp"
#include "actors/learner/learner_config.hpp"
#include "actors/learner/learner_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/ask.hpp"
#include "runtime/node/client_actor.hpp"
#include "runtime/roles/serve.hpp"

namespace crucible::learner {

namespace {

using messages::envelope_writer;
using done_fn = node::job_handler::done_fn;

// Numbers in a text payload ("3", "3 0").
std::vector<std::uint64_t> numbers_of(const bus::bytes& payload) {
  std::vector<std::uint64_t> out;
  const char* p = reinterpret_cast<const char*>(payload.data());
  const char* end = p + payload.size();
  while (p < end) {
    while (p < end && *p == ' ') ++p;
    std::uint64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;
    out.push_back(v);
    p = next;
  }
  return out;
}

bus::bytes text_bytes(const std::string& s) { return bus::bytes(s.begin(), s.end()); }

// Jobs -> the learner actor -> job results.
class learner_handler final : public node::job_handler {
 public:
  learner_handler(caf::actor_system& sys, learner_actor actor, std::string name)
      : sys_(sys), actor_(std::move(actor)), name_(std::move(name)) {}

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    auto fail = [done](const caf::error& e) { done(msg::JobStatus::Failed, {}, caf::to_string(e)); };
    if (job.kind == "learner.group") {
      auto env = messages::open(job.payload);
      if (!env) return done(msg::JobStatus::Failed, {}, "learner.group payload: " + env.error().message);
      const auto* wire = (*env)->payload_as_RolloutGroup();
      if (!wire) return done(msg::JobStatus::Failed, {}, "learner.group needs a RolloutGroup");
      auto group = group_from(*wire);
      if (!group) return done(msg::JobStatus::Failed, {}, group.error().text());
      node::ask<learner_reply>(
          sys_, actor_,
          [done](learner_reply& r) {
            if (!r.ok) return done(msg::JobStatus::Failed, {}, r.text);
            done(msg::JobStatus::Ok, text_bytes(r.text), {});
          },
          fail, group_atom::value, std::move(*group));
      return;
    }
    const auto numbers = numbers_of(job.payload);
    if (job.kind == "learner.start") {
      auto start = start_from(std::string_view(reinterpret_cast<const char*>(job.payload.data()), job.payload.size()));
      if (!start) return done(msg::JobStatus::Failed, {}, start.error().text());
      node::ask<bool>(
          sys_, actor_, [done](bool go) { done(msg::JobStatus::Ok, text_bytes(go ? "go" : "wait"), {}); }, fail,
          start_atom::value, start->rollout, start->number, start->version);
      return;
    }
    if (job.kind == "learner.latest") {
      node::ask<publication>(
          sys_, actor_,
          [done, name = name_](publication& p) {
            envelope_writer w;
            done(msg::JobStatus::Ok, w.finish(build_publication(w.fbb(), p), name, std::to_string(p.version)), {});
          },
          fail, latest_atom::value);
      return;
    }
    if (job.kind == "learner.chunk") {
      if (numbers.size() != 2) return done(msg::JobStatus::Failed, {}, "learner.chunk needs \"VERSION INDEX\"");
      const auto version = numbers[0];
      const auto index = static_cast<std::uint32_t>(numbers[1]);
      node::ask<learner_reply>(
          sys_, actor_,
          [done, name = name_, version, index](learner_reply& r) {
            if (!r.ok) return done(msg::JobStatus::Failed, {}, r.text);
            envelope_writer w(r.data.size() + 256);
            done(msg::JobStatus::Ok, w.finish(build_chunk(w.fbb(), version, index, r.data), name), {});
          },
          fail, chunk_atom::value, version, index);
      return;
    }
    done(msg::JobStatus::Failed, {}, "the learner does not serve jobs of kind '" + job.kind + "'");
  }

 private:
  caf::actor_system& sys_;
  learner_actor actor_;
  std::string name_;
};

// Announces each published version to subscribers (rollouts) as a
// PolicyPublication event followed, in chunk mode, by its PolicyChunk events.
publish_hook announce_on(node::hub_client client, std::string name, std::uint64_t chunk_bytes) {
  return [client, name, chunk_bytes](const publication& p, std::span<const std::uint8_t> weights) {
    envelope_writer w;
    client.publish("PolicyPublication", w.finish(build_publication(w.fbb(), p), name, std::to_string(p.version)));
    if (weights.empty()) return;
    for (std::uint32_t i = 0; i < p.chunks; ++i) {
      auto part = chunk_of(weights, i, chunk_bytes);
      envelope_writer c(part.size() + 256);
      client.publish("PolicyChunk", c.finish(build_chunk(c.fbb(), p.version, i, part), name));
    }
  };
}

struct learner_args {
  roles::role_args common;
  std::string policy, device;
  std::uint64_t epochs = 1;
};

}  // namespace

result<roles::service> spawn_learner_service(caf::actor_system& sys, const learner_options& options,
                                             const std::string& connect, bus::peer_options peer,
                                             const std::string& name, metrics::registry_ptr metrics) {
  peer.name = name + "-events";
  peer.node = logging::host_name();
  peer.role = msg::Role::Learner;
  auto transport = bus::connect_peer_transport(connect, peer.name, {.keys = peer.keys});
  if (!transport) return transport.error();
  node::client_actor_options co;
  co.peer = peer;
  auto client = node::spawn_client(sys, co, std::shared_ptr<bus::transport>(std::move(*transport)));
  auto actor =
      spawn_learner_actor(sys, options, announce_on(client, name, options.publish_chunk_bytes), std::move(metrics));
  if (!actor) {
    caf::anon_send_exit(client.actor(), caf::exit_reason::user_shutdown);
    return actor.error();
  }
  return roles::service{std::make_shared<learner_handler>(sys, *actor, name),
                        {"learner.group", "learner.start", "learner.latest", "learner.chunk"},
                        caf::actor_cast<caf::actor>(*actor),
                        fmt::format("learner ({}, {} groups per batch, max_staleness {}) on {}",
                                    to_string(options.objective), options.groups_per_batch, options.max_staleness,
                                    options.device),
                        {client.actor()}};
}

cli::command add_learner_role(CLI::App& app) {
  auto a = std::make_shared<learner_args>();
  auto* cmd = app.add_subcommand("learner", "Run the learner: GRPO or success-only REINFORCE on rollout groups from "
                                            "the bus (learner.group jobs), publishing each version; or SFT on a "
                                            "JSON Lines file ([learner] objective = \"sft\")");
  cmd->add_option("--policy", a->policy, "Hugging Face folder of the initial policy ([learner] policy)");
  cmd->add_option("--device", a->device, "cpu, cuda, cuda:N ([learner] device)");
  cmd->add_option("--epochs", a->epochs, "SFT: passes over sft_data (1)");
  roles::add_role_options(*cmd, a->common, "learner");
  return {cmd, [a] {
            auto file = cli::load_config(a->common.config);
            if (!file) return 2;
            learner_options options;
            if (auto s = config::read(file->get("learner"), options); !s) return cli::fail(s.error());
            if (!a->policy.empty()) options.policy = a->policy;
            if (!a->device.empty()) options.device = a->device;
            if (options.objective == stage::sft) {
              if (auto p = run_sft(options, a->epochs); !p) return cli::fail(p.error());
              return 0;
            }
            const auto slots = static_cast<std::uint32_t>(options.groups_per_batch + 4);
            // The events go out through a client connection of their own.
            bus::peer_options peer;
            std::string connect = "tcp://127.0.0.1:5555";
            if (auto s = config::read(file->get("bus"), peer, connect); !s) return cli::fail(s.error());
            if (!a->common.connect.empty()) connect = a->common.connect;
            if (!a->common.keys.empty()) peer.keys = a->common.keys;
            return roles::serve("learner", msg::Role::Learner, slots, a->common,
                                [options, connect, peer](caf::actor_system& sys, const std::string& name,
                                                         const metrics::registry_ptr& metrics) {
                                  return spawn_learner_service(sys, options, connect, peer, name, metrics);
                                });
          }};
}

}  // namespace crucible::learner
