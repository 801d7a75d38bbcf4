# Records of finished requests and grace periods, read back by Engine.requests() and grace_periods().
#
# Included by _core.pyx: module-level functions on the Engine.


cdef void records_init(Engine self, i64 expected_requests) except *:
    self.req_cap = max(16, expected_requests)
    self.req_task = <int *> malloc(self.req_cap * sizeof(int))
    self.req_cpu = <int *> malloc(self.req_cap * sizeof(int))
    self.req_prim = <signed char *> malloc(self.req_cap * sizeof(signed char))
    self.req_start = <i64 *> malloc(self.req_cap * sizeof(i64))
    self.req_end = <i64 *> malloc(self.req_cap * sizeof(i64))
    self.req_seq = <i64 *> malloc(self.req_cap * sizeof(i64))
    self.gprec_cap = 1024
    self.gprec_seq = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_start = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_end = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_qs = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_ipis = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_exp = <signed char *> malloc(self.gprec_cap * sizeof(signed char))
    self.gprec_fqs = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_last = <signed char *> malloc(self.gprec_cap * sizeof(signed char))
    if (self.req_task == NULL or self.req_cpu == NULL or self.req_prim == NULL
            or self.req_start == NULL or self.req_end == NULL or self.req_seq == NULL
            or self.gprec_seq == NULL or self.gprec_start == NULL or self.gprec_end == NULL
            or self.gprec_qs == NULL or self.gprec_ipis == NULL or self.gprec_exp == NULL
            or self.gprec_fqs == NULL or self.gprec_last == NULL):
        raise MemoryError()


cdef void record_request(Engine self, int e, i64 t_end) except *:
    cdef i64 cap
    if self.req_n == self.req_cap:
        cap = self.req_cap * 2
        self.req_task = <int *> realloc(self.req_task, cap * sizeof(int))
        self.req_cpu = <int *> realloc(self.req_cpu, cap * sizeof(int))
        self.req_prim = <signed char *> realloc(self.req_prim, cap * sizeof(signed char))
        self.req_start = <i64 *> realloc(self.req_start, cap * sizeof(i64))
        self.req_end = <i64 *> realloc(self.req_end, cap * sizeof(i64))
        self.req_seq = <i64 *> realloc(self.req_seq, cap * sizeof(i64))
        if (self.req_task == NULL or self.req_cpu == NULL or self.req_prim == NULL
                or self.req_start == NULL or self.req_end == NULL or self.req_seq == NULL):
            raise MemoryError()
        self.req_cap = cap
    self.req_task[self.req_n] = e
    self.req_cpu[self.req_n] = self.ents[e].cpu
    self.req_prim[self.req_n] = self.wl_prim[self.task_wl[e]]
    self.req_start[self.req_n] = self.ents[e].t_call
    self.req_end[self.req_n] = t_end
    self.req_seq[self.req_n] = self.ents[e].req_s
    self.req_n += 1
    if self.trace_on:
        trace(self, t_end, TR_TASK_RETURN, self.ents[e].cpu, e, self.ents[e].req_s,
                   self.wl_prim[self.task_wl[e]], 0)
    check_request(self, e, t_end)


cdef void record_gp(Engine self, int exp, i64 seq, i64 t0, i64 t_qs, i64 t1, i64 ipis, i64 fqs,
                    int last) except *:
    """A GP ended at t1: record it, and remember it for the safety checker."""
    cdef i64 cap
    if self.gprec_n == self.gprec_cap:
        cap = self.gprec_cap * 2
        self.gprec_seq = <i64 *> realloc(self.gprec_seq, cap * sizeof(i64))
        self.gprec_start = <i64 *> realloc(self.gprec_start, cap * sizeof(i64))
        self.gprec_end = <i64 *> realloc(self.gprec_end, cap * sizeof(i64))
        self.gprec_qs = <i64 *> realloc(self.gprec_qs, cap * sizeof(i64))
        self.gprec_ipis = <i64 *> realloc(self.gprec_ipis, cap * sizeof(i64))
        self.gprec_exp = <signed char *> realloc(self.gprec_exp, cap * sizeof(signed char))
        self.gprec_fqs = <i64 *> realloc(self.gprec_fqs, cap * sizeof(i64))
        self.gprec_last = <signed char *> realloc(self.gprec_last, cap * sizeof(signed char))
        if (self.gprec_seq == NULL or self.gprec_start == NULL or self.gprec_end == NULL
                or self.gprec_qs == NULL or self.gprec_ipis == NULL or self.gprec_exp == NULL
                or self.gprec_fqs == NULL or self.gprec_last == NULL):
            raise MemoryError()
        self.gprec_cap = cap
    self.gprec_seq[self.gprec_n] = seq
    self.gprec_start[self.gprec_n] = t0
    self.gprec_end[self.gprec_n] = t1
    self.gprec_qs[self.gprec_n] = t_qs
    self.gprec_ipis[self.gprec_n] = ipis
    self.gprec_exp[self.gprec_n] = exp
    self.gprec_fqs[self.gprec_n] = fqs
    self.gprec_last[self.gprec_n] = last
    self.gprec_n += 1
    self.last_gp_start[exp] = t0
    self.last_gp_seq[exp] = seq
    self.gp_completions[exp] += 1
