'''ReFrame checks of xylem's benchmarks: sqmr, b_eff_io and network selection.

Every figure is read from the benchmark's own JSON (``--json``), never scraped from the
table on standard output. The checks run wherever the configuration gives them an
environment with the feature ``xylem`` (one per MPI installation) whose ``extras`` may
say where the binaries are (without ``xylem_bin`` they are taken from ``PATH``, as a
module puts them there) and what the launcher needs:

    'extras': {
        'xylem_bin': '/opt/xylem/openmpi-4.1/bin',   # optional: the directory of sqmr and b_eff_io
        'launcher_options': {                         # per launcher, added to its command
            'srun': ['--mpi=pmix'],
            'mpirun': ['--bind-to', 'none'],
        },
    }

and a partition's ``extras`` may say ``'xylem_internode': True`` when its sqmr runs must
measure the network (core ranks on one node, every neighbour elsewhere): then a placement
warning fails the check. The reference values and thresholds are in
``xylem_references.yaml`` beside this file (ReFrame's external references; a site's own
file: ``RFM_REFERENCE_PREFIX``).

Variables a run may set with ``-S NAME=VALUE``: sqmr's ``num_cores``, ``num_nbors``,
``num_iters``, ``max_msgsize``, ``require_internode``; the network check's ``network``;
b_eff_io's ``scheduled_time``, ``memory_per_process``, ``io_path``, ``require_valid``.
b_eff_io's time limit follows from its schedule (see ``b_eff_io_check.set_time_limit``).

``sqmr_built_check`` (tag ``xylem-build``, not ``xylem``) runs ``sqmr_check`` with xylem
built from source with the environment's MPI by the fixture ``xylem_build``: the
environment's ``cc`` is the MPI's C compiler wrapper (``mpicc``), and ``-S
xylem_build.source_dir=DIR`` names the source tree (default: the checkout these checks
lie in). Select it with ``-t xylem-build``.

They need ReFrame 4.10 or later (external reference files, ``'$ref'``).
'''

import json
import os
import re
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import (fixture, performance_function, run_after,
                                   run_before, sanity_function, variable)

#: The oldest ReFrame these checks run on: 4.10 reads references from a file ('$ref').
MIN_REFRAME = (4, 10)


def _version(text):
    return tuple(int(x) for x in re.findall(r'\d+', text)[:2])


if _version(rfm.VERSION) < MIN_REFRAME:
    raise ImportError(
        "xylem's checks need ReFrame %d.%d or later (references from a file); this is %s"
        % (MIN_REFRAME + (rfm.VERSION,)))

#: The checkout these checks lie in: reframe/checks/ of it.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The line each job script prints after the launcher, with its exit status: the squeue
# scheduler (Slurm without accounting) cannot tell a job's exit code.
_STATUS = 'xylem: launcher exit status'


def _load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise sn.SanityError(f'cannot read the benchmark JSON {path}: {e}')


class xylem_build(rfm.CompileOnlyRegressionTest):
    '''Builds xylem from source with the environment's MPI and installs it into the
    stage directory (``install/bin``): cargo's release build of the workspace against the
    MPI of the environment's ``cc`` (its ``mpicc``), that MPI's library folders in the
    binaries' RPATH (``scripts/mpi-rpath.sh``), then ``scripts/install.sh``. Nothing is
    written into the source tree: cargo's target folder is in the stage directory too,
    unless ``target_dir`` names another.'''

    descr = 'xylem: build from source with the environment\'s MPI'
    valid_systems = ['*']
    valid_prog_environs = ['+xylem']
    build_system = 'CustomBuild'
    sourcesdir = None
    build_locally = True
    #: The source tree (a checkout or an unpacked release).
    source_dir = variable(str, value=_CHECKOUT)
    #: Cargo's target folder; empty: ``target`` in the stage directory. A folder shared by
    #: several builds compiles the crates of the registry once.
    target_dir = variable(str, value='')

    @run_before('compile')
    def set_commands(self):
        src = shlex.quote(self.source_dir)
        target = shlex.quote(self.target_dir or os.path.join(self.stagedir, 'target'))
        prefix = shlex.quote(self.prefix_dir())
        cc = shlex.quote(self.current_environ.cc)
        self.build_system.commands = [
            f'export MPICC={cc} CARGO_TARGET_DIR={target}',
            f'export RUSTFLAGS="${{RUSTFLAGS:-}} $({src}/scripts/mpi-rpath.sh)"',
            f'(cd {src} && cargo build --release --workspace --locked)',
            f'PREFIX={prefix} XYLEM_BIN_DIR={target}/release {src}/scripts/install.sh',
            f'{prefix}/bin/sqmr --version',
        ]

    def prefix_dir(self):
        return os.path.join(self.stagedir, 'install')

    @sanity_function
    def installed(self):
        return sn.all([
            sn.assert_true(os.access(os.path.join(self.prefix_dir(), 'bin', p), os.X_OK),
                           msg=f'{p} was not installed')
            for p in ('sqmr', 'b_eff_io', 'xylem')
        ] + [sn.assert_found(r'^built against: ', self.stdout,
                             msg='the built sqmr does not name its MPI')])


