# Kernels with run-time dispatch: each instruction set's source file gets its own target flags on
# top of the build's baseline (-march=${BANDWALL_ARCH}); the rest of the build never sees them, and
# common/isa.cpp chooses at start-up, from CPUID, which of them may run.
# -mno-avx512f keeps a native build on an AVX-512 machine from putting AVX-512 into the AVX2 file.
include(CheckCXXCompilerFlag)
set(BANDWALL_AVX2_FLAGS "-mavx2;-mfma;-mno-avx512f")
set(BANDWALL_AVX512_FLAGS "-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl")
check_cxx_compiler_flag("-mavx2 -mfma -mno-avx512f" BANDWALL_HAVE_AVX2_FLAGS)
check_cxx_compiler_flag("-mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma" BANDWALL_HAVE_AVX512_FLAGS)

# bandwall_isa_sources(<target> <PREFIX> [AVX2 <file>] [AVX512 <file>]): adds each file to the
# target with its instruction set's flags and defines BANDWALL_<PREFIX>_AVX2 / _AVX512 (PUBLIC) for
# the ones built; a compiler that lacks the flags leaves the file out, saying so.
function(bandwall_isa_sources target prefix)
  cmake_parse_arguments(ARG "" "AVX2;AVX512" "" ${ARGN})
  foreach(_isa AVX2 AVX512)
    set(_file ${ARG_${_isa}})
    if(NOT _file)
      continue()
    endif()
    if(BANDWALL_HAVE_${_isa}_FLAGS)
      target_sources(${target} PRIVATE ${_file})
      set_source_files_properties(${_file} PROPERTIES COMPILE_OPTIONS "${BANDWALL_${_isa}_FLAGS}")
      target_compile_definitions(${target} PUBLIC BANDWALL_${prefix}_${_isa})
    else()
      message(STATUS "${target}: the compiler takes no ${BANDWALL_${_isa}_FLAGS}; ${_file} is left out")
    endif()
  endforeach()
endfunction()
