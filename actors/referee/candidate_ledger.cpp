#include "actors/referee/candidate_ledger.hpp"

#include <nlohmann/json.hpp>

#include "actors/referee/measurement_reuse.hpp"

namespace crucible::referee {

using json = nlohmann::json;
using storage::family;

const char* to_string(stage s) {
  switch (s) {
    case stage::submitted: return "submitted";
    case stage::compiled: return "compiled";
    case stage::measured: return "measured";
    case stage::verified: return "verified";
    case stage::judged: return "judged";
    case stage::settled: return "settled";
  }
  return "?";
}

namespace {
json bin(const bytes& b) { return json::binary(b); }
bytes unbin(const json& j) { return j.is_binary() ? bytes(j.get_binary().begin(), j.get_binary().end()) : bytes{}; }
std::string key_of(const std::string& id) { return "c/" + id; }
}  // namespace

std::string encode(const candidate_record& r) {
  json detectors = json::array();
  for (auto& d : r.detectors)
    detectors.push_back({{"name", d.name}, {"required", d.required}, {"deadline_ns", d.deadline_ns},
                         {"answered", d.answered}, {"verdict", bin(d.verdict)}});
  json j = {{"id", r.id}, {"task", r.task}, {"at", static_cast<int>(r.at)}, {"submitted_ns", r.submitted_ns},
            {"candidate", bin(r.candidate)}, {"measurement", bin(r.measurement)},
            {"verification", bin(r.verification)}, {"verify_decided", r.verify_decided}, {"verify_needed", r.verify_needed}, {"verify_done", r.verify_done},
            {"verify_since_ns", r.verify_since_ns}, {"verify_submitted_ns", r.verify_submitted_ns},
            {"verified", r.verified}, {"verify_note", r.verify_note}, {"detectors_asked", r.detectors_asked},
            {"detectors", detectors}, {"settlement", bin(r.settlement)}, {"published", r.published},
            {"insert_wanted", r.insert_wanted}, {"inserted", r.inserted}, {"reused_from", r.reused_from}};
  auto cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

result<candidate_record> decode(std::string_view data) {
  try {
    auto j = json::from_cbor(data.begin(), data.end());
    candidate_record r;
    r.id = j.at("id");
    r.task = j.at("task");
    int at = j.at("at");
    if (at < 0 || at > static_cast<int>(stage::settled)) throw std::out_of_range("stage " + std::to_string(at));
    r.at = static_cast<stage>(at);
    r.submitted_ns = j.at("submitted_ns");
    r.candidate = unbin(j.at("candidate"));
    r.measurement = unbin(j.at("measurement"));
    r.verification = unbin(j.at("verification"));
    r.verify_decided = j.at("verify_decided");
    r.verify_needed = j.at("verify_needed");
    r.verify_done = j.at("verify_done");
    r.verify_since_ns = j.at("verify_since_ns");
    r.verify_submitted_ns = j.at("verify_submitted_ns");
    r.verified = j.at("verified");
    r.verify_note = j.at("verify_note");
    r.detectors_asked = j.at("detectors_asked");
    for (auto& d : j.at("detectors"))
      r.detectors.push_back({d.at("name"), d.at("required"), d.at("deadline_ns"), d.at("answered"),
                             unbin(d.at("verdict"))});
    r.settlement = unbin(j.at("settlement"));
    r.published = j.at("published");
    r.insert_wanted = j.at("insert_wanted");
    r.inserted = j.at("inserted");
    r.reused_from = j.value("reused_from", std::string());  // absent in ledgers written before it
    return r;
  } catch (const std::exception& e) {
    return make_error(errc::corrupt, std::string("candidate record does not decode: ") + e.what());
  }
}

status candidate_ledger::put(const candidate_record& r) {
  storage::write_batch b;
  b.put(family::candidates, key_of(r.id), encode(r));
  return kv_->write(b);
}

result<std::optional<candidate_record>> candidate_ledger::get(const std::string& id) {
  auto v = kv_->get(family::candidates, key_of(id));
  if (!v) return v.error();
  if (!*v) return std::optional<candidate_record>{};
  auto r = decode(**v);
  if (!r) return make_error(errc::corrupt, "candidates/" + key_of(id) + ": " + r.error().message);
  return std::optional<candidate_record>(std::move(*r));
}

result<std::vector<candidate_record>> candidate_ledger::records(
    std::string_view id_prefix, const std::function<bool(const candidate_record&)>& keep) {
  std::vector<candidate_record> out;
  std::optional<error> bad;
  auto s = kv_->scan(family::candidates, key_of(std::string(id_prefix)), [&](std::string_view key, std::string_view value) {
    auto r = decode(value);
    if (!r) {
      bad = make_error(errc::corrupt, "candidates/" + std::string(key) + ": " + r.error().message);
      return false;
    }
    if (keep(*r)) out.push_back(std::move(*r));
    return true;
  });
  if (!s) return s.error();
  if (bad) return *bad;
  return out;
}

result<std::vector<candidate_record>> candidate_ledger::unfinished() {
  return records("", [](const candidate_record& r) {
    return !(r.at == stage::settled && r.published && (!r.insert_wanted || r.inserted));
  });
}

result<std::vector<candidate_record>> candidate_ledger::settled(std::string_view id_prefix) {
  return records(id_prefix, [](const candidate_record& r) { return r.at == stage::settled; });
}

result<std::string> candidate_ledger::code_source(const std::string& task_id, std::string_view code) {
  auto v = kv_->get(family::candidates, code_key(task_id, code));
  if (!v) return v.error();
  return *v ? **v : std::string();
}

status candidate_ledger::set_code_source(const std::string& task_id, std::string_view code,
                                         const std::string& candidate_id) {
  storage::write_batch b;
  b.put(family::candidates, code_key(task_id, code), candidate_id);
  return kv_->write(b);
}

result<double> candidate_ledger::best_verified(const std::string& task_id) {
  auto v = kv_->get(family::candidates, "best/" + task_id);
  if (!v) return v.error();
  if (!*v) return 0.0;
  try {
    return std::stod(**v);
  } catch (const std::exception&) {
    return make_error(errc::corrupt, "candidates/best/" + task_id + " is not a number: '" + **v + "'");
  }
}

status candidate_ledger::set_best_verified(const std::string& task_id, double speedup) {
  storage::write_batch b;
  b.put(family::candidates, "best/" + task_id, std::to_string(speedup));
  return kv_->write(b);
}

}  // namespace crucible::referee
