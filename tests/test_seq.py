"""Tests for rcusim.kernel.seq: grace-period sequence numbers."""

import pytest

from rcusim.kernel.seq import (GP_SEQ_INIT, RCU_GET_STATE_COMPLETED, RCU_SEQ_CTR_SHIFT, RCU_SEQ_DONE_EXACT_GUARD,
                               RCU_SEQ_STATE_MASK, ULONG_CMP_GE, ULONG_CMP_LT, ULONG_MAX, exp_snap_onebit,
                               rcu_seq_completed_gp, rcu_seq_ctr, rcu_seq_diff, rcu_seq_done, rcu_seq_done_exact,
                               rcu_seq_end, rcu_seq_endval, rcu_seq_new_gp, rcu_seq_snap, rcu_seq_start,
                               rcu_seq_started, rcu_seq_state)


def test_constants():
    assert RCU_SEQ_CTR_SHIFT == 2
    assert RCU_SEQ_STATE_MASK == 3
    assert RCU_GET_STATE_COMPLETED == 1
    assert GP_SEQ_INIT == 2 ** 64 - 1200
    assert rcu_seq_state(GP_SEQ_INIT) == 0
    assert RCU_SEQ_DONE_EXACT_GUARD == 8


def test_ctr_state():
    assert rcu_seq_ctr(13) == 3 and rcu_seq_state(13) == 1
    assert rcu_seq_ctr(GP_SEQ_INIT) == (2 ** 64 - 1200) >> 2
    # Negative Python ints are read as unsigned long.
    assert rcu_seq_state(-1200) == 0 and rcu_seq_ctr(-4) == 2 ** 62 - 1


def test_start_end():
    s = rcu_seq_start(8)
    assert s == 9
    assert rcu_seq_endval(s) == 12
    assert rcu_seq_end(s) == 12
    with pytest.raises(ValueError):
        rcu_seq_start(9)
    with pytest.raises(ValueError):
        rcu_seq_end(12)


def test_snap_from_idle():
    # Idle at 4k: the next grace period, 4k + 4, is enough.
    assert rcu_seq_snap(0) == 4
    assert rcu_seq_snap(8) == 12


def test_snap_from_in_progress():
    # In progress at 4k + 1: the current one must end and a full one run.
    assert rcu_seq_snap(1) == 8
    assert rcu_seq_snap(9) == 16


def test_snap_done_lifecycle():
    cur = 8
    s = rcu_seq_snap(cur)
    assert not rcu_seq_done(cur, s) and not rcu_seq_started(cur, s)
    cur = rcu_seq_start(cur)
    assert rcu_seq_started(cur, s) and not rcu_seq_done(cur, s)
    cur = rcu_seq_end(cur)
    assert rcu_seq_done(cur, s)

    # Snapshot taken mid-GP needs the current GP and the next one.
    cur = rcu_seq_start(cur)            # 13
    s = rcu_seq_snap(cur)               # 20
    assert s == 20
    cur = rcu_seq_end(cur)              # 16
    assert not rcu_seq_done(cur, s) and not rcu_seq_started(cur, s)
    cur = rcu_seq_start(cur)            # 17
    assert rcu_seq_started(cur, s)
    cur = rcu_seq_end(cur)              # 20
    assert rcu_seq_done(cur, s)


@pytest.mark.parametrize("new, old, expected", [
    (4, 0, 2), (8, 0, 3), (8, 4, 2), (401, 1, 100),
    (0, 0, 0), (1, 0, 1), (4, 1, 1), (5, 4, 1), (8, 1, 2),
])
def test_diff(new, old, expected):
    assert rcu_seq_diff(new, old) == expected


def test_diff_idle_to_idle_is_k_plus_one():
    for k in range(1, 20):
        assert rcu_seq_diff(4 * k, 0) == k + 1


def test_completed_and_new_gp():
    assert not rcu_seq_completed_gp(4, 5)
    assert rcu_seq_completed_gp(4, 8)
    assert rcu_seq_completed_gp(5, 8)
    assert not rcu_seq_new_gp(4, 4)
    assert rcu_seq_new_gp(4, 5)
    assert not rcu_seq_new_gp(5, 8)
    assert rcu_seq_new_gp(5, 9)


