"""A tiered partition read whole: its remote segments, then its local ones, each offset once.

``find_segments`` lists remote segments (``kdump.log.remote_layout`` names) like local ones; ``merge_tiers``
then puts a partition's remote segments before its local segments and drops the local segments the remote
tier already holds. RemoteLogManager copies whole segments (Kafka 4.3.0, RemoteLogManager.copyLogSegment: the
remote segment starts at the local segment's base offset and ends at the next one's), so a local segment with a
remote copy has a remote segment of the same start offset; local retention deletes it later. The remote and the
local segments share one history key, so read_committed sees every aborted transaction of both tiers.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from itertools import groupby
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdump.arrow.discovery import Segment


def merge_tiers(segments: list[Segment]) -> list[Segment]:
    """``segments`` (sorted by topic, partition, directory) with each tiered partition's history in order."""
    out: list[Segment] = []
    for _, group in groupby(segments, key=lambda s: (s.topic, s.partition)):
        items = list(group)
        remote = [s for s in items if s.remote]
        local_dirs = {posixpath.dirname(s.log) for s in items if not s.remote}
        if not remote or len(local_dirs) != 1:
            out.extend(remote + [s for s in items if not s.remote])   # replicas of several brokers: as listed
            continue
        history = local_dirs.pop()
        starts = {s.base_offset for s in remote}
        local = [s for s in items if not s.remote and s.base_offset not in starts]
        remote.sort(key=lambda s: s.base_offset)
        following = [s.base_offset for s in remote[1:]] + [local[0].base_offset if local else None]
        out.extend(replace(s, next_base_offset=nxt, history=history) for s, nxt in zip(remote, following, strict=True))
        out.extend(local)
    return out
