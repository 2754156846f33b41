"""A tree removed whole, whatever its folders' modes (those copied from a managed environment may be
read-only, or unreadable): nothing is left, and what would be is said, never raised."""

import os

from jupyter_gpu_env.system.trees import remove_tree


def test_read_only_and_unreadable_folders_are_removed(tmp_path):
    top = tmp_path / "env"
    (top / "lib" / "locked").mkdir(parents=True)
    (top / "lib" / "locked" / "file.py").write_text("x")
    (top / "secret").mkdir()
    (top / "secret" / "key").write_text("x")
    (top / "link").symlink_to("/nonexistent")
    os.chmod(top / "lib" / "locked", 0o555)
    os.chmod(top / "lib", 0o555)
    os.chmod(top / "secret", 0)
    assert remove_tree(top) is True
    assert list(tmp_path.iterdir()) == []


def test_files_links_and_nothing_at_all(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path)  # the link goes, not what it points to
    assert remove_tree(tmp_path / "file") and remove_tree(tmp_path / "link")
    assert remove_tree(tmp_path / "none")
    assert list(tmp_path.iterdir()) == []
