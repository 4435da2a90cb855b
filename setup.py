"""Package discovery for goldboard (everything else is in pyproject.toml).

The repository root *is* the ``goldboard`` package (``package-dir = {"goldboard": "."}``), which
setuptools' declarative ``packages.find`` cannot express. So the subpackages are found here, by
``find_packages``, from every folder with an ``__init__.py``: a new subpackage ships without anyone
remembering to list it (a hand-written list once left out ``goldboard.workflows``, and every wheel
built from it failed on ``study init``). ``tests/test_packaging.py`` builds a wheel and checks it.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_SHIPPED = ["tests", "tests.*", "benchmarks", "benchmarks.*", "docs", "docs.*", "build", "build.*"]


class BuildPy(build_py):
    """Every module of the root package except this file (it is the build script, not goldboard)."""

    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir) if m[:2] != ("goldboard", "setup")]


setup(
    packages=["goldboard"] + [f"goldboard.{name}" for name in find_packages(".", exclude=NOT_SHIPPED)],
    cmdclass={"build_py": BuildPy},
)
