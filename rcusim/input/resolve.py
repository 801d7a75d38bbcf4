"""Resolution of a validated variant: :func:`resolve_params` computes every kernel tunable
the way the kernel computes it at boot (``rcu_init_geometry()``, ``adjust_jiffies_till_sched_qs()``,
``sanitize_kthread_prio()``, ``rcu_init_nohz()``, ...); :func:`resolve_variant` checks what the
model can run and gives the :class:`~rcusim.input.variant.VariantSpec`; :func:`build_variant`
validates and resolves a variant's mapping.

What ``kernel.release`` switches is decided in :mod:`rcusim.input.releases`. Every problem raises
:class:`~rcusim.errors.ScenarioError` naming the key path."""

from __future__ import annotations

import math

from pydantic import ValidationError

from rcusim.errors import ScenarioError
from rcusim.input.base import MAX_CPUS
from rcusim.input.bootargs import parse_bootargs
from rcusim.input.cpulist import parse_cpulist
from rcusim.input.hardware import HardwareSpec
from rcusim.input.kernel import Kernel
from rcusim.input.membarrier import MembarrierLoop
from rcusim.input.profiles import (PROFILES, profile_pcp_start_pages, profile_thread_start, profile_tracing,
                                   profile_ttwu_reuse, profile_vmalloc)
from rcusim.input.rcuscale_params import MIN_MEAS, compute_real
from rcusim.input.releases import TRACEPOINT_SITES, check_module_param, module_param_since
from rcusim.input.validation import scenario_error_from_validation
from rcusim.input.variant import RcuParams, Resolution, Run, VariantInput, VariantSpec
from rcusim.input.workloads import (WRITER_NAME, CallRcuLoad, FINITE_WORKLOADS, KfreeRcuFlood, RcuscaleWriter, Readers,
                                    SyncLoop)


_NOCB_PARAMS = ("rcu_nocbs", "rcutree.rcu_nocb_gp_stride")
# Parameters of the kernel whose mechanism rcusim does not model: refused, not ignored.
_NOT_MODELLED = {
    "rcutree.qovld": "callback overload (a CPU above qovld callbacks shortens the FQS waits "
                     "and asks for quiescent states sooner)",
    "rcu_nocb_poll": "rcuog and rcuop kthreads that poll every jiffy instead of being woken",
}
_BOOTARGS_PATH = ("kernel", "bootargs")
_CLASSIC_PARAMS = ("rcupdate.rcumaxbatch", "rcupdate.rcuplugticks", "rcupdate.bhlimit")


def _token_for(bootargs: str, name: str) -> str | None:
    """Return the last token of `bootargs` that sets parameter `name`."""
    found = None
    for token in bootargs.split():
        if token.partition("=")[0].replace("-", "_") == name:
            found = token
    return found


