"""Online scene clustering and batch DBSCAN."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sophia.memory import scenes

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_keyword_scenes_join_split_on_topic_and_on_time() -> None:
    sc: list[dict] = []
    a = scenes.assign(sc, "m1", "docker compose deploy container image registry", T0)
    b = scenes.assign(sc, "m2", "docker deploy container image build", T0 + timedelta(days=2))
    c = scenes.assign(sc, "m3", "sourdough bread flour oven baking", T0 + timedelta(days=2))
    assert a is b and c is not a and len(sc) == 2
    assert a["meta"]["member_ids"] == ["m1", "m2"] and a["meta"]["member_count"] == 2
    assert a["meta"]["last_grew"] == "2026-01-03T00:00:00Z"
    # same topic but more than 7 days after the scene last grew: a new chapter
    d = scenes.assign(sc, "m4", "docker deploy container image build", T0 + timedelta(days=10))
    assert d is not a and len(sc) == 3
    # idempotent per member
    assert scenes.assign(sc, "m2", "anything", T0) is a and a["meta"]["member_count"] == 2


def test_embedding_scenes_use_cosine_070_and_centroid() -> None:
    sc: list[dict] = []
    a = scenes.assign(sc, "m1", "x", T0, [1.0, 0.0, 0.0])
    b = scenes.assign(sc, "m2", "y", T0, [0.8, 0.6, 0.0])  # cosine 0.8 >= 0.70
    assert a is b and a["centroid"] == [0.9, 0.3, 0.0]
    c = scenes.assign(sc, "m3", "z", T0, [0.0, 0.0, 1.0])  # orthogonal
    assert c is not a and a["meta"]["mode"] == "embedding"


def test_at_most_100_scenes() -> None:
    sc: list[dict] = []
    rnd = random.Random(1)
    for i in range(130):
        vec = [rnd.gauss(0, 1) for _ in range(32)]
        scenes.assign(sc, f"m{i}", f"topic{i}", T0, vec)
    assert len(sc) == scenes.MAX_SCENES
    assert sum(s["meta"]["member_count"] for s in sc) == 130


def test_dbscan_finds_dense_groups_and_noise() -> None:
    pts = [(0, 0), (0, 0.1), (0.1, 0), (5, 5), (5, 5.1), (5.1, 5), (5.05, 5.05), (20, 20)]

    def dist(i: int, j: int) -> float:
        return ((pts[i][0] - pts[j][0]) ** 2 + (pts[i][1] - pts[j][1]) ** 2) ** 0.5

    labels = scenes.dbscan(len(pts), dist, eps=0.3, min_samples=3)
    assert labels[:3] == [labels[0]] * 3 and labels[3:7] == [labels[3]] * 4
    assert labels[0] != labels[3] and labels[0] >= 0 and labels[3] >= 0
    assert labels[7] == -1
    # two points are not a cluster with min_samples 3
    assert scenes.dbscan(2, lambda i, j: 0.0, 0.3, 3) == [-1, -1]


def test_cluster_texts_keyword_fallback(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOPHIA_EMBEDDINGS", "off")
    texts = ["debug 500 error api logs"] * 3 + ["bake bread"]
    out = scenes.cluster_texts(texts)
    assert out["method"] == "dbscan-keywords"
    assert out["labels"][:3] == [0, 0, 0] and out["labels"][3] == -1


def test_client_vectors_are_used_when_returned(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """When the embedding client answers, scenes and DBSCAN use its vectors (cosine), not keywords."""

    calls: list[dict] = []

    def fake_embed(texts, *, home=None, timeout=30.0, start=True):  # type: ignore[no-untyped-def]
        calls.append({"n": len(texts), "start": start, "timeout": timeout})
        return [[1.0, 0.0] if "docker" in t else [0.0, 1.0] for t in texts]

    from sophia.embed_client import client

    monkeypatch.setattr(client, "embed", fake_embed)
    monkeypatch.delenv("SOPHIA_EMBEDDINGS", raising=False)
    out = scenes.cluster_texts(["docker a", "docker b", "docker c", "bread"])
    assert out["method"] == "dbscan-embeddings" and out["labels"] == [0, 0, 0, -1]
    assert calls == [{"n": 4, "start": False, "timeout": 5.0}]  # never starts the service, never waits long
    monkeypatch.setenv("SOPHIA_EMBEDDINGS", "off")
    assert scenes.embed(["x"]) is None and len(calls) == 1
