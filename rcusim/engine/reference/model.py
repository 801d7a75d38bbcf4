"""The reference model: rcu_state, the CPUs and entities, the run and its records.

:func:`run_reference` takes exactly the input the compiled engine takes (an
``EngineInput``, built by ``rcusim.engine.engine_input.engine_input``) and
returns the same records. The idle-exit latency is drawn as the engine draws
it (Box-Muller on the same PCG64 stream, one draw per wake-up of an idle CPU),
so with the same seed the two usually produce identical records. They may
differ where:

* events fall on the same instant: SimPy orders them by its own
  ``(time, priority, id)`` and resumes processes one step later, so the
  contract between the two is agreement in distribution;
* the GP kthread's own CPU has callbacks when a grace period ends:
  rcu_gp_cleanup() here notes them inside the cleanup walk, before
  rcu_future_gp_cleanup() looks for further requests, as the kernel does.
"""

from __future__ import annotations

import math
from collections import deque
from contextlib import contextmanager

import numpy as np
import simpy

from rcusim import _core
from rcusim.engine.engine_input import EngineInput, engine_input
from rcusim.engine.reference import placement, sched, tree, tree_callbacks, tree_exp, tree_gp
from rcusim.engine.reference.cpuidle import cpuidle_init
from rcusim.engine.reference.locking import SleepingMutex
from rcusim.engine.reference.sched import RUNNABLE, Cpu, Entity
from rcusim.engine.reference.sync_loop import futex_wake_release, sync_loop
from rcusim.engine.reference.tree import RcuData, RcuNode
from rcusim.engine.reference.tree_callbacks import ksoftirqd
from rcusim.engine.reference.tree_sr_normal import rcu_sr_normal_gp_cleanup_work
from rcusim.kernel.fair import NICE_0_LOAD, weight_of

COUNTERS = ("context_switches", "callbacks_invoked", "wakeups", "delayed_dequeues", "wakeups_local",
            "wakeups_remote_enqueue", "wakeups_polling", "wakeups_ipi", "rq_lock_wait_ns", "idle_exits",
            "idle_exit_latency_ns", "rcu_core_passes",
            "ticks", "fqs_scans", "rnp_lock_wait_ns", "resched_ipis", "preemptions", "gp_kthread_wakeups",
            "exp_ipis", "exp_ipis_deferred", "exp_funnel_waits", "exp_mutex_waits", "exp_mutex_steals",
            "ksoftirqd_wakeups", "softirq_restarts_irq_exit")


class CountingEnvironment(simpy.Environment):
    """A SimPy environment that counts the events it processes."""

    def __init__(self):
        super().__init__()
        self.events_processed = 0

    def step(self) -> None:
        self.events_processed += 1
        simpy.Environment.step(self)


