#!/usr/bin/env bash
# Compiles with Mono's mcs (.NET Framework 4.x profile, -warnaserror) into oni-mod/build/:
#   OniAgentMod.Core.dll, OniAgentMod.TestHost.exe  the core and its test host (tests/oni run them)
#   OniGameStubs.dll                                the reference stubs of the game's API (stubs/)
#   OniAgentMod.dll                                 the core and the game glue, against the stubs
# With ONI_MANAGED=<game>/OxygenNotIncluded_Data/Managed the glue is compiled a second time against the
# game's own assemblies into build/game/OniAgentMod.dll (the mod to install; docs/oni/mod.md).
# Usage: oni-mod/build.sh   (needs mcs: oni-mod/install_mono.sh installs mono-devel)
set -euo pipefail
cd "$(dirname "$0")"
command -v mcs >/dev/null || { echo "oni-mod/build.sh: mcs not found (run oni-mod/install_mono.sh)" >&2; exit 2; }
mkdir -p build
sdk=4.7.1-api; [ -d /usr/lib/mono/$sdk ] || sdk=4.5
mcs -nologo -warnaserror -sdk:$sdk -target:library -optimize+ -out:build/OniAgentMod.Core.dll core/*.cs
mcs -nologo -warnaserror -sdk:$sdk -target:exe -out:build/OniAgentMod.TestHost.exe -r:build/OniAgentMod.Core.dll host/*.cs
mcs -nologo -warnaserror -sdk:$sdk -target:library -out:build/OniGameStubs.dll stubs/*.cs
mcs -nologo -warnaserror -sdk:$sdk -target:library -out:build/OniAgentMod.dll -r:build/OniGameStubs.dll core/*.cs glue/*.cs
echo "oni-mod: built the core, the test host and the glue against the reference stubs (sdk $sdk)"
if [ -n "${ONI_MANAGED:-}" ]; then
  m="$ONI_MANAGED"
  refs=()
  for dll in Assembly-CSharp Assembly-CSharp-firstpass UnityEngine UnityEngine.CoreModule 0Harmony; do
    [ -f "$m/$dll.dll" ] || { echo "oni-mod/build.sh: $m/$dll.dll not found (ONI_MANAGED must be <game>/OxygenNotIncluded_Data/Managed)" >&2; exit 2; }
    refs+=("-r:$m/$dll.dll")
  done
  # Unity's assemblies may be built against netstandard: reference the game's copy when it ships one
  [ -f "$m/netstandard.dll" ] && refs+=("-r:$m/netstandard.dll")
  mkdir -p build/game
  mcs -nologo -warnaserror -sdk:$sdk -target:library -out:build/game/OniAgentMod.dll "${refs[@]}" core/*.cs glue/*.cs
  echo "oni-mod: built build/game/OniAgentMod.dll against $m"
fi
