// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What `cpprof profile` says of its own run at the head of <name>.readout.md, before the readout
// of the report (render/profile_summary.h renders it). Plain data, filled by profile/run_profile.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/diff.h"

namespace cpprof::model {

struct ProfileSummary {
  std::string name;                       // the run's --name
  std::string nsys, nsys_version;         // the nsys that profiled it
  std::string preset;                     // "fast" or "full"
  std::vector<std::string> nsys_options;  // what followed "nsys profile"
  int ranks_per_node = 1, nnodes = 1;
  std::vector<int> gpus;             // the ranks' GPUs (CUDA_VISIBLE_DEVICES); empty: unknown
  double wall_s = 0;                 // the profiled run's wall time
  std::vector<std::string> dropped;  // nsys options dropped or inert, each with why
  // The feasibility probe, when it ran: its results file (a name beside the readout) and lines.
  bool probe = false;
  std::string probe_file;
  std::vector<std::string> probe_lines;
  std::vector<std::string> warnings;
  std::vector<std::string> workload_lines;  // the workload's own summary lines (cpfold's "cpfold: {...}")
  // --compare: the earlier result's export and the sanity diff against it.
  std::string compared_with;
  std::optional<ReportDiff> comparison;
};

}  // namespace cpprof::model
