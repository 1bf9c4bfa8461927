// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof doctor [--json] [--nsys PATH] [--gpus 0,1,...] [--python PY] [--deep]
// Thin: the checks live in src/doctor (Diagnose), so `cpprof profile` can reuse the findings.
#include "doctor/doctor.h"

#include "cli/command.h"
#include "doctor/doctor_render.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::cli {

namespace {

class DoctorCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_flag("--json", json_, "Print the findings as JSON (schema cpprof.doctor/1) instead of a table");
    app.add_option("--nsys", options_.nsys, "Vet this nsys instead of searching for one");
    app.add_option("--gpus", options_.gpus, "The GPUs the job will use, by nvidia-smi index (default: all)")
        ->delimiter(',')
        ->check(CLI::NonNegativeNumber);
    app.add_option("--python", options_.python,
                   "The Python that will run the workload (default: torchrun's interpreter, else python3)");
    app.add_flag("--deep", options_.deep, "Also profile 'sleep 1' with the chosen nsys to prove a .nsys-rep appears");
    app.add_option("--timeout", options_.timeout_s, "Seconds allowed to each probe command")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
  }

  StatusOr<int> Run(Context& ctx) override {
    runner::Environment env = runner::Environment::FromProcess();
    runner::RealProcessRunner runner;
    doctor::DoctorFindings f = doctor::Diagnose(options_, runner, env);
    if (json_) {
      doctor::PrintDoctorJson(f, ctx.out);
    } else {
      doctor::PrintDoctorText(f, ctx.out);
    }
    return f.HasFail() ? static_cast<int>(ExitCode::kCheckFailed) : 0;
  }

 private:
  bool json_ = false;
  doctor::DoctorOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeDoctorCommand() { return std::make_unique<DoctorCommand>(); }

}  // namespace cpprof::cli
