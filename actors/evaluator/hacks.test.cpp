// The hack catalogue (tests/hacks/manifest.txt) through the real evaluator on
// CPU: every known hack, a real candidate file, must settle at reward 0 with
// the status the manifest names and the defence that caught it named in
// defences_fired; its legitimate near misses must settle ok with none fired.
// CUDA-only cases run on a GPU (tools/gpu/hacks_gpu.sh).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/evaluate.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible::evaluator;

namespace {

const std::filesystem::path root = CRUCIBLE_SOURCE_DIR;

struct hack_case {
  std::string candidate, task, status;
  std::vector<std::string> defences;  // any one of them must be named
  int line = 0;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::vector<hack_case> read_manifest() {
  std::ifstream in(root / "tests/hacks/manifest.txt");
  REQUIRE_MESSAGE(in.good(), "cannot read tests/hacks/manifest.txt");
  std::vector<hack_case> out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    hack_case c;
    std::string defences;
    fields >> c.candidate >> c.task >> c.status >> defences;
    REQUIRE_MESSAGE(!defences.empty(), "manifest line " << n << " has fewer than 4 fields");
    c.defences = split(defences, '|');
    c.line = n;
    out.push_back(c);
  }
  return out;
}

// The quick protocol, with the void bound off (a verdict is wanted, not a
// steady measurement) and a short window: every case is decided while
// loading, checking correctness or in the first timing requests.
protocol_options catalogue_protocol() {
  auto p = protocol_by_name("quick").value();
  p.void_variance = 1e9;
  p.window_s = 3;
  return p;
}

}  // namespace

TEST_CASE("every CPU case of the hack catalogue settles at reward 0 with the defence that caught it named") {
  const auto cases = read_manifest();
  evaluator ev;
  int run = 0;
  for (const auto& c : cases) {
    if (c.candidate.rfind("tests/hacks/cpu/", 0) != 0) continue;
    auto req = load_request(root / c.task, root / c.candidate, "cpu", 11);
    REQUIRE_MESSAGE(req.ok(), crucible::error_text(req));
    auto r = ev.evaluate(*req, catalogue_protocol());
    REQUIRE_MESSAGE(r.ok(), c.candidate << ": " << crucible::error_text(r));
    const evaluation& e = r.value();
    ++run;
    const bool named = std::any_of(c.defences.begin(), c.defences.end(), [&](const std::string& d) {
      return std::find(e.defences_fired.begin(), e.defences_fired.end(), d) != e.defences_fired.end();
    });
    CHECK_MESSAGE(std::string(to_string(e.status)) == c.status,
                  c.candidate << " settled " << to_string(e.status) << ", expected " << c.status << ": " << e.reason);
    CHECK_MESSAGE(named, c.candidate << " fired [" << joined(e.defences_fired) << "], expected one of ["
                                     << joined(c.defences) << "]: " << e.reason);
    CHECK_MESSAGE(e.reward == 0.0, c.candidate << " earned reward " << e.reward);
  }
  CHECK(run >= 30);
}

TEST_CASE("legitimate near misses of the catalogue settle ok with no defence fired") {
  evaluator ev;
  int run = 0;
  for (const auto& c : read_manifest()) {
    if (c.candidate.rfind("tests/hacks/legit/", 0) != 0) continue;
    REQUIRE_MESSAGE(c.status == "ok", "manifest line " << c.line << ": a near miss must expect ok");
    auto req = load_request(root / c.task, root / c.candidate, "cpu", 11);
    REQUIRE_MESSAGE(req.ok(), crucible::error_text(req));
    auto r = ev.evaluate(*req, catalogue_protocol());
    REQUIRE_MESSAGE(r.ok(), c.candidate << ": " << crucible::error_text(r));
    ++run;
    CHECK_MESSAGE(r->status == eval_status::ok, c.candidate << " settled " << to_string(r->status) << ": "
                                                            << r->reason);
    CHECK_MESSAGE(r->defences_fired.empty(), c.candidate << " fired " << joined(r->defences_fired));
  }
  CHECK(run >= 4);
}

TEST_CASE("every candidate file in the hack catalogue has a line in its manifest") {
  std::set<std::string> listed;
  for (const auto& c : read_manifest()) listed.insert(c.candidate);
  for (const char* dir : {"tests/hacks/cpu", "tests/hacks/cuda", "tests/hacks/legit"})
    for (auto& f : std::filesystem::directory_iterator(root / dir))
      if (f.path().extension() == ".py")
        CHECK_MESSAGE(listed.count(std::filesystem::relative(f.path(), root).string()) == 1,
                      f.path() << " is not in tests/hacks/manifest.txt");
}

// The defences' units (worker/defences/, `python3 -m defences`): every
// defence the manifest names has a unit or a named place elsewhere, every
// unit lists catalogue cases, and each case a unit lists is in the manifest,
// caught by that unit or settled without a hack (what it allows or cannot
// catch). Who reads a rule finds its rationale and its cases in one place.
TEST_CASE("every defence the catalogue names has its unit or its place, and every unit's cases are in the catalogue") {
  const auto env = worker_environment::defaults();
  const auto dir = env.worker_script.parent_path();
  const std::string command = "cd '" + dir.string() + "' && '" + env.python.string() + "' -m defences";
  std::string text;
  {
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
    REQUIRE_MESSAGE(::pclose(pipe) == 0, command << " failed: " << text);
  }
  const auto units = nlohmann::json::parse(text);
  std::map<std::string, hack_case> cases;
  for (const auto& c : read_manifest()) cases[c.candidate] = c;
  for (const auto& [file, c] : cases)
    for (const auto& d : c.defences)
      if (d != "-") CHECK_MESSAGE(units.contains(d), "manifest line " << c.line << " names " << d << ", which no unit reports");
  std::map<std::string, std::set<std::string>> names_of_unit;
  for (const auto& [name, u] : units.items())
    if (!u["unit"].is_null()) names_of_unit[u["unit"].get<std::string>()].insert(name);
    else CHECK_MESSAGE(!u["where"].get<std::string>().empty(), name << " has neither a unit nor a place");
  CHECK(names_of_unit.size() >= 13);
  for (const auto& [unit, names] : names_of_unit) {
    CAPTURE(unit);
    CHECK(std::filesystem::exists(root / unit));
    const auto& listed = units[*names.begin()]["cases"];
    CHECK_MESSAGE(!listed.empty(), unit << " lists no catalogue case");
    for (const auto& f : listed) {
      const auto it = cases.find(f.get<std::string>());
      REQUIRE_MESSAGE(it != cases.end(), unit << " lists " << f << ", which is not in the manifest");
      const auto& c = it->second;
      const bool caught = std::any_of(c.defences.begin(), c.defences.end(), [&](auto& d) { return names.count(d); });
      CHECK_MESSAGE((caught || c.status != "hack"), unit << " lists " << f << ", which another defence settles hack");
    }
  }
}
