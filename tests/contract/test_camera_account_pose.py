"""camera_account_pose on every world host (docs/world-protocol.md, docs/camera-link.md):

* a host with a camera account (the Java test host's simulated spectator; a Paper server with
  ``camera.account``) lists the capability, moves it, answers once the chunks were sent, and
  refuses another account, another world and an eye outside the allowed areas;
* the embedded host has no players: ``camera_unavailable`` with reason ``no_camera_account``,
  and no capability — never a fake "moved".
"""

from __future__ import annotations

import time

from contract.test_world_protocol import Client


def test_camera_account_pose(world_host) -> None:
    c = Client(world_host)
    caps = c.ok("world_info")["capabilities"]
    pose = {"x": 3.5, "y": 70, "z": -2.5, "yaw": 90, "pitch": 20}
    if "camera_account_pose" not in caps:
        e = c.err("camera_account_pose", pose, 503, "camera_unavailable")
        assert e["details"]["reason"] == "no_camera_account" and e["retryable"] is True
        return
    t0 = time.time() * 1000
    r = c.ok("camera_account_pose", pose)
    assert r["moved"] is True and r["x"] == 3.5 and r["yaw"] == 90 and r["world"]
    # answered once the chunks were sent (the test host sends them 60 ms after the move)
    assert int(r["atMillis"]) >= t0 + 50
    e = c.err("camera_account_pose", {**pose, "account": "alice"}, 403, "permission_denied")
    assert e["details"]["reason"] == "not_the_camera_account"
    e = c.err("camera_account_pose", {**pose, "x": 5000}, 403, "permission_denied")
    assert e["details"]["reason"] == "outside_allowed_areas"
    c.err("camera_account_pose", {**pose, "world": "no_such_world"}, 403, "permission_denied")
    c.err("camera_account_pose", {**pose, "pitch": 91}, 400, "invalid_request")
    # only the service principal may move it
    Client(world_host, "admin").err("camera_account_pose", pose, 403, "permission_denied")
