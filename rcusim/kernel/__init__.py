"""Kernel arithmetic: rcu_seq grace-period sequence numbers and the rcu_node tree geometry."""
