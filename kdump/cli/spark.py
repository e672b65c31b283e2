"""``kdump spark``: verification, export and recovery plans of whole log.dirs on Spark.

pyspark is imported only inside the commands, so ``kdump --help`` stays fast and a machine without
the extra gets one line saying what to install.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from kdump.cli.boundary import KdumpGroup
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import DIR_OR_URI, json_option, option_stack
from kdump.cli.recover import exit_status, report
from kdump.cli.replicas import replicas_options_stack
from kdump.errors import InputError, KdumpError, UsageError
from kdump.log.segment import SPLIT_BYTES
from kdump.spark.driver_jvm import local_driver_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kdump.render.verify_text import VerifyCounts
    from kdump.spark.jobs import VerifyResult

MISSING = "PySpark is not installed: pip install 'kdump[spark]'"
QUIET_LOG4J = "log4j2-quiet.properties"   # in kdump/spark/
_DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# Start-up lines the JVM writes to stderr itself, not through log4j, so only a filter on its stderr drops
# them: the JVM's (jdk.internal.module.ModuleBootstrap) for the --add-modules=jdk.incubator.vector that
# Spark's launcher adds (launcher/JavaModuleOptions, Spark 4.x), and Spark's for a PySpark driver
# (core/src/main/scala/org/apache/spark/internal/Logging.scala).
JVM_NOISE = ("WARNING: Using incubator modules:", 'Setting default log level to "',
             "To adjust logging level use sc.setLogLevel(")


@dataclass(frozen=True)
class SessionSettings:
    """What ``spark-submit`` would be told: the master, ``--conf`` pairs, packages, files to ship."""

    master: str = "local[*]"
    conf: tuple[tuple[str, str], ...] = ()
    packages: tuple[str, ...] = ()
    py_files: tuple[str, ...] = ()
    archives: tuple[str, ...] = ()
    verbose: bool = False

    def config(self, *, rows_in_jvm: bool = True) -> dict[str, str]:
        """The Spark configuration: spark-submit's ``--packages``/``--py-files``/``--archives`` are these keys.

        Unless ``verbose``, the driver's log4j reads ``log4j2-quiet.properties`` (FATAL only) from its
        start, so none of Spark's start-up warnings reach the terminal. A local driver gets the JVM
        options of ``kdump.spark.driver_jvm`` for its work (``rows_in_jvm``: whether rows cross into
        the JVM). ``--conf spark.driver.extraJavaOptions=...`` is kept, after them.
        """
        config = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC"}
        for key, values in (("spark.jars.packages", self.packages), ("spark.submit.pyFiles", self.py_files),
                            ("spark.archives", self.archives)):
            if values:
                config[key] = ",".join(values)
        config.update(self.conf)
        theirs = config.get(_DRIVER_JAVA_OPTIONS, "")
        given = f"{config.get('spark.driver.defaultJavaOptions', '')} {theirs}"
        ours = local_driver_options(self.master, given, os.environ, rows_in_jvm=rows_in_jvm)
        quiet = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "spark", QUIET_LOG4J)
        if not self.verbose and os.path.isfile(quiet):   # not a file when kdump runs from a zip
            ours.insert(0, f"-Dlog4j2.configurationFile=file:{os.path.normpath(quiet)}")
        if ours:
            config[_DRIVER_JAVA_OPTIONS] = " ".join([*ours, theirs] if theirs else ours)
        return config


def _conf_pairs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{text!r} is not KEY=VALUE", ctx=ctx, param=param)
        pairs.append((key.strip(), value))
    return tuple(pairs)


def _comma_lists(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(item.strip() for text in values for item in text.split(",") if item.strip())


def session_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--master``, ``--conf``, ``--packages``, ``--py-files``, ``--archives``, folded into ``settings``."""
    options = option_stack(
        click.option("--master", default="local[*]", show_default=True,
                     help="Spark master URL (local[N], spark://..., yarn, k8s://...)."),
        click.option("--conf", "conf", multiple=True, callback=_conf_pairs, metavar="KEY=VALUE",
                     help="A Spark configuration property, as spark-submit --conf (repeatable)."),
        click.option("--packages", multiple=True, callback=_comma_lists, metavar="COORDS",
                     help="Maven coordinates of jars for the driver and executors, e.g. "
                          "io.delta:delta-spark_2.13:4.0.0 (comma-separated or repeated)."),
        click.option("--py-files", "py_files", multiple=True, callback=_comma_lists, metavar="FILES",
                     help=".zip/.egg/.py files to put on the executors' Python path (e.g. a zip of kdump)."),
        click.option("--archives", multiple=True, callback=_comma_lists, metavar="ARCHIVES",
                     help="Archives unpacked in each executor's directory, e.g. env.tar.gz#environment."),
        click.option("--verbose", is_flag=True,
                     help="Show Spark's and the JVM's own log lines (start-up warnings, task failures)."),
    )

    @functools.wraps(command)
    def with_settings(*args: Any, master: str, conf: tuple[tuple[str, str], ...], packages: tuple[str, ...],
                      py_files: tuple[str, ...], archives: tuple[str, ...], verbose: bool, **kwargs: Any) -> Any:
        settings = SessionSettings(master, conf, packages, py_files, archives, verbose)
        return command(*args, settings=settings, **kwargs)

    return options(with_settings)