class XylemBase(rfm.RunOnlyRegressionTest):
    '''What every xylem check shares: the binary from the environment, the launcher's
    options for this MPI, the exit status and the JSON document.'''

    valid_systems = ['*']
    valid_prog_environs = ['+xylem']
    maintainers = ['xylem']
    tags = {'xylem'}
    time_limit = '10m'

    #: The benchmark's binary name (set by each check).
    program = variable(str)
    #: The JSON document the benchmark writes, in the stage directory.
    json_file = variable(str, value='result.json')
    #: Reference values and thresholds: xylem_references.yaml beside this file, or
    #: under RFM_REFERENCE_PREFIX.
    reference = {'$ref': 'xylem_references.yaml'}

    @run_before('run')
    def set_program(self):
        extras = self.current_environ.extras
        # Without 'xylem_bin' the program is found on PATH (a module's way).
        bin_dir = extras.get('xylem_bin')
        self.executable = (os.path.join(bin_dir, self.program) if bin_dir
                           else self.program)
        launcher = self.job.launcher.registered_name
        self.job.launcher.options += list(
            extras.get('launcher_options', {}).get(launcher, []))
        self.postrun_cmds = [f'echo "{_STATUS} $?"']
        # The benchmark's JSON stays in the output directory beside the job's output.
        self.keep_files = [self.json_file]

    def exit_status_is_zero(self):
        '''Passes when the launcher exited with 0; otherwise fails naming the status
        and the benchmark's first ERROR line.'''
        status = sn.evaluate(
            sn.extractsingle(rf'^{_STATUS} (\d+)$', self.stdout, 1, int))
        if status != 0:
            errors = sn.evaluate(sn.extractall(r'(ERROR.*)$', self.stderr, 1))
            why = f': {errors[0]}' if errors else ''
            raise sn.SanityError(
                f'{self.program} exited with status {status}{why}')
        return True

    def document(self):
        return _load_json(os.path.join(self.stagedir, self.json_file))


