"""CANN / driver file parsers and CANN detection (through the fake probe and the captured host trees)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl_engine.host.cann import (
    atb_env_sourced,
    cann_env_sourced,
    cann_version_from_dirname,
    parse_toolkit_install_info,
    parse_version_cfg,
    parse_version_info,
    version_from_version_cfg,
)
from ascendctl_engine.host.fake import FakeHostProbe
from ascendctl_engine.host.gather import detect_cann
from ascendctl_engine.host.probe import LocalHostProbe
from ascendctl_engine.versions import cann_release_key, normalize_cann

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"

INSTALL_INFO = """\
package_name=Ascend-cann-toolkit
version=8.3.RC2
innerversion=V100R001C23SPC002B210
compatible_version=[V100R001C15],[V100R001C18],[V100R001C19]
arch=x86_64
os=linux
path=/usr/local/Ascend/ascend-toolkit/8.3.RC2/x86_64-linux
"""


def test_parse_toolkit_install_info() -> None:
    info = parse_toolkit_install_info(INSTALL_INFO)
    assert info["version"] == "8.3.RC2"
    assert info["arch"] == "x86_64"
    assert info["path"] == "/usr/local/Ascend/ascend-toolkit/8.3.RC2/x86_64-linux"
    assert info["compatible_version"].startswith("[V100R001C15]")


def test_parse_version_info_driver_and_package() -> None:
    assert parse_version_info("Version=24.1.0\nascendhal_version=7.35.23\n") == "24.1.0"
    assert parse_version_info('Version=9.1.0\nrequired_package_runtime_version=">=9.1.0"\n') == "9.1.0"
    assert parse_version_info("# comment\nversion = 25.5.0\n") == "25.5.0"
    assert parse_version_info("ascendhal_version=7\n") is None


def test_parse_version_cfg() -> None:
    text = (
        "runtime_running_version=[7.3.0.1.231:8.0.RC2]\n"
        "compiler_running_version=[7.3.0.1.231:8.0.RC2]\n"
        "toolkit_upgrade_version=[7.3.0.1.231:8.0.RC2]\n"
        "opp_kernel_running_version=[]\n"
    )
    fields = parse_version_cfg(text)
    assert fields["runtime"] == "8.0.RC2"
    assert fields["compiler"] == "8.0.RC2"
    assert "opp_kernel" not in fields
    assert version_from_version_cfg(fields) == "8.0.RC2"
    assert version_from_version_cfg({}) is None


def test_dirname_and_normalization() -> None:
    assert cann_version_from_dirname("cann-9.0.0") == "9.0.0"
    assert cann_version_from_dirname("cann-2026.08.03") == "2026.08.03"
    assert cann_version_from_dirname("cann") is None
    assert cann_version_from_dirname("ascend-toolkit") is None
    assert normalize_cann("8.3.RC2") == normalize_cann("8.3.rc2")
    assert normalize_cann("9.1.0-beta.1") == "9.1.0.beta.1"


@pytest.mark.parametrize(
    "ordered",
    [
        ["8.0.RC2", "8.0.0", "8.1.RC1", "8.2.RC1", "8.3.RC1", "8.3.RC2", "8.5.0", "8.5.1", "9.0.0", "9.0.1", "9.1.0"],
        ["9.1.0-beta.1", "9.1.0"],
        ["24.1.rc3.7", "25.0.rc1.1", "25.2.0", "25.3.rc1", "25.5.0", "25.5.1", "26.0.rc1", "26.0.rc2"],
    ],
)
def test_release_key_orders_versions(ordered: list[str]) -> None:
    shuffled = ordered[1::2] + ordered[0::2]  # any order other than the sorted one
    assert sorted(shuffled, key=cann_release_key) == ordered


def test_cann_env_sourced() -> None:
    home = "/usr/local/Ascend/ascend-toolkit/latest"
    assert cann_env_sourced({}) == (False, None)
    assert cann_env_sourced({"ASCEND_HOME_PATH": home}) == (False, home)
    assert cann_env_sourced({"ASCEND_TOOLKIT_HOME": home, "LD_LIBRARY_PATH": f"/x:{home}/lib64"}) == (True, home)
    cann9 = {"ASCEND_HOME_PATH": "/usr/local/Ascend/cann", "LD_LIBRARY_PATH": "/usr/local/Ascend/cann-9.0.1/lib64"}
    assert cann_env_sourced(cann9) == (True, "/usr/local/Ascend/cann")
    assert atb_env_sourced({"ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1"})
    assert atb_env_sourced({"LD_LIBRARY_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib"})
    assert not atb_env_sourced({"LD_LIBRARY_PATH": "/usr/lib"})


def test_detect_toolkit_layout_with_fake_probe() -> None:
    probe = FakeHostProbe(
        files={
            "/usr/local/Ascend/ascend-toolkit/latest/x86_64-linux/ascend_toolkit_install.info": INSTALL_INFO,
            "/usr/local/Ascend/ascend-toolkit/set_env.sh": "",
        },
        dirs={"/usr/local/Ascend/ascend-toolkit/8.3.RC2", "/usr/local/Ascend/ascend-toolkit/8.2.RC1"},
    )
    cann = detect_cann(probe, {}, "x86_64")
    assert cann.version == "8.3.RC2"
    assert cann.layout == "toolkit"
    assert cann.path == "/usr/local/Ascend/ascend-toolkit/latest"
    assert cann.set_env == "/usr/local/Ascend/ascend-toolkit/set_env.sh"
    assert cann.installed_versions == ("8.2.RC1", "8.3.RC2")
    assert not cann.sourced
    assert not cann.nnal_installed


def test_sourced_home_wins_over_default_locations() -> None:
    info = INSTALL_INFO.replace("8.3.RC2", "8.5.0").replace("x86_64", "aarch64")
    probe = FakeHostProbe(
        files={
            "/opt/cann/aarch64-linux/ascend_toolkit_install.info": info,
            "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info": INSTALL_INFO,
        }
    )
    env = {"ASCEND_HOME_PATH": "/opt/cann/", "LD_LIBRARY_PATH": "/opt/cann/lib64"}
    cann = detect_cann(probe, env, "")  # arch unknown: any <arch>-linux directory is read
    assert (cann.version, cann.path, cann.layout) == ("8.5.0", "/opt/cann", "env")
    assert cann.sourced
    assert set(cann.installed_versions) == {"8.3.RC2", "8.5.0"}


def test_nothing_installed() -> None:
    cann = detect_cann(FakeHostProbe(), {}, "x86_64")
    assert cann.version is None
    assert cann.path is None
    assert cann.set_env is None
    assert cann.installed_versions == ()


def test_cann9_layout_from_captured_tree() -> None:
    probe = LocalHostProbe(HOSTS / "cann9-a2", environ={})
    cann = detect_cann(probe, {}, "aarch64")
    # `cann -> cann-9.0.1` (a relative symlink, followed inside the root) holds version.cfg.
    assert cann.version == "9.0.1"
    assert cann.layout == "cann9"
    assert cann.path == "/usr/local/Ascend/cann"
    assert cann.source == "/usr/local/Ascend/cann/version.cfg"
    assert cann.set_env == "/usr/local/Ascend/cann/set_env.sh"
    assert cann.installed_versions == ("9.0.0", "9.0.1")  # cann-9.0.0 is known by its directory name
    assert cann.nnal_installed
    assert not cann.sourced


def test_toolkit_layout_from_captured_tree() -> None:
    probe = LocalHostProbe(HOSTS / "no-driver", environ={})
    cann = detect_cann(probe, {}, "x86_64")
    assert (cann.version, cann.layout) == ("8.3.RC2", "toolkit")
    assert cann.source == "/usr/local/Ascend/ascend-toolkit/latest/x86_64-linux/ascend_toolkit_install.info"
