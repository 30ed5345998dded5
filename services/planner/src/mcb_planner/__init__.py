"""mcb_planner."""
