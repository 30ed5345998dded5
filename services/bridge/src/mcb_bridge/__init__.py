"""mcb_bridge."""
