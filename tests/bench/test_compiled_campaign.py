"""bench/compiled_campaign.py resumes from its chunk log: what is logged is not run again."""
from __future__ import annotations

import argparse
import json

from revasm.bench import compiled_campaign as campaign


def _record(kind: str, width: int, count: int, seed: int, failures: int = 0) -> dict:
    return {"kind": kind, "width": width, "seed": seed, "programs": count,
            "hashes": [f"{seed:08x}{k:08x}" for k in range(count)], "batches": 2,
            "lanes": 3 * count, "cells": 10 * count, "passes": {"forward": count},
            "faults": {"divide-by-zero": 1}, "instructions": ["ADD", "EXCH"],
            "failures": [f"lane {k}" for k in range(failures)], "seconds": 1.5,
            "commit": "abc"}


def test_the_plan_adds_up_and_interleaves_kinds_and_widths():
    chunks = campaign.plan(1000, seed=3)
    assert sum(count for _, _, count, _ in chunks) == 1000
    assert {(kind, width) for kind, width, _, _ in chunks[:6]} == {
        (kind, width) for kind in campaign.KINDS for width in campaign.WIDTHS}
    assert len({seed for *_, seed in chunks}) == len(chunks)


def test_a_resumed_campaign_keeps_the_logged_chunks_of_its_plan(tmp_path):
    chunks = campaign.plan(1000, seed=0)
    log = tmp_path / "campaign.chunks.jsonl"
    first, second = chunks[0], chunks[1]
    other = ("faulting", 64, 100, 999_999)  # a chunk of another plan
    log.write_text("\n".join([json.dumps(_record(*first)), json.dumps(_record(*other)),
                              json.dumps(_record(*second, failures=2)),
                              json.dumps(_record(*first)),  # logged twice: counted once
                              '{"kind": "structured", "wid']) + "\n")  # a torn line
    records = campaign.finished_chunks(log, chunks)
    assert [(r["kind"], r["width"], r["programs"], r["seed"]) for r in records] == [first,
                                                                                     second]
    args = argparse.Namespace(quick=False, seed=0, workers=2, kernel="program")
    result = campaign.summary(records, 1000, args, complete=False, seconds=4.0)
    assert result["programs"] == first[2] + second[2]
    assert result["distinct_programs"] == first[2] + second[2]
    assert result["failures"] == 2 and result["complete"] is False
    assert result["commits"] == ["abc"] and result["chunk_seconds"] == 3.0
    assert "ADD" not in result["instructions_missing"]


def test_no_log_means_nothing_done(tmp_path):
    assert campaign.finished_chunks(tmp_path / "none.jsonl", campaign.plan(10, 0)) == []


def test_the_worker_pool_asks_for_a_fresh_worker_per_chunk_only_where_python_can(monkeypatch):
    # max_tasks_per_child is Python 3.11's; on 3.10 (which the project supports) passing it
    # raised a TypeError before the campaign ran a chunk
    made: list[dict] = []
    monkeypatch.setattr(campaign, "ProcessPoolExecutor", lambda **options: made.append(options))
    monkeypatch.setattr(campaign.sys, "version_info", (3, 10, 14))
    campaign.worker_pool(0)
    monkeypatch.setattr(campaign.sys, "version_info", (3, 11, 9))
    campaign.worker_pool(3)
    assert made == [{"max_workers": 1}, {"max_workers": 3, "max_tasks_per_child": 1}]


def test_the_campaigns_find_the_checkout_s_tests_and_results_folders():
    # the src layout moved the campaigns two folders down; their paths follow
    from revasm.bench import janus_campaign, rtl_lockstep
    from revasm.bench.common import EXAMPLES

    for module in (campaign, janus_campaign, rtl_lockstep):
        assert (module.TEST_SUPPORT / "program_generators.py").is_file()
        assert (module.RESULTS / "compiled_campaign.json").is_file()
        assert (module.REPOSITORY / "src" / "revasm" / "__init__.py").is_file()
    assert (EXAMPLES / "fib.pal").is_file() and (EXAMPLES / "nilang" / "cases.py").is_file()
