// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// nsys's global thread and process ids (globalTid, globalPid): one 64-bit number per thread, with
// the thread id in bits 0..23, the process id in bits 24..47 and the hardware (host or VM) id
// above. A process's globalPid is its threads' globalTid with the thread bits cleared, so the
// kernel tables' globalPid and the API tables' globalTid are joined by clearing bits 0..23 (as
// nsys's own report scripts do). The one rule, for every layer.
#pragma once

#include <cstdint>

namespace cpprof::model {

inline constexpr int64_t kThreadBits = 0xFFFFFF;

// The globalPid of the process a globalTid belongs to (the hardware id kept).
inline constexpr int64_t GlobalPidOf(int64_t global_tid) { return global_tid & ~kThreadBits; }
// The OS process id (bits 24..47) of a globalPid or globalTid.
inline constexpr int PidOf(int64_t global_id) { return static_cast<int>((global_id >> 24) & 0xFFFFFF); }
// The OS thread id (bits 0..23) of a globalTid.
inline constexpr int TidOf(int64_t global_id) { return static_cast<int>(global_id & kThreadBits); }

// A run read from several exports (one nsys per rank or per node): two hosts may run the same pid,
// so a process is known by its globalPid with the export's index in place of the hardware id
// (bits 48 and up), and a kernel name by its StringIds id with the export's index from bit 40 up.
inline constexpr int kExportPidShift = 48, kExportNameShift = 40;
inline constexpr int64_t kPidBits = (int64_t{1} << kExportPidShift) - 1;  // globalPid without the hardware id
inline constexpr int64_t RunPid(size_t export_index, int64_t global_pid) {
  return (global_pid & kPidBits) | (static_cast<int64_t>(export_index) << kExportPidShift);
}

}  // namespace cpprof::model
