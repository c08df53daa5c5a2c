// Status and Result<T>: the error model of every faucet interface.
//
// A code answers one question for the caller: retry or stop?
//   kUnavailable      transient (connection dropped, server restarting): retry with backoff.
//   kInvalidArgument  the user's input is wrong (config, CLI): stop, print the message, exit 2.
//   kNotFound         the named thing does not exist.
//   kDataLoss         corruption or a gap that would lose data: stop, never retry.
//   kFailedPrecondition  the world is not in the state required (e.g. resync needed): stop.
//   kInternal         a bug or an unexpected third-party failure: stop.
// No exception crosses a module boundary; adapters catch and convert.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace faucet {

enum class StatusCode {
  kOk,
  kUnavailable,
  kInvalidArgument,
  kNotFound,
  kDataLoss,
  kFailedPrecondition,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // True when retrying the same operation later may succeed.

  // Returns a copy whose message is "context: message"; the code is kept.
  Status WithContext(const std::string& context) const;

  // "code: message", for logs.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

#define FAUCET_CONCAT_INNER(a, b) a##b
#define FAUCET_CONCAT(a, b) FAUCET_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)      \
  do {                             \
    ::faucet::Status _st = (expr); \
    if (!_st.ok()) return _st;     \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(FAUCET_CONCAT(_result_, __LINE__), lhs, expr)

}  // namespace faucet
