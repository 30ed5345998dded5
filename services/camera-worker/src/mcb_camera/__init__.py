"""mcb_camera: the camera worker (saved cameras, capture jobs, drivers that render real images).

Until the camera issue (issue 6) lands there is no driver: ``ListCameras`` answers with the
saved cameras and ``worker_state="no_driver"``, and ``Capture`` fails with
``camera_unavailable``. The worker never returns a placeholder image.
"""

__version__ = "0.1.0"
