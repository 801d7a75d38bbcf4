"""Kernel arithmetic: rcu_seq grace-period sequence numbers, the rcu_node tree geometry, the timer wheel."""
