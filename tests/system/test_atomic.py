"""Files replaced in one rename: concurrent writers of one file never share a temporary and never fail."""

import json
import threading

from jupyter_gpu_env.system.atomic import write_json_atomic


def test_concurrent_writers_of_one_file_all_succeed(tmp_path):
    target = tmp_path / "record.json"
    errors: list[BaseException] = []
    start = threading.Barrier(20)

    def writer(n: int) -> None:
        start.wait()
        try:
            for i in range(25):
                write_json_atomic(target, {"writer": n, "i": i, "pad": "x" * 4096})
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert json.loads(target.read_text())["i"] == 24  # whole, from one of the last writes
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # no temporary left
