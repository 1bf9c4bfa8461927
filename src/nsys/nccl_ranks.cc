// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/nccl_ranks.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

namespace {

constexpr size_t kHeaderSize = 32;

// Byte width of the integer NVTX payload entry types NCCL uses; 0 for anything else.
int IntWidth(int type) {
  switch (type) {
    case 1:
    case 2:
    case 11:
    case 12:
      return 1;  // char, uchar, int8, uint8
    case 3:
    case 4:
    case 13:
    case 14:
      return 2;  // short, ushort, int16, uint16
    case 5:
    case 6:
    case 15:
    case 16:
    case 71:
    case 73:
      return 4;  // int, uint, int32, uint32
    case 7:
    case 8:
    case 9:
    case 10:
    case 17:
    case 18:
    case 22:
    case 72:
    case 74:
      return 8;
    default:
      return 0;
  }
}

bool ReadInt(std::string_view payload, const PayloadField& f, int* out) {
  int w = IntWidth(f.type);
  if (f.offset < 0 || w == 0 || static_cast<size_t>(f.offset) + w > payload.size()) return false;
  int64_t v = 0;
  switch (w) {
    case 1: {
      int8_t x;
      std::memcpy(&x, payload.data() + f.offset, 1);
      v = x;
      break;
    }
    case 2: {
      int16_t x;
      std::memcpy(&x, payload.data() + f.offset, 2);
      v = x;
      break;
    }
    case 4: {
      int32_t x;
      std::memcpy(&x, payload.data() + f.offset, 4);
      v = x;
      break;
    }
    default: {
      int64_t x;
      std::memcpy(&x, payload.data() + f.offset, 8);
      v = x;
      break;
    }
  }
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

bool DecodeRankPayload(std::string_view blob, const RankSchema& schema, model::NcclRankInfo* out) {
  std::string_view payload = blob;
  if (schema.payload_size > 0 && blob.size() >= kHeaderSize + static_cast<size_t>(schema.payload_size) &&
      blob.size() != static_cast<size_t>(schema.payload_size)) {
    payload = blob.substr(kHeaderSize);
  }
  model::NcclRankInfo info;
  if (!ReadInt(payload, schema.rank, &info.rank) || !ReadInt(payload, schema.nranks, &info.nranks)) {
    return false;
  }
  ReadInt(payload, schema.device, &info.cuda_device);  // optional
  if (info.rank < 0 || info.nranks <= 0 || info.rank >= info.nranks) return false;
  *out = info;
  return true;
}

StatusOr<NcclRankDecoder> NcclRankDecoder::Open(const Database& db) {
  NcclRankDecoder d;
  if (!db.HasTable("NVTX_PAYLOAD_SCHEMA_ENTRIES") || !db.HasColumn(kNvtxTable, "binaryData")) return d;
  std::map<int64_t, RankSchema>& schemas = d.schemas_;
  {
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare("SELECT schemaId, name, type, coalesce(\"offset\", 0) FROM NVTX_PAYLOAD_SCHEMA_ENTRIES "
                   "WHERE name IN ('Rank', 'No. of ranks', 'CUDA device')",
                   "reading NCCL payload schemas"));
    while (st.Step()) {
      auto& s = schemas[st.Int(0)];
      PayloadField f{st.Int(3), static_cast<int>(st.Int(2))};
      std::string_view name = st.Text(1);
      if (name == "Rank") s.rank = f;
      if (name == "No. of ranks") s.nranks = f;
      if (name == "CUDA device") s.device = f;
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  std::erase_if(schemas, [](const auto& kv) { return kv.second.rank.offset < 0 || kv.second.nranks.offset < 0; });
  if (schemas.empty()) return d;
  if (db.HasTable("NVTX_PAYLOAD_SCHEMAS") && db.HasColumn("NVTX_PAYLOAD_SCHEMAS", "payloadSize")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT schemaId, payloadSize FROM NVTX_PAYLOAD_SCHEMAS",
                                                     "reading NCCL payload schemas"));
    while (st.Step()) {
      auto it = schemas.find(st.Int(0));
      if (it != schemas.end()) it->second.payload_size = st.Int(1);
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  return d;
}

bool DecodeRankJson(std::string_view text, model::NcclRankInfo* out) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto rank = j.find("Rank"), nranks = j.find("No. of ranks"), device = j.find("CUDA device");
  auto small = [&j](nlohmann::json::const_iterator it) {
    return it != j.end() && it->is_number_integer() && it->get<int64_t>() >= 0 && it->get<int64_t>() < (1 << 24);
  };
  if (!small(rank) || !small(nranks)) return false;
  model::NcclRankInfo info;
  info.rank = rank->get<int>();
  info.nranks = nranks->get<int>();
  if (small(device)) info.cuda_device = device->get<int>();
  if (info.nranks <= 0 || info.rank >= info.nranks) return false;
  *out = info;
  return true;
}

void NcclRankDecoder::Add(int64_t global_tid, std::string_view blob) {
  // A JSON payload (`nsys export --include-json true`) names its fields.
  if (!blob.empty() && blob.front() == '{') {
    model::NcclRankInfo info;
    if (DecodeRankJson(blob, &info)) out_.emplace(model::GlobalPidOf(global_tid), info);
    return;
  }
  // With nsys's header the schema id is known; without it, try every rank schema.
  for (const auto& [id, schema] : schemas_) {
    if (blob.size() >= kHeaderSize) {
      uint32_t sid;
      std::memcpy(&sid, blob.data() + 8, 4);
      if (blob.size() != static_cast<size_t>(schema.payload_size) && sid != id) continue;
    }
    model::NcclRankInfo info;
    if (DecodeRankPayload(blob, schema, &info)) {
      int64_t gpid = model::GlobalPidOf(global_tid);
      out_.emplace(gpid, info);  // the first communicator (the world one) wins
      return;
    }
  }
}

StatusOr<std::map<int64_t, model::NcclRankInfo>> ReadNcclRanks(const Database& db) {
  CPPROF_ASSIGN_OR_RETURN(NcclRankDecoder decoder, NcclRankDecoder::Open(db));
  if (!decoder.wanted()) return decoder.ranks();
  const std::string payload = db.HasColumn(kNvtxTable, "jsonText") ? "coalesce(binaryData, jsonText)" : "binaryData";
  CPPROF_ASSIGN_OR_RETURN(
      Statement st, db.Prepare(fmt::format("SELECT globalTid, {0} FROM {1} WHERE {0} IS NOT NULL", payload, kNvtxTable),
                               "reading NCCL payloads"));
  while (st.Step()) decoder.Add(st.Int(0), st.Blob(1));
  CPPROF_RETURN_IF_ERROR(st.status());
  return decoder.ranks();
}

}  // namespace cpprof::nsys
