"""Compile and evaluation errors carry cel-go's texts, as a Kubernetes server shows them."""

from __future__ import annotations

import pytest

from admission import cel

ENV = cel.Environment({"object": cel.DYN})
MAP_ENV = cel.Environment({"object": cel.DYN}, object_construction=True)

COMPILE_ERRORS = [
    ("a truncated expression is a syntax error with cel-go's expecting list and caret",
     ENV, "object.spec.containers.all(c, has(c.resources) &&",
     "ERROR: <input>:1:50: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
     "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
     " | object.spec.containers.all(c, has(c.resources) &&\n"
     " | .................................................^"),
    ("an undeclared variable names itself and the container",
     ENV, "foo + 1",
     "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo + 1\n | ^"),
    ("a wrong operand type names the operator overload",
     ENV, "'a' + 1",
     "ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n"
     " | 'a' + 1\n | ....^"),
    ("a member call with a wrong argument uses cel-go's receiver form",
     ENV, "quantity('1').add('x')",
     "ERROR: <input>:1:18: found no matching overload for 'add' applied to "
     "'kubernetes.Quantity.(string)'\n | quantity('1').add('x')\n | .................^"),
    ("a library function with a wrong argument type",
     ENV, "ip(1)",
     "ERROR: <input>:1:3: found no matching overload for 'ip' applied to '(int)'\n | ip(1)\n | ..^"),
    ("an error after an Object literal points into the source as written",
     MAP_ENV, "Object{spec: Object.spec{hostUsers: false}} + 1",
     "ERROR: <input>:1:45: found no matching overload for '_+_' applied to '(map(string, map(string, bool)), int)'\n"
     " | Object{spec: Object.spec{hostUsers: false}} + 1\n"
     " | ............................................^"),
    ("errors on the second line keep their line",
     ENV, "1 +\n  'a'",
     "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 +\n | ..^"),
]


@pytest.mark.parametrize("env,expression,message", [r[1:] for r in COMPILE_ERRORS],
                         ids=[r[0] for r in COMPILE_ERRORS])
def test_compile_error_text(env, expression, message):
    with pytest.raises(cel.CompileError) as raised:
        env.compile(expression)
    assert raised.value.message == message


EVAL_ERRORS = [
    ("a missing key", "object.spec.nosuch == 1", "no such key: nosuch"),
    ("a missing parent map", "object.metadata.labels['x'] == 'y'", "no such key: metadata"),
    ("an index past the end", "[1, 2][5]", "index '5' out of range in list size '2'"),
    ("a division by zero", "1 / (object.spec.n - 1)", "division by zero"),
    ("a modulus by zero", "1 % (object.spec.n - 1)", "modulus by zero"),
    ("an int64 overflow", "9223372036854775807 + object.spec.n", "integer overflow"),
    ("a dyn operand of the wrong type", "object.spec.n + 'x'", "no such overload"),
]


@pytest.mark.parametrize("expression,message", [r[1:] for r in EVAL_ERRORS],
                         ids=[r[0] for r in EVAL_ERRORS])
def test_eval_error_text(expression, message):
    with pytest.raises(cel.EvalError) as raised:
        ENV.compile(expression).evaluate({"object": {"spec": {"n": 1}}})
    assert raised.value.message == message
