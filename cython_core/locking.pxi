# Locks: rcu_node spinlocks as resources free again at lock_free (waiting costs
# the waiter time), and sleeping mutexes (kernel/locking/mutex.c, rtmutex.c) with
# FIFO waiters, optimistic stealing for the plain mutex bounded by its hand-off
# to a waiter that lost a race (v4.10).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void locking_init(Engine self, lk) except *:
    """The sleeping mutexes (once the rcu_node tree exists): the expedited funnel's of each
    rcu_node and rdp (before v4.6), rcu_state.barrier_mutex and .exp_mutex."""
    cdef int i
    self.mutex_handoff = lk.mutex_handoff
    self.n_mtx = self.num_nodes + self.nr_cpus + 2
    self.mtx_owner = <int *> malloc(self.n_mtx * sizeof(int))
    self.mtx_head = <int *> malloc(self.n_mtx * sizeof(int))
    self.mtx_tail = <int *> malloc(self.n_mtx * sizeof(int))
    self.mtx_handoff = <int *> calloc(self.n_mtx, sizeof(int))
    self.mtx_rt = <int *> calloc(self.n_mtx, sizeof(int))
    self.mtx_exp = <int *> calloc(self.n_mtx, sizeof(int))
    if (self.mtx_owner == NULL or self.mtx_head == NULL or self.mtx_tail == NULL or self.mtx_handoff == NULL
            or self.mtx_rt == NULL or self.mtx_exp == NULL):
        raise MemoryError()
    self.exp_mutex = self.n_mtx - 1
    self.barrier_mutex = self.n_mtx - 2  # rcu_state.barrier_mutex: a plain mutex
    for i in range(self.n_mtx):
        self.mtx_owner[i] = self.mtx_head[i] = self.mtx_tail[i] = -1
        self.mtx_exp[i] = i != self.barrier_mutex


cdef inline i64 spin_wait(i64 *lock_free, i64 t, i64 hold) noexcept:
    """A spinlock free again at *lock_free, asked for at t and held `hold` ns:
    returns how long the taker spins; the lock is free again after its hold."""
    cdef i64 wait = lock_free[0] - t
    if wait < 0:
        wait = 0
    lock_free[0] = t + wait + hold
    return wait


cdef void spin_lock(Engine self, i64 *lock_free) noexcept:
    """Acquire and release a raw spinlock free again at *lock_free: the wait
    and the hold time go into acc."""
    cdef i64 wait = spin_wait(lock_free, self.now + self.acc, self.rnp_lock_ns)
    self.acc += wait + self.rnp_lock_ns
    self.n_lock_wait_ns += wait


# --- sleeping mutexes ----------------------------------------------------
cdef bint mutex_trylock(Engine self, int m, int e) noexcept:
    self.acc += self.rnp_lock_ns
    if self.mtx_owner[m] >= 0:
        return False
    if self.mtx_head[m] >= 0 and self.mtx_exp[m]:
        self.n_exp_mutex_steal += 1  # a newcomer overtakes a woken waiter
    self.mtx_owner[m] = e
    return True


cdef bint mutex_lock(Engine self, int m, int e) noexcept:
    """mutex_lock(): True if e holds m now, else e is queued and must sleep."""
    if mutex_trylock(self, m, e):
        return True
    if self.mtx_exp[m]:
        self.n_exp_mutex_wait += 1
    self.ents[e].phase = TASK_MUTEX_WAIT
    self.ents[e].link = -1
    if self.mtx_tail[m] >= 0:
        self.ents[self.mtx_tail[m]].link = e
    else:
        self.mtx_head[m] = e
    self.mtx_tail[m] = e
    return False


cdef bint mutex_retry(Engine self, int m, int e) noexcept:
    """The woken waiter e runs: a plain mutex may have been taken meanwhile. From
    v4.10 the first waiter then sets MUTEX_FLAG_HANDOFF, so that the taker's
    mutex_unlock() hands the mutex to it."""
    cdef int x = self.mtx_head[m], prev = -1
    if self.mtx_owner[m] == e:
        return True  # handed off (rt_mutex, or MUTEX_FLAG_HANDOFF)
    if self.mtx_owner[m] >= 0:
        if self.mutex_handoff:
            self.mtx_handoff[m] = 1
        return False  # lost the race; still first in the wait list
    while x >= 0 and x != e:
        prev = x
        x = self.ents[x].link
    if x >= 0:
        if prev >= 0:
            self.ents[prev].link = self.ents[e].link
        else:
            self.mtx_head[m] = self.ents[e].link
        if self.mtx_tail[m] == e:
            self.mtx_tail[m] = prev
        self.ents[e].link = -1
    self.mtx_owner[m] = e
    return True


cdef void mutex_unlock(Engine self, int m, int c) except *:
    """mutex_unlock() by a task on CPU c.

    A plain mutex is left free and its first waiter woken: anyone who asks
    before that waiter runs takes it (queue jumping), unless that waiter lost such
    a race already and set MUTEX_FLAG_HANDOFF. An rt_mutex (the expedited mutexes
    with kernel.exp_mutex: rt_mutex) and a plain mutex with MUTEX_FLAG_HANDOFF go
    to the first waiter (FIFO among equal priorities).
    """
    cdef int w = self.mtx_head[m]
    if w >= 0 and (self.mtx_handoff[m] or self.mtx_rt[m]):
        self.mtx_handoff[m] = 0
        self.mtx_head[m] = self.ents[w].link
        if self.mtx_head[m] < 0:
            self.mtx_tail[m] = -1
        self.ents[w].link = -1
        self.mtx_owner[m] = w
    else:
        self.mtx_owner[m] = -1
    if w >= 0:
        wake_from_acc(self, w, c, self.ttwu_ns)
