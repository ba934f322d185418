"""The RuntimeClass plugin on a fake cluster: missing classes refused, overhead and scheduling
copied into the pod, conflicts refused, with upstream's messages."""

from __future__ import annotations

from typing import Any

import pytest

from admission import errors
from admission.plugins.runtime_class import RuntimeClassPlugin
from tests.admission.fakes import FakeView, attrs, pod


def _view(**runtime_class: Any) -> FakeView:
    view = FakeView()
    view.put("node.k8s.io", "runtimeclasses", {"metadata": {"name": "gvisor"}, "handler": "runsc", **runtime_class})
    return view


def _request(**spec: Any):  # type: ignore[no-untyped-def]
    request = attrs(pod())
    request.object["spec"].update(spec)
    return request


def _refusal(plugin: RuntimeClassPlugin, request, step: str = "admit") -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(errors.Rejection) as caught:
        getattr(plugin, step)(request)
    assert caught.value.code == 403 and caught.value.reason == "Forbidden"
    return caught.value.message


def test_a_pod_without_a_runtime_class_is_left_alone():
    request = _request()
    plugin = RuntimeClassPlugin(FakeView())
    plugin.admit(request)
    plugin.validate(request)
    assert "overhead" not in request.object["spec"]


def test_a_missing_runtime_class_refuses_the_pod():
    message = _refusal(RuntimeClassPlugin(FakeView()), _request(runtimeClassName="missing"))
    assert message == 'pods "p" is forbidden: pod rejected: RuntimeClass "missing" not found'


def test_overhead_and_scheduling_are_copied_into_the_pod():
    toleration = {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}
    view = _view(overhead={"podFixed": {"cpu": "10m", "memory": "1Mi"}},
                 scheduling={"nodeSelector": {"sandbox": "true"}, "tolerations": [toleration]})
    request = _request(runtimeClassName="gvisor", nodeSelector={"zone": "a"})
    plugin = RuntimeClassPlugin(view)
    plugin.admit(request)
    plugin.validate(request)
    spec = request.object["spec"]
    assert spec["overhead"] == {"cpu": "10m", "memory": "1Mi"}
    assert spec["nodeSelector"] == {"zone": "a", "sandbox": "true"}
    assert spec["tolerations"] == [toleration]


def test_a_conflicting_node_selector_is_refused():
    view = _view(scheduling={"nodeSelector": {"sandbox": "true"}})
    message = _refusal(RuntimeClassPlugin(view), _request(runtimeClassName="gvisor", nodeSelector={"sandbox": "no"}))
    assert message.endswith("conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; "
                            "pod.spec.nodeSelector[sandbox] = no")


def test_an_overhead_the_runtime_class_does_not_define_is_refused():
    message = _refusal(RuntimeClassPlugin(_view()), _request(runtimeClassName="gvisor", overhead={"cpu": "1"}),
                       "validate")
    assert message.endswith("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
    view = _view(overhead={"podFixed": {"cpu": "10m"}})
    message = _refusal(RuntimeClassPlugin(view), _request(runtimeClassName="gvisor", overhead={"cpu": "1"}))
    assert message.endswith("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
