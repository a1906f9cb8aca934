# A Spack package for xylem. Put this folder in a site repository
# (`spack repo create`, then packages/xylem/package.py) and build from a checkout:
#
#     spack dev-build xylem@0.1.0 ^openmpi        # in the source tree
#
# or give `git`/`url` below the site's mirror of the sources. It builds against the MPI of
# the spec (its mpicc) with the `mpi` crate, which generates its bindings with libclang.

from spack.package import *


class Xylem(CargoPackage):
    """MPI benchmarks of a machine's network and file system: sqmr (the Sequoia
    message-rate benchmark), b_eff_io (the effective I/O bandwidth benchmark), and
    network selection for any MPI program (xylem)."""

    # No public home yet: a site sets `homepage` and `git` (or `url` and a checksum per
    # version) to its own mirror of the sources.

    license("MIT OR Apache-2.0")

    version("0.1.0")

    depends_on("rust@1.89:", type="build")
    depends_on("c", type="build")
    # bindgen in the mpi crate's build loads libclang.
    depends_on("llvm+clang", type="build")
    depends_on("mpi")

    def setup_build_environment(self, env):
        mpi = self.spec["mpi"]
        env.set("MPICC", mpi.mpicc)
        env.set("LIBCLANG_PATH", self.spec["llvm"].prefix.lib)
        # The mpi crate drops the wrapper's rpath: put the MPI's library folder back, so
        # that the binaries load the spec's libmpi and not another one on the system.
        env.append_flags("RUSTFLAGS", "-C link-arg=-Wl,-rpath," + mpi.prefix.lib)

    def build(self, spec, prefix):
        # A workspace of three programs: `cargo install --path .` (the Cargo builder's
        # default) does not apply to it.
        cargo("build", "--release", "--workspace", "--locked", "-j", str(make_jobs))

    def install(self, spec, prefix):
        # Binaries (stripped), man pages, completions and the JSON Schemas.
        make("install", "PREFIX=" + prefix)

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_version(self):
        sqmr = Executable(join_path(self.prefix.bin, "sqmr"))
        out = sqmr("--version", output=str)
        if "built against" not in out:
            raise InstallError("sqmr --version does not name the MPI it was built against")
