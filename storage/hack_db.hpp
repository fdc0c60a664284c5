// The hack database: every confirmed reward hack with its code, the reason
// and the detector that caught it, and the features (rule names, defences)
// that fired. Kept in the kv_store family "hacks" under the candidate id.
//
// Who calls it: the referee (add, when a policy settles a candidate as hack),
// the judge detector (similar: the 3 nearest known hacks go into its prompt),
// the `crucible hacks` command (list, show, add). Thread-safe: the kv_store
// is, and the token cache is guarded by mu_. Several hack_db objects may share
// one kv_store. Errors: errc::invalid_argument (empty candidate id or one
// with a NUL byte), errc::io and errc::corrupt from storage, with the store's
// description in the message.
//
// Similarity is computed locally, with no embedding service: TF-IDF cosine
// over the code's tokens and token bigrams (see code_tokens), so that two
// hacks that share the unusual calls (torch.cuda.Stream, data_ptr,
// __torch_function__) rank close whatever their variable names.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::storage {

// One confirmed hack.
struct hack_record {
  std::string candidate_id;           // the key; non-empty, no NUL byte
  std::string task_id;
  std::string code;                   // the candidate's source
  std::string reason;                 // why it is a hack, for people and prompts
  std::string detector;               // who said so: a detector name, "referee", "cli"
  std::vector<std::string> features;  // rule names or defences that fired
  std::int64_t recorded_ns = 0;       // wall clock; 0 on add means "now"
};

// A known hack and its similarity to the code asked about, in [0, 1].
struct similar_hack {
  hack_record hack;
  double similarity = 0;
};

enum class hack_add_outcome : std::uint8_t {
  added,
  duplicate,  // the candidate id was already recorded: nothing changed
};
const char* to_string(hack_add_outcome o);

class hack_db {
 public:
  explicit hack_db(std::shared_ptr<kv_store> kv);

  // Records a hack, durable (write-ahead log) when it returns. Idempotent by
  // candidate id: a second add of a recorded id is duplicate and changes
  // nothing, whatever its other fields.
  result<hack_add_outcome> add(hack_record record);

  // The hack recorded under candidate_id, or nullopt.
  result<std::optional<hack_record>> get(std::string_view candidate_id);

  // Every recorded hack, in candidate id order.
  result<std::vector<hack_record>> list();

  // The k recorded hacks most similar to code, most similar first (ties by
  // candidate id); hacks with similarity 0 are left out, so fewer than k may
  // come back.
  result<std::vector<similar_hack>> similar(std::string_view code, std::size_t k);

  // "hacks(rocksdb:/run/db)".
  std::string describe() const;

 private:
  std::shared_ptr<kv_store> kv_;
  std::mutex mu_;
  // Term counts of each recorded hack's code, by candidate id. GUARDED_BY(mu_).
  std::map<std::string, std::map<std::string, double>, std::less<>> terms_;
};

// The terms similarity is computed over: identifiers with their dotted
// qualifiers (torch.cuda.Stream), numbers, string literals' words and
// punctuation runs, lower-cased, plus each adjacent pair joined by a space.
// Comments are dropped. Used by hack_db::similar and its tests.
std::vector<std::string> code_tokens(std::string_view code);

// Encoding of a record in the hacks family (JSON; for the store and its tests).
std::string encode_hack(const hack_record& r);
result<hack_record> decode_hack(std::string_view bytes);

}  // namespace crucible::storage
