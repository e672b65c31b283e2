"""The click side of times: ``TimeInput``, ``--time-format``/``--tz``, and ``gen --start-time``."""

from __future__ import annotations

import re
from pathlib import Path

import click
from click.testing import CliRunner

from kdump.cli.time_options import TimeInput, time_style_options
from kdump.render.times import TimeStyle
from kdump_testing import run_kdump

NOW = 1_714_564_800_000  # 2024-05-01T12:00:00Z


@click.command()
@click.option("--at", type=TimeInput(clock=lambda: NOW), default="now")
@time_style_options()
def show(at: int, times: TimeStyle) -> None:
    click.echo(f"{at} {times(at)}")


@click.command()
@time_style_options(default="both")
def show_both(times: TimeStyle) -> None:
    click.echo(times(NOW))


def invoke(command: click.Command, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(command, list(args))
    return result.exit_code, result.output


def test_time_input_forms_and_styles() -> None:
    assert invoke(show) == (0, f"{NOW} {NOW}\n")
    assert invoke(show, "--at", "-1h", "--time-format", "iso") == (0, f"{NOW - 3_600_000} 2024-05-01T11:00:00.000Z\n")
    assert invoke(show, "--at", "2024-05-01", "--time-format", "both") == \
        (0, "1714521600000 1714521600000 (2024-05-01T00:00:00.000Z)\n")
    # --tz alone shows ISO-8601 in that zone
    assert invoke(show, "--tz", "Europe/Paris") == (0, f"{NOW} 2024-05-01T14:00:00.000+02:00\n")
    assert invoke(show, "--tz", "Europe/Paris", "--time-format", "epoch") == (0, f"{NOW} {NOW}\n")
    assert invoke(show_both) == (0, f"{NOW} (2024-05-01T12:00:00.000Z)\n")
    assert invoke(show_both, "--tz", "Asia/Kolkata") == (0, f"{NOW} (2024-05-01T17:30:00.000+05:30)\n")


def test_bad_time_and_zone_are_usage_errors() -> None:
    code, out = invoke(show, "--at", "yesterday")
    assert code == 2
    assert "Invalid value for '--at': 'yesterday' is not a time: give epoch milliseconds" in out
    code, out = invoke(show, "--tz", "Mars/Olympus")
    assert code == 2 and "Invalid value for '--tz': 'Mars/Olympus' is not an IANA time zone name" in out
    code, out = invoke(show, "--time-format", "rfc")
    assert code == 2 and "--time-format" in out


def first_create_time(outdir: Path) -> int:
    log = sorted((outdir / "demo-0").glob("*.log"))[0]
    dump = run_kdump("--files", str(log), "--deep-iteration")
    match = re.search(r"^\| offset: 0 CreateTime: (\d+)", dump.stdout, re.M)
    assert match, dump.stdout
    return int(match.group(1))


def test_gen_start_time_takes_iso_and_epoch(tmp_path: Path) -> None:
    for value, expected in (("2024-05-01T12:00:00.123+02:00", 1714557600123), ("1714564800000", 1714564800000),
                            ("2024-05-01", 1714521600000)):
        out = tmp_path / value.replace(":", "_")
        result = run_kdump("gen", str(out), "--records", "3", "--start-time", value)
        assert result.exit_code == 0, result.stderr
        assert first_create_time(out) == expected


def test_gen_start_time_relative_is_near_now(tmp_path: Path) -> None:
    import time

    before = time.time_ns() // 1_000_000
    result = run_kdump("gen", str(tmp_path / "r"), "--records", "3", "--start-time", "-2d")
    after = time.time_ns() // 1_000_000
    assert result.exit_code == 0, result.stderr
    assert before - 2 * 86_400_000 <= first_create_time(tmp_path / "r") <= after - 2 * 86_400_000


def test_gen_start_time_rejects_garbage(tmp_path: Path) -> None:
    result = run_kdump("gen", str(tmp_path / "x"), "--start-time", "soon")
    assert result.exit_code == 2
    assert "Invalid value for '--start-time': 'soon' is not a time" in result.stderr
    assert not (tmp_path / "x").exists()
