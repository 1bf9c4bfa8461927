# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Sourced by the scripts that drive headless chromium: sets $browser to the first of chromium,
# chromium-browser, google-chrome on PATH, or "" when there is none (the caller says what to do).
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser=$(command -v "$b"); break; fi
done
