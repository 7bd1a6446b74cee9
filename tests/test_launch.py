"""Launcher command lines: argument lists with the right flags for each family."""

import os
from pathlib import Path

import pytest

from commchar.errors import UsageError
from commchar.measure.launch import LaunchSpec, available_slots, job_command, program_command
from commchar.measure.libraries import Library

OMPI = Library("openmpi", "openmpi", "/usr/bin/mpicc.openmpi", "/usr/bin/mpirun.openmpi")
MPICH = Library("mpich", "mpich", "/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich")
KERNEL = Path("/k/commchar-kernel")


def test_dedicated_open_mpi_job_is_bound_and_not_flagged():
    job = job_command(OMPI, LaunchSpec(), 2, KERNEL, ["--plan", "bcast=8"])
    if available_slots(LaunchSpec()) >= 2:
        assert not job.oversubscribed and "--oversubscribe" not in job.argv
    assert job.argv[:3] == ["/usr/bin/mpirun.openmpi", "-np", "2"]
    assert job.argv[-3:] == [str(KERNEL), "--plan", "bcast=8"]


def test_oversubscribed_jobs_yield_and_are_flagged():
    p = available_slots(LaunchSpec()) + 1
    ompi = job_command(OMPI, LaunchSpec(), p, KERNEL, [])
    assert ompi.oversubscribed
    assert "--oversubscribe" in ompi.argv and "mpi_yield_when_idle" in ompi.argv
    mpich = job_command(MPICH, LaunchSpec(), p, KERNEL, [])
    assert mpich.oversubscribed and mpich.env_added["MPIR_CVAR_POLLS_BEFORE_YIELD"] == "1"


@pytest.mark.parametrize("library", [OMPI, MPICH], ids=["openmpi", "mpich"])
def test_oversubscribed_ranks_leave_a_real_time_priority(library, monkeypatch):
    """Under `chrt -f` an oversubscribed job's ranks would starve one another and the
    launcher: they run under the normal scheduler; a dedicated job keeps the priority."""
    monkeypatch.setattr(os, "sched_getscheduler", lambda pid: os.SCHED_FIFO)
    p = available_slots(LaunchSpec()) + 1
    shared = job_command(library, LaunchSpec(), p, KERNEL, [])
    assert shared.argv[:4] == ["chrt", "--other", "0", library.mpirun]
    dedicated = job_command(library, LaunchSpec(), 1, KERNEL, [])
    assert dedicated.argv[0] == library.mpirun
    monkeypatch.setattr(os, "sched_getscheduler", lambda pid: os.SCHED_OTHER)
    assert job_command(library, LaunchSpec(), p, KERNEL, []).argv[0] == library.mpirun


