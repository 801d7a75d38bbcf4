"""Named hardware profiles: platform costs, each with its source.

A profile is a YAML file in ``rcusim/profiles/`` whose ``costs`` mapping gives,
for every cost in :data:`COST_NAMES`, an integer number of nanoseconds and the
place the number comes from::

    costs:
      ipi_latency_ns:
        value: 1300
        source: "x86 IPI one-way 1.32-1.45 us (ipi_benchmark, KVM list 2022) ..."

The costs are properties of the platform, measured outside RCU (or estimated,
and then marked as estimates); they are never chosen to make an RCU result
come out. A scenario picks a profile by name and may override single costs
(``hardware.costs``).

A profile may list the platform's idle states (``idle_states``: a source and
the states as cpuidle numbers them, each with its exit latency and target
residency in microseconds); the menu governor then picks a state per idle
period and a wake-up costs that state's exit latency. A profile of a KVM guest
gives its host's halt polling instead (``halt_poll``: the kvm module's
parameters and what a wake-up costs when the host's poll loop finds it or the
vCPU thread has blocked, each with its source). A profile with neither gives
one measured wake-up latency of an idle CPU (:data:`IDLE_WAKE_COSTS`).
"""

from __future__ import annotations

import functools
from importlib import resources

import yaml

__all__ = ["COST_NAMES", "IDLE_WAKE_COSTS", "MAX_IDLE_STATES", "PROFILES", "Z_P99", "load_profile",
           "profile_sources", "profile_description", "profile_idle_states", "profile_idle_states_source",
           "profile_topology", "profile_topology_sources", "profile_halt_poll", "profile_halt_poll_sources",
           "profile_vmalloc", "profile_vmalloc_sources", "profile_ttwu_reuse", "profile_tracing",
           "profile_wakeup_idle", "profile_memory_mb", "profile_pcp_start_pages", "profile_thread_start",
           "THREAD_START_COSTS", "WAKEUP_IDLE_QUANTILES", "WAKEUP_IDLE_TAIL_QUANTILES",
           "noise_presets", "noise_preset_sources"]

#: z-score of the 99th percentile of a standard normal, to fit a lognormal to (median, p99).
Z_P99 = 2.3263478740408408

COST_NAMES: tuple[str, ...] = (
    "ctxsw_ns",
    "ttwu_ns",
    "wakeup_busy_ns",
    "wakeup_idle_median_ns",
    "wakeup_idle_p99_ns",
    "ipi_send_ns",
    "ipi_latency_ns",
    "ipi_handler_ns",
    "tick_ns",
    "softirq_ns",
    "rnp_lock_ns",
    "cb_wakeme_ns",
    "cb_kfree_ns",
    "cb_generic_ns",
    "call_rcu_ns",
    "kfree_ns",
    "sync_entry_ns",
    "kmalloc_ns",
    "kvfree_call_rcu_ns",
    "kfree_bulk_ns",
    "page_alloc_ns",
)
"""Names of the platform costs, all integer nanoseconds (see rcusim.input.hardware.Costs)."""

IDLE_WAKE_COSTS = ("wakeup_idle_median_ns", "wakeup_idle_p99_ns")
"""The costs a profile gives instead of ``idle_states``."""

MAX_IDLE_STATES = 8
"""Idle states the engine holds per profile."""


def _profile_dir():
    """Return the folder holding the profile files (package data)."""
    return resources.files("rcusim").joinpath("profiles")


def _find_profiles() -> tuple[str, ...]:
    """Return the names of the bundled profiles, sorted."""
    names = [entry.name[: -len(".yaml")] for entry in _profile_dir().iterdir()
             if entry.name.endswith(".yaml")]
    return tuple(sorted(names))


PROFILES: tuple[str, ...] = _find_profiles()
"""Names of the bundled hardware profiles."""


