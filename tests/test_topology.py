"""Tests for rcusim.kernel.topology: the rcu_node tree and the NOCB groups."""

import random

import numpy as np
import pytest

from rcusim.kernel.topology import Geometry, describe, nocb_gp_leader, nocb_gp_stride, nocb_groups, rcu_init_geometry

# (nr_cpu_ids, kwargs, levels, num_rcu_lvl, levelspread, num_nodes)
KNOWN_GEOMETRIES = [
    (1, {}, 1, (1,), (1,), 1),
    (16, {}, 1, (1,), (16,), 1),
    (64, {}, 2, (1, 4), (4, 16), 5),
    # Balanced: ceil(100 / 7) = 15 CPUs per leaf, not 16.
    (100, {}, 2, (1, 7), (7, 15), 8),
    (256, {}, 2, (1, 16), (16, 16), 17),
    (1000, {}, 2, (1, 63), (63, 16), 64),
    (1024, {}, 2, (1, 64), (64, 16), 65),
    # One CPU past the 2-level capacity 16 * 64 = 1024.
    (1025, {}, 3, (1, 2, 65), (2, 33, 16), 68),
    (4096, {}, 3, (1, 4, 256), (4, 64, 16), 261),
    (4096, {"fanout_leaf": 64}, 2, (1, 64), (64, 64), 65),
    # capacity = 16, 1024, 65536: 1024 < 8192 <= 65536, so 3 levels;
    # nodes = ceil(8192/65536) = 1, ceil(8192/1024) = 8, ceil(8192/16) = 512;
    # spread = ceil(8/1) = 8, ceil(512/8) = 64, ceil(8192/512) = 16.
    (8192, {}, 3, (1, 8, 512), (8, 64, 16), 521),
    # capacity = 2, 6, 18, 54: exactly full with 4 levels.
    (54, {"fanout": 3, "fanout_leaf": 2}, 4, (1, 3, 9, 27), (3, 3, 3, 2), 40),
    # Largest 64-bit tree: 16 * 64**3 CPUs.
    (4194304, {}, 4, (1, 64, 4096, 262144), (64, 64, 64, 16), 266305),
]


@pytest.mark.parametrize(
    "nr_cpu_ids, kwargs, levels, num_rcu_lvl, levelspread, num_nodes",
    KNOWN_GEOMETRIES,
)
def test_known_geometries(nr_cpu_ids, kwargs, levels, num_rcu_lvl,
                          levelspread, num_nodes):
    g = rcu_init_geometry(nr_cpu_ids, **kwargs)
    assert g.levels == levels
    assert g.num_rcu_lvl == num_rcu_lvl
    assert g.levelspread == levelspread
    assert g.num_nodes == num_nodes
    assert g.num_leaves == num_rcu_lvl[-1]
    assert g.leaf_first == num_nodes - num_rcu_lvl[-1]


def test_64_cpus_ranges():
    g = rcu_init_geometry(64)
    assert list(g.node_grplo) == [0, 0, 16, 32, 48]
    assert list(g.node_grphi) == [63, 15, 31, 47, 63]
    assert list(g.node_parent) == [-1, 0, 0, 0, 0]
    assert list(g.node_grpnum) == [0, 0, 1, 2, 3]
    assert list(g.node_grpmask) == [0, 1, 2, 4, 8]
    assert g.cpu_leaf[0] == 1 and g.cpu_leaf[15] == 1 and g.cpu_leaf[16] == 2
    assert g.cpu_leaf[63] == 4
    assert g.cpu_grpnum[17] == 1 and g.cpu_grpnum[63] == 15


def test_100_cpus_balanced_leaves():
    g = rcu_init_geometry(100)
    leaves = range(g.leaf_first, g.num_nodes)
    assert [int(g.node_grplo[i]) for i in leaves] == [0, 15, 30, 45, 60, 75, 90]
    # The last leaf holds CPUs 90-99.
    assert g.node_grphi[g.num_nodes - 1] == 99


def test_1025_cpus_last_leaf_has_one_cpu():
    g = rcu_init_geometry(1025)
    last = g.num_nodes - 1
    assert (g.node_grplo[last], g.node_grphi[last]) == (1024, 1024)
    # Level-1 nodes cover 33 leaves of 16 CPUs each.
    assert list(g.node_grplo[1:3]) == [0, 528]
    assert list(g.node_grphi[1:3]) == [527, 1024]
    assert g.node_parent[last] == 2 and g.node_grpnum[last] == 31


def test_exact_mode():
    # 100 CPUs, exact fanout: node counts are unchanged (1 + 7), but every
    # leaf gets 16 CPUs and the root nominally 64 children.
    g = rcu_init_geometry(100, fanout_exact=True)
    assert g.num_rcu_lvl == (1, 7)
    assert g.levelspread == (64, 16)
    leaves = range(g.leaf_first, g.num_nodes)
    assert [int(g.node_grplo[i]) for i in leaves] == [0, 16, 32, 48, 64, 80, 96]
    assert g.node_grphi[g.num_nodes - 1] == 99
    # The balanced tree differs: 15 CPUs per leaf.
    assert rcu_init_geometry(100).levelspread == (7, 15)


