// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/run_exports.h"

#include "analysis/classify.h"
#include "analysis/ranks.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "nsys/capture_reader.h"
#include "nsys/gpu_work_loader.h"

namespace cpprof::pipeline {

std::vector<const model::CaptureInfo*> CapturesOf(const std::vector<OpenedExport*>& exports) {
  std::vector<const model::CaptureInfo*> captures;
  for (const OpenedExport* x : exports) captures.push_back(&x->capture);
  return captures;
}

Status OpenRun(const std::vector<std::string>& paths, const OpenRunOptions& options,
               const std::vector<OpenedExport*>& exports) {
  const bool align = paths.size() > 1 && options.align_clocks && options.probe;
  std::vector<std::vector<model::CommOpTime>> comm(paths.size());
  std::vector<Status> status(paths.size());
  ParallelFor(options.exec.threads, paths.size(), [&](size_t e) {
    status[e] = [&]() -> Status {
      OpenedExport& x = *exports[e];
      x.path = paths[e];
      CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(x.path, options.exec));
      x.db.emplace(std::move(db));
      if (options.probe) {
        CPPROF_ASSIGN_OR_RETURN(x.schema, nsys::ProbeExport(*x.db));
      }
      if (options.read) CPPROF_RETURN_IF_ERROR(options.read(e));
      CPPROF_ASSIGN_OR_RETURN(x.capture, nsys::ReadCaptureInfo(*x.db));
      x.capture.content_id = ContentFingerprint(x.path);  // the same capture under two names is refused
      if (align) {
        CPPROF_ASSIGN_OR_RETURN(comm[e], nsys::ReadCommOps(*x.db, x.schema, analysis::ClassifyKernel));
      }
      return OkStatus();
    }();
  });
  for (const auto& s : status) CPPROF_RETURN_IF_ERROR(s);
  CPPROF_RETURN_IF_ERROR(analysis::CheckSameRun(CapturesOf(exports), paths, options.force));
  if (!align) return OkStatus();
  std::vector<analysis::ClockInput> clocks(paths.size());
  for (size_t e = 0; e < paths.size(); ++e) {
    clocks[e].utc_start_ns = exports[e]->capture.utc_start_ns;
    clocks[e].comm = std::move(comm[e]);
  }
  std::vector<analysis::ClockAlignment> aligned = analysis::AlignClocks(clocks);
  for (size_t e = 0; e < paths.size(); ++e) exports[e]->clock = std::move(aligned[e]);
  return OkStatus();
}

}  // namespace cpprof::pipeline
