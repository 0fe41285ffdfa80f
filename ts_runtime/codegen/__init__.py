"""Kernel code generation on the CuTe DSL: the only package of ts that imports cutlass."""
