"""The simulated shell: each case is a command, a context and the (stdout, stderr, exit code) dash gives."""

from __future__ import annotations

from typing import Any

import pytest

from nodes import shell

USERNS = shell.Context(env={"PATH": "/usr/bin:/bin", "HOSTNAME": "web-0", "HOME": "/root"}, hostname="web-0",
                       uid_map=shell.id_map_line(0, 131072, 65536), gid_map=shell.id_map_line(0, 131072, 65536))
GPUS = shell.Context(hostname="trainer", gpu_lines=["GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)"],
                     dev_entries=["nvidia3", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"])

CASES: list[tuple[str, Any, shell.Context, tuple[str, str, int]]] = [
    ("id prints root in the user namespace", ["id"], USERNS, ("uid=0(root) gid=0(root) groups=0(root)\n", "", 0)),
    ("id -u and id -un", "id -u; id -un", USERNS, ("0\nroot\n", "", 0)),
    ("uid_map has the kernel's three right-aligned columns", ["cat", "/proc/self/uid_map"], USERNS,
     ("         0     131072      65536\n", "", 0)),
    ("gid_map too", ["cat", "/proc/self/gid_map"], USERNS, ("         0     131072      65536\n", "", 0)),
    ("a hostUsers pod maps the whole range", ["cat", "/proc/self/uid_map"], shell.Context(),
     ("         0          0 4294967295\n", "", 0)),
    ("/etc/hostname and hostname", "cat /etc/hostname; hostname", USERNS, ("web-0\nweb-0\n", "", 0)),
    ("env prints the environment in order", ["env"], USERNS,
     ("PATH=/usr/bin:/bin\nHOSTNAME=web-0\nHOME=/root\n", "", 0)),
    ("echo joins words; -n drops the newline", "echo a  b; echo -n c", USERNS, ("a b\nc", "", 0)),
    ("variables expand outside single quotes", "echo $HOME \"${HOSTNAME}\" '$HOME'", USERNS,
     ("/root web-0 $HOME\n", "", 0)),
    ("ls /dev shows the GPU device nodes", ["ls", "/dev"], GPUS,
     ("\n".join(sorted([*shell.BASE_DEV, "nvidia3", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"])) + "\n", "", 0)),
    ("nvidia-smi -L prints the visible GPUs", ["nvidia-smi", "-L"], GPUS,
     ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n", "", 0)),
    ("nvidia-smi is not there without GPUs", "nvidia-smi -L", USERNS, ("", "sh: 1: nvidia-smi: not found\n", 127)),
    ("an unknown command in a script fails as dash's does", "foo", USERNS, ("", "sh: 1: foo: not found\n", 127)),
    ("the line number counts newlines", "true\n\nbar", USERNS, ("", "sh: 3: bar: not found\n", 127)),
    ("an unknown program run directly fails as runc's exec does", ["foo", "--x"], USERNS,
     ("", 'OCI runtime exec failed: exec failed: unable to start container process: exec: "foo": executable '
          "file not found in $PATH: unknown\n", 127)),
    ("exit N ends the script with N", "echo a; exit 3; echo b", USERNS, ("a\n", "", 3)),
    ("exit codes wrap at 256", "exit 257", USERNS, ("", "", 1)),
    ("false fails and true succeeds", ["false"], USERNS, ("", "", 1)),
    ("&& runs on success, || on failure", "false && echo no || echo yes; true && echo also", USERNS,
     ("yes\nalso\n", "", 0)),
    ("$? is the status of the last command", "false; echo $?; true; echo $?", USERNS, ("1\n0\n", "", 0)),
    ("sh -c nests", ["sh", "-c", "sh -c 'exit 4'; echo $?"], USERNS, ("4\n", "", 0)),
    ("a pipe feeds stdout to cat", "echo hi | cat", USERNS, ("hi\n", "", 0)),
    ("cat of a missing file", "cat /nope; echo $?", USERNS, ("1\n", "cat: /nope: No such file or directory\n", 0)),
    ("ls of a missing path", ["ls", "/nope"], USERNS,
     ("", "ls: cannot access '/nope': No such file or directory\n", 2)),
    ("an unterminated quote is a syntax error", "echo 'a", USERNS,
     ("", "sh: 1: Syntax error: Unterminated quoted string\n", 2)),
    ("a leading ; is a syntax error", "; echo a", USERNS, ("", 'sh: 1: Syntax error: ";" unexpected\n', 2)),
    ("sleep with a bad interval", ["sleep", "soon"], USERNS,
     ("", "sleep: invalid time interval 'soon'\nTry 'sleep --help' for more information.\n", 1)),
]


@pytest.mark.parametrize(("command", "context", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_commands_print_and_exit_as_in_a_real_container(command: Any, context: shell.Context,
                                                        want: tuple[str, str, int]) -> None:
    assert tuple(shell.run(command, context)) == want


def test_sleep_asks_for_the_wait_instead_of_blocking() -> None:
    result = shell.run("sleep 1.5; sleep 2m; echo done", USERNS)
    assert result.stdout == "done\n" and result.exit_code == 0 and result.slept == 121.5


def test_steps_put_the_sleep_between_the_outputs_it_separates() -> None:
    assert list(shell.steps("echo a; sleep 3; echo b; exit 2", USERNS)) == [
        ("out", "a\n"), ("sleep", 3.0), ("out", "b\n"), ("exit", 2)]


def test_a_string_runs_as_sh_c() -> None:
    assert shell.run("echo $HOME", USERNS) == shell.run(["sh", "-c", "echo $HOME"], USERNS)


class Recorder:
    """A writer and a fake clock: what was written, in order, and the simulated seconds slept."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.clock = 0.0

    async def write(self, stream: str, text: str) -> None:
        self.events.append((stream, text))

    async def sleep(self, seconds: float) -> None:
        self.clock += seconds
        self.events.append(("slept", seconds))


async def test_execute_streams_output_and_sleeps_on_the_given_clock() -> None:
    rec = Recorder()
    code = await shell.execute(["sh", "-c", "echo a; sleep 2; echo b >/dev/null; foo"], USERNS, rec.write, rec.sleep)
    assert code == 127 and rec.clock == 2.0
    assert rec.events[:2] == [("stdout", "a\n"), ("slept", 2.0)]
    assert rec.events[-1] == ("stderr", "sh: 1: foo: not found\n")


async def test_an_interactive_shell_prompts_keeps_status_and_counts_lines() -> None:
    lines = iter(["false\n", "echo $?\n", "nope\n", "exit 5\n", "echo never\n"])
    rec = Recorder()

    async def read_line() -> str | None:
        return next(lines, None)

    assert await shell.interactive(USERNS, read_line, rec.write, rec.sleep) == 5
    assert rec.events == [("stderr", "# "), ("stderr", "# "), ("stdout", "1\n"), ("stderr", "# "),
                          ("stderr", "sh: 3: nope: not found\n"), ("stderr", "# ")]


async def test_an_interactive_shell_ends_with_the_last_status_at_end_of_input() -> None:
    lines = iter(["false\n"])
    rec = Recorder()

    async def read_line() -> str | None:
        return next(lines, None)

    assert await shell.interactive(USERNS, read_line, rec.write, rec.sleep) == 1


REDIRECTS: list[tuple[str, str, tuple[str, str, int]]] = [
    ("> /dev/null drops stdout", "echo hidden >/dev/null; echo shown", ("shown\n", "", 0)),
    ("2>&1 sends errors down the pipe", "foo 2>&1 | cat", ("sh: 1: foo: not found\n", "", 0)),
    ("2> /dev/null drops errors", "cat /nope 2>/dev/null; echo $?", ("1\n", "", 0)),
    ("> writes a file that cat and ls then see", "echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f; ls /tmp",
     ("one\ntwo\nf\n", "", 0)),
    ("a relative path is under /", "echo x > out; cat /out", ("x\n", "", 0)),
    ("a missing directory cannot be written", "echo x > /nope/f",
     ("", "sh: 1: cannot create /nope/f: Directory nonexistent\n", 2)),
    ("a redirection without a target", "echo x >", ("", "sh: 1: Syntax error: end of file unexpected\n", 2)),
]


@pytest.mark.parametrize(("script", "want"), [c[1:] for c in REDIRECTS], ids=[c[0] for c in REDIRECTS])
def test_redirections_go_where_dash_sends_them(script: str, want: tuple[str, str, int]) -> None:
    context = shell.Context(env=dict(USERNS.env))
    assert tuple(shell.run(script, context)) == want