class SqmrBase(XylemBase):
    '''sqmr between ``num_cores`` core ranks and ``num_nbors`` neighbours each.'''

    program = 'sqmr'
    num_cores = variable(int, value=1)
    num_nbors = variable(int, value=1)
    num_iters = variable(int, value=4096)
    win_size = variable(int, value=10)
    max_msgsize = variable(str, value='4M')
    #: Whether placement warnings fail the check (core ranks must share one node and
    #: every neighbour sit elsewhere). None: the partition's extras 'xylem_internode'.
    require_internode = variable(typ.Bool, type(None), value=None)

    @run_after('setup')
    def set_job(self):
        self.num_tasks = self.num_cores * (1 + self.num_nbors)
        if self.internode():
            # Block distribution: the first node takes the core ranks, the neighbours
            # fill the next nodes.
            self.num_tasks_per_node = self.num_cores
        self.executable_opts = [
            '--num_cores', str(self.num_cores), '--num_nbors', str(self.num_nbors),
            '--num_iters', str(self.num_iters), '--win_size', str(self.win_size),
            '--max_msgsize', self.max_msgsize, '--json', self.json_file,
        ]

    def internode(self):
        if self.require_internode is not None:
            return self.require_internode
        return bool(self.current_partition.extras.get('xylem_internode', False))

    def size(self, msgsize):
        for s in self.document()['sizes']:
            if s['msgsize'] == msgsize:
                return s
        raise sn.SanityError(f'sqmr measured no {msgsize}-byte messages')

    def sqmr_sanity(self):
        self.exit_status_is_zero()
        doc = self.document()
        checks = [
            sn.assert_eq(doc.get('benchmark'), 'sqmr'),
            sn.assert_true(doc.get('complete'),
                           msg='sqmr did not finish every size'),
            sn.assert_eq(doc['environment']['ranks'], self.num_tasks),
        ]
        sizes = [s['msgsize'] for s in doc['sizes']]
        for wanted in (0, 8):
            checks.append(sn.assert_in(wanted, sizes,
                                       msg=f'no {wanted}-byte messages measured'))
        checks.append(sn.assert_true(
            all(s['rates']['average']['msgs_per_s'] > 0 for s in doc['sizes']),
            msg='a message rate is not positive'))
        if self.internode():
            placement = doc['placement']
            warnings = sn.findall(r'^# WARNING placement: .*$', self.stdout)
            checks += [
                sn.assert_false(
                    placement['neighbours_on_core_node']
                    or placement['cores_elsewhere'],
                    msg=f'the ranks are not placed for inter-node figures '
                        f'(core node {placement["core_node"]}, neighbours on it: '
                        f'{placement["neighbours_on_core_node"]}, core ranks '
                        f'elsewhere: {placement["cores_elsewhere"]})'),
                sn.assert_eq(sn.count(warnings), 0,
                             msg='sqmr printed {0} placement warnings'),
            ]
        return sn.all(checks)

    @performance_function('msg/s')
    def rate_0B(self):
        return self.size(0)['rates']['average']['msgs_per_s']

    @performance_function('msg/s')
    def rate_8B(self):
        return self.size(8)['rates']['average']['msgs_per_s']

    @performance_function('MiB/s')
    def peak_bw(self):
        return max(s['rates']['average']['mib_per_s']
                   for s in self.document()['sizes'])


@rfm.simple_test
class sqmr_check(SqmrBase):
    '''Message rate at 0 B and 8 B and the peak bandwidth.'''

    descr = 'xylem sqmr: message rate and peak bandwidth'

    @sanity_function
    def validate(self):
        return self.sqmr_sanity()


@rfm.simple_test
class sqmr_built_check(sqmr_check):
    '''``sqmr_check`` on the sqmr that the fixture ``xylem_build`` built from source with
    the environment's MPI.'''

    descr = 'xylem sqmr, built from source with the environment\'s MPI'
    tags = {'xylem-build'}
    xylem = fixture(xylem_build, scope='environment')

    @run_before('run')
    def use_the_build(self):
        self.executable = os.path.join(self.xylem.prefix_dir(), 'bin', self.program)


@rfm.simple_test
class sqmr_netsel_check(SqmrBase):
    '''sqmr with ``--enable NETWORK --strict``: fails unless the selection was resolved
    on the hosts and applied (the JSON and the output name it with the settings made).'''

    descr = 'xylem network selection: sqmr --enable'
    #: What to select; None: the partition's extras 'xylem_network'.
    network = variable(str, type(None), value=None)
    max_msgsize = '4096'
    num_iters = 500

    @run_after('setup')
    def add_selection(self):
        network = self.selected()
        if not network:
            raise ValueError(
                f'no network to select on {self.current_partition.fullname}: set '
                f"-S network=... or the partition's extras 'xylem_network'")
        self.executable_opts += ['--enable', network, '--strict']

    def selected(self):
        if self.network is not None:
            return self.network
        return self.current_partition.extras.get('xylem_network')

    @sanity_function
    def validate(self):
        network = self.selected()
        sqmr = self.sqmr_sanity()
        doc = self.document()
        applied = doc.get('network_selection') or ''
        # The selection as data: the items given (normalised: `eth` is `ethernet`),
        # every host's settings.
        record = doc.get('network') or {}
        hosts = record.get('hosts') or []
        given = len(network.split(','))
        return sn.all([
            sqmr,
            sn.assert_true(
                record.get('mode') == 'enable' and len(record.get('items') or []) == given,
                msg=f'the JSON does not say that --enable {network} was applied '
                    f'(network: {record!r})'),
            sn.assert_true(
                hosts and all(h.get('settings') for h in hosts),
                msg=f'a host made no MPI settings for the selection: {hosts!r}'),
            sn.assert_found(
                rf'^# network selection \(rank 0.s host\): '
                rf'{re.escape(applied)}$', self.stdout,
                msg='the output does not name the selection the JSON has'),
            sn.assert_not_found(r'WARNING network selection', self.stderr,
                                msg='network selection warned'),
        ])


