// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A fixture for check_spdx: no license header.
int main() { return 0; }
