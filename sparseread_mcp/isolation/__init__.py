"""The process boundary: work on bytes someone else wrote runs in killable worker processes.

Above this package the server holds only parsed, bounded values and the caches built from them; below
it (`tasks`) the parsers, ignore-file matchers, diffs and hashes run in workers (`worker`), which a pool
(`pool`) starts, limits, shares fairly between sessions and kills at the call's deadline.
"""

from .pool import PoolStats, WorkerPool, kill_workers_now, prestart_workers, shared_pool, tenant

__all__ = ["PoolStats", "WorkerPool", "kill_workers_now", "prestart_workers", "shared_pool", "tenant"]
