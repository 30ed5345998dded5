"""The in-game chat bridge: `/ai ...` messages from the world host -> a per-project turn queue
-> an ACP agent process (codex-acp by default) that uses our MCP tools -> replies to the player.

Modules: config (trusted settings), isolation (the agent's environment and Codex home),
sessions (session.json), ratelimit, turnqueue (Redis), agent (the ACP client), loop (polling,
turns, progress, stop), doctor, terminal (`mcb chat`).
"""
