"""The optional C parts of the package (everything else is declared in pyproject.toml).

The renderer's hottest loops in C: two whole-text scans of manifest text (renderer/_scan.c), the
merge of a pool's later plain files (renderer/_foldfiles.c), ~5x fewer instructions than their Python versions. Those
stay beside them as the fallback (without a C compiler the build skips these) and as the reference the tests
hold them to (tests/renderer/test_scan.py, tests/renderer/test_foldfiles.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("renderer._scan", ["renderer/_scan.c"], optional=True),
    Extension("renderer._foldfiles", ["renderer/_foldfiles.c"], optional=True),
])
