"""A SimPy model of the mechanisms of the compiled engine: its executable specification.

Small and slow on purpose, written to be read against ``kernel/rcu/tree.c``
and ``cython_core/_core.pyx``: each CPU is a SimPy process running tasks and
kthreads burst by burst (:mod:`.sched`); the rcu_node tree and the
grace-period request funnel are in :mod:`.tree`; callbacks, the tick and
RCU_SOFTIRQ in :mod:`.core` and :mod:`.segcblist`; the grace-period kthread
and rcutree.rcu_normal_wake_from_gp in :mod:`.gp`; expedited grace periods
(v4.17 and later) in :mod:`.exp`; the sync_loop workload in :mod:`.workload`.
NOCB (offloaded CPUs), rcuc kthreads, readers, a traced kernel (trace_event=) and the expedited machinery of
older releases are outside its scope.

It takes the engine's own low-level inputs and returns the engine's records,
so the two can be compared on small configurations (:mod:`.compare`).
"""

from rcusim.engine.reference.model import run_reference, run_reference_spec

__all__ = ["run_reference", "run_reference_spec"]
