# make demo : set up, characterize this machine, write report.html
# make apps : set up, run and predict the applications, write report.html
# make test : set up, run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CARGO  ?= cargo

.PHONY: setup demo apps test mpi pvm python kernels sim browser hosts corpus bench clean

setup: mpi pvm python kernels sim

mpi:
	@scripts/ensure-deps.sh mpi

pvm:
	@scripts/ensure-deps.sh pvm

python: $(BIN)/commchar

$(BIN)/commchar: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

kernels: python mpi pvm
	$(BIN)/commchar build

# the plain build, then the profile-optimized binary commchar runs (scripts/build-sim.sh;
# its training replays a trace that the project's Python writes)
sim: python
	CARGO=$(CARGO) PYTHON=$(BIN)/python scripts/build-sim.sh

browser:
	@scripts/ensure-deps.sh browser

# Debian's MPI applications the corpus tests trace (tests/test_corpus_*.py)
corpus:
	@scripts/ensure-deps.sh corpus

# sshd, Slurm and munge for the tests on emulated hosts (tests/test_hosts.py, test_slurm.py)
hosts:
	@scripts/ensure-deps.sh hosts

demo: setup
	$(BIN)/commchar run
	$(BIN)/commchar report -o report.html

# The applications (docs/apps.md): Jacobi and Gaussian elimination swept under the
# tracer, a model of this machine (APP_MODEL_OPS), both predicted, one report.
APPS_DB ?= apps.db
# what the replay of the two programs charges: point-to-point with its threshold, a program's
# first sends and first requests, exchanges, first touch, buffers beyond the caches, the node's
# detours, a communicator's first collectives and the collectives they call
APP_MODEL_OPS ?= pingpong,loggp,rndv,post,coldstart,exchange,touch,footprint,noise,collstart,barrier,bcast,scatter,allgather,allreduce,reduce
apps: setup
	$(BIN)/commchar app jacobi --db $(APPS_DB) --np 1,2,4
	$(BIN)/commchar app gauss --db $(APPS_DB) --np 2
	$(BIN)/commchar run --db $(APPS_DB) --np 2 --ops $(APP_MODEL_OPS)
	$(BIN)/commchar fit --db $(APPS_DB) -o $(APPS_DB:.db=-model.json)
	$(BIN)/commchar app predict --db $(APPS_DB) --model $(APPS_DB:.db=-model.json)
	$(BIN)/commchar report --db $(APPS_DB) -o report.html

# The simulator's checks run first so that pytest's summary closes the output. Tests that
# launch MPI jobs (marked `mpi`) run one at a time, as their timings need the cores; the
# rest run side by side, one process per core (pytest-xdist).
test: setup browser hosts corpus
	$(CARGO) fmt --check --manifest-path sim/Cargo.toml
	$(CARGO) clippy --release --quiet --all-targets --manifest-path sim/Cargo.toml -- -D warnings
	$(CARGO) test --release --quiet --all-targets --manifest-path sim/Cargo.toml
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -ra -m "not mpi" -n auto --maxprocesses 4 --dist loadfile --durations=10
	$(BIN)/python -m pytest -q -ra -m mpi --durations=15

clean:
	rm -rf build sim/target $(VENV)