@functools.lru_cache(maxsize=None)
def _read(name: str) -> dict:
    """Read and check one profile file; the result is cached and not to be mutated."""
    if name not in PROFILES:
        raise KeyError(f"unknown hardware profile {name!r}; known: {', '.join(PROFILES)}")
    text = _profile_dir().joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    costs = data.get("costs") if isinstance(data, dict) else None
    idle_table = "idle_states" in data or "halt_poll" in data
    names = [c for c in COST_NAMES if not (idle_table and c in IDLE_WAKE_COSTS)]
    if not isinstance(costs, dict) or set(costs) != set(names):
        raise ValueError(f"hardware profile {name!r} must give exactly these costs: "
                         f"{', '.join(names)}")
    if "idle_states" in data:
        _check_idle_states(name, data["idle_states"])
    if "topology" in data:
        _check_topology(name, data["topology"])
    if "vmalloc" in data:
        _check_vmalloc(name, data["vmalloc"])
    if "ttwu_reuse" in data:
        _check_ttwu_reuse(name, data["ttwu_reuse"])
    if "tracing" in data:
        _check_tracing(name, data["tracing"])
    if "thread_start" in data:
        _check_thread_start(name, data["thread_start"])
    if "wakeup_idle" in data:
        _check_wakeup_idle(name, data["wakeup_idle"])
    if "memory_mb" in data and not (_sourced_ns(data["memory_mb"]) and data["memory_mb"]["value"] > 0):
        raise ValueError(f"hardware profile {name!r}: memory_mb must be {{value: <int MB > 0>, source}}")
    if "pcp_start_pages" in data and not _sourced_ns(data["pcp_start_pages"]):
        raise ValueError(f"hardware profile {name!r}: pcp_start_pages must be {{value: <int pages >= 0>, source}}")
    if "halt_poll" in data:
        if "idle_states" in data:
            raise ValueError(f"hardware profile {name!r}: a KVM guest's idle is HLT, "
                             "not cpuidle states: give halt_poll or idle_states, not both")
        _check_halt_poll(name, data["halt_poll"])
    for cost, entry in costs.items():
        # Each number must carry its source; a bare number is a packaging error.
        if not _sourced_ns(entry):
            raise ValueError(f"hardware profile {name!r}: {cost} must be "
                             "{value: <int ns >= 0>, source: <text>}")
    return data


def _check_idle_states(name: str, table) -> None:
    states = table.get("states") if isinstance(table, dict) else None
    ok = (isinstance(table, dict) and set(table) == {"source", "states"} and str(table["source"]).strip()
          and isinstance(states, list) and 1 <= len(states) <= MAX_IDLE_STATES)
    for i, st in enumerate(states if ok else ()):
        ok = ok and isinstance(st, dict) and {"name", "exit_latency_us", "target_residency_us"} <= set(st) \
            <= {"name", "exit_latency_us", "target_residency_us", "polling", "mwait", "wake_ns"} \
            and all(isinstance(st[k], int) and st[k] >= 0 for k in ("exit_latency_us", "target_residency_us")) \
            and (i == 0 or not st.get("polling", False))
    if not ok:
        raise ValueError(f"hardware profile {name!r}: idle_states must be {{source: <text>, states: "
                         f"[1 to {MAX_IDLE_STATES} of {{name, exit_latency_us, target_residency_us, "
                         "polling (state 0 only)}]}")


_DISTANCES = ("smt", "llc", "socket", "remote")
"""Distances between two CPUs: SMT siblings, same LLC, same socket, other socket."""


def _sourced_ns(item) -> bool:
    """``{value: <int >= 0>, source: <text>}``: a number (ns, MB, pages) with the place it comes from."""
    return bool(isinstance(item, dict) and set(item) == {"value", "source"} and isinstance(item["value"], int)
                and not isinstance(item["value"], bool) and item["value"] >= 0
                and isinstance(item["source"], str) and item["source"].strip())


def _check_topology(name: str, topo) -> None:
    line = topo.get("line_ns") if isinstance(topo, dict) else None
    ok = (isinstance(topo, dict) and set(topo) == {"source", "smt", "cores_per_llc", "llcs_per_socket", "line_ns"}
          and str(topo["source"]).strip()
          and all(isinstance(topo[k], int) and topo[k] >= 1 for k in ("smt", "cores_per_llc", "llcs_per_socket"))
          and isinstance(line, dict) and set(line) == set(_DISTANCES)
          and all(_sourced_ns(line[d]) for d in _DISTANCES))
    if not ok:
        raise ValueError(f"hardware profile {name!r}: topology must be {{source, smt, cores_per_llc, "
                         "llcs_per_socket, line_ns: {smt, llc, socket, remote: {value: <int ns>, source}}}")


_HALT_POLL_PARAMS = ("halt_poll_ns", "halt_poll_ns_grow", "halt_poll_ns_grow_start", "halt_poll_ns_shrink")
"""The kvm module's halt-polling parameters (virt/kvm/kvm_main.c)."""
_HALT_POLL_COSTS = ("wake_polled_ns", "wake_blocked_ns")
"""What ending a vCPU's halt costs: found by the host's poll loop, or with its thread blocked."""