def resolve_params(nr_cpus: int, kernel: Kernel) -> RcuParams:
    """Compute every kernel tunable as the kernel does at boot.

    Parameters
    ----------
    nr_cpus : int
        Number of CPUs (nr_cpu_ids).
    kernel : Kernel
        Kernel settings; ``CONFIG_NR_CPUS`` None means `nr_cpus`.

    Returns
    -------
    RcuParams

    Raises
    ------
    ScenarioError
        For command-line values that do not fit this machine or this build.
    """
    nr = nr_cpus
    hz = kernel.HZ
    release = kernel.release_tuple
    switches = kernel.switches
    nr_config = kernel.CONFIG_NR_CPUS if kernel.CONFIG_NR_CPUS is not None else nr
    try:
        args = parse_bootargs(kernel.bootargs, nr_cpus=nr)
    except ScenarioError as exc:
        raise exc.with_context(path=_BOOTARGS_PATH) from None

    def needs(names, option):
        for name in names:
            if name in args and not getattr(kernel, option):
                raise ScenarioError(f"{name} needs {option}=y (without it the kernel "
                                    "does not know this parameter)", path=_BOOTARGS_PATH,
                                    allowed=f"set kernel.{option}: true, or drop {name}",
                                    token=_token_for(kernel.bootargs, name))

    for name, what in _NOT_MODELLED.items():
        if name in args:
            raise ScenarioError(f"{name}: rcusim does not model {what}", path=_BOOTARGS_PATH,
                                allowed=f"drop {name}", token=_token_for(kernel.bootargs, name))
    needs(_NOCB_PARAMS, "CONFIG_RCU_NOCB_CPU")
    if "nohz_full" in args and not kernel.CONFIG_RCU_NOCB_CPU:
        # nohz_full= takes effect only in a CONFIG_NO_HZ_FULL build (housekeeping_setup() in
        # kernel/sched/isolation.c, earlier kernel/time/tick-sched.c), and NO_HZ_FULL selects
        # RCU_NOCB_CPU (kernel/time/Kconfig).
        raise ScenarioError("nohz_full needs CONFIG_NO_HZ_FULL=y, which selects CONFIG_RCU_NOCB_CPU "
                            "(without NO_HZ_FULL the kernel ignores nohz_full)",
                            path=_BOOTARGS_PATH,
                            allowed="set kernel.CONFIG_RCU_NOCB_CPU: true (with nohz_full, rcusim's "
                                    "CONFIG_NO_HZ_FULL=y build), or drop nohz_full",
                            token=_token_for(kernel.bootargs, "nohz_full"))
    if "nohz_full" in args and kernel.CONFIG_HZ_PERIODIC:
        raise ScenarioError("nohz_full needs CONFIG_NO_HZ_FULL, one choice of the tick model, and "
                            "CONFIG_HZ_PERIODIC is another", path=_BOOTARGS_PATH,
                            allowed="kernel.CONFIG_HZ_PERIODIC: false, or drop nohz_full",
                            token=_token_for(kernel.bootargs, "nohz_full"))
    for name in _CLASSIC_PARAMS:
        # The 2004 patches were for classic RCU; Tree RCU (v2.6.29) has no such knob.
        if name in args and switches.tree_rcu:
            raise ScenarioError(f"{name} belongs to a 2004 patch for classic RCU", path=_BOOTARGS_PATH,
                                allowed='drop it, or set kernel.release below "2.6.29"',
                                token=_token_for(kernel.bootargs, name))
    if args.get("rcupdate.rcumaxbatch") and args.get("rcupdate.bhlimit"):
        raise ScenarioError("rcupdate.rcumaxbatch (throttle-rcu) and rcupdate.bhlimit (rcu-low-lat) "
                            "come from two different patches", path=_BOOTARGS_PATH,
                            allowed="one of them", token=_token_for(kernel.bootargs, "rcupdate.bhlimit"))
    for name in args:
        # The rcuscale module's tests are what `python -m rcusim rcuscale` builds a
        # scenario from; that command keeps its rcuscale.* parameters off kernel.bootargs.
        if name.startswith("rcuscale."):
            raise ScenarioError(f"{name} is a parameter of the rcuscale module, whose tests a scenario "
                                "does not run (it would be ignored)", path=_BOOTARGS_PATH,
                                allowed="'python -m rcusim rcuscale --bootargs ...' for rcuscale's tests, "
                                        "or the keys of a kfree_rcu_flood or rcuscale_writer workload",
                                token=_token_for(kernel.bootargs, name))
    needs(("rcutree.enable_rcu_lazy",), "CONFIG_RCU_LAZY")
    needs(("preempt",), "CONFIG_PREEMPT_DYNAMIC")
    for name in args:
        try:
            check_module_param(name, kernel.release, kernel.patches)
        except ScenarioError as exc:
            raise exc.with_context(path=_BOOTARGS_PATH) from None

    # rcu_init_geometry(): the boot-time leaf fanout must be 2..64 and must fit
    # nr_cpu_ids into the compiled number of levels; otherwise the kernel warns
    # and keeps CONFIG_RCU_FANOUT_LEAF.
    fanout = kernel.CONFIG_RCU_FANOUT
    leaf_config = kernel.CONFIG_RCU_FANOUT_LEAF
    leaf = args.get("rcutree.rcu_fanout_leaf", leaf_config)
    if not (leaf == leaf_config and nr == nr_config):
        levels = _compiled_levels(nr_config, leaf_config, fanout)
        if leaf < 2 or leaf > 64 or nr > leaf * fanout ** (levels - 1):
            leaf = leaf_config

    # rcu_init_geometry() and the jiffies_till_* parameter setters.
    d = (1 + (hz > 250) + (hz > 500)) + nr // 256  # RCU_JIFFIES_TILL_FORCE_QS + nr/RCU_JIFFIES_FQS_DIV
    first = args.get("rcutree.jiffies_till_first_fqs")
    first = d if first is None else min(first, hz)
    nxt = args.get("rcutree.jiffies_till_next_fqs")
    nxt = d if nxt is None else max(1, min(nxt, hz))
    # adjust_jiffies_till_sched_qs(); ULONG_MAX means "compute it".
    sched_qs = args.get("rcutree.jiffies_till_sched_qs", 2**64 - 1)
    if sched_qs == 2**64 - 1:
        sched_qs = max(first + 2 * nxt, hz // 10 + nr // 256)

    divisor = args.get("rcutree.rcu_divisor", 7)
    divisor = 7 if divisor < 0 else min(divisor, 62)  # as rcu_do_batch() reads it
    resched_ns = min(max(args.get("rcutree.rcu_resched_ns", 3_000_000), 1_000_000), 1_000_000_000)

    # sanitize_kthread_prio() (the CONFIG_RCU_TORTURE_TEST built-in case is not modelled).
    prio = args.get("rcutree.kthread_prio", 1 if kernel.CONFIG_RCU_BOOST else 0)
    if kernel.CONFIG_RCU_BOOST and prio < 1:
        prio = 1
    elif prio < 0:
        prio = 0
    elif prio > 99:
        prio = 99

    nocb_is_setup, nocb_cpus, nohz_full = False, (), ()
    if kernel.CONFIG_RCU_NOCB_CPU:
        # rcu_nocb_setup() and rcu_init_nohz().
        mask: set[int] = set()
        if "rcu_nocbs" in args:
            nocb_is_setup = True
            mask.update(parse_cpulist(args["rcu_nocbs"], nr))
        if "nohz_full" in args:
            nohz_full = parse_cpulist(args["nohz_full"], nr)
            if len(nohz_full) == nr:
                # housekeeping_setup(): at least one housekeeping CPU is kept,
                # the boot CPU.
                nohz_full = nohz_full[1:]
        if nohz_full:
            nocb_is_setup = True
            mask.update(nohz_full)
        elif kernel.CONFIG_RCU_NOCB_CPU_DEFAULT_ALL and not nocb_is_setup:
            nocb_is_setup = True
            mask.update(range(nr))
        nocb_cpus = tuple(sorted(mask))

    stride = args.get("rcutree.rcu_nocb_gp_stride", -1)
    if stride == -1:
        stride = nr // math.isqrt(nr)  # rcu_organize_nocb_kthreads()

    lazy = kernel.CONFIG_RCU_LAZY and args.get("rcutree.enable_rcu_lazy",
                                               not kernel.CONFIG_RCU_LAZY_DEFAULT_OFF)

    # rcu_normal_wake_from_gp: explicit values are kept; -1 (auto) is the
    # release's default: on for at most 16 possible CPUs (WAKE_FROM_GP_CPU_THRESHOLD)
    # where the release has the auto setting, off before.
    wake = args.get("rcutree.rcu_normal_wake_from_gp", -1)
    wake_from_gp = (switches.wake_from_gp_auto and nr <= 16) if wake < 0 else wake >= 1

    return RcuParams(
        release=release,
        switches=switches,
        hz=hz,
        nr_cpu_ids=nr,
        nr_cpus_config=nr_config,
        fanout=fanout,
        fanout_leaf=leaf,
        fanout_exact=args.get("rcutree.rcu_fanout_exact", False),
        preempt_rcu=kernel.CONFIG_PREEMPT_RCU,
        # preempt= of a CONFIG_PREEMPT_DYNAMIC kernel: none and voluntary run as !PREEMPTION.
        preemption=kernel.CONFIG_PREEMPTION and args.get("preempt", "full") == "full",
        rcu_boost=kernel.CONFIG_RCU_BOOST,
        blimit=args.get("rcutree.blimit", 10),
        qhimark=args.get("rcutree.qhimark", 10000),
        qlowmark=args.get("rcutree.qlowmark", 100),
        qovld=2 * 10000,  # DEFAULT_RCU_QOVLD_MULT * DEFAULT_RCU_QHIMARK
        rcu_divisor=divisor,
        rcu_resched_ns=resched_ns,
        jiffies_till_first_fqs=first,
        jiffies_till_next_fqs=nxt,
        jiffies_to_sched_qs=sched_qs,
        use_softirq=args.get("rcutree.use_softirq", True),  # !PREEMPT_RT
        kthread_prio=prio,
        nocb_is_setup=nocb_is_setup,
        nocb_cpus=nocb_cpus,
        nohz_full_cpus=tuple(nohz_full),
        nocb_gp_stride=stride,
        nocb_poll=False,
        nocb_cb_boost=kernel.CONFIG_RCU_NOCB_CPU_CB_BOOST,
        # rcu_start_exp_gp_kworker(): SCHED_FIFO only with CONFIG_RCU_EXP_KTHREAD,
        # whose Kconfig default is !PREEMPT_RT && NR_CPUS <= 32.
        exp_kthread_rt=prio > 0 and (kernel.CONFIG_RCU_EXP_KTHREAD if kernel.CONFIG_RCU_EXP_KTHREAD
                                     is not None else nr_config <= 32),
        exp_mutex_rt=kernel.exp_mutex == "rt_mutex",
        lazy=bool(lazy),
        rcu_normal_wake_from_gp=wake_from_gp,
        rcu_expedited=bool(args.get("rcupdate.rcu_expedited", 0)),
        # rcu_normal_after_boot defaults to PREEMPT_RT; rcusim models no PREEMPT_RT.
        rcu_normal=bool(args.get("rcupdate.rcu_normal", 0)
                        or args.get("rcupdate.rcu_normal_after_boot", 0)),
        rcumaxbatch=args.get("rcupdate.rcumaxbatch"),
        rcuplugticks=args.get("rcupdate.rcuplugticks", 4),
        krcud_bhlimit=args.get("rcupdate.bhlimit", 0),
        kfree_drain_jiffies=5 * hz if switches.kfree_drain_5hz else hz // 50,
        kvfree_polled=switches.kvfree_polled,
        kvfree_drain_ready=switches.kvfree_drain_ready,
        rcu_min_cached_objs=(args.get("rcutree.rcu_min_cached_objs", 5 if switches.kvfree_page_cache_work else 2)
                             if switches.kvfree_page_cache else int(switches.kfree_bulk)),
    )


def _compiled_levels(nr_config: int, leaf: int, fanout: int) -> int:
    """Return RCU_NUM_LVLS for a build, or 5 if the tree does not fit in 4 levels."""
    for levels in range(1, 5):
        if nr_config <= leaf * fanout ** (levels - 1):
            return levels
    return 5


def resolve_variant(name: str, variant: VariantInput) -> VariantSpec:
    """Cross-check one validated variant and resolve every value.

    Parameters
    ----------
    name : str
        Variant name.
    variant : VariantInput
        The validated variant.

    Returns
    -------
    VariantSpec

    Raises
    ------
    ScenarioError
        For values that are valid alone but not together (CONFIG_NR_CPUS below
        the CPU count, a tree too deep to build, CPU lists past the last CPU).
    """
    hw = variant.hardware
    kernel = variant.kernel
    nr = hw.nr_cpus
    nr_config = kernel.CONFIG_NR_CPUS if kernel.CONFIG_NR_CPUS is not None else nr
    if nr_config < nr:
        raise ScenarioError(f"{nr_config} is less than hardware.nr_cpus ({nr})",
                            path=("kernel", "CONFIG_NR_CPUS"),
                            allowed=f"an integer from {nr} to {MAX_CPUS}")
    leaf, fanout = kernel.CONFIG_RCU_FANOUT_LEAF, kernel.CONFIG_RCU_FANOUT
    if _compiled_levels(nr_config, leaf, fanout) > 4:
        least = next((f for f in range(2, 65) if leaf * f ** 3 >= nr_config), None)
        allowed = (f"CONFIG_RCU_FANOUT >= {least} for CONFIG_RCU_FANOUT_LEAF={leaf}"
                   if least else "a larger CONFIG_RCU_FANOUT_LEAF")
        raise ScenarioError(
            f"{fanout} is too small: CONFIG_RCU_FANOUT_LEAF * CONFIG_RCU_FANOUT**3 = "
            f"{leaf * fanout ** 3} < CONFIG_NR_CPUS = {nr_config}, the rcu_node tree would "
            "need more than 4 levels and the kernel build fails",
            path=("kernel", "CONFIG_RCU_FANOUT"), allowed=allowed)
    names: dict[str, int] = {}
    _check_membarrier(variant.workloads)
    for i, work in enumerate(variant.workloads):
        work.check_cpus(nr, path=("workloads", i))
        if work.name is not None:
            if work.name in names:
                raise ScenarioError(f"duplicate workload name {work.name!r} "
                                    f"(also workloads[{names[work.name]}])",
                                    path=("workloads", i, "name"), allowed="unique names")
            names[work.name] = i
    _check_run_end(variant.workloads, variant.run)
    _check_vfree(variant.workloads, hw.profile)
    _check_trace_event(kernel, hw.profile)
    _check_readers(variant.workloads, nr, kernel)
    _check_kfree(variant.workloads, kernel)
    _check_async(variant.workloads, kernel)
    kernel = kernel.model_copy(update={"CONFIG_NR_CPUS": nr_config})
    params = resolve_params(nr, kernel)
    _check_nice(variant.workloads, params)
    _check_kfree_by_call_rcu(variant.workloads, kernel, params)
    _check_unpinned(variant.workloads, params, hw.resolved_topology())
    _check_classic_smp(params, nr)
    hardware = HardwareSpec(profile=hw.profile, nr_cpus=nr, costs=hw.resolved_costs(),
                            cost_sources=hw.cost_sources(), idle_states=hw.resolved_idle_states(),
                            topology=hw.resolved_topology(), halt_poll=hw.resolved_halt_poll(),
                            vmalloc=profile_vmalloc(hw.profile), ttwu_reuse=profile_ttwu_reuse(hw.profile),
                            tracing=profile_tracing(hw.profile), wakeup_idle=hw.resolved_wakeup_idle(),
                            memory_mb=hw.resolved_memory_mb(),
                            pcp_start_pages=profile_pcp_start_pages(hw.profile),
                            thread_start=profile_thread_start(hw.profile))
    _check_kfree_memory(variant.workloads, hardware)
    _check_thread_start(variant.workloads, hardware)
    workloads, writer = [], None
    for i, work in enumerate(variant.workloads):
        if not isinstance(work, RcuscaleWriter):
            workloads.append(work)
            continue
        writer = work
        for part in rcuscale_writer_workloads(work, nr, kernel, params, path=("workloads", i)):
            if names.get(part.name, i) != i:
                raise ScenarioError(f"its {part.name!r} workload has the name of workloads[{names[part.name]}]",
                                    path=("workloads", i, "name"), allowed="another name for that workload")
            workloads.append(part)
    return VariantSpec(name=name, hardware=hardware, kernel=kernel, params=params,
                       workloads=workloads, run=variant.run, rcuscale_writer=writer,
                       resolution=_resolution(workloads, nr, kernel, params))


def _resolution(workloads, nr: int, kernel: Kernel, params: RcuParams) -> Resolution:
    """What the engine needs of `workloads` (as they run: an rcuscale_writer resolved) and
    the kernel, decided here once."""
    bootargs = parse_bootargs(kernel.bootargs)
    flood = next((w for w in workloads if isinstance(w, KfreeRcuFlood)), None)
    sw = params.switches
    # kfree_by_call_rcu: rcuscale call_rcu()s a kfree callback, unless CONFIG_RCU_LAZY=n makes it fall back.
    by_call = flood is not None and flood.kfree_by_call_rcu and kernel.CONFIG_RCU_LAZY
    if by_call or not sw.kfree_rcu_batching:
        gen = "call_rcu"
    else:
        gen = "bulk" if sw.kfree_bulk else "head_list"
    form = 0  # kfree_rcu_test_both: torture_random() picks each call's form
    if flood is not None:
        if flood.kfree_rcu_test_single != flood.kfree_rcu_test_double:
            form = 1 if flood.kfree_rcu_test_single else 2
        if module_param_since("rcuscale.kfree_rcu_test_single", kernel.release):
            form = 2  # the test's one form, kfree_rcu(p, rh), before v5.13
    return Resolution(
        cpus=tuple(tuple(parse_cpulist(w.cpus, nr)) if getattr(w, "cpus", None) is not None else ()
                   for w in workloads),
        start_cpus=tuple(tuple(parse_cpulist(w.start_cpus, nr)) if getattr(w, "start_cpus", None) is not None
                         else None for w in workloads),
        kfree_gen=gen, kfree_form=form, kfree_lazy=bool(by_call) and params.lazy,
        # sched_dynamic_update() (kernel/sched/core.c): preempt=voluntary points might_resched at
        # __cond_resched(); preempt=none makes it a no-op. A !PREEMPTION build without
        # CONFIG_PREEMPT_DYNAMIC is taken as PREEMPT_NONE.
        might_resched=(not params.preemption and kernel.CONFIG_PREEMPT_DYNAMIC
                       and bootargs.get("preempt") == "voluntary"),
        trace_events=tuple(bootargs.get("trace_event", ())), hz_periodic=kernel.CONFIG_HZ_PERIODIC)


#: rcu_scale_reader()'s loop as call_rcu_load work: how long one modelled operation of
#: it lasts (the loop has no operations; the length only sets how often the engine looks).
READER_OP_US = 1000.0


def rcuscale_writer_workloads(wl: RcuscaleWriter, nr_cpus: int, kernel: Kernel, params: RcuParams,
                              path: tuple = ()) -> list:
    """The workloads rcuscale's GP-writer test runs: rcu_scale_writer() kthreads as a
    ``sync_loop``, rcu_scale_reader() kthreads as ``call_rcu_load`` workloads.

    The writers are SCHED_FIFO (sched_set_fifo_low()), writer i on CPU i % nr_cpu_ids, after
    `holdoff` seconds; each is done at its MIN_MEAS-th measurement plus one once a jiffy
    past `minruntime` seconds has begun (time_after(jiffies, jdone)), sleeping 1 to
    `writer_holdoff_jiffies` jiffies before each call. A done writer turns SCHED_NORMAL and
    goes on measuring until every writer is done (``until_all_done``). The readers run at nice 19 (MAX_NICE),
    reader i on CPU i % nr_cpu_ids, each looping on an empty rcu_read_lock()/rcu_read_unlock()
    pair with interrupts off: a tick never lands inside the section, so with preemptible RCU
    each reports a quiescent state; in rcusim they are kernel-mode CPU hogs that queue no
    callback.
    """
    for name, given in (("gp_async", wl.gp_async), ("minruntime", wl.minruntime != 0),
                        ("writer_holdoff_jiffies", wl.writer_holdoff_jiffies != 0)):
        if given:
            try:
                check_module_param(f"rcuscale.{name}", kernel.release)
            except ScenarioError as exc:
                raise ScenarioError(exc.problem, path=path + (name,), allowed=exc.allowed) from None
    primitive = ("call_rcu_hurry" if wl.gp_async else "synchronize_rcu_expedited" if wl.gp_exp
                 else "synchronize_rcu")
    writers = SyncLoop(kind="sync_loop", name=wl.name or WRITER_NAME, tasks=compute_real(wl.nwriters, nr_cpus),
                       loops=MIN_MEAS + 1, rt=True, kthread=True, primitive=primitive,
                       async_max=wl.gp_async_max if wl.gp_async else None, work_after="none",
                       think_us=float(wl.writer_holdoff), start_us=wl.holdoff * 1e6,
                       sleep_jiffies_max=wl.writer_holdoff_jiffies, min_runtime_s=float(wl.minruntime),
                       until_all_done=True)
    nreaders = compute_real(wl.nreaders, nr_cpus)
    if nreaders == 0:
        return [writers]
    if not params.preemption:
        raise ScenarioError("the writer test's readers on a CONFIG_PREEMPTION=n kernel pass quiescent states "
                            "only when cond_resched() finds rcu_urgent_qs set, which is not modelled",
                            path=path + ("nreaders",), allowed="nreaders: 0, or a preemptible kernel")
    if not params.switches.cfs:
        raise ScenarioError("the writer test's readers run at nice 19, a weight of the fair class (CFS, v2.6.23 "
                            "and later)", path=path + ("nreaders",), allowed="nreaders: 0, or kernel.release 2.6.23 or later")
    per_cpu, extra = divmod(nreaders, nr_cpus)
    reader = {"kind": "call_rcu_load", "work_us": READER_OP_US, "call_rcu_per_op": 0, "nice": 19}
    out = [writers]
    if per_cpu:
        out.append(CallRcuLoad(**reader, name="rcu_scale_reader", cpus="all", tasks_per_cpu=per_cpu))
    if extra:
        out.append(CallRcuLoad(**reader, name="rcu_scale_reader_extra", cpus=f"0-{extra - 1}", tasks_per_cpu=1))
    return out


def _check_async(workloads, kernel: Kernel) -> None:
    """rcuscale's asynchronous writer loop (call_rcu_hurry) exists from rcuscale's gp_async on;
    rcuscale runs one GP-writer test."""
    writers = [i for i, w in enumerate(workloads) if isinstance(w, RcuscaleWriter)]
    if len(writers) > 1:
        raise ScenarioError("a second rcuscale_writer workload (rcuscale runs one GP-writer test)",
                            path=("workloads", writers[1], "kind"), allowed="one rcuscale_writer")
    for i, work in enumerate(workloads):
        if isinstance(work, SyncLoop) and work.primitive == "call_rcu_hurry":
            try:
                check_module_param("rcuscale.gp_async", kernel.release)
            except ScenarioError as exc:
                raise ScenarioError(f"call_rcu_hurry is rcuscale's gp_async writer loop: {exc.problem}",
                                    path=("workloads", i, "primitive"), allowed=exc.allowed) from None


def _check_membarrier(workloads) -> None:
    """sys_membarrier() loops run in their own engine, without RCU workloads beside them."""
    kinds = [isinstance(w, MembarrierLoop) for w in workloads]
    if any(kinds) and not all(kinds):
        i = kinds.index(not kinds[0])
        raise ScenarioError("membarrier_loop workloads cannot share a variant with RCU workloads",
                            path=("workloads", i, "kind"),
                            allowed="only membarrier_loop workloads, or none")


#: kfree_rcu_flood keys that rcuscale's kfree test (rcuperf's before v5.10) gained after v5.6, with the
#: value that is the test of an earlier release: any other needs a release whose test has the parameter.
_KFREE_LATER_PARAMS = {"kfree_mult": 1, "kfree_rcu_test_single": False, "kfree_rcu_test_double": False,
                       "kfree_by_call_rcu": False}


def _check_kfree(workloads, kernel: Kernel) -> None:
    """At most one kfree flood, on a release with kfree_rcu(), with parameters its kfree test has."""
    floods = [i for i, w in enumerate(workloads) if isinstance(w, KfreeRcuFlood)]
    if len(floods) > 1:
        raise ScenarioError("a second kfree_rcu_flood workload (rcuscale runs one kfree test)",
                            path=("workloads", floods[1], "kind"), allowed="one kfree_rcu_flood")
    for i in floods:
        if not kernel.switches.kfree_rcu:
            raise ScenarioError(f"release {kernel.release} has no kfree_rcu() (added in v3.0)",
                                path=("workloads", i, "kind"), allowed="kernel.release 3.0 or later")
        if workloads[i].kfree_nthreads == 0:
            raise ScenarioError("0 threads: rcuscale would start no kfree thread and never print",
                                path=("workloads", i, "kfree_nthreads"),
                                allowed="an integer >= 1, or -k for the online CPUs minus k-1")
        for key, value in _KFREE_LATER_PARAMS.items():
            since = module_param_since(f"rcuscale.{key}", kernel.release)
            if getattr(workloads[i], key) != value and since is not None:
                raise ScenarioError(f"rcuscale's kfree test has no {key} in release {kernel.release} "
                                    f"(added in v{since})", path=("workloads", i, key),
                                    allowed=f"{str(value).lower()}, or kernel.release {since} or later")


def _check_kfree_memory(workloads, hardware: HardwareSpec) -> None:
    """A kfree flood's slabs and bulk pages come from the page allocator's per-CPU lists, which
    the machine's memory sizes."""
    for i, work in enumerate(workloads):
        if not isinstance(work, KfreeRcuFlood):
            continue
        if hardware.memory_mb is None:
            raise ScenarioError(f"profile {hardware.profile!r} gives no memory size, and a kfree_rcu_flood "
                                "needs one: it sizes the page allocator's per-CPU lists",
                                path=("hardware", "memory_mb"), allowed="the machine's memory in MB, from 64")


def _check_thread_start(workloads, hardware: HardwareSpec) -> None:
    """Unpinned threads released from a barrier are created one by one by their parent, as the
    twin's load helper creates them: the profile must time that."""
    for i, work in enumerate(workloads):
        if (isinstance(work, SyncLoop) and work.start == "barrier" and not work.pinned
                and hardware.thread_start is None):
            raise ScenarioError(f"profile {hardware.profile!r} does not time the load helper's thread creation "
                                "(thread_start), which unpinned threads started from a barrier need",
                                path=("workloads", i, "start"),
                                allowed="together, pinned: true, or a profile with thread_start (qemu-tcg)")


def _check_kfree_by_call_rcu(workloads, kernel: Kernel, params: RcuParams) -> None:
    """kfree_by_call_rcu with CONFIG_RCU_LAZY: kfree_scale_init() first checks that one call_rcu()
    is lazy (invoked 2-3 s later with jiffies_lazy_flush at 2*HZ) and runs no test if it is not.
    Without CONFIG_RCU_LAZY it falls back to kfree_rcu(), so the key has no effect."""
    for i, work in enumerate(workloads):
        if not (isinstance(work, KfreeRcuFlood) and work.kfree_by_call_rcu and kernel.CONFIG_RCU_LAZY):
            continue
        path = ("workloads", i, "kfree_by_call_rcu")
        if not params.lazy:
            raise ScenarioError("rcuscale's laziness self-test fails with lazy RCU off at boot "
                                "(rcutree.enable_rcu_lazy=0 or CONFIG_RCU_LAZY_DEFAULT_OFF) and the "
                                "kfree test does not run", path=path,
                                allowed="false, or lazy RCU on at boot with every CPU offloaded")
        if len(params.nocb_cpus) != params.nr_cpu_ids:
            raise ScenarioError("rcuscale's laziness self-test passes only if its call_rcu() runs on an "
                                "offloaded CPU, and rcusim does not know which CPU runs rcuscale's init",
                                path=path, allowed="false, or every CPU offloaded "
                                                   "(CONFIG_RCU_NOCB_CPU_DEFAULT_ALL or rcu_nocbs=all)")


def _check_nice(workloads, params: RcuParams) -> None:
    """Nice weights need the fair class (CFS, v2.6.23): before it rcusim runs SCHED_OTHER
    in one-jiffy round robin, where nice would be ignored."""
    if params.switches.cfs:
        return
    for i, work in enumerate(workloads):
        if getattr(work, "nice", 0):
            raise ScenarioError("nice weights need the fair class (CFS, v2.6.23 and later); this release "
                                "runs SCHED_OTHER in rcusim's round robin", path=("workloads", i, "nice"),
                                allowed="nice: 0, or kernel.release 2.6.23 or later")


def _check_classic_smp(params: RcuParams, nr_cpus: int) -> None:
    """Classic RCU (before v2.6.29) is modelled on one CPU, the 2004 seed's machine: on
    several CPUs its grace periods would need the idle CPUs' ticks (before NO_HZ,
    v2.6.21) or nohz_cpu_mask (after), which rcusim does not model."""
    if not params.switches.tree_rcu and nr_cpus > 1:
        raise ScenarioError(f"classic RCU (kernel.release before 2.6.29) is modelled on one CPU, not "
                            f"{nr_cpus}", path=("hardware", "nr_cpus"),
                            allowed="1, or kernel.release 2.6.29 or later")


def _check_unpinned(workloads, params: RcuParams, topology: dict | None) -> None:
    """Placement and migration are the fair class's, over the machine's scheduling
    domains: unpinned tasks need both."""
    for i, work in enumerate(workloads):
        if getattr(work, "pinned", True):
            continue
        if not params.switches.cfs:
            raise ScenarioError("unpinned tasks need the fair class's placement (CFS, v2.6.23 and later); "
                                "this release runs SCHED_OTHER in rcusim's round robin",
                                path=("workloads", i, "pinned"),
                                allowed="true, or kernel.release 2.6.23 or later")
        if topology is None:
            raise ScenarioError("unpinned tasks are placed over the scheduling domains, and this hardware "
                                "profile gives no topology", path=("workloads", i, "pinned"),
                                allowed="true, or hardware.topology")


def _check_vfree(workloads, profile: str) -> None:
    """vmalloc() and vfree() need the profile's costs of them."""
    for i, work in enumerate(workloads):
        if isinstance(work, SyncLoop) and work.work_after == "vfree" and profile_vmalloc(profile) is None:
            raise ScenarioError(f"profile {profile!r} has no vmalloc()/vfree() costs",
                                path=("workloads", i, "work_after"),
                                allowed="none or kfree, or a profile with vmalloc costs: "
                                        + ", ".join(p for p in PROFILES if profile_vmalloc(p)))


def _check_trace_event(kernel, profile: str) -> None:
    """trace_event= needs the profile's price of a traced event, and the tracepoints where
    rcusim prices them: 6.12's code."""
    if "trace_event" not in parse_bootargs(kernel.bootargs):
        return
    token = _token_for(kernel.bootargs, "trace_event")
    if profile_tracing(profile) is None:
        raise ScenarioError(f"trace_event: profile {profile!r} does not say what a traced event costs",
                            path=_BOOTARGS_PATH, token=token,
                            allowed="no trace_event=, or a profile with a tracing section: "
                                    + ", ".join(p for p in PROFILES if profile_tracing(p)))
    if kernel.release_tuple < TRACEPOINT_SITES:
        sites = ".".join(map(str, TRACEPOINT_SITES))
        raise ScenarioError(f"trace_event: rcusim prices the tracepoints where {sites}'s code records them, "
                            f"not release {kernel.release}'s", path=_BOOTARGS_PATH, token=token,
                            allowed=f"kernel.release {sites} or later, or no trace_event=")


def _check_run_end(workloads, run: Run) -> None:
    """Finite workloads end a run; without them run.duration_s does."""
    finite = any(isinstance(w, FINITE_WORKLOADS) for w in workloads)
    if not finite and run.duration_s is None:
        raise ScenarioError("only workloads that never finish: nothing would end the run",
                            path=("workloads",),
                            allowed="set run.duration_s, or add a sync_loop, kfree_rcu_flood or "
                                    "rt_latency_probe workload")
    if finite and run.duration_s is not None:
        raise ScenarioError("the workloads end this run when they finish", path=("run", "duration_s"),
                            allowed="drop run.duration_s (run.max_sim_time_s bounds a run), or keep only "
                                    "call_rcu_load, readers and noise workloads")


def _check_readers(workloads, nr: int, kernel: Kernel) -> None:
    """Readers need callers to run against, fit in a second, one task per CPU, and no
    priority boosting."""
    owner: dict[int, int] = {}
    for i, work in enumerate(workloads):
        if not isinstance(work, Readers):
            continue
        if work.length_us * work.rate_per_s > 1e6:
            raise ScenarioError(
                f"{work.rate_per_s:g} sections/s of {work.length_us:g} us each do not fit in a second",
                path=("workloads", i, "rate_per_s"), allowed=f"at most {1e6 / work.length_us:g}")
        if work.preemptible and not kernel.CONFIG_PREEMPT_RCU:
            raise ScenarioError("preemptible readers need CONFIG_PREEMPT_RCU=y",
                                path=("workloads", i, "preemptible"),
                                allowed="false, or set kernel.CONFIG_PREEMPT_RCU: true")
        # Preemptible by default: CONFIG_RCU_BOOST depends on CONFIG_PREEMPT_RCU.
        if kernel.CONFIG_RCU_BOOST and work.preemptible is not False:
            raise ScenarioError("CONFIG_RCU_BOOST boosts readers preempted in their sections, which "
                                "rcusim does not model", path=("kernel", "CONFIG_RCU_BOOST"),
                                allowed="false, or readers with preemptible: false")
        for c in parse_cpulist(work.cpus, nr):
            if c in owner:
                raise ScenarioError(f"CPU {c} already has a reader task (workloads[{owner[c]}])",
                                    path=("workloads", i, "cpus"), allowed="disjoint CPU lists")
            owner[c] = i


def build_variant(name: str, data) -> VariantSpec:
    """Validate one variant's mapping and resolve it.

    Parameters
    ----------
    name : str
        Variant name.
    data : mapping
        ``{"hardware": ..., "kernel": ..., "workloads": [...], "run": ...}``.

    Returns
    -------
    VariantSpec

    Raises
    ------
    ScenarioError
        Naming the key path of the first problem (no file location).
    """
    try:
        variant = VariantInput.model_validate(data)
    except ValidationError as exc:
        raise scenario_error_from_validation(exc, data, VariantInput) from None
    return resolve_variant(name, variant)
