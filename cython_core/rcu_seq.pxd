# cython: language_level=3
"""Grace-period sequence numbers: the kernel's rcu_seq_*() helpers
(kernel/rcu/rcu.h) and ULONG_CMP_GE/LT, in one place for the engine, the
reference model and Python (rcusim._seq wraps them).

The low RCU_SEQ_CTR_SHIFT = 2 bits hold the state (0 idle, 1 GP in progress),
the upper bits count grace periods, so a full GP adds 4.  Values are held as
int64 (the engine starts at -300 << 2, the kernel's (0UL - 300UL) << 2 read as
signed) and compared wrap-aware through unsigned differences, exactly as the
kernel compares its unsigned longs.
"""

from libc.stdint cimport int64_t, uint64_t

cdef enum:
    RCU_SEQ_CTR_SHIFT = 2
    RCU_SEQ_STATE_MASK = 3

cdef extern from "<stdint.h>":
    const uint64_t ULONG_MAX "UINT64_MAX"   # unsigned long on a 64-bit kernel


cdef inline bint ULONG_CMP_GE(int64_t a, int64_t b) noexcept nogil:
    return ULONG_MAX // 2 >= <uint64_t> a - <uint64_t> b


cdef inline bint ULONG_CMP_LT(int64_t a, int64_t b) noexcept nogil:
    return ULONG_MAX // 2 < <uint64_t> a - <uint64_t> b


cdef inline int64_t rcu_seq_ctr(int64_t s) noexcept nogil:
    return <int64_t> (<uint64_t> s >> RCU_SEQ_CTR_SHIFT)


cdef inline int64_t rcu_seq_state(int64_t s) noexcept nogil:
    return s & RCU_SEQ_STATE_MASK


cdef inline int64_t rcu_seq_snap(int64_t s) noexcept nogil:
    """The value gp_seq must reach for a full GP to have passed from now."""
    return <int64_t> ((<uint64_t> s + 2 * RCU_SEQ_STATE_MASK + 1) & ~(<uint64_t> RCU_SEQ_STATE_MASK))


cdef inline int64_t rcu_seq_endval(int64_t s) noexcept nogil:
    return <int64_t> ((<uint64_t> s | RCU_SEQ_STATE_MASK) + 1)


cdef inline bint rcu_seq_done(int64_t cur, int64_t s) noexcept nogil:
    return ULONG_CMP_GE(cur, s)


cdef inline bint rcu_seq_done_exact(int64_t cur, int64_t s, int64_t guard) noexcept nogil:
    """rcu_seq_done() without the ULONG_MAX / 2 slack: only [s - guard, s) is "not done"."""
    return ULONG_CMP_GE(cur, s) or ULONG_CMP_LT(cur, <int64_t> (<uint64_t> s - <uint64_t> guard))


cdef inline bint rcu_seq_started(int64_t cur, int64_t s) noexcept nogil:
    return ULONG_CMP_LT(<int64_t> ((<uint64_t> s - 1) & ~(<uint64_t> RCU_SEQ_STATE_MASK)), cur)


cdef inline bint rcu_seq_completed_gp(int64_t old, int64_t new) noexcept nogil:
    return ULONG_CMP_LT(old, <int64_t> (<uint64_t> new & ~(<uint64_t> RCU_SEQ_STATE_MASK)))


cdef inline bint rcu_seq_new_gp(int64_t old, int64_t new) noexcept nogil:
    return ULONG_CMP_LT(<int64_t> ((<uint64_t> old + RCU_SEQ_STATE_MASK) & ~(<uint64_t> RCU_SEQ_STATE_MASK)), new)


cdef inline int64_t rcu_seq_diff(int64_t new, int64_t old) noexcept nogil:
    """Rough number of GPs between two values (rcuscale's "batches")."""
    cdef uint64_t rnd_diff
    cdef uint64_t partial
    if old == new:
        return 0
    partial = 1 if (new & RCU_SEQ_STATE_MASK) or (old & RCU_SEQ_STATE_MASK) else 0
    rnd_diff = ((<uint64_t> new & ~(<uint64_t> RCU_SEQ_STATE_MASK))
                - ((<uint64_t> old + RCU_SEQ_STATE_MASK) & ~(<uint64_t> RCU_SEQ_STATE_MASK)) + partial)
    if ULONG_CMP_GE(RCU_SEQ_STATE_MASK, <int64_t> rnd_diff):
        return 1
    return <int64_t> (((rnd_diff - RCU_SEQ_STATE_MASK - 1) >> RCU_SEQ_CTR_SHIFT) + 2)