def _check_halt_poll(name: str, hp) -> None:
    ok = (isinstance(hp, dict) and set(hp) == {"source", *_HALT_POLL_PARAMS, *_HALT_POLL_COSTS}
          and str(hp["source"]).strip()
          and all(isinstance(hp[k], int) and not isinstance(hp[k], bool) and hp[k] >= 0 for k in _HALT_POLL_PARAMS)
          and all(_sourced_ns(hp[k]) for k in _HALT_POLL_COSTS))
    if not ok:
        raise ValueError(f"hardware profile {name!r}: halt_poll must be {{source, "
                         f"{', '.join(_HALT_POLL_PARAMS)}: <int >= 0>, "
                         f"{', '.join(_HALT_POLL_COSTS)}: {{value: <int ns>, source}}}}")


def profile_halt_poll(name: str) -> dict | None:
    """A KVM guest profile's host halt polling: the kvm module's parameters and the two
    wake-up costs (ns), or None for a profile that is not a guest."""
    hp = _read(name).get("halt_poll")
    if hp is None:
        return None
    return {k: hp[k] for k in _HALT_POLL_PARAMS} | {k: hp[k]["value"] for k in _HALT_POLL_COSTS}


def profile_halt_poll_sources(name: str) -> dict[str, str]:
    """Where a guest profile's halt-polling figures come from (empty for other profiles)."""
    hp = _read(name).get("halt_poll")
    if hp is None:
        return {}
    out = {"parameters": " ".join(str(hp["source"]).split())}
    for k in _HALT_POLL_COSTS:
        out[k] = " ".join(str(hp[k]["source"]).split())
    return out


VMALLOC_COSTS = ("alloc_ns", "insert_ns", "setup_ns", "pages_ns", "unlink_ns", "purge_add_ns", "unmap_ns")
"""The steps of a one-page vmalloc() and vfree() (mm/vmalloc.c), in ns: under free_vmap_area_lock
(alloc), vmap_area_lock (insert, setup, unlink) and purge_vmap_area_lock (purge_add), and outside
them (pages, unmap)."""


def _check_vmalloc(name: str, vm) -> None:
    ok = (isinstance(vm, dict) and set(vm) == {"source", *VMALLOC_COSTS} and str(vm["source"]).strip()
          and all(_sourced_ns(vm[k]) for k in VMALLOC_COSTS))
    if not ok:
        raise ValueError(f"hardware profile {name!r}: vmalloc must be {{source, "
                         f"{', '.join(VMALLOC_COSTS)}: {{value: <int ns>, source}}}}")


def profile_vmalloc(name: str) -> dict | None:
    """A profile's one-page vmalloc()/vfree() costs by step (:data:`VMALLOC_COSTS`, ns), or None."""
    vm = _read(name).get("vmalloc")
    return None if vm is None else {k: vm[k]["value"] for k in VMALLOC_COSTS}


def profile_vmalloc_sources(name: str) -> dict[str, str]:
    """Where a profile's vmalloc()/vfree() costs come from (empty without them)."""
    vm = _read(name).get("vmalloc") or {}
    out = {"total": " ".join(str(vm["source"]).split())} if vm else {}
    for k in VMALLOC_COSTS if vm else ():
        out[k] = " ".join(str(vm[k]["source"]).split())
    return out


MAX_TTWU_REUSE = 16
"""Bins of a profile's ttwu_reuse table the engine holds."""


def _check_ttwu_reuse(name: str, table) -> None:
    since = table.get("since_ns") if isinstance(table, dict) else None
    cost = table.get("ttwu_ns") if isinstance(table, dict) else None
    ok = (isinstance(table, dict) and set(table) == {"source", "since_ns", "ttwu_ns", "in_cb_wakeme_ns"}
          and str(table["source"]).strip() and _sourced_ns(table["in_cb_wakeme_ns"])
          and isinstance(since, list) and isinstance(cost, list) and 1 <= len(since) < MAX_TTWU_REUSE
          and len(cost) == len(since) + 1
          and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in since + cost)
          and all(a < b for a, b in zip(since, since[1:])))
    if not ok:
        raise ValueError(f"hardware profile {name!r}: ttwu_reuse must be {{source, since_ns: [<int ns>, "
                         f"rising, at most {MAX_TTWU_REUSE - 1}], ttwu_ns: [<int ns>, one more], "
                         "in_cb_wakeme_ns: {value: <int ns>, source}}")


