"""`parse_status` (reference_host/repo/gitstatus.py) on the output of a real `git status`: every
record kind the host asks for, names that are not UTF-8, and submodules: an edit inside one is
its own repository's (not reported), a moved commit is reported as `SUBMODULE`."""

from __future__ import annotations

import os
from pathlib import Path

from reference_host.repo.git import GitRunner
from reference_host.repo.gitstatus import NESTED, STATUS_ARGS, SUBMODULE, parse_status
from tests.support.gitrepo import git, make_repo


def test_each_record_kind_gives_its_path_and_head_blob(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"mod.py": "a\n", "gone.py": "b\n", "same.py": "c\n"})
    sub = make_repo(tmp_path / "sub", {"s.py": "s\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(repo, "commit", "-q", "-m", "submodule")
    (repo / "mod.py").write_text("a2\n")
    (repo / "gone.py").unlink()
    (repo / "staged.py").write_text("new\n")
    git(repo, "add", "staged.py")
    (repo / "untracked dir").mkdir()
    (repo / "untracked dir" / "u.py").write_text("u\n")
    odd = os.fsdecode(b"caf\xe9.txt")  # not UTF-8: kept as surrogate escapes
    (repo / odd).write_text("x\n")
    (repo / "sub" / "s.py").write_text("changed inside the submodule\n")
    heads = {
        line.split()[3]: line.split()[2] for line in git(repo, "ls-tree", "-r", "HEAD").splitlines()
    }
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert out.ok
    commit, candidates = parse_status(out.stdout)
    assert commit == git(repo, "rev-parse", "HEAD").strip()
    assert candidates == {
        "mod.py": heads["mod.py"],
        "gone.py": heads["gone.py"],
        "staged.py": None,
        "untracked dir/u.py": None,
        odd: None,
    }


def test_a_submodule_whose_commit_moved_is_reported_without_git_entering_it(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    sub = make_repo(tmp_path / "sub", {"s.py": "s\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(repo, "commit", "-q", "-m", "submodule")
    (repo / "sub" / "s.py").write_text("edited, not committed\n")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert parse_status(out.stdout)[1] == {}, "an edit inside a submodule is that repository's"
    git(repo / "sub", "commit", "-q", "-am", "moved")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert parse_status(out.stdout)[1] == {"sub": SUBMODULE}


def test_a_file_untracked_with_rm_cached_keeps_its_head_blob(tmp_path: Path) -> None:
    """`git rm --cached f` with f left on disk: git reports a staged deletion and an untracked
    f. Against HEAD that is one path, and its HEAD blob is what its bytes are compared with."""
    repo = make_repo(tmp_path / "repo", {"kept.py": "k\n", "edited.py": "e\n"})
    heads = {
        line.split()[3]: line.split()[2] for line in git(repo, "ls-tree", "-r", "HEAD").splitlines()
    }
    git(repo, "rm", "-q", "--cached", "kept.py", "edited.py")
    (repo / "edited.py").write_text("e2\n")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert b"? kept.py" in out.stdout and b"? edited.py" in out.stdout
    assert parse_status(out.stdout)[1] == {
        "kept.py": heads["kept.py"],
        "edited.py": heads["edited.py"],
    }


def test_an_untracked_nested_repository_is_named_as_one_not_entered(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    nested = make_repo(repo / "vendor" / "lib", {"n.py": "n\n"})
    (nested / "n.py").write_text("edited in the nested repository\n")
    (repo / "vendor" / "plain.py").write_text("p\n")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert parse_status(out.stdout)[1] == {"vendor/lib/": NESTED, "vendor/plain.py": None}


def test_an_unborn_branch_has_no_commit_and_no_head_blobs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"}, commit=False)
    git(repo, "add", "a.py")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert parse_status(out.stdout) == (None, {"a.py": None})


def test_a_branch_with_an_upstream_is_read_without_counting_commits(tmp_path: Path) -> None:
    upstream = make_repo(tmp_path / "upstream", {"a.py": "a\n"})
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(repo))
    (repo / "a.py").write_text("a2\n")
    git(repo, "commit", "-q", "-am", "ahead of upstream")
    out = GitRunner(repo).run(*STATUS_ARGS)
    assert b"# branch.upstream origin/main" in out.stdout
    assert b"# branch.ab +? -?" in out.stdout, "ahead/behind not computed"
    assert parse_status(out.stdout) == (git(repo, "rev-parse", "HEAD").strip(), {})


def test_records_repeated_from_the_last_answer_read_as_read_from_scratch(tmp_path: Path) -> None:
    """`known` (the last answer's changed-entry records) is reused for the same bytes and then
    holds the new answer's: each answer reads what it reads alone, whatever came before."""
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n", "b.py": "b\n", "c.py": "c\n"})
    known: dict[bytes, tuple[str, str | None]] = {}
    changes = [
        lambda: (repo / "a.py").write_text("a2\n"),
        lambda: (repo / "new.py").write_text("n\n"),
        lambda: git(repo, "add", "a.py", "new.py"),  # the same paths, other records
        lambda: (repo / "b.py").unlink(),
        lambda: git(repo, "commit", "-qm", "moved HEAD: every HEAD sha1 may differ"),
    ]
    for change in changes:
        change()
        out = GitRunner(repo).run(*STATUS_ARGS).stdout
        assert parse_status(out, known) == parse_status(out)
        records = [r for r in out.split(b"\0") if r.startswith(b"1 ")]
        assert set(known) == set(records)
