"""--key/value-decoder-class as each Kafka release loads it (behaviour observed with the real tools,
tests/kafka/test_real_dump.py): deprecation lines in 3.8-3.9, load failures per .log file."""

from __future__ import annotations

from pathlib import Path

from kdump_testing import run_kdump

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "logdirs" / "plain-0"
LOG = str(FIXTURE / "00000000000000000000.log")
INDEX = str(FIXTURE / "00000000000000000000.index")


def test_deprecated_serializer_names_print_a_line_per_log_file_in_38_and_39() -> None:
    result = run_kdump("--files", LOG, "--key-decoder-class", "kafka.serializer.IntegerDecoder",
                       "--value-decoder-class", "kafka.serializer.StringDecoder", "--kafka-version", "3.9.2")
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        f"Dumping {LOG}",
        "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead",
        "kafka.serializer.IntegerDecoder is deprecated. Please use org.apache.kafka.tools.api.IntegerDecoder instead",
    ]
    assert lines[3] == "Log starting offset: 0"
    older = run_kdump("--files", LOG, "--key-decoder-class", "kafka.serializer.IntegerDecoder", "--kafka-version", "3.7")
    assert "deprecated" not in older.stdout


def test_a_class_the_release_lacks_fails_each_log_file_after_its_dumping_line() -> None:
    for version, name in (("4.0", "kafka.serializer.StringDecoder"), ("4.3", "kafka.serializer.StringDecoder"),
                          ("3.7", "org.apache.kafka.tools.api.StringDecoder"), ("3.9", "com.example.NoSuchDecoder")):
        result = run_kdump("--files", f"{LOG},{INDEX}", "--value-decoder-class", name, "--kafka-version", version)
        assert result.exit_code == 1
        assert result.stdout.splitlines()[:2] == [f"Dumping {LOG}", f"Dumping {INDEX}"]
        assert result.stderr.startswith(f"Error: {LOG}: Failed to load decoder class {name} ")
        # Only .log files create decoders: an index-only run succeeds.
        index_only = run_kdump("--files", INDEX, "--value-decoder-class", name, "--kafka-version", version)
        assert index_only.exit_code == 0 and index_only.stderr == ""


def test_kafka_22_loads_the_decoders_before_the_first_file() -> None:
    result = run_kdump("--files", INDEX, "--value-decoder-class", "com.example.NoSuchDecoder", "--kafka-version", "2.2")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: Failed to load decoder class com.example.NoSuchDecoder ")
