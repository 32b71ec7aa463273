# One place for the flags every target of this project compiles with.
include_guard(GLOBAL)
add_library(ortdlpack_warnings INTERFACE)
target_compile_options(ortdlpack_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                       $<$<BOOL:${ORTDLPACK_WERROR}>:-Werror>)
# Sanitizers apply to every target (core, plugin, tests, fuzzers); ORT itself stays uninstrumented.
# See docs/reliability.md and scripts/sanitize.sh.
option(ORTDLPACK_TSAN "Build with ThreadSanitizer (exclusive with ORTDLPACK_SANITIZE)" OFF)
if(ORTDLPACK_SANITIZE AND ORTDLPACK_TSAN)
  message(FATAL_ERROR "ORTDLPACK_SANITIZE (ASan+UBSan) and ORTDLPACK_TSAN cannot be combined")
endif()
if(ORTDLPACK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ORTDLPACK_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
