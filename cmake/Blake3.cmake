# v4f_blake3: the BLAKE3 team's C implementation (portable C plus the x86-64
# SSE2/SSE4.1/AVX2/AVX-512 assembly, chosen at run time by its own CPU
# dispatch), compiled from Debian's librust-blake3-dev package, which ships
# the crate's c/ folder (scripts/setup.sh installs it). Nothing of it is
# copied into this tree. The v4f digest (artifact_format.h) hashes with it;
# both the compiler (lib/Artifact) and the runtime link it. In
# libv4f_runtime.so its symbols stay hidden (--exclude-libs,ALL).
set(V4F_BLAKE3_C_DIR "" CACHE PATH "The BLAKE3 C sources (blake3.h, blake3.c, ...); default: the newest /usr/share/cargo/registry/blake3-*/c")
if(NOT V4F_BLAKE3_C_DIR)
  file(GLOB _v4f_blake3_dirs LIST_DIRECTORIES true "/usr/share/cargo/registry/blake3-*/c")
  if(_v4f_blake3_dirs)
    list(SORT _v4f_blake3_dirs COMPARE NATURAL ORDER DESCENDING)
    list(GET _v4f_blake3_dirs 0 _v4f_blake3_dir)
    set(V4F_BLAKE3_C_DIR ${_v4f_blake3_dir} CACHE PATH "The BLAKE3 C sources" FORCE)
  endif()
endif()
if(NOT EXISTS "${V4F_BLAKE3_C_DIR}/blake3.h" OR NOT EXISTS "${V4F_BLAKE3_C_DIR}/blake3_dispatch.c")
  message(FATAL_ERROR "BLAKE3's C sources not found (V4F_BLAKE3_C_DIR='${V4F_BLAKE3_C_DIR}'): "
                      "install them with `apt-get install librust-blake3-dev` (scripts/setup.sh does), "
                      "or point -DV4F_BLAKE3_C_DIR at a folder holding blake3.h and blake3.c")
endif()

set(_v4f_blake3_sources
  ${V4F_BLAKE3_C_DIR}/blake3.c
  ${V4F_BLAKE3_C_DIR}/blake3_dispatch.c
  ${V4F_BLAKE3_C_DIR}/blake3_portable.c)
set(_v4f_blake3_defs)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT WIN32)
  enable_language(ASM)
  foreach(isa sse2 sse41 avx2 avx512)
    list(APPEND _v4f_blake3_sources ${V4F_BLAKE3_C_DIR}/blake3_${isa}_x86-64_unix.S)
  endforeach()
else()
  # Elsewhere the portable C code only (no intrinsics files are compiled).
  list(APPEND _v4f_blake3_defs BLAKE3_NO_SSE2 BLAKE3_NO_SSE41 BLAKE3_NO_AVX2 BLAKE3_NO_AVX512 BLAKE3_USE_NEON=0)
endif()

add_library(v4f_blake3 STATIC ${_v4f_blake3_sources})
target_include_directories(v4f_blake3 SYSTEM PUBLIC ${V4F_BLAKE3_C_DIR})
target_compile_definitions(v4f_blake3 PRIVATE ${_v4f_blake3_defs})
target_compile_options(v4f_blake3 PRIVATE $<$<COMPILE_LANGUAGE:C>:-O3 -fvisibility=hidden -w>)
set_target_properties(v4f_blake3 PROPERTIES POSITION_INDEPENDENT_CODE ON)