def test_exact_mode_three_levels():
    g = rcu_init_geometry(1025, fanout_exact=True)
    assert g.levelspread == (64, 64, 16)
    # Level-1 node 0 covers 64 * 16 = 1024 CPUs, node 1 only CPU 1024.
    assert list(g.node_grplo[1:3]) == [0, 1024]
    assert list(g.node_grphi[1:3]) == [1023, 1024]
    last = g.num_nodes - 1
    assert g.node_parent[last] == 2 and g.node_grpnum[last] == 0


def test_capacity_error():
    with pytest.raises(ValueError, match="capacity 54"):
        rcu_init_geometry(55, fanout=3, fanout_leaf=2)
    with pytest.raises(ValueError, match="capacity"):
        rcu_init_geometry(16 * 64 ** 3 + 1)
    # The limit itself is fine.
    assert rcu_init_geometry(54, fanout=3, fanout_leaf=2).levels == 4


@pytest.mark.parametrize("kwargs", [
    {"fanout": 1}, {"fanout": 65}, {"fanout_leaf": 1}, {"fanout_leaf": 65},
    {"fanout": 0}, {"fanout_leaf": -16},
])
def test_fanout_range_error(kwargs):
    with pytest.raises(ValueError, match="outside 2..64"):
        rcu_init_geometry(64, **kwargs)


def test_bad_nr_cpu_ids():
    with pytest.raises(ValueError):
        rcu_init_geometry(0)


def test_geometry_is_frozen():
    g = rcu_init_geometry(64)
    assert isinstance(g, Geometry)
    with pytest.raises(Exception):
        g.levels = 3
    with pytest.raises(ValueError):
        g.node_grplo[0] = 5


def test_dtypes():
    g = rcu_init_geometry(4096)
    assert g.node_grpmask.dtype == np.uint64
    for arr in (g.node_level, g.node_grplo, g.node_grphi, g.node_parent,
                g.node_grpnum, g.cpu_leaf, g.cpu_grpnum):
        assert arr.dtype in (np.int32, np.int64)
    # Masks reach the top bit range used by a 64-wide level.
    assert int(g.node_grpmask[g.leaf_first + 63]) == 1 << 63


def check_invariants(g):
    """Structural checks that hold for every tree rcu_init_one() builds."""
    n = g.nr_cpu_ids
    assert g.num_nodes == sum(g.num_rcu_lvl)
    assert g.num_rcu_lvl[0] == 1
    assert len(g.node_level) == g.num_nodes
    assert len(g.cpu_leaf) == n
    assert 1 <= g.levels <= 4
    firsts = g.level_first
    for lvl in range(g.levels):
        idx = np.arange(firsts[lvl], firsts[lvl] + g.num_rcu_lvl[lvl])
        assert (g.node_level[idx] == lvl).all()
        lo = g.node_grplo[idx].astype(np.int64)
        hi = g.node_grphi[idx].astype(np.int64)
        # Each level covers every CPU exactly once, in ascending order.
        assert lo[0] == 0 and hi[-1] == n - 1
        assert (lo <= hi).all()
        assert (lo[1:] == hi[:-1] + 1).all()
        # Nodes hold no more than their level's spread allows.
        if lvl == g.levels - 1:
            assert (hi - lo + 1 <= g.levelspread[lvl]).all()
            assert g.levelspread[lvl] <= g.fanout_leaf
        else:
            assert g.levelspread[lvl] <= g.fanout
        if lvl == 0:
            assert g.node_parent[0] == -1
            assert g.node_grpmask[0] == 0
            continue
        parents = g.node_parent[idx]
        assert (g.node_level[parents] == lvl - 1).all()
        # Each child's range lies inside its parent's range.
        assert (g.node_grplo[parents] <= lo).all()
        assert (hi <= g.node_grphi[parents]).all()
        spread = g.levelspread[lvl - 1]
        grpnum = g.node_grpnum[idx]
        assert (grpnum >= 0).all() and (grpnum < spread).all()
        assert (g.node_grpmask[idx]
                == np.left_shift(np.uint64(1), grpnum.astype(np.uint64))).all()
        # Siblings have distinct bits and appear in bit order.
        for p in np.unique(parents):
            kids = grpnum[parents == p]
            assert list(kids) == list(range(len(kids)))
        # Every node of the level above has at least one child.
        assert len(np.unique(parents)) == g.num_rcu_lvl[lvl - 1]
    # CPUs hang on the leaf that covers them, at bit cpu - grplo.
    cpus = np.arange(n)
    leaf = g.cpu_leaf
    assert (leaf >= g.leaf_first).all() and (leaf < g.num_nodes).all()
    assert (g.node_grplo[leaf] <= cpus).all()
    assert (cpus <= g.node_grphi[leaf]).all()
    assert (g.cpu_grpnum == cpus - g.node_grplo[leaf]).all()
    assert (g.cpu_grpnum < 64).all()


