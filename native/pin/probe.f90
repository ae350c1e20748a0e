! A Fortran OpenMP program that says where its threads ran (the Fortran twin of probe.c): every thread
! notes its CPU (sched_getcpu through ISO_C_BINDING) after a short compute loop; one JSON line.
program pin_probe
  use omp_lib
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function sched_getcpu() bind(C, name="sched_getcpu")
      import :: c_int
    end function
  end interface
  integer, parameter :: max_threads = 256
  integer :: cpus(0:max_threads - 1), nthreads, t, i
  real(8) :: x
  character(len=16) :: num
  cpus = -1
  nthreads = 0
  !$omp parallel private(t, i, x)
  t = omp_get_thread_num()
  !$omp single
  nthreads = omp_get_num_threads()
  !$omp end single
  x = 0
  do i = 1, 2000000
    x = x * 0.999999d0 + 1.0d0
  end do
  !$omp barrier
  if (t < max_threads .and. x > 0) cpus(t) = sched_getcpu()
  !$omp end parallel
  write (num, '(I0)') nthreads
  write (*, '(A)', advance='no') '{"probe":"fortran","threads":' // trim(num) // ',"thread_cpus":['
  do t = 0, nthreads - 1
    write (num, '(I0)') cpus(t)
    if (t > 0) write (*, '(A)', advance='no') ','
    write (*, '(A)', advance='no') trim(num)
  end do
  write (*, '(A)') ']}'
end program pin_probe
