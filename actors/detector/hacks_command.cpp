#include "actors/detector/hacks_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/detector/static_detector.hpp"
#include "storage/hack_db.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::detector {
namespace {

using json = nlohmann::json;

struct hacks_args {
  std::string db = "hub-ledger";
  std::string id, code_file, task, reason;
  std::string rules = "configs/detectors/static.toml";
  std::vector<std::string> features;
  std::size_t k = 3;
  bool as_json = false;
};

// What a subcommand throws on bad input; turned into CLI::RuntimeError.
struct hacks_failure {
  std::string message;
};

template <class T>
T value_or_throw(result<T> r, const std::string& context) {
  if (!r.ok()) throw hacks_failure{context + ": " + r.error().message};
  return std::move(r).value();
}

storage::hack_db open_db(const hacks_args& a, bool writable) {
  if (!writable && !std::filesystem::is_directory(a.db)) throw hacks_failure{a.db + ": no database there"};
  storage::rocksdb_options o;
  o.read_only = !writable;
  o.create_if_missing = writable;
  return storage::hack_db(std::shared_ptr<storage::kv_store>(value_or_throw(storage::open_rocksdb(a.db, o), a.db)));
}

json to_json(const storage::hack_record& h, bool with_code) {
  json j{{"candidate_id", h.candidate_id}, {"task_id", h.task_id},   {"reason", h.reason},
         {"detector", h.detector},         {"features", h.features}, {"recorded_ns", h.recorded_ns}};
  if (with_code) j["code"] = h.code;
  return j;
}

void run_list(const hacks_args& a, std::ostream& out) {
  auto db = open_db(a, false);
  auto all = value_or_throw(db.list(), a.db);
  if (a.as_json) {
    json rows = json::array();
    for (const auto& h : all) rows.push_back(to_json(h, false));
    out << rows.dump(2) << "\n";
    return;
  }
  out << fmt::format("{} hacks in {}\n", all.size(), a.db);
  for (const auto& h : all)
    out << fmt::format("{}  task {}  by {}  [{}]  {}\n", h.candidate_id, h.task_id, h.detector, fmt::join(h.features, ","),
                       h.reason);
}

void run_show(const hacks_args& a, std::ostream& out) {
  auto db = open_db(a, false);
  auto h = value_or_throw(db.get(a.id), a.db);
  if (!h) throw hacks_failure{fmt::format("{}: no hack recorded under '{}'", a.db, a.id)};
  if (a.as_json) {
    out << to_json(*h, true).dump(2) << "\n";
    return;
  }
  out << fmt::format("candidate {}\ntask      {}\ndetector  {}\nfeatures  {}\nreason    {}\nrecorded  {} ns\n\n{}\n",
                     h->candidate_id, h->task_id, h->detector, fmt::join(h->features, ", "), h->reason, h->recorded_ns,
                     h->code);
}

std::string read_code(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw hacks_failure{file + ": cannot open the code file"};
  std::stringstream code;
  code << in.rdbuf();
  if (code.str().empty()) throw hacks_failure{file + ": the code file is empty"};
  return code.str();
}

// The known hacks the judge would put in its prompt for this code.
void run_similar(const hacks_args& a, std::ostream& out) {
  auto code = read_code(a.code_file);
  auto db = open_db(a, false);
  auto near = value_or_throw(db.similar(code, a.k), a.db);
  if (a.as_json) {
    json rows = json::array();
    for (const auto& n : near) {
      json row = to_json(n.hack, false);
      row["similarity"] = n.similarity;
      rows.push_back(row);
    }
    out << rows.dump(2) << "\n";
    return;
  }
  for (const auto& n : near)
    out << fmt::format("{:.3f}  {}  task {}  {}\n", n.similarity, n.hack.candidate_id, n.hack.task_id, n.hack.reason);
}

void run_add(const hacks_args& a, std::ostream& out) {
  storage::hack_record r;
  r.code = read_code(a.code_file);
  r.task_id = a.task;
  r.reason = a.reason;
  r.detector = "cli";
  r.features = a.features;
  if (std::filesystem::exists(a.rules)) {
    auto rules = value_or_throw(load_rules(a.rules), a.rules);
    auto detector = value_or_throw(static_detector::create(std::move(rules), a.rules), a.rules);
    for (const auto& m : detector->matches(r.code)) r.features.push_back(m.matched->name);
  }
  // Without --id: a stable id from task and code, so adding a file twice changes nothing.
  r.candidate_id = a.id.empty() ? fmt::format("h{:016x}", std::hash<std::string>{}(a.task + '\0' + r.code)) : a.id;
  auto db = open_db(a, true);
  auto outcome = value_or_throw(db.add(r), a.db);
  if (a.as_json) {
    out << json{{"candidate_id", r.candidate_id}, {"outcome", storage::to_string(outcome)}, {"features", r.features}}.dump()
        << "\n";
    return;
  }
  out << fmt::format("{} {} (task {}, features [{}])\n", storage::to_string(outcome), r.candidate_id, r.task_id,
                     fmt::join(r.features, ","));
}

}  // namespace

void add_hacks_command(CLI::App& app) { add_hacks_command(app, std::cout, std::cerr); }

void add_hacks_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto a = std::make_shared<hacks_args>();
  auto* root = app.add_subcommand("hacks", "the hack database: list, show, add, similar");
  root->require_subcommand(1);
  auto wrap = [a, o = &out, e = &err](void (*body)(const hacks_args&, std::ostream&)) {
    return [a, o, e, body] {
      try {
        body(*a, *o);
      } catch (const hacks_failure& f) {
        *e << "crucible hacks: " << f.message << "\n" << std::flush;
        throw CLI::RuntimeError("crucible hacks: " + f.message, 1);
      }
    };
  };
  auto common = [a](CLI::App* cmd) {
    cmd->add_option("--db", a->db, "database directory (RocksDB)")->capture_default_str();
    cmd->add_flag("--json", a->as_json, "print JSON");
  };
  auto* list = root->add_subcommand("list", "every recorded hack, without its code");
  common(list);
  list->callback(wrap(run_list));
  auto* show = root->add_subcommand("show", "one hack with its code");
  show->add_option("id", a->id, "candidate id")->required();
  common(show);
  show->callback(wrap(run_show));
  auto* similar = root->add_subcommand("similar", "the known hacks most similar to a code file (what the judge is shown)");
  similar->add_option("--code", a->code_file, "file holding the code")->required();
  similar->add_option("-k", a->k, "how many")->capture_default_str();
  common(similar);
  similar->callback(wrap(run_similar));
  auto* add = root->add_subcommand("add", "record a hack from a code file");
  add->add_option("--code", a->code_file, "file holding the code")->required();
  add->add_option("--task", a->task, "task id")->required();
  add->add_option("--reason", a->reason, "why it is a hack")->required();
  add->add_option("--id", a->id, "candidate id (default: derived from task and code)");
  add->add_option("--feature", a->features, "a feature to record (repeatable)");
  add->add_option("--rules", a->rules, "static rules whose matches become features")->capture_default_str();
  common(add);
  add->callback(wrap(run_add));
}

}  // namespace crucible::detector