def test_root_needs_open_mpis_permission_variables():
    job = job_command(OMPI, LaunchSpec(), 2, KERNEL, [])
    if os.geteuid() == 0:
        assert job.env_added["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    else:
        assert "OMPI_ALLOW_RUN_AS_ROOT" not in job.env_added


def test_hostfile_slots_decide_oversubscription(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# two nodes\nnode1 slots=4\nnode2:4\n")
    spec = LaunchSpec(hostfile=hosts)
    assert available_slots(spec) == 8
    job = job_command(OMPI, spec, 8, KERNEL, [])
    assert not job.oversubscribed and ["--host", "node1:4,node2:4"] == job.argv[3:5]
    assert job_command(MPICH, spec, 9, KERNEL, []).argv[3:5] == ["-hosts", "node1:4,node2:4"]


def test_a_missing_hostfile_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        available_slots(LaunchSpec(hostfile=tmp_path / "nope"))


def test_srun_launches_tasks_and_overcommits_when_needed():
    spec = LaunchSpec(launcher="srun", extra_env={"UCX_RNDV_THRESH": "8192"})
    job = job_command(MPICH, spec, 2, KERNEL, ["--plan", "barrier=0"])
    assert job.argv[:3] == ["srun", "--ntasks", "2"] and job.env_added["UCX_RNDV_THRESH"] == "8192"
    many = job_command(MPICH, spec, available_slots(spec) + 1, KERNEL, [])
    assert "--overcommit" in many.argv


def test_rank_environment_reaches_the_ranks_not_the_launcher():
    env = {"LD_PRELOAD": "/t/libcommchar-trace.so", "COMMCHAR_TRACE_DIR": "/tmp/t"}
    ompi = program_command(OMPI, LaunchSpec(), 2, ["./app", "-v"], env)
    assert ompi.argv[-2:] == ["./app", "-v"] and "LD_PRELOAD" not in ompi.env_added
    at = ompi.argv.index("-x")
    assert ["-x", "LD_PRELOAD=/t/libcommchar-trace.so"] == ompi.argv[at:at + 2]
    mpich = program_command(MPICH, LaunchSpec(), 2, ["./app"], env)
    assert ["-genv", "COMMCHAR_TRACE_DIR", "/tmp/t"] == mpich.argv[6:9]
    srun = program_command(MPICH, LaunchSpec(launcher="srun"), 2, ["./app"], env)
    assert "--export=ALL,LD_PRELOAD=/t/libcommchar-trace.so,COMMCHAR_TRACE_DIR=/tmp/t" in srun.argv


def test_placement_maps_ranks_block_or_cyclic_for_every_launcher(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("a slots=2\nb slots=2\n")
    block, cyclic = (LaunchSpec(hostfile=hosts, placement=policy) for policy in ("block", "cyclic"))
    assert job_command(OMPI, block, 2, KERNEL, []).argv[5:7] == ["--map-by", "slot"]
    assert job_command(OMPI, cyclic, 2, KERNEL, []).argv[5:7] == ["--map-by", "node"]
    assert job_command(MPICH, block, 2, KERNEL, []).argv[3:5] == ["-hosts", "a:2,b:2"]
    assert job_command(MPICH, cyclic, 2, KERNEL, []).argv[3:5] == ["-hosts", "a:1,b:1"]


def test_srun_placement_asks_for_the_nodes_the_policy_uses(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    monkeypatch.setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2)")
    on_node = job_command(MPICH, LaunchSpec(launcher="srun", placement="block"), 2, KERNEL, [])
    off_node = job_command(MPICH, LaunchSpec(launcher="srun", placement="cyclic"), 2, KERNEL, [])
    assert "--nodes" in on_node.argv and on_node.argv[on_node.argv.index("--nodes") + 1] == "1"
    assert off_node.argv[off_node.argv.index("--nodes") + 1] == "2"
    assert "--distribution=cyclic" in off_node.argv


def _installation(tmp_path, system_selection: str | None) -> str:
    """A fake Open MPI installation under tmp_path: its mpirun, and its parameter file."""
    (tmp_path / "ompi" / "bin").mkdir(parents=True)
    (tmp_path / "ompi" / "etc").mkdir()
    mpirun = tmp_path / "ompi" / "bin" / "mpirun"
    mpirun.write_text("")
    if system_selection is not None:
        (tmp_path / "ompi" / "etc" / "openmpi-mca-params.conf").write_text(
            f"# site settings\nbtl = ^openib\nmtl = {system_selection}  # no fabric here\n")
    return str(mpirun)


def test_mtls_whose_adapter_is_absent_are_added_to_the_librarys_exclusions(tmp_path):
    from commchar.measure.ompi_mca import mtl_exclusion

    absent = {"psm": (str(tmp_path / "dev" / "ipath*"),), "psm2": (str(tmp_path / "dev" / "hfi1*"),)}
    home = tmp_path / "home"
    mpirun = _installation(tmp_path, "^ofi")
    assert mtl_exclusion(mpirun, {}, home, absent) == ["--mca", "mtl", "^ofi,psm,psm2"]
    # the user's file is read first and wins; names already excluded are not repeated
    (home / ".openmpi").mkdir(parents=True)
    (home / ".openmpi" / "mca-params.conf").write_text("mtl = ^psm\n")
    assert mtl_exclusion(mpirun, {}, home, absent) == ["--mca", "mtl", "^psm,psm2"]
    # found through the job's $HOME, as Open MPI finds it; without one there is no user file
    assert mtl_exclusion(mpirun, {"HOME": str(home)}, None, absent) == ["--mca", "mtl", "^psm,psm2"]
    assert mtl_exclusion(mpirun, {}, None, absent) == ["--mca", "mtl", "^ofi,psm,psm2"]
    # an inclusion list opens only what it names; the user's environment is the user's choice
    (home / ".openmpi" / "mca-params.conf").write_text("mtl = ofi\n")
    assert mtl_exclusion(mpirun, {}, home, absent) == []
    (home / ".openmpi" / "mca-params.conf").unlink()
    assert mtl_exclusion(mpirun, {"OMPI_MCA_mtl": "^ofi"}, home, absent) == []
    assert mtl_exclusion(mpirun, {"OMPI_MCA_mca_base_param_files": "/x.conf"}, home, absent) == []
    # an adapter that is present keeps its MTL
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "hfi1_0").write_text("")
    assert mtl_exclusion(mpirun, {}, home, absent) == ["--mca", "mtl", "^ofi,psm"]


def test_a_launcher_named_without_its_folder_is_found_on_the_path(tmp_path, monkeypatch):
    from commchar.measure.ompi_mca import mtl_exclusion

    mpirun = Path(_installation(tmp_path, "^ofi"))
    mpirun.chmod(0o755)
    monkeypatch.setenv("PATH", str(mpirun.parent), prepend=os.pathsep)
    absent = {"psm2": (str(tmp_path / "hfi1*"),)}
    assert mtl_exclusion("mpirun", {}, tmp_path, absent) == ["--mca", "mtl", "^ofi,psm2"]


def test_no_mtl_is_left_out_where_the_selection_cannot_be_known(tmp_path):
    from commchar.measure.ompi_mca import mtl_exclusion

    absent = {"psm2": (str(tmp_path / "hfi1*"),)}
    # no parameter file where the installation keeps it: it may be elsewhere
    assert mtl_exclusion(_installation(tmp_path, None), {}, tmp_path, absent) == []
    # a file that selects nothing: every MTL would open, all but the absent one still do
    (tmp_path / "ompi" / "etc" / "openmpi-mca-params.conf").write_text("btl = ^openib\n")
    assert mtl_exclusion(str(tmp_path / "ompi" / "bin" / "mpirun"), {}, tmp_path, absent) == \
        ["--mca", "mtl", "^psm2"]


def test_a_job_across_hosts_keeps_the_librarys_mtls(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("node1 slots=2\n")
    assert "mtl" not in job_command(OMPI, LaunchSpec(hostfile=hosts), 2, KERNEL, []).argv


def test_the_mtls_left_out_change_nothing_the_library_selects(built_apps):
    """A real Open MPI job with and without the exclusion: the same PML and BTLs are selected."""
    import subprocess

    from commchar.measure.ompi_mca import mtl_exclusion

    found = [(lib, folder) for lib, folder in built_apps if lib.family == "openmpi"]
    if not found:
        pytest.skip("Open MPI is not installed")
    lib, folder = found[0]
    exclusion = mtl_exclusion(lib.mpirun, dict(os.environ))
    if not exclusion:
        pytest.skip("this machine's Open MPI has no MTL to leave out")
    job = program_command(lib, LaunchSpec(), 2, [str(folder / "pingpong_loop"), "--bytes", "8",
                                                 "--iterations", "10"])
    at = next(k for k in range(len(job.argv)) if job.argv[k:k + 3] == exclusion)
    verbose = ["--mca", "pml_base_verbose", "10", "--mca", "btl_base_verbose", "10"]

    def selected(argv: list[str]) -> list[str]:
        done = subprocess.run(argv[:3] + verbose + argv[3:], capture_output=True, text=True, timeout=120,
                              env={**os.environ, **job.env_added})
        assert done.returncode == 0, done.stderr[-2000:]
        lines = (done.stdout + done.stderr).splitlines()
        return sorted({line.split("]", 1)[-1].strip() for line in lines if "selected" in line})

    plain = job.argv[:at] + job.argv[at + 3:]
    assert selected(job.argv) == selected(plain)
    assert any("ob1" in line for line in selected(job.argv))