class Model:
    """rcu_state plus the machine it runs on, built from the engine's inputs."""

    # Hooks through which a module calls one that imports it, so that imports run one way:
    # the scheduler calls the tree, the tree the softirq, the GP kthread and expedited GPs,
    # the callback list the tree's GP funnel, a mutex the scheduler.
    rcu_sched_clock_irq = tree.rcu_sched_clock_irq
    rcu_softirq = tree_callbacks.rcu_softirq
    rcu_start_this_gp = tree.rcu_start_this_gp
    rcu_gp_kthread_wake = tree_gp.rcu_gp_kthread_wake
    rcu_report_exp_rdp = tree_exp.rcu_report_exp_rdp
    wake_from_acc = sched.wake_from_acc

    def __init__(self, inp: EngineInput, seed: int):
        _check_scope(inp)
        self.inp = p = inp
        self.env = CountingEnvironment()
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
        self.spare = None
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.acc = 0               # CPU time of the action in progress (lock rounds, wake-ups)
        self.softirq_wake0 = 0     # local wake-ups counted when the softirq computed now began
        self.in_gp_kthread = False

        # rcu_state
        self.gp_seq = p.tree.gp_seq_init
        self.gp_flags = 0
        self.gp_state = tree_gp.RCU_GP_IDLE
        self.gp_start = 0
        self.gp_qs_t = 0           # when the root's qsmask emptied
        self.fqs_deadline = 0
        self.gp_timer_gen = 0
        self.gp_timer_expires = 0  # when the FQS wait's timer fires (ns)
        self.fair_seq = 0          # enqueue order of fair entities
        self.gp_kthread = None
        self.gp_nfqs = 0           # FQS scans in the current GP
        self.gp_last_qs = -1       # whose report emptied the root (LAST_QS_KINDS)
        self.last_idle_cpu = None  # the CPU that went idle last (holds the top migrator level)
        self.srs_next, self.srs_wait, self.srs_done = deque(), deque(), deque()
        self.srs_heads_inuse = 0
        self.srs_done_heads = 0
        # expedited GPs: rcu_state.expedited_sequence and the kworker's state
        self.exp_seq = 0
        self.exp_mutex = SleepingMutex(bool(p.tree_exp.exp_mutex_rt))
        self.exp_phase = tree_exp.EXP_IDLE
        self.exp_work_queued = False
        self.exp_par_pending = 0     # per-leaf selections not yet flushed
        self.exp_gp_start = self.exp_gp_qs = 0
        self.exp_gp_ipis = 0

        # The rcu_node tree, breadth first; every CPU online from the start.
        self.nodes = [RcuNode(int(par), int(m), int(lo), int(hi), self.gp_seq)
                      for par, m, lo, hi in zip(inp.tree.node_parent, inp.tree.node_grpmask,
                                                inp.tree.node_grplo, inp.tree.node_grphi)]
        self.leaves = self.nodes[int(inp.tree.leaf_first):]
        for rnp in self.nodes:
            if rnp.parent >= 0:
                self.nodes[rnp.parent].qsmaskinit |= rnp.grpmask
                self.nodes[rnp.parent].expmaskinit |= rnp.grpmask
        self.cpus = []
        for c, (leaf, grpnum) in enumerate(zip(inp.tree.cpu_leaf, inp.tree.cpu_grpnum)):
            cpu = Cpu(self, c)
            cpu.rdp = RcuData(self.nodes[int(leaf)], 1 << int(grpnum), self.gp_seq, p.tree_callbacks.blimit)
            cpu.rdp.cpu = cpu
            cpu.rdp.mynode.qsmaskinit |= cpu.rdp.grpmask
            cpu.rdp.mynode.expmaskinit |= cpu.rdp.grpmask
            self.cpus.append(cpu)
        cpuidle_init(self)
        self.domains = placement.Domains(self)

        # Tasks first (their index is the request's task id), then kthreads.
        self.tasks = []
        self.wl_unfinished = [int((np.asarray(inp.sync_loop.workload) == w).sum()) for w in range(len(inp.sync_loop.think_ns))]
        self.wl_done_ns = [0] * len(inp.sync_loop.think_ns)  # the latest return at which a task was done
        release_cpu = [int(c) for c in inp.sync_loop.release_cpu]
        for i in range(len(inp.sync_loop.cpu)):
            released = release_cpu[int(inp.sync_loop.workload[i])] >= 0
            task = Entity(self, int(inp.sync_loop.cpu[i]), bool(inp.sync_loop.rt[i]), f"task/{i}",
                          weight=int(inp.sync_loop.weight[i]), initial=not released)
            task.index = i
            task.per_cpu_kthread = bool(inp.sync_loop.kthread[i])  # a module's kthread; the reference pins every task
            task.loops_left = int(inp.sync_loop.loops[i])
            task.primitive = int(inp.sync_loop.primitive[int(inp.sync_loop.workload[i])])
            w = int(inp.sync_loop.workload[i])
            task.workload, task.done = w, False
            task.start(sync_loop(self, task, int(inp.sync_loop.think_ns[w]), int(inp.sync_loop.after_ns[w])))
            self.tasks.append(task)
            if released:
                continue  # asleep in its barrier
            self.env.timeout(int(inp.sync_loop.start_ns[i])).callbacks.append(
                lambda _ev, t=task: t.cpu.activate(t))
            task.state = RUNNABLE  # until its start time
        for w, cpu in enumerate(release_cpu):
            if cpu >= 0:
                parent = Entity(self, cpu, False, f"main/{w}")
                parent.start(futex_wake_release(self, parent, [t for t in self.tasks if t.workload == w]))
                self.env.timeout(0).callbacks.append(lambda _ev, e=parent: e.cpu.activate(e))
                parent.state = RUNNABLE
        self.tasks_left = len(self.tasks)
        self.all_exited = self.env.event()
        self.gp_kthread = Entity(self, p.sched.gp_cpu, bool(p.tree_gp.gp_kthread_rt), "rcu_preempt")
        placement.kthread_place_at_wakeup(self, self.gp_kthread)  # kthread_create(rcu_gp_kthread)
        self.gp_timer_cpu = self.gp_ran_cpu = self.gp_kthread.cpu  # where the FQS wait's timer was armed
        self.gp_kthread.start(tree_gp.rcu_gp_kthread(self))
        highpri = not p.tree_sr_normal.sr_normal_sync_wq
        self.sr_worker = Entity(self, p.sched.gp_cpu, False, "kworker/sr", head_enqueue=highpri,
                                weight=weight_of(-20) if highpri else NICE_0_LOAD)
        self.sr_worker.per_cpu_kthread = True
        self.sr_worker.start(rcu_sr_normal_gp_cleanup_work(self, self.sr_worker))
        for cpu in self.cpus:
            cpu.rdp.ksoftirqd = Entity(self, cpu.index, False, f"ksoftirqd/{cpu.index}")
            cpu.rdp.ksoftirqd.per_cpu_kthread = True
            cpu.rdp.ksoftirqd.start(ksoftirqd(self, cpu))
        # Expedited GPs: the kworker (unbound where it may move), one worker per leaf on its first CPU.
        exp_rt = bool(p.tree_exp.exp_kthread_rt)
        self.exp_kworker = Entity(self, p.sched.gp_cpu, exp_rt, "rcu_exp_gp_kthread_worker")
        placement.kthread_place_at_wakeup(self, self.exp_kworker)
        self.exp_kworker.start(tree_exp.rcu_exp_sel_wait_wake(self, self.exp_kworker))
        for rnp in self.leaves:
            rnp.exp_par_worker = Entity(self, rnp.grplo, exp_rt, f"rcu_exp_par_gp_kthread_worker/{rnp.grplo}")
            rnp.exp_par_worker.start(tree_exp.sync_rcu_exp_select_node_cpus(self, rnp.exp_par_worker, rnp))

        self.req = {k: [] for k in ("task", "cpu", "primitive", "t_start_ns", "t_end_ns")}
        self.gprec = {k: [] for k in ("gp_seq", "t_start_ns", "t_qs_ns", "t_end_ns", "ipis", "expedited",
                                      "fqs_scans", "last_qs")}
        self.completion_ns = 0

    def fqs_timer_cpu_expires(self, cpu):
        """When the FQS wait's timer fires if it is queued on `cpu` (where the GP kthread armed it), else None."""
        if (self.gp_kthread is not None and cpu is self.gp_timer_cpu and self.gp_state == tree_gp.RCU_GP_WAIT_FQS
                and self.gp_timer_expires > self.env.now):
            return self.gp_timer_expires
        return None

    # --- draws, actions, records -------------------------------------------
    def idle_exit_ns(self) -> int:
        """Wake-up latency of an idle CPU: from the profile's measured quantiles, or lognormal
        (Box-Muller), as the engine draws them."""
        if len(self.inp.cpuidle.idle_wake_q_ns):
            lat = self.quantile_draw_ns(self.inp.cpuidle.idle_wake_q_ns, self.inp.cpuidle.idle_wake_tail_ns)
        else:
            if self.spare is not None:
                z, self.spare = self.spare, None
            else:
                u1 = max(self.rng.random(), 1e-300)
                u2 = self.rng.random()
                r = math.sqrt(-2.0 * math.log(u1))
                z = r * math.cos(2.0 * math.pi * u2)
                self.spare = r * math.cos(2.0 * math.pi * u2 + math.pi / 2)
            lat = int(math.exp(self.inp.cpuidle.idle_mu + self.inp.cpuidle.idle_sigma * z))
        self.counters["idle_exit_latency_ns"] += lat
        return lat

    def quantile_draw_ns(self, q, tail) -> int:
        """A draw from a measured distribution's quantiles, as random.pxi's quantile_draw_ns()."""
        x = self.rng.random() * (len(q) - 1)
        i = int(x)
        if i == len(q) - 2:
            q, x = tail, (x - i) * (len(tail) - 1)  # the level within the last interval
            i = int(x)
        return int(q[i]) + int((x - i) * int(q[i + 1] - q[i]))

    @contextmanager
    def action(self, cpu, gp_kthread: bool = False):
        """RCU work done at the end of a step: its lock rounds delay cpu's next burst."""
        self.acc = 0
        self.in_gp_kthread = gp_kthread
        if gp_kthread:
            self.gp_ran_cpu = cpu  # the CPU of the GP kthread's last step
        try:
            yield
        finally:
            self.in_gp_kthread = False
            cpu.debt += self.acc

    def record_request(self, task, t_end: int) -> None:
        for key, value in (("task", task.index), ("cpu", task.cpu.index), ("primitive", task.primitive),
                           ("t_start_ns", task.t_call), ("t_end_ns", t_end)):
            self.req[key].append(value)

    def record_gp(self, gp_seq: int, t0: int, t_qs: int, t1: int, ipis: int = 0, expedited: bool = False,
                  fqs_scans: int = 0, last_qs: int = -1) -> None:
        """A GP (normal, or expedited) ended at t1; all its QS were reported at t_qs,
        the last by `last_qs` (a value of ``LAST_QS_KINDS``), after `fqs_scans` scans."""
        for key, value in (("gp_seq", gp_seq), ("t_start_ns", t0), ("t_qs_ns", t_qs), ("t_end_ns", t1),
                           ("ipis", ipis), ("expedited", expedited), ("fqs_scans", fqs_scans),
                           ("last_qs", last_qs)):
            self.gprec[key].append(value)

    def task_exited(self) -> None:
        self.tasks_left -= 1
        if not self.tasks_left:
            self.all_exited.succeed()

    # --- run ----------------------------------------------------------------
    def run(self, until_ns: int) -> dict:
        if self.tasks_left:
            self.env.run(until=self.all_exited | self.env.timeout(until_ns))
        req_types = {"task": np.int32, "cpu": np.int32, "primitive": np.int8,
                     "t_start_ns": np.int64, "t_end_ns": np.int64}
        return {
            "requests": {k: np.array(v, dtype=req_types[k]) for k, v in self.req.items()},
            "grace_periods": {k: np.array(v, dtype={"expedited": bool, "last_qs": np.int8}.get(k, np.int64))
                              for k, v in self.gprec.items()},
            "counters": dict(self.counters),
            "finished": not self.tasks_left,
            "now": self.env.now,
            "completion_ns": self.completion_ns,
            "simpy_events": self.env.events_processed,
        }


