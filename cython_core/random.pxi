# Random draws: one stream (the NumPy BitGenerator the engine is built with), drawn
# in event order, so that a scenario and a seed give one result. Every draw of the
# engine goes through these functions: the idle-exit latency, the noise workload,
# the readers' and call_rcu_load's exponential gaps, torture_random() sleeps and
# kfree_rcu() forms.
#
# Included by _core.pyx: module-level functions on the Engine.


cdef inline double random_unit(Engine self) noexcept:
    """Uniform on [0, 1)."""
    return self.rng.next_double(self.rng.state)


cdef inline uint32_t random_u32(Engine self) noexcept:
    """torture_random()'s 32 bits."""
    return self.rng.next_uint32(self.rng.state)


cdef double std_normal(Engine self) noexcept:
    """Box-Muller; the second value of each pair is kept for the next draw."""
    cdef double u1, u2, r
    if self.have_spare:
        self.have_spare = 0
        return self.spare
    u1 = random_unit(self)
    u2 = random_unit(self)
    if u1 < 1e-300:
        u1 = 1e-300
    r = sqrt(-2.0 * log(u1))
    self.spare = r * cos(2.0 * 3.141592653589793 * u2 + 1.5707963267948966)
    self.have_spare = 1
    return r * cos(2.0 * 3.141592653589793 * u2)


cdef i64 exponential_ns(Engine self, i64 mean) noexcept:
    """An exponential draw of the given mean (0 stays 0)."""
    if mean <= 0:
        return 0
    return <i64> (-mean * log(1.0 - random_unit(self)))


cdef inline i64 lognormal_ns(Engine self, double mu, double sigma) noexcept:
    return <i64> exp(mu + sigma * std_normal(self))


cdef i64 quantile_draw_ns(Engine self, i64[::1] q, i64[::1] tail) noexcept:
    """A draw from a measured distribution given by its quantiles at evenly spaced levels
    from 0 to 1, and those of its last interval (`tail`, evenly spaced over that interval's
    levels): uniform between the two neighbours a uniform level falls between."""
    cdef double x = random_unit(self) * (q.shape[0] - 1)
    cdef int i = <int> x
    if i == q.shape[0] - 2:
        x = (x - i) * (tail.shape[0] - 1)  # the level within the last interval
        i = <int> x
        return tail[i] + <i64> ((x - i) * (tail[i + 1] - tail[i]))
    return q[i] + <i64> ((x - i) * (q[i + 1] - q[i]))
