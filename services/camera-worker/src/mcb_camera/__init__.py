"""mcb_camera: the camera worker (saved cameras, a Redis queue of capture jobs, drivers that
render real images: the built-in OpenGL renderer and the Fabric camera client link).

The worker never returns a placeholder image, and never an older picture for a new request.
"""

__version__ = "0.2.0"
