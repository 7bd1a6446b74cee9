#!/usr/bin/env bash
# Installs the Debian packages commchar needs, only when they are missing (or
# when asked), so a cluster with its own MPI never needs root.
#   scripts/ensure-deps.sh mpi      MPI libraries (INSTALL_MPI=1 forces Debian's Open MPI and MPICH)
#   scripts/ensure-deps.sh pvm      PVM 3.4 (Debian's pvm, pvm-dev), measured beside MPI; optional:
#                                   without apt-get (or root) it says so and setup goes on without PVM
#   scripts/ensure-deps.sh browser  headless chromium for the report's browser test
#   scripts/ensure-deps.sh corpus   Debian's MPI applications the corpus tests trace (tests/test_corpus_*.py):
#                                   hpcc, lammps, scalapack-mpi-test (gfortran for the Fortran tests)
#   scripts/ensure-deps.sh hosts    sshd, Slurm and munge for the emulated hosts' tests (root only:
#                                   without root those tests skip, so nothing is installed)
set -euo pipefail

want=()
case "${1:-mpi}" in
  mpi)
    have_mpi=0
    for cc in mpicc mpicc.openmpi mpicc.mpich; do command -v "$cc" >/dev/null 2>&1 && have_mpi=1; done
    if [ "${INSTALL_MPI:-0}" = 1 ] || [ "$have_mpi" = 0 ]; then
      want+=(openmpi-bin libopenmpi-dev mpich libmpich-dev)
    fi ;;
  pvm)
    if ! { command -v pvmd >/dev/null 2>&1 && [ -f /usr/include/pvm3.h ]; } && [ -z "${PVM_ROOT:-}" ]; then
      if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; }; then
        echo "ensure-deps: PVM not installed and cannot be installed here: commchar measures without it" >&2
        exit 0
      fi
      want+=(pvm pvm-dev)
    fi ;;
  corpus)
    command -v lmp >/dev/null 2>&1 || want+=(lammps)
    [ -x /usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests/xdlu ] || want+=(scalapack-mpi-test)
    command -v gfortran >/dev/null 2>&1 || want+=(gfortran)
    command -v hpcc >/dev/null 2>&1 || want+=(hpcc) ;;
  browser)
    command -v chromium >/dev/null 2>&1 || want+=(chromium) ;;
  hosts)
    [ "$(id -u)" = 0 ] || exit 0
    [ -x /usr/sbin/sshd ] || want+=(openssh-server)
    command -v ssh >/dev/null 2>&1 || want+=(openssh-client)
    command -v slurmctld >/dev/null 2>&1 || want+=(slurmctld)
    command -v slurmd >/dev/null 2>&1 || want+=(slurmd)
    command -v srun >/dev/null 2>&1 || want+=(slurm-client)
    command -v munged >/dev/null 2>&1 || want+=(munge)
    command -v tc >/dev/null 2>&1 || want+=(iproute2) ;;
  *) echo "ensure-deps: unknown group '$1' (mpi, pvm, corpus, browser, hosts)" >&2; exit 2 ;;
esac
[ ${#want[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-deps: missing ${want[*]} and no apt-get here: install them (or load your cluster's MPI module) and rerun" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "ensure-deps: missing ${want[*]}; installing needs root" >&2; exit 1; }
  sudo=(sudo)
fi
echo "ensure-deps: installing ${want[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
