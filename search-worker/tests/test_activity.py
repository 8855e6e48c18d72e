"""The activity as Temporal runs it: a request as the TypeScript workflow encodes it, and an error that
no retry can fix."""

from __future__ import annotations

import json
import unittest

from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from assay_search_worker.__main__ import suggest_trial
from assay_search_worker.suggest import suggest

# JSON.stringify of a SuggestInput (workflows/sweep-types.ts): whole numbers arrive as ints, 1e-5 as 0.00001.
REQUEST = """{"strategy":"tpe","space":{"lr":{"distribution":"log_uniform","low":0.00001,"high":1},
"act":{"distribution":"choice","values":["relu",{"leaky":0.1}]},"n":{"distribution":"int","low":1,"high":4}},
"goal":"maximize","seed":7,"trial":3,"history":[
{"trial":1,"params":{"lr":0.01,"act":{"leaky":0.1},"n":2},"state":"complete","value":0.9,
"intermediate":[[1,0.5]]},
{"trial":2,"params":{"lr":0.5,"act":"relu","n":4},"state":"running","value":null,"intermediate":[]}]}"""


def through_converter(value: object) -> object:
    """What the worker's default data converter hands over after the wire: JSON in, plain Python out."""
    converter = DataConverter.default.payload_converter
    return converter.from_payloads(converter.to_payloads([value]))[0]


class Activity(unittest.TestCase):
    def test_a_workflow_request_gives_the_suggestion_and_it_survives_the_wire(self) -> None:
        request = through_converter(json.loads(REQUEST))
        answer = ActivityEnvironment().run(suggest_trial, request)
        self.assertEqual(answer, suggest(json.loads(REQUEST)))
        self.assertEqual(through_converter(answer), answer)
        self.assertEqual(set(answer["params"]), {"lr", "act", "n"})

    def test_a_request_no_sampler_can_answer_fails_without_retries(self) -> None:
        request = json.loads(REQUEST)
        request["space"]["n"]["low"] = 9
        with self.assertRaises(ApplicationError) as raised:
            ActivityEnvironment().run(suggest_trial, request)
        self.assertTrue(raised.exception.non_retryable)
        self.assertEqual(raised.exception.type, "InvalidSuggestRequest")
        self.assertIn("space.n.low", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
