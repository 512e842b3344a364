"""Wi-Fi phones through a real private adb server (issue 29, item 8): a failed `devices connect` leaves no
`offline` entry behind and says why; an offline Wi-Fi phone gets network advice, not "unplug the cable";
remembered phones that do not answer are listed as such and can be forgotten."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

pytest_plugins = ("tests.adb_fixtures",)


@contextlib.contextmanager
def silent_phone() -> Iterator[str]:
    """A TCP port that accepts connections and never says a word: a phone whose adb does not answer
    (asleep, or another device on that address). adb keeps such a transport as `offline`."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for conn in accepted:
            conn.close()
        listener.close()


def unused_address() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"127.0.0.1:{port}"


def listed(server) -> dict[str, str]:
    from harness.adb import list_devices

    return {d.serial: d.state for d in list_devices(server.client())}


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


def test_a_connect_that_times_out_leaves_no_offline_entry(adb_server, capsys, data_home):
    from harness import cli

    base = ["--adb-port", str(adb_server.port)]
    with silent_phone() as address:
        assert cli.main([*base, "connect", address, "--timeout", "2"]) == cli.EXIT_DEVICE
        err = capsys.readouterr().err
        assert f"The phone at {address} did not answer, so I took it off the phone list" in err
        assert address not in listed(adb_server)
        assert cli.main([*base, "list"]) == 0
        out = capsys.readouterr().out
        assert address not in out and "offline" not in out and "unplug" not in out.lower()
        assert cli.main([*base, "--lang", "zh", "connect", address, "--timeout", "2"]) == cli.EXIT_DEVICE
        assert "没有应答，所以我把它从手机列表里去掉了" in capsys.readouterr().err
        assert address not in listed(adb_server)


def test_a_refused_connect_says_the_port_is_wrong_and_lists_nothing(adb_server, capsys, data_home):
    from harness import cli

    address = unused_address()
    assert cli.main(["--adb-port", str(adb_server.port), "connect", address, "--timeout", "2"]) == cli.EXIT_DEVICE
    err = capsys.readouterr().err
    assert f"Nothing at {address} accepted the connection" in err and "port" in err
    assert address not in listed(adb_server)


def test_an_unroutable_address_leaves_no_entry(adb_server, capsys, data_home):
    from harness import cli

    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a real host. Unreachable at once or after the timeout.
    assert cli.main(["--adb-port", str(adb_server.port), "connect", "192.0.2.20", "--timeout", "2"]) == cli.EXIT_DEVICE
    assert "192.0.2.20:5555" in capsys.readouterr().err
    assert "192.0.2.20:5555" not in listed(adb_server)


def test_an_offline_wifi_phone_is_told_about_the_network_not_the_cable(adb_server, capsys, data_home):
    from harness import cli

    client = adb_server.client()
    with silent_phone() as address:
        with contextlib.suppress(Exception):  # the raw adb connect, as any other tool would leave it
            client.connect(address, timeout=2)
        try:
            assert listed(adb_server).get(address) == "offline"
            for lang, said, not_said in (
                ("en", "The phone at 127.0.0.1 is not answering. Check that it is on the same network", "unplug"),
                ("zh", "地址为 127.0.0.1 的手机没有响应。请确认它和这台电脑在同一个网络中", "数据线"),
            ):
                assert cli.main(["--adb-port", str(adb_server.port), "--lang", lang, "list"]) == 0
                out = capsys.readouterr().out
                assert f"{address}\toffline\ttcp" in out
                assert said in out and not_said not in out.lower()
        finally:
            client.disconnect(address)


def test_usb_offline_still_says_replug():
    from harness.phonestates import state_instruction

    assert "unplug the cable" in state_instruction("offline", "R58M1234ABC").en
    assert "unplug" not in state_instruction("offline", "192.168.1.20:5555").en
    assert "192.168.1.20 is not answering" in state_instruction("offline", "192.168.1.20:5555").en


def test_remembered_phones_that_do_not_answer_are_listed_and_can_be_forgotten(adb_server, capsys, data_home):
    from harness import cli
    from harness.adbserver import AdbServerOwner, RememberedPhones, ServerAddress

    base = ["--adb-port", str(adb_server.port)]
    with silent_phone() as address:
        RememberedPhones().save(wifi=[address], chosen=address)
        assert (data_home / "PhoneBuddy" / "phones.json").exists()
        # The start-up reconnect does not leave the silent phone listed as offline either.
        owner = AdbServerOwner(ServerAddress("127.0.0.1", adb_server.port), remembered=[address], autostart=False)
        assert owner.reconnect_remembered() == []
        assert address not in listed(adb_server)

        assert cli.main([*base, "list"]) == 0
        out = capsys.readouterr().out
        assert f"{address}\tremembered, not answering\ttcp" in out
        assert f"The remembered phone at {address} is not answering" in out
        assert f"phonebuddy devices forget {address}" in out

        assert cli.main([*base, "forget", address]) == 0
        assert f"I forgot the phone at {address}" in capsys.readouterr().out
        assert RememberedPhones().load() == {"wifi": [], "chosen": ""}
        assert cli.main([*base, "list"]) == 0
        assert address not in capsys.readouterr().out
        assert cli.main([*base, "--lang", "zh", "forget", address]) == 0
        assert "没有记住地址为" in capsys.readouterr().out
