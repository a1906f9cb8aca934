"""What can be checked of the Spack package without Spack: that package.py imports against
the names it takes from `spack.package`, declares the dependencies a build needs (Rust at
the workspace's minimum version, a C compiler, libclang, an MPI), sets the build
environment from the spec's MPI, and builds and installs with the commands the workspace
supports. Spack itself is not run (see README, "Install").

    python3 -m unittest discover -s packaging/spack -v
"""

import importlib.util
import pathlib
import re
import sys
import types
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class Recorder:
    """Stands for an executable (`cargo`, `make`): records every call."""

    def __init__(self, name):
        self.name = name
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return ""


class Env:
    """Stands for Spack's EnvironmentModifications."""

    def __init__(self):
        self.values = {}

    def set(self, key, value):
        self.values[key] = value

    def append_flags(self, key, value):
        self.values[key] = (self.values.get(key, "") + " " + value).strip()


def fake_spack():
    """A `spack.package` module with the names package.py uses, recording directives."""
    module = types.ModuleType("spack.package")
    declared = {"depends_on": [], "version": [], "license": []}

    def directive(kind):
        def record(*args, **kwargs):
            declared[kind].append((args, kwargs))

        return record

    class CargoPackage:
        pass

    def run_after(phase):
        def mark(f):
            f.run_after = phase
            return f

        return mark

    def on_package_attributes(**attrs):
        def mark(f):
            f.when_attributes = attrs
            return f

        return mark

    module.CargoPackage = CargoPackage
    module.depends_on = directive("depends_on")
    module.version = directive("version")
    module.license = directive("license")
    module.run_after = run_after
    module.on_package_attributes = on_package_attributes
    module.join_path = lambda *parts: "/".join(parts)
    module.Executable = Recorder
    module.InstallError = type("InstallError", (Exception,), {})
    module.cargo = Recorder("cargo")
    module.make = Recorder("make")
    module.make_jobs = 3
    module.__all__ = [n for n in vars(module) if not n.startswith("_")]
    return module, declared


def load():
    spack = types.ModuleType("spack")
    module, declared = fake_spack()
    spack.package = module
    sys.modules["spack"] = spack
    sys.modules["spack.package"] = module
    spec = importlib.util.spec_from_file_location("xylem_package", HERE / "xylem" / "package.py")
    package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    return package, module, declared


class Prefix(str):
    """Stands for a Spack prefix: a string with attributes for its folders."""

    @property
    def lib(self):
        return Prefix(self + "/lib")

    @property
    def bin(self):
        return Prefix(self + "/bin")


class FakeSpec(dict):
    pass


def fake_spec():
    mpi = types.SimpleNamespace(mpicc="/opt/mpi/bin/mpicc", prefix=Prefix("/opt/mpi"))
    llvm = types.SimpleNamespace(prefix=Prefix("/opt/llvm"))
    return FakeSpec(mpi=mpi, llvm=llvm)


class PackageTest(unittest.TestCase):
    def setUp(self):
        self.package, self.spack, self.declared = load()
        self.cls = self.package.Xylem

    def deps(self):
        return {args[0]: kwargs.get("type") for args, kwargs in self.declared["depends_on"]}

    def test_it_is_a_cargo_package_with_the_workspace_version_and_license(self):
        self.assertTrue(issubclass(self.cls, self.spack.CargoPackage))
        cargo_toml = (ROOT / "Cargo.toml").read_text()
        version = re.search(r'^version = "([^"]+)"', cargo_toml, re.M).group(1)
        self.assertIn(((version,), {}), self.declared["version"])
        lic = re.search(r'^license = "([^"]+)"', cargo_toml, re.M).group(1)
        self.assertEqual(self.declared["license"], [((lic,), {})])
        self.assertTrue(self.cls.__doc__ and "sqmr" in self.cls.__doc__)

    def test_it_depends_on_an_mpi_libclang_a_c_compiler_and_the_minimum_rust(self):
        deps = self.deps()
        # The MPI is linked and run against: the default type (build and link).
        self.assertIn("mpi", deps)
        self.assertIsNone(deps["mpi"])
        self.assertEqual(deps.get("llvm+clang"), "build")
        self.assertEqual(deps.get("c"), "build")
        msrv = re.search(r'^rust-version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M)
        self.assertEqual(deps.get("rust@%s:" % msrv.group(1)), "build", deps)

    def test_the_build_environment_comes_from_the_specs_mpi(self):
        pkg = self.cls()
        pkg.spec = fake_spec()
        env = Env()
        pkg.setup_build_environment(env)
        self.assertEqual(env.values["MPICC"], "/opt/mpi/bin/mpicc")
        self.assertEqual(env.values["LIBCLANG_PATH"], "/opt/llvm/lib")
        self.assertIn("-Wl,-rpath,/opt/mpi/lib", env.values["RUSTFLAGS"])

    def test_it_builds_the_workspace_locked_and_installs_through_make_install(self):
        pkg = self.cls()
        spec = fake_spec()
        pkg.build(spec, Prefix("/opt/xylem"))
        self.assertEqual(
            self.spack.cargo.calls,
            [("build", "--release", "--workspace", "--locked", "-j", "3")],
        )
        self.assertTrue((ROOT / "Cargo.lock").is_file(), "--locked needs Cargo.lock")
        pkg.install(spec, Prefix("/opt/xylem"))
        self.assertEqual(self.spack.make.calls, [("install", "PREFIX=/opt/xylem")])
        # The Makefile's install target installs from target/release, which the build made,
        # and runs no package manager (crates/sqmr/tests/install.rs checks the latter).
        makefile = (ROOT / "Makefile").read_text()
        self.assertRegex(makefile, r"(?m)^install:\n(?:.*\n)*?\tPREFIX=.*scripts/install\.sh")

    def test_the_installed_sqmr_is_checked_for_its_mpi(self):
        check = self.cls.check_version
        self.assertEqual(check.run_after, "install")
        self.assertEqual(check.when_attributes, {"run_tests": True})


if __name__ == "__main__":
    unittest.main()
