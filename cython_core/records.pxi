# Records of finished requests and grace periods, read back by Engine.requests(),
# latency_digest() and grace_periods().
#
# Every finished request goes into its primitive's digest: count, sum, least and
# greatest latency, bcc's log2 histogram, a log-linear histogram (latency.pxd), and the
# sums of its time breakdown against the grace period that satisfied it. Its row
# (task, CPU, primitive, call and return: 25 bytes) is kept for every request
# (RECORDS_ALL), for a hashed fraction of them (RECORDS_SAMPLE) or for none.
# The rows live in NumPy arrays, so that reading them back copies nothing. With a row
# sink (Engine.stream_rows()), the arrays hold one chunk: each time they fill, the sink
# takes their rows and they start again, so a run's rows need not fit in memory.
#
# Included by _core.pyx: module-level functions on the Engine.

REQUEST_DTYPES = {"task": np.int32, "cpu": np.int32, "primitive": np.int8, "t_start_ns": np.int64,
                  "t_end_ns": np.int64}


cdef void records_point(Engine self) except *:
    """Point the row pointers at the NumPy arrays of req_cols."""
    cdef int[::1] task = self.req_cols["task"]
    cdef int[::1] cpu = self.req_cols["cpu"]
    cdef signed char[::1] prim = self.req_cols["primitive"]
    cdef i64[::1] start = self.req_cols["t_start_ns"]
    cdef i64[::1] end = self.req_cols["t_end_ns"]
    self.req_task = &task[0]
    self.req_cpu = &cpu[0]
    self.req_prim = &prim[0]
    self.req_start = &start[0]
    self.req_end = &end[0]


cdef void records_resize(Engine self, i64 cap) except *:
    """Move the rows into arrays of cap rows (cap >= req_n)."""
    cols = {}
    for name, dtype in REQUEST_DTYPES.items():
        cols[name] = np.empty(cap, dtype=dtype)
        cols[name][:self.req_n] = self.req_cols[name][:self.req_n]
    self.req_cols = cols
    self.req_cap = cap
    records_point(self)


cdef void records_init(Engine self, rec) except *:
    cdef int p
    cdef i64 expected_requests = rec.expected_requests
    cdef int mode = rec.mode
    cdef u64 sample_below = rec.sample_below
    self.records_mode = mode
    self.sample_below = sample_below
    if mode == RECORDS_ALL:
        self.req_cap = max(16, expected_requests)
    elif mode == RECORDS_SAMPLE:
        # The expected share of the rows, and room for chance to exceed it.
        self.req_cap = max(16, <i64> (expected_requests * (sample_below / 2.0 ** 64) * 1.01) + 1024)
    else:
        self.req_cap = 16
    self.req_cols = {name: np.empty(self.req_cap, dtype=dtype) for name, dtype in REQUEST_DTYPES.items()}
    records_point(self)
    for p in range(PRIM_N):
        self.lat_min_ns[p] = INT64_MAX
        self.lat_fine[p] = <i64 *> calloc(FINE_SLOTS, sizeof(i64))
        if self.lat_fine[p] == NULL:
            raise MemoryError()
    self.gprec_cap = 1024
    self.gprec_seq = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_start = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_end = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_qs = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_ipis = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_exp = <signed char *> malloc(self.gprec_cap * sizeof(signed char))
    self.gprec_fqs = <i64 *> malloc(self.gprec_cap * sizeof(i64))
    self.gprec_last = <signed char *> malloc(self.gprec_cap * sizeof(signed char))
    if (self.gprec_seq == NULL or self.gprec_start == NULL or self.gprec_end == NULL
            or self.gprec_qs == NULL or self.gprec_ipis == NULL or self.gprec_exp == NULL
            or self.gprec_fqs == NULL or self.gprec_last == NULL):
        raise MemoryError()


cdef void records_free(Engine self) noexcept:
    cdef int p
    for p in range(PRIM_N):
        free(self.lat_fine[p])
    free(self.cbl_fine)
    free(self.gprec_seq)
    free(self.gprec_start)
    free(self.gprec_end)
    free(self.gprec_qs)
    free(self.gprec_ipis)
    free(self.gprec_exp)
    free(self.gprec_fqs)
    free(self.gprec_last)


