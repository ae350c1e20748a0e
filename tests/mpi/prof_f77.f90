! Fortran with mpif.h: a 3-message ring of 10 integers, a Bcast of 5 reals from rank 0, Barrier.
program prof_f77
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, n, i, buf(10), status(MPI_STATUS_SIZE)
  real :: r(5)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  buf = rank
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, 10, MPI_INTEGER, mod(rank + 1, n), 1, MPI_COMM_WORLD, ierr)
      call MPI_Recv(buf, 10, MPI_INTEGER, mod(rank + n - 1, n), 1, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_Recv(buf, 10, MPI_INTEGER, mod(rank + n - 1, n), 1, MPI_COMM_WORLD, status, ierr)
      call MPI_Send(buf, 10, MPI_INTEGER, mod(rank + 1, n), 1, MPI_COMM_WORLD, ierr)
    end if
  end do
  r = 1.0
  call MPI_Bcast(r, 5, MPI_REAL, 0, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program prof_f77
