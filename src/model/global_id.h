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

}  // namespace cpprof::model
