"""mcb_journal."""
