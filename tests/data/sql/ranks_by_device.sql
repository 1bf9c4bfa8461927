-- Two processes with GPU work and no NCCL payloads: pid 300 on device 0, pid 200 on device 1.
-- Ranks follow device order: rank 0 = pid 300, rank 1 = pid 200.
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)');
INSERT INTO PROCESSES VALUES (16777216 * 300, 300, 'python'), (16777216 * 200, 200, 'python');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName, shortName) VALUES
  (10, 20, 1, 7, 16777216 * 200, 1, 1),
  (10, 30, 0, 7, 16777216 * 300, 1, 1);
