"""The guest's initramfs: busybox, the image's modules, rcusim's helpers and its /init.

Built on first use into a cache folder (``$RCUSIM_CACHE``, default ``~/.cache/rcusim``)
and reused while its inputs are unchanged: the helpers are compiled with the system's C
compiler (``gcc -O2 -static -pthread``, libc6-dev's libc.a), the archive is a newc cpio
made by ``cpio`` and gzip. Nothing is downloaded: busybox comes from Debian's
busybox-static (``/bin/busybox``).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from rcusim.errors import ScenarioError
from rcusim.twin.image import KernelImage

__all__ = ["GUEST_DIR", "HELPERS", "cache_dir", "build_helper", "build_initramfs", "find_busybox"]

GUEST_DIR = Path(__file__).with_name("guest")
"""What runs inside the guest: ``init``, ``rcusim_load.c`` and ``rcusim_noise.c``."""

_BUSYBOX = ("/bin/busybox", "/usr/bin/busybox")


def cache_dir() -> Path:
    path = Path(os.environ.get("RCUSIM_CACHE", Path.home() / ".cache" / "rcusim"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def find_busybox() -> Path:
    """A static busybox (Debian's busybox-static)."""
    for candidate in _BUSYBOX:
        path = Path(candidate)
        if path.is_file():
            out = subprocess.run(["file", "-L", str(path)], capture_output=True, text=True).stdout \
                if shutil.which("file") else "statically linked"
            if "dynamically linked" not in out:
                return path
    raise ScenarioError("no static busybox", key="initramfs", allowed="apt-get install busybox-static")


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:16]


def _atomic_copy_into(path: Path, make) -> Path:
    """Make `path` with `make(tmp)` into a temporary name beside it, then rename it in place."""
    if path.exists():
        return path
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        make(Path(tmp))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


#: The guest's helpers (guest/<name>.c): the sync_loop workload, and the noise measurement.
HELPERS = ("rcusim_load", "rcusim_noise")


def build_helper(name: str) -> Path:
    """A helper of :data:`HELPERS`, static, compiled once per source version."""
    source = GUEST_DIR / f"{name}.c"
    out = cache_dir() / f"{name}-{_sha(source.read_bytes())}"
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None and not out.exists():
        raise ScenarioError(f"no C compiler to build the guest's {name}", key="initramfs",
                            allowed="gcc and libc6-dev (apt-get install gcc libc6-dev)")

    def make(tmp: Path):
        done = subprocess.run([compiler, "-O2", "-static", "-pthread", "-Wall", "-o", str(tmp), str(source)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ScenarioError(f"building {name} failed: {done.stderr.strip().splitlines()[-1:]}",
                                key="initramfs", allowed="gcc with libc6-dev (a static libc.a)")
    return _atomic_copy_into(out, make)


def build_initramfs(image: KernelImage) -> Path:
    """The gzip'd newc cpio for `image`: /init, /bin/busybox, the helpers in /bin, /lib/modules/*.ko."""
    busybox = find_busybox()
    helpers = {name: build_helper(name) for name in HELPERS}
    modules = sorted((image.path / "modules").glob("*.ko"))
    init = GUEST_DIR / "init"
    key = _sha(init.read_bytes(), *[h.read_bytes() for h in helpers.values()], busybox.read_bytes(),
               image.digest.encode(), *[m.name.encode() for m in modules])
    out = cache_dir() / f"initramfs-{key}.cpio.gz"
    if shutil.which("cpio") is None and not out.exists():
        raise ScenarioError("no cpio to pack the initramfs", key="initramfs", allowed="apt-get install cpio")

    def make(tmp: Path):
        with tempfile.TemporaryDirectory() as root:
            root = Path(root)
            for d in ("bin", "dev", "proc", "sys", "tmp", "out", "lib/modules"):
                (root / d).mkdir(parents=True, exist_ok=True)
            shutil.copy(busybox, root / "bin" / "busybox")
            for name, helper in helpers.items():
                shutil.copy(helper, root / "bin" / name)
            shutil.copy(init, root / "init")
            for f in ("bin/busybox", *[f"bin/{name}" for name in helpers], "init"):
                (root / f).chmod(0o755)
            for m in modules:
                shutil.copy(m, root / "lib" / "modules" / m.name)
            names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
            archive = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root,
                                     input=("\n".join(names) + "\n").encode(), capture_output=True, check=True)
            with gzip.open(tmp, "wb", compresslevel=1) as f:
                f.write(archive.stdout)
    return _atomic_copy_into(out, make)
