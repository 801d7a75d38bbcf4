# Tracepoints enabled in the kernel (trace_event= on its command line): each
# event recorded costs the CPU that records it the profile's price of one traced
# event (measured in a guest as the gap between two tracepoints with nothing
# between them). A kernel measured with tracing on is slower by that much; rcusim
# beside it pays the same. Each site names the kernel function that records the
# event; rcusim's own trace buffer (trace.pxi) is a separate, free record.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef int tracepoint_init(Engine self, x) except -1:
    self.tp_on = x.events
    self.tp_ns = x.event_ns
    self.tp_irq_ns = x.event_irq_ns
    return 0


cdef inline i64 tp_record(Engine self, int tp, int n, i64 ns) noexcept:
    """n events of tracepoint tp at `ns` each, counted: their cost, 0 if tp is off."""
    if not self.tp_on & tp:
        return 0
    self.n_tp_events += n
    self.n_tp_ns += n * ns
    return n * ns


cdef inline i64 tp_cost(Engine self, int tp, int n) noexcept:
    """n events of tracepoint tp in task context: their cost, 0 if tp is off."""
    return tp_record(self, tp, n, self.tp_ns)


cdef inline void tp_acc(Engine self, int tp, int n) noexcept:
    """n events of tp recorded by the action running now: they extend it."""
    self.acc += tp_cost(self, tp, n)


cdef inline void tp_debt(Engine self, int c, int tp, i64 ns) noexcept:
    """One event of tp recorded on CPU c outside a priced action (ns: the task or
    interrupt price): c pays it before its next step."""
    if c >= 0:
        self.cpus[c].debt += tp_record(self, tp, 1, ns)
