"""The live phone mirror: shows the device's latest frame, scaled to fit, and turns clicks into taps.

`MirrorView.set_frame(qimage, device_size)` shows a frame; the image may already be scaled down (the
frame source does that off the GUI thread), `device_size` is the phone's real resolution, so a click is
mapped to device pixels whatever the scale. A short click emits `tapped(x, y)`, a press held for
`LONG_PRESS_MS` emits `long_pressed(x, y)`, a drag emits `swiped(x1, y1, x2, y2, ms)`.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QImage, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

LONG_PRESS_MS = 600
DRAG_THRESHOLD_PX = 12


def pil_to_qimage(image) -> QImage:
    """A PIL image (any mode) as a QImage that owns its pixels."""
    rgb = image.convert("RGB")
    data = rgb.tobytes("raw", "RGB")
    qimg = QImage(data, rgb.width, rgb.height, 3 * rgb.width, QImage.Format.Format_RGB888)
    return qimg.copy()


def scaled_frame(image, max_height: int = 900):
    """Shrink a PIL frame for display (done on a worker thread: 1080x2400 is too big to paint often)."""
    if image.height <= max_height:
        return image
    width = max(1, round(image.width * max_height / image.height))
    return image.resize((width, max_height))


class MirrorView(QWidget):
    tapped = Signal(int, int)
    long_pressed = Signal(int, int)
    swiped = Signal(int, int, int, int, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("mirrorView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(180, 400)
        self._image: QImage | None = None
        self._device_size: tuple[int, int] | None = None
        self._press: QPoint | None = None
        self._clock = QElapsedTimer()
        self._placeholder = ""
        self.frames_shown = 0

    def sizeHint(self) -> QSize:
        return QSize(360, 800)

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        self.update()

    def set_frame(self, image: QImage, device_size: tuple[int, int]) -> None:
        self._image = image
        self._device_size = device_size
        self.frames_shown += 1
        self.update()

    @property
    def device_size(self) -> tuple[int, int] | None:
        return self._device_size

    def image_rect(self) -> QRect:
        """Where the frame is drawn inside the widget (aspect ratio kept, centred)."""
        if self._device_size is None:
            return QRect()
        dw, dh = self._device_size
        scale = min(self.width() / dw, self.height() / dh)
        w, h = round(dw * scale), round(dh * scale)
        return QRect((self.width() - w) // 2, (self.height() - h) // 2, w, h)

    def map_to_device(self, pos: QPoint) -> tuple[int, int] | None:
        """Widget coordinates to device pixels, or None outside the picture."""
        rect = self.image_rect()
        if rect.isEmpty() or not rect.contains(pos) or self._device_size is None:
            return None
        dw, dh = self._device_size
        x = (pos.x() - rect.x()) * dw / rect.width()
        y = (pos.y() - rect.y()) * dh / rect.height()
        return min(dw - 1, max(0, round(x))), min(dh - 1, max(0, round(y)))

    def map_from_device(self, x: int, y: int) -> QPoint:
        rect = self.image_rect()
        dw, dh = self._device_size or (1, 1)
        return QPoint(rect.x() + round(x * rect.width() / dw), rect.y() + round(y * rect.height() / dh))

    # -- events -----------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().window())
        if self._image is None:
            painter.setPen(self.palette().windowText().color())
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._placeholder)
        else:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(self.image_rect(), self._image)
        if self.hasFocus():
            pen = painter.pen()
            pen.setColor(self.palette().highlight().color())
            pen.setWidth(4)
            painter.setPen(pen)
            painter.drawRect(self.rect().adjusted(2, 2, -2, -2))
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
            self._clock.start()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return super().mouseReleaseEvent(event)
        start, end = self._press, event.position().toPoint()
        self._press = None
        held = self._clock.elapsed()
        a, b = self.map_to_device(start), self.map_to_device(end)
        if a is None:
            return None
        if (end - start).manhattanLength() >= DRAG_THRESHOLD_PX and b is not None:
            self.swiped.emit(a[0], a[1], b[0], b[1], max(100, int(held)))
        elif held >= LONG_PRESS_MS:
            self.long_pressed.emit(*a)
        else:
            self.tapped.emit(*a)
        return None
