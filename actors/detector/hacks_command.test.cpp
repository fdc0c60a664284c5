// `crucible hacks add|list|show` on a real RocksDB directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/detector/hacks_command.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using json = nlohmann::json;

namespace {

struct outcome {
  std::string out, err;
  bool failed = false;
};

outcome run_hacks(std::vector<std::string> argv) {
  CLI::App app{"crucible"};
  std::ostringstream out, err;
  detector::add_hacks_command(app, out, err);
  std::reverse(argv.begin(), argv.end());  // CLI11 parses a reversed vector
  outcome o;
  try {
    app.parse(argv);
  } catch (const CLI::RuntimeError&) {
    o.failed = true;
  }
  o.out = out.str();
  o.err = err.str();
  return o;
}

}  // namespace

TEST_CASE("a hack added from a file is listed, found similar and shown with its code and the static rules it matches, once") {
  storage::temp_dir dir("hacks-cli");
  std::string db = dir.sub("db"), code = dir.sub("stream.py");
  std::string rules = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/detectors/static.toml";
  std::ofstream(code) << "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = x @ w\n";

  auto added = run_hacks({"hacks", "add", "--code", code, "--task", "level1/mm", "--reason", "side stream", "--id",
                          "cand-1", "--feature", "by-hand", "--rules", rules, "--db", db, "--json"});
  REQUIRE_MESSAGE(!added.failed, added.err);
  auto a = json::parse(added.out);
  CHECK(a["outcome"] == "added");
  CHECK(a["features"] == json::array({"by-hand", "side_stream"}));
  auto again = run_hacks({"hacks", "add", "--code", code, "--task", "level1/mm", "--reason", "other", "--id", "cand-1",
                          "--db", db, "--json"});
  CHECK(json::parse(again.out)["outcome"] == "duplicate");

  auto listed = run_hacks({"hacks", "list", "--db", db, "--json"});
  REQUIRE_MESSAGE(!listed.failed, listed.err);
  auto l = json::parse(listed.out);
  REQUIRE(l.size() == 1);
  CHECK(l[0]["candidate_id"] == "cand-1");
  CHECK(l[0]["reason"] == "side stream");
  CHECK(l[0]["detector"] == "cli");

  std::string other = dir.sub("net.py"), query = dir.sub("query.py");
  std::ofstream(other) << "import socket\nsocket.socket().connect(('h', 1))\n";
  std::ofstream(query) << "side = torch.cuda.Stream()\nwith torch.cuda.stream(side):\n    out = a @ b\n";
  REQUIRE_FALSE(run_hacks({"hacks", "add", "--code", other, "--task", "t", "--reason", "net", "--id", "cand-2", "--db", db}).failed);
  auto near = run_hacks({"hacks", "similar", "--code", query, "-k", "1", "--db", db, "--json"});
  REQUIRE_MESSAGE(!near.failed, near.err);
  auto n = json::parse(near.out);
  REQUIRE(n.size() == 1);
  CHECK(n[0]["candidate_id"] == "cand-1");
  CHECK(n[0]["similarity"].get<double>() > 0);

  auto shown = run_hacks({"hacks", "show", "cand-1", "--db", db});
  REQUIRE_MESSAGE(!shown.failed, shown.err);
  CHECK(shown.out.find("torch.cuda.Stream()") != std::string::npos);
  CHECK(shown.out.find("level1/mm") != std::string::npos);
}

TEST_CASE("showing an unknown id or listing a database that is not there fails, naming it") {
  storage::temp_dir dir("hacks-cli-errors");
  auto missing_db = run_hacks({"hacks", "list", "--db", dir.sub("nothing")});
  CHECK(missing_db.failed);
  CHECK(missing_db.err.find(dir.sub("nothing")) != std::string::npos);

  std::string code = dir.sub("c.py");
  std::ofstream(code) << "import socket\n";
  REQUIRE_FALSE(run_hacks({"hacks", "add", "--code", code, "--task", "t", "--reason", "net", "--db", dir.sub("db")}).failed);
  auto unknown = run_hacks({"hacks", "show", "nope", "--db", dir.sub("db")});
  CHECK(unknown.failed);
  CHECK(unknown.err.find("'nope'") != std::string::npos);
  auto no_file = run_hacks({"hacks", "add", "--code", dir.sub("absent.py"), "--task", "t", "--reason", "r", "--db", dir.sub("db")});
  CHECK(no_file.failed);
  CHECK(no_file.err.find("absent.py") != std::string::npos);
}
