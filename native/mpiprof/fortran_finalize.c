/* Fortran layers that call PMPI_Finalize instead of MPI_Finalize (Open MPI's mpif.h and mpi_f08,
 * MPICH's mpi_f08) would skip the report: it is written from their entry points here. */
#include "mpiprof.h"

static void *real_mpi_finalize, *real_f08_finalize;

#ifdef BWP_MPICH
#define F08_FINALIZE "mpi_finalize_f08_"
void mpi_finalize_f08_(MPI_Fint* ierr)
#else
#define F08_FINALIZE "ompi_finalize_f"
void ompi_finalize_f(MPI_Fint* ierr)
#endif
{
  void (*real)(MPI_Fint*) = (void (*)(MPI_Fint*))bwp_next(&real_f08_finalize, F08_FINALIZE);
  bwp_report();
  real(ierr);
}

void mpi_finalize_(MPI_Fint* ierr) {
  void (*real)(MPI_Fint*) = (void (*)(MPI_Fint*))bwp_next(&real_mpi_finalize, "mpi_finalize_");
  bwp_report();
  real(ierr);
}
