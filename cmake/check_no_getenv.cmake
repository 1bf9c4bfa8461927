# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Fails when a source below src/cli/ reads the process environment (getenv, secure_getenv,
# environ): how a command runs comes down from the CLI in a base::ExecContext, and a child's
# environment from the runner::Environment the CLI builds (docs/ARCHITECTURE.md). The runner's own
# seam is the one exception: runner/environment.cc (Environment::FromProcess) and
# runner/process_runner.cc (a child started with the caller's environment and PATH). Unit tests
# (*_test.cc) are exempt.
#   cmake -DSRC=src -P cmake/check_no_getenv.cmake
get_filename_component(SRC "${SRC}" ABSOLUTE)
set(allowed "runner/environment.cc;runner/process_runner.cc")
file(GLOB_RECURSE files RELATIVE "${SRC}" "${SRC}/*.h" "${SRC}/*.cc")
list(SORT files)
set(found 0)
foreach(rel ${files})
  if(rel MATCHES "^cli/" OR rel MATCHES "_test\\.cc$" OR rel STREQUAL "main.cc")
    continue()
  endif()
  list(FIND allowed "${rel}" is_allowed)
  if(is_allowed GREATER -1)
    continue()
  endif()
  file(STRINGS "${SRC}/${rel}" hits REGEX "(getenv|[^_a-zA-Z]environ[^_a-zA-Z])")
  foreach(hit ${hits})
    string(STRIP "${hit}" hit)
    if(hit MATCHES "^//")
      continue()  # a comment that names a variable
    endif()
    message("error: src/${rel}: '${hit}': below cli/, take it from the command's ExecContext or runner::Environment")
    math(EXPR found "${found} + 1")
  endforeach()
endforeach()
if(found GREATER 0)
  message(FATAL_ERROR "${found} environment read(s) below src/cli/ (docs/ARCHITECTURE.md)")
endif()
