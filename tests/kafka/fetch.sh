#!/usr/bin/env bash
# Fetch the real Apache Kafka jars of one release (and their dependencies) from Maven Central into a
# cache outside the repository, and print the directory that holds them (one classpath: DIR/*).
#
#   tests/kafka/fetch.sh 4.3.0                 # kafka_2.13 (broker, Scala tools) + kafka-tools
#   tests/kafka/fetch.sh 2.2.2                 # kafka_2.12 for 2.x
#   tests/kafka/fetch.sh 4.3.0 G:A:V[:TYPE:CLASSIFIER] ...   # extra artifacts in the same classpath
#
# The cache is $KDUMP_KAFKA_CACHE (default ~/.cache/kdump-kafka)/<release>/lib; a finished fetch
# leaves a .complete marker there, so a second call costs nothing. Needs java and mvn on PATH.
set -euo pipefail
release=${1:?usage: fetch.sh RELEASE [GROUP:ARTIFACT:VERSION ...]}
shift
cache=${KDUMP_KAFKA_CACHE:-$HOME/.cache/kdump-kafka}
extras=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
key=$(printf '%s %s' "$release" "$extras" | sha1sum | cut -c1-12)
dir=$cache/$release-$key
if [ -f "$dir/lib/.complete" ]; then
  echo "$dir/lib"
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: mvn not found" >&2; exit 3; }

case $release in
  2.*) scala=2.12 ;;
  *) scala=2.13 ;;
esac
deps="org.apache.kafka:kafka_$scala:$release"
# kafka-tools holds the Java DumpLogSegments from 4.3 on (and other tools since 3.5).
case $release in
  2.*|3.[0-4].*) ;;
  *) deps="$deps org.apache.kafka:kafka-tools:$release" ;;
esac
deps="$deps $*"

work=$(mktemp -d "$cache.tmp.XXXXXX" 2>/dev/null || { mkdir -p "$cache"; mktemp -d "$cache/.tmp.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
{
  echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
  echo '<groupId>kdump.test</groupId><artifactId>kafka-fetch</artifactId><version>1</version><dependencies>'
  for dep in $deps; do
    # G:A:V or G:A:V:TYPE:CLASSIFIER (e.g. org.apache.kafka:kafka-storage:4.3.0:jar:test)
    IFS=: read -r g a v t c <<<"$dep"
    echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version>${t:+<type>$t</type>}${c:+<classifier>$c</classifier>}</dependency>"
  done
  echo '</dependencies></project>'
} >"$work/pom.xml"
mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$work/lib" >&2
touch "$work/lib/.complete"
mkdir -p "$dir"
rm -rf "$dir/lib"
mv "$work/lib" "$dir/lib"
echo "$dir/lib"
