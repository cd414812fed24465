"""A Redis session store, so HTTP replicas behind a load balancer serve the same reading sessions.

Keys (all under a prefix, `sparseread:` unless the URL says `?prefix=`):

```
{prefix}session:{key}   hash: v (version), fmt, meta, calls, ep:<id> per episode (see fields)
{prefix}sessions        sorted set: session hashes by last use (Redis's clock), least recently used evicted first
```

A replica reads a session when its version moved since it last saw it, and writes at the end of a
call only the fields the call changed, in one Lua script that first checks the version it read. When
another replica wrote in between, the script refuses; this replica merges its changes onto theirs
(`merge_fields`) and writes again. A session written in another format version (by a replica of another
release) is never merged or misread: it starts afresh, the log says why, and the next write replaces it
whole. Sessions expire `ttl` seconds after their last use (a week unless
the URL says `?ttl=`); past MAX_SESSIONS the least recently used go, and each session keeps at most
MAX_EPISODES episodes, as in memory. The eviction script touches keys it was not passed, which a
single Redis (or a primary with replicas) allows and Redis Cluster does not.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..commands.install import extra_hint
from ..errors import ConfigError, MissingDependency, SparsereadError
from ..protocol.session import MAX_SESSIONS, Session
from .fields import apply_fields, merge_fields, session_fields, unreadable

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

PREFIX = "sparseread:"
DEFAULT_TTL_SECONDS = 7 * 24 * 3600
#: Merges in a row before a commit gives up (each retry means another replica wrote meanwhile).
_ATTEMPTS = 16

# KEYS: session hash, LRU index. ARGV: expected version, ttl ms, max sessions, number of fields set,
# then name/value pairs, then names to delete. Returns the new version, or 0 when the version moved.
_COMMIT = """
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then return 0 end
local i = 5
for _ = 1, tonumber(ARGV[4]) do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  i = i + 1
end
local version = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - tonumber(ARGV[2]) * 1000))
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do redis.call('DEL', key) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
return version
"""

# KEYS: session hash, LRU index. ARGV: ttl ms. Marks the session used; returns its version (0: none).
_TOUCH = """
local version = redis.call('HGET', KEYS[1], 'v')
if not version then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], 'XX', tonumber(t[1]) * 1000000 + tonumber(t[2]), KEYS[1])
return tonumber(version)
"""


@dataclass(slots=True)
class _Synced:
    """A session as this replica holds it, with the version and fields it last read or wrote."""

    session: Session
    version: int = -1  # never read: the first `get` loads it
    base: dict[str, str] = field(default_factory=dict)


class RedisSessionStore:
    """Sessions in Redis, shared by every replica that names the same server, database and prefix."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = PREFIX,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        from redis import RedisError

        self._max = max_sessions
        self._lock = threading.Lock()
        self._redis = client
        self._failure = RedisError
        self._prefix = prefix
        self._ttl_ms = ttl_seconds * 1000
        self._index = f"{prefix}sessions"
        self._local: OrderedDict[str, _Synced] = OrderedDict()
        self._commit = client.register_script(_COMMIT)
        self._touch = client.register_script(_TOUCH)
        self.merges = 0  # commits that found another replica's write and merged onto it

    @classmethod
    def from_url(cls, url: str) -> RedisSessionStore:
        """`redis://[:password@]host:port/db[?ttl=SECONDS&prefix=NAME:]` (also `rediss://`, `unix://`)."""
        try:
            import redis
        except ImportError:
            raise MissingDependency(f"--store {_redacted(url)} needs the Redis client: {extra_hint('redis')}") from None
        server_url, prefix, ttl = _split_url(url)
        client = redis.Redis.from_url(server_url, decode_responses=True)
        try:
            client.ping()
        except redis.RedisError as exc:
            raise ConfigError(
                f"the session store {_redacted(url)} is unreachable ({exc}): start Redis or fix --store / "
                "SPARSEREAD_STORE"
            ) from exc
        return cls(client, prefix=prefix, ttl_seconds=ttl)

    def get(self, key: str) -> Session:
        with self._lock:
            synced = self._local.get(key)
            if synced is None:
                synced = self._local[key] = _Synced(Session(key=key))
                while len(self._local) > self._max:
                    self._local.popitem(last=False)
            self._local.move_to_end(key)
        with synced.session.lock, self._reachable():  # never refresh a session under a call still using it
            version = int(cast(int, self._touch(keys=[self._key(key), self._index], args=[self._ttl_ms])))
            if version != synced.version:
                self._load(synced)
        return synced.session

    @property
    def problem(self) -> str | None:
        """None: a Redis failure fails the call that met it with a typed error, never a quiet fallback."""
        return None

    def commit(self, session: Session) -> None:
        with self._lock:
            synced = self._local.get(session.key)
        if synced is None or synced.session is not session:
            synced = _Synced(session)  # evicted here meanwhile: merge onto whatever Redis holds
        with session.lock, self._reachable():
            for _ in range(_ATTEMPTS):
                fields = session_fields(session)
                changed = {name: value for name, value in fields.items() if synced.base.get(name) != value}
                removed = [name for name in synced.base if name not in fields]
                if not changed and not removed:
                    return
                args: list[str | int] = [synced.version, self._ttl_ms, self._max, len(changed)]
                for name, value in changed.items():
                    args += [name, value]
                args += removed
                version = int(cast(int, self._commit(keys=[self._key(session.key), self._index], args=args)))
                if version:
                    synced.version, synced.base = version, fields
                    return
                theirs, their_version = self._fetch(session.key)
                if unreadable(theirs) is None and unreadable(synced.base) is None:
                    apply_fields(session, merge_fields(synced.base, fields, theirs))
                    self.merges += 1
                else:  # another release (or a hand edit) wrote it meanwhile: this write replaces theirs whole
                    _dropped(theirs)
                synced.version, synced.base = their_version, theirs
        raise SparsereadError(
            f"this session kept changing on other replicas ({_ATTEMPTS} merges in a row): retry the call"
        )

    def drop(self, key: str) -> None:
        with self._lock:
            synced = self._local.pop(key, None)
        # After a call still running in it has committed (under the session's lock): never written back.
        with synced.session.lock if synced is not None else nullcontext(), self._reachable():
            self._redis.delete(self._key(key))
            self._redis.zrem(self._index, self._key(key))

    def keys(self) -> list[str]:
        start = len(self._key(""))
        with self._reachable():
            members = cast(list[str], self._redis.zrange(self._index, 0, -1))
        return [m[start:] for m in members]

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        try:
            yield
        except self._failure as exc:
            raise SparsereadError(
                f"the shared session store (Redis) failed: {exc}; retry the call, or ask the operator to check Redis"
            ) from exc

    def _key(self, key: str) -> str:
        return f"{self._prefix}session:{key}"

    def _fetch(self, key: str) -> tuple[dict[str, str], int]:
        fields = dict(cast(dict[str, str], self._redis.hgetall(self._key(key))))
        return fields, int(fields.pop("v", "0"))

    def _load(self, synced: _Synced) -> None:
        fields, version = self._fetch(synced.session.key)
        if unreadable(fields) is None:
            apply_fields(synced.session, fields)
        else:  # started afresh here; the next commit replaces the stored fields (`base`) with this format's
            _dropped(fields)
            apply_fields(synced.session, {})
        synced.version, synced.base = version, fields


def _dropped(fields: dict[str, str]) -> None:
    logger.warning("a stored session was dropped and starts afresh: %s", unreadable(fields))


def _split_url(url: str) -> tuple[str, str, int]:
    """(the URL redis-py understands, key prefix, ttl seconds): our options are removed from the query."""
    parts = urlsplit(url)
    ours = {"prefix": PREFIX, "ttl": str(DEFAULT_TTL_SECONDS)}
    rest = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in ours:
            ours[name] = value
        else:
            rest.append((name, value))
    try:
        ttl = int(ours["ttl"])
    except ValueError:
        ttl = 0
    if ttl <= 0:
        raise ConfigError(f"--store {_redacted(url)}: ttl={ours['ttl']!r} must be a positive number of seconds")
    return urlunsplit(parts._replace(query=urlencode(rest))), ours["prefix"], ttl


def _redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
