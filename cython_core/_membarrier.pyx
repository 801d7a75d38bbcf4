# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""rcusim._membarrier: sys_membarrier() called in a loop, as the 2010 v3b patch does it.

One thread (the *caller*, on CPU ``this_cpu``) calls sys_membarrier() back to
back; T other threads of the process busy-loop in user mode, one per CPU. Each
call is

    syscall entry, smp_mb()
    scan T run queues (rq->curr->mm), with or without rq->lock
    [alloc_cpumask_var()]                       IPI-many and adaptive above the threshold
    smp_call_function_single(cpu, wait=1)       per target, one after the other
      or smp_call_function_many(mask, wait=1)   one broadcast (one target: the single path)
    smp_mb(), syscall exit

The IPI-many path is the kernel's of the time (2.6.28-2.6.37 kernel/smp.c): one
``call_function_data`` per sender, whose cpumask bit and ``refs`` count every
target's handler drops with an atomic operation on the same cache line, so the
targets pass that line along one after another; the last one unlinks the data
under ``call_function.lock`` and unlocks the csd the sender spins on.

Events are the moments where two CPUs meet: the caller seeing a target's csd
unlocked (single path), a target's handler reaching the shared line (IPI-many)
and the caller seeing the broadcast complete. Everything a CPU does between two
such moments is straight-line work, computed when it starts; the scheduling-
clock ticks are fixed windows on each CPU's timeline (irqs off), so a target's
handler timing is known when the IPI is sent.

