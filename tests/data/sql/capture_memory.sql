-- A capture with everything the capture, memory and diagnostics readers look at, answers worked
-- out by hand (see src/nsys/memory_reader_test.cc and src/nsys/capture_reader_test.cc).
-- Processes: A = pid 100 (globalPid 16777216 * 100) on device 0, B = pid 200 on device 1.
CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
INSERT INTO META_DATA_CAPTURE VALUES
  ('CAPTURE_EVENT_TYPE', 'OSRuntime'), ('CAPTURE_EVENT_TYPE', 'Cuda'), ('CAPTURE_EVENT_TYPE', 'NvtxEvents'),
  ('PROCESS_0:COMMAND', 'python'),
  ('PROCESS_0:ARGUMENT_0', '-m'), ('PROCESS_0:ARGUMENT_1', 'pkg.entry'), ('PROCESS_0:ARGUMENT_10', 'ten'),
  ('PROCESS_0:ARGUMENT_2', 'two'), ('PROCESS_0:ARGUMENT_3', 'three'), ('PROCESS_0:ARGUMENT_4', 'four'),
  ('PROCESS_0:ARGUMENT_5', 'five'), ('PROCESS_0:ARGUMENT_6', 'six'), ('PROCESS_0:ARGUMENT_7', 'seven'),
  ('PROCESS_0:ARGUMENT_8', 'eight'), ('PROCESS_0:ARGUMENT_9', 'nine'),
  ('PROCESS_0:WORKING_DIR', '/home/u/work'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'SECRET_TOKEN=hunter2'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'NCCL_DEBUG=INFO'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'PATH=/usr/bin'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'CUDA_VISIBLE_DEVICES=0,1'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'TORCH_NCCL_ASYNC_ERROR_HANDLING=1'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'NCCL_SOCKET_NTOKEN=a=b'),
  ('PROCESS_0:ENVIRONMENT_VARIABLE', 'NCCL_NVLS_ENABLE="0"'),
  ('PROCESS_0:COLLECT_GPU_MEMORY_USAGE', 'true'),
  ('PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_KERNEL_BACKTRACES', 'true'),
  ('PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_MEMORY_BACKTRACES', 'true'),
  ('PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_SYNCHRONOIZATION_BACKTRACES', 'false'),
  ('PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_OTHER_BACKTRACES', 'false'),
  ('PROCESS_0:CUDA_BACKTRACE_OPTIONS:COLLECT_PYTHON_BACKTRACES', 'false'),
  ('PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE', 'Graph'),
  ('OS_RUNTIME_OPTIONS:COLLECT_BACKTRACES', 'true'),
  ('OS_RUNTIME_OPTIONS:BACKTRACES_THRESHOLD_NS', '80000'),
  ('LINUX_PERF_OPTIONS:COLLECTION_MODE', 'ProcessTree'),
  ('LINUX_PERF_OPTIONS:SAMPLING_PERIOD', '1000000'),
  ('LINUX_PERF_OPTIONS:COLLECT_IP_BACKTRACE_SAMPLES', 'true'),
  ('RUN_DURATION_MS', '1234'),
  ('PYTHON_NVTX_ANNOTATIONS_OPTIONS:JSON_PATH', '/home/u/trace.json'),
  ('PYTHON_NVTX_ANNOTATIONS_OPTIONS:ENCODED_JSON', 'W3siZG9tYWluIjoiZCIsIm1vZHVsZSI6InBrZy5lbnRyeSIsImZ1bmN0aW9ucyI6WyJCbGsuZm9yd2FyZCJdfSx7ImRvbWFpbiI6ImUiLCJtb2R1bGUiOiJwa2cubW9kIiwiZnVuY3Rpb25zIjpbIkEuZm9yd2FyZCIsIkIuZm9yd2FyZCJdfSx7ImRvbWFpbiI6ImUiLCJjb2xvciI6IjB4ZmYiLCJtb2R1bGUiOiJwa2cubW9kIiwiZnVuY3Rpb25zIjpbImhlbHBlciJdfV0=');

