# cython: language_level=3
"""The RCU engine's event queue, and the 4-ary heap the sys_membarrier() engine uses
alone: events ordered by (t, prio, seq), so that events at the same time fire urgent
first, then in the order they were pushed.  prio and seq share one word (prio in the
top bit), so that an event is 32 bytes and one comparison orders the tie.

Many events of one kind are pushed in the order they fire (the ticks, timers armed
a fixed delay ahead), so each kind has a FIFO that
takes every event not before its last one, and a 4-ary heap takes the rest (and
every event while few are pending, when the heap alone is faster).  Each of these
sources is in order, so the first event of all is the first of their first events:
a small heap of the FIFOs by first event, and one comparison with the heap's first,
find it.  No two events have the same (t, key), so the order is exactly a single
heap's.  Storage doubles when full."""

from libc.stdint cimport int64_t, uint64_t, int32_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy


cdef struct event_t:
    int64_t t            # when the event fires (ns)
    uint64_t key         # prio << 63 | seq: PRIO_URGENT (0) before PRIO_NORMAL (1)
                         # at equal t, then FIFO by the insertion counter seq
    int32_t kind         # EV_*
    int32_t target       # CPU, entity, group or thread index, by kind
    int64_t arg          # generation number or payload, by kind


cdef enum:
    EVQ_KINDS = 32       # kinds with a FIFO; events of other kinds go to the heap
    EVQ_FIFO_MIN = 64    # below this many pending events, the heap alone is faster


cdef enum:
    EVHEAP_D_SHIFT = 2   # the heap is 4-ary: a pop's sift-down takes half a binary heap's
    EVHEAP_D = 4         # levels, and compares four children side by side (128 bytes)


cdef struct evheap_t:
    event_t *ev          # a 4-ary heap of events
    int64_t n            # events in it
    int64_t cap          # events it can hold


cdef struct evfifo_t:
    event_t *buf         # a ring of mask + 1 (a power of two) events
    int64_t head         # index of the first event
    int64_t n            # events queued
    int64_t mask


cdef struct evsrc_t:
    int64_t t            # the source's first event's t and key, copied
    uint64_t key
    int32_t src          # the FIFO's kind


cdef struct eventq_t:
    evheap_t heap        # the events pushed before the last one of their kind's FIFO
    evfifo_t fifo[EVQ_KINDS]
    evsrc_t srcs[EVQ_KINDS]  # the non-empty FIFOs, a binary heap by first event
    int32_t nsrcs
    int64_t n            # events pending
    uint64_t seq         # the next event's seq (below 2**63)
    int64_t pending_sum  # sum over pops of the events pending: / pops = mean queue length


cdef inline int eventq_init(eventq_t *q, int64_t cap) noexcept nogil:
    """Allocate room for ``cap`` events in the heap; -1 if out of memory."""
    cdef int k
    q.n = 0
    q.nsrcs = 0
    q.seq = 0
    q.pending_sum = 0
    for k in range(EVQ_KINDS):
        q.fifo[k].buf = NULL
        q.fifo[k].head = 0
        q.fifo[k].n = 0
        q.fifo[k].mask = -1
    return evheap_init(&q.heap, cap)


cdef inline void eventq_free(eventq_t *q) noexcept nogil:
    cdef int k
    free(q.heap.ev)
    q.heap.ev = NULL
    for k in range(EVQ_KINDS):
        free(q.fifo[k].buf)
        q.fifo[k].buf = NULL


cdef extern from *:
    """
    /* An event's place in the order, (t, key) as one unsigned 128-bit number: t's sign
       bit flipped, so that the unsigned order is the signed one, above the key. */
    typedef unsigned __int128 evorder_t;
    static inline evorder_t ev_order(int64_t t, uint64_t key) {
        return ((evorder_t)((uint64_t)t ^ 0x8000000000000000ULL) << 64) | key;
    }
    """
    # Cython sees a 64-bit integer; C compares the 128 bits, without a branch.
    ctypedef unsigned long long evorder_t
    evorder_t ev_order(int64_t t, uint64_t key) nogil


