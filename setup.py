"""Build the Cython extensions in cython_core/: the engines rcusim._core and
rcusim._membarrier, and rcusim._seq (the engine's rcu_seq helpers for Python)."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup


def extension(name: str) -> Extension:
    return Extension(
        f"rcusim.{name}",
        [f"cython_core/{name}.pyx"],
        include_dirs=["cython_core", numpy.get_include()],
        extra_compile_args=["-O2"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


setup(
    ext_modules=cythonize(
        [extension("_core"), extension("_membarrier"), extension("_seq")],
        include_path=["cython_core"],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
