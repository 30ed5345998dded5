#!/usr/bin/env bash
# Compiles the mod core and the test host with Mono's mcs (.NET Framework 4.x profile) into
# oni-mod/build/. The game glue (glue/) is NOT compiled here: it needs the game's assemblies.
# Usage: oni-mod/build.sh   (needs mcs: oni-mod/install_mono.sh installs mono-devel)
set -euo pipefail
cd "$(dirname "$0")"
command -v mcs >/dev/null || { echo "oni-mod/build.sh: mcs not found (run oni-mod/install_mono.sh)" >&2; exit 2; }
mkdir -p build
sdk=4.7.1-api; [ -d /usr/lib/mono/$sdk ] || sdk=4.5
mcs -nologo -warnaserror -sdk:$sdk -target:library -optimize+ -out:build/OniAgentMod.Core.dll core/*.cs
mcs -nologo -warnaserror -sdk:$sdk -target:exe -out:build/OniAgentMod.TestHost.exe -r:build/OniAgentMod.Core.dll host/*.cs
echo "oni-mod: built build/OniAgentMod.Core.dll and build/OniAgentMod.TestHost.exe (sdk $sdk)"
