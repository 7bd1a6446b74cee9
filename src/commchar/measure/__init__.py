"""Measurement: find MPI libraries, build the kernel, launch jobs, store what they stream."""
