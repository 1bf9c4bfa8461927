// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The overlap tax: does compute slow down while NCCL kernels run beside it on the same GPU?
// (They share the SMs, the L2 and HBM.) Per rank, each compute kernel (its name, grid and block
// sizes, and module: one name runs on inputs of many shapes) is timed under communication (NCCL
// kernels of that rank ran during at least half of it) and alone (during none of it); a kernel
// with kMinOverlapSamples of each compares its median durations. A module's tax adds its kernels'
// and its children's: what its ops under communication took more than their kernels' median
// alone, against that median. This decides whether overlapping a ring's transfers with compute is
// worth it: the overlap hides the transfer but costs the tax.
#pragma once

#include <cstddef>
#include <vector>

#include "analysis/module_attribution.h"
#include "model/cost.h"
#include "model/gpu_work.h"
#include "model/interval.h"

namespace cpprof::analysis {

struct OverlapTaxInput {
  // By rank; each with its ops' keys and launches (model::ProcessGpuWork::op_keys, op_launches).
  std::vector<const model::ProcessGpuWork*> ranks;
  const std::vector<ModuleTreeNode>* nodes = nullptr;  // by node id; null: no module tree
  // Null: every op. Else only ops strictly inside it (starting after its start, ending before its
  // end: an op cut at an edge is left out, whether the ops were read with the window or not), and
  // the NCCL kernels cut at its edges.
  const model::Interval* window = nullptr;
  int iterations = 0;  // steady iterations in the window
};

model::OverlapTax ComputeOverlapTax(const OverlapTaxInput& in);

// The tax each node's compute pays beside communication, for the replay's `overlap` edits
// (analysis/replay.h): its row's slowdown, else its nearest ancestor's, else the whole run's;
// never below 0 (compute measured faster under communication is noise, not a gain). Empty when
// the tax was not computed.
std::vector<double> OverlapTaxByNode(const model::OverlapTax& tax, const std::vector<ModuleTreeNode>* nodes);

}  // namespace cpprof::analysis
