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
