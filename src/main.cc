// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof: where GPU time and communication go in a context-parallel multi-GPU run.
// The whole program is the library; main only hands over to the CLI.
#include "cli/cli.h"

int main(int argc, char** argv) { return cpprof::cli::Main(argc, argv); }
