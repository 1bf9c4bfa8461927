-- Two processes whose NCCL ncclCommInitRankConfig payloads say rank 1 runs on device 0 and rank 0
-- on device 1 (CUDA_VISIBLE_DEVICES reversed): ranks must follow the payloads, not devices.
-- Payload layout as NCCL registers it: comm id u64 @0, No. of ranks int @8, Rank int @12,
-- CUDA device int @16; size 24. The first blob carries nsys's 32-byte header, the second is bare.
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)');
INSERT INTO PROCESSES VALUES (16777216 * 300, 300, 'python'), (16777216 * 200, 200, 'python');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName, shortName) VALUES
  (10, 20, 1, 7, 16777216 * 200, 1, 1),
  (10, 30, 0, 7, 16777216 * 300, 1, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER, binaryData BLOB);
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER,
  flags INTEGER, numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL,
  idx INTEGER NOT NULL, flags INTEGER, type INTEGER, name TEXT, description TEXT,
  arrayOrUnionDetail INTEGER, offset INTEGER);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (4, 16777218, NULL, 1, NULL, 4, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (4, 16777218, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL),
  (4, 16777218, 1, NULL, 5, 'No. of ranks', NULL, NULL, 8), (4, 16777218, 2, NULL, 5, 'Rank', NULL, NULL, 12),
  (4, 16777218, 3, NULL, 5, 'CUDA device', NULL, NULL, 16);
-- pid 300 (device 0): header (domain 4, schema 16777218, payload 24, total 56) + {id, 2, 1, 0}
INSERT INTO NVTX_EVENTS VALUES (1, 2, 59, 'ncclCommInitRankConfig', 16777216 * 300 + 5, NULL, 4,
  X'0400000000000000020000010000000018000000000000003800000000000000efbeadde0000000002000000010000000000000000000000');
-- pid 200 (device 1): bare payload {id, 2, 0, 1}
INSERT INTO NVTX_EVENTS VALUES (1, 2, 59, 'ncclCommInitRankConfig', 16777216 * 200 + 9, NULL, 4,
  X'efbeadde0000000002000000000000000100000000000000');
