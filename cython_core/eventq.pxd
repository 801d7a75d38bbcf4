# cython: language_level=3
"""The event queue both engines share: a binary heap of event_t ordered by
(t, prio, seq), so that events at the same time fire urgent first, then in the
order they were pushed.  prio and seq share one word (prio in the top bit),
so that an event is 32 bytes and one comparison orders the tie.  Growing the
heap doubles its capacity."""

from libc.stdint cimport int64_t, uint64_t, int32_t
from libc.stdlib cimport malloc, realloc, free


cdef struct event_t:
    int64_t t            # when the event fires (ns)
    uint64_t key         # prio << 63 | seq: PRIO_URGENT (0) before PRIO_NORMAL (1)
                         # at equal t, then FIFO by the insertion counter seq
    int32_t kind         # EV_*
    int32_t target       # CPU, entity, group or thread index, by kind
    int64_t arg          # generation number or payload, by kind


cdef struct eventq_t:
    event_t *heap
    int64_t n            # events pending
    int64_t cap          # events the heap can hold
    uint64_t seq         # the next event's seq (below 2**63)
    int64_t pending_sum  # sum over pops of the events pending: / pops = mean queue length


cdef inline int eventq_init(eventq_t *q, int64_t cap) noexcept nogil:
    """Allocate room for ``cap`` events; -1 if out of memory."""
    q.n = 0
    q.seq = 0
    q.pending_sum = 0
    q.cap = cap if cap > 0 else 1
    q.heap = <event_t *> malloc(q.cap * sizeof(event_t))
    return -1 if q.heap == NULL else 0


cdef inline void eventq_free(eventq_t *q) noexcept nogil:
    free(q.heap)
    q.heap = NULL


cdef inline bint ev_before(event_t *a, event_t *b) noexcept nogil:
    if a.t != b.t:
        return a.t < b.t
    return a.key < b.key


cdef inline int eventq_grow(eventq_t *q) noexcept nogil:
    """Double the heap's capacity; -1 if out of memory."""
    cdef event_t *grown = <event_t *> realloc(q.heap, 2 * q.cap * sizeof(event_t))
    if grown == NULL:
        return -1
    q.heap = grown
    q.cap *= 2
    return 0


cdef inline int eventq_push(eventq_t *q, int64_t t, int prio, int kind, int target,
                            int64_t arg) noexcept nogil:
    """Queue an event; -1 if the heap could not grow."""
    cdef int64_t i, parent
    cdef event_t ev
    if q.n == q.cap and eventq_grow(q) < 0:
        return -1
    ev.t = t
    ev.key = (<uint64_t> prio << 63) | q.seq
    q.seq += 1
    ev.kind = kind
    ev.target = target
    ev.arg = arg
    i = q.n
    q.n += 1
    while i > 0:
        parent = (i - 1) >> 1
        if ev_before(&ev, &q.heap[parent]):
            q.heap[i] = q.heap[parent]
            i = parent
        else:
            break
    q.heap[i] = ev
    return 0


cdef inline event_t eventq_pop(eventq_t *q) noexcept nogil:
    """Remove and return the first event; the queue must not be empty."""
    cdef event_t top = q.heap[0]
    cdef event_t last
    cdef int64_t i = 0, child, n
    q.pending_sum += q.n
    q.n -= 1
    n = q.n
    if n > 0:
        last = q.heap[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and ev_before(&q.heap[child + 1], &q.heap[child]):
                child += 1
            if ev_before(&q.heap[child], &last):
                q.heap[i] = q.heap[child]
                i = child
            else:
                break
        q.heap[i] = last
    return top
