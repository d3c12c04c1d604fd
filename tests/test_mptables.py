"""rove.mptables: the cells of the multipath tables in docs/multipath.md."""

from rove.mptables import _window_bytes, cell, main


def test_a_cell_is_the_mean_with_the_range_where_seeds_differ():
    assert cell([1.0, 2.0, 4.5]) == "2.5 [1.0–4.5]"
    assert cell([9.2, 9.2, 9.2], "{:.2f}") == "9.20"
    # equal once printed: no range
    assert cell([253.1, 252.9], "{:.0f}") == "253"


def test_windows_sort_by_size_whatever_their_unit():
    assert sorted(["256KB", "6MiB", "64KiB"], key=_window_bytes) == ["64KiB", "256KB", "6MiB"]


def test_a_missing_sweep_is_an_error_naming_it(tmp_path, capsys):
    assert main([str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "nope: no summary.parquet" in capsys.readouterr().err
