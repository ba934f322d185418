"""Activations convert only what a program reads: the plans, and results equal to whole values."""

from __future__ import annotations

import pytest

from admission import cel
from admission.cel.reads import ELEMENTS

ENV = cel.Environment({"object": cel.DYN, "oldObject": cel.DYN, "params": cel.DYN, "authorizer": cel.AUTHORIZER})

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "web", "tier": "a"},
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"hostUsers": False, "containers": [
        {"name": "a", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
         "resources": {"limits": {"cpu": "1"}}, "env": [{"name": "X", "value": "1"}]},
        {"name": "b", "image": "busybox:latest", "resources": {}},
    ]},
    "status": {"phase": "Pending"},
}


@pytest.mark.parametrize(("text", "plans"), [
    ("object.spec.containers.all(c, !c.image.endsWith(':latest'))",
     {"object": {"spec": {"containers": {ELEMENTS: {"image": None}}}}}),
    ("has(object.metadata.labels) && 'app' in object.metadata.labels",
     {"object": {"metadata": {"labels": None}}}),
    ("object.spec.containers.all(c, c.ports.all(p, p.containerPort > 0))",
     {"object": {"spec": {"containers": {ELEMENTS: {"ports": {ELEMENTS: {"containerPort": None}}}}}}}),
    ("object.spec.containers.exists(c, true)", {"object": {"spec": {"containers": {ELEMENTS: {}}}}}),
    ("object.spec.containers.filter(c, c.name == 'a').size() == 1",
     {"object": {"spec": {"containers": {ELEMENTS: None}}}}),
    ("object.?spec.?hostUsers.orValue(true)", {"object": {"spec": {"hostUsers": None}}}),
    ("object == oldObject", {"object": None, "oldObject": None}),
    ("cel.bind(s, object.spec, s.containers.size() > 0)", {"object": {"spec": None}}),
    ("object.spec.containers.all(object, object.name != '')",  # the loop variable shadows `object`
     {"object": {"spec": {"containers": {ELEMENTS: {"name": None}}}}}),
    ("1 + 1 == 2", {}),
])
def test_each_program_knows_which_parts_it_reads(text: str, plans: dict) -> None:
    assert ENV.compile(text).reads.plans == plans


@pytest.mark.parametrize("text", [
    "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))",
    "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
    "object.spec.containers.map(c, c.name)",
    "object.spec.containers.filter(c, c.image.startsWith('nginx'))",
    "object.spec.containers.exists_one(c, has(c.ports))",
    "object.spec.containers.map(c, c.ports.map(p, p.containerPort))",
    "object.metadata.labels.all(k, object.metadata.labels[k] != '')",
    "object.metadata.labels.filter(k, k.startsWith('t'))",
    "has(object.spec.nodeName)",
    "object.spec.nodeName",  # no such key, from the projected value as from the whole one
    "object.spec.containers[0].image",
    "object.spec.containers.all(c, c.missing == 1)",
    "object.spec.hostUsers.missing",
    "object.?spec.?containers.orValue([]).size()",
    "size(object.metadata)",
    "object.spec.containers.all(object, object.name != 'x')",
    "cel.bind(c, object.spec.containers, c.map(x, x.name))",
    "object.spec.containers.map(c, c.ports.filter(p, p.containerPort > 0).size())",
    "object.spec.containers.map(c, has(c.ports), c.name)",
    "object.spec.containers.exists(c, c == object.spec.containers[1])",
    "object.metadata.?labels[?'app'].orValue('none')",
    "[object.spec.containers[0]].all(x, x.name != '')",
    "object.spec.containers.all(c, c.resources.?limits.orValue({}).all(k, k != ''))",
    "size(object.spec.containers) == 2",
    "object.spec.containers.exists(c, c.image.matches('^nginx'))",
    "'busybox:latest' in object.spec.containers.map(c, c.image)",
    "type(object.spec) == map",
    "object.spec.containers.map(c, c.env).size()",
    "object.spec.containers.all(c, c.env.all(e, e.value == '1'))",
])
def test_a_projection_gives_what_the_whole_value_gives(text: str) -> None:
    program = ENV.compile(text)
    whole = program._expression.eval(ENV._env.Activation({"object": POD}))
    projected = program._expression.eval(ENV.activation({"object": POD}).native_for(program.reads))
    assert projected.type() == whole.type()
    if whole.type() == cel.Type.ERROR:
        assert projected.value() == whole.value()
    else:
        assert projected.plain_value() == whole.plain_value()


def test_programs_on_one_request_share_one_conversion_of_the_parts_they_read_together() -> None:
    env = cel.Environment({"object": cel.DYN})
    images = env.compile("object.spec.containers.all(c, c.image != '')")
    first = env.activation({"object": POD})
    images.evaluate(first)
    names = env.compile("object.metadata.name == 'p'")
    assert names.evaluate(first) is True  # reads a new part: converted again, wider
    assert env.reads_covering(names.reads).plans == {
        "object": {"spec": {"containers": {ELEMENTS: {"image": None}}}, "metadata": {"name": None}}}
    second = env.activation({"object": POD})
    assert second.native_for(images.reads) is second.native_for(names.reads)
    assert images.evaluate(second) is True and names.evaluate(second) is True


def test_a_result_is_remembered_by_the_exact_input_and_handed_out_as_a_private_copy() -> None:
    env = cel.Environment({"object": cel.DYN}, object_construction=True)
    program = env.compile("{'images': object.spec.containers.map(c, c.image)}")
    first = program.evaluate(env.activation({"object": POD}))
    first["images"].append("changed by the caller")
    again = program.evaluate(env.activation({"object": POD}))
    assert again == {"images": ["nginx:1.27", "busybox:latest"]}
    other = {**POD, "spec": {**POD["spec"], "containers": [{"name": "a", "image": "redis"}]}}
    assert program.evaluate(env.activation({"object": other})) == {"images": ["redis"]}
    one_float = program.evaluate(env.activation({"object": {"spec": {"containers": [{"image": 1.0}]}}}))
    one_int = program.evaluate(env.activation({"object": {"spec": {"containers": [{"image": 1}]}}}))
    assert (one_float, one_int) == ({"images": [1.0]}, {"images": [1]})
    assert type(one_float["images"][0]) is float and type(one_int["images"][0]) is int


def test_an_error_is_remembered_too_and_opaque_inputs_are_never_remembered() -> None:
    program = ENV.compile("object.spec.nodeName == 'x'")
    for _ in range(2):
        with pytest.raises(cel.EvalError, match="no such key: nodeName"):
            program.evaluate(ENV.activation({"object": POD}))
    env = cel.Environment({"authorizer": cel.AUTHORIZER})
    check = env.compile("authorizer.path('/healthz').check('get').allowed()")
    activation = env.activation({"authorizer": cel.authorizer_for("u", [])})
    assert activation.memo_key(check.reads) is None
    assert check.evaluate(activation) is True
