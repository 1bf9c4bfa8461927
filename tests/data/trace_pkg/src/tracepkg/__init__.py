"""Sample package for cpprof trace-json tests (see ../../README.md)."""
