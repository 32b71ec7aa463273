# One place for the flags every target of this project compiles with.
include_guard(GLOBAL)
add_library(ortdlpack_warnings INTERFACE)
target_compile_options(ortdlpack_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                       $<$<BOOL:${ORTDLPACK_WERROR}>:-Werror>)
if(ORTDLPACK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