cdef inline bint ev_before(event_t *a, event_t *b) noexcept nogil:
    return ev_order(a.t, a.key) < ev_order(b.t, b.key)


cdef inline bint src_before(evsrc_t *a, evsrc_t *b) noexcept nogil:
    return ev_order(a.t, a.key) < ev_order(b.t, b.key)


# --- the heap of the FIFOs -------------------------------------------------

cdef inline void src_up(eventq_t *q, int64_t i) noexcept nogil:
    cdef evsrc_t s = q.srcs[i]
    cdef int64_t parent
    while i > 0:
        parent = (i - 1) >> 1
        if not src_before(&s, &q.srcs[parent]):
            break
        q.srcs[i] = q.srcs[parent]
        i = parent
    q.srcs[i] = s


cdef inline void src_down(eventq_t *q, int64_t i) noexcept nogil:
    cdef evsrc_t s = q.srcs[i]
    cdef int64_t child
    while True:
        child = 2 * i + 1
        if child >= q.nsrcs:
            break
        if child + 1 < q.nsrcs and src_before(&q.srcs[child + 1], &q.srcs[child]):
            child += 1
        if not src_before(&q.srcs[child], &s):
            break
        q.srcs[i] = q.srcs[child]
        i = child
    q.srcs[i] = s


cdef inline void src_add(eventq_t *q, int src, event_t *first) noexcept nogil:
    """A FIFO was empty and now has `first` as its first event."""
    cdef evsrc_t s
    s.t = first.t
    s.key = first.key
    s.src = src
    q.srcs[q.nsrcs] = s
    q.nsrcs += 1
    src_up(q, q.nsrcs - 1)


cdef inline void src_next(eventq_t *q, event_t *first) noexcept nogil:
    """The first FIFO gave its first event: `first` is its next one, or NULL."""
    if first == NULL:
        q.nsrcs -= 1
        if q.nsrcs == 0:
            return
        q.srcs[0] = q.srcs[q.nsrcs]
    else:
        q.srcs[0].t = first.t
        q.srcs[0].key = first.key
    src_down(q, 0)


# --- the FIFOs and the heap -------------------------------------------------

cdef inline int evheap_init(evheap_t *h, int64_t cap) noexcept nogil:
    """Allocate room for ``cap`` events; -1 if out of memory."""
    h.n = 0
    h.cap = cap if cap > 0 else 1
    h.ev = <event_t *> malloc(h.cap * sizeof(event_t))
    return -1 if h.ev == NULL else 0


cdef inline int fifo_grow(evfifo_t *f) noexcept nogil:
    """Double a FIFO's ring, its events from index 0; -1 if out of memory."""
    cdef int64_t size = f.mask + 1
    cdef int64_t cap = 2 * size if size > 0 else 64
    cdef event_t *buf = <event_t *> malloc(cap * sizeof(event_t))
    cdef int64_t first_part
    if buf == NULL:
        return -1
    if f.n > 0:
        first_part = min(f.n, size - f.head)
        memcpy(buf, &f.buf[f.head], first_part * sizeof(event_t))
        memcpy(&buf[first_part], f.buf, (f.n - first_part) * sizeof(event_t))
    free(f.buf)
    f.buf = buf
    f.head = 0
    f.mask = cap - 1
    return 0


cdef inline int evheap_push(evheap_t *h, event_t *ev) noexcept nogil:
    """Push into the heap (EVHEAP_D children a node); -1 if it could not grow."""
    cdef int64_t i, parent
    cdef event_t *grown
    if h.n == h.cap:
        grown = <event_t *> realloc(h.ev, 2 * h.cap * sizeof(event_t))
        if grown == NULL:
            return -1
        h.ev = grown
        h.cap *= 2
    i = h.n
    h.n += 1
    while i > 0:
        parent = (i - 1) >> EVHEAP_D_SHIFT
        if not ev_before(ev, &h.ev[parent]):
            break
        h.ev[i] = h.ev[parent]
        i = parent
    h.ev[i] = ev[0]
    return 0


