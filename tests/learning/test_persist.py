"""Where learned state is kept between runs: a JOBDIR file written atomically, or nowhere."""

from __future__ import annotations

import hashlib

from scrapy_urlunify.learning._learner import Learner
from scrapy_urlunify.learning._persist import LearnedRulesStore


def _learned_ref() -> Learner:
    learner = Learner()
    for path in ("/a", "/b", "/c"):
        for value in ("home", "footer"):
            learner.observe(
                f"https://site.com{path}?ref={value}",
                "site.com",
                hashlib.md5(path.encode()).digest(),
            )
    return learner


def test_a_jobdir_file_round_trips_the_learner(tmp_path):
    store = LearnedRulesStore(path=tmp_path / "urlunify-learned.json")
    assert store.load() is None  # a new job: nothing learned yet
    store.save(_learned_ref().to_json())
    again = Learner.from_json(store.load() or "")
    assert [(r.kind, r.host, r.name) for r in again.rules] == [("param", "site.com", "ref")]
    # saved again over the old file, through a temporary one that does not stay behind
    store.save(Learner().to_json())
    assert Learner.from_json(store.load() or "").rules == ()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["urlunify-learned.json"]
    assert str(store) == str(tmp_path / "urlunify-learned.json")


def test_without_jobdir_nor_redis_nothing_is_kept():
    store = LearnedRulesStore()
    store.save("{}")
    assert store.load() is None


def test_the_probation_of_rules_is_saved_with_the_learner(tmp_path):
    store = LearnedRulesStore(path=tmp_path / "urlunify-learned.json")
    assert store.load_state().probation is None
    probation = {"param|site.com|ref": {"sampled": 2, "confirmed": 1, "paths": ["/a", "/b"]}}
    store.save(_learned_ref().to_json(), probation)
    state = store.load_state()
    assert state.probation == probation
    assert [r.name for r in Learner.from_json(state.learner or "").rules] == ["ref"]
    store.save(_learned_ref().to_json(), {})  # confirmed
    assert store.load_state().probation == {}
    store.save(_learned_ref().to_json())  # saved as before probation was kept
    assert store.load_state().probation is None


def test_the_probation_in_redis_is_one_write_with_the_learner(redis_server):
    from scrapy_urlunify.stores._redis_tables import RedisRulesStore

    client = redis_server.client()
    store = LearnedRulesStore(redis=RedisRulesStore(client, "urlunify:shop:rules"))
    store.save(
        _learned_ref().to_json(),
        {"param|site.com|ref": {"sampled": 0, "confirmed": 0, "paths": []}},
    )
    state = store.load_state()
    assert list(state.probation or {}) == ["param|site.com|ref"]
    assert sorted(client.hkeys("urlunify:shop:rules")) == [b"learner", b"probation"]
    client.hset("urlunify:shop:rules", "probation", "[1, 2]")
    import pytest

    with pytest.raises(ValueError, match="probation"):
        store.load_state()