def _check_scope(inp: EngineInput) -> None:
    p = inp
    if len(inp.readers.cpu):
        raise NotImplementedError("the reference model has no readers workload; readers are out of its scope")
    if np.any(inp.tree_nocb.offloaded):
        raise NotImplementedError(
            "the reference model does not model NOCB: offloaded CPUs (rcu_nocbs=) are out of its "
            "scope; compare configurations without rcu_nocbs")
    if np.any(inp.sync_loop.aff >= 0):
        raise NotImplementedError("the reference model keeps every task on its CPU; unpinned tasks "
                                  "(placement and load balancing) are out of its scope")
    if np.any(inp.noise.irq_gap_ns) or np.any(inp.noise.kthread_gap_ns) or np.any(inp.noise.timer_delay):
        raise NotImplementedError("the reference model has no OS noise; the noise workload is out of its scope")
    if any(inp.sync_loop.vmalloc):
        raise NotImplementedError("the reference model has no vmalloc()/vfree() (work_after: vfree); "
                                  "compare with work_after: kfree or none")
    if inp.tracepoint.events:
        raise NotImplementedError("the reference model prices no tracepoints: a traced kernel (trace_event=), "
                                  "the real-kernel twin's, is out of its scope")
    if inp.kvm.halt_poll:
        raise NotImplementedError("the reference model has no KVM guest: HLT idle with the host's halt "
                                  "polling is out of its scope; compare on a profile that is not a guest")
    if not p.tree_callbacks.use_softirq:
        raise NotImplementedError(
            "the reference model runs rcu_core() as RCU_SOFTIRQ only; rcutree.use_softirq=0 "
            "(rcuc kthreads) is out of its scope")
    if any(prim != _core.PRIMITIVES["synchronize_rcu"] for prim in inp.sync_loop.primitive) and (
            not p.tree_exp.exp_funnel_wait_queues or not p.tree_exp.exp_gp_workqueue or not p.tree_exp.exp_par_init):
        raise NotImplementedError(
            "the reference model has the expedited machinery of v4.17 and later (per-leaf "
            "workers, exp_wq funnel); earlier releases are out of its scope")