CREATE TABLE ENUM_DIAGNOSTIC_SEVERITY_LEVEL (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_DIAGNOSTIC_SEVERITY_LEVEL VALUES (0, 'UnknownLevel', 'Unknown'), (1, 'Info', 'Info'),
  (2, 'Warning', 'Warning'), (3, 'Error', 'Error'), (4, 'Verbose', 'Verbose');
CREATE TABLE ENUM_DIAGNOSTIC_SOURCE_TYPE (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_DIAGNOSTIC_SOURCE_TYPE VALUES (0, 'UnknownSource', 'Unknown source'), (1, 'Injection', 'Injection'),
  (2, 'Daemon', 'Daemon'), (3, 'Analysis', 'Analysis');
CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER, timestampType INTEGER, source INTEGER, severity INTEGER,
  text TEXT, globalPid INTEGER);
INSERT INTO DIAGNOSTIC_EVENT VALUES
  (1, 0, 1, 1, 'Common injection library initialized successfully.', 1677721600),
  (2, 0, 1, 1, 'PyTorch autograd_nvtx injection initialized successfully.', 1677721600),
  (3, 0, 1, 1, 'Python Functions Trace injection initialized successfully.', 1677721600),
  (3, 0, 1, 1, 'Python Functions Trace injection initialized successfully.', 3355443200),
  (4, 0, 3, 2, 'No NVTX events collected. Does the process use NVTX?', 16777216),
  (5, 0, 2, 1, 'CPU sampling is disabled because perf_event_paranoid is 4.', NULL),
  (6, 0, 3, 1, 'Number of NVTX events collected: 	3.', 1677721600),
  (7, 0, 1, 3, 'Failed to load /opt/x/lib/libfoo.so: not found', 1677721600),
  (8, 0, 1, 3, 'Failed to load /opt/x/lib/libfoo.so: not found', 3355443200),
  (9, 0, 2, 1, 'Process was launched by the profiler, see /tmp/a/b/pid_1_stdout.log and stderr.log for program output', NULL),
  (10, 0, 1, 1, 'Loaded CUPTI library: /opt/nvidia/libcupti.so.13.0', 1677721600);

-- Memory (ENUM_CUDA_MEM_KIND: 1 Pinned, 2 Device, 3 Array, 4 Managed, 5 Device Static;
-- memoryOperationType 0 allocation, 1 free), rows not in time order on purpose.
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL DEFAULT 1, address INTEGER NOT NULL DEFAULT 0,
  pc INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL,
  memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER, streamId INTEGER);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, bytes, memKind, memoryOperationType, correlationId) VALUES
  (50, 1677721600, 0, 200, 3, 1, 4),           -- A dev 0: 250 -> 50
  (10, 1677721600, 0, 100, 2, 0, 1),           -- A dev 0: 100
  (20, 1677721600, 0, 50, 2, 0, 2),            -- A dev 0: 150
  (30, 1677721600, 0, 100, 2, 1, 5),           -- A dev 0: free before the peak: 50
  (40, 1677721600, 0, 200, 3, 0, 3),           -- A dev 0: 250, the peak (correlationId 3)
  (45, 1677721600, 4294967295, 1000, 1, 0, 6), -- pinned host memory: ignored
  (60, 1677721600, 0, 5, 5, 0, 0),             -- A dev 0: device static: 55, final
  (15, 3355443200, 1, 300, 2, 0, 1),           -- B dev 1: 300 (correlationId 1, as A's first)
  (16, 3355443200, 1, 4, 5, 0, 0),             -- B dev 1: device static, no call: 304, the peak
  (25, 3355443200, 1, 300, 2, 1, 2),           -- B dev 1: 4
  (35, 3355443200, 1, 120, 2, 0, 3),           -- B dev 1: 124, final
  (36, 3355443200, 1, 10, 4, 0, 4),            -- managed: ignored
  (5, 3355443200, 0, 7, 5, 0, 0);              -- B dev 0: device static, 7

CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL DEFAULT 0,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL DEFAULT 0);
INSERT INTO StringIds VALUES (10, 'cudaMalloc_v3020'), (11, 'cudaGraphLaunch_v10000'), (12, 'cudaGraphLaunch_ptsz');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES
  (9, 11, 1677721611, 1, 10),
  (39, 41, 1677721611, 3, 10),
  (14, 16, 3355443222, 1, 10),
  (34, 36, 3355443222, 3, 10),
  (70, 71, 1677721611, 9, 11),
  (72, 73, 1677721611, 10, 12),
  (74, 75, 1677721611, 11, 10);

-- NVTX: domain 'd' (module pkg.entry, the -m module) recorded nothing; domain 'e' recorded
-- pkg.mod.A.forward twice (one left open), not B.forward nor helper; the default domain has a
-- range ended on another thread, a custom autograd Function's range, and a mark.
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, domainId) VALUES
  (1, NULL, 75, 'd', 1677721611, NULL, 1),
  (1, NULL, 75, 'e', 1677721611, NULL, 2),
  (10, 20, 59, 'pkg.mod.A.forward', 1677721611, NULL, 2),
  (30, NULL, 59, 'pkg.mod.A.forward', 1677721611, NULL, 2),
  (5, 50, 60, 'cross', 1677721611, 1677721612, 0),
  (6, 7, 59, 'GatherRows, seq = 0', 1677721611, NULL, 0),
  (8, NULL, 34, 'a mark', 1677721611, NULL, 0);