cdef i64 satisfying_gp(Engine self, int prim, i64 snap) noexcept:
    """Index of the first recorded GP of the primitive's kind whose end value,
    rcu_seq_endval() of its in-progress gp_seq, is the request's snapshot; -1 if none.
    Within a kind, end values grow with the index, so the walk back is short."""
    cdef i64 i, end, found = -1
    for i in range(self.gprec_n - 1, -1, -1):
        if self.gprec_exp[i] != prim:
            continue
        end = (self.gprec_seq[i] | 3) + 1
        if end == snap:
            found = i
        elif end < snap:
            break
    return found


cdef void record_callback(Engine self, i64 t, i64 lat) noexcept:
    """A call_rcu_load callback ends at t, `lat` ns after its call_rcu(); one that a
    batch computed past the run's end is left pending."""
    if t > self.until_ns:
        return
    self.cbl_count += 1
    self.cbl_sum_ns += lat
    if self.cbl_min_ns < 0 or lat < self.cbl_min_ns:
        self.cbl_min_ns = lat
    if lat > self.cbl_max_ns:
        self.cbl_max_ns = lat
    self.cbl_fine[fine_slot(lat)] += 1


cdef inline u64 requests_done(Engine self) noexcept:
    """Requests finished so far, of every primitive."""
    cdef u64 n = 0
    cdef int p
    for p in range(PRIM_N):
        n += self.lat_count[p]
    return n


cdef int record_request(Engine self, int e, i64 t_end) except -1:
    cdef int prim = self.wl_prim[self.task_wl[e]]
    cdef i64 t_call = self.ents[e].t_call
    cdef i64 lat = t_end - t_call
    # A call_rcu_hurry() waits for no grace period.
    cdef i64 g = satisfying_gp(self, prim, self.ents[e].req_s) if prim != PRIM_CALL_RCU_HURRY else -1
    cdef i64 woken, queued
    cdef u64 nth = requests_done(self)
    self.lat_count[prim] += 1
    self.lat_sum_ns[prim] += lat
    self.lat_min_ns[prim] = min(self.lat_min_ns[prim], lat)
    self.lat_max_ns[prim] = max(self.lat_max_ns[prim], lat)
    self.lat_log2_us[prim][log2_slot(lat // 1000)] += 1
    self.lat_fine[prim][fine_slot(lat)] += 1
    if g >= 0:
        self.bd_n[prim] += 1
        self.bd_sum_ns[prim][0] += self.gprec_start[g] - t_call
        self.bd_sum_ns[prim][1] += self.gprec_qs[g] - self.gprec_start[g]
        self.bd_sum_ns[prim][2] += self.gprec_end[g] - self.gprec_qs[g]
        # The caller's last wake-up, if it came after this GP's end (a call that
        # never slept counts all of its return as run-queue time).
        woken = min(max(self.ents[e].t_woken, self.gprec_end[g]), t_end)
        queued = min(max(self.ents[e].t_queued, woken), t_end)
        self.bd_sum_ns[prim][3] += woken - self.gprec_end[g]
        self.bd_sum_ns[prim][4] += queued - woken
        self.bd_sum_ns[prim][5] += t_end - queued
    if self.records_mode == RECORDS_ALL or (self.records_mode == RECORDS_SAMPLE
                                            and splitmix64(nth) < self.sample_below):
        if self.req_n == self.req_cap:
            if self.row_sink is None:
                records_resize(self, 2 * self.req_cap)
            else:
                self.row_sink(self.requests(), self.req_n)
                self.req_n = 0
        self.req_task[self.req_n] = e
        self.req_cpu[self.req_n] = self.ents[e].cpu
        self.req_prim[self.req_n] = prim
        self.req_start[self.req_n] = t_call
        self.req_end[self.req_n] = t_end
        self.req_n += 1
    if self.trace_on:
        trace(self, t_end, TR_TASK_RETURN, self.ents[e].cpu, e, self.ents[e].req_s, prim, 0)
    check_request(self, e, t_end)
    return 0


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
