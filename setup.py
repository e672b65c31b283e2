"""Only the optional C accelerators (kdump/accelerators.py) are configured here; everything else is in pyproject.toml.

``optional=True``: on a machine without a C compiler the build warns (pip's ``-q`` hides it) and
kdump runs its pure-Python references (same results, slower), saying so once on stderr and in
``kdump --version`` (kdump/accelerators.py lists these modules in ``EXTENSIONS``).
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("kdump.format._v2records", ["kdump/format/_v2records.c"], depends=["kdump/format/_sequence.h", "kdump/format/_varint.h"],
              optional=True, extra_compile_args=["-O2"]),
    Extension("kdump.render._v2lines", ["kdump/render/_v2lines.c"], depends=["kdump/format/_sequence.h", "kdump/format/_varint.h"],
              optional=True, extra_compile_args=["-O2"]),
])
