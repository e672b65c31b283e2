"""KRaft control record values (read at version 0; the control type comes from the record key).

Transcribed from apache/kafka clients/src/main/resources/common/message/*.json @ 1eb7644 (field facts only).
"""

from __future__ import annotations

from kdump.format.messages.schema import F, M, NULL  # noqa: F401

LEADER_CHANGE_MESSAGE = M('LeaderChangeMessage', 2, '0-1', '0+', (
    F('Version', 'int16', '0+'),
    F('LeaderId', 'int32', '0+'),
    F('Voters', '[]struct', '0+', struct='Voter', fields=(
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '1+'),
    )),
    F('GrantingVoters', '[]struct', '0+', struct='Voter', fields=(
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '1+'),
    )),
))

SNAPSHOT_HEADER_RECORD = M('SnapshotHeaderRecord', 3, '0', '0+', (
    F('Version', 'int16', '0+'),
    F('LastContainedLogTimestamp', 'int64', '0+'),
))

SNAPSHOT_FOOTER_RECORD = M('SnapshotFooterRecord', 4, '0', '0+', (
    F('Version', 'int16', '0+'),
))

KRAFT_VERSION_RECORD = M('KRaftVersionRecord', 5, '0', '0+', (
    F('Version', 'int16', '0+'),
    F('KRaftVersion', 'int16', '0+'),
))

VOTERS_RECORD = M('VotersRecord', 6, '0', '0+', (
    F('Version', 'int16', '0+'),
    F('Voters', '[]struct', '0+', struct='Voter', fields=(
        F('VoterId', 'int32', '0+'),
        F('VoterDirectoryId', 'uuid', '0+'),
        F('Endpoints', '[]struct', '0+', struct='Endpoint', fields=(
            F('Name', 'string', '0+'),
            F('Host', 'string', '0+'),
            F('Port', 'uint16', '0+'),
        )),
        F('KRaftVersionFeature', 'struct', '0+', struct='KRaftVersionFeature', fields=(
            F('MinSupportedVersion', 'int16', '0+'),
            F('MaxSupportedVersion', 'int16', '0+'),
        )),
    )),
))

