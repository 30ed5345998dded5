"""oni-sim: a deterministic Oxygen Not Included colony behind the seed-004 mod API."""
