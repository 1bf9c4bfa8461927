// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// WriteFileAtomically: the one way cpprof writes a file. The bytes go to a temporary file in the
// destination's folder (an unnamed O_TMPFILE where the file system has it, so even SIGKILL leaves
// nothing behind; else mkstemp, removed on SIGINT/SIGTERM), are fsync'ed, and the file is renamed
// into place: a reader sees the old file or the whole new one, never a half-written one, and a
// name planted in the folder (a symlink, a stale .part) is never followed.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"

namespace cpprof {

struct WriteFileOptions {
  // Replace a regular file already at the path. Off: an existing file is an error that names
  // `force_flag`. (A FIFO or device at the path, /dev/null say, is written in place either way.)
  bool replace_existing = true;
  std::string force_flag = "--force";
  // Files the command reads: the path may not name one of them (compared by device and inode, so
  // another spelling or a link to an input is caught too).
  std::vector<std::string> inputs;
  // What the error messages call the path ("-o").
  std::string what = "-o";
  // Called with the complete temporary file before it is renamed into place: an error leaves the
  // path as it was (trace-json reads back what reached the disk).
  std::function<Status(const std::string& temp_path)> verify;
  // Off: always a named mkstemp file (what file systems without O_TMPFILE get; for tests).
  bool unnamed_temp = true;
};

// Checks `path` against `o` without writing anything: call it before long work so a wrong -o is
// said at once.
Status CheckOutputPath(const std::string& path, const WriteFileOptions& o);

// `write` streams the content; a non-OK Status from it (or a failed stream) leaves the path as it
// was. Creates no folders.
Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write,
                           const WriteFileOptions& o = {});
Status WriteFileAtomically(const std::string& path, std::string_view content, const WriteFileOptions& o = {});
// Several files streamed at once (one pass writing them all): write(streams), one stream per path in
// order. A non-OK Status (or a failed stream) leaves every path as it was; each file is whole or
// absent, and they are put in place one after another.
Status WriteFilesAtomically(const std::vector<std::string>& paths,
                            const std::function<Status(const std::vector<std::ostream*>&)>& write,
                            const WriteFileOptions& o = {});

// While it lives, SIGINT and SIGTERM first cut `fd` back to `length` bytes (ftruncate), then end
// the process as before: output written straight to a regular file (cpprof ... > FILE) is taken
// back on Ctrl-C as on an error. One at a time.
class TruncateOnSignal {
 public:
  TruncateOnSignal(int fd, off_t length);
  ~TruncateOnSignal();
  TruncateOnSignal(const TruncateOnSignal&) = delete;
  TruncateOnSignal& operator=(const TruncateOnSignal&) = delete;

 private:
  struct Handler;
  std::unique_ptr<Handler> handler_;
};

}  // namespace cpprof
