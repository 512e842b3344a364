"""The window on a phone reached through the real adb server (PhoneWorld-lite served over the simulated
adbd): the probe finds it, the mirror shows its screen, a click on the mirror taps the phone, and with
"send all keys to the phone" on a key press reaches it. Also the probe's spoken reason when there is
no phone."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, MainWindow
from app.phone import find_real_phone
from harness.adbserver import free_port

pytest_plugins = ("tests.adb_fixtures",)


def test_no_adb_server_means_a_spoken_reason_not_a_crash():
    probe = find_real_phone(port=free_port(), wait_s=0.1)
    assert probe.connection is None
    assert probe.reason.en and probe.reason.zh and probe.reason.en != probe.reason.zh


def test_window_mirrors_and_taps_a_phone_over_adb(qtbot, adb_server, sim_phone):
    probe = find_real_phone(port=adb_server.port, wait_s=3.0)
    assert probe.connection is not None, probe.reason.en
    window = MainWindow(lang="en", services=AppServices(extra={"mirror": False}), phone=probe.connection,
                        agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    assert not window.offer_bar.isVisible()
    assert sim_phone.address in window.status_line.text()
    qtbot.waitUntil(lambda: window.mirror.frames_shown > 0, timeout=20_000)
    assert window.mirror.device_size == (1080, 2400)

    world = sim_phone.world
    settings_icon = next(e for e in world.elements() if e.label == "Settings")
    x, y = settings_icon.center
    qtbot.mouseClick(window.mirror, Qt.MouseButton.LeftButton, pos=window.mirror.map_from_device(x, y))
    qtbot.waitUntil(lambda: world.foreground[0] == "com.android.settings", timeout=20_000)

    window.send_keys_box.setChecked(True)
    qtbot.keyClick(window.mirror, Qt.Key.Key_Escape)  # Escape goes to the phone as BACK, not to our stop
    qtbot.waitUntil(lambda: world.foreground[0] != "com.android.settings", timeout=20_000)
    qtbot.keyClick(window.mirror, Qt.Key.Key_F9)  # F9 always takes the keyboard back
    assert not window.send_keys_box.isChecked()
    window.shutdown()
    window.close()


def test_clicks_outside_the_picture_do_nothing(qtbot):
    from PySide6.QtGui import QImage

    from app.mirror_view import MirrorView

    view = MirrorView()
    qtbot.addWidget(view)
    view.resize(400, 400)
    view.set_frame(QImage(108, 240, QImage.Format.Format_RGB888), (1080, 2400))
    rect = view.image_rect()
    assert rect.height() == 400 and rect.width() == 180
    assert view.map_to_device(QPoint(rect.x() - 5, 200)) is None
    assert view.map_to_device(rect.topLeft()) == (0, 0)
    cx, cy = view.map_to_device(rect.center())
    assert abs(cx - 540) <= 6 and abs(cy - 1200) <= 6  # one widget pixel is 6 device pixels here
    taps = []
    view.tapped.connect(lambda x, y: taps.append((x, y)))
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    assert taps == []
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=view.map_from_device(540, 600))
    assert taps and abs(taps[0][0] - 540) <= 6 and abs(taps[0][1] - 600) <= 6
