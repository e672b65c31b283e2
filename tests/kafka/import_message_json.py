#!/usr/bin/env python3
"""Copy Kafka's message-definition JSON for the records kdump decodes out of the released jars.

    python3 tests/kafka/import_message_json.py            # fetch (mvn) + import every release below
    python3 tests/kafka/import_message_json.py --check    # exit 1 if the committed files differ

The jars on Maven Central are the released artifacts, so the JSON inside them is exactly what each
release's generated classes were built from. Kafka moved the files between modules over time (core →
group-coordinator, transaction-coordinator, share-coordinator), so each release lists the artifacts that
carry them. Output, in kdump/format/messages/json/:

* ``<release>/<Name>.json``: every file that is new or changed at that release (a file unchanged byte for
  byte is kept once, in the folder of the release that introduced it);
* ``index.json``: release → registry → {schema name → folder holding that release's copy}, the registries
  being ``group``, ``transaction``, ``share`` (coordinator records), ``metadata`` (KRaft), ``remote-log``
  and ``clients`` (control records, consumer protocol). This is what the loader reads; a name missing
  from a release is a schema that release does not have;
* ``README.md``: for each release, the jars (with SHA-1) and the Kafka commit id they were built from.

Jars are cached outside the repository ($KDUMP_KAFKA_CACHE, default ~/.cache/kdump-kafka) and never
committed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "kdump" / "format" / "messages" / "json"
CACHE = Path(os.environ.get("KDUMP_KAFKA_CACHE", Path.home() / ".cache" / "kdump-kafka")) / "schemas"

# One release per minor line (the x.y.0 tag): schemas change only in minor releases.
RELEASES = ("2.8.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0",
            "4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0")

CLIENT_SCHEMAS = frozenset({"LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord",
                            "KRaftVersionRecord", "VotersRecord", "ConsumerProtocolSubscription",
                            "ConsumerProtocolAssignment"})


def artifacts(release: str) -> list[str]:
    """The artifacts of ``release`` that carry the JSON kdump needs."""
    minor = tuple(int(p) for p in release.split(".")[:2])
    names = ["kafka-clients", "kafka-metadata"]
    if minor <= (3, 8):
        names.append("kafka_2.13")  # group (≤ 3.4) and transaction (≤ 3.8) records lived in core
    if minor >= (3, 5):
        names.append("kafka-group-coordinator")
    if minor >= (3, 9):
        names.append("kafka-transaction-coordinator")
    if minor >= (4, 0):
        names.append("kafka-share-coordinator")
    if minor >= (3, 0):
        names.append("kafka-storage")
    return names


def fetch(release: str) -> Path:
    jars = CACHE / release / "jars"
    wanted = artifacts(release)
    if all((jars / f"{a}-{release}.jar").exists() for a in wanted):
        return jars
    jars.mkdir(parents=True, exist_ok=True)
    for artifact in wanted:
        subprocess.run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact=org.apache.kafka:{artifact}:{release}",
                        f"-DoutputDirectory={jars}"], check=True)
    return jars


def _wanted(artifact: str, path: str) -> str | None:
    """Schema name if ``path`` inside ``artifact`` is a record definition kdump decodes."""
    match = re.fullmatch(r"(?:common/)?(?:message|metadata)/([A-Za-z]+)\.json", path)
    if not match:
        return None
    name = match.group(1)
    if artifact == "kafka-clients":
        return name if name in CLIENT_SCHEMAS else None
    if artifact == "kafka-storage":
        return name if name.startswith("Remote") else None
    if artifact == "kafka-metadata":
        return name if path.startswith("common/metadata/") else None
    return name if name.endswith(("Key", "Value")) else None


def strip_comments(text: str) -> str:
    """Kafka's message JSON allows ``//`` comment lines (the licence header)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def registry(artifact: str, name: str) -> str:
    """The kdump registry a schema belongs to."""
    if name.startswith("TransactionLog"):
        return "transaction"
    return {"kafka-clients": "clients", "kafka-metadata": "metadata", "kafka-storage": "remote-log",
            "kafka-share-coordinator": "share"}.get(artifact, "group")


