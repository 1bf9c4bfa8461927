// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