@rfm.simple_test
class b_eff_io_check(XylemBase):
    '''b_eff_io: the system figure, 2.1's figure, and the best partition's weighted
    write, rewrite and read; VALID or NOT VALID as the sanity.'''

    descr = 'xylem b_eff_io: effective I/O bandwidth'
    program = 'b_eff_io'
    num_tasks = 2
    #: -T: seconds for the full partition (600 for a VALID result).
    scheduled_time = variable(int, value=600)
    #: --memory-per-process (None: b_eff_io's default, the node's memory / its ranks).
    memory_per_process = variable(str, type(None), value=None)
    #: -p: where the files go (None: the stage directory).
    io_path = variable(str, type(None), value=None)
    #: Whether NOT VALID fails the check (a 600 s run with the shared file pointer and
    #: no data errors is VALID).
    require_valid = variable(typ.Bool, value=True)

    @run_after('init')
    def set_time_limit(self):
        '''The job's limit from b_eff_io's own schedule: -T for the full partition plus
        its default half partition (T * (1 + floor(n/2)/n), 900 s for T = 600), a quarter
        more for patterns that overrun their slice, and 5 minutes for start-up, the
        file checks and the removal of the run directory.'''
        n = max(int(self.num_tasks), 1)
        schedule = self.scheduled_time * (1 + (n // 2) / n)
        self.time_limit = f'{int(schedule * 1.25 + 300)}s'

    @run_after('setup')
    def set_options(self):
        self.executable_opts = ['-T', str(self.scheduled_time),
                                '-p', self.io_path or '.',
                                '--json', self.json_file]
        if self.memory_per_process:
            self.executable_opts += ['--memory-per-process',
                                     self.memory_per_process]

    def best_partition(self):
        doc = self.document()
        for p in doc['partitions']:
            if p['processes'] == doc['best_partition']:
                return p
        raise sn.SanityError('the JSON has no best partition')

    @sanity_function
    def validate(self):
        self.exit_status_is_zero()
        doc = self.document()
        headline = sn.extractsingle(
            r'^b_eff_io = \S+ MB/s on \d+ processes.*MB/s\) '
            r'(VALID|NOT VALID)(?: \(.*\))?$', self.stdout, 1)
        valid = doc['valid']
        checks = [
            sn.assert_eq(doc.get('benchmark'), 'b_eff_io'),
            sn.assert_eq(doc['processes'], self.num_tasks),
            sn.assert_eq(headline, 'VALID' if valid else 'NOT VALID',
                         msg='the output says {0}, the JSON {1}'),
            # the printed figure has 3 decimals
            sn.assert_bounded(
                sn.extractsingle(r'^b_eff_io = (\S+) MB/s', self.stdout, 1, float)
                - doc['b_eff_io_mb_s'], -0.0006, 0.0006,
                msg='the printed b_eff_io figure is not the JSON\'s'),
        ]
        if self.require_valid:
            checks.append(sn.assert_true(
                valid, msg=f'b_eff_io is NOT VALID: '
                           f'{"; ".join(doc["invalid_reasons"])}'))
        return sn.all(checks)

    def weighted(self, access):
        '''The U-weighted mean of the best partition's patterns of one access method,
        the "ACCESS weighted" figure of the table.'''
        patterns = self.best_partition()['access'][access]
        units = sum(p['u'] for p in patterns)
        if units == 0:
            return 0.0
        return sum(p['u'] * p['bandwidth_mb_s'] for p in patterns) / units

    @performance_function('MB/s')
    def b_eff_io(self):
        return self.document()['b_eff_io_mb_s']

    @performance_function('MB/s')
    def b_eff_io_2_1(self):
        return self.document()['b_eff_io_2_1_mb_s']

    @performance_function('MB/s')
    def write(self):
        return self.weighted('write')

    @performance_function('MB/s')
    def rewrite(self):
        return self.weighted('rewrite')

    @performance_function('MB/s')
    def read(self):
        return self.weighted('read')
