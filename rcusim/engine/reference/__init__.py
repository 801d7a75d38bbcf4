"""A SimPy model of the mechanisms of the compiled engine: its executable specification.

Small and slow on purpose, written to be read against ``kernel/rcu/tree.c``
and ``cython_core/``: each module that models a mechanism is named after the
engine file of that mechanism (``tree_gp.py`` mirrors ``tree_gp.pxi``) and uses
the engine's function names where both implement the same kernel step.  Each CPU
is a SimPy process running tasks and kthreads burst by burst (:mod:`.sched`, with
:mod:`.fair`, :mod:`.placement`, :mod:`.topology`, :mod:`.cpuidle` and :mod:`.timer`);
spinlocks and exp_mutex are in :mod:`.locking`; the rcu_node tree, the grace-period
request funnel and the tick's RCU work in :mod:`.tree`; callbacks in
:mod:`.rcu_segcblist` and :mod:`.tree_callbacks` (with RCU_SOFTIRQ), cond_resched() in
:mod:`.tree_plugin`; the grace-period kthread in :mod:`.tree_gp` and
rcutree.rcu_normal_wake_from_gp in :mod:`.tree_sr_normal`; expedited grace periods
(v4.17 and later) in :mod:`.tree_exp`; the sync_loop workload in :mod:`.sync_loop`.
:mod:`.model` builds and runs the model.
NOCB (offloaded CPUs), rcuc kthreads, readers, a traced kernel (trace_event=) and the expedited machinery of
older releases are outside its scope.

It takes the engine's own low-level inputs and returns the engine's records,
so the two can be compared on small configurations (:mod:`.compare`).
"""

from rcusim.engine.reference.model import run_reference, run_reference_spec

__all__ = ["run_reference", "run_reference_spec"]
