// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The doctor's findings as a table of checks (text) or as JSON (schema cpprof.doctor/1, see
// docs/doctor.md).
#pragma once

#include <ostream>

#include "doctor/doctor.h"

namespace cpprof::doctor {

void PrintDoctorText(const DoctorFindings& f, std::ostream& out);
void PrintDoctorJson(const DoctorFindings& f, std::ostream& out);

}  // namespace cpprof::doctor
