"""Where retry_safe finds the project (profiles/, conf/, landing/): LAKEHOUSE_PROJECT_DIR, else
the current folder or the nearest one above it with a dbt_project.yml, as dbt finds a project.
Never the package's own location, so a non-editable install works too."""

from __future__ import annotations

import pytest

from retry_safe.project import find_project_dir


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("LAKEHOUSE_PROJECT_DIR", raising=False)
    root = tmp_path / "project"
    (root / "models" / "orders").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: retry_safe\n")
    return root


def test_found_from_a_folder_inside_the_project(project, monkeypatch):
    monkeypatch.chdir(project / "models" / "orders")
    assert find_project_dir() == project.resolve()


def test_the_environment_variable_wins_over_the_current_folder(project, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    (other / "dbt_project.yml").write_text("name: other\n")
    monkeypatch.chdir(other)
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(project))
    assert find_project_dir() == project.resolve()


def test_no_project_above_the_current_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("LAKEHOUSE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError) as raised:
        find_project_dir()
    assert str(raised.value) == (
        f"No dbt_project.yml in {tmp_path.resolve()} or in any folder above it. Run from the"
        " project folder (the one with dbt_project.yml, as make does), or set"
        " LAKEHOUSE_PROJECT_DIR to it."
    )


def test_an_environment_variable_naming_no_project_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(tmp_path))
    with pytest.raises(RuntimeError) as raised:
        find_project_dir()
    assert str(raised.value) == (
        f"LAKEHOUSE_PROJECT_DIR is {tmp_path}, which holds no dbt_project.yml. Set it to the"
        " project folder (the one with dbt_project.yml), or unset it and run from that folder."
    )
