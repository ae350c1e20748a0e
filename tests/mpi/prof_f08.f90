! Fortran with use mpi_f08: a 3-message ring of 10 integers, a Bcast of 5 reals from rank 0, Barrier.
program prof_f08
  use mpi_f08
  implicit none
  integer :: rank, n, i, buf(10)
  type(MPI_Status) :: status
  real :: r(5)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  buf = rank
  do i = 1, 3
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, 10, MPI_INTEGER, mod(rank + 1, n), 1, MPI_COMM_WORLD)
      call MPI_Recv(buf, 10, MPI_INTEGER, mod(rank + n - 1, n), 1, MPI_COMM_WORLD, status)
    else
      call MPI_Recv(buf, 10, MPI_INTEGER, mod(rank + n - 1, n), 1, MPI_COMM_WORLD, status)
      call MPI_Send(buf, 10, MPI_INTEGER, mod(rank + 1, n), 1, MPI_COMM_WORLD)
    end if
  end do
  r = 1.0
  call MPI_Bcast(r, 5, MPI_REAL, 0, MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Finalize()
end program prof_f08
