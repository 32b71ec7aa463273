"""The drop-in under models and an app no one here wrote: scikit-learn models exported by skl2onnx (a classifier
ending in ZipMap — a sequence of maps —, a regressor, a pipeline with a string-category encoder), and rapidocr, an OCR
app that ships Paddle2ONNX models (det -> cls -> rec) and runs them through onnxruntime.InferenceSession. Each runs
with onnxruntime and with ortdlpack.InferenceSession swapped in, in the same test: the results are identical."""

from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack

torch = pytest.importorskip("torch")

CPU = ["CPUExecutionProvider"]


def _same(a, b):
    """onnxruntime's outputs (numpy arrays, lists of dicts, ...) and ortdlpack's are equal, bit for bit."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b


# --- scikit-learn models exported by skl2onnx ---------------------------------------------------------------------

sklearn = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")


@pytest.fixture(scope="module")
def iris():
    from sklearn.datasets import load_iris

    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


def _onnx(model, inputs, **options) -> bytes:
    return skl2onnx.convert_sklearn(model, initial_types=inputs, target_opset=18, **options).SerializeToString()


def test_a_classifier_with_zipmap(iris):
    # skl2onnx's default export of a classifier: label tensor(int64) and probabilities seq(map(int64, tensor(float))).
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.linear_model import LogisticRegression

    x, y = iris
    model = _onnx(LogisticRegression(max_iter=500).fit(x, y), [("X", FloatTensorType([None, 4]))])
    ref = ort.InferenceSession(model, providers=CPU)
    ours = ortdlpack.InferenceSession(model, providers=CPU)
    assert [o.type for o in ours.get_outputs()] == ["tensor(int64)", "seq(map(int64,tensor(float)))"]
    want = ref.run(None, {"X": x})
    assert isinstance(want[1], list) and isinstance(want[1][0], dict)
    _same(ours.run(None, {"X": x}), want)
    # torch in: the label a torch tensor (like the feeds), the probabilities the list of dicts onnxruntime returns.
    label, probabilities = ours.run(None, {"X": torch.from_numpy(x)})
    assert isinstance(label, torch.Tensor)
    _same(label.numpy(), want[0])
    _same(probabilities, want[1])
    label, probabilities = ortdlpack.run(ref, {"X": torch.from_numpy(x)})  # a plain session, ortdlpack.run
    _same(np.asarray(label), want[0])
    _same(probabilities, want[1])
    label, probabilities = ortdlpack.run(ref, {"X": torch.from_numpy(x)}, ["output_label", "output_probability"],
                                         output_type="torch")
    _same(label.numpy(), want[0])


def test_a_regressor_and_a_classifier_without_zipmap(iris):
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression

    x, y = iris
    regressor = _onnx(LinearRegression().fit(x[:, :3], x[:, 3]), [("X", FloatTensorType([None, 3]))])
    classifier = _onnx(RandomForestClassifier(n_estimators=5, random_state=0).fit(x, y),
                       [("X", FloatTensorType([None, 4]))], options={"zipmap": False})
    for model, feed in ((regressor, x[:, :3].copy()), (classifier, x)):
        want = ort.InferenceSession(model, providers=CPU).run(None, {"X": feed})
        ours = ortdlpack.InferenceSession(model, providers=CPU)
        _same(ours.run(None, {"X": feed}), want)
        _same([t.numpy() for t in ours.run(None, {"X": torch.from_numpy(feed)})], want)


def test_a_pipeline_with_a_string_category_encoder():
    # A string input (numpy object array: no DLPack form) beside a float input fed from torch, in one call.
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(7)
    n = 60
    colour = rng.choice(["red", "green", "blue"], size=(n, 1)).astype(object)
    size = rng.normal(size=(n, 2)).astype(np.float32)
    label = (colour[:, 0] == "red") ^ (size[:, 0] > 0)
    table = np.hstack([colour, size.astype(object)])  # column 0: the category, 1 and 2: numbers
    pipeline = Pipeline([
        ("prep", ColumnTransformer([("cat", OneHotEncoder(), [0]), ("num", StandardScaler(), [1, 2])])),
        ("clf", LogisticRegression()),
    ]).fit(table, label)
    model = _onnx(pipeline, [("colour", StringTensorType([None, 1])), ("a", FloatTensorType([None, 1])),
                             ("b", FloatTensorType([None, 1]))])
    feeds = {"colour": colour, "a": size[:, :1].copy(), "b": size[:, 1:].copy()}
    want = ort.InferenceSession(model, providers=CPU).run(None, feeds)
    ours = ortdlpack.InferenceSession(model, providers=CPU)
    _same(ours.run(None, feeds), want)
    torch_feeds = {"colour": colour, "a": torch.from_numpy(feeds["a"]), "b": torch.from_numpy(feeds["b"])}
    got = ours.run(None, torch_feeds, output_type="torch")
    assert isinstance(got[0], torch.Tensor)
    _same(got[0].numpy(), want[0])
    _same(got[1], want[1])  # the ZipMap's list of dicts, as onnxruntime returns it
    _same(ours.run(None, torch_feeds)[0], want[0])  # like the first feed: a numpy array of strings is numpy's


# --- rapidocr_onnxruntime: an OCR app that runs its own onnxruntime.InferenceSessions -----------------------------

rapidocr = pytest.importorskip("rapidocr_onnxruntime")


def _cls_model() -> str:
    return os.path.join(os.path.dirname(rapidocr.__file__), "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx")


def test_rapidocr_cls_model_runs_at_any_size():
    # Its Paddle2ONNX cls model names both spatial dims "?": a label, as ORT reads it (issue 24's repro).
    x = np.zeros((1, 3, 48, 192), np.float32)
    want = ort.InferenceSession(_cls_model()).run(None, {"x": x})
    _same(ortdlpack.InferenceSession(_cls_model()).run(None, {"x": x}), want)
    _same([np.asarray(t) for t in ortdlpack.run(ort.InferenceSession(_cls_model()), {"x": x})], want)
    batch = np.random.default_rng(1).random((4, 3, 48, 192), dtype=np.float32)
    _same(ortdlpack.InferenceSession(_cls_model()).run(None, {"x": torch.from_numpy(batch)})[0].numpy(),
          ort.InferenceSession(_cls_model()).run(None, {"x": batch})[0])


def _images():
    """Rendered text: upright lines, a line upside down (the cls model turns it), several lines in one image."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=40)
    images = []
    for lines, flip in ((["Hello ortdlpack 2026"], False), (["DLPack zero copy"], True),
                        (["ONNX Runtime", "torch and numpy", "0123456789"], False)):
        img = Image.new("RGB", (560, 70 * len(lines) + 40), "white")
        draw = ImageDraw.Draw(img)
        for k, line in enumerate(lines):
            draw.text((20, 20 + 70 * k), line, fill="black", font=font)
        images.append(np.asarray(img.rotate(180) if flip else img))
    return images


def test_rapidocr_reads_the_same_text_with_the_drop_in(monkeypatch):
    from rapidocr_onnxruntime import RapidOCR
    from rapidocr_onnxruntime.utils import infer_engine

    images = _images()
    want = [RapidOCR(use_cls=True)(img) for img in images]
    assert want[0][0][0][1] == "Hello ortdlpack 2026"  # the app works here at all
    monkeypatch.setattr(infer_engine, "InferenceSession", ortdlpack.InferenceSession)  # swap the class, keep the app
    engine = RapidOCR(use_cls=True)
    assert isinstance(engine.text_det.infer.session, ortdlpack.InferenceSession)
    for img, expected in zip(images, want):
        result, _elapse = engine(img)
        _same(result, expected[0])
