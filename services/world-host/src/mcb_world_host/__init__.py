"""mcb_world_host."""
