"""Acceptance-pass checks of `porttrack check` on odd inputs (real port repos, the real CLI)."""

from __future__ import annotations

from test_check import QUEUE, cli, port  # noqa: F401  (port is a fixture)


def _ack(port, expires_line: str):
    (port / "queue/q.toml").write_text(
        QUEUE + '\n[[ack]]\ncode = "gate-live"\nentry = 2\nreason = "x"\n' + expires_line
    )
    return cli(port)


def test_ack_with_a_date_time_expiry_is_bad_input_naming_the_line(port):
    proc = _ack(port, "expires = 2099-01-01T10:00:00\n")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "queue/q.toml:" in proc.stderr and "expires" in proc.stderr


def test_ack_without_an_expiry_is_bad_input(port):
    proc = _ack(port, "")
    assert proc.returncode == 2, proc.stderr
    assert "queue/q.toml:" in proc.stderr and "expires" in proc.stderr