def profile_ttwu_reuse(name: str) -> dict | None:
    """A profile's try_to_wake_up() cost by the time since the waker's CPU last woke a task, as
    ``{since_ns, delta_ns, in_cb_wakeme_ns}``: up to ``since_ns[i]`` the cost is ``delta_ns[i]``
    from the profile's ttwu_ns (the median of the same wake-ups), the last beyond; and the
    wake-up inside the profile's cb_wakeme_ns; or None."""
    data = _read(name)
    table = data.get("ttwu_reuse")
    if table is None:
        return None
    median = data["costs"]["ttwu_ns"]["value"]
    return {"since_ns": tuple(table["since_ns"]), "delta_ns": tuple(v - median for v in table["ttwu_ns"]),
            "in_cb_wakeme_ns": table["in_cb_wakeme_ns"]["value"]}


WAKEUP_IDLE_QUANTILES = 101
"""Quantile levels of a measured idle wake-up latency: 0, 0.01, ..., 1."""
WAKEUP_IDLE_TAIL_QUANTILES = 11
"""Quantile levels of its last interval: 0.99, 0.991, ..., 1."""


def _check_wakeup_idle(name: str, table) -> None:
    lengths = {"quantiles_ns": WAKEUP_IDLE_QUANTILES, "tail_ns": WAKEUP_IDLE_TAIL_QUANTILES}
    ok = isinstance(table, dict) and set(table) == {"source", *lengths} and str(table["source"]).strip()
    for key, n in lengths.items():
        v = table.get(key) if ok else None
        ok = ok and (isinstance(v, list) and len(v) == n
                     and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v)
                     and all(a <= b for a, b in zip(v, v[1:])))
    # The last interval's quantiles run from the table's last but one to its last.
    ok = ok and table["tail_ns"][0] == table["quantiles_ns"][-2] and table["tail_ns"][-1] == table["quantiles_ns"][-1]
    if not ok:
        raise ValueError(f"hardware profile {name!r}: wakeup_idle must be {{source, quantiles_ns: "
                         f"[{WAKEUP_IDLE_QUANTILES} rising int ns], tail_ns: [{WAKEUP_IDLE_TAIL_QUANTILES} "
                         "rising int ns, from the last but one quantile to the last]}")


def profile_wakeup_idle(name: str) -> dict | None:
    """A profile's measured wake-up latency of an idle CPU, as ``{quantiles_ns, tail_ns}``: its
    quantiles at WAKEUP_IDLE_QUANTILES levels from 0 to 1 and its last interval's at
    WAKEUP_IDLE_TAIL_QUANTILES levels; or None (the lognormal of wakeup_idle_median_ns and
    wakeup_idle_p99_ns, or idle states)."""
    table = _read(name).get("wakeup_idle")
    return None if table is None else {k: tuple(table[k]) for k in ("quantiles_ns", "tail_ns")}


TRACING_COSTS = ("event_ns", "event_irq_ns")
"""One event recorded by an enabled tracepoint, in task context and in an interrupt (ns)."""


def _check_tracing(name: str, table) -> None:
    if not (isinstance(table, dict) and set(table) == {"source", *TRACING_COSTS} and str(table["source"]).strip()
            and all(_sourced_ns(table[k]) for k in TRACING_COSTS)):
        raise ValueError(f"hardware profile {name!r}: tracing must be {{source, "
                         f"{', '.join(TRACING_COSTS)}: {{value: <int ns>, source}}}}")


THREAD_START_COSTS = ("pthread_create_ns", "pthread_start_ns", "lock_run_ns", "barrier_run_ns", "woken_run_ns",
                      "call_rcu_per_1000")
"""The twin's load helper creating a thread (rcusim.twin.thread_start): the parent's pthread_create()
up to clone()'s wake_up_new_task(), then its sched_setaffinity() and unlock of the thread's start
lock; the thread's first run to that lock, or past it to the start barrier; its run once woken
from the lock (each run with one context switch in it), in ns; and the call_rcu()s the parent
makes per 1,000 threads (the stacks' mmap() freeing maple-tree nodes, mt_free_rcu())."""


