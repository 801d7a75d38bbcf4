"""Build the Cython extensions in cython_core/: the engines rcusim._core and
rcusim._membarrier, and rcusim._seq (the engine's rcu_seq helpers for Python)."""
import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# What the generated C and the modules are made from: the engine's own files and this one.
SOURCES = [f for pattern in ("*.pyx", "*.pxd", "*.pxi", "*.h")
           for f in glob.glob(os.path.join(ROOT, "cython_core", pattern))] + [__file__]


def newer_than(path: str, inputs: list[str]) -> bool:
    return os.path.exists(path) and os.path.getmtime(path) > max(os.path.getmtime(f) for f in inputs)


def extension(name: str) -> Extension:
    # cythonize() would write the C again whenever a .pxd it cimports from Cython or numpy is
    # newer, and pip installs those anew in each build environment: the C is kept while it is
    # newer than the engine's own files.
    c = f"cython_core/{name}.c"
    return Extension(
        f"rcusim.{name}",
        [c if newer_than(os.path.join(ROOT, c), SOURCES) else f"cython_core/{name}.pyx"],
        include_dirs=["cython_core", numpy.get_include()],
        extra_compile_args=["-O2"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


class reuse_build_ext(build_ext):
    """build_ext that takes a module already built in rcusim/ when it is newer than its C
    source and this file: each `pip install -e` builds in a new temporary directory, so
    without this a second install (`pip install -e ".[test]"`) compiles the engine again."""

    def build_extension(self, ext):
        built = os.path.join(ROOT, self.get_ext_filename(ext.name))
        if not self.force and newer_than(built, [os.path.join(ROOT, f) for f in ext.sources] + [__file__]):
            target = self.get_ext_fullpath(ext.name)
            self.mkpath(os.path.dirname(target))
            self.copy_file(built, target)
            return
        super().build_extension(ext)


setup(
    ext_modules=cythonize(
        [extension("_core"), extension("_membarrier"), extension("_seq")],
        include_path=["cython_core"],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ),
    cmdclass={"build_ext": reuse_build_ext},
)
