#!/usr/bin/env bash
# `make java-test`: the Java parts' tests (paper-plugin/README.md, "Build").
# core, test host and camera core always; the Paper adapter and its MockBukkit tests when paper-api
# resolves locally. paper-plugin/build.sh --paper-api installs the vendored build
# (../shared/vendor/paper-api-1.21.11) when it is there, so the adapter is skipped only where neither
# the local repository nor that folder has it. Prints surefire's counts per module afterwards and
# fails when the adapter ran no test although paper-api was there. MCB_SKIP_JAVA=1 skips it all.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${MCB_SKIP_JAVA:-0}" = 1 ]; then echo "java-test: skipped (MCB_SKIP_JAVA=1)"; exit 0; fi
v=$(paper-plugin/build.sh --paper-api); have=$?
modules=(paper-plugin/core paper-plugin/testhost camera-mod/core)
for m in "${modules[@]}" paper-plugin/paper; do rm -rf "$m/target/surefire-reports"; done
case $have in
  0) modules+=(paper-plugin/paper)
     paper-plugin/build.sh -Ppaper -Dpaper.api.version="$v" verify; rc=$? ;;
  1) echo "paper adapter tests: skipped (paper-api $v does not resolve and ../shared/vendor/paper-api-1.21.11 is absent: not on Maven Central; see paper-plugin/README.md)"
     paper-plugin/build.sh verify; rc=$? ;;
  *) echo "java-test: paper-api $v is vendored but could not be installed into the local Maven repository" >&2; exit 1 ;;
esac
# surefire's counts, one line a module, summed from its XML reports
for m in "${modules[@]}"; do
  python3 - "$m" <<'PY'
import sys, glob, xml.etree.ElementTree as ET
m = sys.argv[1]
t = f = e = s = 0
for p in glob.glob(f"{m}/target/surefire-reports/TEST-*.xml"):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
print(f"java-test {m}: Tests run: {t}, Failures: {f}, Errors: {e}, Skipped: {s}")
if t - s == 0:
    print(f"java-test {m}: ran no test", file=sys.stderr)
    sys.exit(1)
PY
  [ $? = 0 ] || rc=1
done
exit $rc
