// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Status and StatusOr: errors as values (no exceptions cross library boundaries).
// Every error carries an exit code from the documented table (docs/exit-codes.md) and a
// message that says what failed and what to do next.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace cpprof {

// Exit codes of the cpprof binary. Keep docs/exit-codes.md in step.
enum class ExitCode : int {
  kOk = 0,
  kError = 1,        // anything not listed below (an I/O failure writing output, ...)
  kUsage = 2,        // bad command line
  kCheckFailed = 3,  // a check said FAIL: doctor found a blocker, diff found a regression
  kBadInput = 4,     // the input file is missing, unreadable, not SQLite, or corrupt
  kNotAnExport = 5,  // valid SQLite, but not an nsys export (or one without kernels)
  kExternal = 6,     // an external program (nsys, torchrun, python) failed
  kInterrupted = 130,
};

class Status {
 public:
  Status() = default;  // OK
  Status(ExitCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ExitCode::kOk; }
  ExitCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ExitCode code_ = ExitCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status Error(ExitCode code, std::string message) { return Status(code, std::move(message)); }

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}                                  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace cpprof

#define CPPROF_CONCAT_INNER(a, b) a##b
#define CPPROF_CONCAT(a, b) CPPROF_CONCAT_INNER(a, b)

// Propagate an error Status from an expression returning Status. The temporary is named after
// the line, so that one nested in a lambda inside another's expression does not shadow it.
#define CPPROF_RETURN_IF_ERROR(expr) CPPROF_RETURN_IF_ERROR_IMPL(CPPROF_CONCAT(_status_, __LINE__), expr)
#define CPPROF_RETURN_IF_ERROR_IMPL(st, expr) \
  do {                                        \
    ::cpprof::Status st = (expr);             \
    if (!st.ok()) return st;                  \
  } while (0)

// Assign the value of a StatusOr expression to `lhs`, or return its error.
#define CPPROF_ASSIGN_OR_RETURN(lhs, expr) CPPROF_ASSIGN_OR_RETURN_IMPL(CPPROF_CONCAT(_status_or_, __LINE__), lhs, expr)
#define CPPROF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
