# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The skeleton of Python source files: what `cpprof report --source-root` needs to name a backtrace
frame's Class.method, and nothing else. Every line keeps its number and its indentation; a line is
kept only when it starts a class or a def (with its decorators) or closes a bracket (`) -> Tensor:`,
the end of a signature black wrapped over lines); the others become `...` (comments and blank lines:
blank). A committed capture of a third-party
model (tests/data/real-boltz) is then checked without committing the model's code.

    python3 tools/testdata/source_skeleton.py SRC_ROOT OUT_ROOT FILE...   (FILE relative to SRC_ROOT)
"""
import os
import re
import sys

KEEP = re.compile(r"^\s*(class\s|def\s|async\s+def\s|@|[)\]}])")


def skeleton_line(line):
    if KEEP.match(line):
        return line
    code = line.lstrip()
    if not code.strip() or code.startswith("#"):
        return "\n"
    return line[:len(line) - len(code)] + "...\n"


def skeleton(text):
    return "".join(skeleton_line(line) for line in text.splitlines(keepends=True))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    src, out, files = argv[0], argv[1], argv[2:]
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(skeleton(text))


if __name__ == "__main__":
    main(sys.argv[1:])
