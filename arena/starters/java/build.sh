#!/bin/sh
# Builds this bot: Java classes generated from proto/arena/v1/*.proto (copied into this folder
# by `arena bot new`) with protoc, compiled with Debian's JDK against Debian's protobuf-java
# into one jar, ./bot.jar, that also holds protobuf-java's classes: the bot then needs only
# the system's `java` in the sandbox. Needs (Debian bookworm):
#   apt-get install default-jdk-headless protobuf-compiler libprotobuf-java
# The generated code and classes go to a temporary folder, removed at the end: the bot's
# folder (all the sandbox shows it, and what its version hash covers) keeps only the
# sources, the protos and the jar.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
protobuf_jar=/usr/share/java/protobuf.jar
for tool in javac jar protoc; do
    if ! command -v "$tool" >/dev/null; then
        echo "build.sh: $tool is missing: apt-get install default-jdk-headless" \
             "protobuf-compiler libprotobuf-java" >&2
        exit 1
    fi
done
if [ ! -f "$protobuf_jar" ]; then
    echo "build.sh: no $protobuf_jar: apt-get install libprotobuf-java" >&2
    exit 1
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/arena-java-bot.XXXXXX")
trap 'rm -rf "$build"' EXIT

mkdir -p "$build/gen" "$build/classes"
protoc -I "$here/proto" --java_out="$build/gen" "$here"/proto/arena/v1/*.proto
# Java 17: UnixDomainSocketAddress (16+). -encoding: the sources are UTF-8 whatever the locale.
javac --release 17 -encoding UTF-8 -nowarn -cp "$protobuf_jar" -d "$build/classes" \
    "$here"/*.java "$build"/gen/arena/v1/*.java
(cd "$build/classes" && jar xf "$protobuf_jar" com && rm -rf META-INF)
jar --create --file "$here/bot.jar.tmp" --main-class Bot --date 2000-01-01T00:00:00Z \
    -C "$build/classes" .
mv "$here/bot.jar.tmp" "$here/bot.jar"
echo "build.sh: built $here/bot.jar"
