"""The small simulated shell that `kubectl exec` reaches in a hollow container.

`run(command, context)` returns `(stdout, stderr, exit_code)`; `command` is an argv list (what
`kubectl exec POD -- …` sends) or a string, which runs as `sh -c <string>`. Scripts take `;`,
newlines, `&&`, `||`, `|`, redirections (`>`, `>>`, `2>`, `2>&1`), quotes, `$VAR`/`${VAR}`/`$?`,
`$(...)` and `for … in …; do …; done` as dash does (more commands in `coreutils.py`), and an unknown command
fails as dash's does (`sh: 1: foo: not found`, 127). `steps(...)` yields the same run as events,
with `("sleep", seconds)` where `sleep N` waits, so the exec server (nodes-exec) streams output
and waits on its own clock; `run` adds the sleeps up in `Result.slept`. Files and devices come
from `Context` (the kubelet fills it: env, hostname, ID maps from `nodes/userns.py`, GPU lines
from `nodes/devices/container.py`). `execute` runs a command against a writer and a sleep (what
`ContainerView.exec` needs), and `interactive` is `kubectl exec -it POD -- sh`: a prompt, one
line at a time, until `exit` or the end of stdin.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterator, Sequence

from nodes import coreutils

NOT_FOUND = 127
BASE_DEV = ("console", "core", "fd", "full", "mqueue", "null", "ptmx", "pts", "random", "shm", "stderr",
            "stdin", "stdout", "termination-log", "tty", "urandom", "zero")
ROOT_DIRS = ("bin", "dev", "etc", "home", "lib", "proc", "root", "run", "sys", "tmp", "usr", "var")
HOST_USERS_MAP = (0, 0, 4294967295)
_NUMBER = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([smhd]?)$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_STATUS = "\x00?\x00"  # a `$?` placeholder inside a word
# `for NAME in WORDS; do BODY; done`: the body runs once per word, read again with NAME set.
_FOR = re.compile(r"\bfor\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s+in\s+(?P<words>[^;\n]*?)\s*[;\n]\s*do\b"
                  r"(?P<body>.*?)[;\n]\s*done\b", re.S)


def id_map_line(inside: int, outside: int, length: int) -> str:
    """One line of /proc/self/uid_map, as the kernel prints it (`%10u %10u %10u`)."""
    return f"{inside:>10} {outside:>10} {length:>10}\n"


@dataclass
class Context:
    env: dict[str, str] = field(default_factory=dict)
    hostname: str = "localhost"
    uid_map: str = id_map_line(*HOST_USERS_MAP)
    gid_map: str = id_map_line(*HOST_USERS_MAP)
    gpu_lines: list[str] = field(default_factory=list)  # `nvidia-smi -L` output; empty = no GPUs
    dev_entries: list[str] = field(default_factory=list)  # extra /dev names (nvidia0, nvidiactl, …)
    files: dict[str, str] = field(default_factory=dict)  # more readable files, path → content
    stdin: str = ""
    tty: bool = False
    boot_time: float = 0.0  # when the container started (epoch seconds), for `uptime`; 0: now


class Result(tuple):  # type: ignore[type-arg]
    """`(stdout, stderr, exit_code)`, with `.slept`: the seconds the `sleep` commands asked for."""

    slept: float

    def __new__(cls, stdout: str, stderr: str, exit_code: int, slept: float = 0.0) -> "Result":
        self = super().__new__(cls, (stdout, stderr, exit_code))
        self.slept = slept
        return self

    @property
    def stdout(self) -> str:
        return str(self[0])

    @property
    def stderr(self) -> str:
        return str(self[1])

    @property
    def exit_code(self) -> int:
        return int(self[2])


Event = tuple[str, object]  # ("out", text) | ("err", text) | ("sleep", seconds) | ("exit", code)


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _Syntax(Exception):
    pass


# --- tokenizing and parsing -------------------------------------------------------------------


@dataclass
class _Word:
    text: str
    line: int


def _closing_paren(script: str, start: int) -> int:
    """The index of the `)` that closes the `(` before `start` (quotes skipped), or -1."""
    depth, i = 1, start
    while i < len(script):
        c = script[i]
        if c in "'\"":
            end = script.find(c, i + 1)
            if end < 0:
                return -1
            i = end
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _tokens(script: str, env: dict[str, str], first_line: int = 1,
            substitute: Callable[[str], str] | None = None) -> list[_Word | str]:
    """Words (with $ and $(...) expanded, quotes removed) and the operators ; && || | and newline."""
    out: list[_Word | str] = []
    i, line, n = 0, first_line, len(script)
    word: list[str] | None = None

    def expand(j: int) -> tuple[str, int]:
        if j + 1 < n and script[j + 1] == "(":
            end = _closing_paren(script, j + 2)
            if end < 0:
                raise _Syntax('"(" unexpected (expecting ")")')
            return (substitute(script[j + 2:end]) if substitute else ""), end + 1
        if j + 1 < n and script[j + 1] == "?":
            return _STATUS, j + 2  # filled in when the command runs, not when the script is read
        if j + 1 < n and script[j + 1] == "$":
            return "1", j + 2
        if j + 1 < n and script[j + 1] == "{":
            end = script.find("}", j + 2)
            if end < 0:
                raise _Syntax("Bad substitution")
            return env.get(script[j + 2:end], ""), end + 1
        match = _NAME.match(script, j + 1)
        if match:
            return env.get(match.group(0), ""), match.end()
        return "$", j + 1

    def flush() -> None:
        nonlocal word
        if word is not None:
            out.append(_Word("".join(word), line))
            word = None

    while i < n:
        c = script[i]
        if c in " \t":
            flush()
            i += 1
        elif c == "\n":
            flush()
            out.append("\n")
            line += 1
            i += 1
        elif c == "#" and word is None:
            while i < n and script[i] != "\n":
                i += 1
        elif script.startswith("&&", i) or script.startswith("||", i):
            flush()
            out.append(script[i:i + 2])
            i += 2
        elif c in ";|":
            flush()
            out.append(c)
            i += 1
        elif c == ">":
            # A redirection: `>`, `>>`, `2>`, `2>>`, `2>&1`, `>&2`; a lone digit before it is the fd.
            fd = "1"
            if word is not None and len(word) == 1 and word[0] in ("1", "2"):
                fd, word = word[0], None
            flush()
            op = fd + ">"
            i += 1
            if i < n and script[i] == ">":
                op += ">"
                i += 1
            elif i + 1 < n and script[i] == "&" and script[i + 1] in "12":
                op += "&" + script[i + 1]
                i += 2
            out.append(op)
        elif c == "'":
            end = script.find("'", i + 1)
            if end < 0:
                raise _Syntax('Unterminated quoted string')
            word = (word or []) + [script[i + 1:end]]
            i = end + 1
        elif c == '"':
            word = word or []
            word.append("")
            i += 1
            while True:
                if i >= n:
                    raise _Syntax('Unterminated quoted string')
                ch = script[i]
                if ch == '"':
                    i += 1
                    break
                if ch == "\\" and i + 1 < n and script[i + 1] in '"\\$`':
                    word.append(script[i + 1])
                    i += 2
                elif ch == "$":
                    value, i = expand(i)
                    word.append(value)
                else:
                    word.append(ch)
                    i += 1
        elif c == "\\" and i + 1 < n:
            word = (word or []) + [script[i + 1]]
            i += 2
        elif c == "$":
            value, i = expand(i)
            # An unquoted expansion splits on spaces, and vanishes when empty.
            pieces = value.split()
            if not pieces:
                if word is None:
                    continue
            for k, piece in enumerate(pieces):
                if k:
                    flush()
                word = (word or []) + [piece]
        else:
            word = (word or []) + [c]
            i += 1
    flush()
    return out


# --- the commands -----------------------------------------------------------------------------


Builtin = Callable[[list[str], Context, str], Iterator[Event]]


def _id(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    flags = "".join(a.lstrip("-") for a in args[1:] if a.startswith("-"))
    if "u" in flags or "g" in flags:
        yield "out", ("root" if "n" in flags else "0") + "\n"
    else:
        yield "out", "uid=0(root) gid=0(root) groups=0(root)\n"
    return None


def _files(ctx: Context) -> dict[str, str]:
    return {
        "/proc/self/uid_map": ctx.uid_map,
        "/proc/self/gid_map": ctx.gid_map,
        "/etc/hostname": ctx.hostname + "\n",
        "/etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
        "/etc/group": "root:x:0:\n",
        **ctx.files,
    }


def _cat(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    files = _files(ctx)
    names = [a for a in args[1:] if a != "-"] if len(args) > 1 else []
    if len(args) == 1 or "-" in args[1:]:
        yield "out", stdin
    failed = False
    for name in names:
        path = name if name.startswith("/") else "/" + name
        if path in files:
            yield "out", files[path]
        elif path.rstrip("/") in _dirs(ctx):
            yield "err", f"cat: {name}: Is a directory\n"
            failed = True
        else:
            yield "err", f"cat: {name}: No such file or directory\n"
            failed = True
    if failed:
        yield "exit", 1


def _dirs(ctx: Context) -> dict[str, list[str]]:
    dev = sorted(set(BASE_DEV) | set(ctx.dev_entries))
    dirs = {"": list(ROOT_DIRS), "/dev": dev, "/etc": ["group", "hostname", "hosts", "passwd", "resolv.conf"],
            "/proc": ["self"], "/proc/self": ["gid_map", "uid_map"], "/tmp": [], "/root": []}
    for path in ctx.files:  # files the context brings, and those redirections wrote
        parent, _, name = path.rpartition("/")
        if parent in dirs and name not in dirs[parent]:
            dirs[parent] = sorted([*dirs[parent], name])
    return dirs


def _ls(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    targets = [a for a in args[1:] if not a.startswith("-")] or ["."]
    dirs = _dirs(ctx)
    code = 0
    for k, target in enumerate(targets):
        path = "" if target in (".", "/") else ("/" + target.strip("/") if target != "/" else "")
        if path in dirs:
            if len(targets) > 1:
                yield "out", ("\n" if k else "") + f"{target}:\n"
            entries = dirs[path]
            if entries:
                yield "out", ("  ".join(entries) if ctx.tty else "\n".join(entries)) + "\n"
        elif path in _files(ctx):
            yield "out", target + "\n"
        else:
            yield "err", f"ls: cannot access '{target}': No such file or directory\n"
            code = 2
    if code:
        yield "exit", code


def _env(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    yield "out", "".join(f"{k}={v}\n" for k, v in ctx.env.items())


def _echo(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    words = args[1:]
    newline = True
    if words and words[0] == "-n":
        newline, words = False, words[1:]
    yield "out", " ".join(words) + ("\n" if newline else "")


def _hostname(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    yield "out", ctx.hostname + "\n"


def _nvidia_smi(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    if len(args) == 1 or args[1:] in (["-L"], ["--list-gpus"]):
        yield "out", "".join(line + "\n" for line in ctx.gpu_lines)
        return
    yield "out", "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
    yield "exit", 2


def _sleep(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    if len(args) < 2:
        yield "err", "sleep: missing operand\nTry 'sleep --help' for more information.\n"
        yield "exit", 1
        return
    total = 0.0
    for arg in args[1:]:
        match = _NUMBER.match(arg)
        if not match:
            yield "err", f"sleep: invalid time interval '{arg}'\nTry 'sleep --help' for more information.\n"
            yield "exit", 1
            return
        total += float(match.group(1)) * _UNITS[match.group(2)]
    yield "sleep", total


def _true(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    return iter(())


def _false(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    yield "exit", 1


def _pwd(args: list[str], ctx: Context, stdin: str) -> Iterator[Event]:
    yield "out", "/\n"


COMMANDS: dict[str, Builtin] = {
    "id": _id, "cat": _cat, "ls": _ls, "env": _env, "printenv": _env, "echo": _echo, "hostname": _hostname,
    "sleep": _sleep, "true": _true, "false": _false, "pwd": _pwd, ":": _true,
    **coreutils.COMMANDS,
}


def _lookup(name: str, ctx: Context) -> Builtin | None:
    base = name.rsplit("/", 1)[-1] if name.startswith("/") else name
    if base == "nvidia-smi":
        return _nvidia_smi if ctx.gpu_lines else None
    return COMMANDS.get(base)


# --- running ----------------------------------------------------------------------------------


class _Shell:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.status = 0

    def simple(self, argv: list[str], stdin: str, line: int, in_shell: bool) -> Iterator[Event]:
        """One command; sets self.status. Yields out/err/sleep events (never exit)."""
        name = argv[0]
        base = name.rsplit("/", 1)[-1]
        if base in ("sh", "bash", "dash", "ash"):
            yield from self.sh(argv, stdin)
            return
        if base == "exit" and in_shell:
            code = self.status
            if len(argv) > 1:
                if not argv[1].isdigit():
                    yield "err", f"sh: {line}: exit: Illegal number: {argv[1]}\n"
                    code = 2
                else:
                    code = int(argv[1]) % 256
            raise _Exit(code)
        command = _lookup(name, self.ctx)
        if command is None:
            if in_shell:
                yield "err", f"sh: {line}: {name}: not found\n"
            else:
                yield "err", (f'OCI runtime exec failed: exec failed: unable to start container process: exec: '
                              f'"{name}": executable file not found in $PATH: unknown\n')
            self.status = NOT_FOUND
            return
        code = 0
        for kind, value in command(argv, self.ctx, stdin):
            if kind == "exit":
                code = int(value)  # type: ignore[call-overload]
            else:
                yield kind, value
        self.status = code

    def sh(self, argv: list[str], stdin: str) -> Iterator[Event]:
        args = argv[1:]
        if not args:
            # A bare `sh` reads its script from stdin (`kubectl exec -i POD -- sh < script`).
            script = stdin
        elif args[0] == "-c":
            if len(args) < 2:
                yield "err", "sh: 0: -c requires an argument\n"
                self.status = 2
                return
            script = args[1]
        else:
            yield "err", f"sh: 0: cannot open {args[0]}: No such file\n"
            self.status = 2
            return
        inner = _Shell(self.ctx)
        try:
            yield from inner.script(script)
        except _Exit as done:
            inner.status = done.code
        self.status = inner.status

    def substitute(self, script: str) -> str:
        """`$(script)`: what it prints on stdout, without the trailing newlines."""
        inner = _Shell(self.ctx)
        inner.status = self.status
        out: list[str] = []
        try:
            out = [str(value) for kind, value in inner.script(script) if kind == "out"]
        except _Exit:
            pass
        return "".join(out).rstrip("\n")

    def for_loop(self, text: str, first_line: int) -> Iterator[Event] | None:
        """`for NAME in WORDS; do BODY; done` (with what comes before and after); None without one."""
        match = next((m for m in _FOR.finditer(text) if not text[:m.start()].strip()
                      or text[:m.start()].rstrip().endswith((";", "\n"))), None)
        if match is None:
            return None

        def run() -> Iterator[Event]:
            before, after = text[:match.start()], text[match.end():]
            if before.strip():
                yield from self.script(before.rstrip().rstrip(";"), first_line)
            try:
                words = [w.text for w in _tokens(match.group("words"), self.ctx.env, first_line, self.substitute)
                         if isinstance(w, _Word)]
            except _Syntax as err:
                yield "err", f"sh: {first_line}: Syntax error: {err}\n"
                self.status = 2
                return
            self.status = 0
            for value in words:
                self.ctx.env[match.group("name")] = value
                yield from self.script(match.group("body"), first_line)
            if after.strip().lstrip(";").strip():
                yield from self.script(after.strip().lstrip(";"), first_line)
        return run()

    def script(self, text: str, first_line: int = 1) -> Iterator[Event]:
        loop = self.for_loop(text, first_line)
        if loop is not None:
            yield from loop
            return
        try:
            tokens = _tokens(text, self.ctx.env, first_line, self.substitute)
        except _Syntax as err:
            yield "err", f"sh: {first_line}: Syntax error: {err}\n"
            self.status = 2
            return
        # Lists: pipelines joined by && / ||, separated by ; or newline.
        lists: list[list[object]] = [[]]
        for tok in tokens:
            if tok in (";", "\n"):
                if tok == ";" and not lists[-1]:
                    yield "err", f'sh: 1: Syntax error: ";" unexpected\n'
                    self.status = 2
                    return
                lists.append([])
            else:
                lists[-1].append(tok)
        for items in lists:
            if items:
                yield from self.and_or(items)

    def and_or(self, items: list[object]) -> Iterator[Event]:
        pipeline: list[object] = []
        op = ""
        run_next = True
        for item in [*items, None]:
            if item in ("&&", "||", None):
                if not pipeline:
                    yield "err", f'sh: 1: Syntax error: "{item or "end of file"}" unexpected\n'
                    self.status = 2
                    return
                if run_next:
                    yield from self.pipeline(pipeline)
                pipeline = []
                op = str(item or "")
                run_next = (op == "&&" and self.status == 0) or (op == "||" and self.status != 0)
            else:
                pipeline.append(item)

    def pipeline(self, items: list[object]) -> Iterator[Event]:
        commands: list[list[object]] = [[]]
        for item in items:
            if item == "|":
                commands.append([])
            else:
                commands[-1].append(item)
        stdin = ""
        for k, parts in enumerate(commands):
            words, redirects, problem = self._redirections(parts)
            if problem:
                yield "err", problem
                self.status = 2
                return
            if not words:
                yield "err", 'sh: 1: Syntax error: "|" unexpected\n'
                self.status = 2
                return
            argv = [w.text.replace(_STATUS, str(self.status)) for w in words]
            line = words[0].line
            # Where each stream goes: "@out"/"@err" = the caller's stdout/stderr, "|" = the pipe, else a file.
            targets = {"out": "@out" if k == len(commands) - 1 else "|", "err": "@err"}
            for op, path in redirects:
                path = path if not path or path.startswith("/") else "/" + path  # the working directory is /
                stream = "err" if op.startswith("2") else "out"
                if op.endswith("&1") or op.endswith("&2"):
                    targets[stream] = targets["out" if op.endswith("&1") else "err"]
                    continue
                if path != "/dev/null" and (path.rsplit("/", 1)[0] or "") not in _dirs(self.ctx):
                    yield "err", f"sh: {line}: cannot create {path}: Directory nonexistent\n"
                    self.status = 2
                    return
                targets[stream] = path
                if path != "/dev/null" and not op.endswith(">>"):
                    self.ctx.files[path] = ""
            captured: list[str] = []
            for kind, value in self.simple(argv, stdin, line, True):
                target = targets.get(kind)
                if target is None:
                    yield kind, value
                elif target.startswith("@"):
                    yield target[1:], value
                elif target == "|":
                    captured.append(str(value))
                elif target != "/dev/null":
                    self.ctx.files[target] = self.ctx.files.get(target, "") + str(value)
            stdin = "".join(captured)

    def _redirections(self, parts: list[object]) -> tuple[list[_Word], list[tuple[str, str]], str]:
        words: list[_Word] = []
        redirects: list[tuple[str, str]] = []
        pending = ""
        for part in parts:
            if isinstance(part, _Word):
                if pending:
                    redirects.append((pending, part.text))
                    pending = ""
                else:
                    words.append(part)
            elif str(part).endswith(("&1", "&2")):
                redirects.append((str(part), ""))
            else:
                if pending:
                    return [], [], f'sh: 1: Syntax error: "{part}" unexpected\n'
                pending = str(part)
        if pending:
            return [], [], 'sh: 1: Syntax error: end of file unexpected\n'
        return words, redirects, ""


def steps(command: Sequence[str] | str, context: Context) -> Iterator[Event]:
    """The run as events, ending with ("exit", code)."""
    shell = _Shell(context)
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
    if not argv:
        yield "err", "OCI runtime exec failed: exec failed: unable to start container process: exec: no command\n"
        yield "exit", NOT_FOUND
        return
    yield from shell.simple(argv, context.stdin, 1, False)
    yield "exit", shell.status


def run(command: Sequence[str] | str, context: Context | None = None) -> Result:
    out: list[str] = []
    err: list[str] = []
    slept = 0.0
    code = 0
    for kind, value in steps(command, context or Context()):
        if kind == "out":
            out.append(str(value))
        elif kind == "err":
            err.append(str(value))
        elif kind == "sleep":
            slept += float(value)  # type: ignore[arg-type]
        else:
            code = int(value)  # type: ignore[call-overload]
    return Result("".join(out), "".join(err), code, slept)


Write = Callable[[str, str], Any]  # (stream "stdout" | "stderr", text); may return an awaitable
PROMPT = "# "  # dash's PS1 for root, written to stderr as dash does


async def _emit(write: Write, stream: str, text: str) -> None:
    result = write(stream, text)
    if inspect.isawaitable(result):
        await result


async def _play(events: Iterator[Event], write: Write, sleep: Callable[[float], Awaitable[Any]]) -> int:
    code = 0
    for kind, value in events:
        if kind == "out":
            await _emit(write, "stdout", str(value))
        elif kind == "err":
            await _emit(write, "stderr", str(value))
        elif kind == "sleep":
            await sleep(float(value))  # type: ignore[arg-type]
        else:
            code = int(value)  # type: ignore[call-overload]
    return code


async def execute(command: Sequence[str] | str, context: Context, write: Write,
                  sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> int:
    """Run `command`, writing its output as it comes and waiting where it sleeps; the exit code.

    A bare `sh` reads its script from `context.stdin` (`kubectl exec -i`); on a terminal
    (`kubectl exec -it … -- sh`) use `interactive` instead.
    """
    return await _play(steps(command, context), write, sleep)


async def interactive(context: Context, read_line: Callable[[], Awaitable[str | None]], write: Write,
                      sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, prompt: str = PROMPT) -> int:
    """A shell on a terminal: prompt, read a line (None or "" at end of input), run it, repeat.

    Line numbers in messages count the lines read, and `$?` carries over, as in dash. `sh` with its
    commands on a pipe (`kubectl exec -i POD -- sh`) reads them the same way with no prompt ("").
    """
    shell = _Shell(context)
    line_number = 0
    while True:
        if prompt:
            await _emit(write, "stderr", prompt)
        line = await read_line()
        if not line:
            return shell.status
        line_number += 1
        try:
            await _play(shell.script(line.rstrip("\n"), line_number), write, sleep)
        except _Exit as done:
            return done.code
