# make demo : set up, characterize this machine, write report.html
# make test : set up, run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CARGO  ?= cargo

.PHONY: setup demo test mpi python kernels sim browser bench clean

setup: mpi python kernels sim

mpi:
	@scripts/ensure-deps.sh mpi

python: $(BIN)/commchar

$(BIN)/commchar: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

kernels: python
	$(BIN)/commchar build

sim:
	$(CARGO) build --release --quiet --manifest-path sim/Cargo.toml

browser:
	@scripts/ensure-deps.sh browser

demo: setup
	$(BIN)/commchar run
	$(BIN)/commchar report -o report.html

# The simulator's checks run first so that pytest's summary closes the output.
test: setup browser
	$(CARGO) fmt --check --manifest-path sim/Cargo.toml
	$(CARGO) clippy --release --quiet --all-targets --manifest-path sim/Cargo.toml -- -D warnings
	$(CARGO) test --release --quiet --all-targets --manifest-path sim/Cargo.toml
	$(BIN)/python -m pytest -q -ra

clean:
	rm -rf build sim/target $(VENV)