Time is int64 ns. The engine draws no random numbers: the only randomness, the
tick phase of each CPU, comes in from Python.
"""

cimport cython
from libc.stdint cimport int64_t, uint64_t, int32_t
from libc.stdlib cimport malloc, free

import numpy as np

from eventq cimport event_t, evheap_t, evheap_init, evheap_push, evheap_pop, ev_make

ctypedef int64_t i64
ctypedef uint64_t u64

# ---------------------------------------------------------------------------
# Event kinds (event_t.kind); event_t.target is a thread index 0..T-1.
# ---------------------------------------------------------------------------
cdef enum:
    EV_CSD_UNLOCK = 0    # the caller sees target's csd unlocked (smp_call_function_single, wait=1)
    EV_CFD_REFS = 1      # target's handler reaches the call_function_data line (IPI-many)
    EV_CFD_DONE = 2      # the caller sees the call_function_data csd unlocked (IPI-many, wait=1)

# IPI schemes (the ``mode`` argument).
MB_SINGLE = 0       # one smp_call_function_single(wait=1) per target, serially
MB_MANY = 1         # alloc_cpumask_var() + smp_call_function_many(wait=1)
MB_ADAPTIVE = 2     # single IPIs up to the threshold, else cpumask + IPI-many (v3b)

cdef enum:
    SINGLE = 0
    MANY = 1
    ADAPTIVE = 2


COST_KEYS = (
    "syscall_ns", "smp_mb_ns", "rq_read_ns", "rq_lock_ns", "cpumask_alloc_ns",
    "ipi_send_ns", "ipi_latency_ns", "ipi_entry_ns", "ipi_exit_ns", "csd_ack_ns",
    "ipi_xsocket_ns", "cfd_setup_ns", "cfd_line_ns", "tick_ns",
)
"""Costs the engine reads, all integer ns (see rcusim.engine.membarrier for their meaning)."""


@cython.final
cdef class MembarrierEngine:
    """The caller and its T busy threads on an SMP machine.

    Parameters
    ----------
    thread_cpu : array of int32, shape (T,)
        CPU of each busy thread, none equal to `this_cpu`.
    cpu_socket : array of int32, shape (nr_cpus,)
        Socket of each CPU.
    tick_phase_ns : array of int64, shape (nr_cpus,)
        Time of each CPU's first scheduling-clock tick, in ``[0, 1e9 // hz)``.
    this_cpu : int
        The caller's CPU.
    mode : int
        MB_SINGLE, MB_MANY or MB_ADAPTIVE.
    threshold : int
        ADAPT_IPI_THRESHOLD: the most targets served by single IPIs (adaptive only).
    rq_lock : bool
        Take each scanned run queue's lock around the rq->curr->mm read.
    hz : int
        Tick rate; 0 means no ticks.
    costs : dict of str to int
        Every name in COST_KEYS, in ns.
    """

    # --- event queue ---------------------------------------------------------
    cdef evheap_t evq
    cdef u64 evq_seq                     # the next event's seq: FIFO among events at one t
    cdef readonly i64 now
    cdef readonly i64 events

    # --- machine -------------------------------------------------------------
    cdef int nr_cpus
    cdef int this_cpu
    cdef int threads
    cdef int *thread_cpu         # CPU of busy thread j
    cdef int *xsock              # 1 if thread j's CPU is on another socket than this_cpu
    cdef i64 *tick_phase         # first tick of each CPU (ns)
    cdef i64 tick_period         # 1e9 // HZ, 0 = no ticks
    cdef i64 *handler_start      # handler entry of thread j's CPU for the broadcast in flight

    # --- the system call -------------------------------------------------------
    cdef int mode
    cdef int threshold
    cdef bint rq_lock
    cdef int n_scan              # run queues scanned per call
    cdef bint use_many           # this configuration allocates a cpumask and broadcasts

    # --- costs (ns) --------------------------------------------------------------
    cdef i64 syscall_ns, smp_mb_ns, rq_read_ns, rq_lock_ns, cpumask_alloc_ns
    cdef i64 ipi_send_ns, ipi_latency_ns, ipi_entry_ns, ipi_exit_ns, csd_ack_ns
    cdef i64 ipi_xsocket_ns, cfd_setup_ns, cfd_line_ns, tick_ns

    # --- state of the call in progress ----------------------------------------
    cdef i64 call_start          # when the caller entered the current call
    cdef i64 caller_free         # when the caller finished its last call
    cdef i64 line_free           # when the call_function_data line is free again
    cdef int refs                # call_function_data.refs: handlers still to run
    cdef i64 calls_done
    cdef i64 calls_goal

    # --- counters ---------------------------------------------------------------
    cdef readonly i64 n_ipi_single       # smp_call_function_single() IPIs sent
    cdef readonly i64 n_ipi_many         # broadcast IPIs (one per smp_call_function_many())
    cdef readonly i64 n_cpumask_alloc    # alloc_cpumask_var() calls
    cdef readonly i64 n_rq_lock          # run-queue lock acquisitions
    cdef readonly i64 n_ipi_deferred     # IPIs that found their target inside a tick
    cdef readonly i64 n_caller_ticks     # ticks that interrupted the caller's own work
    cdef readonly i64 cfd_wait_ns        # handler time spent waiting for the shared line
    cdef i64 *ipi_recv                   # IPIs handled per CPU
    cdef i64 *stolen                     # IPI handler time per CPU (ns)
    cdef double call_sum, call_sumsq
    cdef i64 call_min, call_max

    def __cinit__(self):
        self.evq.ev = NULL
        self.thread_cpu = NULL
        self.xsock = NULL
        self.tick_phase = NULL
        self.handler_start = NULL
        self.ipi_recv = NULL
        self.stolen = NULL

    def __dealloc__(self):
        free(self.evq.ev)
        free(self.thread_cpu)
        free(self.xsock)
        free(self.tick_phase)
        free(self.handler_start)
        free(self.ipi_recv)
        free(self.stolen)

    def __init__(self, thread_cpu, cpu_socket, tick_phase_ns, int this_cpu, int mode,
                 int threshold, bint rq_lock, int hz, dict costs):
        cdef const int32_t[::1] tc = np.ascontiguousarray(thread_cpu, dtype=np.int32)
        cdef const int32_t[::1] sock = np.ascontiguousarray(cpu_socket, dtype=np.int32)
        cdef const int64_t[::1] phase = np.ascontiguousarray(tick_phase_ns, dtype=np.int64)
        cdef int j, c
        self.nr_cpus = sock.shape[0]
        self.threads = tc.shape[0]
        if self.nr_cpus < 2 or phase.shape[0] != self.nr_cpus:
            raise ValueError("need at least 2 CPUs and one tick phase per CPU")
        if not 0 <= this_cpu < self.nr_cpus:
            raise ValueError(f"this_cpu {this_cpu} is not a CPU")
        if not 1 <= self.threads < self.nr_cpus:
            raise ValueError(f"{self.threads} busy threads do not fit beside the caller on {self.nr_cpus} CPUs")
        if mode not in (SINGLE, MANY, ADAPTIVE):
            raise ValueError(f"unknown mode {mode}")
        if threshold < 0 or hz < 0:
            raise ValueError("threshold and hz must be >= 0")
        missing = set(COST_KEYS) - set(costs)
        if missing:
            raise ValueError("missing costs: " + ", ".join(sorted(missing)))
        for name in COST_KEYS:
            if not 0 <= costs[name] <= 10**9:
                raise ValueError(f"{name} = {costs[name]} is outside 0..1e9 ns")

        self.this_cpu = this_cpu
        self.mode = mode
        self.threshold = threshold
        self.rq_lock = rq_lock
        self.tick_period = 1000000000 // hz if hz else 0
        self.syscall_ns = costs["syscall_ns"]
        self.smp_mb_ns = costs["smp_mb_ns"]
        self.rq_read_ns = costs["rq_read_ns"]
        self.rq_lock_ns = costs["rq_lock_ns"]
        self.cpumask_alloc_ns = costs["cpumask_alloc_ns"]
        self.ipi_send_ns = costs["ipi_send_ns"]
        self.ipi_latency_ns = costs["ipi_latency_ns"]
        self.ipi_entry_ns = costs["ipi_entry_ns"]
        self.ipi_exit_ns = costs["ipi_exit_ns"]
        self.csd_ack_ns = costs["csd_ack_ns"]
        self.ipi_xsocket_ns = costs["ipi_xsocket_ns"]
        self.cfd_setup_ns = costs["cfd_setup_ns"]
        self.cfd_line_ns = costs["cfd_line_ns"]
        self.tick_ns = costs["tick_ns"] if self.tick_period else 0
        if self.tick_ns >= self.tick_period > 0:
            raise ValueError("tick_ns must be shorter than a jiffy")

        # v3b walks the online CPUs when there are no more of them than
        # mm_users, else the thread group; either way the caller itself is
        # skipped before its run queue is read.
        self.n_scan = self.nr_cpus - 1 if self.nr_cpus <= self.threads + 1 else self.threads
        self.use_many = mode == MANY or (mode == ADAPTIVE and self.threads > threshold)

        evheap_init(&self.evq, self.threads + 1)
        self.thread_cpu = <int *> malloc(self.threads * sizeof(int))
        self.xsock = <int *> malloc(self.threads * sizeof(int))
        self.handler_start = <i64 *> malloc(self.threads * sizeof(i64))
        self.tick_phase = <i64 *> malloc(self.nr_cpus * sizeof(i64))
        self.ipi_recv = <i64 *> malloc(self.nr_cpus * sizeof(i64))
        self.stolen = <i64 *> malloc(self.nr_cpus * sizeof(i64))
        if (self.evq.ev == NULL or self.thread_cpu == NULL or self.xsock == NULL
                or self.handler_start == NULL or self.tick_phase == NULL
                or self.ipi_recv == NULL or self.stolen == NULL):
            raise MemoryError()
        seen = {this_cpu}
        for j in range(self.threads):
            c = tc[j]
            if not 0 <= c < self.nr_cpus or c in seen:
                raise ValueError(f"thread {j}: CPU {c} is not a free CPU")
            seen.add(c)
            self.thread_cpu[j] = c
            self.xsock[j] = sock[c] != sock[this_cpu]
            self.handler_start[j] = 0
        for c in range(self.nr_cpus):
            if self.tick_period and not 0 <= phase[c] < self.tick_period:
                raise ValueError(f"tick phase of CPU {c} is outside one jiffy")
            self.tick_phase[c] = phase[c]
            self.ipi_recv[c] = 0
            self.stolen[c] = 0
        self.call_min = -1

    # =======================================================================
    # Event queue: a heap ordered by (t, seq).  It never holds more than
    # T + 1 events: one per target of a broadcast, or the caller's one.
    # =======================================================================
    # A few events pending: a plain heap beats the engine's FIFOs per kind.
    cdef inline void push(self, i64 t, int kind, int target) noexcept nogil:
        # The heap was sized for its most pending events: it never grows.
        cdef event_t ev = ev_make(&self.evq_seq, t, 0, kind, target, 0)
        evheap_push(&self.evq, &ev)

    cdef inline event_t pop(self) noexcept nogil:
        cdef event_t ev = self.evq.ev[0]
        evheap_pop(&self.evq)
        return ev

    # =======================================================================
    # Ticks: CPU c is in its scheduling-clock interrupt (irqs off) during
    # [phase + k * period, phase + k * period + tick_ns).
    # =======================================================================
    cdef inline i64 irq_free_at(self, int c, i64 t) noexcept nogil:
        """First time >= t at which CPU c can take an interrupt or notice a store."""
        cdef i64 d
        if self.tick_ns == 0:
            return t
        d = (t - self.tick_phase[c]) % self.tick_period
        if d < 0:
            d += self.tick_period
        if d < self.tick_ns:
            return t + self.tick_ns - d
        return t

    cdef inline i64 run_span(self, i64 t, i64 work) noexcept nogil:
        """End of `work` ns of the caller's own work started at t, ticks included."""
        cdef i64 d, next_tick, end
        if self.tick_ns == 0:
            return t + work
        t = self.irq_free_at(self.this_cpu, t)
        d = (t - self.tick_phase[self.this_cpu]) % self.tick_period
        if d < 0:
            d += self.tick_period
        next_tick = t - d + self.tick_period
        end = t + work
        while next_tick < end:
            end += self.tick_ns
            next_tick += self.tick_period
            self.n_caller_ticks += 1
        return end

    # =======================================================================
    # The caller.
    # =======================================================================
    cdef void start_call(self, i64 t) noexcept nogil:
        """Syscall entry, smp_mb(), the run-queue scan and the cpumask, up to the first IPI."""
        cdef i64 work = self.syscall_ns + self.smp_mb_ns + self.n_scan * self.rq_read_ns
        self.call_start = t
        if self.rq_lock:
            work += self.n_scan * self.rq_lock_ns
            self.n_rq_lock += self.n_scan
        if self.use_many:
            # The cpumask is allocated even when the mask ends up with one CPU.
            work += self.cpumask_alloc_ns
            self.n_cpumask_alloc += 1
        t = self.run_span(t, work)
        if self.use_many and self.threads > 1:
            self.call_function_many(t)
        else:
            # smp_call_function_many() with one target takes this path too.
            self.call_function_single(t, 0)

    cdef void call_function_single(self, i64 t, int j) noexcept nogil:
        """smp_call_function_single(thread_cpu[j], membarrier_ipi, wait=1) from time t.

        The sender queues the csd on the target and writes the ICR; the target
        takes the interrupt when its irqs are on, runs smp_mb() and unlocks the
        csd; the sender, spinning, sees the unlock a cache-line transfer later.
        A target on the other socket costs ipi_xsocket_ns more, half on each of
        the two transfers between the sockets (queueing and the unlock).
        """
        cdef int c = self.thread_cpu[j]
        cdef i64 xs = self.ipi_xsocket_ns if self.xsock[j] else 0
        cdef i64 arrive, start, unlock
        t = self.run_span(t, self.ipi_send_ns + xs // 2)
        arrive = t + self.ipi_latency_ns
        start = self.irq_free_at(c, arrive)
        if start != arrive:
            self.n_ipi_deferred += 1
        unlock = start + self.ipi_entry_ns + self.smp_mb_ns
        self.stolen[c] += unlock - start + self.ipi_exit_ns
        self.ipi_recv[c] += 1
        self.n_ipi_single += 1
        self.push(self.irq_free_at(self.this_cpu, unlock + self.csd_ack_ns + xs - xs // 2),
                  EV_CSD_UNLOCK, j)

    cdef void call_function_many(self, i64 t) noexcept nogil:
        """smp_call_function_many(mask, membarrier_ipi, wait=1) from time t: one broadcast."""
        cdef int j, c
        cdef i64 arrive, start
        # csd_lock, cpumask_and, refs = weight, list_add under call_function.lock,
        # smp_mb(), then one ICR write for the whole mask (flat logical APIC).
        t = self.run_span(t, self.cfd_setup_ns + self.ipi_send_ns)
        arrive = t + self.ipi_latency_ns
        self.refs = self.threads
        self.n_ipi_many += 1
        for j in range(self.threads):
            c = self.thread_cpu[j]
            start = self.irq_free_at(c, arrive)
            if start != arrive:
                self.n_ipi_deferred += 1
            self.handler_start[j] = start
            self.ipi_recv[c] += 1
            # Entry, the walk of call_function.queue and smp_mb(), then the
            # atomic cpumask/refs update on the shared line.
            self.push(start + self.ipi_entry_ns + self.smp_mb_ns, EV_CFD_REFS, j)

    cdef void cfd_refs(self, int j) noexcept nogil:
        """Handler j's cpumask_test_and_clear_cpu() and atomic_dec_return(&data->refs)."""
        cdef int c = self.thread_cpu[j]
        cdef i64 start = self.now if self.now > self.line_free else self.line_free
        cdef i64 done
        self.cfd_wait_ns += start - self.now
        self.line_free = start + self.cfd_line_ns
        done = self.line_free
        self.refs -= 1
        if self.refs == 0:
            # The last handler unlinks the data under call_function.lock and
            # unlocks the csd the sender spins on.
            done += self.cfd_line_ns
            self.push(self.irq_free_at(self.this_cpu, done + self.csd_ack_ns), EV_CFD_DONE, j)
        self.stolen[c] += done - self.handler_start[j] + self.ipi_exit_ns

    cdef void end_call(self, i64 t) noexcept nogil:
        """smp_mb() and syscall exit; the loop calls again at once."""
        cdef i64 dur
        t = self.run_span(t, self.smp_mb_ns)
        dur = t - self.call_start
        self.call_sum += dur
        self.call_sumsq += <double> dur * dur
        if self.call_min < 0 or dur < self.call_min:
            self.call_min = dur
        if dur > self.call_max:
            self.call_max = dur
        self.calls_done += 1
        self.caller_free = t
        if self.calls_done < self.calls_goal:
            self.start_call(t)

    # =======================================================================
    # Run loop.
    # =======================================================================
    def run(self, i64 calls):
        """Make `calls` more system calls; returns when the last one has returned."""
        cdef event_t ev
        if calls < 0:
            raise ValueError("calls must be >= 0")
        if calls == 0:
            return
        self.calls_goal = self.calls_done + calls
        with nogil:
            self.start_call(self.caller_free)
            while self.evq.n > 0:
                ev = self.pop()
                self.now = ev.t
                self.events += 1
                if ev.kind == EV_CSD_UNLOCK:
                    if ev.target + 1 < self.threads:
                        self.call_function_single(self.now, ev.target + 1)
                    else:
                        self.end_call(self.now)
                elif ev.kind == EV_CFD_REFS:
                    self.cfd_refs(ev.target)
                else:
                    self.end_call(self.now)
        self.now = self.caller_free

    def stats(self):
        """Counters and times of the calls made so far, as plain Python values."""
        n = self.calls_done
        mean = self.call_sum / n if n else 0.0
        var = max(self.call_sumsq / n - mean * mean, 0.0) if n else 0.0
        return {
            "calls": n,
            "elapsed_ns": self.caller_free,
            "call_mean_ns": mean,
            "call_std_ns": var ** 0.5,
            "call_min_ns": max(self.call_min, 0),
            "call_max_ns": self.call_max,
            "events": self.events,
            "n_ipi_single": self.n_ipi_single,
            "n_ipi_many": self.n_ipi_many,
            "n_cpumask_alloc": self.n_cpumask_alloc,
            "n_rq_lock": self.n_rq_lock,
            "n_ipi_deferred": self.n_ipi_deferred,
            "n_caller_ticks": self.n_caller_ticks,
            "cfd_wait_ns": self.cfd_wait_ns,
            "ipi_recv": np.array([self.ipi_recv[c] for c in range(self.nr_cpus)], dtype=np.int64),
            "ipi_stolen_ns": np.array([self.stolen[c] for c in range(self.nr_cpus)], dtype=np.int64),
        }
