"""Which replica leads a partition once its brokers are back: the metadata's leader, or the one kdump
predicts the controller elects (a prediction, always named apart from what the metadata records).

With a copy of the KRaft metadata (kdump.broker.cluster_metadata): the recorded leader keeps leading
unless it comes back from an unclean shutdown: on a cluster with KIP-966's ELR the controller first
removes a broker without ``.kafka_cleanshutdown`` from the ISR and ELR
(ReplicationControlManager.handleBrokerUncleanShutdown) and so elects another; without ELR, a leader that
was the ISR's last member is fenced and elected again, two leader epochs on. A partition with no leader
gets the first replica in assignment order that is in the ISR or, with an empty ISR, in the ELR
(PartitionChangeBuilder.electAnyLeader); failing both, the single last known ELR member when the
controller is configured to elect it. Kafka 4.3.0 metadata/src/main/java/org/apache/kafka/controller/.
A new leader leads at the recorded leader epoch + 1 (PartitionChangeBuilder bumps it).

Without metadata (ZooKeeper-era copies, or broker dirs alone) kdump picks the replica with the highest
latest epoch after loading and then the longest loaded log (the one an election among all replicas is
likeliest to pick, and the one that loses least); ``--if-leader BROKER`` picks any broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kdump.broker.cluster_metadata import NO_LEADER, PartitionRegistration
from kdump.broker.replica_discovery import Replica

METADATA = "metadata"                                 # the recorded leader keeps leading: nothing predicted
METADATA_UNCLEAN_SHUTDOWN = "metadata-unclean-shutdown"
ISR = "isr"
ELR = "elr"
EPOCHS_AND_LENGTH = "epochs-and-length"
IF_LEADER = "if-leader"
NONE = "none"                                         # no metadata and no live replica


@dataclass(frozen=True, slots=True)
class Election:
    """The leader at restart: ``source`` says whether the metadata records it (``metadata``) or kdump predicts
    it, and how; ``leader`` None when no replica can be elected."""

    leader: int | None
    leader_epoch: int | None
    reason: str
    source: str

    @property
    def predicted(self) -> bool:
        return self.source != METADATA


def predict_leader(part: PartitionRegistration, unclean_shutdown: set[int]) -> Election:
    """Who leads once the brokers are back, from the metadata's registration (see the module docstring)."""
    if part.elr is None and part.leader in unclean_shutdown and part.isr == [part.leader]:
        # Without ELR the controller keeps an uncleanly stopped last ISR member in the ISR, but fences it
        # (ReplicationControlManager.handleBrokerFenced: leader -1, a new leader epoch) and elects it again
        # once it registers and is unfenced (handleBrokerUnfenced): the same leader, two epochs on.
        return Election(part.leader, part.leader_epoch + 2,
                        f"the leader, broker {part.leader}, the last member of the ISR, shut down uncleanly: the "
                        f"controller fences it and elects it again when it returns", METADATA_UNCLEAN_SHUTDOWN)
    # Without ELR in the metadata version, handleBrokerUncleanShutdown does nothing.
    unclean_shutdown = set() if part.elr is None else unclean_shutdown
    if part.leader != NO_LEADER and part.leader not in unclean_shutdown:
        return Election(part.leader, part.leader_epoch, f"the metadata names broker {part.leader} leader", METADATA)
    epoch = part.leader_epoch + 1
    isr = [b for b in part.isr if b not in unclean_shutdown]
    elr = [b for b in (part.elr or []) if b not in unclean_shutdown]
    dropped = sorted((set(part.isr) | set(part.elr or [])) & unclean_shutdown)
    note = (f"; broker(s) {', '.join(map(str, dropped))} shut down uncleanly and leave the ISR/ELR when they "
            f"register") if dropped else ""
    recorded_unclean = part.leader != NO_LEADER
    if recorded_unclean:
        note += f"; the leader, broker {part.leader}, among them"

    def elected(broker: int | None, reason: str, source: str) -> Election:
        return Election(broker, epoch if broker is not None else None, reason,
                        METADATA_UNCLEAN_SHUTDOWN if recorded_unclean else source)

    for broker in part.replicas:
        if broker in isr:
            return elected(broker, f"the first replica in the ISR {part.isr} with no leader{note}", ISR)
    if not isr:
        for broker in part.replicas:
            if broker in elr:
                return elected(broker, f"the ISR is empty: the first replica in the ELR {part.elr}{note}", ELR)
    if part.last_known_elr and len(part.last_known_elr) == 1:
        return elected(part.last_known_elr[0], f"only if the controller elects the last known leader "
                                               f"{part.last_known_elr[0]} (ISR and ELR are empty){note}", ELR)
    return elected(None, f"no replica is eligible (ISR {part.isr}, ELR {part.elr}): the partition stays "
                         f"offline until an unclean election{note}", ISR)


def elect(part: PartitionRegistration | None, live: Sequence[Replica], unclean_shutdown: set[int],
          if_leader: int | None) -> tuple[Election, Replica | None]:
    """The leader at restart of a partition whose live replicas (loaded) are ``live``, and its replica among
    them (None when it has none there)."""
    by_broker = {r.broker: r for r in live if r.broker is not None}
    if if_leader is not None:
        epoch = _next_disk_epoch(live) if part is None else \
            part.leader_epoch if part.leader == if_leader else part.leader_epoch + 1
        return Election(if_leader, epoch, f"--if-leader {if_leader}", IF_LEADER), by_broker.get(if_leader)
    if part is not None:
        election = predict_leader(part, unclean_shutdown)
        return election, by_broker.get(election.leader) if election.leader is not None else None
    if not live:
        return Election(None, None, "no cluster metadata and no live replica", NONE), None
    best = max(live, key=lambda r: (_latest(r), r.log_end_offset))
    return Election(best.broker, _next_disk_epoch(live),
                    f"no cluster metadata: broker {best.label} has the highest latest epoch "
                    f"({best.cache.latest_epoch}) and then the longest log ({best.log_end_offset}) once loaded; "
                    f"--if-leader names another",
                    EPOCHS_AND_LENGTH), best


def _latest(replica: Replica) -> int:
    latest = replica.cache.latest_epoch
    return -1 if latest is None else latest


def _next_disk_epoch(live: Sequence[Replica]) -> int | None:
    """Without metadata: a newly elected leader leads at one above every epoch the replicas hold."""
    highest = max((_latest(r) for r in live), default=-1)
    return highest + 1 if highest >= 0 else None


__all__ = ["ELR", "EPOCHS_AND_LENGTH", "IF_LEADER", "ISR", "METADATA", "METADATA_UNCLEAN_SHUTDOWN", "Election",
           "elect", "predict_leader"]
