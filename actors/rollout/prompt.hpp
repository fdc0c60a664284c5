// The contrastive prompt of CUDA-L1 (arXiv 2507.14111, Table 3): the task,
// the reference code, previous codes with their scores, the generation
// protocol (## Performance Analysis, ## Algorithm Design, ## Code
// Implementation) and the requirements and restrictions. The wording lives in
// a template file (configs/prompts/contrastive.md is the default, compiled
// in); this renders it. Pure functions, any thread; used by the rollout actor
// and `crucible rollout --print-prompt`.
//
// Template syntax (a small subset of Mustache):
//   {{name}}                 a field of the prompt (prompt_fields)
//   {{#exemplars}}..{{/exemplars}}  repeated once per exemplar, with
//                            {{index}} (1, 2, ...), {{score}} (2 decimals),
//                            {{bucket}} and {{code}}
//   {{^exemplars}}..{{/exemplars}}  only when there is no exemplar
// A line holding only a section tag leaves no blank line behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::rollout {

// One previous code shown to the policy.
struct prompt_exemplar {
  std::string code;
  double score = 0;
  int bucket = 0;
};

// What a prompt says about its task.
struct prompt_fields {
  std::string task_id;           // {{task_id}}, e.g. "cpu/gelu_tanh"
  std::string task_description;  // {{task_description}}: the Model docstring's first line
  std::string reference_code;    // {{reference_code}}: task.py, without its trailing newlines
  std::string platform;          // {{platform}}, e.g. "CUDA" or "CPU"
  std::vector<prompt_exemplar> exemplars;
};

// A parsed template. Parsing checks every tag, so rendering cannot fail.
class prompt_template {
 public:
  // invalid_argument naming `source` and the line for an unknown field, an
  // unclosed or mismatched section, or an exemplar field outside
  // {{#exemplars}}.
  static result<prompt_template> parse(std::string_view text, const std::string& source);
  // The file's template; not_found or io when it cannot be read, else as parse.
  static result<prompt_template> load(const std::filesystem::path& path);
  // configs/prompts/contrastive.md as it was when crucible was built.
  static const prompt_template& builtin();
  // builtin() for an empty path ([rollout] prompt_template's default), else load(path).
  static result<prompt_template> load_or_builtin(const std::string& path);

  std::string render(const prompt_fields& fields) const;
  const std::string& source() const { return source_; }

  // A parsed piece: literal text, a field, or a section with its body.
  struct node {
    enum class kind { text, field, each_exemplar, no_exemplar } type = kind::text;
    std::string value;          // the text, or the field's name
    std::vector<node> children;  // a section's body
  };

 private:
  std::vector<node> nodes_;
  std::string source_;
};

// The description of a KernelBench-style task file: the first line of the
// first docstring of `class Model`, else of the file, else "".
std::string task_description(std::string_view task_code);

}  // namespace crucible::rollout
