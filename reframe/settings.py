'''ReFrame configuration of xylem's two test sites, both on this one machine:

- ``xylem-local``: the machine as a laptop; its ranks start with the local launcher
  of each MPI, ``mpirun`` (Open MPI) or ``mpiexec.hydra`` (MPICH, Intel MPI), one
  partition each.
- ``xylem-slurm``: the local multi-node Slurm that ``testing/slurmtest`` starts (one
  slurmctld, a slurmd per node, no accounting daemon): jobs go in with ``sbatch``, are
  watched with ``squeue`` (ReFrame's ``squeue`` scheduler needs no ``sacct``) and launch
  with ``srun``. Clients find that cluster through ``SLURM_CONF``.

One environment per MPI installation xylem is built against (openmpi4, mpich4, openmpi5,
mpich5, intelmpi: the names of ``scripts/with-mpi``, whose settings they repeat), each
with the feature ``xylem`` and, in ``extras``, the directory of its binaries and what
each launcher needs for it. ``reframe -p NAME`` picks some.

Environment variables read here:

- ``XYLEM_BIN_DIR``: the binaries' directory, ``{mpi}`` standing for the environment's
  name (default ``<checkout>/target/{mpi}/release``, what ``make build-NAME`` makes);
- ``XYLEM_MPI_ROOT``: where the Python registry's MPIs are (default ``<checkout>/.mpi``);
- ``XYLEM_BINARIES_ON_PATH=1``: the environments put the binaries' directory on ``PATH``,
  as a module would, and name no ``xylem_bin`` (the checks then run ``sqmr`` and
  ``b_eff_io`` from ``PATH``).

A centre's own configuration needs only what README.md's ReFrame section shows; this
file is the example that really runs.
'''

import os

from reframe.core.backends import register_launcher
from reframe.core.exceptions import ConfigError
from reframe.core.launchers import JobLauncher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_ROOT = os.environ.get('XYLEM_MPI_ROOT') or os.path.join(ROOT, '.mpi')
BIN_DIR = os.environ.get('XYLEM_BIN_DIR') or os.path.join(
    ROOT, 'target', '{mpi}', 'release')
ON_PATH = os.environ.get('XYLEM_BINARIES_ON_PATH') == '1'
# Slurm's PMI-2 client, which Intel MPI loads under srun --mpi=pmi2.
SLURM_PMI2 = '/usr/lib/x86_64-linux-gnu/libpmi2.so.0'


class HydraLauncher(JobLauncher):
    '''Hydra's ``mpiexec.hydra -n N``: MPICH's and Intel MPI's own launcher (Debian's
    plain ``mpiexec`` is Open MPI's).'''

    def command(self, job):
        return ['mpiexec.hydra', '-n', str(job.num_tasks)]


try:
    register_launcher('mpiexec.hydra')(HydraLauncher)
except ConfigError:
    pass  # this file was loaded before in this process


def environment(name, *, srun_mpi, cc='mpicc', prefix=None, env_vars=(), local=()):
    '''The environment of one MPI installation: its binaries, its C compiler wrapper
    (``cc``, for the ``xylem_build`` fixture), and the launchers' options for it (srun's
    PMI plugin, Open MPI's mpirun without binding).'''
    env = list(env_vars)
    if prefix:
        env = [['PATH', f'{prefix}/bin:$PATH']] + env
    bin_dir = BIN_DIR.format(mpi=name)
    extras = {
        'launcher_options': {
            'srun': [f'--mpi={srun_mpi}'],
            'mpirun': list(local),
            'mpiexec.hydra': list(local),
        },
    }
    if ON_PATH:
        env = env + [['PATH', f'{bin_dir}:$PATH']]
    else:
        extras['xylem_bin'] = bin_dir
    return {
        'name': name,
        'features': ['xylem'],
        'cc': cc,
        'env_vars': env,
        'extras': extras,
    }


OPEN_MPI_LOCAL = ['--oversubscribe', '--bind-to', 'none']
OMPI5 = os.path.join(MPI_ROOT, 'openmpi5')
MPICH5 = os.path.join(MPI_ROOT, 'mpich5')
IMPI = os.path.join(MPI_ROOT, 'intelmpi')

