# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Turns a text file into a C++ header holding it as a raw string literal, so the HTML template
# stays a readable file under src/ and still ends up inside the binary.
#   cmake -DIN=src/render/html_template.html -DOUT=gen/render/html_template.h -DNAME=kHtmlTemplate -P embed_text.cmake
file(READ "${IN}" content)
if(content MATCHES "\\)cpprof_embed\"")
  message(FATAL_ERROR "${IN} contains the raw string delimiter ')cpprof_embed\"'")
endif()
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}.tmp" "// Generated from src/render/${name} by cmake/embed_text.cmake: edit that file, not this one.\n"
  "#pragma once\n#include <string_view>\nnamespace cpprof::render {\n"
  "inline constexpr std::string_view ${NAME} = R\"cpprof_embed(${content})cpprof_embed\";\n}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