def _check_thread_start(name: str, table) -> None:
    if not (isinstance(table, dict) and set(table) == {"source", *THREAD_START_COSTS}
            and str(table["source"]).strip() and all(_sourced_ns(table[k]) for k in THREAD_START_COSTS)):
        raise ValueError(f"hardware profile {name!r}: thread_start must be {{source, "
                         f"{', '.join(THREAD_START_COSTS)}: {{value: <int ns>, source}}}}")


def profile_thread_start(name: str) -> dict | None:
    """How the twin's load helper creates its threads on the platform (:data:`THREAD_START_COSTS`,
    ns), or None if the profile does not say."""
    table = _read(name).get("thread_start")
    return None if table is None else {k: table[k]["value"] for k in THREAD_START_COSTS}


def profile_memory_mb(name: str) -> int | None:
    """The machine's memory in MB, or None if the profile does not say."""
    mem = _read(name).get("memory_mb")
    return None if mem is None else mem["value"]


def profile_pcp_start_pages(name: str) -> int:
    """Pages on each CPU's unmovable order-0 list when a run begins (measured), 0 if the profile
    does not say: the lists then start empty."""
    start = _read(name).get("pcp_start_pages")
    return 0 if start is None else start["value"]


def profile_tracing(name: str) -> dict | None:
    """What one traced event costs on the platform, ``{event_ns, event_irq_ns}``, or None
    if the profile does not say."""
    table = _read(name).get("tracing")
    return None if table is None else {k: table[k]["value"] for k in TRACING_COSTS}


def profile_topology(name: str) -> dict | None:
    """A profile's topology: ``{smt, cores_per_llc, llcs_per_socket, line_ns: {smt, llc, socket,
    remote}}`` (one cache-line transfer by distance, ns), or None if it gives none."""
    topo = _read(name).get("topology")
    if topo is None:
        return None
    return {"smt": topo["smt"], "cores_per_llc": topo["cores_per_llc"], "llcs_per_socket": topo["llcs_per_socket"],
            "line_ns": {d: topo["line_ns"][d]["value"] for d in _DISTANCES}}


def profile_topology_sources(name: str) -> dict[str, str]:
    """Where a profile's topology and line costs come from."""
    topo = _read(name).get("topology") or {}
    out = {"shape": " ".join(str(topo.get("source", "")).split())} if topo else {}
    for d in _DISTANCES if topo else ():
        out[f"line_ns.{d}"] = " ".join(str(topo["line_ns"][d]["source"]).split())
    return out


def profile_idle_states(name: str) -> tuple[dict, ...]:
    """The idle states of a profile, state 0 first (empty if it gives none): each
    ``{name, exit_latency_us, target_residency_us, polling}``."""
    table = _read(name).get("idle_states")
    if table is None:
        return ()
    return tuple({"name": st["name"], "exit_latency_us": st["exit_latency_us"],
                  "target_residency_us": st["target_residency_us"], "polling": bool(st.get("polling", False)),
                  "mwait": bool(st.get("mwait", False)),
                  "wake_ns": int(st.get("wake_ns", st["exit_latency_us"] * 1000))}
                 for st in table["states"])


def profile_idle_states_source(name: str) -> str:
    """Where a profile's idle-state table comes from ("" if it has none)."""
    table = _read(name).get("idle_states")
    return " ".join(str(table["source"]).split()) if table else ""


def load_profile(name: str) -> dict[str, int]:
    """Return the costs of a profile.

    Parameters
    ----------
    name : str
        One of :data:`PROFILES`.

    Returns
    -------
    dict of str to int
        Cost name to nanoseconds, in :data:`COST_NAMES` order.

    Raises
    ------
    KeyError
        If there is no such profile.
    """
    costs = _read(name)["costs"]
    return {cost: costs[cost]["value"] for cost in COST_NAMES if cost in costs}


def profile_sources(name: str) -> dict[str, str]:
    """Return where each cost of a profile comes from.

    Parameters
    ----------
    name : str
        One of :data:`PROFILES`.

    Returns
    -------
    dict of str to str
        Cost name to a one-line description of its source.
    """
    costs = _read(name)["costs"]
    return {cost: " ".join(costs[cost]["source"].split()) for cost in COST_NAMES if cost in costs}


def profile_description(name: str) -> str:
    """Return the one-paragraph description of a profile."""
    return " ".join(str(_read(name).get("description", "")).split())


