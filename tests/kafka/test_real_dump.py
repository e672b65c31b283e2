"""kdump against the real DumpLogSegments of one release per dialect: stdout, stderr and exit code.

Every case of corpus.py runs through Kafka's own tool (one JVM per release, DumpRunner.java) and
through ``kdump ... --kafka-version <release>``; the three must be equal, except for the deliberate
differences listed in docs/real-kafka.md, each of which is asserted exactly here (DELIBERATE).
Without java/mvn the module skips; with CI=true in the environment it fails instead.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence

import corpus
import pytest
import real_kafka
from click.testing import CliRunner
from real_kafka import Outcome

DOC = corpus.REPO / "docs" / "real-kafka.md"
# Outside the repository, built at collection, at the same path in every session (the real tool's
# outcomes are cached by path and content) and removed at exit: PRISTINE holds the inputs, WORK the copy
# both tools read (DumpRunner copies PRISTINE over WORK before every Kafka run).
_CORPUS = real_kafka.corpus_dir("dump")
PRISTINE = _CORPUS / "pristine"
WORK = _CORPUS / "work"


def _all_cases() -> list[corpus.Case]:
    for root in (PRISTINE, WORK):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(corpus.FIXTURES, root / "fixtures")
        corpus.generated_cases(root / "generated")
        corpus.odd_file_cases(root / "generated")
        corpus.internal_topic_cases(root / "generated")
        corpus.large_value_cases(root / "generated")
    return (corpus.fixture_cases(WORK / "fixtures") + corpus.real_group_cases(WORK / "fixtures")
            + corpus.generated_cases(WORK / "generated")
            + corpus.odd_file_cases(WORK / "generated") + corpus.internal_topic_cases(WORK / "generated")
            + corpus.large_value_cases(WORK / "generated") + corpus.usage_cases())


CASES = _all_cases()
_REAL: dict[str, tuple[dict[str, int], Sequence[Outcome]]] = {}


def real_outcome(release: str, case: corpus.Case) -> Outcome:
    if release not in _REAL:
        _REAL.clear()  # tests run release by release: hold one release's outputs (~100 MB), not all
        cases = [c for c in CASES if c.applies_to(release)]
        warmup = list(cases[0].args)
        outcomes = real_kafka.run_dump_log_segments(release, [list(c.args) for c in cases], warmup,
                                                    restore=(PRISTINE, WORK), root=WORK)
        assert len(outcomes) == len(cases)
        _REAL[release] = ({c.name: i for i, c in enumerate(cases)}, outcomes)
    index, outcomes = _REAL[release]
    return outcomes[index[case.name]]   # decoded now (real_kafka.CachedOutcomes)


def kdump_outcome(release: str, case: corpus.Case) -> Outcome:
    from kdump.cli.main import cli

    # --kafka-version first: an option left without its value at the end must stay so.
    result = CliRunner().invoke(cli, ["--kafka-version", release, *case.args], catch_exceptions=False)
    return Outcome(result.stdout_bytes.decode("utf-8"), result.stderr_bytes.decode("utf-8"), result.exit_code)


# --- the deliberate differences: each takes Kafka's and kdump's outcome and returns True when the
# pair is exactly that difference (anything else is a failure). Names match docs/real-kafka.md. ---

_JAVA_CRASH = re.compile(r'\AException in thread "main" (\S+?)(?::|\n)')
_EXTRA_FILE = re.compile(r"(checkpoint|partition\.metadata|meta\.properties|quorum-state)$")


def _dumping(stdout: str) -> str | None:
    files = re.findall(r"^Dumping (.*)$", stdout, flags=re.M)
    return files[-1] if files else None


def crash_becomes_error_line(kafka: Outcome, kdump: Outcome) -> bool:
    """Kafka dies with a Java stack trace; kdump prints what Kafka printed up to there, then one
    ``Error: <file>: ...`` line for that file, carries on with the next files, and exits 1."""
    if not _JAVA_CRASH.match(kafka.stderr) or kafka.exit_code != 1 or kdump.exit_code != 1:
        return False
    if not kdump.stdout.startswith(kafka.stdout):
        return False
    failing = _dumping(kafka.stdout)
    errors = [line for line in kdump.stderr.splitlines() if line.startswith("Error: ")]
    if failing is None:  # Kafka died before its first file (2.2 loads the decoders up front)
        return bool(errors) and kafka.stdout == "" and kdump.stdout == "" and kdump.stderr == errors[0] + "\n"
    return bool(errors) and errors[0].startswith(f"Error: {failing}: ")


def extra_file_is_dumped(kafka: Outcome, kdump: Outcome) -> bool:
    """Checkpoint files, partition.metadata, meta.properties: Kafka ignores them (or, for a name
    without a dot before 4.3, crashes); kdump prints their contents and exits 0."""
    dumped = _dumping(kdump.stdout)
    if dumped is None or not _EXTRA_FILE.search(dumped) or kdump.exit_code != 0 or kdump.stderr:
        return False
    ignored = kafka.stderr == f"Ignoring unknown file {dumped}\n" and kafka.exit_code == 0
    crashed = bool(_JAVA_CRASH.match(kafka.stderr)) and "StringIndexOutOfBoundsException" in kafka.stderr
    return (ignored or crashed) and kdump.stdout.startswith(kafka.stdout) and len(kdump.stdout) > len(kafka.stdout)


def crash_becomes_note(kafka: Outcome, kdump: Outcome) -> bool:
    """An index entry Kafka cannot follow (a position inside or past the log, a preallocated empty
    active segment, a missing .log): Kafka dies; kdump prints a ``Note: <file>: ...`` line naming the
    file Kafka died on, dumps every entry, and exits 0."""
    if not _JAVA_CRASH.match(kafka.stderr) or kafka.exit_code != 1 or kdump.exit_code != 0:
        return False
    failing = _dumping(kafka.stdout)
    return (failing is not None and kdump.stdout.startswith(kafka.stdout)
            and any(line.startswith(f"Note: {failing}: ") for line in kdump.stderr.splitlines()))


def usage_text(kafka: Outcome, kdump: Outcome) -> bool:
    """A bad command line: Kafka prints its option table (or joptsimple's exception with a stack
    trace) on stderr; kdump prints click's short usage error. Both exit 1 and print nothing on stdout."""
    kafka_usage = kafka.stderr.startswith(("This tool helps", "Exception in thread \"main\" joptsimple."))
    return (kafka_usage and kafka.exit_code == kdump.exit_code == 1 and kafka.stdout == kdump.stdout == ""
            and ("Usage:" in kdump.stderr or kdump.stderr.startswith("Error: ")))


