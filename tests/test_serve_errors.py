"""The web app answers every error in one place, in one line: a refused upload or re-check
with its own status, an unknown address with 404, and a failure of the service's own (here: a
stored record it cannot read) with 500, logged with its traceback on the `arena` logger. The
app runs on a real uvicorn server over a real service database; nothing checks the uploads
(no admission thread), which these answers never reach."""
from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request

import pytest

from arena.serve.app import Service, create_app
from arena.serve.authors import add_author
from arena.serve.db import ServiceDB
from arena.serve.uploads import UploadLimits
from serving import app_server


@pytest.fixture
def served(tmp_path):
    db = ServiceDB.open(tmp_path / "data")
    ladder = db.ensure_ladder("mandala", 2, "mandala/1", {"move_time": 1.0})
    token = add_author(db, "alice")
    app = create_app(Service(db, {ladder.id: ladder}, UploadLimits(), submissions_per_hour=1,
                             on_submission=lambda: None))
    with app_server(app) as url:
        yield db, url, token


def ask(url: str, data: bytes | None = None, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers),
                                    timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def one_line_error(body: str) -> str:
    assert body.count("\n") == 0, body
    return json.loads(body)["error"]


def test_refused_uploads_answer_their_own_status_in_one_line(served):
    db, url, token = served
    status, body = ask(f"{url}/api/submissions?ladder=mandala:2", b"not a tar", token)
    assert status == 400 and "not a gzipped tar" in one_line_error(body)   # UploadError
    status, body = ask(f"{url}/api/submissions?ladder=mandala:2", b"again", token)
    assert status == 429 and "submissions in the last hour" in one_line_error(body)
    status, body = ask(f"{url}/api/submissions/1/recheck", b"", token)
    assert status == 409 and one_line_error(body) == ("submission 1 is refused: only a "
                                                      "rejected version can be re-checked")
    status, body = ask(f"{url}/api/nothing")
    assert status == 404 and one_line_error(body) == "nothing at /api/nothing: see / for the " \
                                                     "ladders"
    status, body = ask(f"{url}/nothing")
    assert status == 404 and "nothing at /nothing" in body and "<html" in body.lower()


def test_a_failure_of_the_service_is_answered_500_and_logged_with_its_traceback(served,
                                                                                caplog):
    db, url, _ = served
    with db.transaction() as conn:
        conn.execute("INSERT INTO matches VALUES ('broken', 'mandala-2p', 0, 1, '[]', "
                     "'[\"a\", \"b\"]', '[1, 0]', '[1, 2]', 'normal', NULL, NULL, "
                     "'{not json', 0, 0, 0, NULL)")
    caplog.set_level(logging.ERROR, logger="arena")
    status, body = ask(f"{url}/api/matches/broken")
    assert status == 500
    assert one_line_error(body) == "internal error: the service logged it; try again later"
    status, body = ask(f"{url}/matches/broken")
    assert status == 500 and "internal error: the service logged it" in body
    failures = [record for record in caplog.records if record.name == "arena.serve.app"]
    assert [record.getMessage() for record in failures] == [
        "GET /api/matches/broken failed", "GET /matches/broken failed"]
    assert all(isinstance(record.exc_info[1], json.JSONDecodeError) for record in failures)
