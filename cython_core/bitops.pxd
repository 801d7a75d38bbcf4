# cython: language_level=3
"""Bit helpers for the rcu_node masks (qsmask, expmask: one bit per child)."""

from libc.stdint cimport uint64_t


cdef inline int popcount64(uint64_t x) noexcept nogil:
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n


cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline int ctz64(uint64_t x) noexcept nogil:
    """Index of the lowest set bit; x must not be 0."""
    return __builtin_ctzll(x)