# --------------------------------------------------------------------------
# OS-noise presets (rcusim/profiles/noise/*.yaml)
# --------------------------------------------------------------------------
_NOISE_KEYS = ("rate_hz", "median_us", "p99_us")
#: The timer interrupt's delay after its expiry, by the machine's state then.
TIMER_DELAY_STATES = ("all_busy", "some_idle")
#: Quantile levels of a timer delay: 0, 0.001, ..., 1 (a finer tail than percentiles: the
#: delay's last thousandth reaches a hundred times its median).
TIMER_QUANTILES = 1001
#: Quantile levels of a timer delay's last interval (0.999 to 1): its hundredths, for a tail
#: whose few greatest values lie far beyond the rest.
TIMER_TAIL_QUANTILES = 101


def _check_number(name: str, where: str, item) -> None:
    # Each number must carry its source, as a profile's costs do; quantiles are a list.
    value = item.get("value") if isinstance(item, dict) else None
    lengths = {"quantiles_us": TIMER_QUANTILES, "tail_us": TIMER_TAIL_QUANTILES}
    length = next((n for key, n in lengths.items() if where.endswith(key)), None)
    numbers = value if length and isinstance(value, list) and len(value) == length else [value]
    if not (isinstance(item, dict) and set(item) == {"value", "source"} and item["source"].strip()
            and all(isinstance(x, (int, float)) for x in numbers)):
        raise ValueError(f"noise preset {name!r}: {where} must be {{value: <number, or {TIMER_QUANTILES} quantiles>, "
                         "source: <text>}")


def _quantile_numbers(where: str, entry: dict) -> dict[str, dict]:
    """A measured distribution's numbers: its quantiles, and its last interval's where given."""
    out = {f"{where}.quantiles_us": entry.get("quantiles_us")}
    if "tail_us" in entry:  # optional
        out[f"{where}.tail_us"] = entry["tail_us"]
    return out


def _preset_numbers(preset: dict) -> dict[str, dict]:
    """``{"irq.rate_hz": {value, source}, ..., "timer.all_busy.quantiles_us": ...}``: every number
    of a preset (or None where it lacks one) by its dotted path."""
    out = {}
    for stream, entry in preset.items():
        if stream == "timer":
            for state in TIMER_DELAY_STATES:
                out.update(_quantile_numbers(f"timer.{state}", entry.get(state, {})))
        elif stream == "host":
            out["host.rate_hz"] = entry.get("rate_hz")
            out.update(_quantile_numbers("host", entry))
        elif stream != "description":
            for key in _NOISE_KEYS:
                out[f"{stream}.{key}"] = entry.get(key)
    return out


@functools.cache
def _read_noise() -> dict:
    """Read and check the noise presets files (presets.yaml, and one per measured machine);
    cached, not to be mutated."""
    data = {}
    for path in sorted(_profile_dir().joinpath("noise").iterdir(), key=lambda p: p.name):
        if path.name.endswith(".yaml"):
            for name, preset in yaml.safe_load(path.read_text(encoding="utf-8")).items():
                if name in data:
                    raise ValueError(f"noise preset {name!r} is defined twice")
                data[name] = preset
    for name, preset in data.items():
        streams = {k: v for k, v in preset.items() if k != "description"}
        if not set(streams) & {"irq", "kthread"} or not set(streams) <= {"irq", "kthread", "timer", "host"}:
            raise ValueError(f"noise preset {name!r} must give irq and/or kthread streams, and may give timer "
                             "and host")
        for where, item in _preset_numbers(preset).items():
            _check_number(name, where, item)
    return data


def noise_presets() -> dict[str, dict]:
    """The OS-noise presets: ``{name: {"irq": {rate_hz, median_us, p99_us}, "kthread": {...},
    "timer": {"all_busy": {quantiles_us, tail_us}, "some_idle": {...}}}}`` (timer where measured,
    tail_us where given)."""
    out = {}
    for name, preset in _read_noise().items():
        out[name] = {}
        for where, item in _preset_numbers(preset).items():
            *path, key = where.split(".")
            node = out[name]
            for part in path:
                node = node.setdefault(part, {})
            node[key] = item["value"]
    return out


def noise_preset_sources(name: str) -> dict[str, str]:
    """Where each number of a noise preset comes from: ``{"irq.rate_hz": source, ...}``."""
    return {where: item["source"] for where, item in _preset_numbers(_read_noise()[name]).items()}
