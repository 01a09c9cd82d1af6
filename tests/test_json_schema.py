"""The shipped JSON Schema accepts what the loader accepts and rejects the bad records it can express."""

import copy

import jsonschema
import pytest

from rtanalysis.io import json_schema, validate_episode, validate_steps, RecordError
from tests.conftest import GOOD_EPISODE
from tests.test_load_rules import RULES

# rules beyond JSON Schema (documented in the schema's description)
NOT_EXPRESSIBLE = {"t_act-before-t_obs", "latency-disagrees", "window-open-after-close",
                   "steps-out-of-order", "run_id-empty", "no_action_cause-acted"}


@pytest.fixture(scope="module")
def validator():
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_good_record_is_valid(validator):
    validator.validate(GOOD_EPISODE)


@pytest.mark.parametrize("rule", [r for r in RULES if r[0] not in NOT_EXPRESSIBLE], ids=lambda r: r[0])
def test_schema_rejects_what_loader_rejects(validator, rule):
    _, mutate, field, _ = rule
    bad = copy.deepcopy(GOOD_EPISODE)
    mutate(bad)
    with pytest.raises(RecordError):
        validate_steps(validate_episode(bad)["steps"])
    assert not validator.is_valid(bad)
