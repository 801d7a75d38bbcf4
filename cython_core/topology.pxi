# The machine's topology: the core, LLC and socket of each CPU, and what a cache-line
# transfer between two CPUs costs at each distance (the profile's line_ns).
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void topology_init(Engine self, s) except *:
    """Core, LLC and socket of each CPU (after the CPUs exist)."""
    cdef int c
    self.has_topology = len(s.cpu_core) > 0
    for c in range(4):
        self.line_ns[c] = s.line_ns[c]
    if not self.has_topology:
        return
    self.cpu_core = <int32_t *> malloc(self.nr_cpus * sizeof(int32_t))
    self.cpu_llc = <int32_t *> malloc(self.nr_cpus * sizeof(int32_t))
    self.cpu_socket = <int32_t *> malloc(self.nr_cpus * sizeof(int32_t))
    if self.cpu_core == NULL or self.cpu_llc == NULL or self.cpu_socket == NULL:
        raise MemoryError()
    for c in range(self.nr_cpus):
        self.cpus[c].rq_lock_cpu = c
        self.cpu_core[c] = s.cpu_core[c]
        self.cpu_llc[c] = s.cpu_llc[c]
        self.cpu_socket[c] = s.cpu_socket[c]


cdef inline i64 line_cost(Engine self, int a, int b) noexcept:
    """One cache-line transfer between CPUs a and b."""
    if self.cpu_core[a] == self.cpu_core[b]:
        return self.line_ns[0]
    if self.cpu_llc[a] == self.cpu_llc[b]:
        return self.line_ns[1]
    if self.cpu_socket[a] == self.cpu_socket[b]:
        return self.line_ns[2]
    return self.line_ns[3]