cdef inline void evheap_pop(evheap_t *h) noexcept nogil:
    """Remove the heap's first event; it must not be empty."""
    cdef event_t last
    cdef int64_t i = 0, child, k, end, n
    cdef evorder_t last_order, best, order
    h.n -= 1
    n = h.n
    if n > 0:
        last = h.ev[n]
        last_order = ev_order(last.t, last.key)
        while True:
            child = (i << EVHEAP_D_SHIFT) + 1
            if child >= n:
                break
            # the earliest of the node's children, which sit side by side
            end = min(child + EVHEAP_D, n)
            best = ev_order(h.ev[child].t, h.ev[child].key)
            for k in range(child + 1, end):
                order = ev_order(h.ev[k].t, h.ev[k].key)
                if order < best:
                    best = order
                    child = k
            if best < last_order:
                h.ev[i] = h.ev[child]
                i = child
            else:
                break
        h.ev[i] = last


cdef inline event_t ev_make(uint64_t *seq, int64_t t, int prio, int kind, int target,
                            int64_t arg) noexcept nogil:
    """An event with the next seq of the counter *seq."""
    cdef event_t ev
    ev.t = t
    ev.key = (<uint64_t> prio << 63) | seq[0]
    seq[0] += 1
    ev.kind = kind
    ev.target = target
    ev.arg = arg
    return ev


cdef inline int eventq_push(eventq_t *q, int64_t t, int prio, int kind, int target,
                            int64_t arg) noexcept nogil:
    """Queue an event; -1 if out of memory."""
    cdef event_t ev = ev_make(&q.seq, t, prio, kind, target, arg)
    cdef evfifo_t *f
    q.n += 1
    # Any event may go to the heap: each source stays in order whatever the choice.
    if kind < 0 or kind >= EVQ_KINDS or q.n < EVQ_FIFO_MIN:
        return evheap_push(&q.heap, &ev)
    f = &q.fifo[kind]
    if f.n > 0 and ev_before(&ev, &f.buf[(f.head + f.n - 1) & f.mask]):
        return evheap_push(&q.heap, &ev)
    if f.n == f.mask + 1 and fifo_grow(f) < 0:
        return -1
    f.buf[(f.head + f.n) & f.mask] = ev
    f.n += 1
    if f.n == 1:
        src_add(q, kind, &f.buf[f.head])
    return 0


cdef inline bint heap_first(eventq_t *q) noexcept nogil:
    """Whether the first event is the heap's (rather than the first FIFO's)."""
    if q.nsrcs == 0:
        return True
    if q.heap.n == 0:
        return False
    return ev_order(q.heap.ev[0].t, q.heap.ev[0].key) < ev_order(q.srcs[0].t, q.srcs[0].key)


cdef inline event_t *eventq_first(eventq_t *q) noexcept nogil:
    """The first event, left queued; the queue must not be empty."""
    cdef evfifo_t *f
    if heap_first(q):
        return &q.heap.ev[0]
    f = &q.fifo[q.srcs[0].src]
    return &f.buf[f.head]


cdef inline event_t eventq_pop(eventq_t *q) noexcept nogil:
    """Remove and return the first event; the queue must not be empty."""
    cdef event_t top
    cdef evfifo_t *f
    q.pending_sum += q.n
    q.n -= 1
    if heap_first(q):
        top = q.heap.ev[0]
        evheap_pop(&q.heap)
    else:
        f = &q.fifo[q.srcs[0].src]
        top = f.buf[f.head]
        f.head = (f.head + 1) & f.mask
        f.n -= 1
        src_next(q, &f.buf[f.head] if f.n > 0 else NULL)
    return top
