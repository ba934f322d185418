"""`--token-auth-file`: upstream's CSV records, and the records it skips or refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver import auth
from apiserver.authentication import token_file


def test_records_name_user_uid_and_groups(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('t1,alice,u-1,"dev,ops"\nt2, bob, u-2\n,nobody,u-3\nt1,carol,u-4\n')
    users = token_file.load(str(path))
    assert users == {"t1": auth.User("carol", (), uid="u-4"), "t2": auth.User("bob", (), uid="u-2")}
    path.write_text('t1,alice,u-1,"dev,ops",ignored\n')
    assert token_file.load(str(path))["t1"] == auth.User("alice", ("dev", "ops"), uid="u-1")
    assert token_file.find(token_file.load(str(path)), "t1") is not None
    assert token_file.find(token_file.load(str(path)), "t2") is None


def test_a_record_with_fewer_than_three_columns_is_refused_with_upstreams_text(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("t1,alice\n")
    with pytest.raises(token_file.TokenFileError) as raised:
        token_file.load(str(path))
    assert str(raised.value) == (f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                                 "found 2")
