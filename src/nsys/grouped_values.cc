#include "nsys/grouped_values.h"

#include <algorithm>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

Status GroupedValues::AddIntKeyed(const Database& db, const std::string& sql, const std::string& what,
                                  bool valid_column) {
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(sql, what));
  int64_t last_key = 0;
  model::ChunkedVector<int64_t>* last = nullptr;
  while (st.Step()) {
    if (valid_column && st.Int(2) == 0) {
      ++damaged_;
      continue;
    }
    int64_t v = st.Int(1);
    if (st.IsNull(0)) {
      null_key_.push_back(v);
      continue;
    }
    int64_t key = st.Int(0);
    if (!last || key != last_key) {
      last = &by_id_[key];
      last_key = key;
    }
    last->push_back(v);
  }
  return st.status();
}

Status GroupedValues::AddTextKeyed(const Database& db, const std::string& sql, const std::string& what) {
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(sql, what));
  while (st.Step()) by_text_[std::string(st.Text(0))].push_back(st.Int(1));
  return st.status();
}

StatusOr<std::vector<Group>> GroupedValues::FinishByKey(const Database& db) {
  std::vector<Group> out;
  if (!null_key_.empty()) out.push_back({"", std::move(null_key_)});
  std::vector<int64_t> keys;
  keys.reserve(by_id_.size());
  for (const auto& [id, values] : by_id_) keys.push_back(id);
  std::sort(keys.begin(), keys.end());
  StringTable strings(db);
  for (int64_t id : keys) out.push_back({strings.Get(id), std::move(by_id_[id])});
  CPPROF_RETURN_IF_ERROR(strings.status());
  by_id_.clear();
  return out;
}

StatusOr<std::vector<Group>> GroupedValues::Finish(const Database& db) {
  std::vector<Group> out;
  StringTable strings(db);
  for (auto& [id, values] : by_id_) {
    // StringIds is looked up per distinct key; a key with no string groups under "" like NULL.
    out.push_back({strings.Get(id), std::move(values)});
  }
  CPPROF_RETURN_IF_ERROR(strings.status());
  if (!null_key_.empty()) out.push_back({"", std::move(null_key_)});
  for (auto& [name, values] : by_text_) out.push_back({name, std::move(values)});
  // Groups of equal names (a NULL key and an id without a string) are one group in nsys (GROUP
  // BY name): merge them.
  std::unordered_map<std::string, size_t> first;
  std::vector<Group> merged;
  for (auto& g : out) {
    auto [it, inserted] = first.try_emplace(g.name, merged.size());
    if (inserted) {
      merged.push_back(std::move(g));
    } else {
      auto& dst = merged[it->second].values;
      for (size_t c = 0; c < g.values.num_chunks(); ++c) {
        for (int64_t v : g.values.chunk(c)) dst.push_back(v);
      }
    }
  }
  by_id_.clear();
  by_text_.clear();
  return merged;
}

}  // namespace cpprof::nsys
