// NVTX ranges of an export, named the way nsys names them: "<domain>:<text>", where the domain
// comes from the domain-create event (eventType 75) of the same domainId in the same process,
// the text from StringIds (registered strings) or the row's own text, and the default domain
// is "" (so ":text").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

inline constexpr int kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxtPushPop = 70, kNvtxtStartEnd = 71,
                     kNvtxDomainCreate = 75;

// Domain names per (domainId, pid): one entry per thread that created the domain, as nsys's
// reports join them (a domain created on two threads of a process names its ranges twice).
class NvtxDomains {
 public:
  static StatusOr<NvtxDomains> Read(const Database& db);
  // Every domain name created anywhere (distinct, sorted).
  std::vector<std::string> AllNames() const;
  // The names a range of `domain_id` on thread `global_tid` takes; {""} when none.
  const std::vector<std::string>& NamesFor(int64_t domain_id, int64_t global_tid) const;

 private:
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> names_;  // (domainId, pid bits)
  std::vector<std::string> none_{""};
};

struct NvtxRangeRow {
  int64_t start;
  int64_t end;       // open ranges end at the last NVTX timestamp of the export, as in nsys
  int event_type;
  int64_t domain_id;
  int64_t global_tid;
  bool ends_on_other_thread;  // endGlobalTid set: nsys leaves it out of GPU projection
  bool open;                  // no end recorded: still open when the capture ended
  std::string_view text;      // valid during the callback only
};

// Which timestamps bound the end given to ranges still open at the end of the capture: nsys's
// nvtx_sum takes the last timestamp of any NVTX event, nvtx_gpu_proj_sum that of ranges only.
enum class OpenEnd { kLastNvtxEvent, kLastRange };

// Streams the push/pop and start/end ranges in table order.
Status ForEachNvtxRange(const Database& db, OpenEnd open_end, const std::function<void(const NvtxRangeRow&)>& fn);

}  // namespace cpprof::nsys
