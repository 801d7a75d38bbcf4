# A KVM guest's idle: each CPU is a vCPU whose idle loop executes HLT (a guest
# without a cpuidle driver runs default_idle() with its tick stopped), and HLT
# exits to the host's kvm_vcpu_halt() (virt/kvm/kvm_main.c).  The host polls
# for a wake-up for vcpu->halt_poll_ns before it blocks the vCPU thread; a
# wake-up found by the poll loop costs the re-entry into the guest, one that
# finds the thread blocked costs a host try_to_wake_up() on an idle pCPU as
# well.  After each halt the host grows or shrinks halt_poll_ns by what the
# halt lasted.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void kvm_init(Engine self, s) noexcept:
    """The host's halt-polling parameters; each vCPU starts with halt_poll_ns 0
    (struct kvm_vcpu is zeroed when the vCPU is created)."""
    cdef int c
    for c in range(self.nr_cpus):
        self.cpus[c].halt_irq_lat = -1
    self.halt_poll = s.halt_poll
    self.halt_poll_max_ns = s.halt_poll_max_ns
    self.halt_poll_grow = s.halt_poll_grow
    self.halt_poll_grow_start = s.halt_poll_grow_start
    self.halt_poll_shrink = s.halt_poll_shrink
    self.halt_wake_polled_ns = s.halt_wake_polled_ns
    self.halt_wake_blocked_ns = s.halt_wake_blocked_ns


cdef void grow_halt_poll_ns(Engine self, cpu_t *cp) noexcept:
    cdef i64 val = cp.halt_poll_ns * self.halt_poll_grow
    if not self.halt_poll_grow:
        return
    if val < self.halt_poll_grow_start:
        val = self.halt_poll_grow_start
    cp.halt_poll_ns = val


cdef void shrink_halt_poll_ns(Engine self, cpu_t *cp) noexcept:
    cdef i64 val = 0 if self.halt_poll_shrink == 0 else cp.halt_poll_ns // self.halt_poll_shrink
    if val < self.halt_poll_grow_start:
        val = 0
    cp.halt_poll_ns = val


cdef i64 kvm_vcpu_halt(Engine self, int c) noexcept:
    """The HLT of vCPU c ends now: what the host spends before the guest runs
    again, and kvm_vcpu_halt()'s update of halt_poll_ns."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 halt_ns, lat
    cdef bint waited
    if cp.halt_poll_ns > self.halt_poll_max_ns:
        cp.halt_poll_ns = self.halt_poll_max_ns
    # The poll loop runs until start + halt_poll_ns (kvm_vcpu_can_poll()).
    waited = not (cp.halt_poll_ns and self.now - cp.halt_start <= cp.halt_poll_ns)
    if waited:
        lat = self.halt_wake_blocked_ns
        self.n_halt_blocked += 1
    else:
        lat = self.halt_wake_polled_ns
        self.n_halt_polled += 1
    halt_ns = self.now + lat - cp.halt_start  # read after the vCPU thread runs again
    if self.halt_poll_max_ns:
        if halt_ns <= cp.halt_poll_ns:
            pass
        elif cp.halt_poll_ns and halt_ns > self.halt_poll_max_ns:
            shrink_halt_poll_ns(self, cp)  # a long block: polling did not pay
        elif cp.halt_poll_ns < self.halt_poll_max_ns and halt_ns < self.halt_poll_max_ns:
            grow_halt_poll_ns(self, cp)  # a short halt that the poll just missed
    else:
        cp.halt_poll_ns = 0
    return lat


cdef void kvm_vcpu_irq(Engine self, int c) noexcept:
    """An interrupt ended the HLT of idle vCPU c; the idle loop halts again
    after its handler, unless the handler woke an entity there (kvm_vcpu_wake())."""
    self.cpus[c].halt_irq_lat = kvm_vcpu_halt(self, c)
    self.cpus[c].halt_start = self.now


cdef i64 kvm_vcpu_wake(Engine self, int c) noexcept:
    """An entity queued on idle vCPU c: the end of its HLT, or, when an interrupt ended
    that HLT at this very time (its handler queued the entity), the same return."""
    cdef cpu_t *cp = &self.cpus[c]
    cdef i64 lat = cp.halt_irq_lat
    if lat >= 0 and cp.halt_start == self.now:
        cp.halt_irq_lat = -1
        return lat
    return kvm_vcpu_halt(self, c)
