// Stage 1 from the evaluator's results (tools/quickstart/make_seed_corpus.py
// --verified), on files the test makes: kernels settled ok become examples
// with the rollout's own prompt, every other row is skipped and counted.
// Needs the crucible binary (the prompts are rendered by `crucible rollout
// --print-prompt`); skips when it is not built.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/rollout/extract.hpp"
#include "actors/rollout/prompt.hpp"

using namespace crucible;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
const std::string root = CRUCIBLE_SOURCE_DIR;

std::string task_file(const std::string& doc, const std::string& body) {
  return "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    \"\"\"" + doc +
         "\"\"\"\n    def forward(self, x):\n        return " + body +
         "\n\ndef get_inputs():\n    return [torch.randn(16, 16)]\n\ndef get_init_inputs():\n    return []\n";
}

std::string run_command(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    CHECK_MESSAGE(pclose(p) == 0, out);
  }
  return out;
}
}  // namespace

TEST_CASE("the verified stage-1 set holds the kernels settled ok, each after the rollout's prompt with and without its task's other verified kernels, and counts what it skipped") {
  const std::string crucible = std::string(CRUCIBLE_BINARY_DIR) + "/bin/crucible";
  if (!fs::exists(crucible)) {
    MESSAGE("no " << crucible << ": the prompts need it; skipped");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("verified-corpus-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "kb/level1");
  fs::create_directories(dir / "kb/level3");
  fs::create_directories(dir / "cl1");
  const std::string relu = task_file("Applies ReLU.", "torch.relu(x)");
  const std::string softmax = task_file("Applies softmax.", "torch.softmax(x, dim=1)");
  std::ofstream(dir / "kb/level1/19_ReLU.py") << relu;
  std::ofstream(dir / "kb/level1/23_Softmax.py") << softmax;
  std::ofstream(dir / "kb/level3/1_MLP.py") << task_file("An MLP.", "x");
  const std::string k19 = "import torch\nclass ModelNew(torch.nn.Module):\n    \"\"\"Clamp in place.\"\"\"\n"
                          "    def forward(self, x):\n        return x.clamp_min(0)\n";
  auto release_row = [](int task, const std::string& ref, const std::string& code, double claimed) {
    return json{{"level_id", 1}, {"task_id", task}, {"ref_code", ref}, {"custom_code", code}, {"score_default", claimed}}
               .dump() +
           "\n";
  };
  std::ofstream(dir / "cl1/a100.json") << release_row(19, relu, k19, 9.0)
                                       << release_row(23, "an older softmax", "class ModelNew: pass\n", 3.0)
                                       << release_row(5, relu, "never ok", 2.0);
  auto result = [](const std::string& job, const std::string& status, double reward) {
    return json{{"job", job}, {"status", status}, {"reward", reward}}.dump() + "\n";
  };
  std::ofstream(dir / "first.jsonl") << result("a100/L1-19", "hack", 0) << result("a100/L1-5", "incorrect", 0)
                                     << result("identity/L1-19", "ok", 1.0) << result("identity/L3-1", "ok", 1.0);
  // The later file wins for a100/L1-19: a re-measurement settled it ok.
  std::ofstream(dir / "second.jsonl") << result("a100/L1-19", "ok", 1.52) << result("a100/L1-23", "ok", 2.0)
                                      << result("identity/L1-23", "timeout", 0);
  std::ofstream(dir / "rollout.toml") << "[rollout]\ntasks_dir = \"" << (dir / "kb").string()
                                      << "\"\nplatform = \"CUDA\"\nprompt_template = \"" << root
                                      << "/configs/prompts/compact.md\"\n";

  const std::string out = run_command(
      "/usr/bin/python3 " + root + "/tools/quickstart/make_seed_corpus.py --crucible " + crucible + " --config " +
      (dir / "rollout.toml").string() + " --verified " + (dir / "first.jsonl").string() + " --verified " +
      (dir / "second.jsonl").string() + " --cuda-l1 " + (dir / "cl1").string() + " --kernelbench " +
      (dir / "kb").string() + " --levels 1,2 --jobs 2 --out " + (dir / "sft.jsonl").string());
  const auto summary = json::parse(out.substr(out.find("summary ") + 8));
  CHECK(summary["results_rows"] == 6);
  CHECK(summary["kept"] == 2);  // a100/L1-19 (as re-measured) and identity/L1-19
  CHECK(summary["tasks"] == 1);
  CHECK(summary["skipped"] == json{{"CUDA-L1's reference differs from KernelBench's", 1},
                                   {"other level", 1},
                                   {"status incorrect", 1},
                                   {"status timeout", 1}});
  CHECK(out.find("4 results rows skipped") != std::string::npos);

  auto tpl = rollout::prompt_template::load(root + "/configs/prompts/compact.md");
  REQUIRE(tpl.ok());
  const std::map<std::string, std::pair<std::string, double>> kernels = {
      {"a100/L1-19", {k19, 1.52}}, {"identity/L1-19", {relu + "\n\nModelNew = Model\n", 1.0}}};
  std::ifstream in(dir / "sft.jsonl");
  std::string line;
  std::map<std::string, std::set<std::string>> kernels_after_prompt;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = json::parse(line);
    const std::string job = j["variant"];
    CAPTURE(job);
    REQUIRE(kernels.count(job) == 1);
    CHECK(j["task"] == "level1/19_ReLU");
    CHECK(j["reward"] == kernels.at(job).second);
    auto code = rollout::extract_code(j["completion"].get<std::string>());
    REQUIRE(code.code);
    CHECK(*code.code == kernels.at(job).first);
    std::vector<rollout::prompt_exemplar> shown;
    for (const auto& x : j["exemplars"]) {
      CHECK(x["score"] == kernels.at(x["variant"]).second);  // the settled reward, never CUDA-L1's claim
      shown.push_back({kernels.at(x["variant"]).first, x["score"].get<double>(), 0});
    }
    CHECK(j["prompt"] == tpl->render({"level1/19_ReLU", rollout::task_description(relu), relu, "CUDA", std::move(shown)}));
    kernels_after_prompt[j["prompt"]].insert(job);
    ++n;
  }
  // No previous codes, each kernel alone, both: 4 prompts, each followed by both kernels.
  CHECK(n == 8);
  CHECK(summary["examples"] == 8);
  CHECK(kernels_after_prompt.size() == 4);
  for (const auto& [prompt, after] : kernels_after_prompt) CHECK(after.size() == 2);
  fs::remove_all(dir);
}
