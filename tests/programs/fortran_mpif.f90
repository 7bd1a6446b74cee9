! A ring exchange in Fortran through mpif.h (fortran_mpi.f90: `use mpi`, the same
! program): a wildcard receive, a non-blocking exchange, a broadcast and a reduction
! on a communicator from MPI_Comm_split.  Prints the sum it checks.
program fortran_mpif
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, size, right, left, total, half, requests(2), value
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
  double precision :: buf(1000), inbox(1000)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  buf = rank
  if (rank == 0) then
    call MPI_Send(buf, 1000, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(inbox, 1000, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(inbox, 1000, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Send(buf, 1000, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Irecv(inbox, 1000, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Isend(buf, 1000, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Waitall(2, requests, statuses, ierr)
  value = 0
  if (rank == 0) value = 7
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, half, ierr)
  call MPI_Bcast(value, 1, MPI_INTEGER, 0, half, ierr)
  call MPI_Allreduce(rank + value, total, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  call MPI_Comm_free(half, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'fortran: total ', total, ' from ', nint(inbox(1))
  call MPI_Finalize(ierr)
end program
