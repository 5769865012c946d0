"""Reading the repository: the work tree and git, without ever running a program the repository names.

`workspace.py` is the feature-facing view (`Workspace`, `WorkTreeState`); `git.py` is the one git
runner, `gitblobs.py` reads blobs from the object store, `workfiles.py` hashes work-tree files
streaming. See `docs/workspace-git.md`.
"""
