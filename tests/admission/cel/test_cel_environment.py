"""The environment: compile cache, activations shared by programs, Object{} construction."""

from __future__ import annotations

import pytest

from admission import cel


def test_compile_returns_the_cached_program_for_the_same_text():
    env = cel.Environment({"object": cel.DYN})
    first = env.compile("object.spec.replicas > 1")
    assert env.compile("object.spec.replicas > 1") is first
    assert env.compile("object.spec.replicas > 2") is not first


def test_the_cache_belongs_to_its_environment():
    text = "object.spec.replicas > 1"
    assert cel.Environment({"object": cel.DYN}).compile(text) is not (
        cel.Environment({"object": cel.DYN}).compile(text))


def test_a_compile_error_is_cached_and_raised_again_with_the_same_text():
    env = cel.Environment({"object": cel.DYN})
    with pytest.raises(cel.CompileError) as first:
        env.compile("object.spec.(")
    with pytest.raises(cel.CompileError) as second:
        env.compile("object.spec.(")
    assert second.value is first.value


def test_variables_not_declared_in_the_environment_do_not_compile():
    env = cel.Environment({"self": cel.DYN})
    with pytest.raises(cel.CompileError) as raised:
        env.compile("self.a + object.x")
    assert raised.value.message == (
        "ERROR: <input>:1:10: undeclared reference to 'object' (in container '')\n"
        " | self.a + object.x\n | .........^")


def test_one_activation_serves_several_programs():
    env = cel.Environment({"object": cel.DYN, "params": cel.DYN})
    activation = env.activation({"object": {"spec": {"replicas": 3}}, "params": {"max": 5}})
    assert env.compile("object.spec.replicas <= params.max").evaluate(activation) is True
    assert env.compile("params.max - object.spec.replicas").evaluate(activation) == 2


def test_results_are_plain_python_values():
    env = cel.Environment({"object": cel.DYN})
    result = env.compile("{'a': [1, 2.5, 'x', true, null], 'b': {'c': b'z'}}").evaluate({"object": {}})
    assert result == {"a": [1, 2.5, "x", True, None], "b": {"c": b"z"}}


def test_a_quantity_result_is_the_kubernetes_value():
    env = cel.Environment({"object": cel.DYN})
    assert env.compile("quantity('1Gi')").evaluate({}) == cel.quantity("1024Mi")


def test_type_of_a_kubernetes_value_is_named_as_in_kubernetes():
    env = cel.Environment({})
    assert env.compile("type(quantity('1')) == kubernetes.Quantity").evaluate({}) is True
    assert env.compile("type(ip('::1')) == net.IP").evaluate({}) is True


def test_authorizer_request_resource_variable():
    env = cel.Environment({"authorizer": cel.AUTHORIZER,
                           "authorizer.requestResource": cel.RESOURCE_CHECK})
    authorizer = cel.authorizer_for("alice")
    request = cel.request_resource(authorizer, group="apps", resource="deployments",
                                   namespace="ns", name="web")
    program = env.compile("authorizer.requestResource.check('update').allowed()")
    assert program.evaluate({"authorizer": authorizer, "authorizer.requestResource": request})


def test_an_authorize_hook_sees_the_principal_and_the_attributes():
    seen = []

    def deny_secrets(attributes):
        seen.append(attributes)
        if attributes.get("resource") == "secrets":
            return "deny", "secrets are off limits"
        return "allow", ""

    env = cel.Environment({"authorizer": cel.AUTHORIZER}, authorize=deny_secrets)
    program = env.compile(
        "authorizer.group('').resource('secrets').namespace('ns').check('get').reason()")
    assert program.evaluate({"authorizer": cel.authorizer_for("bob", ["devs"])}) == (
        "secrets are off limits")
    assert seen[0]["user"] == "bob" and seen[0]["groups"] == ["devs"]
    assert seen[0]["verb"] == "get" and seen[0]["namespace"] == "ns"


CONSTRUCTION = [
    ("an ApplyConfiguration object with a nested type",
     "Object{spec: Object.spec{hostUsers: false}}", {"spec": {"hostUsers": False}}),
    ("a JSONPatch list",
     "[JSONPatch{op: 'add', path: '/spec/hostUsers', value: false}]",
     [{"op": "add", "path": "/spec/hostUsers", "value": False}]),
    ("nested types inside a map() over the object",
     "Object{spec: Object.spec{containers: object.spec.containers.map(c, "
     "Object.spec.containers{name: c.name, securityContext: "
     "Object.spec.containers.securityContext{privileged: false}})}}",
     {"spec": {"containers": [
         {"name": "a", "securityContext": {"privileged": False}},
         {"name": "b", "securityContext": {"privileged": False}}]}}),
    ("an optional field that is absent",
     "Object{metadata: Object.metadata{?labels: optional.none(), name: 'x'}}",
     {"metadata": {"name": "x"}}),
    ("a JSONPatch path built with escapeKey",
     "JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a/b'), value: 'v'}",
     {"op": "add", "path": "/metadata/labels/a~1b", "value": "v"}),
    ("text that only looks like a literal inside a string is left alone",
     "'Object{spec: 1}'", "Object{spec: 1}"),
]


@pytest.mark.parametrize("expression,expected", [r[1:] for r in CONSTRUCTION],
                         ids=[r[0] for r in CONSTRUCTION])
def test_object_construction_yields_plain_dicts(expression, expected):
    env = cel.Environment({"object": cel.DYN}, object_construction=True)
    pod = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    assert env.compile(expression).evaluate({"object": pod}) == expected


def test_object_construction_is_off_unless_asked_for():
    env = cel.Environment({"object": cel.DYN})
    with pytest.raises(cel.CompileError):
        env.compile("Object{spec: Object.spec{hostUsers: false}}")
