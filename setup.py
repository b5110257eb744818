"""Build the Cython log and ISR core; metadata lives in pyproject.toml.

Where Cython or a C compiler is missing the package still installs: the pure-Python
twin (emulator/log/pure.py, isr.py) is used, and the build says so in one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FALLBACK = "WARNING: emulator.log._core not compiled ({}); the pure-Python log core is used"
_warned = False


def _warn(reason: object) -> None:
    global _warned
    if not _warned:
        _warned = True
        text = " ".join(str(reason).split())
        text = f"{type(reason).__name__}: {text[:100]}{'...' if len(text) > 100 else ''}"
        print(FALLBACK.format(text), file=sys.stderr)


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compile into the pure-Python fallback."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # no compiler at all (DistutilsPlatformError and kin)
            _warn(e)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:  # CompileError, LinkError, a missing header
            _warn(e)


def extensions() -> list[Extension]:
    ext = Extension(
        "emulator.log._core",
        ["emulator/log/_core.pyx"],
        # the .pxi files are parts of the one module, included by _core.pyx
        depends=["emulator/log/_crc32c.h", "emulator/log/_core.pxd",
                 *sorted(str(p) for p in Path("emulator/log").glob("_core_*.pxi"))],
        extra_compile_args=["-O3", "-g0"] if sys.platform != "win32" else [],
    )
    try:
        from Cython.Build import cythonize
    except ImportError as e:
        _warn(e)
        return []
    return cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
