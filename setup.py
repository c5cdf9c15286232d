"""Package layout: the root folders install as subpackages of one import package.

`revasm` itself (the Python API) is the folder `api/`; `revasm.cli` is `cli/`,
`revasm.isa` is `isa/`, and so on.  Every
folder below them with an `__init__.py` becomes a subpackage, so adding one
needs no change here.
"""
from pathlib import Path

from setuptools import setup

ROOTS = {
    "revasm": "api",
    "revasm.cli": "cli",
    "revasm.isa": "isa",
    "revasm.assembler": "assembler",
    "revasm.sim": "sim",
    "revasm.rtl": "rtl",
    "revasm.compiler": "compiler",
    "revasm.report": "report",
    "revasm.bench": "bench",
    "revasm.debug": "debug",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for package, folder in ROOTS.items():
    for init in sorted(Path(folder).rglob("__init__.py")):
        if "__pycache__" in init.parts:
            continue
        relative = init.parent.relative_to(folder).parts
        name = ".".join((package, *relative))
        packages.append(name)
        package_dir[name] = init.parent.as_posix()

#: Folders of data files (no Python) shipped inside a package, each a data-only package
#: (setuptools wants them named: a folder that is not a package is not installed).
DATA = {
    "revasm.report.models": ("report/models", ["*.json"]),
    "revasm.rtl.harness": ("rtl/harness", ["*.cpp"]),
    "revasm.cli.schemas": ("cli/schemas", ["*.json"]),
}
for name, (folder, _patterns) in DATA.items():
    packages.append(name)
    package_dir[name] = folder

setup(packages=packages, package_dir=package_dir,
      package_data={"revasm.isa": ["*.md"],
                    **{name: patterns for name, (_, patterns) in DATA.items()}})
