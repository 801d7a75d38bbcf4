# cython: language_level=3
"""rcusim._seq: the engine's rcu_seq helpers (cython_core/rcu_seq.pxd) for Python.

Values are int64 in the engine's representation (the kernel's unsigned long
read as signed); rcusim.kernel.seq converts to and from the kernel's unsigned values.
"""

from libc.stdint cimport int64_t

cimport rcu_seq as c

RCU_SEQ_CTR_SHIFT = c.RCU_SEQ_CTR_SHIFT
RCU_SEQ_STATE_MASK = c.RCU_SEQ_STATE_MASK


def ULONG_CMP_GE(int64_t a, int64_t b):
    return c.ULONG_CMP_GE(a, b)


def ULONG_CMP_LT(int64_t a, int64_t b):
    return c.ULONG_CMP_LT(a, b)


def rcu_seq_ctr(int64_t s):
    return c.rcu_seq_ctr(s)


def rcu_seq_state(int64_t s):
    return c.rcu_seq_state(s)


def rcu_seq_snap(int64_t s):
    return c.rcu_seq_snap(s)


def rcu_seq_endval(int64_t s):
    return c.rcu_seq_endval(s)


def rcu_seq_done(int64_t cur, int64_t s):
    return c.rcu_seq_done(cur, s)


def rcu_seq_done_exact(int64_t cur, int64_t s, int64_t guard):
    return c.rcu_seq_done_exact(cur, s, guard)


def rcu_seq_started(int64_t cur, int64_t s):
    return c.rcu_seq_started(cur, s)


def rcu_seq_completed_gp(int64_t old, int64_t new):
    return c.rcu_seq_completed_gp(old, new)


def rcu_seq_new_gp(int64_t old, int64_t new):
    return c.rcu_seq_new_gp(old, new)


def rcu_seq_diff(int64_t new, int64_t old):
    return c.rcu_seq_diff(new, old)