def records_before_a_broken_record(kafka: Outcome, kdump: Outcome) -> bool:
    """Not yet fixed: a v2 batch whose record framing breaks in the middle. Kafka's record iterator
    has handed out (and Kafka printed) the records before the broken one; kdump decodes a batch's
    records all at once, so it prints none of them before its error line."""
    if not _JAVA_CRASH.match(kafka.stderr) or kafka.exit_code != kdump.exit_code or kafka.exit_code != 1:
        return False
    kafka_lines, kdump_lines = kafka.stdout.splitlines(), kdump.stdout.splitlines()
    dropped = kafka_lines[len(kdump_lines):]
    return (kafka_lines[:len(kdump_lines)] == kdump_lines and bool(dropped)
            and all(line.startswith("| offset: ") for line in dropped)
            and "Invalid record size" in kdump.stderr and kdump.stderr.count("\n") == 1)


DELIBERATE: dict[str, Callable[[Outcome, Outcome], bool]] = {
    "crash-becomes-error-line": crash_becomes_error_line,
    "crash-becomes-note": crash_becomes_note,
    "extra-file-is-dumped": extra_file_is_dumped,
    "usage-text": usage_text,
    "records-before-a-broken-record": records_before_a_broken_record,
}


def _params() -> list[object]:
    return [pytest.param(release, case, id=f"{release}:{case.name}")
            for release in real_kafka.RELEASES for case in CASES if case.applies_to(release)]


@pytest.mark.parametrize(("release", "case"), _params())
def test_kdump_prints_what_kafka_prints(release: str, case: corpus.Case) -> None:
    kafka = real_outcome(release, case)
    kdump = kdump_outcome(release, case)
    if kdump == kafka:
        return
    explained = [name for name, matches in DELIBERATE.items() if matches(kafka, kdump)]
    assert explained, (f"kdump differs from Kafka {release} for {case.args}:\n"
                       f"--- Kafka (exit {kafka.exit_code})\n{kafka.stdout[-3000:]}\n{kafka.stderr[:2000]}\n"
                       f"--- kdump (exit {kdump.exit_code})\n{kdump.stdout[-3000:]}\n{kdump.stderr[:2000]}")


def test_the_documented_table_lists_exactly_the_asserted_differences() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", text, flags=re.M)
    assert documented == list(DELIBERATE)
