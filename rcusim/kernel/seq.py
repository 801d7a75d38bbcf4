"""Grace-period sequence numbers, as the kernel's ``rcu_seq_*`` helpers.

Tree RCU counts grace periods in ``unsigned long`` sequence numbers
(``rcu_state.gp_seq``, each ``rnp->gp_seq``, ``expedited_sequence``...).
The low ``RCU_SEQ_CTR_SHIFT`` = 2 bits hold the state (0 = idle,
1 = grace period in progress) and the upper bits count grace periods, so a
full grace period adds 4.

The functions here are pure: they take plain Python ints and return ints
or bools. Every value is reduced to 64 bits, and comparisons are the
kernel's wrap-aware ``ULONG_CMP_GE`` / ``ULONG_CMP_LT``, so the counters
behave across the wrap exactly like a 64-bit kernel's. Where the kernel
takes a pointer to the live counter (``sp``), the function takes the
current value ``cur`` instead. ``rcu_seq_start`` and ``rcu_seq_end``
return the new value rather than updating in place.

Source: kernel/rcu/rcu.h and the ``gp_seq`` initial value in
kernel/rcu/tree.c.
"""

from __future__ import annotations

from rcusim import _seq

#: Bits of state below the grace-period counter.
RCU_SEQ_CTR_SHIFT = 2

#: Mask of the state bits.
RCU_SEQ_STATE_MASK = (1 << RCU_SEQ_CTR_SHIFT) - 1

#: Amount one full grace period adds to a sequence number.
RCU_SEQ_GP = RCU_SEQ_STATE_MASK + 1

#: Polled-API cookie meaning "a grace period has already completed".
RCU_GET_STATE_COMPLETED = 0x1

#: Largest ``unsigned long`` on a 64-bit kernel.
ULONG_MAX = (1 << 64) - 1

#: Initial ``rcu_state.gp_seq``: ``(0UL - 300UL) << RCU_SEQ_CTR_SHIFT``.
#: It starts 300 grace periods before the wrap so that wrap bugs show up
#: soon after boot.
GP_SEQ_INIT = ((0 - 300) << RCU_SEQ_CTR_SHIFT) & ULONG_MAX

#: Guard band of ``rcu_seq_done_exact()``: ``2 * RCU_SEQ_GP`` (two grace
#: periods). Kernels v6.14-v6.15 wrote ``3 * RCU_SEQ_STATE_MASK + 1`` (10),
#: which gives the same answers for Tree RCU values (state 0 or 1); older
#: kernels used ``2 * RCU_SEQ_STATE_MASK + 1`` (7).
RCU_SEQ_DONE_EXACT_GUARD = 2 * RCU_SEQ_GP


def _ulong(x: int) -> int:
    """Reduce an int to ``unsigned long`` (64-bit) range."""
    return int(x) & ULONG_MAX


def _signed(x: int) -> int:
    """The same 64 bits read as signed: the engine's representation (rcusim._seq)."""
    return ((int(x) + 2**63) & ULONG_MAX) - 2**63


def ULONG_CMP_GE(a: int, b: int) -> bool:
    """Wrap-aware ``a >= b`` on 64-bit unsigned values.

    Parameters
    ----------
    a, b : int
        Values, reduced to 64 bits.

    Returns
    -------
    bool
        True if ``a`` is at or after ``b``, i.e. ``a - b`` (mod 2**64) is
        at most ``ULONG_MAX / 2``.
    """
    return _seq.ULONG_CMP_GE(_signed(a), _signed(b))


def ULONG_CMP_LT(a: int, b: int) -> bool:
    """Wrap-aware ``a < b`` on 64-bit unsigned values.

    Parameters
    ----------
    a, b : int
        Values, reduced to 64 bits.

    Returns
    -------
    bool
        True if ``a`` is before ``b``, i.e. ``a - b`` (mod 2**64) exceeds
        ``ULONG_MAX / 2``.
    """
    return _seq.ULONG_CMP_LT(_signed(a), _signed(b))


def rcu_seq_ctr(s: int) -> int:
    """Counter part of a sequence number (``s >> RCU_SEQ_CTR_SHIFT``)."""
    return _ulong(_seq.rcu_seq_ctr(_signed(s)))


def rcu_seq_state(s: int) -> int:
    """State part of a sequence number (``s & RCU_SEQ_STATE_MASK``)."""
    return _ulong(_seq.rcu_seq_state(_signed(s)))


def rcu_seq_start(s: int) -> int:
    """Sequence number after a grace period starts.

    Parameters
    ----------
    s : int
        Current value; must be idle (state 0).

    Returns
    -------
    int
        ``s + 1``.

    Raises
    ------
    ValueError
        If the result's state is not 1 (the kernel's WARN_ON_ONCE).
    """
    new = _ulong(s + 1)
    if rcu_seq_state(new) != 1:
        raise ValueError(f"rcu_seq_start from non-idle sequence {s:#x}")
    return new


def rcu_seq_endval(s: int) -> int:
    """End-of-grace-period value: ``(s | RCU_SEQ_STATE_MASK) + 1``."""
    return _ulong(_seq.rcu_seq_endval(_signed(s)))