def test_invariants_default_fanout():
    for n in list(range(1, 5001, 7)) + [1024, 1025, 4096, 8192, 65536, 65537]:
        check_invariants(rcu_init_geometry(n))
        check_invariants(rcu_init_geometry(n, fanout_exact=True))


def test_invariants_random_fanouts():
    rng = random.Random(20240611)
    checked = 0
    for _ in range(600):
        fanout = rng.randint(2, 64)
        leaf = rng.randint(2, 64)
        n = rng.randint(1, 5000)
        exact = rng.random() < 0.3
        cap = leaf * fanout ** 3
        if n > cap:
            with pytest.raises(ValueError):
                rcu_init_geometry(n, fanout, leaf, exact)
            continue
        g = rcu_init_geometry(n, fanout, leaf, exact)
        check_invariants(g)
        # The fewest levels that can hold n CPUs.
        assert n <= leaf * fanout ** (g.levels - 1)
        if g.levels > 1:
            assert n > leaf * fanout ** (g.levels - 2)
        checked += 1
    assert checked > 300


def test_levels_boundaries():
    # 2 levels hold 16 * 64 CPUs, 3 levels 16 * 64**2.
    assert rcu_init_geometry(16).levels == 1
    assert rcu_init_geometry(17).levels == 2
    assert rcu_init_geometry(1024).levels == 2
    assert rcu_init_geometry(1025).levels == 3
    assert rcu_init_geometry(65536).levels == 3
    assert rcu_init_geometry(65537).levels == 4


def test_describe():
    assert describe(rcu_init_geometry(4096)) == (
        "3 levels: 1 + 4 + 256 = 261 rcu_nodes, leaves of 16 CPUs")
    assert describe(rcu_init_geometry(100)) == (
        "2 levels: 1 + 7 = 8 rcu_nodes, leaves of 15 CPUs (last leaf 10)")
    assert "1 rcu_node" in describe(rcu_init_geometry(16))
    assert describe(rcu_init_geometry(100, fanout_exact=True)).endswith(
        "exact fanout")


@pytest.mark.parametrize("n, stride, groups", [
    (64, 8, 8), (4096, 64, 64), (1024, 32, 32), (256, 16, 16),
    (54, 7, 8), (16, 4, 4), (1, 1, 1),
    # Non-squares: nr_cpu_ids // int_sqrt(nr_cpu_ids), not int_sqrt itself.
    (2, 2, 1), (1000, 32, 32), (5000, 71, 71), (96, 10, 10),
])
def test_nocb_default_stride(n, stride, groups):
    assert nocb_gp_stride(n) == stride
    g = nocb_groups(range(n), n)
    assert len(g) == groups
    for k, grp in enumerate(g):
        assert grp == list(range(k * stride, min((k + 1) * stride, n)))


def test_nocb_54_last_group():
    g = nocb_groups(range(54), 54)
    assert [len(x) for x in g] == [7] * 7 + [5]
    assert g[-1] == [49, 50, 51, 52, 53]


def test_nocb_partial_mask():
    # Stride 8: buckets 0-7, 8-15, 16-23, 24-31...
    g = nocb_groups([30, 1, 2, 9, 10, 11], 64)
    assert g == [[1, 2], [9, 10, 11], [30]]
    # The rcuog kthread belongs to the bucket's first CPU.
    assert nocb_gp_leader(2, 64) == 0
    assert nocb_gp_leader(30, 64) == 24
    assert nocb_gp_leader(9, 64) == 8


def test_nocb_explicit_stride():
    g = nocb_groups(range(10), 10, stride=4)
    assert g == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert nocb_groups(range(10), 10, stride=100) == [list(range(10))]
    assert nocb_groups([], 10) == []


def test_nocb_errors():
    with pytest.raises(ValueError):
        nocb_groups([0, 64], 64)
    with pytest.raises(ValueError):
        nocb_groups([3, 3], 64)
    with pytest.raises(ValueError):
        nocb_groups(range(8), 8, stride=0)
    with pytest.raises(ValueError):
        nocb_gp_leader(8, 8)


def test_nocb_groups_property():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 5000)
        cpus = sorted(rng.sample(range(n), rng.randint(0, n)))
        ls = nocb_gp_stride(n)
        groups = nocb_groups(cpus, n)
        # Every offloaded CPU is in exactly one group, in order.
        assert [c for grp in groups for c in grp] == cpus
        for grp in groups:
            assert len({c // ls for c in grp}) == 1
            assert grp[0] // ls * ls == nocb_gp_leader(grp[0], n)
        buckets = [grp[0] // ls for grp in groups]
        assert buckets == sorted(set(buckets))
