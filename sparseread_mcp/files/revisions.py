"""Earlier versions of a file: from git for commit revisions, from memory for content hashes seen."""

from __future__ import annotations

import dataclasses
import hashlib
import sys

from .artifacts import Artifact, LruCache, content_rev, decode_text
from .gitrev import GitRevisions
from .roots import ResolvedPath, Roots

#: Memory for earlier versions' texts (what `since` diffs and old pointers are answered from).
_TEXTS_BYTES = 128 * 1024 * 1024


class Revisions:
    """Resolves `rev` in `path@rev#anchor`: the commit (tracked, unmodified files) or `sha256:` prefix."""

    def __init__(self, roots: Roots) -> None:
        self.git = GitRevisions(roots)
        # (path, rev) -> text: a commit names many files, so the path is part of the key; earlier versions
        # of large files would otherwise pile up, hence the byte bound.
        self._texts: LruCache[tuple[str, str], str] = LruCache(128, max_bytes=_TEXTS_BYTES, weigh=sys.getsizeof)

    def stamp(self, artifact: Artifact) -> Artifact:
        """The artifact with its commit when git tracks it unmodified."""
        commit = self.git.commit_for(artifact.location.absolute, artifact.blob) if artifact.blob else None
        return dataclasses.replace(artifact, commit=commit) if commit else artifact

    def remember(self, artifact: Artifact) -> None:
        """Keep the text under both of its revisions, so older pointers can be compared later."""
        self._texts.put((artifact.path, content_rev(artifact.fingerprint)), artifact.text)
        if artifact.commit:
            self._texts.put((artifact.path, artifact.commit), artifact.text)

    def revs_of(self, artifact: Artifact) -> set[str]:
        revs = {content_rev(artifact.fingerprint)}
        if artifact.commit:
            revs.update({artifact.commit, artifact.commit[:7]})
        return revs

    def text(self, location: ResolvedPath, rev: str) -> str | None:
        """The text of `location` at `rev`, from memory or git; None when neither has it."""
        known = self._texts.get((location.relative, rev))
        if known is not None:
            return known
        data = None if rev.startswith("sha256:") else self.git.text_at(location.absolute, rev)
        if data is None:
            return None
        text = decode_text(data)
        self._texts.put((location.relative, rev), text)
        return text

    def artifact_at(self, location: ResolvedPath, rev: str, *, binary: bool) -> Artifact | None:
        """An Artifact for the version `rev` names (bytes from git, or text from memory)."""
        data = None if rev.startswith("sha256:") else self.git.text_at(location.absolute, rev)
        if data is None:
            text = self._texts.get((location.relative, rev))
            if text is None or binary:
                return None
            data = text.encode("utf-8")
        return Artifact(
            path=location.relative,
            location=location,
            text="" if binary else decode_text(data),
            size_bytes=len(data),
            fingerprint=hashlib.sha256(data).hexdigest(),
            data=data if binary else None,
            commit=None if rev.startswith("sha256:") else rev,
        )
