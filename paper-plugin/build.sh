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
repo="${MCB_M2_REPO:-$HOME/.m2/repository}"
vendor="${MCB_PAPER_VENDOR_DIR:-$(cd .. && pwd)/../shared/vendor/paper-api-1.21.11}"
# --paper-api: print the paper-api version the paper module would use ($MCB_PAPER_API_VERSION, else
# the pom's paper.api.version) and exit 0 when its jar is in the local Maven repository
# ($MCB_M2_REPO, default ~/.m2/repository), 1 when not (paper-api is not on Maven Central).
# When it is missing and the vendored build of that version is beside the checkout
# (../shared/vendor/paper-api-1.21.11, or $MCB_PAPER_VENDOR_DIR), it is installed there first
# (with brigadier, which paper-api needs and Central lacks); a failed install exits 2, so
# `make java-test` fails instead of skipping the adapter while the jars are present.
if [ "${1:-}" = "--paper-api" ]; then
  v="${MCB_PAPER_API_VERSION:-$(sed -n 's:.*<paper.api.version>\(.*\)</paper.api.version>.*:\1:p' pom.xml | head -1)}"
  echo "$v"
  have() { [ -s "$repo/io/papermc/paper/paper-api/$v/paper-api-$v.jar" ] && [ -s "$repo/io/papermc/paper/paper-api/$v/paper-api-$v.pom" ]; }
  have && exit 0
  [ -s "$vendor/paper-api-$v.jar" ] || exit 1
  echo "paper-plugin: installing the vendored paper-api $v and brigadier from $vendor into $repo" >&2
  ./build.sh --install-vendored "$v" >&2 || { echo "paper-plugin: installing the vendored paper-api failed" >&2; exit 2; }
  have || exit 2
  exit 0
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
# MCB_M2_REPO is Maven's local repository too, not only the --paper-api check's.
m2=()
[ -n "${MCB_M2_REPO:-}" ] && m2=(-Dmaven.repo.local="$MCB_M2_REPO")
if [ "${1:-}" = "--install-vendored" ]; then
  v="$2"
  for a in "com.mojang brigadier 1.3.10" "io.papermc.paper paper-api $v"; do
    set -- $a
    mvn -q -B -N -Dstyle.color=never "${m2[@]}" install:install-file -Dfile="$vendor/$2-$3.jar" \
      -DpomFile="$vendor/$2-$3.pom" -DgroupId="$1" -DartifactId="$2" -Dversion="$3" -Dpackaging=jar \
      2>&1 | sed -u 's/\x1b\[0m//g; /^$/d'
  done
  exit 0
fi
mvn -q -B -Dstyle.color=never "${m2[@]}" "$@" 2>&1 | sed -u 's/\x1b\[0m//g; /^$/d'
