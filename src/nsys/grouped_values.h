// Reads (group key, value) pairs from an export and groups the values per key, in table order:
// the input of nsys-style summary reports.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/gpu_work.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

struct Group {
  std::string name;
  model::ChunkedVector<int64_t> values;  // table order; chunked so memory stays ~8 bytes a value
};

// Runs `sql`, which must yield (integer key, integer value) rows, and groups the values by key;
// then names each group with `name_of(key)`.
class GroupedValues {
 public:
  // With `valid_column`, `sql` yields a third column, 0 for a row whose values are damaged (see
  // ValidTimesSql): such rows are left out and counted (damaged()).
  Status AddIntKeyed(const Database& db, const std::string& sql, const std::string& what, bool valid_column = false);
  int64_t damaged() const { return damaged_; }
  // Adds rows of (text key, integer value).
  Status AddTextKeyed(const Database& db, const std::string& sql, const std::string& what);
  // Resolves integer keys through StringIds; returns all groups (text-keyed ones included).
  StatusOr<std::vector<Group>> Finish(const Database& db);
  // One group per integer key, in key order (the NULL key first), named through StringIds and not
  // merged by name: nsys's GROUP BY nameId, where two ids can hold one string (one per process).
  StatusOr<std::vector<Group>> FinishByKey(const Database& db);

 private:
  std::unordered_map<int64_t, model::ChunkedVector<int64_t>> by_id_;
  model::ChunkedVector<int64_t> null_key_;  // rows whose key was NULL
  std::unordered_map<std::string, model::ChunkedVector<int64_t>> by_text_;
  int64_t damaged_ = 0;
};

}  // namespace cpprof::nsys
