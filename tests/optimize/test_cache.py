from tracerl.optimize.cache import ResponseCache, cache_key


def test_replies_persist_and_keys_separate_settings_and_replicas(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    key = cache_key("m", [1, 2, 3], [0.0, 1.0, 16], 0)
    cache.put(key, "m", {"ids": [4, 5]})
    cache.close()
    again = ResponseCache(path)
    assert again.get(key) == {"ids": [4, 5]}
    assert again.get(cache_key("m", [1, 2, 3], [0.7, 1.0, 16], 0)) is None
    assert again.get(cache_key("m", [1, 2, 3], [0.0, 1.0, 16], 1)) is None
    assert again.get(cache_key("other", [1, 2, 3], [0.0, 1.0, 16], 0)) is None
    assert len(again) == 1
