"""Topic names: kdump's check against Kafka's own ``org.apache.kafka.common.internals.Topic.validate``.

The oracle is the real kafka-clients jar of a Kafka release (``tests/kafka/fetch.sh``, cached
outside the repository), called from a small Java program on the same names.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kdump.errors import UsageError
from kdump.gen.generator import TopicSpec, topic_name_problem

KAFKA_RELEASE = "4.3.0"
FETCH = Path(__file__).resolve().parents[1] / "kafka" / "fetch.sh"

NAMES = ["ok", "A.b_c-9", "...", "", ".", "..", "../../victim", "a/b", "/abs", "a b", "a\tb", "a\\b", "café",
         "x" * 249, "x" * 250, "é" * 250, "😀" * 124, "😀" * 125, "topic=1", "t,u", "ü" + "x" * 300]

_VALIDATE = """
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.io.PrintStream;
public class Validate {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        for (String hex : Files.readAllLines(Paths.get(args[0]))) {
            byte[] bytes = new byte[hex.length() / 2];
            for (int i = 0; i < bytes.length; i++) bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
            try {
                org.apache.kafka.common.internals.Topic.validate(new String(bytes, StandardCharsets.UTF_8));
                out.println("OK");
            } catch (org.apache.kafka.common.errors.InvalidTopicException e) {
                out.println(e.getMessage());
            }
        }
    }
}
"""


def kafka_messages(tmp_path: Path, names: list[str]) -> list[str]:
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("needs java and mvn to run Kafka's Topic.validate")
    fetched = subprocess.run(["bash", str(FETCH), KAFKA_RELEASE], capture_output=True, text=True)
    if fetched.returncode != 0:
        pytest.skip(f"could not fetch Kafka {KAFKA_RELEASE}: {fetched.stderr.strip()[-200:]}")
    classpath = os.path.join(fetched.stdout.strip(), "*")
    (tmp_path / "Validate.java").write_text(_VALIDATE)
    (tmp_path / "names").write_text("".join(name.encode().hex() + "\n" for name in names))
    run = subprocess.run(["java", "-cp", classpath, str(tmp_path / "Validate.java"), str(tmp_path / "names")],
                         capture_output=True, check=True)
    return run.stdout.decode().splitlines()


def test_the_same_names_as_kafka_are_refused_with_kafkas_words(tmp_path: Path) -> None:
    expected = kafka_messages(tmp_path, NAMES)
    assert len(expected) == len(NAMES)
    ours = []
    for name in NAMES:
        problem = topic_name_problem(name)
        ours.append("OK" if problem is None else f"Topic name is invalid: {problem}")
    assert ours == expected


def test_topic_spec_refuses_an_invalid_name() -> None:
    with pytest.raises(UsageError, match=r"^Topic name is invalid: '\.\./x' contains one or more characters"):
        TopicSpec("../x")
