from __future__ import annotations

import pytest
from contract.hosts import FACTORIES


@pytest.fixture(params=sorted(FACTORIES))
def host_factory(request):
    return FACTORIES[request.param]


@pytest.fixture
def world_host(host_factory, tmp_path):
    """A running world host with local automation on."""
    h = host_factory(tmp_path, True)
    yield h
    h.stop()


@pytest.fixture
def world_host_no_automation(host_factory, tmp_path):
    h = host_factory(tmp_path, False)
    yield h
    h.stop()
