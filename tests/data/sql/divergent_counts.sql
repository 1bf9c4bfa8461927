-- The toy user model's divergent variant (python/tests/toy_user_model: DivergentToyFold) as an
-- export would hold it: rank r runs 1 + r recycles per iteration, one all-reduce each, so rank 0
-- (pid 100, device 0) runs one AllReduce per iteration and rank 1 (pid 200, device 1) two.
-- Iterations as cpprof_workload.iteration names them: cpprof:warmup0 [0, 1000), cpprof:iter1
-- [1000, 2000), cpprof:iter2 [2000, 3000) µs; the steady window [1000, 3000) holds 2 AllReduce on
-- rank 0 and 4 on rank 1 (one SendRecv each per iteration, equal: not flagged).
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (2, 'sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel'),
  (3, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)');
INSERT INTO PROCESSES VALUES (16777216 * 100, 100, 'python'), (16777216 * 200, 200, 'python');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName, shortName) VALUES
  (100000, 200000, 0, 7, 16777216 * 100, 2, 2),
  (200000, 300000, 0, 7, 16777216 * 100, 1, 1),
  (300000, 350000, 0, 7, 16777216 * 100, 3, 3),
  (100000, 200000, 1, 7, 16777216 * 200, 2, 2),
  (200000, 300000, 1, 7, 16777216 * 200, 1, 1),
  (300000, 350000, 1, 7, 16777216 * 200, 3, 3),
  (400000, 500000, 1, 7, 16777216 * 200, 1, 1),
  (1100000, 1200000, 0, 7, 16777216 * 100, 2, 2),
  (1200000, 1300000, 0, 7, 16777216 * 100, 1, 1),
  (1300000, 1350000, 0, 7, 16777216 * 100, 3, 3),
  (1100000, 1200000, 1, 7, 16777216 * 200, 2, 2),
  (1200000, 1300000, 1, 7, 16777216 * 200, 1, 1),
  (1300000, 1350000, 1, 7, 16777216 * 200, 3, 3),
  (1400000, 1500000, 1, 7, 16777216 * 200, 1, 1),
  (2100000, 2200000, 0, 7, 16777216 * 100, 2, 2),
  (2200000, 2300000, 0, 7, 16777216 * 100, 1, 1),
  (2300000, 2350000, 0, 7, 16777216 * 100, 3, 3),
  (2100000, 2200000, 1, 7, 16777216 * 200, 2, 2),
  (2200000, 2300000, 1, 7, 16777216 * 200, 1, 1),
  (2300000, 2350000, 1, 7, 16777216 * 200, 3, 3),
  (2400000, 2500000, 1, 7, 16777216 * 200, 1, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, domainId) VALUES
  (0, 1000000, 59, 'cpprof:warmup0', 16777216 * 100 + 1, NULL, 0),
  (1000000, 2000000, 59, 'cpprof:iter1', 16777216 * 100 + 1, NULL, 0),
  (2000000, 3000000, 59, 'cpprof:iter2', 16777216 * 100 + 1, NULL, 0),
  (0, 1000000, 59, 'cpprof:warmup0', 16777216 * 200 + 1, NULL, 0),
  (1000000, 2000000, 59, 'cpprof:iter1', 16777216 * 200 + 1, NULL, 0),
  (2000000, 3000000, 59, 'cpprof:iter2', 16777216 * 200 + 1, NULL, 0);
