"""kube-apiserver's audit flags and what they build. `cluster/cli.py` (`haru up`) and
`apiserver/runner.py` pass them through.

As upstream: events are written only when both `--audit-policy-file` and `--audit-log-path` are
given (a policy with no backend, or a backend with no policy, records nothing); a policy that does
not load stops the server at start with `policy.PolicyError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.audit import policy as policy_module
from apiserver.audit.log_file import LogFile
from apiserver.audit.recorder import Auditor


@dataclass(frozen=True)
class Options:
    log_path: str = ""
    policy_file: str = ""
    max_age_days: int = 0
    max_backups: int = 0
    max_size_mb: int = 0

    def check(self) -> policy_module.Policy | None:
        """The policy, loaded and validated (raises `PolicyError`); None without a policy file."""
        for name, value in (("--audit-log-maxage", self.max_age_days), ("--audit-log-maxbackup", self.max_backups),
                            ("--audit-log-maxsize", self.max_size_mb)):
            if value < 0:
                raise policy_module.PolicyError(f"{name} {value} must be a positive number")
        if not self.policy_file:
            return None
        try:
            return policy_module.load(self.policy_file)
        except policy_module.PolicyError as exc:
            raise policy_module.PolicyError(f"loading audit policy file: {exc}") from None

    def build(self) -> Auditor | None:
        loaded = self.check()
        if loaded is None or not self.log_path:
            return None
        return Auditor(loaded, LogFile(self.log_path, self.max_size_mb, self.max_backups, self.max_age_days))
