# Shared by every component built with an MPI compiler wrapper (kernels/,
# tracer/, apps/): objects depend on $(STAMP), which is rewritten only when the
# wrapper (or what it expands to) changes, so changing MPICC rebuilds everything.
# Each Makefile sets STAMP := $(BUILD)/mpicc.stamp before its rules and
# includes this file after them.
$(STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(MPICC) $(shell $(MPICC) -show 2>/dev/null)' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

FORCE:

clean:
	rm -rf $(BUILD)