def run_reference(inp: EngineInput, seed: int, until_ns: int) -> dict:
    """Run the reference model on the engine's input.

    Parameters
    ----------
    inp : EngineInput
        What ``rcusim.engine.engine_input.engine_input`` builds (the engine's input).
    seed : int
        Seeds the PCG64 stream of idle-exit draws, as ``build_engine`` does.
    until_ns : int
        Stop at this simulated time if the tasks have not all finished.

    Returns
    -------
    dict
        ``requests`` and ``grace_periods``: NumPy arrays with the keys and
        dtypes of ``Engine.requests()`` and ``Engine.grace_periods()``;
        ``counters``: the engine's counters this model keeps; ``finished``,
        ``now``, ``completion_ns``; ``simpy_events``: SimPy events processed.

    Raises
    ------
    NotImplementedError
        If a CPU is offloaded (NOCB), use_softirq is 0, a readers workload is
        given, or synchronize_rcu_expedited() is called on a release before v4.17.
    """
    return Model(inp, seed).run(until_ns)


def run_reference_spec(spec, seed: int) -> dict:
    """:func:`run_reference` on one scenario variant (a ``VariantSpec``)."""
    inp, _geometry = engine_input(spec)
    return run_reference(inp, seed, round(spec.run.max_sim_time_s * 1e9))
