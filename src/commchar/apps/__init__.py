"""The applications commchar ships (apps/: Jacobi's method, Gaussian
elimination): built per MPI library, run as sweeps into the store, and
predicted from a model file."""
