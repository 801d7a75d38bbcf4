"""Build the Cython extensions in cython_core/: the engines rcusim._core and rcusim._membarrier,
and rcusim._seq (the engine's rcu_seq helpers for Python)."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        "rcusim._core",
        ["cython_core/_core.pyx"],
        include_dirs=["cython_core", numpy.get_include()],
        extra_compile_args=["-O2"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "rcusim._seq",
        ["cython_core/_seq.pyx"],
        include_dirs=["cython_core"],
        extra_compile_args=["-O2"],
    ),
    Extension(
        "rcusim._membarrier",
        ["cython_core/_membarrier.pyx"],
        include_dirs=["cython_core", numpy.get_include()],
        extra_compile_args=["-O2"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["cython_core"],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
