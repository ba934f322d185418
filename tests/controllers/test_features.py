"""The controllers' `--feature-gates`: kube-controller-manager's syntax and texts, the part of a
cluster-wide flag that is theirs, and how `haru up` passes it to the co-process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cluster import supervisor
from controllers import __main__ as controllers_main, features

PARSE = [
    ("alpha gates are on by default, as everywhere in haru", "", {"WorkloadWithJob": True, "GenericWorkload": True,
                                                                 "DRAWorkloadResourceClaims": True}),
    ("a gate can be turned off", "WorkloadWithJob=false", {"WorkloadWithJob": False, "GenericWorkload": True,
                                                          "DRAWorkloadResourceClaims": True}),
    ("AllAlpha=false turns every alpha gate off, a named one wins", "AllAlpha=false,GenericWorkload=true",
     {"WorkloadWithJob": False, "GenericWorkload": True, "DRAWorkloadResourceClaims": False}),
]


@pytest.mark.parametrize("text,want", [(t, w) for _, t, w in PARSE], ids=[n for n, _, _ in PARSE])
def test_parse(text: str, want: dict[str, bool]) -> None:
    assert features.parse(text) == want


BAD = [
    ("Bogus=true", "unrecognized feature gate: Bogus"),
    ("WorkloadWithJob", "missing bool value for WorkloadWithJob"),
    ("WorkloadWithJob=maybe",
     'invalid value of WorkloadWithJob=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
]


@pytest.mark.parametrize("text,message", BAD, ids=[t for t, _ in BAD])
def test_bad_values_are_refused_with_component_bases_text(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        features.parse(text)
    assert str(caught.value) == message


def test_select_keeps_only_the_controllers_gates() -> None:
    assert features.select("ShardedListAndWatch=false, WorkloadWithJob=false,GangScheduling=true,AllAlpha=true") == \
        "WorkloadWithJob=false,AllAlpha=true"


def test_the_gates_reach_the_co_process_argv() -> None:
    argv = supervisor.controllers_argv("/k", feature_gates="WorkloadWithJob=false", python="py")
    assert argv == ["py", "-m", "controllers", "--kubeconfig", "/k", "--feature-gates", "WorkloadWithJob=false",
                    "--use-service-account-credentials"]
    assert "--feature-gates" not in supervisor.controllers_argv("/k", python="py")


@pytest.mark.parametrize(("argv", "on"), [
    ([], False),  # kube-controller-manager's default
    (["--use-service-account-credentials"], True),  # as kubeadm and haru's supervisor pass it
    (["--use-service-account-credentials=false"], False),
])
def test_use_service_account_credentials_reads_as_kube_controller_managers_flag(argv: list[str], on: bool) -> None:
    args = controllers_main._parser().parse_args(["--kubeconfig", "/k", *argv])
    assert args.use_service_account_credentials is on
    assert ("--use-service-account-credentials" in supervisor.controllers_argv(
        "/k", python="py", service_account_credentials=on)) is on


def test_python_m_controllers_refuses_a_bad_gate_before_it_connects() -> None:
    result = subprocess.run([sys.executable, "-m", "controllers", "--kubeconfig", "/nonexistent",
                             "--feature-gates", "Bogus=true"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == 'invalid argument "Bogus=true" for "--feature-gates" flag: ' \
                                    'unrecognized feature gate: Bogus'
