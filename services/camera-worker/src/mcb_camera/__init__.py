"""mcb_camera."""
