"""Static bearer tokens from `--token-auth-file`, in kube-apiserver's CSV format.

One record a line: `token,user,uid[,"group1,group2"]` (more columns are ignored). A record with an
empty token is skipped and a repeated token replaces the earlier one, each with upstream's warning;
fewer than three columns stops the server with upstream's error. Read once at start, as upstream
reads it. Used by `chain.Authenticator`; `cluster/cli.py` passes the path.
"""

from __future__ import annotations

import csv
import hmac
import logging

from apiserver import auth

log = logging.getLogger("haru.apiserver.authn")


class TokenFileError(ValueError):
    pass


def load(path: str) -> dict[str, auth.User]:
    users: dict[str, auth.User] = {}
    with open(path, newline="", encoding="utf-8-sig") as f:
        for number, record in enumerate(csv.reader(f, skipinitialspace=True), start=1):
            if not record:
                continue
            if len(record) < 3:
                raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, user name, "
                                     f"user uid), found {len(record)}")
            token, name, uid = record[0], record[1], record[2]
            if not token:
                log.warning("empty token has been found in token file '%s', record number '%d'", path, number)
                continue
            if token in users:
                log.warning("duplicate token has been found in token file '%s', record number '%d'", path, number)
            groups = tuple(record[3].split(",")) if len(record) >= 4 and record[3] else ()
            users[token] = auth.User(name, groups, uid=uid)
    return users


def find(users: dict[str, auth.User], token: str) -> auth.User | None:
    # Compare every entry in constant time: which token matched must not leak through timing.
    found = None
    for known, user in users.items():
        if hmac.compare_digest(known.encode(), token.encode()):
            found = user
    return found
