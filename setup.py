"""Only the optional C accelerator is configured here; everything else is in pyproject.toml.

``optional=True``: on a machine without a C compiler the build warns and kdump runs its
pure-Python record decoder (same results, slower; see kdump/format/records.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kdump.format._v2records", ["kdump/format/_v2records.c"], optional=True,
                             extra_compile_args=["-O2"])])
