# cython: language_level=3
"""Latency buckets the engine fills as requests finish, so that histograms and
percentiles need no per-request rows.

* bcc's log2 slot of whole microseconds: ``bpf_log2l(ns / 1000)``, the bit length
  of the value with 0 sharing slot 1 with 1 (rcusim.results.histogram).
* A log-linear slot of nanoseconds: values below ``2 * FINE_SUB`` have a slot
  each; above, every octave [2**b, 2**(b+1)) is cut into FINE_SUB equal slots,
  so a slot is at most 1/FINE_SUB of its values wide (HdrHistogram's layout).

rcusim.results.digest computes the same slots in NumPy; a test holds the two equal.
"""

from libc.stdint cimport int64_t, uint64_t

cdef enum:
    LOG2_SLOTS = 65                        # bcc's log2_index_max
    FINE_SUB_BITS = 10
    FINE_SUB = 1 << FINE_SUB_BITS          # slots per octave
    FINE_SLOTS = (64 - FINE_SUB_BITS) * FINE_SUB
    RECORDS_ALL = 0
    RECORDS_SAMPLE = 1
    RECORDS_NONE = 2

cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil


cdef inline int bit_length(uint64_t v) noexcept nogil:
    return 0 if v == 0 else 64 - __builtin_clzll(v)


cdef inline int log2_slot(int64_t v) noexcept nogil:
    """bpf_log2l(v) of a value v >= 0."""
    cdef int b = bit_length(<uint64_t> v)
    return b if b > 0 else 1


cdef inline int64_t fine_slot(int64_t v) noexcept nogil:
    """Log-linear slot of a value v >= 0."""
    cdef int shift = bit_length(<uint64_t> v) - FINE_SUB_BITS - 1
    if shift <= 0:
        return v
    return (<int64_t> (shift + 1) << FINE_SUB_BITS) + ((v >> shift) - FINE_SUB)


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    """A well-mixed 64-bit hash of x (Steele, Lea and Flood's SplitMix64 finaliser)."""
    x += 0x9e3779b97f4a7c15ULL
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL
    return x ^ (x >> 31)
