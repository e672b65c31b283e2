"""kdump on the __consumer_offsets and __share_group_state of real 4.x brokers that ran every kind of group
(fixtures/real-groups, made by tests/kafka/make_real_fixtures.py --groups).

No Java needed: what the groups did was recorded from the Java clients and the admin API when the fixtures
were made (driver-output.txt). Line-for-line equality with the real DumpLogSegments of every release is
test_real_dump.py's (corpus.real_group_cases); this checks that the fixtures hold what they are there for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_checks import _decode, _json_after

from kdump_testing import run_kdump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "real-groups"
RELEASE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
# Every __consumer_offsets record type a 4.3/4.4 broker writes for these groups: OffsetCommit (1),
# GroupMetadata (2), the KIP-848 consumer group (3, 5-8, 16 for the regex), the KIP-932 share group (10-15)
# and the KIP-1071 streams group (17, 19-23). 0 is read only, 4 no longer written from 4.1, 9 and 18 gone.
RECORD_TYPES = {1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23}


def _driver_lines(release_dir: Path, kind: str) -> list[list[str]]:
    lines = (release_dir / "driver-output.txt").read_text().splitlines()
    return [line.split(" ")[1:] for line in lines if line.startswith(kind + " ")]


def _records(release_dir: Path, partition: str, flag: str) -> list[tuple[dict, dict | None]]:
    """(key, payload) of every record, None for a tombstone's payload."""
    out = []
    for line in _decode(release_dir / "logs", partition, "*.log", flag).splitlines():
        if line.startswith("| offset:") and " key: " in line:
            payload = line.split(" payload: ", 1)[1]
            out.append((_json_after(line, "key"), None if payload == "<DELETE>" else _json_after(line, "payload")))
    return out


@pytest.fixture(params=RELEASE_DIRS, ids=[p.name for p in RELEASE_DIRS])
def release_dir(request: pytest.FixtureRequest) -> Path:
    return request.param


def test_fixtures_cover_4_3_and_4_4() -> None:
    assert {p.name for p in RELEASE_DIRS} >= {"4.3.0", "4.4.0"}


def test_every_kind_of_group_ran(release_dir: Path) -> None:
    types = {group: kind for group, kind, *_ in _driver_lines(release_dir, "group")}
    assert types == {"kdump-classic": "Classic", "kdump-consumer": "Consumer", "kdump-regex": "Consumer",
                     "kdump-mixed": "Consumer", "kdump-eos": "Consumer", "kdump-share": "Share",
                     "kdump-streams": "Streams"}


def test_consumer_offsets_hold_every_record_type(release_dir: Path) -> None:
    records = _records(release_dir, "__consumer_offsets-0", "--offsets-decoder")
    assert {int(key["type"]) for key, _ in records} >= RECORD_TYPES
    members = [value["data"] for key, value in records if key["type"] == "5" and value is not None]
    assert any(m["subscribedTopicRegex"] == "grp-regex-.*" for m in members)
    assert any(m.get("classicMemberMetadata") is None for m in members)   # consumer-protocol members
    assert any(m.get("classicMemberMetadata") for m in members)           # the classic member of kdump-mixed
    markers = _decode(release_dir / "logs", "__consumer_offsets-0", "*.log", "--offsets-decoder")
    assert "endTxnMarker: COMMIT" in markers and "endTxnMarker: ABORT" in markers


def test_the_committed_offsets_the_admin_api_listed_are_in_the_log(release_dir: Path) -> None:
    commits = {(key["data"]["group"], key["data"]["topic"], key["data"]["partition"],
                value["data"]["offset"], value["data"]["metadata"])
               for key, value in _records(release_dir, "__consumer_offsets-0", "--offsets-decoder")
               if key["type"] == "1" and value is not None}
    share_starts = {(key["data"]["groupId"], key["data"]["partition"]): value["data"]["startOffset"]
                    for key, value in _records(release_dir, "__share_group_state-0", "--share-group-state-decoder")
                    if value is not None}   # the last ShareSnapshot or ShareUpdate of each share-partition
    listed = _driver_lines(release_dir, "offset")
    assert listed
    for group, topic, partition, *rest in listed:
        if rest[0] == "start":
            assert share_starts[(group, int(partition))] == int(rest[1]), (group, topic, partition)
        else:
            metadata = " ".join(rest[4:])
            assert (group, topic, int(partition), int(rest[0]), metadata) in commits, (group, topic, partition)


# The line of the classic group's GroupMetadata (offset 2 of fixtures/real-groups/4.3.0) as the real tools
# printed it: GroupMetadata.allMemberMetadata walks a Scala mutable.HashMap keyed by member id, 2.12's in
# the 2.x tools and 2.13's in 3.x, so the two print the members in opposite orders here.
GROUP_LINE = ('| offset: 2 CreateTime: 1796532260176 {sizes} sequence: 0 headerKeys: [] '
              'key: group_metadata::group=kdump-classic payload: {{"protocolType":"consumer","protocol":"range",'
              '"generationId":2,"assignment":"{{{members}}}"}}')
STATIC, DYNAMIC = ("classic-static-d3621509-7a07-4696-9eb0-2251cd4aae61=[grp-a-0]",
                   "consumer-kdump-classic-1-2eccb9ea-3e55-41ed-a58a-474e70194c79=[grp-a-1]")


@pytest.mark.parametrize(("release", "line"), [
    ("2.4.1", GROUP_LINE.format(sizes="keysize: 17 valuesize: 447", members=f"{STATIC},{DYNAMIC}")),
    ("3.5.2", GROUP_LINE.format(sizes="keySize: 17 valueSize: 447", members=f"{DYNAMIC},{STATIC}")),
])
def test_legacy_group_text_lists_members_in_the_tools_hash_map_order(release: str, line: str) -> None:
    log = FIXTURES / "4.3.0" / "logs" / "__consumer_offsets-0" / "00000000000000000000.log"
    result = run_kdump("--kafka-version", release, "--files", str(log), "--offsets-decoder", "--offsets", "2..2")
    assert result.stdout.splitlines()[-1] == line
