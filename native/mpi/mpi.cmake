# MPI for the MPI tools (included by each of their folders). BANDWALL_MPI chooses the
# implementation: auto (CMake's FindMPI: the mpicc first on PATH, on Debian the mpi alternative,
# Open MPI unless changed), openmpi or mpich (Debian's wrappers mpicc.openmpi / mpicc.mpich).
# Without MPI the tools are skipped with a message. Defines bwmpi, the helpers they share.
include_guard(GLOBAL)
set(BANDWALL_MPI "auto" CACHE STRING "MPI implementation for the MPI tools: auto, openmpi or mpich")
set_property(CACHE BANDWALL_MPI PROPERTY STRINGS auto openmpi mpich)
if(BANDWALL_MPI STREQUAL "openmpi" OR BANDWALL_MPI STREQUAL "mpich")
  set(MPI_C_COMPILER mpicc.${BANDWALL_MPI} CACHE FILEPATH "" FORCE)
elseif(NOT BANDWALL_MPI STREQUAL "auto")
  message(FATAL_ERROR "BANDWALL_MPI must be auto, openmpi or mpich, not '${BANDWALL_MPI}'")
endif()
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND)
  set_target_properties(MPI::MPI_C PROPERTIES IMPORTED_GLOBAL TRUE)
  message(STATUS "bandwall: MPI tools built with ${MPI_C_COMPILER} (MPI ${MPI_C_VERSION}, BANDWALL_MPI=${BANDWALL_MPI})")
  add_library(bwmpi STATIC ${CMAKE_CURRENT_LIST_DIR}/ranks.cpp)
  # The tools use MPI's C API from C++; the deprecated C++ bindings stay out.
  target_link_libraries(bwmpi PUBLIC bwcommon MPI::MPI_C)
  target_compile_definitions(bwmpi PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
else()
  message(STATUS "bandwall: no MPI found, MPI tools not built (Debian: apt-get install libopenmpi-dev "
                 "openmpi-bin, or libmpich-dev mpich)")
endif()