def rcu_seq_end(s: int) -> int:
    """Sequence number after the grace period in progress ends.

    Parameters
    ----------
    s : int
        Current value; must have a grace period in progress (state != 0).

    Returns
    -------
    int
        ``rcu_seq_endval(s)``, the next multiple of 4.

    Raises
    ------
    ValueError
        If ``s`` is idle (the kernel's WARN_ON_ONCE).
    """
    if rcu_seq_state(s) == 0:
        raise ValueError(f"rcu_seq_end on idle sequence {s:#x}")
    return rcu_seq_endval(s)


def rcu_seq_snap(s: int) -> int:
    """Value the counter must reach for a full grace period from now.

    ``(s + 2 * RCU_SEQ_STATE_MASK + 1) & ~RCU_SEQ_STATE_MASK``: from idle
    ``4k`` this is ``4k + 4`` (the next grace period); from in-progress
    ``4k + 1`` it is ``4k + 8`` (the current one cannot be trusted, so one
    more full grace period is needed).

    Parameters
    ----------
    s : int
        Current sequence value.

    Returns
    -------
    int
        The snapshot (state bits zero).
    """
    return _ulong(_seq.rcu_seq_snap(_signed(s)))


def rcu_seq_done(cur: int, s: int) -> bool:
    """True if the counter ``cur`` has reached snapshot ``s``.

    Parameters
    ----------
    cur : int
        Current value of the counter.
    s : int
        A value from :func:`rcu_seq_snap`.

    Returns
    -------
    bool
        ``ULONG_CMP_GE(cur, s)``.
    """
    return _seq.rcu_seq_done(_signed(cur), _signed(s))


def rcu_seq_done_exact(cur: int, s: int,
                       guard: int = RCU_SEQ_DONE_EXACT_GUARD) -> bool:
    """Like :func:`rcu_seq_done`, but without the ``ULONG_MAX / 2`` slack.

    The cookie also counts as done when ``cur`` lies before ``s - guard``:
    a counter that far behind a snapshot can only mean the snapshot is so
    old that the counter wrapped past it. Only the window
    ``[s - guard, s)`` reads as "not done".

    Parameters
    ----------
    cur : int
        Current value of the counter.
    s : int
        A value from :func:`rcu_seq_snap`.
    guard : int, optional
        Size of the window; default :data:`RCU_SEQ_DONE_EXACT_GUARD`.

    Returns
    -------
    bool
        ``ULONG_CMP_GE(cur, s) or ULONG_CMP_LT(cur, s - guard)``.
    """
    return _seq.rcu_seq_done_exact(_signed(cur), _signed(s), _signed(guard))


def rcu_seq_started(cur: int, s: int) -> bool:
    """True if the grace period that snapshot ``s`` waits for has started.

    Parameters
    ----------
    cur : int
        Current value of the counter.
    s : int
        A value from :func:`rcu_seq_snap`.

    Returns
    -------
    bool
        ``ULONG_CMP_LT((s - 1) & ~RCU_SEQ_STATE_MASK, cur)``.
    """
    return _seq.rcu_seq_started(_signed(cur), _signed(s))


def rcu_seq_completed_gp(old: int, new: int) -> bool:
    """True if a grace period completed between values ``old`` and ``new``.

    Returns
    -------
    bool
        ``ULONG_CMP_LT(old, new & ~RCU_SEQ_STATE_MASK)``.
    """
    return _seq.rcu_seq_completed_gp(_signed(old), _signed(new))


def rcu_seq_new_gp(old: int, new: int) -> bool:
    """True if a grace period started between values ``old`` and ``new``.

    Returns
    -------
    bool
        ``ULONG_CMP_LT((old + RCU_SEQ_STATE_MASK) & ~RCU_SEQ_STATE_MASK, new)``.
    """
    return _seq.rcu_seq_new_gp(_signed(old), _signed(new))


def rcu_seq_diff(new: int, old: int) -> int:
    """Rough number of grace periods between two sequence values.

    0 if the values are equal, 1 if no full grace period can have elapsed,
    otherwise ``((rnd_diff - RCU_SEQ_STATE_MASK - 1) >> RCU_SEQ_CTR_SHIFT)
    + 2`` where ``rnd_diff`` is the distance between the rounded values plus
    one if either value has state bits set. Idle to idle across K grace
    periods gives K + 1.

    Parameters
    ----------
    new, old : int
        Sequence values, ``new`` the later one.

    Returns
    -------
    int
        The kernel's estimate (an ``unsigned long``).
    """
    return _ulong(_seq.rcu_seq_diff(_signed(new), _signed(old)))


def exp_snap_onebit(s: int) -> int:
    """Expedited snapshot under the old one-bit-state numbering.

    Pre-v4.x kernels counted expedited grace periods with a single state
    bit (odd = in progress, even = idle), and a waiter waited until the
    counter reached ``(s + 3) & ~1``: from ``2k`` that is ``2k + 2``, from
    ``2k + 1`` it is ``2k + 4``. Current kernels use
    :func:`rcu_seq_snap` with two state bits; this rule is kept for
    comparison only.

    Parameters
    ----------
    s : int
        Counter value in the one-bit numbering.

    Returns
    -------
    int
        Value the counter must reach.
    """
    return _ulong(s + 3) & ~1
