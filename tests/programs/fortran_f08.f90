! fortran_mpif.f90 through `use mpi_f08`: handles are derived types, ierror optional.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, size, right, left, total, value
  type(MPI_Comm) :: half
  type(MPI_Request) :: requests(2)
  type(MPI_Status) :: status
  double precision :: buf(1000), inbox(1000)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  buf = rank
  if (rank == 0) then
    call MPI_Send(buf, 1000, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
    call MPI_Recv(inbox, 1000, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, status)
  else
    call MPI_Recv(inbox, 1000, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status)
    call MPI_Send(buf, 1000, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
  end if
  call MPI_Irecv(inbox, 1000, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(buf, 1000, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  value = 0
  if (rank == 0) value = 7
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, half)
  call MPI_Bcast(value, 1, MPI_INTEGER, 0, half)
  call MPI_Allreduce(rank + value, total, 1, MPI_INTEGER, MPI_SUM, half)
  call MPI_Comm_free(half)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0)', 'fortran: total ', total, ' from ', nint(inbox(1))
  call MPI_Finalize()
end program
