"""Engines: the engine's typed input, the Tree RCU and sys_membarrier() engines, rcuscale's
arithmetic, and the SimPy reference model."""
