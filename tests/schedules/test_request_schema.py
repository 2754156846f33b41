"""What `POST schedules` accepts, as the OpenAPI document says it and as the server checks it: the two agree,
so that a client built from the document never sends a schedule the server refuses as malformed."""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import ValidationError

from jupyter_gpu_env.models.automation.schedules import ScheduleRequest

WHEN = {"schedule": "@daily"}
CASES = [
    ({}, False),  # neither a notebook nor a pipeline file
    ({"notebook_path": "a.ipynb"}, True),
    ({"notebook_path": "a.ipynb", "kernel": "python3", "backend": "local"}, True),
    ({"notebook_path": "a.ipynb", "pipeline_path": None}, True),
    ({"pipeline_path": "p.pipeline.yaml"}, True),
    ({"pipeline_path": "p.pipeline.yaml", "notebook_path": None}, True),
    ({"pipeline_path": "p.pipeline.yaml", "notebook_path": "a.ipynb"}, False),  # both
    ({"pipeline_path": "p.pipeline.yaml", "kernel": "python3"}, False),  # the file says each node's
    ({"pipeline_path": "p.pipeline.yaml", "backend": "local"}, False),
    ({"pipeline_path": "p.pipeline.yaml", "parameters": {}}, False),
    ({"notebook_path": None}, False),
]


@pytest.mark.parametrize(("fields", "accepted"), CASES)
def test_the_document_and_the_server_agree_on_a_notebook_or_a_pipeline_file(fields, accepted):
    body = {**WHEN, **fields}
    in_document = jsonschema.Draft202012Validator(ScheduleRequest.model_json_schema()).is_valid(body)
    try:
        ScheduleRequest.model_validate(body)
        by_server = True
    except ValidationError:
        by_server = False
    assert (in_document, by_server) == (accepted, accepted)