def read_release(release: str) -> tuple[dict[str, tuple[str, bytes]], list[tuple[str, str, str]], str]:
    jars = fetch(release)
    found: dict[str, tuple[str, bytes]] = {}
    sources: list[tuple[str, str, str]] = []
    commit = ""
    for artifact in artifacts(release):
        jar = jars / f"{artifact}-{release}.jar"
        held: set[str] = set()
        with zipfile.ZipFile(jar) as zf:
            for path in sorted(zf.namelist()):
                if artifact == "kafka-clients" and path == "kafka/kafka-version.properties":
                    props = zf.read(path).decode()
                    commit = re.search(r"commitId=(\S+)", props).group(1)  # type: ignore[union-attr]
                name = _wanted(artifact, path)
                if name is None:
                    continue
                raw = zf.read(path)
                if artifact == "kafka-metadata" and json.loads(strip_comments(raw.decode())).get("type") != "metadata":
                    continue
                found[name] = (registry(artifact, name), raw)
                held.add(registry(artifact, name))
        sources.append((jar.name, hashlib.sha1(jar.read_bytes()).hexdigest(), ", ".join(sorted(held)) or "-"))
    return found, sources, commit


def build() -> dict[Path, bytes]:
    files: dict[Path, bytes] = {}
    index: dict[str, dict[str, dict[str, str]]] = {}
    latest: dict[str, tuple[str, bytes]] = {}  # name → (folder, content)
    lines = ["# Sources of the message JSON in this folder", "",
             "Written by `tests/kafka/import_message_json.py` from the released jars on Maven Central "
             "(group `org.apache.kafka`). Each folder holds the files that are new or changed (byte for byte) at "
             "that release; `index.json` lists, per release, the folder holding each "
             "schema of that release. The commit is the `commitId` in the release's "
             "`kafka-clients` jar (`kafka/kafka-version.properties`), i.e. the commit of the release tag in "
             "github.com/apache/kafka.", "",
             "| Release | Commit | Jar | SHA-1 | Registries taken from it |", "|---|---|---|---|---|"]
    for release in RELEASES:
        found, sources, commit = read_release(release)
        for jar, sha, held in sources:
            lines.append(f"| {release} | `{commit}` | {jar} | `{sha}` | {held} |")
        index[release] = {}
        for name in sorted(found):
            kind, raw = found[name]
            if name not in latest or latest[name][1] != raw:
                latest[name] = (release, raw)
                files[OUT / release / f"{name}.json"] = raw
            index[release].setdefault(kind, {})[name] = latest[name][0]
        for name in list(latest):
            if name not in found:
                del latest[name]
    lines += ["", "Paths inside the jars: `common/message/*.json` (clients, core, group-, transaction- and "
              "share-coordinator), `common/metadata/*.json` (metadata, records of type `metadata` only), "
              "`message/Remote*.json` (storage). Each file keeps its Apache licence header.", ""]
    files[OUT / "README.md"] = "\n".join(lines).encode()
    files[OUT / "index.json"] = (json.dumps(index, indent=1, sort_keys=True) + "\n").encode()
    return files


def main() -> int:
    files = build()
    existing = {p for p in OUT.rglob("*") if p.is_file() and p.suffix in (".json", ".md")}
    if "--check" in sys.argv:
        stale = sorted(str(p) for p in existing ^ set(files)) + sorted(
            str(p) for p, data in files.items() if p.exists() and p.read_bytes() != data)
        print("\n".join(stale) or "up to date")
        return 1 if stale else 0
    for path in existing - set(files):
        path.unlink()
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"{len(files) - 2} JSON files for {len(RELEASES)} releases in {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