def test_ulong_cmp():
    assert ULONG_CMP_GE(5, 5) and ULONG_CMP_GE(6, 5) and not ULONG_CMP_GE(4, 5)
    assert ULONG_CMP_LT(4, 5) and not ULONG_CMP_LT(5, 5)
    # Across the wrap, 3 comes after ULONG_MAX - 3.
    assert ULONG_CMP_GE(3, ULONG_MAX - 3)
    assert ULONG_CMP_LT(ULONG_MAX - 3, 3)


def test_wrap_around_from_gp_seq_init():
    cur = GP_SEQ_INIT
    s = rcu_seq_snap(cur)
    cookies = []
    for gp in range(400):
        cookies.append((gp, rcu_seq_snap(cur)))
        cur = rcu_seq_start(cur)
        assert rcu_seq_state(cur) == 1
        cur = rcu_seq_end(cur)
        assert 0 <= cur <= ULONG_MAX
        if gp == 299:
            # 300 grace periods after boot the counter wraps to zero.
            assert cur == 0
    assert cur == 100 * 4
    # A snapshot from before the wrap is done after it, in both forms.
    assert rcu_seq_done(cur, s) and rcu_seq_done_exact(cur, s)
    assert rcu_seq_diff(cur, GP_SEQ_INIT) == 401
    # Each cookie needed exactly one more grace period.
    for gp, c in cookies:
        assert c == (GP_SEQ_INIT + 4 * (gp + 1)) & ULONG_MAX
    # A snapshot taken just before the wrap is not done just before it.
    pre = (GP_SEQ_INIT + 4 * 299) & ULONG_MAX   # 2**64 - 4
    snap = rcu_seq_snap(rcu_seq_start(pre))     # in progress -> 4
    assert snap == 4
    assert not rcu_seq_done(rcu_seq_end(rcu_seq_start(pre)), snap)
    assert rcu_seq_done(4, snap)


def test_done_exact_guard_band():
    s = 1000  # a snapshot value (state bits zero)
    for back in range(1, RCU_SEQ_DONE_EXACT_GUARD + 1):
        assert not rcu_seq_done_exact(s - back, s)
    # Further back than the guard band means the counter wrapped past s.
    assert rcu_seq_done_exact(s - RCU_SEQ_DONE_EXACT_GUARD - 1, s)
    assert not rcu_seq_done(s - RCU_SEQ_DONE_EXACT_GUARD - 1, s)
    assert rcu_seq_done_exact(s, s) and rcu_seq_done_exact(s + 1, s)
    # The old 7-wide guard band reported s - 8 as done; that is the root
    # rcu_node lagging two GPs behind a snapshot of rcu_state.gp_seq.
    assert rcu_seq_done_exact(s - 8, s, guard=7)
    assert not rcu_seq_done_exact(s - 8, s)


def test_done_exact_guard_8_and_10_agree_on_tree_rcu_values():
    # Tree RCU values have state 0 or 1 and snapshots have state 0.
    for s in range(0, 400, 4):
        for cur in range(0, 400):
            if rcu_seq_state(cur) > 1:
                continue
            assert (rcu_seq_done_exact(cur, s, guard=8)
                    == rcu_seq_done_exact(cur, s, guard=10))


# The one-bit rule: "start at 0 wait until 2, 1 -> 4, 2 -> 4, 3 -> 6,
# 4 -> 6, 5 -> 8, 6 -> 8".
ONEBIT_TABLE = [(0, 2), (1, 4), (2, 4), (3, 6), (4, 6), (5, 8), (6, 8)]

# The same waits with two state bits: idle -> next GP end, in progress ->
# end of the current GP plus one more.
TWOBIT_TABLE = [(0, 4), (1, 8), (4, 8), (5, 12), (8, 12)]


@pytest.mark.parametrize("s, target", ONEBIT_TABLE)
def test_exp_snap_onebit(s, target):
    assert exp_snap_onebit(s) == target


@pytest.mark.parametrize("s, target", TWOBIT_TABLE)
def test_two_bit_snap_table(s, target):
    assert rcu_seq_snap(s) == target


def test_onebit_and_twobit_wait_for_the_same_grace_period():
    # Same (counter, state) in both numberings must wait for the same
    # grace-period counter.
    for ctr in range(50):
        for state in (0, 1):
            onebit = exp_snap_onebit(2 * ctr + state) >> 1
            twobit = rcu_seq_ctr(rcu_seq_snap(4 * ctr + state))
            assert onebit == twobit
