"""The fair class (kernel/sched/fair.c), written apart from the engine's
``cython_core/fair.pxi``: EEVDF from v6.6, CFS before, nice weights.

A CPU's queued fair entities are a plain list here (the running one is not
among them); picks scan it. Keys and tie-breaks are the kernel's: deadline
(EEVDF) or vruntime (CFS), then enqueue order.
"""

from __future__ import annotations

from rcusim.kernel.fair import POLICY_CFS, POLICY_EEVDF, calc_delta_fair


def _trunc_div(a: int, b: int) -> int:
    """div_s64(): division rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class CfsRq:
    """struct cfs_rq of one CPU."""

    def __init__(self, sim, cpu):
        self.cpu = cpu
        self.policy = sim.inp.fair.fair_policy
        self.base_slice = sim.inp.fair.base_slice_ns
        self.latency = sim.inp.fair.sched_latency_ns
        self.min_gran = sim.inp.fair.min_gran_ns
        self.wakeup_gran = sim.inp.fair.wakeup_gran_ns
        self.nr_latency = sim.inp.fair.nr_latency
        self.tick_ns = sim.inp.sched.jiffy_ns
        self.eevdf_delay_dequeue = bool(sim.inp.fair.eevdf_delay_dequeue)
        self.eevdf_preempt_short = bool(sim.inp.fair.eevdf_preempt_short)
        self.sim = sim
        self.queued = []          # the queued entities (not the running one)
        self.min_vruntime = 0
        self.next_buddy = None
        self.last_buddy = None

    # --- keys, V, eligibility --------------------------------------------------
    def key(self, e):
        return (e.deadline if self.policy == POLICY_EEVDF else e.vruntime, e.seq)

    def curr(self):
        """The running fair entity, or None."""
        return self.cpu.fair_curr()

    def _sums(self):
        v0, members = self.min_vruntime, list(self.queued)
        cur = self.curr()
        if cur is not None:
            members.append(cur)
        return sum((e.vruntime - v0) * e.weight for e in members), sum(e.weight for e in members)

    def avg_vruntime(self) -> int:
        total, load = self._sums()
        return self.min_vruntime + (total // load if load else 0)

    def eligible(self, e) -> bool:
        total, load = self._sums()
        return total >= (e.vruntime - self.min_vruntime) * load

    def update_min_vruntime(self, curr_on_rq: bool = True) -> None:
        cur = self.curr() if curr_on_rq else None
        v = self.min_vruntime
        if cur is not None:
            v = cur.vruntime
        if self.queued:
            left = min(e.vruntime for e in self.queued)
            if cur is None or left < v:
                v = left
        self.min_vruntime = max(self.min_vruntime, v)

    # --- accounting -------------------------------------------------------------
    def update_curr(self) -> bool:
        """Charge the running entity; EEVDF: renew a reached deadline. Returns whether
        that asks for a reschedule (update_curr()'s resched_curr(), whoever updated it):
        a renewed deadline, or from v6.12 did_preempt_short()."""
        cur = self.curr()
        if cur is None:
            return False
        now = self.sim.env.now
        delta = now - cur.exec_start
        if delta <= 0:
            return False
        cur.exec_start = now
        cur.sum_exec += delta
        cur.vruntime += calc_delta_fair(delta, cur.weight)
        if self.policy == POLICY_EEVDF:
            resched = cur.vruntime >= cur.deadline
            if resched:
                cur.deadline = cur.vruntime + calc_delta_fair(self.base_slice, cur.weight)
            if not self.queued:
                return False
            # did_preempt_short(): past its picked request and no longer eligible.
            return resched or (self.eevdf_preempt_short and cur.vlag != cur.deadline
                               and not self.eligible(cur))
        self.update_min_vruntime()
        return False

    def insert(self, e) -> None:
        self.sim.fair_seq += 1
        e.seq = self.sim.fair_seq
        self.queued.append(e)

    def sched_slice(self, e) -> int:
        cur = self.curr()
        members = list(self.queued) + ([cur] if cur is not None else [])
        if e not in members:
            members.append(e)
        nr, load = len(members), sum(x.weight for x in members)
        period = nr * self.min_gran if nr > self.nr_latency else self.latency
        return max(period * e.weight // load, self.min_gran)

    def place(self, e) -> None:
        if self.policy == POLICY_EEVDF:
            V = self.avg_vruntime()
            vslice = calc_delta_fair(self.base_slice, e.weight)
            lag = 0
            cur = self.curr()
            if self.queued or cur is not None:
                load = sum(x.weight for x in self.queued) + (cur.weight if cur is not None else 0)
                lag = e.vlag * (load + e.weight)
                lag = _trunc_div(lag, load or 1)
            e.vruntime = V - lag
            if e.initial:
                vslice //= 2
            e.deadline = e.vruntime + vslice
        else:
            if e.initial:
                v = self.min_vruntime + calc_delta_fair(self.sched_slice(e), e.weight)
            else:
                v = self.min_vruntime - self.latency // 2
            if v > e.vruntime or e.initial:
                e.vruntime = v
        e.initial = False

    # --- the class's operations ---------------------------------------------------
    def enqueue_wakeup(self, e) -> bool:
        """enqueue_entity() of a woken e; returns whether its update_curr() rescheduled the
        running entity."""
        curr_resched = self.update_curr()
        self.place(e)
        self.insert(e)
        return curr_resched

    def put_prev(self, e) -> None:
        self.update_curr()
        self.insert(e)

    def lag(self, e) -> int:
        """update_entity_lag(): V minus e's vruntime, clamped to max(2 slices, a tick)."""
        limit = calc_delta_fair(max(2 * self.base_slice, self.tick_ns), e.weight)
        return min(max(self.avg_vruntime() - e.vruntime, -limit), limit)

    def sleep(self, e) -> bool:
        """The running e sleeps; True if DELAY_DEQUEUE keeps it queued (the caller puts it
        back in the queue once it no longer runs)."""
        self.update_curr()
        if self.policy == POLICY_EEVDF:
            if self.eevdf_delay_dequeue and not self.eligible(e):
                e.sched_delayed = True
                return True
            e.vlag = self.lag(e)
        else:
            if self.next_buddy is e:
                self.next_buddy = None
            if self.last_buddy is e:
                self.last_buddy = None
            self.update_min_vruntime(curr_on_rq=False)
        return False

    def finish_delayed_dequeue(self, e) -> None:
        """A delayed e leaves the queue: its lag taken there, then dropped if positive."""
        e.vlag = min(self.lag(e), 0)
        self.queued.remove(e)
        e.sched_delayed = False

    def requeue_delayed(self, e) -> None:
        """A delayed e is woken: runnable where it is, placed again with no lag if its lag
        turned positive (DELAY_ZERO)."""
        e.vlag = self.lag(e)
        if e.vlag > 0:
            self.queued.remove(e)
            e.vlag = 0
            self.place(e)
            self.insert(e)
        e.sched_delayed = False

    def pick_eevdf(self, cur=None):
        if cur is not None and not self.eligible(cur):
            cur = None
        if cur is not None and cur.vlag == cur.deadline:
            return cur
        candidates = [e for e in self.queued if self.eligible(e)]
        best = min(candidates, key=self.key) if candidates else None
        if best is None or (cur is not None and cur.deadline < best.deadline):
            return cur if cur is not None else best
        return best

    def wakeup_preempt_entity(self, cur, e) -> bool:
        return cur.vruntime - e.vruntime > calc_delta_fair(self.wakeup_gran, e.weight)

    def pick(self):
        """Take the next entity off the queue (set_next_entity()); None if empty."""
        if not self.queued:
            return None
        if self.policy == POLICY_EEVDF:
            e = self.pick_eevdf()
            while e.sched_delayed:  # dequeued when picked; pick again
                self.finish_delayed_dequeue(e)
                if not self.queued:
                    return None
                e = self.pick_eevdf()
        else:
            left = min(self.queued, key=self.key)
            e = left
            if self.next_buddy is not None and not self.wakeup_preempt_entity(self.next_buddy, left):
                e = self.next_buddy
            elif self.last_buddy is not None and not self.wakeup_preempt_entity(self.last_buddy, left):
                e = self.last_buddy
            if self.next_buddy is e:
                self.next_buddy = None
            if self.last_buddy is e:
                self.last_buddy = None
        self.queued.remove(e)
        e.exec_start = self.sim.env.now
        e.prev_sum_exec = e.sum_exec
        e.vlag = e.deadline
        return e

    def wakeup_preempt(self, e) -> bool:
        cur = self.curr()
        if cur is None:
            return False
        curr_resched = self.update_curr()
        if self.policy == POLICY_EEVDF:
            return curr_resched or self.pick_eevdf(cur) is e
        if not self.wakeup_preempt_entity(cur, e):
            return False
        self.next_buddy = e
        if len(self.queued) + 1 >= self.nr_latency:
            self.last_buddy = cur
        return True

    def tick_resched(self) -> bool:
        cur = self.curr()
        if cur is None:
            return False
        if self.policy == POLICY_EEVDF:
            return self.update_curr()
        self.update_curr()
        if not self.queued:
            return False
        ideal = self.sched_slice(cur)
        ran = cur.sum_exec - cur.prev_sum_exec
        if ran > ideal:
            if self.next_buddy is cur:
                self.next_buddy = None
            if self.last_buddy is cur:
                self.last_buddy = None
            return True
        if ran < self.min_gran:
            return False
        left = min(self.queued, key=self.key)
        return cur.vruntime - left.vruntime > ideal


__all__ = ["CfsRq", "POLICY_CFS", "POLICY_EEVDF"]
