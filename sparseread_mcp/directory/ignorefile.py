"""`.gitignore` rules, matched in time linear in the path: no pattern can make a directory walk hang.

pathspec (like every translation of globs to backtracking regular expressions) takes exponential time on
a line such as `*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a` against a long name of `a`s: one hostile ignore file
froze the whole server. Here a pattern is a list of tokens run as a bit-parallel automaton (Shift-And):
one pass over the path, a few integer operations per character, whatever the pattern. Literal names and
`*.ext` (most of any real ignore file) take a direct comparison.

Semantics follow gitignore(5): `#` comments, `!` negation (the last matching rule decides), a trailing
`/` for directories only, a slash at the start or middle anchors the pattern to the file's folder
(otherwise it matches a name at any depth), `*` `?` `[...]` never match `/`, and `**` as a whole
component matches any number of folders. A line that cannot be read is skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Lines longer than this are not real ignore rules: skipped (and counted).
MAX_PATTERN_CHARS = 1024
#: `**` components in one pattern; each doubles the variants matched.
MAX_GLOBSTARS = 4


class _Wildcard:
    """`*` (any text but `/`), `**` (any text) or `?` (one character but `/`): objects, so that an escaped
    `\\*` (the literal character) is never mistaken for one."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_STAR, _GLOBSTAR, _ANY = _Wildcard("*"), _Wildcard("**"), _Wildcard("?")


@dataclass(frozen=True, slots=True)
class _Class:
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def accepts(self, char: str) -> bool:
        if char == "/":
            return False
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


Token = str | _Wildcard | _Class  # a literal character, a wildcard, or a class


@dataclass(slots=True)
class _Automaton:
    """Shift-And over tokens: bit i set = the first i tokens matched."""

    tokens: tuple[Token, ...]
    _masks: dict[str, tuple[int, int]] = field(default_factory=dict)
    _stars: int = 0
    _accept: int = 0

    def __post_init__(self) -> None:
        self._stars = sum(1 << i for i, t in enumerate(self.tokens) if t is _STAR or t is _GLOBSTAR)
        self._accept = 1 << len(self.tokens)

    def _close(self, state: int) -> int:
        while True:  # a star may match nothing: the bit after it is reachable too
            grown = state | ((state & self._stars) << 1)
            if grown == state:
                return state
            state = grown

    def _masks_for(self, char: str) -> tuple[int, int]:
        masks = self._masks.get(char)
        if masks is None:
            step = loop = 0
            for i, token in enumerate(self.tokens):
                if token is _GLOBSTAR or (token is _STAR and char != "/"):
                    loop |= 1 << i
                elif token is _ANY:
                    step |= (char != "/") << i
                elif isinstance(token, _Class):
                    step |= token.accepts(char) << i
                elif token == char:
                    step |= 1 << i
            masks = (step, loop)
            if len(self._masks) < 512:
                self._masks[char] = masks
        return masks

    def matches(self, text: str) -> bool:
        state = self._close(1)
        for char in text:
            step, loop = self._masks_for(char)
            state = self._close(((state & step) << 1) | (state & loop))
            if not state:
                return False
        return bool(state & self._accept)


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    negated: bool
    directories_only: bool
    #: Matched against the path below the ignore file's folder (else against the last name only).
    anchored: bool
    literal: str | None  # the whole pattern, when it has no wildcard
    suffix: str | None  # `*.ext`: the part after the star
    automata: tuple[_Automaton, ...]

    def matches(self, path: str, *, is_dir: bool) -> bool:
        if self.directories_only and not is_dir:
            return False
        subject = path if self.anchored else path.rsplit("/", 1)[-1]
        if self.literal is not None:
            return subject == self.literal
        if self.suffix is not None:
            return subject.endswith(self.suffix)
        return any(automaton.matches(subject) for automaton in self.automata)


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    rules: tuple[IgnoreRule, ...]
    #: Lines skipped: too long, too many `**`, or a malformed class.
    skipped: int = 0

    @classmethod
    def parse(cls, text: str) -> IgnoreFile:
        rules: list[IgnoreRule] = []
        skipped = 0
        for line in text.splitlines():
            rule = parse_rule(line)
            if rule is None:
                skipped += _is_rule(line)
            else:
                rules.append(rule)
        return cls(rules=tuple(rules), skipped=skipped)

    def decides(self, path: str, *, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` rule; None: no rule here says."""
        for rule in reversed(self.rules):
            if rule.matches(path, is_dir=is_dir):
                return not rule.negated
        return None


def _is_rule(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def parse_rule(line: str) -> IgnoreRule | None:
    """One line as a rule; None for blanks, comments and lines that cannot be read (over the bounds)."""
    if len(line) > MAX_PATTERN_CHARS:
        return None
    line = _strip_trailing_spaces(line)
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    directories_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    if line.startswith("**/"):
        anchored_rest = line[3:]
        if "/" not in anchored_rest and "**" not in anchored_rest:
            anchored, line = False, anchored_rest  # `**/name` is `name` at any depth
    if not line:
        return None
    parts = line.split("/")
    if sum(part == "**" for part in parts) > MAX_GLOBSTARS:
        return None
    try:
        variants = _variants(parts)
        automata = tuple(_Automaton(_tokens(variant)) for variant in variants)
    except ValueError:
        return None
    wildcard = any(ch in line for ch in "*?[\\")
    literal = None if wildcard else line
    suffix = line[1:] if line.startswith("*") and not any(ch in line[1:] for ch in "*?[\\/") else None
    return IgnoreRule(
        negated=negated,
        directories_only=directories_only,
        anchored=anchored,
        literal=literal,
        suffix=suffix,
        automata=automata,
    )


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "  # an escaped space stays
    return stripped.rstrip("\r")


def _variants(parts: list[str]) -> list[str]:
    """The pattern as globs without `**` components: each `**` becomes either nothing or `**` (any text,
    slashes included, ending at a folder boundary); a trailing `**` matches everything inside."""
    variants = [""]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        grown = []
        for prefix in variants:
            if part == "**":
                if last:
                    grown.append(prefix + "**")  # `abc/**`: everything inside abc
                else:
                    grown.extend([prefix, prefix + "**/"])  # zero folders, or some
            else:
                grown.append(prefix + part + ("" if last else "/"))
        variants = grown
    return variants


def _tokens(glob: str) -> tuple[Token, ...]:
    tokens: list[Token] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "\\" and index + 1 < len(glob):
            tokens.append(glob[index + 1])
            index += 2
            continue
        if char == "*":
            run = index
            while index < len(glob) and glob[index] == "*":
                index += 1
            tokens.append(_GLOBSTAR if index - run >= 2 else _STAR)
            continue
        if char == "?":
            tokens.append(_ANY)
        elif char == "[":
            token, index = _class(glob, index)
            tokens.append(token)
            continue
        else:
            tokens.append(char)
        index += 1
    return tuple(tokens)


def _class(glob: str, start: int) -> tuple[_Class, int]:
    index = start + 1
    negated = index < len(glob) and glob[index] in "!^"
    if negated:
        index += 1
    ranges: list[tuple[str, str]] = []
    first = True
    while index < len(glob) and (glob[index] != "]" or first):
        low = glob[index]
        if low == "\\" and index + 1 < len(glob):
            index += 1
            low = glob[index]
        if index + 2 < len(glob) and glob[index + 1] == "-" and glob[index + 2] != "]":
            ranges.append((low, glob[index + 2]))
            index += 3
        else:
            ranges.append((low, low))
            index += 1
        first = False
    if index >= len(glob):
        raise ValueError("unterminated class")
    return _Class(tuple(ranges), negated), index + 1
