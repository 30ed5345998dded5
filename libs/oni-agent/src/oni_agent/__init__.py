"""oni-agent: the toolchain an agent uses to play Oxygen Not Included through the mod API."""