ENVIRONMENTS = [
    # Debian's two: their wrappers by their own names (plain mpicc is one of them).
    environment('openmpi4', srun_mpi='pmix', cc='mpicc.openmpi', local=OPEN_MPI_LOCAL),
    environment('mpich4', srun_mpi='pmi2', cc='mpicc.mpich'),
    environment('openmpi5', srun_mpi='pmix', prefix=OMPI5, local=OPEN_MPI_LOCAL,
                env_vars=[['LD_LIBRARY_PATH', f'{OMPI5}/lib:$LD_LIBRARY_PATH']]),
    environment('mpich5', srun_mpi='pmi2', prefix=MPICH5,
                env_vars=[['LD_LIBRARY_PATH', f'{MPICH5}/lib:$LD_LIBRARY_PATH']]),
    environment('intelmpi', srun_mpi='pmi2', prefix=IMPI, env_vars=[
        ['LD_LIBRARY_PATH', f'{IMPI}/lib:{IMPI}/lib/libfabric:$LD_LIBRARY_PATH'],
        ['I_MPI_ROOT', IMPI],
        ['FI_PROVIDER_PATH', f'{IMPI}/lib/libfabric/prov'],
    ]),
]
OPEN_MPIS = ['openmpi4', 'openmpi5']
HYDRAS = ['mpich4', 'mpich5', 'intelmpi']

# Open MPI's mpirun refuses root without these (CI runs as root).
AS_ROOT = [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]

site_configuration = {
    'systems': [
        {
            'name': 'xylem-local',
            'descr': 'this machine, ranks started by each MPI\'s own launcher',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'mpirun',
                    'descr': 'Open MPI, mpirun',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    'environs': OPEN_MPIS,
                    'env_vars': AS_ROOT,
                    'max_jobs': 1,
                    'extras': {'xylem_internode': False, 'xylem_network': 'eth'},
                },
                {
                    'name': 'hydra',
                    'descr': 'MPICH and Intel MPI, mpiexec.hydra',
                    'scheduler': 'local',
                    'launcher': 'mpiexec.hydra',
                    'environs': HYDRAS,
                    'max_jobs': 1,
                    'extras': {'xylem_internode': False, 'xylem_network': 'eth'},
                },
            ],
        },
        {
            'name': 'xylem-slurm',
            'descr': 'the local multi-node Slurm of testing/slurmtest (SLURM_CONF)',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'nodes',
                    'descr': 'every node, srun',
                    'scheduler': 'squeue',
                    'launcher': 'srun',
                    'access': [],
                    'environs': OPEN_MPIS + HYDRAS,
                    'env_vars': [['I_MPI_PMI_LIBRARY', SLURM_PMI2]],
                    'max_jobs': 1,
                    # Each node has a host name of its own: sqmr's placement is real.
                    'extras': {'xylem_internode': True, 'xylem_network': 'eth'},
                },
            ],
        },
    ],
    'environments': ENVIRONMENTS,
    'logging': [
        {
            'handlers_perflog': [
                {
                    # One file per system, partition and check under --perflogdir:
                    # a header line, then one line per run and environment; each
                    # performance variable as VAR_value, VAR_unit, VAR_ref,
                    # VAR_lower_thres, VAR_upper_thres, VAR_result. `xylem perflog`
                    # reads it (and ReFrame's default layout too).
                    'type': 'filelog',
                    'prefix': '%(check_system)s/%(check_partition)s',
                    'level': 'info',
                    'format': (
                        '%(check_job_completion_time)s|%(check_result)s|'
                        '%(check_system)s|%(check_partition)s|%(check_environ)s|'
                        '%(check_name)s|%(check_jobid)s|%(check_perfvalues)s'
                    ),
                    'format_perfvars': (
                        '%(check_perf_value)s|%(check_perf_unit)s|'
                        '%(check_perf_ref)s|%(check_perf_lower_thres)s|'
                        '%(check_perf_upper_thres)s|%(check_perf_result)s|'
                    ),
                    'append': True,
                },
            ],
        },
    ],
}
