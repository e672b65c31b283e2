"""``kdump gen OUTDIR``: write a sample log.dirs the way a broker would (kdump.gen.generator).

Options that can differ per topic take ``VALUE`` (every topic) or ``topic=VALUE,...`` (a bare
value in the list is the default for the topics not named).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import click

from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.progress import ProgressBar, wants_progress
from kdump.cli.time_options import TimeInput
from kdump.errors import Interrupted, UsageError
from kdump.format.batch import TimestampType
from kdump.format.codecs import Codec
from kdump.format.index import DEFAULT_MAX_INDEX_BYTES
from kdump.gen.cluster_generator import SCENARIOS, ClusterGenSpec, generate_cluster
from kdump.gen.generator import (
    DEFAULT_START_TIME,
    KEY_PATTERNS,
    VALUE_PATTERNS,
    GenSpec,
    TopicSpec,
    generate,
    topic_name_problem,
)
from kdump.log.atomic import parents_made
from kdump.log.interrupts import SignalInterrupt
from kdump.log.writer import LogConfig
from kdump.render.times import TIME_INPUT_HELP
from kdump.words import counted

T = TypeVar("T")

_CODECS = {"none": Codec.NONE, "gzip": Codec.GZIP, "snappy": Codec.SNAPPY, "lz4": Codec.LZ4, "zstd": Codec.ZSTD}
_TS_TYPES = {"create": TimestampType.CREATE_TIME, "createtime": TimestampType.CREATE_TIME,
             "log-append": TimestampType.LOG_APPEND_TIME, "logappendtime": TimestampType.LOG_APPEND_TIME}


def per_topic(text: str, topics: list[str], convert: Callable[[str], T], default: T, option: str) -> dict[str, T]:
    """``VALUE`` or ``topic=VALUE,...`` -> a value for every topic."""
    fallback = default
    named: dict[str, T] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.rpartition("=")
        try:
            converted = convert(value)
        except (ValueError, KeyError):
            raise UsageError(f"{option}: bad value {value!r}") from None
        if not sep:
            fallback = converted
        elif name not in topics:
            raise UsageError(f"{option}: {name!r} is not one of --topics ({','.join(topics)})")
        else:
            named[name] = converted
    return {t: named.get(t, fallback) for t in topics}


def topic_set(text: str | None, topics: list[str], option: str) -> set[str]:
    """An optional-value option: absent -> none, given bare -> all, ``a,b`` -> those."""
    if text is None:
        return set()
    if text == "*":
        return set(topics)
    chosen = {t.strip() for t in text.split(",") if t.strip()}
    unknown = chosen - set(topics)
    if unknown:
        raise UsageError(f"{option}: {', '.join(sorted(unknown))} not in --topics")
    return chosen


def size_range(text: str, option: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        low = int(lo)
        return low, int(hi) if hi else low
    except ValueError:
        raise UsageError(f"{option}: {text!r} is not N or LOW-HIGH") from None


@click.command("gen", cls=KdumpCommand, error_exit=ExitCode.FAILED)
@click.argument("outdir", type=click.Path(file_okay=True, dir_okay=True, writable=True))
@click.option("--topics", default="demo", show_default=True, help="Comma-separated topic names.")
@click.option("--partitions", default="2", show_default=True, metavar="N|topic=N,...", help="Partitions per topic.")
@click.option("--records", default=300, show_default=True, type=click.IntRange(0),
              help="Data records per partition (transaction markers come on top).")
@click.option("--key-pattern", type=click.Choice(KEY_PATTERNS), default="seq", show_default=True,
              help="seq: key-<offset>; random: ASCII; binary: random bytes; null: no keys; mixed.")
@click.option("--key-size", default="8-16", show_default=True, metavar="N|LOW-HIGH", help="Key bytes (random/binary).")
@click.option("--value-pattern", type=click.Choice(VALUE_PATTERNS), default="text", show_default=True,
              help="text: UTF-8 words (non-ASCII too); json; binary; seq: value-<offset>; mixed.")
@click.option("--value-size", default="20-120", show_default=True, metavar="N|LOW-HIGH", help="Value bytes.")
@click.option("--null-key-ratio", default=0.0, type=click.FloatRange(0, 1), show_default=True,
              help="Share of records with a null key.")
@click.option("--tombstone-ratio", default=0.0, type=click.FloatRange(0, 1), show_default=True,
              help="Share of records with a null value.")
@click.option("--headers", "max_headers", default=0, type=click.IntRange(0), show_default=True,
              help="Up to this many headers per record (magic 2).")
@click.option("--records-per-batch", default=10, type=click.IntRange(1), show_default=True,
              help="Records per batch (per produce request for uncompressed magic 0/1).")
@click.option("--batch-bytes", default=None, type=click.IntRange(1),
              help="Also close a batch once its keys and values reach this many bytes.")
@click.option("--compression", default="none", show_default=True, metavar="CODEC|topic=CODEC,...",
              help="none, gzip, snappy, lz4 or zstd (zstd needs magic 2).")
@click.option("--magic", default="2", show_default=True, metavar="M|topic=M,...", help="Message format: 0, 1 or 2.")
@click.option("--timestamp-type", default="create", show_default=True, metavar="T|topic=T,...",
              help="create (CreateTime) or log-append (LogAppendTime).")
@click.option("--start-time", type=TimeInput(), default=DEFAULT_START_TIME, show_default=True,
              help=f"First record's timestamp: {TIME_INPUT_HELP}.")
@click.option("--time-step", default=1000, type=int, show_default=True, help="Milliseconds between records.")
@click.option("--time-jitter", default=0, type=click.IntRange(0), show_default=True,
              help="Random +/- milliseconds per record (out-of-order timestamps).")
@click.option("--idempotent", is_flag=False, flag_value="*", default=None, metavar="[TOPICS]",
              help="Idempotent producer (producer id, epoch, sequences) for all or the named topics.")
@click.option("--transactional", is_flag=False, flag_value="*", default=None, metavar="[TOPICS]",
              help="Transactional producer with COMMIT/ABORT markers for all or the named topics.")
@click.option("--abort-ratio", default=0.3, type=click.FloatRange(0, 1), show_default=True,
              help="Share of transactions that are aborted.")
@click.option("--txn-batches", default=3, type=click.IntRange(1), show_default=True,
              help="Data batches per transaction.")
@click.option("--empty-txn-ratio", default=0.0, type=click.FloatRange(0, 1), show_default=True,
              help="Share of transactions followed by one that ends before sending data here (a marker alone).")
@click.option("--epoch-bump-ratio", default=0.0, type=click.FloatRange(0, 1), show_default=True,
              help="Share of aborts after which the producer gets a new epoch (sequences restart at 0).")
@click.option("--compacted-ratio", default=0.0, type=click.FloatRange(0, 1), show_default=True,
              help="Share of magic 2 data records removed as the log cleaner does (offset gaps in batches).")
@click.option("--group-keys", default=1000, type=click.IntRange(1), show_default=True,
              help="A topic named __consumer_offsets gets OffsetCommit records cycling over this many "
                   "(group, topic, partition) keys of the other topics (see `kdump groups`).")
@click.option("--segment-bytes", default=16384, type=click.IntRange(14), show_default=True,
              help="segment.bytes: roll before a batch would take a segment past this.")
@click.option("--segment-ms", default=7 * 24 * 3600 * 1000, type=click.IntRange(1), show_default=True,
              help="segment.ms: roll when record time moved on this far since the segment's first batch.")
@click.option("--index-interval-bytes", default=4096, type=click.IntRange(0), show_default=True,
              help="index.interval.bytes: bytes between offset/time index entries.")
@click.option("--max-index-bytes", default=DEFAULT_MAX_INDEX_BYTES, type=click.IntRange(24), show_default=True,
              help="segment.index.bytes: index size limit, and the preallocated size with --preallocate.")
@click.option("--index-rule", type=click.Choice(["per-batch", "per-append"]), default="per-batch",
              show_default=True, help="Kafka >= 4.1 indexes per batch; <= 4.0 leaders per produce request.")
@click.option("--preallocate", is_flag=False, flag_value="*", default=None, metavar="[TOPICS]",
              help="Leave the active segments of all or the named topics as a live broker has them: "
                   "indexes zero-padded to --max-index-bytes, no final time-index entry.")
@click.option("--log-preallocate", is_flag=True,
              help="With --preallocate: the active .log is zero-padded to --segment-bytes too (preallocate=true).")
@click.option("--seed", default=0, type=int, show_default=True, help="Same seed, same bytes.")
@click.option("--brokers", default=None, type=click.IntRange(2), metavar="N",
              help="Write OUTDIR/broker-1 ... broker-N: N brokers' log dirs for the first of --topics, "
                   "one replica per broker, as --replica-scenario says (see `kdump replicas`).")
@click.option("--replica-scenario", type=click.Choice(SCENARIOS), default="agree", show_default=True,
              help="With --brokers: agree, lagging, unclean (an unclean election), multi-round (KIP-279 "
                   "truncation), retention (a follower behind the leader's log start), compacted.")
@click.option("--force", is_flag=True,
              help="Replace OUTDIR if it is an earlier kdump gen output (once the new one is complete).")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks for errors (debugging).")
def gen(outdir: str, topics: str, partitions: str, compression: str, magic: str, timestamp_type: str,
        idempotent: str | None, transactional: str | None, preallocate: str | None, key_size: str,
        value_size: str, start_time: int, segment_bytes: int, segment_ms: int, index_interval_bytes: int,
        max_index_bytes: int, index_rule: str, log_preallocate: bool, force: bool, traceback: bool,
        brokers: int | None, replica_scenario: str, **rest: object) -> None:
    """Write a sample Kafka log.dirs at OUTDIR: segments, indexes, snapshots, checkpoints.

    \b
    kdump gen demo-logs
    kdump gen logs --topics a,b --compression a=gzip,b=zstd --transactional b --abort-ratio 0.5

    OUTDIR's missing parents are made as mkdir -p makes them; an existing OUTDIR is used when empty.

    Exit codes: 0 written; 1 could not write; 2 bad arguments or OUTDIR holds files (see --force);
    128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM). A failed or interrupted run
    leaves nothing behind, not even the parents it made; a later run removes what a killed one
    (SIGKILL) left in OUTDIR's parent.
    """
    try:
        key_range, value_range = size_range(key_size, "--key-size"), size_range(value_size, "--value-size")
        log = LogConfig(segment_bytes, segment_ms, index_interval_bytes, max_index_bytes, log_preallocate,
                        index_rule == "per-append")
        names = [t.strip() for t in topics.split(",") if t.strip()]
        if not names:
            raise UsageError("--topics: give at least one topic name")
        for name in names:
            problem = topic_name_problem(name)
            if problem is not None:
                raise UsageError(f"Topic name is invalid: {problem}")
        counts = per_topic(partitions, names, int, 1, "--partitions")
        if brokers is not None:
            _gen_cluster(outdir, ClusterGenSpec(names[0], brokers, counts[names[0]], replica_scenario,
                                                int(rest["records"]),  # type: ignore[call-overload]
                                                int(rest["records_per_batch"]),  # type: ignore[call-overload]
                                                value_range[1], seed=int(rest["seed"]),  # type: ignore[call-overload]
                                                log=log), force)
            return
        codecs = per_topic(compression, names, lambda v: _CODECS[v.lower()], Codec.NONE, "--compression")
        magics = per_topic(magic, names, int, 2, "--magic")
        ts_types = per_topic(timestamp_type, names, lambda v: _TS_TYPES[v.lower()], TimestampType.CREATE_TIME,
                             "--timestamp-type")
        txn = topic_set(transactional, names, "--transactional")
        idem = topic_set(idempotent, names, "--idempotent")
        live = topic_set(preallocate, names, "--preallocate")
        specs = tuple(TopicSpec(n, counts[n], codecs[n], magics[n], ts_types[n],
                                "transactional" if n in txn else "idempotent" if n in idem else "plain", n in live)
                      for n in names)
        spec = GenSpec(topics=specs, key_size=key_range, value_size=value_range, start_time=start_time, log=log,
                       **rest)  # type: ignore[arg-type]
        with parents_made(outdir), ProgressBar(spec.total_records, "records", show=wants_progress(False),
                                                unit="records") as bar:
            result = generate(outdir, spec, force=force or _empty_directory(outdir), progress=bar.advance)
    except KeyboardInterrupt as err:
        if isinstance(err, SignalInterrupt):
            raise  # the error boundary words it with the signal's name and exit code
        raise Interrupted("interrupted; nothing was written") from None
    click.echo(f"wrote {counted(result.records, 'record')} in {counted(result.segments, 'segment')} of "
               f"{counted(result.partitions, 'partition')} to {result.outdir}")


def _gen_cluster(outdir: str, spec: ClusterGenSpec, force: bool) -> None:
    with parents_made(outdir):
        result = generate_cluster(outdir, spec, force=force or _empty_directory(outdir))
    click.echo(f"wrote {result.brokers} brokers' log dirs ({spec.scenario}) of "
               f"{counted(result.partitions, 'partition')}, {result.bytes_written} bytes, to {result.outdir}")


def _empty_directory(path: str) -> bool:
    """An existing empty OUTDIR holds nobody's files: used as ``mkdir -p`` would, without --force (it is
    replaced once the output is complete, and refused after all if files appeared in it meanwhile)."""
    try:
        return not os.path.islink(path) and os.path.isdir(path) and not os.listdir(path)
    except OSError:
        return False
