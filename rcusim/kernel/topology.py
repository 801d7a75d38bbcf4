"""Shape of the Tree RCU ``rcu_node`` combining tree and of the NOCB groups.

This module reproduces, for a given number of CPU ids, the tree that the
kernel builds at boot:

* ``rcu_init_geometry()`` (kernel/rcu/tree.c) chooses the number of levels
  and the number of ``rcu_node`` structures at each level;
* ``rcu_init_levelspread()`` (kernel/rcu/rcu.h) chooses how many children
  each node of a level gets, either balanced (default) or exact;
* ``rcu_init_one()`` (kernel/rcu/tree.c) gives every node its CPU range
  ``[grplo, grphi]``, its parent, its bit ``grpnum`` in the parent and
  the matching ``grpmask``, and hangs every CPU on a leaf.

The nodes are kept in one flat breadth-first array, exactly like
``rcu_state.node[]``: index 0 is the root, then the whole of level 1, and so
on, so the leaves are the tail of the array.

It also reproduces ``rcu_organize_nocb_kthreads()`` (kernel/rcu/tree_nocb.h),
which splits the offloaded (no-CBs) CPUs into groups, each served by one
``rcuog`` grace-period kthread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Compile-time maximum depth of the tree (``RCU_NUM_LVLS`` can reach 4).
RCU_MAX_LVLS = 4

#: Default ``CONFIG_RCU_FANOUT`` on 64-bit kernels.
RCU_FANOUT = 64

#: Default ``CONFIG_RCU_FANOUT_LEAF``.
RCU_FANOUT_LEAF = 16

#: Bits in an ``unsigned long`` mask (``qsmask`` and friends) on 64-bit.
BITS_PER_LONG = 64


@dataclass(frozen=True, eq=False)
class Geometry:
    """The ``rcu_node`` tree for one configuration.

    All per-node arrays are indexed by the position in the flat
    breadth-first node array (``rcu_state.node[]``); all per-CPU arrays are
    indexed by CPU id. The arrays are read-only.

    Attributes
    ----------
    nr_cpu_ids : int
        Number of possible CPU ids; CPUs are ``0 .. nr_cpu_ids - 1``.
    fanout : int
        ``RCU_FANOUT``: maximum children of an interior node.
    fanout_leaf : int
        ``rcu_fanout_leaf``: maximum CPUs per leaf.
    fanout_exact : bool
        ``rcutree.rcu_fanout_exact``; False means a balanced tree.
    levels : int
        ``rcu_num_lvls``, 1 to 4.
    num_rcu_lvl : tuple of int
        Number of nodes at each level, root level first.
    levelspread : tuple of int
        Children per node at each level (CPUs per node for the leaf level),
        root level first.
    num_nodes : int
        ``rcu_num_nodes``, the sum of ``num_rcu_lvl``.
    node_level : numpy.ndarray of int32
        Level of each node (0 = root).
    node_grplo, node_grphi : numpy.ndarray of int32
        First and last CPU id covered by each node (inclusive).
    node_parent : numpy.ndarray of int32
        Index of the parent node, -1 for the root.
    node_grpnum : numpy.ndarray of int32
        Bit index of the node in its parent's ``qsmask`` (0 for the root).
    node_grpmask : numpy.ndarray of uint64
        ``1 << grpnum``; 0 for the root, as in the kernel.
    cpu_leaf : numpy.ndarray of int32
        Node index of each CPU's leaf (``rdp->mynode``).
    cpu_grpnum : numpy.ndarray of int32
        Bit index of each CPU in its leaf's ``qsmask`` (``cpu - grplo``).
    """

    nr_cpu_ids: int
    fanout: int
    fanout_leaf: int
    fanout_exact: bool
    levels: int
    num_rcu_lvl: tuple
    levelspread: tuple
    num_nodes: int
    node_level: np.ndarray
    node_grplo: np.ndarray
    node_grphi: np.ndarray
    node_parent: np.ndarray
    node_grpnum: np.ndarray
    node_grpmask: np.ndarray
    cpu_leaf: np.ndarray
    cpu_grpnum: np.ndarray

    @property
    def leaf_first(self) -> int:
        """Index of the first leaf (``rcu_first_leaf_node()``)."""
        return self.num_nodes - self.num_rcu_lvl[-1]

    @property
    def num_leaves(self) -> int:
        """Number of leaf nodes."""
        return self.num_rcu_lvl[-1]

    def shape(self) -> dict:
        """``rcu_num_lvls``, ``num_rcu_lvl[]`` (nodes per level, root first), the
        children per node of each level and ``rcu_num_nodes``, JSON-ready."""
        return {"rcu_num_lvls": self.levels, "num_rcu_lvl": list(self.num_rcu_lvl),
                "levelspread": list(self.levelspread), "rcu_num_nodes": self.num_nodes}

    @property
    def level_first(self) -> tuple:
        """Index of the first node of each level (``rcu_state.level[]``)."""
        firsts = [0]
        for count in self.num_rcu_lvl[:-1]:
            firsts.append(firsts[-1] + count)
        return tuple(firsts)


def _check_fanout(name: str, value: int) -> None:
    # Kconfig limits RCU_FANOUT and RCU_FANOUT_LEAF to 2..64, and the boot
    # parameter rcu_fanout_leaf must fit in an unsigned long mask.
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 2 or value > BITS_PER_LONG:
        raise ValueError(
            f"{name}={value} is outside 2..{BITS_PER_LONG}, the range the "
            f"kernel accepts for it"
        )


def _levelspread(nr_cpu_ids: int, num_rcu_lvl: Sequence[int], fanout: int,
                 fanout_leaf: int, fanout_exact: bool) -> tuple:
    """Children per node at each level, as ``rcu_init_levelspread()``.

    Parameters
    ----------
    nr_cpu_ids : int
        Number of possible CPU ids.
    num_rcu_lvl : sequence of int
        Nodes per level, root first.
    fanout, fanout_leaf : int
        ``RCU_FANOUT`` and ``rcu_fanout_leaf``.
    fanout_exact : bool
        Use the configured fanouts as they are instead of balancing.

    Returns
    -------
    tuple of int
        Spread per level, root first.
    """
    levels = len(num_rcu_lvl)
    spread = [0] * levels
    if fanout_exact:
        spread[levels - 1] = fanout_leaf
        for i in range(levels - 2, -1, -1):
            spread[i] = fanout
    else:
        # Balanced: share the items of the level below evenly among the
        # nodes of this level, starting from the CPUs at the leaves.
        cprv = nr_cpu_ids
        for i in range(levels - 1, -1, -1):
            ccur = num_rcu_lvl[i]
            spread[i] = (cprv + ccur - 1) // ccur
            cprv = ccur
    return tuple(spread)


def rcu_init_geometry(nr_cpu_ids: int, fanout: int = RCU_FANOUT,
                      fanout_leaf: int = RCU_FANOUT_LEAF,
                      fanout_exact: bool = False) -> Geometry:
    """Build the ``rcu_node`` tree the kernel would build for these settings.

    Follows ``rcu_init_geometry()``, ``rcu_init_levelspread()`` and
    ``rcu_init_one()``: ``capacity[i] = fanout_leaf * fanout**i``; the tree
    has the fewest levels whose capacity holds ``nr_cpu_ids``; level ``i``
    (root = 0) has ``ceil(nr_cpu_ids / capacity[levels - 1 - i])`` nodes;
    node ``j`` of level ``i`` covers CPUs ``[j * stride, (j + 1) * stride - 1]``
    clipped to ``nr_cpu_ids - 1``, where ``stride`` is the product of the
    spreads from level ``i`` down to the leaves; its parent is node
    ``j // levelspread[i - 1]`` of level ``i - 1`` and its bit there is
    ``j % levelspread[i - 1]``.

    Parameters
    ----------
    nr_cpu_ids : int
        Number of possible CPU ids (at least 1).
    fanout : int, optional
        ``CONFIG_RCU_FANOUT``, 2..64 (default 64).
    fanout_leaf : int, optional
        ``rcutree.rcu_fanout_leaf``, 2..64 (default 16).
    fanout_exact : bool, optional
        ``rcutree.rcu_fanout_exact`` (default False, a balanced tree).

    Returns
    -------
    Geometry
        The tree.

    Raises
    ------
    ValueError
        If ``nr_cpu_ids`` is below 1 or larger than a 4-level tree can hold
        (``fanout_leaf * fanout**3``; the kernel refuses to build or falls
        back to its compile-time tree), or if a fanout is outside 2..64.
    """
    _check_fanout("fanout", fanout)
    _check_fanout("fanout_leaf", fanout_leaf)
    if not isinstance(nr_cpu_ids, (int, np.integer)) or isinstance(nr_cpu_ids, bool):
        raise ValueError(f"nr_cpu_ids must be an integer, got {nr_cpu_ids!r}")
    nr_cpu_ids = int(nr_cpu_ids)
    fanout = int(fanout)
    fanout_leaf = int(fanout_leaf)
    if nr_cpu_ids < 1:
        raise ValueError(f"nr_cpu_ids must be at least 1, got {nr_cpu_ids}")

    # CPUs a tree of i + 1 levels can hold.
    rcu_capacity = [fanout_leaf]
    for i in range(1, RCU_MAX_LVLS):
        rcu_capacity.append(rcu_capacity[i - 1] * fanout)
    if nr_cpu_ids > rcu_capacity[RCU_MAX_LVLS - 1]:
        raise ValueError(
            f"nr_cpu_ids={nr_cpu_ids} exceeds the {RCU_MAX_LVLS}-level "
            f"rcu_node tree capacity {rcu_capacity[RCU_MAX_LVLS - 1]} "
            f"(fanout_leaf={fanout_leaf} * fanout={fanout}**3); the kernel "
            f"does not build with such NR_CPUS"
        )

    i = 0
    while nr_cpu_ids > rcu_capacity[i]:
        i += 1
    levels = i + 1

    num_rcu_lvl = tuple(
        -(-nr_cpu_ids // rcu_capacity[levels - 1 - lvl]) for lvl in range(levels)
    )
    num_nodes = sum(num_rcu_lvl)
    levelspread = _levelspread(nr_cpu_ids, num_rcu_lvl, fanout, fanout_leaf,
                               fanout_exact)

    level_first = [0]
    for count in num_rcu_lvl[:-1]:
        level_first.append(level_first[-1] + count)

    node_level = np.empty(num_nodes, dtype=np.int32)
    node_grplo = np.empty(num_nodes, dtype=np.int32)
    node_grphi = np.empty(num_nodes, dtype=np.int32)
    node_parent = np.empty(num_nodes, dtype=np.int32)
    node_grpnum = np.empty(num_nodes, dtype=np.int32)
    node_grpmask = np.empty(num_nodes, dtype=np.uint64)

    # As rcu_init_one(): walk the levels from the leaves up, growing the
    # number of CPUs a node of the level covers.
    cpustride = 1
    for lvl in range(levels - 1, -1, -1):
        cpustride *= levelspread[lvl]
        first = level_first[lvl]
        j = np.arange(num_rcu_lvl[lvl], dtype=np.int64)
        idx = slice(first, first + num_rcu_lvl[lvl])
        node_level[idx] = lvl
        node_grplo[idx] = j * cpustride
        node_grphi[idx] = np.minimum((j + 1) * cpustride - 1, nr_cpu_ids - 1)
        if lvl == 0:
            node_parent[idx] = -1
            node_grpnum[idx] = 0
            node_grpmask[idx] = 0
        else:
            up = levelspread[lvl - 1]
            node_parent[idx] = level_first[lvl - 1] + j // up
            node_grpnum[idx] = j % up
            node_grpmask[idx] = np.left_shift(np.uint64(1),
                                              (j % up).astype(np.uint64))

    # As rcu_init_one(): each CPU goes to the first leaf whose grphi is not
    # below it (leaves are in ascending CPU order).
    leaf_first = num_nodes - num_rcu_lvl[-1]
    cpus = np.arange(nr_cpu_ids, dtype=np.int64)
    leaf_grphi = node_grphi[leaf_first:]
    cpu_leaf = (leaf_first
                + np.searchsorted(leaf_grphi, cpus, side="left")).astype(np.int32)
    cpu_grpnum = (cpus - node_grplo[cpu_leaf]).astype(np.int32)

    for arr in (node_level, node_grplo, node_grphi, node_parent, node_grpnum,
                node_grpmask, cpu_leaf, cpu_grpnum):
        arr.setflags(write=False)

    return Geometry(
        nr_cpu_ids=nr_cpu_ids,
        fanout=fanout,
        fanout_leaf=fanout_leaf,
        fanout_exact=bool(fanout_exact),
        levels=levels,
        num_rcu_lvl=num_rcu_lvl,
        levelspread=levelspread,
        num_nodes=num_nodes,
        node_level=node_level,
        node_grplo=node_grplo,
        node_grphi=node_grphi,
        node_parent=node_parent,
        node_grpnum=node_grpnum,
        node_grpmask=node_grpmask,
        cpu_leaf=cpu_leaf,
        cpu_grpnum=cpu_grpnum,
    )


def nocb_gp_stride(nr_cpu_ids: int, stride: int = -1) -> int:
    """CPU ids per ``rcuog`` group (``rcutree.rcu_nocb_gp_stride``).

    Parameters
    ----------
    nr_cpu_ids : int
        Number of possible CPU ids (at least 1).
    stride : int, optional
        The boot parameter; -1 (default) means
        ``nr_cpu_ids // int_sqrt(nr_cpu_ids)``.

    Returns
    -------
    int
        The stride actually used.

    Raises
    ------
    ValueError
        If ``nr_cpu_ids`` is below 1 or ``stride`` is neither -1 nor positive.
    """
    if nr_cpu_ids < 1:
        raise ValueError(f"nr_cpu_ids must be at least 1, got {nr_cpu_ids}")
    if stride == -1:
        return nr_cpu_ids // math.isqrt(nr_cpu_ids)
    if stride < 1:
        raise ValueError(f"stride must be -1 or at least 1, got {stride}")
    return int(stride)


def nocb_gp_leader(cpu: int, nr_cpu_ids: int, stride: int = -1) -> int:
    """CPU id whose ``rcu_data`` hosts the ``rcuog`` kthread serving ``cpu``.

    ``rcu_organize_nocb_kthreads()`` walks every possible CPU in ascending
    order and starts a new group at the first CPU at or beyond the next
    multiple of the stride, so the leader is the first CPU of the stride
    bucket: ``(cpu // stride) * stride``. The kthread is named
    ``rcuog/<leader>`` and sleeps on the leader's leaf ``rcu_node``. It
    exists only if at least one CPU of the bucket is offloaded.

    Kernels that walked only the offloaded CPUs (``for_each_cpu(cpu,
    rcu_nocb_mask)``, before the runtime (de)offload rework) picked the
    first *offloaded* CPU of the bucket instead; that is ``group[0]`` of
    :func:`nocb_groups`. Both rules agree when every CPU is offloaded.

    Parameters
    ----------
    cpu : int
        A CPU id in ``0 .. nr_cpu_ids - 1``.
    nr_cpu_ids : int
        Number of possible CPU ids.
    stride : int, optional
        ``rcutree.rcu_nocb_gp_stride`` (-1 for the default).

    Returns
    -------
    int
        The leader CPU id.
    """
    if cpu < 0 or cpu >= nr_cpu_ids:
        raise ValueError(f"cpu {cpu} is outside 0..{nr_cpu_ids - 1}")
    ls = nocb_gp_stride(nr_cpu_ids, stride)
    return (cpu // ls) * ls


def nocb_groups(nocb_cpus: Sequence[int], nr_cpu_ids: int,
                stride: int = -1) -> list:
    """Split the offloaded CPUs into ``rcuog`` groups.

    As ``rcu_organize_nocb_kthreads()``: CPUs are taken in ascending order;
    a CPU at or beyond ``nl`` opens a new group and sets
    ``nl = DIV_ROUND_UP(cpu + 1, ls) * ls``, so a group is made of the
    offloaded CPUs of one stride bucket ``[k * ls, (k + 1) * ls)``. Buckets
    without an offloaded CPU have no ``rcuog`` kthread and are left out.

    Parameters
    ----------
    nocb_cpus : sequence of int
        Offloaded CPU ids (``rcu_nocb_mask``), each in
        ``0 .. nr_cpu_ids - 1``; order does not matter, duplicates are
        not allowed.
    nr_cpu_ids : int
        Number of possible CPU ids.
    stride : int, optional
        ``rcutree.rcu_nocb_gp_stride``; -1 (default) means
        ``nr_cpu_ids // int_sqrt(nr_cpu_ids)``.

    Returns
    -------
    list of list of int
        One ascending list of offloaded CPUs per group, groups in ascending
        order. ``group[0]`` is the first offloaded CPU of the group; the
        ``rcuog`` kthread itself belongs to :func:`nocb_gp_leader`, which is
        ``group[0]`` whenever the first CPU of the bucket is offloaded.

    Raises
    ------
    ValueError
        If a CPU id is out of range or repeated, or the stride is invalid.
    """
    ls = nocb_gp_stride(nr_cpu_ids, stride)
    cpus = sorted(int(c) for c in nocb_cpus)
    for prev, cur in zip(cpus, cpus[1:]):
        if prev == cur:
            raise ValueError(f"cpu {cur} is listed twice in nocb_cpus")
    if cpus and (cpus[0] < 0 or cpus[-1] >= nr_cpu_ids):
        bad = cpus[0] if cpus[0] < 0 else cpus[-1]
        raise ValueError(f"cpu {bad} is outside 0..{nr_cpu_ids - 1}")

    groups = []
    nl = 0  # First CPU id of the next group (the kernel's "next leader").
    for cpu in cpus:
        if cpu >= nl:
            nl = -(-(cpu + 1) // ls) * ls
            groups.append([cpu])
        else:
            groups[-1].append(cpu)
    return groups


def describe(geometry: Geometry) -> str:
    """One-line summary of a tree.

    Parameters
    ----------
    geometry : Geometry
        The tree to describe.

    Returns
    -------
    str
        For example ``"3 levels: 1 + 4 + 256 = 261 rcu_nodes, leaves of
        16 CPUs"``.
    """
    g = geometry
    leaf_cpus = g.levelspread[-1]
    last = g.leaf_first + g.num_leaves - 1
    last_cpus = int(g.node_grphi[last]) - int(g.node_grplo[last]) + 1
    if g.levels == 1:
        text = (f"1 level: 1 rcu_node (the root is the only leaf), "
                f"{g.nr_cpu_ids} CPU{'s' if g.nr_cpu_ids != 1 else ''}")
    else:
        counts = " + ".join(str(c) for c in g.num_rcu_lvl)
        text = (f"{g.levels} levels: {counts} = {g.num_nodes} rcu_nodes, "
                f"leaves of {leaf_cpus} CPUs")
        if last_cpus != leaf_cpus:
            text += f" (last leaf {last_cpus})"
    if g.fanout_exact:
        text += ", exact fanout"
    return text
