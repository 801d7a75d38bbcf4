"""Build the Cython extensions in cython_core/: the engines rcusim._core and
rcusim._membarrier, and rcusim._seq (the engine's rcu_seq helpers for Python).

A module already built in rcusim/ (by an earlier `pip install -e` or `python setup.py
build_ext --inplace`) is taken as it is while it is newer than its C, and the C while it is
newer than cython_core/'s files and this one. pip then needs no Cython or numpy in its build
environment, so the README's second install (`pip install -e ".[test]"`) compiles nothing."""
import glob
import os
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
MODULES = ("_core", "_membarrier", "_seq")
# What the C and the modules are made from: the engine's own files and this one.
SOURCES = [f for pattern in ("*.pyx", "*.pxd", "*.pxi", "*.h")
           for f in glob.glob(os.path.join(ROOT, "cython_core", pattern))] + [__file__]
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True}


def newer_than(path: str, inputs: list[str]) -> bool:
    return os.path.exists(path) and os.path.getmtime(path) > max(os.path.getmtime(f) for f in inputs)


def c_file(name: str) -> str:
    return os.path.join(ROOT, "cython_core", f"{name}.c")


def built(name: str) -> str:
    """The module as built in place, in rcusim/."""
    return os.path.join(ROOT, "rcusim", name + sysconfig.get_config_var("EXT_SUFFIX"))


def up_to_date(name: str) -> bool:
    return newer_than(c_file(name), SOURCES) and newer_than(built(name), [c_file(name)])


def extension(name: str, source: str) -> Extension:
    return Extension(
        f"rcusim.{name}",
        [f"cython_core/{name}.{source}"],
        include_dirs=["cython_core"],
        # -g0: no debug information, which costs a quarter of _core's compile time.
        extra_compile_args=["-O2", "-g0"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


class engine_build_ext(build_ext):
    """build_ext that takes a module already built in rcusim/ while it is up to date, and else
    writes its C (only if the engine's files changed) and compiles it. The C files are written
    by parallel processes and compiled by parallel threads, one per core."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        stale = [ext for ext in self.extensions
                 if self.force or not newer_than(c_file(ext.name.rpartition(".")[2]), SOURCES)]
        if stale:
            from Cython.Build import cythonize

            # cythonize() alone would write the C again whenever a .pxd it cimports from Cython
            # or numpy is newer, and pip installs those anew in each build environment.
            cythonize([extension(ext.name.rpartition(".")[2], "pyx") for ext in stale],
                      include_path=["cython_core"], language_level=3, compiler_directives=DIRECTIVES,
                      force=True, nthreads=self.parallel)
        super().build_extensions()

    def build_extension(self, ext):
        name = ext.name.rpartition(".")[2]
        if not self.force and up_to_date(name):
            target = self.get_ext_fullpath(ext.name)
            self.mkpath(os.path.dirname(target))
            self.copy_file(built(name), target)
            return
        import numpy

        ext.include_dirs.append(numpy.get_include())
        super().build_extension(ext)


setup(
    ext_modules=[extension(name, "c") for name in MODULES],
    cmdclass={"build_ext": engine_build_ext},
    # Asked of pip's build environment only when something must be compiled.
    setup_requires=[] if all(map(up_to_date, MODULES)) else ["Cython>=3.0", "numpy>=1.26"],
)
