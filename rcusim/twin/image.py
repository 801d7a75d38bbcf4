"""A kernel image for the twin: a folder with ``bzImage``, its ``config`` and ``modules/``.

``scripts/build-kernel-image.sh`` (in rcusim/twin/) makes one from any kernel tree. A
``--kernel`` folder is either an image or a folder of images (one per HZ, as
``../shared/kernel/`` holds ``linux-6.12-hz1000`` and ``linux-6.12-hz250``), from which
the image built with the scenario's HZ is taken.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from rcusim.errors import ScenarioError

__all__ = ["KernelImage", "find_image", "default_kernel_dirs", "MODULES"]

#: The modules an image must have (rcuscale needs torture).
MODULES = ("torture.ko", "rcuscale.ko")

_VERSION = re.compile(r"^# Linux/\S+ (\S+) Kernel Configuration", re.MULTILINE)
_PROVENANCE_OPTIONS = re.compile(r"CONFIG_(RCU_|PREEMPT|TREE_RCU|TASKS_RCU|HZ|NO_HZ|NR_CPUS|SMP$)")
_OPTION = re.compile(r"^(CONFIG_\w+)=(.*)$|^# (CONFIG_\w+) is not set$", re.MULTILINE)


@dataclass(frozen=True)
class KernelImage:
    """An image folder: ``bzImage``, ``config`` (its .config) and ``modules/*.ko``."""

    path: Path

    @property
    def bzimage(self) -> Path:
        return self.path / "bzImage"

    @cached_property
    def config_text(self) -> str:
        return (self.path / "config").read_text(encoding="utf-8", errors="replace")

    @cached_property
    def config(self) -> dict[str, str]:
        """Every option of the .config: ``y``, ``m``, a number or a string; ``n`` if not set."""
        out = {}
        for m in _OPTION.finditer(self.config_text):
            if m[1]:
                out[m[1]] = m[2].strip('"')
            else:
                out[m[3]] = "n"
        return out

    def enabled(self, option: str) -> bool:
        return self.config.get(option, "n") in ("y", "m")

    @property
    def version(self) -> str:
        """The kernel version its config was made for, e.g. "6.12.117"."""
        m = _VERSION.search(self.config_text)
        return m[1] if m else "unknown"

    @property
    def release(self) -> str:
        """MAJOR.MINOR of :attr:`version`, as a scenario's kernel.release names it."""
        return ".".join(self.version.split(".")[:2])

    @property
    def hz(self) -> int:
        return int(self.config.get("CONFIG_HZ", "0"))

    @property
    def preempt_default(self) -> str:
        """The preemption model a PREEMPT_DYNAMIC kernel boots with when preempt= is not given."""
        for model, option in (("none", "CONFIG_PREEMPT_NONE"), ("voluntary", "CONFIG_PREEMPT_VOLUNTARY"),
                              ("full", "CONFIG_PREEMPT")):
            if self.enabled(option):
                return model
        return "full"

    def module(self, name: str) -> Path:
        return self.path / "modules" / name

    @cached_property
    def digest(self) -> str:
        """SHA-256 of bzImage, config and modules: which image a result came from."""
        h = hashlib.sha256()
        for f in [self.bzimage, self.path / "config", *sorted((self.path / "modules").glob("*.ko"))]:
            h.update(f.name.encode())
            h.update(f.read_bytes())
        return h.hexdigest()

    def describe(self) -> dict:
        """The image as provenance records it, with its RCU, preemption, tick and CPU options."""
        config = {k: v for k, v in sorted(self.config.items()) if _PROVENANCE_OPTIONS.match(k)}
        return {"path": str(self.path), "version": self.version, "HZ": self.hz, "sha256": self.digest,
                "modules": sorted(p.name for p in (self.path / "modules").glob("*.ko")), "config": config}


def _is_image(path: Path) -> bool:
    return (path / "bzImage").is_file() and (path / "config").is_file()


def default_kernel_dirs() -> list[Path]:
    """Where an image is looked for without ``--kernel``: $RCUSIM_KERNEL, then the
    ``shared/kernel`` folder beside the source tree (tests and CI)."""
    dirs = []
    if os.environ.get("RCUSIM_KERNEL"):
        dirs.append(Path(os.environ["RCUSIM_KERNEL"]))
    root = Path(__file__).resolve().parents[2]
    dirs.append(root.parent / "shared" / "kernel")
    return dirs


def find_image(kernel: str | os.PathLike | None, hz: int) -> KernelImage:
    """The image of `kernel` (an image folder or a folder of them) built with `hz`.

    Raises
    ------
    ScenarioError
        When no image is there, or none of the folder's images has HZ = `hz`.
    """
    candidates = [Path(kernel)] if kernel is not None else default_kernel_dirs()
    images = []
    for c in candidates:
        if _is_image(c):
            images.append(KernelImage(c))
        elif c.is_dir():
            images += [KernelImage(p) for p in sorted(c.iterdir()) if p.is_dir() and _is_image(p)]
    if not images:
        where = str(candidates[0]) if kernel is not None else ", ".join(map(str, candidates))
        raise ScenarioError(f"no kernel image at {where}", key="--kernel",
                            allowed="a folder with bzImage, config and modules/ (rcusim/twin/build-kernel-image.sh "
                                    "makes one), or a folder of such folders")
    for image in images:
        missing = [m for m in MODULES if not image.module(m).is_file()]
        if image.hz == hz and not missing:
            return image
    found = ", ".join(f"{i.path.name} (HZ={i.hz})" for i in images)
    raise ScenarioError(f"no image built with HZ={hz} and the modules {', '.join(MODULES)} among {found}",
                        key="kernel.HZ", allowed=f"the HZ of an image: {sorted({i.hz for i in images})}, "
                                                 "or --kernel with an image built for it")
