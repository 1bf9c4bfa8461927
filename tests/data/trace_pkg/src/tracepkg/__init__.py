# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Sample package for cpprof trace-json tests (see ../../README.md)."""
