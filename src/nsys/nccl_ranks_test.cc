// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NCCL's rank payloads as `nsys export --include-json true` writes them (NVTX_EVENTS.jsonText; the
// texts below are from tests/data/real-bt/nccl-payloads) and the binary form.
#include "nsys/nccl_ranks.h"

#include <gtest/gtest.h>

#include <cstring>

namespace cpprof::nsys {
namespace {

TEST(NcclRanks, JsonPayloadOfACommInitGivesTheRank) {
  model::NcclRankInfo info;
  ASSERT_TRUE(DecodeRankJson(
      R"({"NCCL communicator ID":14050287016860592948,"No. of ranks":4,"Rank":2,"CUDA device":1})", &info));
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.nranks, 4);
  EXPECT_EQ(info.cuda_device, 1);
}

TEST(NcclRanks, OtherOrDamagedJsonPayloadsGiveNone) {
  model::NcclRankInfo info;
  // A collective's payload: no rank.
  EXPECT_FALSE(DecodeRankJson(
      R"({"NCCL communicator ID":14050287016860592948,"Message size [bytes]":4194304,"Reduction operation":"Sum"})",
      &info));
  EXPECT_FALSE(DecodeRankJson(R"({"No. of ranks":2,"Rank":2})", &info));  // rank past the ranks
  EXPECT_FALSE(DecodeRankJson(R"({"No. of ranks":-1,"Rank":0})", &info));
  EXPECT_FALSE(DecodeRankJson(R"({"No. of ranks":2,"Rank":"0"})", &info));
  EXPECT_FALSE(DecodeRankJson(R"({"No. of ranks":99999999999,"Rank":0})", &info));
  EXPECT_FALSE(DecodeRankJson("{not json", &info));
  EXPECT_FALSE(DecodeRankJson("[1, 2]", &info));
}

TEST(NcclRanks, BinaryPayloadAfterNsysHeader) {
  RankSchema schema;
  schema.payload_size = 16;
  schema.rank = {8, 5};     // int32 at 8
  schema.nranks = {12, 5};  // int32 at 12
  std::string blob(32 + 16, '\0');
  const int32_t rank = 3, nranks = 8;
  std::memcpy(blob.data() + 32 + 8, &rank, 4);
  std::memcpy(blob.data() + 32 + 12, &nranks, 4);
  model::NcclRankInfo info;
  ASSERT_TRUE(DecodeRankPayload(blob, schema, &info));
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.nranks, 8);
}

}  // namespace
}  // namespace cpprof::nsys
