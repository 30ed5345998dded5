"""mcb_common: the small shared core every service imports.

Block states, the block registry, coordinates and regions, the error tree and NBT.
It imports no transport (no grpc, redis, fastapi, mcp): see README.md.
"""
