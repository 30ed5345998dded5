import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcb_common.errors import McbError
from mcb_journal.states import TERMINAL, TRANSITIONS, OpState, check_transition


def test_terminal_states_have_no_exit():
    for s in TERMINAL:
        assert TRANSITIONS[s] == frozenset()


def test_recovery_required_only_resolves_to_failed():
    assert TRANSITIONS[OpState.RECOVERY_REQUIRED] == {OpState.FAILED}
    with pytest.raises(McbError):
        check_transition("recovery_required", "applied")


@given(st.lists(st.sampled_from(list(OpState)), max_size=12))
def test_any_walk_respects_the_table(steps):
    state = OpState.PREPARED
    for nxt in steps:
        if nxt in TRANSITIONS[state]:
            check_transition(state, nxt)
            state = nxt
        else:
            with pytest.raises(McbError):
                check_transition(state, nxt)
    # applied is reachable only through applying
    assert state != OpState.APPLIED or OpState.APPLIED in TRANSITIONS[OpState.APPLYING]


def test_applied_requires_applying_first():
    with pytest.raises(McbError):
        check_transition("queued", "applied")
    check_transition("applying", "applied")


def test_waiting_for_resume_never_writes_and_ends_only_by_cancel_or_failure():
    """Issue 31 item 6: a queued operation that meets paused writes waits; it goes back to queued
    (and so through applying) when writes resume, or is cancelled; it never jumps to a result."""
    assert OpState.WAITING_FOR_RESUME in TRANSITIONS[OpState.QUEUED]
    assert TRANSITIONS[OpState.WAITING_FOR_RESUME] == {OpState.QUEUED, OpState.CANCELLED, OpState.FAILED}
    assert OpState.WAITING_FOR_RESUME not in TERMINAL
    # applying -> waiting_for_resume only when the first batch was refused as paused (nothing written;
    # test_pause_before_first_batch.py); a pause after a batch was written is a stop (cancelled)
    assert OpState.WAITING_FOR_RESUME in TRANSITIONS[OpState.APPLYING]
    for result in ("applying", "applied", "conflict", "recovery_required"):
        with pytest.raises(McbError):
            check_transition("waiting_for_resume", result)
