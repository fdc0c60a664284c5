// Errors as values at module boundaries. Every module returns result<T> (or
// status) for what can go wrong at run time; exceptions from libraries
// (RocksDB, LibTorch, toml++, the OS) are caught at the adapter and turned into
// an error here. Broken invariants abort instead (see CRUCIBLE_CHECK).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace crucible {

// What kind of thing went wrong; the message says what and where.
enum class errc {
  invalid_argument,  // bad input from a user, a config file or a peer
  not_found,
  io,                // the OS or a library failed on a file or socket
  corrupt,           // stored or received data does not verify
  unavailable,       // a peer or a resource is not there (yet)
  timeout,
  internal,
};

const char* to_string(errc code);

struct error {
  errc code = errc::internal;
  std::string message;

  std::string text() const { return std::string(to_string(code)) + ": " + message; }
};

inline error make_error(errc code, std::string message) { return error{code, std::move(message)}; }

// A T or an error. Cheap to move; check ok() before value().
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::move(value)) {}
  result(crucible::error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const crucible::error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, crucible::error> v_;
};

// Success or an error.
class [[nodiscard]] status {
 public:
  status() = default;
  status(crucible::error e) : e_(std::move(e)) {}
  static status success() { return {}; }

  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const crucible::error& error() const { return *e_; }

 private:
  std::optional<crucible::error> e_;
};

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const char* what);

}  // namespace crucible

// Aborts with file, line and reason when an invariant is broken.
#define CRUCIBLE_CHECK(cond, what) \
  do {                             \
    if (!(cond)) ::crucible::check_failed(#cond, __FILE__, __LINE__, what); \
  } while (0)

// Returns the error of a status or result from the enclosing function.
#define CRUCIBLE_TRY(expr)                   \
  do {                                       \
    auto crucible_try_ = (expr);             \
    if (!crucible_try_.ok()) return crucible_try_.error(); \
  } while (0)
