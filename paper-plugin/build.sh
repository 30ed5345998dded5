#!/usr/bin/env bash
# Run Maven on the Java parts with a JDK >= 21. Paper 1.21.x runs on Java 21, so the bytecode is
# --release 21; any newer JDK (here Temurin 25) compiles it. Picks $MCB_JAVA_HOME, $JAVA_HOME, then
# /usr/lib/jvm/*. Usage: paper-plugin/build.sh <maven args>   |   paper-plugin/build.sh --print-java
#                  |   paper-plugin/build.sh --paper-api   (see below)
set -euo pipefail
cd "$(dirname "$0")"
major() { "$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
pick() {
  for j in "${MCB_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    if [ -n "$j" ] && [ -x "$j/bin/javac" ] && [ "$(major "$j")" -ge 21 ] 2>/dev/null; then echo "$j"; return 0; fi
  done
  return 1
}
if ! jdk=$(pick); then
  echo "paper-plugin: needs a JDK >= 21 (Paper 1.21.x runs on Java 21); set MCB_JAVA_HOME. See paper-plugin/README.md." >&2
  exit 3
fi
if [ "${1:-}" = "--print-java" ]; then echo "$jdk/bin/java"; exit 0; fi
# --paper-api: print the paper-api version the paper module would use ($MCB_PAPER_API_VERSION, else
# the pom's paper.api.version) and exit 0 when its jar is in the local Maven repository
# ($MCB_M2_REPO, default ~/.m2/repository), 1 when not (paper-api is not on Maven Central).
if [ "${1:-}" = "--paper-api" ]; then
  v="${MCB_PAPER_API_VERSION:-$(sed -n 's:.*<paper.api.version>\(.*\)</paper.api.version>.*:\1:p' pom.xml | head -1)}"
  echo "$v"
  d="${MCB_M2_REPO:-$HOME/.m2/repository}/io/papermc/paper/paper-api/$v"
  [ -s "$d/paper-api-$v.jar" ] && [ -s "$d/paper-api-$v.pom" ]
  exit
fi
command -v mvn >/dev/null 2>&1 || { echo "paper-plugin: needs Maven 3.8+ (apt-get install maven)" >&2; exit 3; }
export JAVA_HOME="$jdk"
# Maven 3.8's bundled Guava calls sun.misc.Unsafe; JDK 24+ warns about it on every run.
if [ "$(major "$jdk")" -ge 24 ]; then export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"; fi
# Debian's Maven 3.8.7 prints bare colour resets even in batch mode; drop them (and the empty lines).
# One Maven build of this tree at a time (parallel test runs share target/ and ~/.m2).
lock="${TMPDIR:-/tmp}/mcb-paper-plugin-maven.lock"
exec 9>"$lock"
flock 9
mvn -q -B -Dstyle.color=never "$@" 2>&1 | sed -u 's/\x1b\[0m//g; /^$/d'
