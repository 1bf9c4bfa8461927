// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Rank, world size and device of each process, from NCCL's typed NVTX payloads: NCCL registers
// a payload schema for ncclCommInitRank* with entries "Rank", "No. of ranks" and "CUDA device",
// and nsys stores each range's payload in NVTX_EVENTS.binaryData.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "base/status.h"
#include "model/nccl.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// A schema entry of interest: where a field sits in the payload and how wide it is.
struct PayloadField {
  int64_t offset = -1;
  int type = 0;  // NVTX_PAYLOAD_ENTRY_TYPE_*
};

struct RankSchema {
  int64_t payload_size = 0;
  PayloadField rank, nranks, device;
};

// Decodes one binaryData blob against a schema: either the bare payload, or nsys's 32-byte
// header (domain, schema id, payload size, total size) followed by the payload.
// Returns false when the blob does not fit the schema.
bool DecodeRankPayload(std::string_view blob, const RankSchema& schema, model::NcclRankInfo* out);

// Decodes one JSON payload (`nsys export --include-json true` writes NVTX_EVENTS.jsonText such as
// {"NCCL communicator ID":140..,"No. of ranks":2,"Rank":0,"CUDA device":0}); false when it is not
// a rank payload.
bool DecodeRankJson(std::string_view text, model::NcclRankInfo* out);

// Decodes NCCL's rank payloads from binaryData blobs or jsonText streamed by someone else (the report's one
// pass over NVTX_EVENTS). Open() reads the payload schemas; wanted() is false when the export
// declares none, and then no blob needs reading.
class NcclRankDecoder {
 public:
  static StatusOr<NcclRankDecoder> Open(const Database& db);
  bool wanted() const { return !schemas_.empty(); }
  void Add(int64_t global_tid, std::string_view blob);
  const std::map<int64_t, model::NcclRankInfo>& ranks() const { return out_; }  // globalPid ->

 private:
  std::map<int64_t, RankSchema> schemas_;  // by schema id: those with "Rank" and "No. of ranks"
  std::map<int64_t, model::NcclRankInfo> out_;
};

// globalPid -> NCCL rank info. Empty when the export has no such payloads (nsys 2025.3.1
// declares the schemas but exports the values only with `nsys export --include-json true` or
// `--include-blobs true`: see docs/multi-node.md).
StatusOr<std::map<int64_t, model::NcclRankInfo>> ReadNcclRanks(const Database& db);

}  // namespace cpprof::nsys