@contextmanager
def spark_session(settings: SessionSettings, app: str, *, rows_in_jvm: bool = False) -> Iterator[SparkSession]:
    """A SparkSession for one command; one that was already running (tests, notebooks) is reused.

    ``rows_in_jvm``: the command hands rows to Spark (a DataFrame written by Spark's writer), so a
    local driver keeps its optimizing compiler (``kdump.spark.driver_jvm``).

    Failures Spark reports in its own words (a Py4J trace, a Python worker's traceback) that have a
    known cause become one ``Error:`` line: executors that cannot import kdump, a writer format whose
    package is not on the classpath.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(MISSING) from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)   # workers need kdump's interpreter
    existing = SparkSession.getActiveSession()
    if existing is None:
        builder = SparkSession.builder.master(settings.master).appName(app)
        config = settings.config(rows_in_jvm=rows_in_jvm)
        for key, value in config.items():
            builder = builder.config(key, value)
        with spark_failures(config), _jvm_stderr_filtered(not settings.verbose) as teardown:
            spark = builder.getOrCreate()
        if not settings.verbose:
            # Task failures are logged at ERROR with the worker's whole traceback; kdump reports them itself.
            spark.sparkContext.setLogLevel("FATAL")
    else:
        spark = existing
    try:
        with spark_failures(dict(spark.sparkContext.getConf().getAll())):
            yield spark
    finally:
        if existing is None:
            teardown.set()   # what Spark and its workers print while they stop is not the command's
            spark.stop()


@contextmanager
def spark_failures(conf: dict[str, str]) -> Iterator[None]:
    """Turn Spark failures with a known cause (``kdump.spark.hints``) into a ``UsageError`` (one line, exit 2)."""
    from kdump.spark.hints import hint

    try:
        yield
    except Exception as err:
        if isinstance(err, KdumpError):
            raise
        why = hint(str(err), conf, os.environ)
        if why is not None:
            raise UsageError(why) from None
        raise


@contextmanager
def _jvm_stderr_filtered(enabled: bool) -> Iterator[threading.Event]:
    """While PySpark starts its JVM, give the JVM a pipe for stderr that a thread copies to ours,
    without the lines in ``JVM_NOISE`` and without a Python worker's traceback for a socket the JVM closed
    first. The JVM (and the Python workers it forks) keep the pipe; this process gets its own stderr back
    as soon as the JVM has started. Once the event it yields is set (the session is stopping), nothing
    more is copied."""
    teardown = threading.Event()
    if not enabled:
        yield teardown
        return
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    copier = threading.Thread(target=_copy_without_noise, args=(read_end, os.dup(saved), teardown), daemon=True,
                              name="kdump-jvm-stderr")
    copier.start()
    try:
        yield teardown
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


# The last line of a Python worker's traceback when the JVM closed its socket first (a failed task's worker,
# or the whole session stopping): PySpark's daemon (python/pyspark/daemon.py, 4.0) reports it and goes on.
# EOFError: the JVM connected for a new worker and closed before sending the worker's secret (daemon.py's
# worker(), reading it with UTF8Deserializer; seen when a job failed as its next task was starting).
_CLOSED_SOCKET = (b"BrokenPipeError", b"ConnectionResetError", b"EOFError")


def _copy_without_noise(read_end: int, out: int, teardown: threading.Event) -> None:
    with os.fdopen(read_end, "rb") as lines, os.fdopen(out, "wb", buffering=0) as stderr:
        held: list[bytes] = []   # a traceback, until its last line says whether it is the daemon's closed socket
        for line in lines:
            if teardown.is_set():
                continue
            if held or line.startswith(b"Traceback (most recent call last):"):
                held.append(line)
                if len(held) == 1 or line[:1] in (b" ", b"\t"):
                    continue
                block, held = held, []
                if line.startswith(_CLOSED_SOCKET) and any(b"pyspark" in b and b"daemon.py" in b for b in block):
                    continue
                stderr.write(b"".join(block))
            elif not line.decode(errors="replace").startswith(JVM_NOISE):
                stderr.write(line)
        if held and not teardown.is_set():
            stderr.write(b"".join(held))


@click.group("spark", cls=KdumpGroup, error_exit=ExitCode.UNREADABLE)
def spark() -> None:
    """Verify or export Kafka log directories with Spark (needs: pip install 'kdump[spark]').

    \b
    kdump spark verify /var/lib/kafka/data --report problems.json
    kdump spark export /var/lib/kafka/data --to /tmp/records.parquet --partition-by topic
    """


@spark.command("verify")
@click.argument("paths", nargs=-1, required=True)
@session_options
@click.option("--deep", is_flag=True, help="Decode every record too, as kdump verify --deep.")
@click.option("--strict", is_flag=True, help="Kafka's --verify-index-only rule, as kdump verify --strict.")
@click.option("--errors-only", is_flag=True, help="Print errors only (notes are still counted).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the JSON report of every finding to this file ('-' for stdout, no table).")
@json_option
def verify_command(paths: tuple[str, ...], settings: SessionSettings, deep: bool, strict: bool, errors_only: bool,
                   report_path: str | None, json_output: bool) -> None:
    """kdump verify of every segment under PATHS, one Spark task per segment.

    PATHS are log.dirs, partition dirs or segment files, local or s3://, gs://, hdfs://. Prints a
    table per partition, then the findings and summary of `kdump verify` (the same rules, the same
    findings). Exit status: 0 clean, 1 problems, 2 unreadable input or nothing to check.
    """
    try:
        from kdump.spark.jobs import plan_targets, verify
        from kdump.verify.engine import ALL, Options
    except ImportError:
        raise UsageError(MISSING) from None
    targets = plan_targets(list(paths))     # before Spark starts: a wrong path fails at once
    if not any(targets.values()):
        raise InputError("no partition directories or segment files found: nothing was checked",
                         path=", ".join(paths))
    with spark_session(settings, "kdump spark verify") as session:
        result = verify(session, list(paths), Options(scope=ALL, strict=strict, deep=deep), targets=targets)
    report = dict(result.to_json(), paths=list(paths))
    if report_path == "-":
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(render_json_lines(result, errors_only=errors_only) if json_output
                   else render_summary(result, errors_only=errors_only))
        if report_path:
            with open(report_path, "w", encoding="utf-8") as f:
                json.dump(report, f, indent=2)
                f.write("\n")
    click.get_current_context().exit(result.exit_code())


def _counts(result: VerifyResult) -> VerifyCounts:
    from kdump.render.verify_text import VerifyCounts

    return VerifyCounts(result.tally, len(result.errors), sum(1 for f in result.findings if not f.is_error))


def render_json_lines(result: VerifyResult, *, errors_only: bool = False) -> str:
    """What ``kdump verify --json`` writes: one object per finding, then the summary object."""
    from kdump.render.verify_text import finding_json, summary_json, unreadable_json

    lines = [finding_json(f) for f in result.findings if f.is_error or not errors_only]
    lines.extend(unreadable_json(path, why) for path, why in result.failures)
    lines.append(summary_json(_counts(result), "verify"))
    return "\n".join(lines)


def render_summary(result: VerifyResult, *, errors_only: bool = False) -> str:
    """Fixed-width table (one line per partition, then the totals), the findings, kdump verify's summary."""
    from kdump.render.verify_text import summary_line, text_lines

    rows: dict[tuple[str, int], list[int]] = {}
    for s in result.rows:
        row = rows.setdefault((s.topic, s.partition), [0, 0, 0, 0, 0])
        for i, value in enumerate((1, s.batches, s.records, s.bytes, s.problems)):
            row[i] += value
    header = ("TOPIC", "PARTITION", "SEGMENTS", "BATCHES", "RECORDS", "BYTES", "PROBLEMS")
    lines = [(t, str(p), *map(str, v)) for (t, p), v in sorted(rows.items())]
    totals = [sum(v[i] for v in rows.values()) for i in range(5)]
    lines.append(("total", "", *map(str, totals)))
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    out = [" ".join(c.ljust(w) if i == 0 else c.rjust(w)
                    for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
           for r in [header, *lines]]
    for group in result.groups:
        out.extend(text_lines(group, errors_only=errors_only))
    out.extend(f"Error: {why}" for _, why in result.failures)
    out.append(summary_line(_counts(result), "verify"))
    return "\n".join(out)


@spark.command("export")
@click.argument("paths", nargs=-1, required=True)
@click.option("--to", "out", required=True, help="Output directory (local path or a URI Spark can write).")
@click.option("--format", "fmt", default="parquet", show_default=True, help="Spark output format.")
@click.option("--partition-by", "partition_by", multiple=True,
              help="Output partition column, e.g. topic (repeatable).")
@click.option("--level", type=click.Choice(["record", "batch"]), default="record", show_default=True)
@click.option("--mode", type=click.Choice(["errorifexists", "overwrite", "append", "ignore"]),
              default="errorifexists", show_default=True, help="What to do when OUT exists.")
@click.option("--split-bytes", default=f"{SPLIT_BYTES >> 20}m", show_default=True,
              help="Split segments larger than this.")
@click.option("--isolation", type=click.Choice(["read_uncommitted", "read_committed"]), default=None,
              help="read_committed: only what a read_committed consumer returns (no aborted transactions, no "
                   "control records). [default: read_uncommitted; read_committed with --cluster]")
@click.option("--cluster", is_flag=True, help="PATHS are every broker's log dirs: each partition's history once "
                                               "(as kdump export --cluster), with its manifest.")
@click.option("--include-lost", is_flag=True, help="With --cluster: also the records a truncation destroys.")
@click.option("--if-leader", "if_leader", type=int, default=None, metavar="BROKER",
              help="With --cluster: as if BROKER leads every partition after restart.")
@session_options
def export_command(paths: tuple[str, ...], out: str, fmt: str, partition_by: tuple[str, ...], level: str,
                   mode: str, split_bytes: str, isolation: str | None, cluster: bool, include_lost: bool,
                   if_leader: int | None, settings: SessionSettings) -> None:
    """Write the records (or batches) under PATHS to OUT as Parquet (or another Spark format).

    \b
    Parquet is written inside the tasks that decode the records (the files `kdump export` writes),
    staged and published all at once with a _SUCCESS file; other formats use Spark's own writer.
    --mode overwrite replaces only an earlier export's output (or an empty directory).
    """
    try:
        from kdump.arrow.discovery import require_segments
        from kdump.arrow.planning import parse_size
        from kdump.arrow.schema import arrow_schema
        from kdump.spark.jobs import export, writes_in_tasks
    except ImportError:
        raise UsageError(MISSING) from None
    try:
        parse_size(split_bytes)
    except ValueError as err:
        raise UsageError(str(err)) from None
    unknown = [c for c in partition_by if c not in arrow_schema(level).names]
    if unknown:
        raise UsageError(f"--partition-by {unknown[0]}: no such column at level={level}")
    if (include_lost or if_leader is not None) and not cluster:
        raise UsageError("--include-lost and --if-leader go with --cluster")
    if cluster and (level != "record" or fmt.lower() != "parquet"):
        raise UsageError("--cluster exports records as Parquet: --level record --format parquet")
    require_segments(list(paths))
    options: dict[str, Any] = {"splitBytes": split_bytes,
                               "isolation": isolation or ("read_committed" if cluster else "read_uncommitted")}
    if cluster:
        options.update({"cluster": "true", "includeLost": str(include_lost).lower()})
        if if_leader is not None:
            options["ifLeader"] = str(if_leader)
    with spark_session(settings, "kdump spark export",
                       rows_in_jvm=not writes_in_tasks(fmt, level, partition_by)) as session:
        from pyspark.errors import AnalysisException

        try:
            rows = export(session, list(paths), out, fmt=fmt, partition_by=partition_by, level=level,
                          mode=mode, options=options)
        except AnalysisException as err:       # OUT exists (mode errorifexists), unknown format, ...
            raise KdumpError(str(err).splitlines()[0]) from None
    click.echo(f"Wrote {rows} {level} rows to {out} ({fmt})")


@spark.command("recover")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@session_options
@json_option
def recover_command(paths: tuple[str, ...], settings: SessionSettings, json_output: bool) -> None:
    """What a broker will do to each log dir (or partition dir) in PATHS at its next start.

    \b
    The plans of `kdump recover PATHS`, computed in Spark tasks (one per partition dir); every
    executor must see PATHS at the same location. Exit status: 0 nothing would be lost, 1 data
    would be truncated or deleted, 2 unreadable input or a partition the broker would refuse.
    """
    try:
        from kdump.spark.recover import plan_log_dirs
    except ImportError:
        raise UsageError(MISSING) from None
    with spark_session(settings, "kdump spark recover") as session:
        results = plan_log_dirs(session, list(paths))
    report(results, json_output, paths)  # the output and exit status of kdump recover
    raise SystemExit(exit_status(results))


@spark.command("replicas")
@click.argument("paths", nargs=-1, required=True, type=DIR_OR_URI)
@replicas_options_stack
@session_options
@json_option
def replicas_command(paths: tuple[str, ...], topic: str | None, partition: int | None, if_leader: int | None,
                     index_interval_bytes: int | None, explain: bool, kafka_version: str, settings: SessionSettings,
                     json_output: bool) -> None:
    """`kdump replicas PATHS` with one Spark task per partition: the same output and exit status.

    \b
    Every executor must see PATHS at the same location (a shared mount, or s3://, gs://, hdfs:// URIs).
    Exit status as `kdump replicas`: 0 the replicas agree, 1 a segment could not be read to its end,
    3 they diverge or a follower would drop records the leader lacks, 2 usage error, PySpark not
    installed or nothing found.
    """
    from kdump.cli.replicas import print_reports, replicas_options

    options = replicas_options(topic, partition, if_leader, explain, kafka_version, index_interval_bytes)
    try:
        from kdump.spark.replicas import analyze_on_spark
    except ImportError:
        raise UsageError(MISSING) from None
    with spark_session(settings, "kdump spark replicas") as session:
        reports = analyze_on_spark(session, list(paths), options)
    raise SystemExit(print_reports(reports, json_output, paths))
