-- Two ranks in a ring, worked by hand (times in µs below; the table holds ns). Rank 1 (pid 200,
-- device 1) reaches each ring shift 300 µs late (a host sleep); rank 0 (pid 100, device 0) waits
-- in its SendRecv kernel. Iterations: warmup0 [0, 1000), iter1 [1000, 2000), iter2 [2000, 3000)
-- on both ranks, so the steady window is [1000, 3000) µs: the warm-up shift is left out.
--   rank 0: GEMM [1000,1100) SendRecv [1100,1500)   GEMM [2000,2100) SendRecv [2100,2500)
--           GEMM [2450,2470) on another stream (hides 20 µs of the second transfer)
--   rank 1: GEMM [1000,1100) SendRecv [1400,1500)   GEMM [2000,2100) SendRecv [2400,2500)
--           SendRecv [2700,2750) with no partner (unmatched, like Cannon's extra skew shift)
-- Expected (µs): rank 0 wait 600, transfer 200, exposed transfer 180, compute 220, waiting 600,
-- idle 1000 (two 500 µs host stalls); rank 1 wait 0, transfer 200, unmatched 50, exposed
-- transfer 250, compute 200, idle 1550; straggler rank 1: last at 2 of 2 shifts, caused 600.
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
  (2, 'sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel');
INSERT INTO PROCESSES VALUES (16777216 * 100, 100, 'python'), (16777216 * 200, 200, 'python');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName, shortName) VALUES
  (100000, 200000, 0, 7, 16777216 * 100, 1, 1),
  (100000, 200000, 1, 7, 16777216 * 200, 1, 1),
  (1000000, 1100000, 0, 7, 16777216 * 100, 2, 2),
  (1100000, 1500000, 0, 7, 16777216 * 100, 1, 1),
  (2000000, 2100000, 0, 7, 16777216 * 100, 2, 2),
  (2100000, 2500000, 0, 7, 16777216 * 100, 1, 1),
  (2450000, 2470000, 0, 8, 16777216 * 100, 2, 2),
  (1000000, 1100000, 1, 7, 16777216 * 200, 2, 2),
  (1400000, 1500000, 1, 7, 16777216 * 200, 1, 1),
  (2000000, 2100000, 1, 7, 16777216 * 200, 2, 2),
  (2400000, 2500000, 1, 7, 16777216 * 200, 1, 1),
  (2700000, 2750000, 1, 7, 16777216 * 200, 1, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, domainId) VALUES
  (0, 1000000, 59, 'ring:warmup0', 16777216 * 100 + 1, NULL, 0),
  (1000000, 2000000, 59, 'ring:iter1', 16777216 * 100 + 1, NULL, 0),
  (2000000, 3000000, 59, 'ring:iter2', 16777216 * 100 + 1, NULL, 0),
  (0, 1000000, 59, 'ring:warmup0', 16777216 * 200 + 1, NULL, 0),
  (1000000, 2000000, 59, 'ring:iter1', 16777216 * 200 + 1, NULL, 0),
  (2000000, 3000000, 59, 'ring:iter2', 16777216 * 200 + 1, NULL, 0);
